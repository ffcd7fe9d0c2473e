//! How well a namespace delivers — the four DORA figures — judged from the records
//! Explain already reads (DECISION 138): each Gate's finished Passages, the Bundles'
//! records of where they cleared and who approved them, the Gate's history and health.
//! The namespace's snapshot is the whole input: no request of its own.
//!
//! - A *crossing* is a finished Passage of the Gate (`Succeeded`, `Failed`,
//!   `Aborted`), at the time it finished; it belongs to the period when it finished
//!   inside it.
//! - A *deployment* is a crossing that entered the Gate. It is a *failed change* when
//!   its verification said no (its Passage's record, or `history[].verified: false`)
//!   or an older Bundle crossed right after it (a rollback); a failed or aborted
//!   crossing is one too.
//! - *Lead time* runs from the commit — its committer time, where the Beacon recorded
//!   it (DECISION 140) — or else the Bundle's emission, to the deployment's end, in
//!   six parts that add up to it: emission (from the commit to the Bundle), upstream
//!   (until the Gates it comes after cleared it), approval, window (while every window
//!   was closed), queued (the rest of the wait) and steps.
//! - *Time to restore* runs from the first failed change after a success to the next
//!   crossing that succeeded (a run of failures is one failure); a Gate Degraded now
//!   with no failure open opens one at the time it turned Degraded.

use std::collections::HashMap;

use hecate_types::{Bundle, Gate, Health, Passage, PassagePhase, Time};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;

use super::eligibility::created_at;
use super::pipeline;
use super::snapshot::NamespaceSnapshot;
use super::{verification, version, window};
use crate::model::{
    ChangeFailureRate, DeliveredCrossing, Delivery, DeliveryOutcome, DeploymentFrequency,
    FailureCounts, Figures, GateDelivery, LeadTime, LeadTimeParts, PipelineDelivery, Reach,
    TimeToRestore,
};

/// The period figures cover when none is asked for: thirty days.
pub const DEFAULT_PERIOD: SignedDuration = SignedDuration::from_hours(30 * 24);
/// The longest period that may be asked for: ten years.
const MAX_PERIOD: SignedDuration = SignedDuration::from_hours(3660 * 24);
/// How many window edges are stepped over to measure a wait: beyond it, the rest of
/// the wait is counted as queued.
const MAX_WINDOW_EDGES: usize = 256;

/// The periods a schema may promise [`parse_period`] takes (it takes Go durations
/// too): days up to 999, weeks up to 99, hours up to 9999, minutes up to 99999 — all
/// within ten years; empty reads as the default.
pub const PERIOD_PATTERN: &str =
    "^$|^([1-9][0-9]{0,2}d|[1-9][0-9]?w|[1-9][0-9]{0,3}h|[1-9][0-9]{0,4}m)$";

/// The period asked for, if any (absent or empty: [`DEFAULT_PERIOD`]), as
/// [`parse_period`] reads it: what the API's and MCP's optional `since` mean.
pub fn period_or_default(text: Option<&str>) -> Result<SignedDuration, String> {
    match text.filter(|t| !t.is_empty()) {
        Some(text) => parse_period(text),
        None => Ok(DEFAULT_PERIOD),
    }
}

/// A period as people write it: `30d`, `2w`, or a Go duration (`12h`, `90m`); positive
/// and at most ten years.
pub fn parse_period(text: &str) -> Result<SignedDuration, String> {
    let text = text.trim();
    let days = |number: &str, per: i64| {
        number
            .parse::<i64>()
            .ok()
            .and_then(|n| n.checked_mul(per * 24))
            .and_then(SignedDuration::try_from_hours)
    };
    let period = if let Some(number) = text.strip_suffix('d') {
        days(number, 1)
    } else if let Some(number) = text.strip_suffix('w') {
        days(number, 7)
    } else {
        hecate_types::duration::parse(text).ok()
    };
    match period {
        Some(p) if p.is_positive() && p <= MAX_PERIOD => Ok(p),
        Some(_) => Err(format!(
            "{text:?} is not a period between a moment and ten years"
        )),
        None => Err(format!(
            "{text:?} is not a period: write days (30d), weeks (2w) or hours and minutes (12h, 90m)"
        )),
    }
}

