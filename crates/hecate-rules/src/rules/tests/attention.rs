//! What waits on a person (DECISION 141): the Overview's list, judged from Explain and,
//! for a crossing that runs too long, from the clock.

use hecate_types::{PassagePhase::*, StepPhase, Time};
use jiff::{SignedDuration, Timestamp};
use pretty_assertions::assert_eq;

use crate::model::{AttentionKind, Overview, Remedy};
use crate::rules::fixtures::*;
use crate::rules::overview::overview;
use crate::rules::snapshot::NamespaceSnapshot;

fn at_time(
    gates: Vec<hecate_types::Gate>,
    bundles: Vec<hecate_types::Bundle>,
    passages: Vec<hecate_types::Passage>,
    now: Timestamp,
) -> Overview {
    let snapshots = NamespaceSnapshot::by_namespace(gates, bundles, passages);
    overview(&snapshots, now)
}

fn kinds(o: &Overview) -> Vec<(AttentionKind, &str)> {
    o.attention
        .iter()
        .map(|a| (a.kind, a.gate.as_str()))
        .collect()
}

fn needing_approval(mut gate: hecate_types::Gate) -> hecate_types::Gate {
    gate.spec.admits[0].require_approval = true;
    gate
}

/// A Passage that ran from `start` to `end` minutes after T0.
fn ran(gate: &str, bundle: &str, start: i64, end: i64) -> hecate_types::Passage {
    let mut p = passage(gate, bundle, Some(Succeeded), start);
    let status = p.status.get_or_insert_with(Default::default);
    status.started_at = Some(minutes(t0(), start));
    status.finished_at = Some(minutes(t0(), end));
    p
}

/// A Passage running since `start` minutes after T0, its first step with `timeout`.
fn running_since(gate: &str, bundle: &str, start: i64, timeout: &str) -> hecate_types::Passage {
    let mut p = with_steps(
        passage(gate, bundle, Some(Running), start),
        &[("flux-wait", StepPhase::Running, "", "")],
    );
    p.spec.steps[0].timeout = timeout.into();
    let status = p.status.get_or_insert_with(Default::default);
    status.started_at = Some(minutes(t0(), start));
    status.steps[0].started_at = Some(minutes(t0(), start));
    p
}

#[test]
fn a_bundle_waiting_for_an_approval_is_on_the_overview_with_whom_it_waits_for() {
    let o = at_time(
        vec![with_current(needing_approval(gate("production")), "b1")],
        vec![bundle("b2", 5), bundle("b1", 0)],
        vec![],
        t0(),
    );
    assert_eq!(kinds(&o), [(AttentionKind::Approval, "production")]);
    let a = &o.attention[0];
    assert_eq!(a.bundle.as_deref(), Some("b2"));
    // Its words name it as people know it: its version (here derived from its
    // image's tag, as it has no alias), never its hash.
    assert!(a.detail.starts_with("1.0.0: "), "{}", a.detail);
    assert_eq!(a.since, Some(minutes(t0(), 5)));
    assert!(matches!(
        &a.action,
        Some(Remedy::Approve { gate, bundle, .. }) if gate == "production" && bundle == "b2"
    ));
}

#[test]
fn an_older_bundle_than_the_gate_runs_waits_on_nobody() {
    let o = at_time(
        vec![with_current(needing_approval(gate("production")), "b2")],
        vec![bundle("b2", 5), bundle("b1", 0)],
        vec![],
        t0(),
    );
    assert_eq!(kinds(&o), []);
}

#[test]
fn a_failed_crossing_is_on_the_overview_since_it_ended_with_its_remedy() {
    let mut failed = passage("staging", "b1", Some(Failed), 1);
    failed.status.as_mut().unwrap().finished_at = Some(minutes(t0(), 3));
    let o = at_time(
        vec![gate("staging")],
        vec![bundle("b1", 0)],
        vec![failed],
        t0() + SignedDuration::from_mins(10),
    );
    assert_eq!(kinds(&o), [(AttentionKind::Failed, "staging")]);
    let a = &o.attention[0];
    assert_eq!(a.passage.as_deref(), Some("staging-b1"));
    assert_eq!(a.since, Some(minutes(t0(), 3)));
    assert!(
        matches!(&a.action, Some(Remedy::InspectPassage { passage }) if passage == "staging-b1")
    );
}

#[test]
fn a_crossing_is_too_long_past_its_step_timeout() {
    let gates = vec![gate("dev")];
    let bundles = vec![bundle("b1", 0)];
    let running = running_since("dev", "b1", 0, "5m");
    let before = at_time(
        gates.clone(),
        bundles.clone(),
        vec![running.clone()],
        minutes(t0(), 4).0,
    );
    assert_eq!(kinds(&before), []);
    let after = at_time(gates, bundles, vec![running], minutes(t0(), 6).0);
    assert_eq!(kinds(&after), [(AttentionKind::Slow, "dev")]);
    assert!(
        after.attention[0].detail.contains("past its timeout of 5m"),
        "{}",
        after.attention[0].detail
    );
}

