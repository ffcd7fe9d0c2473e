//! The timeline: a namespace's recent Bundles, newest first, each with where it stands
//! at every Gate on its way — cleared (and when), failed or aborted there, crossing
//! now, or not yet — and which Gates hold it now. Kargo's freight view, judged here
//! once so that every surface draws the same dots.
//!
//! Everything comes from the snapshot the Overview already holds (one LIST per kind):
//! the Bundles' own records (`status.cleared`, `status.blocked`, `status.unverified`),
//! the Gates' current Bundles and history, and the Passages under way, failed, or
//! being verified (DECISION 139: a crossing is said crossed, verified, or not
//! verified and why).

use std::collections::{BTreeSet, HashMap};

use hecate_types::{
    Bundle, Gate, GateCrossing, GateOccupant, PassagePhase, VerificationPhase, VerificationStatus,
};
use kube::ResourceExt as _;

use super::eligibility::{admitted_beacons, created_at};
use super::pipeline;
use super::snapshot::NamespaceSnapshot;
use super::verification;
use super::version;
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
                alias: version::of(bundle),
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
    // `blocked` and `unverified` are newest first.
    let blocked = status.and_then(|s| s.blocked.iter().find(|c| c.gate == gate_name));
    let unverified = status.and_then(|s| s.unverified.iter().find(|c| c.gate == gate_name));
    let current = gate
        .status
        .as_ref()
        .and_then(|s| s.current.as_ref())
        .filter(|c| c.bundle == name);
    // In the Gate by a crossing the Bundle has no record of yet: its verification is
    // under way (or its record about to be written).
    let entered = current.filter(|c| {
        let records = [cleared, blocked, unverified];
        if c.passage.is_empty() {
            records.iter().all(Option::is_none)
        } else {
            !status.is_some_and(|s| {
                s.cleared
                    .iter()
                    .chain(&s.blocked)
                    .chain(&s.unverified)
                    .any(|r| r.gate == gate_name && r.passage == c.passage)
            })
        }
    });
    let running = snapshot
        .passages_of(&gate_name)
        .find(|p| p.spec.bundle == name && !p.is_terminal());
    let admits = admitted_beacons(gate).contains(bundle.spec.beacon.as_str());
    if !admits
        && cleared.is_none()
        && blocked.is_none()
        && unverified.is_none()
        && current.is_none()
        && running.is_none()
    {
        return None;
    }
    let mut stop = TrackStop {
        gate: gate_name.clone(),
        outcome: None,
        holding: current.is_some(),
        at: None,
        passage: String::new(),
        reason: String::new(),
        verification: None,
        progress: String::new(),
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
    // The latest of its records here: cleared (crossed and verified), a crossing that
    // did not land, one whose verification said no, or an entry not recorded yet. On
    // a tie the later in this list wins.
    let latest = [
        blocked.map(|b| (&b.at, Latest::Blocked(b))),
        unverified.map(|u| (&u.at, Latest::Unverified(u))),
        cleared.map(|c| (&c.at, Latest::Cleared(c))),
        entered.map(|c| (&c.entered_at, Latest::Entered(c))),
    ]
    .into_iter()
    .flatten()
    .max_by_key(|(at, _)| at.0)
    .map(|(_, latest)| latest);
    match latest {
        Some(Latest::Blocked(b)) => failed_at(snapshot, &gate_name, b, &mut stop),
        Some(Latest::Unverified(u)) => {
            stop.outcome = Some(Outcome::Crossed);
            stop.at = Some(u.at.clone());
            stop.passage = u.passage.clone();
            stop.reason = u.reason.clone();
            stop.verification = Some(VerificationPhase::Failed);
        }
        Some(Latest::Cleared(c)) => {
            stop.outcome = Some(Outcome::Crossed);
            stop.at = Some(c.at.clone());
            stop.passage = c.passage.clone();
            // Cleared is written once verified; said so where a record shows there
            // was something to verify.
            let verified = record_of(snapshot, &gate_name, &c.passage)
                .is_some_and(|v| v.phase == VerificationPhase::Verified)
                || occupant(gate, &c.passage).is_some_and(|o| o.verified == Some(true));
            stop.verification = verified.then_some(VerificationPhase::Verified);
        }
        Some(Latest::Entered(c)) => {
            // Held without a record of clearing (it entered, whatever the Bundle
            // says): it crossed, when the Gate says it entered.
            stop.outcome = Some(Outcome::Crossed);
            stop.at = Some(c.entered_at.clone());
            stop.passage = c.passage.clone();
            match record_of(snapshot, &gate_name, &c.passage) {
                Some(record) => {
                    stop.verification = Some(record.phase);
                    match record.phase {
                        VerificationPhase::Verifying => {
                            stop.progress = verification::progress(record);
                        }
                        VerificationPhase::Failed | VerificationPhase::Superseded => {
                            stop.reason = record.message.clone();
                        }
                        VerificationPhase::Verified => {}
                    }
                }
                None => {
                    stop.verification = match c.verified {
                        Some(true) => Some(VerificationPhase::Verified),
                        Some(false) => Some(VerificationPhase::Failed),
                        None => {
                            (!gate.spec.verify.is_empty()).then_some(VerificationPhase::Verifying)
                        }
                    };
                }
            }
        }
        None => {}
    }
    Some(stop)
}

/// The record a stop is drawn from.
enum Latest<'a> {
    Blocked(&'a GateCrossing),
    Unverified(&'a GateCrossing),
    Cleared(&'a GateCrossing),
    Entered(&'a GateOccupant),
}

/// The verification record of the Passage `passage` of `gate`, if it is still kept
/// and has one.
fn record_of<'a>(
    snapshot: &'a NamespaceSnapshot,
    gate: &str,
    passage: &str,
) -> Option<&'a VerificationStatus> {
    if passage.is_empty() {
        return None;
    }
    snapshot
        .passages_of(gate)
        .find(|p| p.metadata.name.as_deref() == Some(passage))?
        .status
        .as_ref()?
        .verification
        .as_ref()
}

/// The Gate's history entry of the crossing by `passage`, if it still keeps one.
fn occupant<'a>(gate: &'a Gate, passage: &str) -> Option<&'a GateOccupant> {
    if passage.is_empty() {
        return None;
    }
    gate.status
        .as_ref()?
        .history
        .iter()
        .find(|o| o.passage == passage)
}

/// `stop` as the failed (or aborted) crossing `entry` left it: aborted when its
/// Passage says so, else failed.
fn failed_at(snapshot: &NamespaceSnapshot, gate: &str, entry: &GateCrossing, stop: &mut TrackStop) {
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