/// The namespace's figures over `since`‥`now`: every Gate's, upstream first, or only
/// `only`'s (with no pipeline figures then). `None` when `only` names no Gate.
pub fn delivery(
    snapshot: &NamespaceSnapshot,
    only: Option<&str>,
    since: Timestamp,
    now: Timestamp,
) -> Option<Delivery> {
    let ordered = pipeline::upstream_first(snapshot.gates());
    if only.is_some_and(|name| !ordered.iter().any(|(g, _)| g.name_any() == name)) {
        return None;
    }
    let bundles: HashMap<String, &Bundle> = snapshot.bundles().map(|b| (b.name_any(), b)).collect();
    let judged: Vec<(Judged, usize)> = ordered
        .iter()
        .filter(|(gate, _)| only.is_none_or(|name| gate.name_any() == name))
        .map(|(gate, stage)| (judge_gate(snapshot, gate, &bundles, since), stage.index))
        .collect();
    let pipeline = if only.is_some() {
        None
    } else {
        last_stage(&ordered).map(|names| {
            let last: Vec<&Judged> = judged
                .iter()
                .filter(|(j, _)| names.contains(&j.gate))
                .map(|(j, _)| j)
                .collect();
            let reach = last
                .iter()
                .map(|j| j.reach.clone())
                .min_by_key(|r| r.from.0)
                .unwrap_or(Reach {
                    from: Time(since),
                    partial: false,
                    oldest_kept: None,
                });
            let crossings = last.iter().flat_map(|j| j.crossings.iter());
            let degraded: Vec<Timestamp> = last.iter().filter_map(|j| j.degraded).collect();
            let figures = figures(crossings, &degraded, &reach, now);
            PipelineDelivery {
                gates: names,
                reach,
                figures,
            }
        })
    };
    Some(Delivery {
        namespace: snapshot.namespace().to_string(),
        since: Time(since),
        until: Time(now),
        gates: judged
            .into_iter()
            .map(|(j, stage)| GateDelivery {
                figures: figures(j.crossings.iter(), j.degraded.as_slice(), &j.reach, now),
                crossings: j.crossings,
                gate: j.gate,
                stage,
                reach: j.reach,
            })
            .collect(),
        pipeline,
    })
}

/// The names of the Gates at the pipeline's last stage (those on a cycle aside).
fn last_stage(ordered: &[(&Gate, crate::model::Stage)]) -> Option<Vec<String>> {
    let last = ordered
        .iter()
        .filter(|(_, stage)| !stage.cycle)
        .map(|(_, stage)| stage.index)
        .max()?;
    Some(
        ordered
            .iter()
            .filter(|(_, stage)| !stage.cycle && stage.index == last)
            .map(|(gate, _)| gate.name_any())
            .collect(),
    )
}

/// One Gate's crossings of the period, judged, oldest first, with what they reach.
struct Judged {
    gate: String,
    reach: Reach,
    crossings: Vec<DeliveredCrossing>,
    /// When the Gate turned Degraded, if it is Degraded now.
    degraded: Option<Timestamp>,
}

fn judge_gate(
    snapshot: &NamespaceSnapshot,
    gate: &Gate,
    bundles: &HashMap<String, &Bundle>,
    since: Timestamp,
) -> Judged {
    let name = gate.name_any();
    // Oldest first, by when they finished. A crossing of some targets — a rollback
    // of some, a catch-up (DECISIONS 163, 164) — delivers nothing new: the figures
    // are the whole crossings', each finished when its last target was.
    let mut finished: Vec<(&Passage, Timestamp)> = snapshot
        .passages_of(&name)
        .filter(|p| p.is_terminal() && !p.spec.is_partial())
        .filter_map(|p| finished_at(p).map(|at| (p, at)))
        .collect();
    finished.sort_by(|a, b| {
        a.1.cmp(&b.1)
            .then_with(|| a.0.name_any().cmp(&b.0.name_any()))
    });
    let retain = gate.retained_passages();
    let oldest_kept = finished.first().map(|(_, at)| *at);
    let maybe_collected = retain.is_some_and(|keep| finished.len() >= keep);
    // Nothing to count before the first record: the Gate's creation, or an older
    // crossing of it still kept (a Gate re-created over its Passages).
    let mut start = since;
    if let Some(first) = created_at(gate).into_iter().chain(oldest_kept).min() {
        start = start.max(first);
    }
    let partial = maybe_collected && oldest_kept.is_some_and(|oldest| oldest > start);
    if partial {
        start = oldest_kept.unwrap_or(start);
    }
    let reach = Reach {
        from: Time(start),
        partial,
        oldest_kept: oldest_kept.map(Time),
    };
    let verified: HashMap<&str, Option<bool>> = gate
        .status
        .iter()
        .flat_map(|s| s.history.iter().chain(s.current.iter()))
        .map(|o| (o.passage.as_str(), o.verified))
        .collect();
    let mut crossings: Vec<DeliveredCrossing> = Vec::new();
    for (i, (passage, at)) in finished.iter().enumerate() {
        let bundle = bundles.get(&passage.spec.bundle).copied();
        let outcome = match passage.phase() {
            PassagePhase::Failed => DeliveryOutcome::Failed,
            PassagePhase::Aborted => DeliveryOutcome::Aborted,
            _ if verification::said_no(passage)
                || verified.get(passage.name_any().as_str()) == Some(&Some(false)) =>
            {
                DeliveryOutcome::Unverified
            }
            _ if rolled_back_after(&finished[i + 1..], bundle, bundles) => {
                DeliveryOutcome::RolledBack
            }
            _ => DeliveryOutcome::Succeeded,
        };
        if *at < start {
            continue;
        }
        let lead_time = outcome
            .deployed()
            .then(|| bundle.and_then(|b| lead_time(gate, b, passage, *at)))
            .flatten();
        crossings.push(DeliveredCrossing {
            passage: passage.name_any(),
            bundle: passage.spec.bundle.clone(),
            finished_at: Time(*at),
            outcome,
            lead_time,
        });
    }
    Judged {
        gate: name,
        reach,
        crossings,
        degraded: degraded_since(gate).map(|at| at.max(start)),
    }
}

