//! A rollout as its readers see it, from the Passage's record alone: where the Bundle
//! stands across the targets ([`now`]), and which crossing of a Gate a targets view
//! shows ([`latest`]). Explain, `hecate targets`, the API and the UI read these; none
//! of them reads the record's phases for itself.

use hecate_types::{Bundle, Gate, Passage, RolloutStatus};
use kube::ResourceExt as _;

use super::occupancy::recorded;
use super::plan::Plan;
use crate::model::{Remedy, RolloutNow, RolloutRecord, TargetFailure};
use crate::rules::version;

/// Where `version`'s rollout stands, from its record.
pub fn now(version: &str, record: &RolloutStatus) -> RolloutNow {
    let occupancy = recorded(version, record);
    RolloutNow {
        phase: occupancy.phase.as_str().to_string(),
        message: record.message.clone(),
        occupancy: occupancy.words(),
        of: occupancy.of,
        on: occupancy.on,
        crossing: occupancy.crossing,
        failed: occupancy
            .failed
            .into_iter()
            .map(|f| TargetFailure {
                target: f.name,
                // People count steps from 1, as the words do.
                step: f.step.map(|s| s + 1),
                reason: f.reason,
                message: f.message,
            })
            .collect(),
        accepted: occupancy.accepted,
    }
}

/// The crossing a Gate's targets view shows, of `passages` (one Gate's, newest first):
/// the one under way, else the newest that reached targets — a crossing of every
/// target; one of some targets (DECISION 163) is shown beside it ([`of_gate`]). `None`
/// when no crossing of the Gate has spanned targets.
pub fn latest<'a>(passages: impl IntoIterator<Item = &'a Passage>) -> Option<&'a Passage> {
    let mut newest = None;
    for passage in passages {
        if passage.spec.is_partial() || rollout_of(passage).is_none() {
            continue;
        }
        if !passage.is_terminal() {
            return Some(passage);
        }
        newest = newest.or(Some(passage));
    }
    newest
}

/// A Gate's targets as its targets view shows them, of `passages` (one Gate's, newest
/// first) and `bundles`: the [`latest`] rollout, with the crossings of some of its
/// targets made since — rollbacks of some, catch-ups — newest first.
pub fn of_gate(passages: &[&Passage], bundles: &[&Bundle]) -> Option<RolloutRecord> {
    let whole = latest(passages.iter().copied())?;
    let mut shown = record(whole, bundles.iter().copied())?;
    shown.since = since(passages, whole)
        .filter_map(|p| record(p, bundles.iter().copied()))
        .collect();
    Some(shown)
}

/// What a person may do about `gate`'s targets now, of `passages` (the Gate's, newest
/// first) and `bundles`: after its newest rollout finished leaving targets failed —
/// aborted after a halt, or gone on past them — rolling back those a crossing of some
/// targets since has not taken already, when there is something to go back to.
pub fn fixes(gate: &Gate, passages: &[&Passage], bundles: &[&Bundle]) -> Vec<Remedy> {
    let Some(whole) = latest(passages.iter().copied()).filter(|p| p.is_terminal()) else {
        return Vec::new();
    };
    let Ok(plan) = crate::rules::actions::judge_rollback_targets(
        gate,
        passages.iter().copied(),
        bundles.iter().copied(),
        &super::RollBack::Failed,
    ) else {
        return Vec::new();
    };
    let taken: Vec<&String> = since(passages, whole)
        .flat_map(|p| p.spec.targets.iter())
        .collect();
    let targets: Vec<String> = plan
        .targets
        .into_iter()
        .filter(|t| !taken.contains(&t))
        .collect();
    if targets.is_empty() {
        return Vec::new();
    }
    vec![Remedy::RollbackFailedTargets {
        gate: gate.name_any(),
        targets,
    }]
}

/// A catch-up crossing due (DECISION 164): the Bundle the Gate holds, to the targets
/// that joined after its rollout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatchUp {
    /// The Bundle: the Gate's occupant, whose rollout this is.
    pub bundle: String,
    /// The rollout it completes.
    pub rollout: String,
    /// The targets it crosses, in the Gate's order.
    pub targets: Vec<String>,
}

/// The catch-up crossing `plan`'s targets are due, of `passages` (one Gate's, newest
/// first) and the Passage whose crossing the Gate holds (`occupant`): none unless the
/// Gate's [`latest`] rollout crossed and is that one and nothing of the Gate is under
/// way; then the present targets neither it reached ([`super::catch_up`]) nor a
/// crossing of some targets of the same Bundle since asked for — whatever came of
/// that: automation never retries a failure, a person does.
pub fn catch_up(plan: &Plan, occupant: &str, passages: &[&Passage]) -> Option<CatchUp> {
    if passages.iter().any(|p| !p.is_terminal()) {
        return None;
    }
    let whole = latest(passages.iter().copied())?;
    let whole_name = whole.name_any();
    if whole_name != occupant || whole.phase() != hecate_types::PassagePhase::Succeeded {
        return None;
    }
    let mut due = super::catch_up(plan, rollout_of(whole)?);
    for later in since(passages, whole).filter(|p| p.spec.bundle == whole.spec.bundle) {
        due.retain(|t| !later.spec.targets.contains(t));
    }
    (!due.is_empty()).then(|| CatchUp {
        bundle: whole.spec.bundle.clone(),
        rollout: whole_name,
        targets: due,
    })
}

/// The crossings of some targets made since the rollout `whole`, of `passages` (in
/// their order): those that name it — a rollback of some of its targets undoes it, a
/// catch-up completes it ([`belongs_to`]).
fn since<'a>(passages: &'a [&'a Passage], whole: &'a Passage) -> impl Iterator<Item = &'a Passage> {
    let whole_name = whole.name_any();
    passages
        .iter()
        .copied()
        .filter(move |p| belongs_to(p) == Some(whole_name.as_str()))
}

/// The rollout a crossing of some targets (DECISION 163) belongs to: the one it rolls
/// back, or the one it catches up with (`hecate.dev/catch-up-of`, DECISION 164).
/// `None` for a crossing of every target.
pub fn belongs_to(passage: &Passage) -> Option<&str> {
    if !passage.spec.is_partial() {
        return None;
    }
    super::super::rollback::rollback_of(passage).or_else(|| {
        passage
            .annotations()
            .get(hecate_types::wellknown::ANNOTATION_CATCH_UP_OF)
            .map(String::as_str)
            .filter(|named| !named.is_empty())
    })
}

fn rollout_of(passage: &Passage) -> Option<&RolloutStatus> {
    passage.status.as_ref()?.rollout.as_ref()
}

/// `passage`'s rollout, whole, with its Bundle's version from `bundles` (its name when
/// the Bundle is gone). `None` for a crossing of one place.
pub fn record<'a>(
    passage: &Passage,
    bundles: impl IntoIterator<Item = &'a Bundle>,
) -> Option<RolloutRecord> {
    let record = rollout_of(passage)?;
    let bundle = &passage.spec.bundle;
    let version = bundles
        .into_iter()
        .find(|b| b.metadata.name.as_deref() == Some(bundle))
        .map_or_else(|| bundle.clone(), version::of);
    Some(RolloutRecord {
        passage: passage.name_any(),
        bundle: bundle.clone(),
        active: !passage.is_terminal(),
        now: now(&version, record),
        version,
        wave: record.wave,
        targets: record
            .targets
            .iter()
            .filter(|t| t.departed_at.is_none())
            .cloned()
            .collect(),
        omitted_targets: record.omitted_targets,
        rollback_of: super::super::rollback::rollback_of(passage).map(str::to_string),
        since: Vec::new(),
    })
}
