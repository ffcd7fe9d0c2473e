//! Delivery figures (issue 35, DECISION 138) over fixed histories: each figure, the
//! parts of a lead time, the outcomes a crossing counts as, the period's edges.

use hecate_types::{
    BundleApproval, Gate, GateCrossing, GateOccupant, GateStatus, Health, Passage, PassagePhase,
    Time,
};
use jiff::{SignedDuration, Timestamp};
use pretty_assertions::assert_eq;

use crate::model::{
    DeliveryOutcome::{self, *},
    FailureCounts, LeadTimeParts,
};
use crate::rules::delivery::{DEFAULT_PERIOD, delivery, parse_period, period_or_default};
use crate::rules::fixtures::*;
use crate::rules::snapshot::NamespaceSnapshot;

fn after(name: &str, upstream: &[&str]) -> Gate {
    let mut gate = gate(name);
    gate.spec.admits = vec![admits("app", upstream)];
    gate
}

/// A finished crossing of `production` named `name`, opened, started and finished
/// the given minutes after T0.
fn crossing(
    name: &str,
    bundle: &str,
    phase: PassagePhase,
    [opened, started, finished]: [i64; 3],
) -> Passage {
    let mut passage = passage("production", bundle, Some(phase), opened);
    passage.metadata.name = Some(name.into());
    let status = passage.status.get_or_insert_with(Default::default);
    status.started_at = Some(minutes(t0(), started));
    status.finished_at = Some(minutes(t0(), finished));
    passage
}

fn mins(m: u64) -> u64 {
    m * 60
}

/// A day after T0: every fixture's Gate was created at T0, so the figures reach one
/// day.
fn now() -> Timestamp {
    t0() + SignedDuration::from_hours(24)
}

fn since() -> Timestamp {
    t0() - SignedDuration::from_hours(30 * 24)
}

#[test]
fn a_lead_time_is_split_into_upstream_approval_window_queued_and_steps() {
    // Emitted at 12:00; staging cleared it at 12:30; production asks for an approval,
    // given at 12:50, and opens only in a window from 13:00; the crossing was opened at
    // 13:10, started at 13:11 and finished at 13:20.
    let mut production = after("production", &["staging"]);
    production.spec.admits[0].require_approval = true;
    production.spec.windows = vec![window("0 13 * * *", "1h")];
    let mut b1 = bundle("b1", 0);
    let status = b1.status.get_or_insert_with(Default::default);
    status.cleared.push(GateCrossing {
        gate: "staging".into(),
        passage: "staging-b1".into(),
        at: minutes(t0(), 30),
        actor: String::new(),
        reason: String::new(),
    });
    status.approved_for.push(BundleApproval {
        gate: "production".into(),
        actor: "carol".into(),
        at: minutes(t0(), 50),
    });
    let snapshot = NamespaceSnapshot::new(
        NS,
        vec![after("staging", &[]), production],
        vec![b1],
        vec![crossing("p1", "b1", PassagePhase::Succeeded, [70, 71, 80])],
    );
    let figures = delivery(&snapshot, Some("production"), since(), now()).unwrap();
    let production = &figures.gates[0];
    let parts = LeadTimeParts {
        emission_seconds: 0,
        upstream_seconds: mins(30),
        approval_seconds: mins(20),
        // Approved at 12:50, the window opened at 13:00.
        window_seconds: mins(10),
        // 13:00 to the start at 13:11.
        queued_seconds: mins(11),
        steps_seconds: mins(9),
    };
    assert_eq!(production.crossings[0].lead_time, Some(parts));
    assert_eq!(parts.total(), mins(80));
    let lead = &production.figures.lead_time;
    assert_eq!(
        (
            lead.crossings,
            lead.median_seconds,
            lead.p90_seconds,
            lead.parts
        ),
        (1, Some(mins(80)), Some(mins(80)), parts)
    );
    // One Gate asked for: no pipeline figures.
    assert_eq!(figures.pipeline, None);
}

#[test]
fn a_lead_time_starts_at_the_commit_where_the_beacon_recorded_it() {
    // Committed 25 minutes before the Bundle was emitted (DECISION 140): the emission
    // is a part of its own. A commit time after the emission (a skewed clock) counts
    // as the emission.
    let committed = |at: i64| {
        let mut bundle = bundle("b1", 0);
        bundle.spec.artifacts = vec![hecate_types::Artifact {
            commit: Some(hecate_types::CommitArtifact {
                repo: "https://git.example/app".into(),
                sha: "a".repeat(40),
                committed_at: Some(minutes(t0(), at)),
                ..hecate_types::CommitArtifact::default()
            }),
            ..hecate_types::Artifact::default()
        }];
        bundle
    };
    for (at, emission) in [(-25, mins(25)), (5, 0)] {
        let snapshot = NamespaceSnapshot::new(
            NS,
            vec![after("production", &[])],
            vec![committed(at)],
            vec![crossing("p1", "b1", PassagePhase::Succeeded, [60, 60, 65])],
        );
        let figures = delivery(&snapshot, None, since(), now()).unwrap();
        let parts = LeadTimeParts {
            emission_seconds: emission,
            queued_seconds: mins(60),
            steps_seconds: mins(5),
            ..LeadTimeParts::default()
        };
        assert_eq!(figures.gates[0].crossings[0].lead_time, Some(parts), "{at}");
        assert_eq!(
            figures.gates[0].figures.lead_time.median_seconds,
            Some(mins(65) + emission)
        );
    }
}