/// When `passage` finished: its `finishedAt`, else when it started or was created.
fn finished_at(passage: &Passage) -> Option<Timestamp> {
    let status = passage.status.as_ref();
    status
        .and_then(|s| s.finished_at.as_ref().or(s.started_at.as_ref()))
        .map(|t| t.0)
        .or_else(|| created_at(passage))
}

/// Whether the next crossing into the Gate after this one (`later`, oldest first)
/// entered with a Bundle emitted before `bundle`: a rollback.
fn rolled_back_after(
    later: &[(&Passage, Timestamp)],
    bundle: Option<&Bundle>,
    bundles: &HashMap<String, &Bundle>,
) -> bool {
    let Some(next) = later
        .iter()
        .find(|(p, _)| p.phase() == PassagePhase::Succeeded)
    else {
        return false;
    };
    let emitted = |b: Option<&&Bundle>| b.and_then(|b| created_at(*b));
    match (
        bundle.and_then(created_at),
        emitted(bundles.get(&next.0.spec.bundle)),
    ) {
        (Some(this), Some(next)) => next < this,
        _ => false,
    }
}

/// When the Gate turned Degraded, if it is Degraded now.
fn degraded_since(gate: &Gate) -> Option<Timestamp> {
    let health = gate.status.as_ref()?.health.as_ref()?;
    (health.status == Health::Degraded).then(|| health.since.as_ref().map(|t| t.0))?
}

/// `bundle`'s lead time into `gate` by `passage`, which finished at `end`, in parts;
/// `None` when the Bundle's emission is not known. It starts at the commit where the
/// Beacon recorded its time (the Bundle's first commit artifact's, as
/// [`version::name`] reads it), never after the emission.
fn lead_time(
    gate: &Gate,
    bundle: &Bundle,
    passage: &Passage,
    end: Timestamp,
) -> Option<LeadTimeParts> {
    let emitted = created_at(bundle)?.min(end);
    let committed = version::name(bundle)
        .committed_at
        .map_or(emitted, |t| t.0.min(emitted));
    let gate_name = gate.name_any();
    let status = bundle.status.as_ref();
    let admission = gate
        .spec
        .admits
        .iter()
        .find(|a| a.from.beacon == bundle.spec.beacon);
    // Each instant is clamped between the one before and the end: the parts never
    // overlap and always add up to the whole.
    let clamp = |t: Option<Timestamp>, after: Timestamp| t.unwrap_or(after).clamp(after, end);
    let upstream = clamp(
        admission.and_then(|a| {
            a.after
                .iter()
                .filter_map(|upstream| {
                    status?
                        .cleared
                        .iter()
                        .filter(|c| &c.gate == upstream)
                        .map(|c| c.at.0)
                        .min()
                })
                .max()
        }),
        emitted,
    );
    let asks_approval = admission.is_some_and(|a| a.require_approval || a.approvals.is_some());
    let approved = clamp(
        asks_approval
            .then(|| {
                status?
                    .approved_for
                    .iter()
                    .filter(|a| a.gate == gate_name)
                    .map(|a| a.at.0)
                    .max()
            })
            .flatten(),
        upstream,
    );
    let opened = clamp(created_at(passage), approved);
    let started = clamp(
        passage
            .status
            .as_ref()
            .and_then(|s| s.started_at.as_ref())
            .map(|t| t.0),
        opened,
    );
    let window = closed_between(&gate.spec.windows, approved, opened);
    Some(LeadTimeParts {
        emission_seconds: seconds(emitted.duration_since(committed)),
        upstream_seconds: seconds(upstream.duration_since(emitted)),
        approval_seconds: seconds(approved.duration_since(upstream)),
        window_seconds: seconds(window),
        queued_seconds: seconds(started.duration_since(approved)).saturating_sub(seconds(window)),
        steps_seconds: seconds(end.duration_since(started)),
    })
}

