//! What a Passage's status may hold, so that the controller can always record it
//! (docs/DECISIONS.md 111). Everything in a status that a step, an endpoint or a cluster
//! chose — a step's message, its output, the Passage's message — is cut to a bound
//! before it is recorded, with a marker saying so; the bounds together keep a status of
//! the most steps a Passage may have under [`MAX_PASSAGE_STATUS_BYTES`], and [`fit`]
//! makes sure of it before every write.
//!
//! A step's output is cut when the step finishes, before later steps read it, so a
//! crossing resumed from its record reads exactly what an uninterrupted one did.

use std::borrow::Cow;

use hecate_types::PassageStatus;
use hecate_types::limits::{
    MAX_PASSAGE_STATUS_BYTES, MAX_STEP_LOG_LINE, MAX_STEP_LOG_LINES, MAX_STEP_LOGS_BYTES,
};
use serde_json::{Value, json};

use hecate_types::limits::truncate;

/// What ends a string of an output that was cut.
pub const TRUNCATED: &str = "…[truncated]";
/// What stands in the middle of a message that was cut.
pub const CUT: &str = " …[truncated]… ";
/// The longest message a Passage records, in bytes.
pub const MAX_MESSAGE: usize = 4 * 1024;
/// The longest message a step records, in bytes.
pub const MAX_STEP_MESSAGE: usize = 1024;
/// The most one step's output takes, in bytes of JSON.
pub const MAX_STEP_OUTPUT: usize = 16 * 1024;
/// The most the outputs of all a Passage's steps take together, in bytes of JSON: each
/// step gets its share ([`output_limit`]).
pub const OUTPUTS: usize = 300 * 1024;
/// The key of what stands for an output too large to keep in any form.
pub const OMITTED: &str = "omitted";

/// How much of its output each step of a Passage of `steps` steps keeps: an equal share
/// of [`OUTPUTS`], at most [`MAX_STEP_OUTPUT`] (16 KiB each up to 18 steps, 3 KiB each
/// at the most steps a Passage may have).
pub fn output_limit(steps: usize) -> usize {
    (OUTPUTS / steps.max(1)).min(MAX_STEP_OUTPUT)
}

/// How many lines each step's log of a Passage of `steps` steps keeps: an equal share
/// of [`MAX_STEP_LOGS_BYTES`] (a line at most [`MAX_STEP_LOG_LINE`] bytes and its time),
/// at most [`MAX_STEP_LOG_LINES`], at least one (ten each up to 20 steps, two at the most
/// steps a Passage may have).
pub fn log_lines(steps: usize) -> usize {
    let line = MAX_STEP_LOG_LINE + 64;
    (MAX_STEP_LOGS_BYTES / (steps.max(1) * line)).clamp(1, MAX_STEP_LOG_LINES)
}

/// `text`, or, when it is longer than `max` bytes, its beginning and its end with
/// [`CUT`] between them (cut on character boundaries): a message says what failed first
/// and why last, and often quotes what it judged in between. Cutting what was cut
/// changes nothing.
pub fn text(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let room = max.saturating_sub(CUT.len());
    let head = truncate(text, room - room / 2);
    let mut from = text.len() - (room - head.len());
    while !text.is_char_boundary(from) {
        from += 1;
    }
    Cow::Owned(format!("{head}{CUT}{}", &text[from..]))
}

/// `value`, a step's output, in at most `limit` bytes of JSON: as it is when it fits;
/// else with its longest strings cut (each to the same length, the longest that fits,
/// ending in [`TRUNCATED`]), so that its numbers, flags and short strings — what later
/// steps read — stay whole; else, when even that does not fit, an object saying what
/// was dropped ([`OMITTED`]).
pub fn output(value: Value, limit: usize) -> Value {
    let size = json_len(&value);
    if size <= limit {
        return value;
    }
    let shortest = cut_strings(&value, 0);
    if json_len(&shortest) > limit {
        return json!({ OMITTED: format!("the output was {size} bytes of JSON, more than the {limit} a step keeps") });
    }
    // The longest each string may stay: `low` fits, `high` (the longest string, whole)
    // does not, and the output only grows with it.
    let (mut low, mut high, mut best) = (0, longest_string(&value), shortest);
    while low + 1 < high {
        let middle = low + (high - low) / 2;
        let cut = cut_strings(&value, middle);
        if json_len(&cut) <= limit {
            low = middle;
            best = cut;
        } else {
            high = middle;
        }
    }
    best
}