#[test]
fn without_an_upstream_an_approval_or_a_window_the_wait_is_queued() {
    // Upstream, approval and window records that the Gate does not ask for count
    // nothing: a manual Gate's wait for someone to promote is queued.
    let mut b1 = bundle("b1", 0);
    b1.status
        .get_or_insert_with(Default::default)
        .approved_for
        .push(BundleApproval {
            gate: "production".into(),
            actor: "carol".into(),
            at: minutes(t0(), 50),
        });
    let snapshot = NamespaceSnapshot::new(
        NS,
        vec![after("production", &[])],
        vec![b1],
        vec![crossing("p1", "b1", PassagePhase::Succeeded, [60, 60, 65])],
    );
    let figures = delivery(&snapshot, None, since(), now()).unwrap();
    assert_eq!(
        figures.gates[0].crossings[0].lead_time,
        Some(LeadTimeParts {
            queued_seconds: mins(60),
            steps_seconds: mins(5),
            ..LeadTimeParts::default()
        })
    );
}

/// Production's history: b1 crossed; b2 failed, then was aborted; b3 crossed; b4
/// crossed and b3 came back after it (a rollback); b4 crossed again and its
/// verification said no.
fn history() -> NamespaceSnapshot {
    let mut production = after("production", &[]);
    production.status = Some(GateStatus {
        history: vec![GateOccupant {
            bundle: "b4".into(),
            digest: String::new(),
            passage: "x7".into(),
            entered_at: minutes(t0(), 160),
            actor: String::new(),
            verified: Some(false),
        }],
        ..GateStatus::default()
    });
    let bundles = (1..=4).map(|i| bundle(&format!("b{i}"), i * 10)).collect();
    use PassagePhase::{Aborted as A, Failed as F, Succeeded as S};
    let passages = [
        ("x1", "b1", S, 100),
        ("x2", "b2", F, 110),
        ("x3", "b2", A, 120),
        ("x4", "b3", S, 130),
        ("x5", "b4", S, 140),
        ("x6", "b3", S, 150),
        ("x7", "b4", S, 160),
    ]
    .into_iter()
    .map(|(name, bundle, phase, at)| crossing(name, bundle, phase, [at - 5, at - 5, at]))
    .collect();
    NamespaceSnapshot::new(NS, vec![production], bundles, passages)
}

#[test]
fn each_crossing_counts_as_what_became_of_it() {
    let figures = delivery(&history(), None, since(), now()).unwrap();
    let outcomes: Vec<(&str, DeliveryOutcome)> = figures.gates[0]
        .crossings
        .iter()
        .map(|c| (c.passage.as_str(), c.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("x1", Succeeded),
            ("x2", Failed),
            ("x3", Aborted),
            ("x4", Succeeded),
            ("x5", RolledBack),
            ("x6", Succeeded),
            ("x7", Unverified),
        ]
    );
    // Only what entered the Gate has a lead time: b1 emitted at +10, crossed at +100.
    let leads: Vec<Option<u64>> = figures.gates[0]
        .crossings
        .iter()
        .map(|c| c.lead_time.map(|p| p.total()))
        .collect();
    assert_eq!(
        leads,
        [
            Some(mins(90)),
            None,
            None,
            Some(mins(100)),
            Some(mins(100)),
            Some(mins(120)),
            Some(mins(120)),
        ]
    );
}

/// A crossing of some targets — a catch-up of b4, a rollback of one target to b3 —
/// delivers nothing new and undoes no release (DECISIONS 163, 164): the figures are
/// the whole crossings', and b4's stays what it was.
#[test]
fn crossings_of_some_targets_are_not_counted() {
    let (gates, bundles, mut passages) = history().into_parts();
    let mut some = |name: &str, bundle: &str, at: i64| {
        let mut p = crossing(name, bundle, PassagePhase::Succeeded, [at - 5, at - 5, at]);
        p.spec.targets = vec!["eu-2".into()];
        passages.push(p);
    };
    some("x8", "b4", 170);
    some("x9", "b3", 180);
    let snapshot = NamespaceSnapshot::new(NS, gates, bundles, passages);
    let figures = delivery(&snapshot, None, since(), now()).unwrap();
    let outcomes: Vec<(&str, DeliveryOutcome)> = figures.gates[0]
        .crossings
        .iter()
        .map(|c| (c.passage.as_str(), c.outcome))
        .collect();
    let whole = delivery(&history(), None, since(), now()).unwrap();
    let before: Vec<(&str, DeliveryOutcome)> = whole.gates[0]
        .crossings
        .iter()
        .map(|c| (c.passage.as_str(), c.outcome))
        .collect();
    assert_eq!(outcomes, before);
    assert_eq!(figures.gates[0].crossings.len(), 7);
}

