//! Overview: every visible Gate at a glance, with totals, two weeks of activity and
//! each namespace's timeline of recent Bundles.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use hecate_types::{Gate, Health, PassagePhase};
use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan as _};
use kube::ResourceExt as _;

use super::attention::{self, Pending};
use super::explain::explain;
use super::pipeline;
use super::snapshot::NamespaceSnapshot;
use super::timeline::timeline;
use crate::model::{Day, Explanation, GateSummary, NamespaceOverview, Overview, Totals};

/// How many days of activity an Overview carries.
pub const ACTIVITY_DAYS: i32 = 14;

/// Summarises `snapshots` (the visible namespaces, each with at least one Gate) at
/// `now`.
pub fn overview<'a>(
    snapshots: impl IntoIterator<Item = &'a NamespaceSnapshot>,
    now: Timestamp,
) -> Overview {
    overview_with(snapshots, now, |snapshot, gate| {
        Arc::new(explain(snapshot, gate, now))
    })
}

/// [`overview`], taking each Gate's explanation from `explained` — a server's
/// remembered ones, which must be what [`explain`] answers at `now`.
pub fn overview_with<'a>(
    snapshots: impl IntoIterator<Item = &'a NamespaceSnapshot>,
    now: Timestamp,
    mut explained: impl FnMut(&NamespaceSnapshot, &Gate) -> Arc<Explanation>,
) -> Overview {
    let parts: Vec<NamespacePart> = snapshots
        .into_iter()
        .filter_map(|snapshot| namespace_part(snapshot, |gate| explained(snapshot, gate)))
        .collect();
    assemble(&parts, now)
}

/// One namespace's share of an Overview: its Gates, totals and timeline, and its
/// crossings and failures counted per UTC day. Everything in it follows from the
/// snapshot and the Gates' explanations alone, so a server may keep it for as long as
/// they stand (`hecate_ops::Cache` does); only which days an Overview shows depends on
/// the clock, and [`assemble`] picks them — so putting 200 namespaces' shares together
/// costs 200 pointer copies and 14 lookups each, not a walk of every history
/// (docs/DECISIONS.md 136).
#[derive(Clone, Debug, PartialEq)]
pub struct NamespacePart {
    /// The namespace's Gates, totals and timeline, as the Overview carries them.
    pub overview: Arc<NamespaceOverview>,
    /// Per UTC day: crossings landed (a Gate's history) and Passages failed.
    days: BTreeMap<Date, (usize, usize)>,
    /// What waits on a person here, judged at the Overview's instant.
    pending: Pending,
}