#[test]
fn a_crossing_is_too_long_at_more_than_twice_its_usual_time() {
    // Three earlier crossings of a minute each: the usual time is a minute, so a
    // crossing is too long after two minutes and one more.
    let mut passages: Vec<_> = (0..3)
        .map(|i| ran("dev", &format!("a{i}"), i * 10, i * 10 + 1))
        .collect();
    passages.insert(0, running_since("dev", "b1", 100, ""));
    let gates = vec![gate("dev")];
    let bundles = vec![bundle("b1", 0)];
    let calm = at_time(
        gates.clone(),
        bundles.clone(),
        passages.clone(),
        minutes(t0(), 102).0,
    );
    assert_eq!(kinds(&calm), []);
    let slow = at_time(gates, bundles, passages, minutes(t0(), 104).0);
    assert_eq!(kinds(&slow), [(AttentionKind::Slow, "dev")]);
    assert_eq!(slow.attention[0].since, Some(Time(minutes(t0(), 100).0)));
    assert!(
        slow.attention[0].detail.contains("usually take 1 min"),
        "{}",
        slow.attention[0].detail
    );
}

#[test]
fn without_history_a_crossing_is_too_long_after_ten_minutes() {
    let gates = vec![gate("dev")];
    let bundles = vec![bundle("b1", 0)];
    let running = vec![running_since("dev", "b1", 0, "")];
    assert_eq!(
        kinds(&at_time(
            gates.clone(),
            bundles.clone(),
            running.clone(),
            minutes(t0(), 9).0
        )),
        []
    );
    assert_eq!(
        kinds(&at_time(gates, bundles, running, minutes(t0(), 11).0)),
        [(AttentionKind::Slow, "dev")]
    );
}

#[test]
fn failures_come_before_slow_crossings_before_approvals() {
    let mut failed = passage("staging", "b1", Some(Failed), 1);
    failed.status.as_mut().unwrap().finished_at = Some(minutes(t0(), 3));
    let o = at_time(
        vec![
            gate("dev"),
            gate("staging"),
            with_current(needing_approval(gate("production")), "b0"),
        ],
        vec![bundle("b2", 5), bundle("b1", 1), bundle("b0", 0)],
        vec![running_since("dev", "b2", 6, "1m"), failed],
        minutes(t0(), 30).0,
    );
    assert_eq!(
        kinds(&o),
        [
            (AttentionKind::Failed, "staging"),
            (AttentionKind::Slow, "dev"),
            (AttentionKind::Approval, "production"),
        ]
    );
}

#[test]
fn a_rejection_waits_on_whoever_may_withdraw_it() {
    let o = at_time(
        vec![with_current(needing_approval(gate("production")), "b1")],
        vec![
            rejected(bundle("b2", 5), "production", "dave", "not this week"),
            bundle("b1", 0),
        ],
        vec![],
        t0(),
    );
    assert_eq!(kinds(&o), [(AttentionKind::Rejected, "production")]);
    let a = &o.attention[0];
    assert_eq!(a.bundle.as_deref(), Some("b2"));
    assert!(matches!(
        &a.action,
        Some(Remedy::WithdrawRejection { by, .. }) if by.iter().any(|who| who == "dave")
    ));
}

/// A Bundle an automatic Gate takes by itself once its window opens stays on the
/// Overview, with when (DECISION 159): nobody is surprised by the unattended crossing.
/// A Gate that crosses only when asked says nothing of the kind.
#[test]
fn an_automatic_gate_held_only_by_its_window_says_when_it_crosses() {
    // The clock is Tuesday 2026-08-11 12:00 UTC: a weekday freeze 09:00–17:00 holds it.
    let frozen = |auto: bool| {
        let mut gate = with_current(gate("production"), "b1");
        gate.spec.auto = auto;
        gate.spec.windows = vec![hecate_types::Window {
            deny: true,
            ..window("0 9 * * 1-5", "8h")
        }];
        gate
    };
    let o = at_time(
        vec![frozen(true)],
        vec![bundle("b2", 5), bundle("b1", 0)],
        vec![],
        t0(),
    );
    assert_eq!(kinds(&o), [(AttentionKind::Scheduled, "production")]);
    let a = &o.attention[0];
    assert_eq!(a.bundle.as_deref(), Some("b2"));
    assert_eq!(a.due, Some(Time("2026-08-11T17:00:00Z".parse().unwrap())));
    assert!(
        a.detail
            .starts_with("1.0.0: crosses by itself, unattended, once the window lets it: "),
        "{}",
        a.detail
    );
    let asked = at_time(
        vec![frozen(false)],
        vec![bundle("b2", 5), bundle("b1", 0)],
        vec![],
        t0(),
    );
    assert_eq!(kinds(&asked), []);
}

#[test]
fn an_approval_waits_since_the_bundle_cleared_upstream_not_since_its_emission() {
    // Emitted at minute 5, it cleared staging at minute 90: production waits on an
    // approval since then (#53: ages were counted from the emission).
    let mut production = needing_approval(gate("production"));
    production.spec.admits[0].after = vec!["staging".into()];
    let mut b2 = cleared(bundle("b2", 5), &["staging"]);
    if let Some(status) = b2.status.as_mut() {
        status.cleared[0].at = minutes(t0(), 90);
    }
    let o = at_time(
        vec![gate("staging"), with_current(production, "b1")],
        vec![b2, bundle("b1", 0)],
        vec![],
        minutes(t0(), 120).0,
    );
    let approval = o
        .attention
        .iter()
        .find(|a| a.kind == AttentionKind::Approval)
        .expect("an approval waits");
    assert_eq!(approval.since, Some(minutes(t0(), 90)));
}
