//! The pipeline's order, derived from `admits[].after`: upstream first, whatever the
//! names say.

use hecate_types::Gate;
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;

use crate::model::Stage;
use crate::rules::fixtures::*;
use crate::rules::overview::overview;
use crate::rules::pipeline::{stages, upstream_first};
use crate::rules::snapshot::NamespaceSnapshot;

fn after(name: &str, upstream: &[&str]) -> Gate {
    let mut gate = gate(name);
    gate.spec.admits[0].after = upstream.iter().map(|u| u.to_string()).collect();
    gate
}

fn order(gates: &[Gate]) -> Vec<(String, usize)> {
    upstream_first(gates)
        .into_iter()
        .map(|(gate, stage)| (gate.name_any(), stage.index))
        .collect()
}

fn named(list: &[(&str, usize)]) -> Vec<(String, usize)> {
    list.iter().map(|(n, i)| (n.to_string(), *i)).collect()
}

#[test]
fn three_stages_come_upstream_first_not_by_name() {
    let gates = [
        after("production", &["staging"]),
        after("dev", &[]),
        after("staging", &["dev"]),
    ];
    assert_eq!(
        order(&gates),
        named(&[("dev", 0), ("staging", 1), ("production", 2)])
    );
}

#[test]
fn a_diamond_takes_the_longest_path() {
    // dev → {qa, perf} → production; canary comes after dev and perf, so after perf.
    let gates = [
        after("production", &["qa", "perf"]),
        after("qa", &["dev"]),
        after("perf", &["dev"]),
        after("canary", &["dev", "perf"]),
        after("dev", &[]),
    ];
    assert_eq!(
        order(&gates),
        named(&[
            ("dev", 0),
            ("perf", 1),
            ("qa", 1),
            ("canary", 2),
            ("production", 2)
        ])
    );
    assert_eq!(
        stages(&gates)["production"].after,
        vec!["perf".to_string(), "qa".to_string()]
    );
}

#[test]
fn unknown_upstreams_are_shown_and_order_nothing() {
    let gates = [after("staging", &["dev", "qa"]), after("dev", &[])];
    let stages = stages(&gates);
    assert_eq!(
        stages["staging"],
        Stage {
            index: 1,
            after: vec!["dev".into()],
            unknown_after: vec!["qa".into()],
            cycle: false,
        }
    );
}

#[test]
fn a_cycle_comes_last_and_is_marked() {
    let gates = [
        after("a", &["b"]),
        after("b", &["a"]),
        after("c", &["b"]),
        after("dev", &[]),
        after("staging", &["dev"]),
    ];
    assert_eq!(
        order(&gates),
        named(&[("dev", 0), ("staging", 1), ("a", 2), ("b", 2), ("c", 2)])
    );
    let stages = stages(&gates);
    assert!(stages["a"].cycle && stages["b"].cycle && stages["c"].cycle);
    assert!(!stages["staging"].cycle);
}

#[test]
fn the_overview_orders_upstream_first_and_counts_eligible_as_explain_does() {
    let mut gates = vec![
        after("production", &["staging"]),
        after("dev", &[]),
        after("staging", &["dev"]),
    ];
    for gate in &mut gates {
        gate.metadata.namespace = Some("acme".into());
    }
    // dev has b1 eligible now, while its (stale) status still lists nothing.
    let snapshots = NamespaceSnapshot::by_namespace(gates, vec![bundle("b1", 0)], vec![]);
    let overview = overview(&snapshots, t0());
    let summaries = &overview.namespaces[0].gates;
    let names: Vec<&str> = summaries.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["dev", "staging", "production"]);
    assert_eq!(summaries[0].eligible, 1);
    assert!(
        summaries[0].summary.contains("1 Bundle"),
        "{}",
        summaries[0].summary
    );
    assert_eq!(overview.totals.eligible, 1);
}
