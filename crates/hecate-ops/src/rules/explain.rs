//! Explain: why a Gate is where it is, as typed blockers, most actionable first.
//!
//! The stages, first match wins: suspended; steps invalid (as the controller reported);
//! no steps; a crossing in progress; otherwise judge the candidates — eligibility and
//! windows come from their own modules, never restated here.

use hecate_types::{Gate, Health, Passage, PassagePhase, StepPhase, Time, wellknown};
use jiff::Timestamp;
use kube::ResourceExt as _;

use super::eligibility::{self, Candidate, Code};
use super::snapshot::NamespaceSnapshot;
use super::window;
use crate::model::{Blocker, BlockerKind, Explanation, State, Waiting};

/// Until when [`explain`] at `now` gives the same answer over the same objects: time
/// enters an explanation only through the Gate's windows, so it holds until they next
/// open or close (`None`: no window changes — none, or none within the horizon
/// [`window::judge`] looks over).
pub fn unchanged_until(gate: &Gate, now: Timestamp) -> Option<Timestamp> {
    if gate.spec.windows.is_empty() {
        return None;
    }
    window::judge(&gate.spec.windows, now).next_change
}

/// Explains `gate` (one of `snapshot`'s Gates) at `now`.
pub fn explain(snapshot: &NamespaceSnapshot, gate: &Gate, now: Timestamp) -> Explanation {
    let name = gate.name_any();
    let namespace = snapshot.namespace().to_string();
    let status = gate.status.as_ref();
    let mut x = Explanation {
        gate: name.clone(),
        namespace: namespace.clone(),
        state: State::Idle,
        summary: String::new(),
        blockers: Vec::new(),
        current: gate.current_bundle().map(str::to_string),
        eligible: Vec::new(),
        waiting: Vec::new(),
        health: status.and_then(|s| s.health.as_ref()).map(|h| h.status),
        evidence: None,
    };

    if gate.spec.suspend {
        x.state = State::Blocked;
        x.summary = "the Gate is suspended: no crossing will start until it is resumed".into();
        x.blockers.push(blocker(
            BlockerKind::Suspended,
            "spec.suspend is true",
            format!(r#"kubectl -n {namespace} patch gate {name} --type=merge -p '{{"spec":{{"suspend":false}}}}'"#),
        ));
        return x;
    }
    if let Some(problems) = invalid_steps(gate) {
        x.state = State::Blocked;
        x.summary = "the Gate's steps do not validate, so it will not start a Passage".into();
        x.blockers.push(blocker(
            BlockerKind::InvalidSteps,
            problems,
            "fix spec.passage.steps and apply the Gate again",
        ));
        return x;
    }
    if gate
        .spec
        .passage
        .as_ref()
        .is_none_or(|p| p.steps.is_empty())
    {
        x.state = State::Blocked;
        x.summary = "the Gate has no steps, so a crossing would have nothing to run".into();
        x.blockers.push(blocker(
            BlockerKind::NoPassage,
            "spec.passage.steps is empty",
            "add spec.passage.steps: the steps that move a Bundle into this environment",
        ));
        return x;
    }

    let passages: Vec<&Passage> = snapshot.passages_of(&name).collect();
    if let Some(active) = passages.iter().find(|p| !p.is_terminal()) {
        crossing(&mut x, active);
        return x;
    }

    let candidates = eligibility::evaluate(gate, snapshot.bundles(), None);
    for candidate in &candidates {
        match &candidate.blocked {
            None => x.eligible.push(candidate.bundle.name_any()),
            Some(why) if why.code == Code::AlreadyCurrent => {} // the occupant is the goal, not a problem
            Some(why) => x.waiting.push(Waiting {
                bundle: candidate.bundle.name_any(),
                reason: why.reason.clone(),
                kind: Some(why.code),
            }),
        }
    }
    x.blockers
        .extend(last_failure(&namespace, passages.first().copied()));
    x.blockers.extend(health_blocker(gate));
    judge(&mut x, gate, &candidates, now);
    if let Some(failure) = x
        .blockers
        .iter()
        .find(|b| b.kind == BlockerKind::PassageFailed)
    {
        x.state = State::Failed;
        x.summary = failure.detail.clone();
    }
    x
}

fn blocker(kind: BlockerKind, detail: impl Into<String>, fix: impl Into<String>) -> Blocker {
    Blocker {
        kind,
        detail: detail.into(),
        fix: fix.into(),
        until: None,
    }
}

/// The controller's `InvalidSteps` message, if its Ready condition carries one.
/// Explain trusts the controller here rather than validating steps a second way.
fn invalid_steps(gate: &Gate) -> Option<String> {
    gate.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| {
            c.type_ == wellknown::condition::READY
                && c.status == hecate_types::ConditionStatus::False
                && c.reason == wellknown::gate_reason::INVALID_STEPS
        })
        .map(|c| c.message.clone())
}

