//! Rollback (DECISION 139): what a Gate goes back to, and when it goes back by itself.
//!
//! A rollback crosses the Gate's last verified Bundle again — through the same rules as
//! any promotion (windows, approvals, segregation of duties, the audit trail) but one:
//! the Bundle may be the Gate's current occupant, when what failed never became the
//! occupant (a crossing whose steps failed leaves the environment half-changed, and
//! crossing the occupant again restores it). The Passage carries
//! [`wellknown::ANNOTATION_ROLLBACK_OF`] naming the crossing it undoes.
//!
//! A Gate with `spec.rollback.auto` rolls back by itself when its newest crossing failed
//! or its verification said no — once: an automatic rollback that itself fails stops
//! and says so, never a loop.

use hecate_types::{Bundle, Gate, GateOccupant, Passage, PassagePhase, wellknown};

use crate::model::RollbackOf;
use kube::ResourceExt as _;

/// Why a Gate has nothing to roll back to.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoTarget {
    /// No earlier occupant is verified (or, on a Gate that verifies nothing, crossed).
    #[error("{gate} has no earlier verified Bundle to roll back to")]
    NothingEarlier {
        /// The Gate.
        gate: String,
    },
    /// The Bundle it would go back to no longer exists.
    #[error("{gate} would roll back to {bundle}, which no longer exists")]
    Gone {
        /// The Gate.
        gate: String,
        /// The Bundle.
        bundle: String,
    },
}

/// Whether `occupant` counts as a good place to go back to: verified, or — on a Gate
/// that verifies nothing — crossed. The one test, for the target chosen and the one
/// named alike.
pub fn may_return_to(gate: &Gate, occupant: &GateOccupant) -> bool {
    if gate.spec.verify.is_empty() {
        occupant.verified != Some(false)
    } else {
        occupant.verified == Some(true)
    }
}

/// The Bundle a rollback of `gate` that undoes `undoing` (a Bundle's name) crosses:
/// the newest verified occupant — the current one first, then the history — that is
/// not `undoing`.
pub fn target<'a>(
    gate: &Gate,
    bundles: impl IntoIterator<Item = &'a Bundle>,
    undoing: &str,
) -> Result<&'a Bundle, NoTarget> {
    let gate_name = gate.name_any();
    let status = gate.status.as_ref();
    let occupant = status
        .and_then(|s| {
            s.current
                .iter()
                .chain(&s.history)
                .find(|o| o.bundle != undoing && may_return_to(gate, o))
        })
        .ok_or_else(|| NoTarget::NothingEarlier {
            gate: gate_name.clone(),
        })?;
    bundles
        .into_iter()
        .find(|b| b.name_any() == occupant.bundle)
        .ok_or_else(|| NoTarget::Gone {
            gate: gate_name,
            bundle: occupant.bundle.clone(),
        })
}

/// The crossing a rollback of `gate` by hand undoes: the current occupant's, or none
/// when the Gate holds nothing.
pub fn undone_by_hand(gate: &Gate) -> Option<&GateOccupant> {
    gate.status.as_ref().and_then(|s| s.current.as_ref())
}

/// Whether `passage` is a rollback, and of which crossing.
pub fn rollback_of(passage: &Passage) -> Option<&str> {
    passage
        .annotations()
        .get(wellknown::ANNOTATION_ROLLBACK_OF)
        .map(String::as_str)
        .filter(|undone| !undone.is_empty())
}

/// What `passage` undid, if it is a rollback: the Passage it names (`named` finds it
/// by name, when it is still kept), that crossing's Bundle and why it was undone — its
/// verification said no, it failed, or a person asked. The label every surface shows
/// beside a rollback (DECISION 153).
pub fn of<'a>(
    passage: &Passage,
    named: impl FnOnce(&str) -> Option<&'a Passage>,
) -> Option<RollbackOf> {
    let undone_name = rollback_of(passage)?;
    let undone = named(undone_name);
    let automatic = passage.spec.actor == wellknown::ACTOR_CONTROLLER;
    let why = match undone {
        Some(undone) if super::verification::said_no(undone) => {
            let message = undone
                .status
                .as_ref()
                .and_then(|s| s.verification.as_ref())
                .map(|v| v.message.as_str())
                .unwrap_or_default();
            if message.is_empty() {
                "its verification said no".to_string()
            } else {
                format!("its verification said no: {message}")
            }
        }
        Some(undone) if undone.phase() == PassagePhase::Failed => {
            let status = undone.status.as_ref();
            let step = status.and_then(|s| {
                s.steps
                    .iter()
                    .find(|step| step.phase == hecate_types::StepPhase::Failed)
            });
            match step {
                Some(step) if !step.message.is_empty() => {
                    format!("it failed at {}: {}", step.uses, step.message)
                }
                Some(step) => format!("it failed at {}", step.uses),
                None => "it failed".to_string(),
            }
        }
        _ if automatic => "it did not succeed".to_string(),
        _ => "asked for by hand".to_string(),
    };
    Some(RollbackOf {
        passage: undone_name.to_string(),
        bundle: undone.map(|p| p.spec.bundle.clone()).unwrap_or_default(),
        why,
        automatic,
    })
}

/// What a Gate with automatic rollback does about its newest finished crossing.
#[derive(Debug, PartialEq)]
pub enum Automatic<'a> {
    /// Open a rollback crossing `target`, undoing the Passage `undoing`.
    Open {
        /// The Bundle to cross again.
        target: &'a Bundle,
        /// The Passage whose failure it undoes.
        undoing: String,
        /// Why, in words: for the audit trail and the Event.
        why: String,
    },
    /// It would, and will not: why, in words (the Gate says so in its condition).
    Stopped(String),
}

/// What `gate` does about `latest`, its newest finished crossing, given every Passage
/// of the Gate (to see a rollback already opened) and the namespace's Bundles: nothing
/// (`None`) unless `spec.rollback.auto` is on and `latest` failed or its verification
/// said no. An aborted crossing is a person's decision and is left alone.
pub fn automatic<'a>(
    gate: &Gate,
    latest: &Passage,
    passages: &[Passage],
    bundles: &'a [Bundle],
) -> Option<Automatic<'a>> {
    if !gate.spec.rollback.as_ref().is_some_and(|r| r.auto) {
        return None;
    }
    let failed = latest.phase() == PassagePhase::Failed;
    let unverified =
        latest.phase() == PassagePhase::Succeeded && super::verification::said_no(latest);
    if !failed && !unverified {
        return None;
    }
    let latest_name = latest.name_any();
    if passages
        .iter()
        .any(|p| rollback_of(p) == Some(latest_name.as_str()))
    {
        return None;
    }
    let what = if failed {
        format!("the crossing of {} failed", latest.spec.bundle)
    } else {
        format!("{} was not verified", latest.spec.bundle)
    };
    if let Some(undone) = rollback_of(latest) {
        return Some(Automatic::Stopped(format!(
            "{what}, and it was itself a rollback (of {undone}): automatic rollback stops here; a person decides what crosses next"
        )));
    }
    match target(gate, bundles, &latest.spec.bundle) {
        Ok(target) => Some(Automatic::Open {
            why: format!(
                "{what} ({latest_name}): rolling back to {}",
                target.name_any()
            ),
            target,
            undoing: latest_name,
        }),
        Err(no) => Some(Automatic::Stopped(format!(
            "{what}; no automatic rollback: {no}"
        ))),
    }
}
