//! Spec §11.15 (AC-136 – AC-144): the Overview.

use hecate_types::{Gate, GateOccupant, GateStatus, Health, Passage, PassagePhase::*, Time};
use jiff::SignedDuration;
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;

use crate::model::{State, Totals};
use crate::rules::fixtures::*;
use crate::rules::overview::overview;
use crate::rules::snapshot::NamespaceSnapshot;

fn in_ns<K: kube::Resource>(mut object: K, namespace: &str) -> K {
    object.meta_mut().namespace = Some(namespace.into());
    object
}

fn healthy(name: &str, namespace: &str, health: Health) -> Gate {
    in_ns(with_health(gate(name), health, &[]), namespace)
}

fn entered(mut gate: Gate, times: &[jiff::Timestamp]) -> Gate {
    let status = gate.status.get_or_insert_with(GateStatus::default);
    for (i, t) in times.iter().enumerate() {
        status.history.push(GateOccupant {
            bundle: format!("b{i}"),
            digest: String::new(),
            passage: String::new(),
            entered_at: Time(*t),
            actor: String::new(),
            verified: None,
        });
    }
    gate
}

fn finished(mut passage: Passage, at: jiff::Timestamp) -> Passage {
    passage
        .status
        .get_or_insert_with(Default::default)
        .finished_at = Some(Time(at));
    passage
}

/// Overview of everything given, visible namespaces only.
fn of(gates: Vec<Gate>, passages: Vec<Passage>, visible: &[&str]) -> crate::model::Overview {
    let mut snapshots = NamespaceSnapshot::by_namespace(gates, vec![], passages);
    snapshots.retain(|s| visible.contains(&s.namespace()));
    overview(&snapshots, t0())
}

#[test]
fn ac136_only_visible_namespaces() {
    let gates = vec![
        healthy("production", "acme", Health::Healthy),
        healthy("payments", "finance", Health::Degraded),
    ];
    let failed = in_ns(passage("payments", "b1", Some(Failed), 0), "finance");
    let o = of(gates, vec![failed], &["acme"]);
    assert_eq!(o.namespaces.len(), 1);
    assert_eq!(o.namespaces[0].namespace, "acme");
    assert_eq!(
        (o.totals.gates, o.totals.degraded, o.totals.failed),
        (1, 0, 0)
    );
    assert!(!serde_json::to_string(&o).unwrap().contains("payments"));
}

#[test]
fn ac137_health_counted_across_namespaces() {
    let gates = vec![
        healthy("production", "acme", Health::Healthy),
        healthy("staging", "acme", Health::Degraded),
        healthy("production", "team-b", Health::Progressing),
    ];
    let o = of(gates, vec![], &["acme", "team-b"]);
    let namespaces: Vec<&str> = o.namespaces.iter().map(|n| n.namespace.as_str()).collect();
    assert_eq!(namespaces, ["acme", "team-b"]);
    assert_eq!(
        o.totals,
        Totals {
            gates: 3,
            healthy: 1,
            degraded: 1,
            progressing: 1,
            ..Totals::default()
        }
    );
    // Each namespace carries its share, so a total can open the list it counts.
    let shares: Vec<(usize, usize, usize)> = o
        .namespaces
        .iter()
        .map(|n| (n.totals.gates, n.totals.degraded, n.totals.progressing))
        .collect();
    assert_eq!(shares, [(2, 1, 0), (1, 0, 1)]);
}

#[test]
fn ac138_a_gate_that_has_not_spoken_is_unknown() {
    let o = of(vec![gate("production")], vec![], &[NS]);
    assert_eq!(o.namespaces[0].gates[0].health, Health::Unknown);
    assert_eq!(o.totals.unknown, 1);
    // NotApplicable is shown as such but counted with the unknowns.
    let o = of(
        vec![with_health(gate("production"), Health::NotApplicable, &[])],
        vec![],
        &[NS],
    );
    assert_eq!(o.namespaces[0].gates[0].health, Health::NotApplicable);
    assert_eq!(o.totals.unknown, 1);
}

#[test]
fn ac139_the_running_passage_is_named_and_failures_counted() {
    let gates = vec![
        with_health(gate("production"), Health::Progressing, &[]),
        with_health(gate("staging"), Health::Healthy, &[]),
    ];
    let mut running = passage("production", "app-1", Some(Running), 0);
    running.metadata.name = Some("app-1-production".into());
    let mut failed = passage("staging", "app-0", Some(Failed), 0);
    failed.metadata.name = Some("app-0-staging".into());
    let o = of(gates, vec![running, failed], &[NS]);
    let gates = &o.namespaces[0].gates;
    assert_eq!(gates[0].name, "production");
    assert_eq!(gates[0].running.as_deref(), Some("app-1-production"));
    assert_eq!(gates[0].state, State::Crossing);
    assert_eq!(gates[1].running, None);
    assert_eq!((o.totals.running, o.totals.failed), (1, 1));
}

