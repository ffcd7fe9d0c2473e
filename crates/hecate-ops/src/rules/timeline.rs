//! The timeline: a namespace's recent Bundles, newest first, each with where it stands
//! at every Gate on its way — cleared (and when), failed or aborted there, crossing
//! now, or not yet — and which Gates hold it now. Kargo's freight view, judged here
//! once so that every surface draws the same dots.
//!
//! Everything comes from the snapshot the Overview already holds (one LIST per kind):
//! the Bundles' own records (`status.cleared`, `status.blocked`), the Gates' current
//! Bundles, and the Passages under way or failed.

use std::collections::{BTreeSet, HashMap};

use hecate_types::{Bundle, Gate, PassagePhase};
use kube::ResourceExt as _;

use super::eligibility::{admitted_beacons, created_at};
use super::pipeline;
use super::snapshot::NamespaceSnapshot;
use crate::model::{BundleTrack, Outcome, TrackStop};

/// How many of the newest Bundles the timeline shows (with any older one a Gate still
/// holds).
pub const TIMELINE_BUNDLES: usize = 10;

/// The namespace's timeline: the [`TIMELINE_BUNDLES`] newest Bundles, and any older
/// one a Gate holds now (what runs in an environment is always on it), newest first.
pub fn timeline(snapshot: &NamespaceSnapshot) -> Vec<BundleTrack> {
    let gates: Vec<&Gate> = pipeline::upstream_first(snapshot.gates())
        .into_iter()
        .map(|(gate, _)| gate)
        .collect();
    let held: BTreeSet<&str> = gates.iter().filter_map(|g| g.current_bundle()).collect();
    let mut failed: HashMap<&str, usize> = HashMap::new();
    for passage in snapshot.passages() {
        if passage.phase() == PassagePhase::Failed {
            *failed.entry(passage.spec.bundle.as_str()).or_default() += 1;
        }
    }
    snapshot
        .bundles()
        .enumerate()
        .filter(|(i, b)| *i < TIMELINE_BUNDLES || held.contains(b.name_any().as_str()))
        .map(|(_, bundle)| {
            let name = bundle.name_any();
            let stops: Vec<TrackStop> = gates
                .iter()
                .filter_map(|gate| stop(snapshot, gate, bundle, &name))
                .collect();
            BundleTrack {
                alias: bundle.spec.alias.clone(),
                beacon: bundle.spec.beacon.clone(),
                emitted_at: created_at(bundle).map(hecate_types::Time),
                holding: stops
                    .iter()
                    .filter(|s| s.holding)
                    .map(|s| s.gate.clone())
                    .collect(),
                failed: failed.get(name.as_str()).copied().unwrap_or(0),
                gates: stops,
                bundle: name,
            }
        })
        .collect()
}

/// Where `bundle` stands at `gate`, or `None` when the Gate is not on its way (it
/// neither admits its Beacon nor has any record of it).
fn stop(
    snapshot: &NamespaceSnapshot,
    gate: &Gate,
    bundle: &Bundle,
    name: &str,
) -> Option<TrackStop> {
    let gate_name = gate.name_any();
    let status = bundle.status.as_ref();
    let cleared = status.and_then(|s| s.cleared.iter().rev().find(|c| c.gate == gate_name));
    // `blocked` is newest first.
    let blocked = status.and_then(|s| s.blocked.iter().find(|c| c.gate == gate_name));
    let current = gate
        .status
        .as_ref()
        .and_then(|s| s.current.as_ref())
        .filter(|c| c.bundle == name);
    let running = snapshot
        .passages_of(&gate_name)
        .find(|p| p.spec.bundle == name && !p.is_terminal());
    let admits = admitted_beacons(gate).contains(bundle.spec.beacon.as_str());
    if !admits && cleared.is_none() && blocked.is_none() && current.is_none() && running.is_none() {
        return None;
    }
    let mut stop = TrackStop {
        gate: gate_name.clone(),
        outcome: None,
        holding: current.is_some(),
        at: None,
        passage: String::new(),
        reason: String::new(),
    };
    if let Some(passage) = running {
        stop.outcome = Some(Outcome::Running);
        stop.at = passage
            .status
            .as_ref()
            .and_then(|s| s.started_at.clone())
            .or_else(|| passage.metadata.creation_timestamp.clone());
        stop.passage = passage.name_any();
        return Some(stop);
    }
    // The later of its record here: cleared, or a crossing that did not land.
    match (cleared, blocked) {
        (Some(c), Some(b)) if b.at.0 > c.at.0 => failed_at(snapshot, &gate_name, b, &mut stop),
        (Some(c), _) => {
            stop.outcome = Some(Outcome::Crossed);
            stop.at = Some(c.at.clone());
            stop.passage = c.passage.clone();
        }
        (None, Some(b)) => failed_at(snapshot, &gate_name, b, &mut stop),
        (None, None) => {
            // Held without a record of clearing (it entered, whatever the Bundle
            // says): it crossed, when the Gate says it entered.
            if let Some(c) = current {
                stop.outcome = Some(Outcome::Crossed);
                stop.at = Some(c.entered_at.clone());
                stop.passage = c.passage.clone();
            }
        }
    }
    Some(stop)
}

/// `stop` as the failed (or aborted) crossing `entry` left it: aborted when its
/// Passage says so, else failed.
fn failed_at(
    snapshot: &NamespaceSnapshot,
    gate: &str,
    entry: &hecate_types::GateCrossing,
    stop: &mut TrackStop,
) {
    let aborted = !entry.passage.is_empty()
        && snapshot.passages_of(gate).any(|p| {
            p.metadata.name.as_deref() == Some(entry.passage.as_str())
                && p.phase() == PassagePhase::Aborted
        });
    stop.outcome = Some(if aborted {
        Outcome::Aborted
    } else {
        Outcome::Failed
    });
    stop.at = Some(entry.at.clone());
    stop.passage = entry.passage.clone();
    stop.reason = entry.reason.clone();
}
