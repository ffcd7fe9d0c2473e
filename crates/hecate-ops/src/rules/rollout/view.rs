//! A rollout as its readers see it, from the Passage's record alone: where the Bundle
//! stands across the targets ([`now`]), and which crossing of a Gate a targets view
//! shows ([`latest`]). Explain, `hecate targets`, the API and the UI read these; none
//! of them reads the record's phases for itself.

use hecate_types::{Bundle, Passage, RolloutStatus};
use kube::ResourceExt as _;

use super::occupancy::recorded;
use crate::model::{RolloutNow, RolloutRecord, TargetFailure};
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
/// the one under way, else the newest that reached targets. `None` when no crossing
/// of the Gate has spanned targets.
pub fn latest<'a>(passages: impl IntoIterator<Item = &'a Passage>) -> Option<&'a Passage> {
    let mut newest = None;
    for passage in passages {
        if passage
            .status
            .as_ref()
            .and_then(|s| s.rollout.as_ref())
            .is_none()
        {
            continue;
        }
        if !passage.is_terminal() {
            return Some(passage);
        }
        newest = newest.or(Some(passage));
    }
    newest
}

/// `passage`'s rollout, whole, with its Bundle's version from `bundles` (its name when
/// the Bundle is gone). `None` for a crossing of one place.
pub fn record<'a>(
    passage: &Passage,
    bundles: impl IntoIterator<Item = &'a Bundle>,
) -> Option<RolloutRecord> {
    let record = passage.status.as_ref()?.rollout.as_ref()?;
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
    })
}