#[test]
fn ac140_a_suspended_gate() {
    let mut g = with_health(gate("production"), Health::Healthy, &[]);
    g.spec.suspend = true;
    let o = of(vec![g], vec![], &[NS]);
    assert!(o.namespaces[0].gates[0].suspended);
    assert_eq!(o.totals.suspended, 1);
    assert_eq!(o.namespaces[0].gates[0].state, State::Blocked);
}

/// Whether a Gate crosses by itself is on its summary: an approval given from the
/// Overview says, like one given on the Gate's page, that it starts the crossing.
#[test]
fn a_gate_that_crosses_by_itself_says_so() {
    let mut automatic = with_health(gate("production"), Health::Healthy, &[]);
    automatic.spec.auto = true;
    let manual = with_health(gate("staging"), Health::Healthy, &[]);
    let o = of(vec![automatic, manual], vec![], &[NS]);
    let auto: Vec<(&str, bool)> = o.namespaces[0]
        .gates
        .iter()
        .map(|g| (g.name.as_str(), g.auto))
        .collect();
    assert_eq!(auto, [("production", true), ("staging", false)]);
    let json = serde_json::to_value(&o.namespaces[0].gates[0]).unwrap();
    assert_eq!(json["auto"], true);
}

#[test]
fn ac141_empty_rather_than_forbidden() {
    let o = of(vec![gate("production")], vec![], &[]);
    let json = serde_json::to_value(&o).unwrap();
    assert_eq!(json["namespaces"], serde_json::json!([]));
    assert_eq!(o.totals.gates, 0);
}

#[test]
fn ac142_crossings_and_failures_by_day() {
    let two_days_ago = t0() - SignedDuration::from_hours(48);
    let g = entered(gate("production"), &[t0(), t0(), two_days_ago]);
    let mut p = finished(passage("production", "app-4", Some(Failed), 0), t0());
    p.metadata.name = Some("app-4-production".into());
    let o = of(vec![g], vec![p], &[NS]);
    assert_eq!(o.activity.len(), 14);
    let today = &o.activity[13];
    assert_eq!(
        (today.date.as_str(), today.crossed, today.failed),
        ("2026-08-11", 2, 1)
    );
    assert_eq!((o.activity[11].crossed, o.activity[11].failed), (1, 0));
    assert_eq!(o.activity[0].date, "2026-07-29");
}

#[test]
fn ac143_activity_ignores_invisible_namespaces() {
    let gates = vec![
        entered(in_ns(gate("production"), "acme"), &[t0()]),
        entered(in_ns(gate("payments"), "finance"), &[t0(), t0()]),
    ];
    let o = of(gates, vec![], &["acme"]);
    assert_eq!(o.activity[13].crossed, 1);
}

#[test]
fn ac144_activity_is_never_null() {
    let o = overview(&[], t0());
    let json = serde_json::to_value(&o).unwrap();
    assert_eq!(json["activity"].as_array().map(Vec::len), Some(14));
    assert_eq!(json["namespaces"], serde_json::json!([]));
}

#[test]
fn each_gate_carries_its_explanation() {
    let o = of(vec![gate("staging")], vec![], &[NS]);
    let staging = &o.namespaces[0].gates[0];
    assert_eq!(staging.name, gate("staging").name_any());
    assert_eq!(staging.state, State::Idle);
    assert!(staging.summary.contains("no Bundle"));
    // What a drawing of the pipeline links it to, so the Overview alone draws it.
    assert_eq!(staging.admits, gate("staging").spec.admits);
    assert!(!staging.admits.is_empty());
}

#[test]
fn waiting_counts_only_bundles_ahead_of_the_current_one() {
    // dev holds the newest Bundle: the four older ones are rollback candidates, not
    // waiting. staging holds app-3: app-4 and app-5 wait to cross.
    let gates = vec![
        with_current(gate("dev"), "app-5"),
        with_current(gate("staging"), "app-3"),
    ];
    let bundles = (1..=5).map(|i| bundle(&format!("app-{i}"), i)).collect();
    let snapshot = NamespaceSnapshot::new(NS, gates, bundles, vec![]);
    let o = overview([&snapshot], t0());
    let counts: Vec<(&str, usize, usize)> = o.namespaces[0]
        .gates
        .iter()
        .map(|g| (g.name.as_str(), g.eligible, g.ahead))
        .collect();
    assert_eq!(counts, [("dev", 4, 0), ("staging", 4, 2)]);
    assert_eq!((o.totals.eligible, o.totals.ahead), (8, 2));
    assert_eq!(o.namespaces[0].totals.ahead, 2);
}
