//! What a Gate does next, once its crossings are recorded: keep watching a crossing
//! under way, open a new one, or say what it is waiting for (spec controller.md §2.7).
//!
//! Pure: the eligibility judgement, the windows and the auto-crossing rule all come
//! from `hecate_ops::rules`, the same code `hecate explain` and `hecate promote` use;
//! this module only puts them in the controller's order and words.

use hecate_ops::model::Remedy;
use hecate_ops::rules::eligibility::{self, AutoNext, Candidate};
use hecate_ops::rules::window;
use hecate_types::{Bundle, Gate, Passage};
use jiff::Timestamp;
use kube::ResourceExt as _;

/// The Gate's next move.
#[derive(Debug, PartialEq)]
pub enum Decision<'a> {
    /// A Passage is under way: watch it.
    Crossing {
        /// The Passage.
        passage: String,
        /// What it is doing, for the Ready message.
        message: String,
    },
    /// Open a Passage for this Bundle.
    Open(&'a Bundle),
    /// Nothing to do now, or nothing without a person asking.
    Idle(String),
    /// An automatic Gate outside its windows; eligible Bundles wait.
    WindowClosed {
        /// Why, and until when if known.
        message: String,
        /// When the windows next change, if known.
        reopens: Option<Timestamp>,
    },
    /// An automatic Gate that stopped because its newest eligible Bundle already
    /// failed here (automation never retries a failure).
    CrossingFailed(String),
}

/// Decides the Gate's next move. `active` is its running Passage, `candidates` every
/// admitted Bundle judged by [`eligibility::evaluate`], `bundles` the namespace's
/// Bundles (to find the current occupant; a deleted one counts as none).
pub fn decide<'a>(
    gate: &Gate,
    active: Option<&Passage>,
    candidates: &[Candidate<'a>],
    bundles: &'a [Bundle],
    now: Timestamp,
) -> Decision<'a> {
    let name = gate.name_any();
    let namespace = gate.namespace().unwrap_or_default();
    if let Some(active) = active {
        return Decision::Crossing {
            passage: active.name_any(),
            message: crossing_message(active),
        };
    }
    let eligible = eligibility::eligible(candidates);
    if !gate.spec.auto {
        return Decision::Idle(match eligible.first() {
            None => waiting(candidates),
            Some(newest) => format!(
                "{} eligible; crossing must be requested, e.g. {}",
                bundles_count(eligible.len()),
                Remedy::Promote {
                    gate: name,
                    bundle: newest.name_any(),
                }
                .fix(&namespace)
            ),
        });
    }
    let windows = window::judge(&gate.spec.windows, now);
    if !windows.allowed {
        return Decision::WindowClosed {
            message: windows.reason_with_until(),
            reopens: windows.next_change,
        };
    }
    let current = gate
        .current_bundle()
        .and_then(|current| bundles.iter().find(|b| b.name_any() == current));
    match eligibility::auto_next(&name, candidates, current) {
        AutoNext::Cross(next) => Decision::Open(next),
        AutoNext::FailedHere(newest) => {
            let reason = newest
                .status
                .as_ref()
                .and_then(|s| s.blocked.iter().find(|c| c.gate == name))
                .map(|failure| failure.reason.as_str())
                .filter(|reason| !reason.is_empty())
                .unwrap_or("no reason recorded");
            Decision::CrossingFailed(format!(
                "the crossing of {} failed: {reason}; automatic crossings never retry a failure. To try again: {}",
                newest.name_any(),
                Remedy::Promote {
                    gate: name,
                    bundle: newest.name_any(),
                }
                .fix(&namespace)
            ))
        }
        AutoNext::NothingNewer { held_back: None } => {
            Decision::Idle("nothing newer than the current Bundle".into())
        }
        AutoNext::NothingNewer {
            held_back: Some(why),
        } => Decision::Idle(format!("nothing newer can cross yet: {why}")),
        AutoNext::NoneEligible => Decision::Idle(waiting(candidates)),
    }
}

/// What a running Passage is doing: held by the change gate (with its risk and
/// blockers) when its evidence verdict says so, otherwise in progress.
pub fn crossing_message(active: &Passage) -> String {
    let name = active.name_any();
    let held = active
        .status
        .as_ref()
        .and_then(|s| s.evidence.as_ref())
        .filter(|e| !e.verdict.is_empty() && e.verdict != "approve");
    match held {
        Some(evidence) => {
            let risk = evidence
                .risk
                .map(|r| format!(" (risk {r})"))
                .unwrap_or_default();
            let blockers = if evidence.blockers.is_empty() {
                String::new()
            } else {
                format!(": {}", evidence.blockers.join("; "))
            };
            format!("{name} is held by the change gate{risk}{blockers}")
        }
        None => format!("{name} is in progress"),
    }
}

/// What a Gate with nothing eligible waits on.
fn waiting(candidates: &[Candidate<'_>]) -> String {
    eligibility::waiting_on(candidates).unwrap_or_else(|| "nothing is eligible".into())
}

fn bundles_count(n: usize) -> String {
    if n == 1 {
        "1 Bundle is".into()
    } else {
        format!("{n} Bundles are")
    }
}
