//! A crossing's trace (spec controller.md §3.10, §8.2), as data: the trace ID a Passage
//! keeps in `status.traceID`, the W3C `traceparent` its steps are handed (git-commit
//! writes it into the promotion commit), and the spans that describe a finished
//! crossing.
//!
//! Nothing is held open while a crossing runs: the spans are rebuilt from the status
//! as stored, once, when the Passage turns terminal (a crossing can outlive any number
//! of controller processes). [`spans`] answers what to send; [`crate::telemetry`] sends
//! it (this module is its child: the passage controller asks telemetry, never the
//! other way round). The parent the root span names (`traceID[16:]`) is never sent itself: it stands
//! for the promotion commit whose trailer carries it.

use hecate_types::{Passage, PassagePhase, StepPhase, StepStatus};
use jiff::Timestamp;
use kube::ResourceExt as _;

/// A trace ID and the span ID of the root span's remote parent, both from a valid
/// `status.traceID`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ids {
    /// The trace: all 16 bytes of `traceID`.
    pub trace_id: [u8; 16],
    /// The root span's parent: the last 8 bytes of `traceID`.
    pub parent_span_id: [u8; 8],
}

/// `status.traceID` for 16 random bytes: 32 lowercase hex characters, or `None` when
/// either half is zero (the second half is a span ID, which may not be zero).
pub fn trace_id_from(random: [u8; 16]) -> Option<String> {
    let id = hex::encode(random);
    parse(&id).map(|_| id)
}

/// A new `status.traceID`, drawn from `draw` until both halves are non-zero.
pub fn allocate_with(mut draw: impl FnMut() -> [u8; 16]) -> String {
    loop {
        if let Some(id) = trace_id_from(draw()) {
            return id;
        }
    }
}

/// A new `status.traceID` from the system's random source.
pub fn allocate() -> String {
    use ring::rand::SecureRandom as _;
    let random = ring::rand::SystemRandom::new();
    allocate_with(|| {
        let mut bytes = [0u8; 16];
        // The system's source does not fail on the platforms we run on; should it,
        // the zeroes left are refused by `allocate_with` and drawn again.
        let _ = random.fill(&mut bytes);
        bytes
    })
}

/// The IDs in `trace_id`, when it is 32 lowercase hex characters with both halves
/// non-zero.
pub fn parse(trace_id: &str) -> Option<Ids> {
    let lowercase_hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    if trace_id.len() != 32 || !trace_id.chars().all(lowercase_hex) {
        return None;
    }
    let mut trace = [0u8; 16];
    hex::decode_to_slice(trace_id, &mut trace).ok()?;
    let mut parent = [0u8; 8];
    parent.copy_from_slice(&trace[8..]);
    (trace[..8] != [0; 8] && parent != [0; 8]).then_some(Ids {
        trace_id: trace,
        parent_span_id: parent,
    })
}

/// The W3C `traceparent` for `trace_id`: `00-<traceID>-<traceID[16:32]>-01`, or empty
/// when `trace_id` is empty or not valid.
pub fn traceparent(trace_id: &str) -> String {
    match parse(trace_id) {
        Some(_) => format!("00-{trace_id}-{}-01", &trace_id[16..]),
        None => String::new(),
    }
}

/// One span to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// `passage <gate>`, `<uses>` or `<uses> (<as>)`.
    pub name: String,
    /// When it started.
    pub start: Timestamp,
    /// When it ended.
    pub end: Timestamp,
    /// Its attributes, in order.
    pub attributes: Vec<(&'static str, String)>,
    /// `Some(message)`: its status is Error with this description; `None`: unset.
    pub error: Option<String>,
}

/// A finished crossing's trace: a root span whose parent is remote, and one child of
/// the root per step that started.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The trace and the root's remote parent.
    pub ids: Ids,
    /// `passage <gate>`.
    pub root: Span,
    /// The steps that started, in order.
    pub steps: Vec<Span>,
}

/// The trace of `passage` as stored, or `None` when there is nothing to send: no valid
/// `status.traceID`, or the crossing lacks `startedAt` or `finishedAt` (it never started,
/// e.g. aborted before its first step).
///
/// A step that started but has no `finishedAt` (it cannot happen once the Passage is
/// terminal: the engine finishes every step it leaves) ends with the Passage, so that
/// the trace stays a function of the stored status alone.
pub fn spans(passage: &Passage) -> Option<Trace> {
    let status = passage.status.as_ref()?;
    let ids = parse(&status.trace_id)?;
    let start = status.started_at.as_ref()?.0;
    let end = status.finished_at.as_ref()?.0;
    let phase = status.phase();
    let root = Span {
        name: format!("passage {}", passage.spec.gate),
        start,
        end,
        attributes: vec![
            ("hecate.gate", passage.spec.gate.clone()),
            ("hecate.bundle", passage.spec.bundle.clone()),
            ("hecate.passage", passage.name_any()),
            ("hecate.namespace", passage.namespace().unwrap_or_default()),
            ("hecate.actor", passage.spec.actor.clone()),
            ("hecate.phase", phase.as_str().to_string()),
        ],
        error: (phase != PassagePhase::Succeeded).then(|| status.message.clone()),
    };
    let steps = status
        .steps
        .iter()
        .filter_map(|step| step_span(step, end))
        .collect();
    Some(Trace { ids, root, steps })
}