/// How long, between `from` and `to`, crossings could not start because of
/// `windows`.
fn closed_between(
    windows: &[hecate_types::Window],
    from: Timestamp,
    to: Timestamp,
) -> SignedDuration {
    if windows.is_empty() {
        return SignedDuration::ZERO;
    }
    let mut closed = SignedDuration::ZERO;
    let mut t = from;
    for _ in 0..MAX_WINDOW_EDGES {
        if t >= to {
            break;
        }
        let judged = window::judge(windows, t);
        let next = judged.next_change.map_or(to, |n| n.clamp(t, to));
        if !judged.allowed {
            closed += next.duration_since(t);
        }
        if next <= t {
            break;
        }
        t = next;
    }
    closed
}

/// Whole seconds of a duration, never negative.
fn seconds(d: SignedDuration) -> u64 {
    u64::try_from(d.as_secs()).unwrap_or(0)
}

/// How many crossings figures rest on before they read as rates: fewer, and a rate per
/// week or a failure rate is one or two events extrapolated.
pub const SETTLED: usize = 10;

/// What to make of figures over `crossings` finished crossings, in words.
pub(crate) fn caution(crossings: usize) -> String {
    match crossings {
        0 => String::new(),
        n if n < SETTLED => format!(
            "from only {n} crossing{}: a hint, not yet a rate (the figures settle from {SETTLED})",
            if n == 1 { "" } else { "s" }
        ),
        _ => String::new(),
    }
}

/// The four figures over `crossings` (one Gate's, or several Gates' together), with
/// when those Gates turned Degraded if they are now.
fn figures<'a>(
    crossings: impl Iterator<Item = &'a DeliveredCrossing>,
    degraded: &[Timestamp],
    reach: &Reach,
    now: Timestamp,
) -> Figures {
    let mut crossings: Vec<&DeliveredCrossing> = crossings.collect();
    crossings.sort_by_key(|c| c.finished_at.0);

    let mut leads: Vec<u64> = Vec::new();
    let mut parts = LeadTimeParts::default();
    for crossing in &crossings {
        if let Some(p) = crossing.lead_time {
            leads.push(p.total());
            parts = parts.plus(p);
        }
    }
    leads.sort_unstable();

    let deployments = crossings.iter().filter(|c| c.outcome.deployed()).count();
    let days = (now.duration_since(reach.from.0).as_secs_f64() / 86_400.0).max(1.0);

    let mut by = FailureCounts::default();
    for crossing in &crossings {
        match crossing.outcome {
            DeliveryOutcome::Succeeded => {}
            DeliveryOutcome::Failed => by.failed += 1,
            DeliveryOutcome::Aborted => by.aborted += 1,
            DeliveryOutcome::Unverified => by.unverified += 1,
            DeliveryOutcome::RolledBack => by.rolled_back += 1,
        }
    }
    let failed = by.failed + by.aborted + by.unverified + by.rolled_back;

    Figures {
        lead_time: LeadTime {
            crossings: leads.len(),
            median_seconds: percentile(&leads, 50),
            p90_seconds: percentile(&leads, 90),
            parts,
        },
        deployment_frequency: DeploymentFrequency {
            crossings: deployments,
            days: (days * 100.0).round() / 100.0,
            per_day: round2(deployments as f64 / days),
            per_week: round2(deployments as f64 * 7.0 / days),
        },
        change_failure_rate: ChangeFailureRate {
            crossings: crossings.len(),
            failed,
            rate: (!crossings.is_empty()).then(|| round2(failed as f64 / crossings.len() as f64)),
            by,
        },
        time_to_restore: restores(&crossings, degraded),
        caution: caution(crossings.len()),
    }
}

/// Failures (runs of failed changes, and a Gate Degraded now) and their restores.
fn restores(crossings: &[&DeliveredCrossing], degraded: &[Timestamp]) -> TimeToRestore {
    let mut open: Option<Timestamp> = None;
    let mut failures = 0;
    let mut durations: Vec<u64> = Vec::new();
    for crossing in crossings {
        let at = crossing.finished_at.0;
        if crossing.outcome.is_failure() {
            if open.is_none() {
                failures += 1;
                open = Some(at);
            }
        } else if let Some(began) = open.take() {
            durations.push(seconds(at.duration_since(began)));
        }
    }
    // Degraded now, and no failed change open: a failure of its own, since then.
    if open.is_none()
        && let Some(since) = degraded.iter().min()
    {
        failures += 1;
        open = Some(*since);
    }
    durations.sort_unstable();
    TimeToRestore {
        failures,
        restored: durations.len(),
        median_seconds: percentile(&durations, 50),
        longest_seconds: durations.last().copied(),
        open_since: open.map(Time),
    }
}

/// The `p`th percentile of sorted `values`, by nearest rank.
fn percentile(sorted: &[u64], p: usize) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