/// `snapshot`'s share of an Overview, each Gate explained by `explained`; `None` when
/// the namespace holds no Gate.
pub fn namespace_part(
    snapshot: &NamespaceSnapshot,
    mut explained: impl FnMut(&Gate) -> Arc<Explanation>,
) -> Option<NamespacePart> {
    let mut days: BTreeMap<Date, (usize, usize)> = BTreeMap::new();
    let mut count = |at: Timestamp, crossed: bool| {
        let day = days.entry(at.to_zoned(TimeZone::UTC).date()).or_default();
        if crossed { day.0 += 1 } else { day.1 += 1 }
    };
    let mut mine = Totals::default();
    let mut running: HashMap<&str, String> = HashMap::new();
    // Oldest first, so that of several active Passages of a Gate the newest is the
    // one named.
    for passage in snapshot.passages().rev() {
        match passage.phase() {
            PassagePhase::Pending | PassagePhase::Running => {
                running.insert(passage.spec.gate.as_str(), passage.name_any());
                mine.running += 1;
            }
            PassagePhase::Failed => {
                mine.failed += 1;
                if let Some(finished) = passage.status.as_ref().and_then(|s| s.finished_at.as_ref())
                {
                    count(finished.0, false);
                }
            }
            PassagePhase::Succeeded | PassagePhase::Aborted => {}
        }
    }
    let mut gates = Vec::new();
    let mut explanations = Vec::new();
    for (gate, stage) in pipeline::upstream_first(snapshot.gates()) {
        let status = gate.status.as_ref();
        for entry in status.map(|s| s.history.as_slice()).unwrap_or_default() {
            count(entry.entered_at.0, true);
        }
        let report = status.and_then(|s| s.health.as_ref());
        let health = report.map_or(Health::Unknown, |h| h.status);
        let explanation = explained(gate);
        let summary = GateSummary {
            name: gate.name_any(),
            stage,
            state: explanation.state,
            summary: explanation.summary.clone(),
            blockers: explanation.blockers.clone(),
            health,
            issues: report.map(|h| h.issues.clone()).unwrap_or_default(),
            current: gate.current_bundle().map(str::to_string),
            eligible: explanation.eligible.len(),
            ahead: explanation.ahead,
            running: running.get(gate.name_any().as_str()).cloned(),
            suspended: gate.spec.suspend,
            auto: gate.spec.auto,
            admits: gate.spec.admits.clone(),
        };
        mine.gates += 1;
        mine.eligible += summary.eligible;
        mine.ahead += summary.ahead;
        mine.suspended += usize::from(summary.suspended);
        match health {
            Health::Healthy => mine.healthy += 1,
            Health::Progressing => mine.progressing += 1,
            Health::Degraded => mine.degraded += 1,
            Health::Unknown | Health::NotApplicable => mine.unknown += 1,
        }
        gates.push(summary);
        explanations.push((gate, explanation));
    }
    if gates.is_empty() {
        return None;
    }
    let pending = Pending::gather(
        snapshot,
        explanations.iter().map(|(gate, x)| (*gate, x.as_ref())),
    );
    Some(NamespacePart {
        overview: Arc::new(NamespaceOverview {
            namespace: snapshot.namespace().to_string(),
            gates,
            totals: mine,
            timeline: timeline(snapshot),
        }),
        days,
        pending,
    })
}

/// The Overview of `parts` (namespaces by name, as given) at `now`: their totals
/// summed, and their crossings and failures counted per UTC day over the last
/// [`ACTIVITY_DAYS`].
pub fn assemble<'a>(
    parts: impl IntoIterator<Item = &'a NamespacePart>,
    now: Timestamp,
) -> Overview {
    let today = now.to_zoned(TimeZone::UTC).date();
    let first_day = today
        .checked_sub((ACTIVITY_DAYS - 1).days())
        .unwrap_or(today);
    let dates: Vec<Date> = (0..ACTIVITY_DAYS)
        .map(|i| first_day.checked_add(i.days()).unwrap_or(today))
        .collect();
    let mut activity: Vec<Day> = dates
        .iter()
        .map(|date| Day {
            date: date.to_string(),
            crossed: 0,
            failed: 0,
        })
        .collect();
    let mut totals = Totals::default();
    let mut namespaces = Vec::new();
    let mut waiting = Vec::new();
    for part in parts {
        waiting.extend(part.pending.at(now));
        for (day, date) in activity.iter_mut().zip(&dates) {
            if let Some(&(crossed, failed)) = part.days.get(date) {
                day.crossed += crossed;
                day.failed += failed;
            }
        }
        totals.add(&part.overview.totals);
        namespaces.push(part.overview.clone());
    }
    attention::sort(&mut waiting);
    Overview {
        namespaces,
        totals,
        activity,
        attention: waiting,
    }
}

impl Totals {
    /// Adds one namespace's counts.
    fn add(&mut self, other: &Self) {
        self.gates += other.gates;
        self.healthy += other.healthy;
        self.progressing += other.progressing;
        self.degraded += other.degraded;
        self.unknown += other.unknown;
        self.suspended += other.suspended;
        self.eligible += other.eligible;
        self.ahead += other.ahead;
        self.running += other.running;
        self.failed += other.failed;
    }
}