/// Makes `status` recordable: messages cut to their bounds; then, only if it is still
/// over [`MAX_PASSAGE_STATUS_BYTES`] (what the steps' own bounds should never leave),
/// the largest outputs replaced by what stands for them, and the change system's
/// blockers cut. `Err` with its size when even that is not enough.
pub fn fit(status: &mut PassageStatus) -> Result<(), usize> {
    if let Cow::Owned(cut) = text(&status.message, MAX_MESSAGE) {
        status.message = cut;
    }
    let lines = log_lines(status.steps.len());
    for step in &mut status.steps {
        if let Cow::Owned(cut) = text(&step.message, MAX_STEP_MESSAGE) {
            step.message = cut;
        }
        let over = step.log.len().saturating_sub(lines);
        step.log.drain(..over);
    }
    let mut size = json_len(status);
    if size <= MAX_PASSAGE_STATUS_BYTES {
        return Ok(());
    }
    let mut outputs: Vec<(usize, usize)> = status
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((json_len(s.output.as_ref()?), i)))
        .collect();
    outputs.sort_unstable_by(|a, b| b.cmp(a));
    for (bytes, i) in outputs {
        if size <= MAX_PASSAGE_STATUS_BYTES {
            return Ok(());
        }
        let stand_in = json!({ OMITTED: format!("the output was {bytes} bytes of JSON: the Passage's status had no room for it") });
        status.steps[i].output = Some(stand_in);
        size = json_len(status);
    }
    if let Some(evidence) = status.evidence.as_mut() {
        evidence.blockers.truncate(10);
        for blocker in &mut evidence.blockers {
            if let Cow::Owned(cut) = text(blocker, 256) {
                *blocker = cut;
            }
        }
        size = json_len(status);
    }
    if size <= MAX_PASSAGE_STATUS_BYTES {
        Ok(())
    } else {
        Err(size)
    }
}

/// The size of `value` as JSON, in bytes.
pub fn json_len(value: &impl serde::Serialize) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |v| v.len())
}

/// The length of the longest string in `value`, in bytes.
fn longest_string(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(longest_string).max().unwrap_or(0),
        Value::Object(map) => map.values().map(longest_string).max().unwrap_or(0),
        _ => 0,
    }
}

