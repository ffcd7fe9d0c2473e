//! Spec §11.7 (AC-073 – AC-075), NotFound, and namespace discovery.

use hecate_ops::{Error, Kind, Ops};
use hecate_testenv::TestEnv;
use hecate_types::{Beacon, BeaconSpec, ImageWatch, PassagePhase, WatchSource};
use pretty_assertions::assert_eq;

use crate::fixtures::*;

fn names<K: kube::Resource>(objects: &[K]) -> Vec<String> {
    objects
        .iter()
        .map(|o| o.meta().name.clone().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn ac073_reads_are_ordered() {
    let env = TestEnv::new().await;
    let ops = Ops::new(env.admin.clone());
    for name in ["production", "dev", "staging"] {
        gate(&env, name, gate_spec(&[], false)).await;
    }
    bundles_in_order(&env, &["old", "middle", "newest"]).await;
    assert_eq!(
        names(&ops.gates(&env.namespace).await.unwrap()),
        ["dev", "production", "staging"]
    );
    assert_eq!(
        names(&ops.bundles(&env.namespace).await.unwrap()),
        ["newest", "middle", "old"]
    );
}

#[tokio::test]
async fn ac074_missing_things_are_named() {
    let env = TestEnv::new().await;
    let ops = Ops::new(env.admin.clone());
    let ns = &env.namespace;
    let errors = [
        (Kind::Gate, ops.gate(ns, "ghost").await.unwrap_err()),
        (Kind::Bundle, ops.bundle(ns, "ghost").await.unwrap_err()),
        (Kind::Passage, ops.passage(ns, "ghost").await.unwrap_err()),
        (Kind::Beacon, ops.beacon(ns, "ghost").await.unwrap_err()),
        (Kind::Gate, ops.explain(ns, "ghost").await.unwrap_err()),
    ];
    for (kind, error) in errors {
        assert!(error.is_not_found(), "{error}");
        let Error::NotFound {
            kind: found,
            namespace,
            name,
        } = &error
        else {
            unreachable!()
        };
        assert_eq!(
            (*found, namespace.as_str(), name.as_str()),
            (kind, ns.as_str(), "ghost")
        );
        assert!(error.to_string().contains("ghost"), "{error}");
    }
}

#[tokio::test]
async fn ac075_passages_filter_by_spec() {
    let env = TestEnv::new().await;
    let ops = Ops::new(env.admin.clone());
    passage(&env, "staging-b1", "staging", "b1", PassagePhase::Succeeded).await;
    passage(
        &env,
        "production-b1",
        "production",
        "b1",
        PassagePhase::Running,
    )
    .await;
    passage(&env, "staging-b2", "staging", "b2", PassagePhase::Failed).await;
    let ns = &env.namespace;
    assert_eq!(ops.passages(ns, None, None).await.unwrap().len(), 3);
    assert_eq!(
        ops.passages(ns, Some("staging"), None).await.unwrap().len(),
        2
    );
    assert_eq!(ops.passages(ns, None, Some("b1")).await.unwrap().len(), 2);
    assert_eq!(
        names(&ops.passages(ns, Some("staging"), Some("b2")).await.unwrap()),
        ["staging-b2"]
    );
    assert!(
        ops.passages(ns, Some("nowhere"), None)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn one_of_each_read_returns_what_was_written() {
    let env = TestEnv::new().await;
    let ops = Ops::new(env.admin.clone());
    let ns = &env.namespace;
    let beacon = env
        .create(Beacon::new(
            "app",
            BeaconSpec {
                watch: vec![WatchSource {
                    image: Some(ImageWatch {
                        repo: "ghcr.io/acme/app".into(),
                        ..ImageWatch::default()
                    }),
                    ..WatchSource::default()
                }],
                ..BeaconSpec::default()
            },
        ))
        .await;
    assert_eq!(ops.beacon(ns, "app").await.unwrap().spec, beacon.spec);
    assert_eq!(names(&ops.beacons(ns).await.unwrap()), ["app"]);
    let gate = gate(&env, "dev", gate_spec(&[], false)).await;
    assert_eq!(ops.gate(ns, "dev").await.unwrap().spec, gate.spec);
    let bundle = bundles_in_order(&env, &["b1"]).await.remove(0);
    assert_eq!(ops.bundle(ns, "b1").await.unwrap().spec, bundle.spec);
    let p = passage(&env, "dev-b1", "dev", "b1", PassagePhase::Running).await;
    assert_eq!(ops.passage(ns, "dev-b1").await.unwrap().status, p.status);
}

#[tokio::test]
async fn namespaces_are_those_holding_gates_or_beacons() {
    // Other tests' namespaces share this control plane, so check membership rather
    // than the whole list.
    let with_gate = TestEnv::new().await;
    let with_beacon = TestEnv::new().await;
    let with_only_bundles = TestEnv::new().await;
    gate(&with_gate, "dev", gate_spec(&[], false)).await;
    with_beacon
        .create(Beacon::new(
            "app",
            BeaconSpec {
                watch: vec![WatchSource {
                    image: Some(ImageWatch {
                        repo: "r".into(),
                        ..ImageWatch::default()
                    }),
                    ..WatchSource::default()
                }],
                ..BeaconSpec::default()
            },
        ))
        .await;
    bundles_in_order(&with_only_bundles, &["stray"]).await;
    let namespaces = Ops::new(with_gate.admin.clone())
        .namespaces()
        .await
        .unwrap();
    assert!(namespaces.contains(&with_gate.namespace));
    assert!(namespaces.contains(&with_beacon.namespace));
    assert!(!namespaces.contains(&with_only_bundles.namespace));
    assert!(!namespaces.contains(&"kube-system".to_string()));
    let mut sorted = namespaces.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(namespaces, sorted, "sorted, without duplicates");
}

/// Passages made together (restored, imported, written at once) tie on creation; their
/// starts tell them apart, so the newest run leads — not `…-2-0` before `…-10-0` by name.
#[tokio::test]
async fn passages_are_newest_first_by_start() {
    let env = TestEnv::new().await;
    let ops = Ops::new(env.admin.clone());
    gate(&env, "production", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    let start = jiff::Timestamp::now();
    for (name, minutes_ago) in [
        ("production-1-10-0", 5),
        ("production-1-2-0", 50),
        ("production-1-9-0", 20),
    ] {
        let mut p = passage(&env, name, "production", "b1", PassagePhase::Succeeded).await;
        p.status.as_mut().unwrap().started_at = Some(hecate_types::Time(
            start - jiff::SignedDuration::from_mins(minutes_ago),
        ));
        env.write_status(&p).await;
    }
    assert_eq!(
        names(
            &ops.passages(&env.namespace, Some("production"), None)
                .await
                .unwrap()
        ),
        ["production-1-10-0", "production-1-9-0", "production-1-2-0"]
    );
}

/// A crossing nobody starts is named, and what else could cross stays listed.
#[tokio::test]
async fn explain_names_a_crossing_that_never_starts() {
    let env = TestEnv::new().await;
    let ops = Ops::new(env.admin.clone());
    gate(&env, "production", gate_spec(&[], false)).await;
    bundles_in_order(&env, &["b1", "b2"]).await;
    let mut stuck = hecate_types::Passage::new(
        "production-1",
        hecate_types::PassageSpec {
            gate: "production".into(),
            bundle: "b1".into(),
            steps: vec![hecate_types::Step {
                uses: "flux-wait".into(),
                ..Default::default()
            }],
            ..Default::default()
        },
    );
    // Asked for three minutes ago (as `hecate promote` records it), never started.
    stuck.metadata.annotations = Some(hecate_ops::rules::eligibility::created_annotation(
        jiff::Timestamp::now() - jiff::SignedDuration::from_mins(3),
    ));
    env.create(stuck).await;

    let x = ops.explain(&env.namespace, "production").await.unwrap();
    assert_eq!(x.state, hecate_ops::State::Crossing);
    assert_eq!(x.summary, "crossing b1, but production-1 has not started");
    let kinds: Vec<&str> = x.blockers.iter().map(|b| b.kind.as_str()).collect();
    assert_eq!(kinds, ["NotStarted"]);
    assert!(
        x.blockers[0]
            .detail
            .ends_with("is hecate-controller running?"),
        "{}",
        x.blockers[0].detail
    );
    assert!(x.crossing.as_ref().is_some_and(|c| c.stalled));
    assert_eq!(
        x.eligible,
        ["b2"],
        "the rest stays listed during a crossing"
    );
}