/// A crossing in progress: held by the change gate, waiting on a step, or just running.
fn crossing(x: &mut Explanation, passage: &Passage) {
    let bundle = &passage.spec.bundle;
    x.state = State::Crossing;
    x.summary = format!("crossing {bundle}");
    let status = passage.status.as_ref();
    x.evidence = status.and_then(|s| s.evidence.clone());
    if let Some(evidence) = x
        .evidence
        .as_ref()
        .filter(|e| !e.verdict.is_empty() && e.verdict != "approve")
    {
        let mut detail = format!("the change gate answered {}", evidence.verdict);
        if let Some(risk) = evidence.risk {
            detail.push_str(&format!(" (risk {risk}/100)"));
        }
        if !evidence.blockers.is_empty() {
            detail.push_str(&format!(": {}", evidence.blockers.join("; ")));
        }
        x.summary = format!("crossing {bundle}, held by the change gate");
        x.blockers.push(blocker(
            BlockerKind::ChangeHeld,
            detail,
            "resolve what the change gate asks for in Fides; the crossing reads the verdict again and continues by itself",
        ));
        return;
    }
    let running = status.and_then(|s| s.steps.iter().find(|step| step.phase == StepPhase::Running));
    if let Some(step) = running {
        let detail = if step.message.is_empty() {
            step.uses.clone()
        } else {
            format!("{}: {}", step.uses, step.message)
        };
        x.summary = format!("crossing {bundle}, waiting on {detail}");
        x.blockers
            .push(blocker(BlockerKind::StepWaiting, detail, ""));
    }
}

/// The latest Passage, if it failed. An older failure followed by anything else, or
/// an abort, is history rather than a blocker.
fn last_failure(namespace: &str, latest: Option<&Passage>) -> Option<Blocker> {
    let passage = latest.filter(|p| p.phase() == PassagePhase::Failed)?;
    let bundle = &passage.spec.bundle;
    let status = passage.status.as_ref();
    let failed_step =
        status.and_then(|s| s.steps.iter().find(|step| step.phase == StepPhase::Failed));
    let detail = match failed_step {
        Some(step) => {
            let mut detail = format!("the last crossing of {bundle} failed at {}", step.uses);
            if !step.reason.is_empty() {
                detail.push_str(&format!(" [{}]", step.reason));
            }
            if !step.message.is_empty() {
                detail.push_str(&format!(": {}", step.message));
            }
            detail
        }
        None => format!(
            "the last crossing of {bundle} failed: {}",
            status.map_or("no reason recorded", |s| s.message.as_str())
        ),
    };
    Some(blocker(
        BlockerKind::PassageFailed,
        detail,
        format!(
            "kubectl -n {namespace} describe passage {}",
            passage.name_any()
        ),
    ))
}

/// Degraded or unknown health: it does not stop crossings, but it is usually what the
/// operator wants to know first.
fn health_blocker(gate: &Gate) -> Option<Blocker> {
    let health = gate.status.as_ref()?.health.as_ref()?;
    if !matches!(health.status, Health::Degraded | Health::Unknown) {
        return None;
    }
    let mut detail = format!("what this Gate watches is {}", health.status);
    if !health.issues.is_empty() {
        detail.push_str(&format!(": {}", health.issues.join("; ")));
    }
    Some(blocker(BlockerKind::Unhealthy, detail, ""))
}