/// A crossing whose Passage records a "no" counts as unverified even once the Gate's
/// history no longer holds it (DECISION 139).
#[test]
fn a_no_on_the_passage_is_an_unverified_crossing() {
    let mut snapshot_parts = history();
    let mut production = snapshot_parts
        .gate("production")
        .cloned()
        .expect("production");
    production.status = None;
    let passages: Vec<Passage> = snapshot_parts
        .passages_of("production")
        .cloned()
        .map(|mut p| {
            if p.metadata.name.as_deref() == Some("x7") {
                let mut gate = production.clone();
                gate.spec.verify = vec![hecate_types::Verification {
                    uses: "http".into(),
                    with: None,
                }];
                let mut record = crate::rules::verification::begin(&gate, t0());
                record.phase = hecate_types::VerificationPhase::Failed;
                p.status.get_or_insert_with(Default::default).verification = Some(record);
            }
            p
        })
        .collect();
    let bundles = snapshot_parts.bundles().cloned().collect();
    snapshot_parts = NamespaceSnapshot::new(NS, vec![production], bundles, passages);
    let figures = delivery(&snapshot_parts, None, since(), now()).unwrap();
    let x7 = figures.gates[0]
        .crossings
        .iter()
        .find(|c| c.passage == "x7")
        .expect("x7");
    assert_eq!(x7.outcome, Unverified);
}

#[test]
fn the_four_figures_of_a_history() {
    let figures = delivery(&history(), None, since(), now()).unwrap();
    let gate = &figures.gates[0].figures;
    // Lead times 90, 100, 100, 120, 120 minutes: the median is the third, the 90th
    // percentile the fifth (nearest rank).
    assert_eq!(
        (
            gate.lead_time.crossings,
            gate.lead_time.median_seconds,
            gate.lead_time.p90_seconds
        ),
        (5, Some(mins(100)), Some(mins(120)))
    );
    // Five deployments over the one day the Gate has existed.
    let frequency = &gate.deployment_frequency;
    assert_eq!(
        (
            frequency.crossings,
            frequency.days,
            frequency.per_day,
            frequency.per_week
        ),
        (5, 1.0, 5.0, 35.0)
    );
    // Four failed changes of seven crossings, one of each kind.
    let rate = &gate.change_failure_rate;
    assert_eq!(
        (rate.crossings, rate.failed, rate.rate, rate.by),
        (
            7,
            4,
            Some(0.57),
            FailureCounts {
                failed: 1,
                aborted: 1,
                unverified: 1,
                rolled_back: 1,
            }
        )
    );
    // Three failures: x2 and x3 together (restored by x4 20 minutes after x2), x5
    // (restored by x6 after 10), x7 (still open).
    let restore = &gate.time_to_restore;
    assert_eq!(
        (
            restore.failures,
            restore.restored,
            restore.median_seconds,
            restore.longest_seconds,
            restore.open_since.clone()
        ),
        (
            3,
            2,
            Some(mins(10)),
            Some(mins(20)),
            Some(minutes(t0(), 160))
        )
    );
    // The pipeline's last stage is production alone: the same figures.
    let pipeline = figures.pipeline.unwrap();
    assert_eq!(pipeline.gates, ["production"]);
    assert_eq!(&pipeline.figures, gate);
}

#[test]
fn a_crossing_belongs_to_the_period_it_finished_in() {
    // From +125: x1..x3 finished before; x5 is still rolled back by x6, which is in.
    let since = t0() + SignedDuration::from_mins(125);
    let figures = delivery(&history(), None, since, now()).unwrap();
    let gate = &figures.gates[0];
    let names: Vec<&str> = gate.crossings.iter().map(|c| c.passage.as_str()).collect();
    assert_eq!(names, ["x4", "x5", "x6", "x7"]);
    assert_eq!(gate.reach.from, Time(since));
    assert!(!gate.reach.partial);
    assert_eq!(gate.figures.change_failure_rate.crossings, 4);
    assert_eq!(gate.figures.time_to_restore.failures, 2);
}