/// `value` with every string longer than `keep` bytes (and the marker) cut to `keep`
/// bytes and the marker.
fn cut_strings(value: &Value, keep: usize) -> Value {
    match value {
        Value::String(s) if s.len() > keep + TRUNCATED.len() => {
            Value::String(format!("{}{TRUNCATED}", truncate(s, keep)))
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| cut_strings(v, keep)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), cut_strings(v, keep)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use hecate_types::{StepPhase, StepStatus};

    use super::*;

    #[test]
    fn a_text_over_its_bound_is_cut_and_says_so_once() {
        assert_eq!(text("short", 10), "short");
        let cut = text(&"é".repeat(100), 51).into_owned();
        assert!(cut.len() <= 51 && cut.contains(CUT), "{cut}");
        assert_eq!(text(&cut, 51), cut, "cutting what was cut changes nothing");
        // The beginning and the end stay: what failed, and why.
        let quoted = format!("if: invalid expression {:?}: too deep", "!".repeat(5000));
        let cut = text(&quoted, 1024);
        assert!(
            cut.starts_with("if: invalid expression \"!!!") && cut.ends_with("!\": too deep"),
            "{cut}"
        );
        assert_eq!(cut.len(), 1024);
    }

    #[test]
    fn an_output_keeps_what_fits_and_cuts_its_longest_strings() {
        let small = json!({"status": 200, "body": "ok"});
        assert_eq!(output(small.clone(), 1024), small);

        let big = json!({"status": 200, "body": "\u{1}".repeat(4096), "truncated": false, "sha": "9f8c1a2b"});
        let cut = output(big, 1024);
        assert!(json_len(&cut) <= 1024, "{}", json_len(&cut));
        assert_eq!(cut["status"], 200);
        assert_eq!(cut["truncated"], false);
        assert_eq!(cut["sha"], "9f8c1a2b", "short strings stay whole");
        let body = cut["body"].as_str().unwrap_or_default();
        assert!(body.ends_with(TRUNCATED) && body.len() > 100, "{body:?}");
        // As long as it can be: a byte more would not fit.
        let kept = body.len() - TRUNCATED.len();
        let longer = json!({"status": 200, "body": format!("{}{TRUNCATED}", "\u{1}".repeat(kept + 1)), "truncated": false, "sha": "9f8c1a2b"});
        assert!(json_len(&longer) > 1024);
    }

    #[test]
    fn an_output_that_cannot_fit_in_any_form_is_named_as_omitted() {
        let many: Vec<i64> = (0..1000).collect();
        let cut = output(json!({"numbers": many}), 256);
        let said = cut[OMITTED].as_str().unwrap_or_default();
        assert!(said.contains("more than the 256"), "{cut}");
    }

    #[test]
    fn every_step_gets_its_share_of_the_outputs() {
        assert_eq!(output_limit(1), MAX_STEP_OUTPUT);
        assert_eq!(output_limit(0), MAX_STEP_OUTPUT);
        assert_eq!(output_limit(100), 3072);
        // The most steps, each at its bounds, fit a status.
        let steps = hecate_types::limits::MAX_STEPS;
        let mut status = PassageStatus {
            message: "m".repeat(10 * MAX_MESSAGE),
            steps: (0..steps)
                .map(|_| StepStatus {
                    uses: "http".into(),
                    phase: StepPhase::Succeeded,
                    message: "m".repeat(10 * MAX_STEP_MESSAGE),
                    output: Some(output(
                        json!({"body": "\u{1}".repeat(4096)}),
                        output_limit(steps),
                    )),
                    // A log as long as a step keeps, each line as long as one may be.
                    log: (0..MAX_STEP_LOG_LINES)
                        .map(|i| hecate_types::StepLogLine {
                            at: hecate_types::Time(jiff::Timestamp::UNIX_EPOCH),
                            text: format!("{i}").repeat(MAX_STEP_LOG_LINE),
                            repeated: u32::MAX,
                        })
                        .collect(),
                    ..StepStatus::default()
                })
                .collect(),
            ..PassageStatus::default()
        };
        let outputs_before: Vec<_> = status.steps.iter().map(|s| s.output.clone()).collect();
        assert_eq!(fit(&mut status), Ok(()));
        // Each log keeps its newest lines, its share of the Passage's room.
        assert_eq!((log_lines(1), log_lines(20), log_lines(steps)), (10, 10, 2));
        assert!(
            status
                .steps
                .iter()
                .all(|s| s.log.len() == 2 && s.log[1].text.starts_with('9'))
        );
        assert!(json_len(&status) <= MAX_PASSAGE_STATUS_BYTES);
        assert!(status.message.len() <= MAX_MESSAGE);
        assert!(
            status
                .steps
                .iter()
                .all(|s| s.message.len() <= MAX_STEP_MESSAGE)
        );
        let outputs_after: Vec<_> = status.steps.iter().map(|s| s.output.clone()).collect();
        assert_eq!(outputs_before, outputs_after, "bounded outputs are kept");
    }

    #[test]
    fn a_status_over_its_bound_loses_its_largest_outputs_first() {
        let step = |bytes: usize| StepStatus {
            uses: "http".into(),
            phase: StepPhase::Succeeded,
            output: Some(json!({"body": "x".repeat(bytes)})),
            ..StepStatus::default()
        };
        let mut status = PassageStatus {
            steps: vec![step(100), step(400 * 1024), step(300 * 1024)],
            ..PassageStatus::default()
        };
        assert_eq!(fit(&mut status), Ok(()));
        let kept = |i: usize| {
            status.steps[i]
                .output
                .as_ref()
                .map(|o| o.get(OMITTED).is_none())
        };
        assert_eq!(
            (kept(0), kept(1), kept(2)),
            (Some(true), Some(false), Some(true))
        );
    }

    #[test]
    fn a_status_that_cannot_fit_says_how_large_it_is() {
        // What no bound of a step governs: an alias as long as the spec allows.
        let mut status = PassageStatus {
            steps: vec![StepStatus {
                uses: "http".into(),
                alias: "a".repeat(MAX_PASSAGE_STATUS_BYTES),
                output: Some(json!({"body": "x".repeat(1024)})),
                ..StepStatus::default()
            }],
            ..PassageStatus::default()
        };
        let size = fit(&mut status).expect_err("too large");
        assert!(size > MAX_PASSAGE_STATUS_BYTES, "{size}");
        assert!(
            status.steps[0]
                .output
                .as_ref()
                .is_some_and(|o| o.get(OMITTED).is_some())
        );
    }
}