/// The first Gate in the Bundle's admission's `after` that it has not cleared.
fn first_uncleared(gate: &Gate, candidates: &[Candidate<'_>], bundle: &str) -> Option<String> {
    let bundle = candidates
        .iter()
        .find(|c| c.bundle.metadata.name.as_deref() == Some(bundle))?
        .bundle;
    let admission = gate.admission_for(&bundle.spec.beacon)?;
    admission
        .after
        .iter()
        .find(|upstream| !bundle.has_cleared(upstream))
        .cloned()
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// An automatic Gate with eligible Bundles and an open window: what it will do next,
/// judged by the same rule the controller uses. It only moves forward and never
/// retries a Bundle that failed here, so "eligible" alone would promise crossings that
/// will not happen.
fn auto(x: &mut Explanation, candidates: &[Candidate<'_>], count: &str) {
    let name = x.gate.clone();
    let namespace = x.namespace.clone();
    let current = candidates
        .iter()
        .find(|c| {
            c.blocked
                .as_ref()
                .is_some_and(|why| why.code == Code::AlreadyCurrent)
        })
        .map(|c| c.bundle);
    if let Some(next) = eligibility::next_auto(&name, candidates, current) {
        x.state = State::Ready;
        x.summary = format!(
            "{count} eligible; the Gate crosses automatically and will take {} next",
            next.name_any()
        );
        return;
    }
    let Some(newest) = eligibility::eligible(candidates).first().copied() else {
        return;
    };
    let newest_name = newest.name_any();
    if newest.was_blocked_by(&name) {
        let reason = newest
            .status
            .iter()
            .flat_map(|s| &s.blocked)
            .find(|b| b.gate == name && !b.reason.is_empty())
            .map_or("no reason recorded", |b| b.reason.as_str());
        x.state = State::Blocked;
        x.summary =
            format!("{newest_name} did not cross here before, and is not retried automatically");
        if !x
            .blockers
            .iter()
            .any(|b| b.kind == BlockerKind::PassageFailed)
        {
            x.blockers.push(blocker(
                BlockerKind::PassageFailed,
                format!("{newest_name} did not cross here before and is not retried automatically: {reason}"),
                format!("hecate promote {name} --bundle {newest_name} -n {namespace}"),
            ));
        }
    } else {
        x.state = State::Idle;
        x.summary = format!(
            "nothing newer than the current Bundle; {} could be rolled back to by hand",
            plural(x.eligible.len(), "older Bundle")
        );
    }
}

/// State and summary from the candidates, windows and auto/manual, with the blockers
/// that follow from them.
fn judge(x: &mut Explanation, gate: &Gate, candidates: &[Candidate<'_>], now: Timestamp) {
    let name = &x.gate;
    let namespace = &x.namespace;
    if !x.eligible.is_empty() {
        let count = plural(x.eligible.len(), "Bundle");
        let windows = window::judge(&gate.spec.windows, now);
        if !windows.allowed {
            let detail = windows.reason_with_until();
            x.state = State::Blocked;
            x.summary = format!("{count} could cross, but {detail}");
            x.blockers.push(Blocker {
                kind: BlockerKind::WindowClosed,
                detail,
                fix: "wait for the window, or change spec.windows".into(),
                until: windows.next_change.map(Time),
            });
        } else if !gate.spec.auto {
            let newest = &x.eligible[0];
            x.state = State::Ready;
            x.summary = format!("{count} ready to cross; this Gate crosses only when asked");
            let approver = candidates
                .iter()
                .find(|c| c.bundle.metadata.name.as_deref() == Some(newest.as_str()))
                .and_then(|c| c.bundle.approval_for(name))
                .map(|a| a.actor.clone());
            let detail = match approver {
                Some(approver) => format!(
                    "spec.auto is false: someone other than {approver}, who approved {newest}, must request the crossing"
                ),
                None => "spec.auto is false, so someone must request the crossing".into(),
            };
            x.blockers.push(blocker(
                BlockerKind::Manual,
                detail,
                format!("hecate promote {name} --bundle {newest} -n {namespace}"),
            ));
        } else {
            auto(x, candidates, &count);
        }
        return;
    }
    if let Some(first) = x.waiting.first() {
        x.state = State::Blocked;
        x.summary = format!(
            "{} cannot cross: {}",
            plural(x.waiting.len(), "Bundle"),
            first.reason
        );
        // One blocker per kind, from the first (newest) Bundle waiting for it.
        let mut seen = Vec::new();
        let mut blockers = Vec::new();
        for waiting in &x.waiting {
            let kind = match waiting.kind {
                Some(Code::AwaitingApproval) => BlockerKind::NotApproved,
                Some(Code::UpstreamNotCleared) => BlockerKind::Upstream,
                _ => continue,
            };
            if seen.contains(&kind) {
                continue;
            }
            seen.push(kind);
            let fix = if kind == BlockerKind::NotApproved {
                format!(
                    "hecate approve {} --gate {name} -n {namespace}",
                    waiting.bundle
                )
            } else {
                let upstream =
                    first_uncleared(gate, candidates, &waiting.bundle).unwrap_or_default();
                format!(
                    "take it through the upstream Gate first: hecate promote {upstream} --bundle {} -n {namespace}",
                    waiting.bundle
                )
            };
            blockers.push(blocker(
                kind,
                format!("{}: {}", waiting.bundle, waiting.reason),
                fix,
            ));
            if seen.len() == 2 {
                break;
            }
        }
        x.blockers.extend(blockers);
        return;
    }
    x.state = State::Idle;
    if candidates.is_empty() {
        x.summary = "no Bundle from any admitted Beacon yet".into();
        x.blockers.push(blocker(
            BlockerKind::NoBundles,
            "none of the Beacons this Gate admits has emitted a Bundle",
            format!(
                "check that the Beacon is discovering artifacts: kubectl -n {namespace} get beacons"
            ),
        ));
    } else {
        x.summary = "nothing to do: everything admitted is already in this Gate".into();
    }
}