/// The span of `step`, when it started; `passage_end` ends one that never finished.
fn step_span(step: &StepStatus, passage_end: Timestamp) -> Option<Span> {
    let start = step.started_at.as_ref()?.0;
    let end = step.finished_at.as_ref().map_or(passage_end, |t| t.0);
    let name = if step.alias.is_empty() {
        step.uses.clone()
    } else {
        format!("{} ({})", step.uses, step.alias)
    };
    let mut attributes = vec![
        ("hecate.step.uses", step.uses.clone()),
        ("hecate.step.phase", step.phase.as_str().to_string()),
    ];
    if !step.reason.is_empty() {
        attributes.push(("hecate.step.reason", step.reason.clone()));
    }
    Some(Span {
        name,
        start,
        end,
        attributes,
        error: (step.phase == StepPhase::Failed).then(|| step.message.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hecate_steps::reason::Reason;
    use hecate_types::{PassageSpec, PassageStatus, Time};
    use pretty_assertions::assert_eq;

    const ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

    fn at(second: i64) -> Option<Time> {
        Some(Time(
            Timestamp::from_second(1_800_000_000 + second).expect("a time"),
        ))
    }

    fn ts(second: i64) -> Timestamp {
        at(second).expect("a time").0
    }

    fn step(uses: &str, alias: &str, phase: StepPhase, times: Option<(i64, i64)>) -> StepStatus {
        StepStatus {
            uses: uses.into(),
            alias: alias.into(),
            phase,
            started_at: times.and_then(|(s, _)| at(s)),
            finished_at: times.and_then(|(_, f)| at(f)),
            ..StepStatus::default()
        }
    }

    fn passage(phase: PassagePhase, message: &str, steps: Vec<StepStatus>) -> Passage {
        let mut passage = Passage::new(
            "staging-3",
            PassageSpec {
                gate: "staging".into(),
                bundle: "app-1a2b3c".into(),
                actor: "bob".into(),
                ..PassageSpec::default()
            },
        );
        passage.metadata.namespace = Some("shop".into());
        passage.status = Some(PassageStatus {
            phase: Some(phase),
            message: message.into(),
            steps,
            started_at: at(0),
            finished_at: at(30),
            trace_id: ID.into(),
            ..PassageStatus::default()
        });
        passage
    }

    #[test]
    fn a_trace_id_is_32_lowercase_hex_with_both_halves_non_zero() {
        let cases: [(&str, bool); 9] = [
            (ID, true),
            ("00000000000000010000000000000001", true),
            ("", false),
            ("4bf92f3577b34da6a3ce929d0e0e473", false),
            ("4bf92f3577b34da6a3ce929d0e0e47360", false),
            ("4BF92F3577B34DA6A3CE929D0E0E4736", false),
            ("4bf92f3577b34da6a3ce929d0e0e473g", false),
            ("0000000000000000a3ce929d0e0e4736", false),
            ("4bf92f3577b34da60000000000000000", false),
        ];
        for (id, valid) in cases {
            assert_eq!(parse(id).is_some(), valid, "{id:?}");
            assert_eq!(traceparent(id).is_empty(), !valid, "{id:?}");
        }
        assert_eq!(
            parse(ID),
            Some(Ids {
                trace_id: [
                    0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e,
                    0x0e, 0x47, 0x36
                ],
                parent_span_id: [0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36],
            })
        );
    }

    #[test]
    fn the_traceparent_names_the_second_half_as_parent_and_is_sampled() {
        assert_eq!(
            traceparent(ID),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-a3ce929d0e0e4736-01"
        );
    }

    #[test]
    fn allocation_draws_again_until_both_halves_are_non_zero() {
        let mut draws = [
            [0u8; 16],
            [[0u8; 8], [7u8; 8]].concat().try_into().expect("16 bytes"),
            [[7u8; 8], [0u8; 8]].concat().try_into().expect("16 bytes"),
            [0xab; 16],
        ]
        .into_iter();
        let mut drawn = 0;
        let id = allocate_with(|| {
            drawn += 1;
            draws.next().expect("a draw")
        });
        assert_eq!(id, "ab".repeat(16));
        assert_eq!(drawn, 4);
        assert_eq!(trace_id_from([0; 16]), None);

        let ids: Vec<String> = (0..20).map(|_| allocate()).collect();
        for id in &ids {
            assert!(parse(id).is_some(), "{id}");
        }
        assert!(ids.windows(2).all(|w| w[0] != w[1]), "random: {ids:?}");
    }

    #[test]
    fn a_finished_crossing_is_one_root_and_one_child_per_started_step() {
        let mut failing = step("git-push", "push", StepPhase::Failed, Some((12, 20)));
        failing.reason = Reason::GitRejected.as_str().into();
        failing.message = "the remote refused the push".into();
        let passage = passage(
            PassagePhase::Failed,
            "steps[1] push (git-push): the remote refused the push",
            vec![
                step("git-clone", "", StepPhase::Succeeded, Some((1, 11))),
                failing,
                step("http", "notify", StepPhase::Skipped, None),
                step("commit-status", "", StepPhase::Succeeded, Some((21, 29))),
            ],
        );
        let trace = spans(&passage).expect("a trace");
        assert_eq!(trace.ids, parse(ID).expect("valid"));
        assert_eq!(
            trace.root,
            Span {
                name: "passage staging".into(),
                start: ts(0),
                end: ts(30),
                attributes: vec![
                    ("hecate.gate", "staging".into()),
                    ("hecate.bundle", "app-1a2b3c".into()),
                    ("hecate.passage", "staging-3".into()),
                    ("hecate.namespace", "shop".into()),
                    ("hecate.actor", "bob".into()),
                    ("hecate.phase", "Failed".into()),
                ],
                error: Some("steps[1] push (git-push): the remote refused the push".into()),
            }
        );
        assert_eq!(
            trace.steps,
            [
                Span {
                    name: "git-clone".into(),
                    start: ts(1),
                    end: ts(11),
                    attributes: vec![
                        ("hecate.step.uses", "git-clone".into()),
                        ("hecate.step.phase", "Succeeded".into()),
                    ],
                    error: None,
                },
                Span {
                    name: "git-push (push)".into(),
                    start: ts(12),
                    end: ts(20),
                    attributes: vec![
                        ("hecate.step.uses", "git-push".into()),
                        ("hecate.step.phase", "Failed".into()),
                        ("hecate.step.reason", Reason::GitRejected.as_str().into()),
                    ],
                    error: Some("the remote refused the push".into()),
                },
                Span {
                    name: "commit-status".into(),
                    start: ts(21),
                    end: ts(29),
                    attributes: vec![
                        ("hecate.step.uses", "commit-status".into()),
                        ("hecate.step.phase", "Succeeded".into()),
                    ],
                    error: None,
                },
            ]
        );
    }

    #[test]
    fn a_crossing_that_succeeded_has_no_error_and_an_unfinished_step_ends_with_it() {
        let passage = passage(
            PassagePhase::Succeeded,
            "crossed staging",
            vec![step("flux-wait", "", StepPhase::Succeeded, None)],
        );
        let mut passage = passage;
        let status = passage.status.as_mut().expect("a status");
        status.steps[0].started_at = at(5);
        let trace = spans(&passage).expect("a trace");
        assert_eq!(trace.root.error, None);
        assert_eq!(
            trace.root.attributes[5],
            ("hecate.phase", "Succeeded".into())
        );
        assert_eq!((trace.steps[0].start, trace.steps[0].end), (ts(5), ts(30)));
    }

    #[test]
    fn an_aborted_crossing_is_an_error_with_its_message() {
        let passage = passage(
            PassagePhase::Aborted,
            "aborted",
            vec![step(
                "flux-wait",
                "synced",
                StepPhase::Aborted,
                Some((1, 9)),
            )],
        );
        let trace = spans(&passage).expect("a trace");
        assert_eq!(trace.root.error.as_deref(), Some("aborted"));
        assert_eq!(trace.steps[0].name, "flux-wait (synced)");
        assert_eq!(trace.steps[0].error, None, "only Failed steps are errors");
    }

    #[test]
    fn nothing_is_sent_without_a_valid_trace_id_or_both_timestamps() {
        let base = passage(PassagePhase::Succeeded, "crossed staging", vec![]);
        assert!(spans(&base).is_some());
        let with = |change: fn(&mut PassageStatus)| {
            let mut passage = base.clone();
            change(passage.status.as_mut().expect("a status"));
            spans(&passage)
        };
        assert_eq!(with(|s| s.trace_id = String::new()), None);
        assert_eq!(with(|s| s.trace_id = "not-a-trace".into()), None);
        assert_eq!(with(|s| s.trace_id = "0".repeat(32)), None);
        assert_eq!(with(|s| s.started_at = None), None);
        assert_eq!(with(|s| s.finished_at = None), None);
        let mut no_status = base.clone();
        no_status.status = None;
        assert_eq!(spans(&no_status), None);
    }
}