#[test]
fn figures_reach_back_only_as_far_as_the_kept_crossings_when_older_may_be_gone() {
    // The Gate keeps 7 finished Passages and holds 7: older ones may have been
    // collected, so the figures start at the oldest kept.
    let mut snapshot = history();
    let (mut gates, bundles, passages) = snapshot.into_parts();
    gates[0].spec.retain = Some(7);
    snapshot = NamespaceSnapshot::new(NS, gates.clone(), bundles.clone(), passages.clone());
    let reach = &delivery(&snapshot, None, since(), now()).unwrap().gates[0].reach;
    assert!(reach.partial);
    assert_eq!(reach.from, minutes(t0(), 100));
    assert_eq!(reach.oldest_kept, Some(minutes(t0(), 100)));
    // Keeping more than it holds, or all (0): nothing was collected.
    for retain in [8, 0] {
        gates[0].spec.retain = Some(retain);
        let snapshot = NamespaceSnapshot::new(NS, gates.clone(), bundles.clone(), passages.clone());
        let reach = &delivery(&snapshot, None, since(), now()).unwrap().gates[0].reach;
        assert!(!reach.partial, "retain {retain}");
        // The Gate was created at T0: before that there was nothing to count.
        assert_eq!(reach.from, Time(t0()), "retain {retain}");
    }
}

#[test]
fn a_degraded_gate_is_a_failure_open_since_it_turned() {
    let mut production = with_health(after("production", &[]), Health::Degraded, &["down"]);
    if let Some(health) = production.status.as_mut().and_then(|s| s.health.as_mut()) {
        health.since = Some(minutes(t0(), 200));
    }
    let snapshot = NamespaceSnapshot::new(
        NS,
        vec![production],
        vec![bundle("b1", 0)],
        vec![crossing("x1", "b1", PassagePhase::Succeeded, [5, 5, 10])],
    );
    let figures = delivery(&snapshot, None, since(), now()).unwrap();
    let restore = &figures.gates[0].figures.time_to_restore;
    assert_eq!(
        (
            restore.failures,
            restore.restored,
            restore.open_since.clone()
        ),
        (1, 0, Some(minutes(t0(), 200)))
    );
    // Health is not a crossing: the change failure rate does not count it.
    assert_eq!(figures.gates[0].figures.change_failure_rate.failed, 0);
}

#[test]
fn the_pipeline_is_its_last_stage_and_a_gate_asked_for_must_exist() {
    let snapshot = NamespaceSnapshot::new(
        NS,
        vec![
            after("production", &["staging"]),
            after("dev", &[]),
            after("staging", &["dev"]),
        ],
        vec![],
        vec![],
    );
    let figures = delivery(&snapshot, None, since(), now()).unwrap();
    let names: Vec<&str> = figures.gates.iter().map(|g| g.gate.as_str()).collect();
    assert_eq!(names, ["dev", "staging", "production"]);
    let pipeline = figures.pipeline.unwrap();
    assert_eq!(pipeline.gates, ["production"]);
    // Nothing crossed: figures resting on nothing say so.
    assert_eq!(pipeline.figures.lead_time.median_seconds, None);
    assert_eq!(pipeline.figures.change_failure_rate.rate, None);
    assert_eq!(pipeline.figures.deployment_frequency.per_day, 0.0);
    assert!(delivery(&snapshot, Some("qa"), since(), now()).is_none());
}

#[test]
fn periods_are_days_weeks_or_go_durations() {
    let hours = |h: i64| Ok(SignedDuration::from_hours(h));
    assert_eq!(parse_period("30d"), hours(720));
    assert_eq!(parse_period("2w"), hours(336));
    assert_eq!(parse_period("12h"), hours(12));
    assert_eq!(parse_period("90m"), Ok(SignedDuration::from_mins(90)));
    for bad in ["0d", "-1d", "1.5d", "d", "abc", "4000d", ""] {
        assert!(parse_period(bad).is_err(), "{bad}");
    }
    // Absent or empty is the default; anything else is read as above.
    assert_eq!(period_or_default(None), Ok(DEFAULT_PERIOD));
    assert_eq!(period_or_default(Some("")), Ok(DEFAULT_PERIOD));
    assert_eq!(period_or_default(Some("2w")), hours(336));
    assert!(period_or_default(Some("forever")).is_err());
    // The largest of each unit the API's schema promises (PERIOD_PATTERN) is taken.
    for largest in ["999d", "99w", "9999h", "99999m", "1m"] {
        assert!(parse_period(largest).is_ok(), "{largest}");
    }
}

#[test]
fn figures_from_few_crossings_say_so() {
    use crate::rules::delivery::{SETTLED, caution};
    assert_eq!(caution(0), "");
    assert_eq!(
        caution(1),
        "from only 1 crossing: a hint, not yet a rate (the figures settle from 10)"
    );
    assert!(caution(2).starts_with("from only 2 crossings:"));
    assert_eq!(caution(SETTLED), "");
}
