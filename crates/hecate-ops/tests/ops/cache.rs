//! Reads from the watch-backed cache: the same answers as the direct path, no requests
//! per read, and changes seen as they happen.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hecate_ops::{DiffAgainst, Ops, Scope, State};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Beacon, BeaconSpec, ImageWatch, PassagePhase, WatchSource, Window};
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;

use crate::fixtures::*;

/// An object's identity and version: equal when both paths read the same object.
fn versions<K: kube::Resource>(objects: &[K]) -> Vec<(String, String)> {
    objects
        .iter()
        .map(|o| (o.name_any(), o.resource_version().unwrap_or_default()))
        .collect()
}

/// Waits until `check` holds, for up to ten seconds: a watch delivers changes in
/// milliseconds, but delivers them a little after the write returns.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not seen through the cache within 10 s");
}

#[tokio::test]
async fn cached_reads_answer_as_the_direct_path_does() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    env.create(Beacon::new(
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
    gate(&env, "dev", gate_spec(&[], false)).await;
    gate(&env, "staging", gate_spec(&["dev"], true)).await;
    gate(&env, "production", gate_spec(&["staging"], true)).await;
    let bundles = bundles_in_order(&env, &["b1", "b2"]).await;
    bundle_status(&env, bundles[0].clone(), &["dev"], &[("staging", "alice")]).await;
    passage(&env, "dev-b1", "dev", "b1", PassagePhase::Succeeded).await;
    passage(&env, "dev-b2", "dev", "b2", PassagePhase::Failed).await;
    // A Bundle no Gate admits: the direct Explain does not read it (it lists only
    // the admitted Beacon's), the cached one judges it and leaves it out.
    env.create(hecate_types::Bundle::new(
        "w1",
        hecate_types::BundleSpec {
            beacon: "web".into(),
            ..bundle_spec()
        },
    ))
    .await;

    // One instant for both paths, so that nothing differs but where objects come from.
    let now = jiff::Timestamp::now();
    let direct = Ops::new(env.admin.clone()).with_clock(move || now);
    let (client, log) = env
        .endpoint()
        .recording_client(Identity::Admin)
        .await
        .unwrap();
    // The watches use their own client, so the log holds only what reads ask for. The
    // writes above were acknowledged before the cache listed, so it holds them all.
    let cached = Ops::new(client)
        .with_clock(move || now)
        .with_cache(started_cache(env.admin.clone()).await);

    assert_eq!(
        versions(&cached.gates(ns).await.unwrap()),
        versions(&direct.gates(ns).await.unwrap())
    );
    assert_eq!(
        versions(&cached.bundles(ns).await.unwrap()),
        versions(&direct.bundles(ns).await.unwrap())
    );
    assert_eq!(
        versions(&cached.passages(ns, Some("dev"), None).await.unwrap()),
        versions(&direct.passages(ns, Some("dev"), None).await.unwrap())
    );
    assert_eq!(
        versions(&cached.beacons(ns).await.unwrap()),
        versions(&direct.beacons(ns).await.unwrap())
    );
    assert_eq!(
        cached.bundle(ns, "b1").await.unwrap().status,
        direct.bundle(ns, "b1").await.unwrap().status
    );
    // Whole objects, alike: neither path answers with managed fields.
    let direct_gates = direct.gates(ns).await.unwrap();
    assert!(
        direct_gates
            .iter()
            .all(|g| g.metadata.managed_fields.is_none())
    );
    assert_eq!(cached.gates(ns).await.unwrap(), direct_gates);
    assert_eq!(
        cached.passage(ns, "dev-b1").await.unwrap(),
        direct.passage(ns, "dev-b1").await.unwrap()
    );
    assert_eq!(
        cached.gate(ns, "ghost").await.unwrap_err().to_string(),
        direct.gate(ns, "ghost").await.unwrap_err().to_string()
    );
    for gate in ["dev", "staging", "production"] {
        assert_eq!(
            cached.explain(ns, gate).await.unwrap(),
            direct.explain(ns, gate).await.unwrap(),
            "explain {gate}"
        );
        // alice approved b1 for staging: her own crossing of it is refused there.
        let alice = hecate_ops::Person::named("alice");
        assert_eq!(
            cached.your_crossings(ns, gate, &alice).await.unwrap(),
            direct.your_crossings(ns, gate, &alice).await.unwrap(),
            "your_crossings {gate}"
        );
    }
    assert_eq!(
        cached
            .your_crossings(ns, "ghost", &hecate_ops::Person::named("alice"))
            .await
            .unwrap_err()
            .to_string(),
        direct
            .your_crossings(ns, "ghost", &hecate_ops::Person::named("alice"))
            .await
            .unwrap_err()
            .to_string(),
    );
    let scope = Scope::Namespaces(vec![ns.clone(), "no-such-namespace".into()]);
    assert_eq!(
        cached.overview(&scope).await.unwrap(),
        direct.overview(&scope).await.unwrap()
    );
    let explanations = cached.explanations(&scope).await.unwrap();
    assert_eq!(explanations, direct.explanations(&scope).await.unwrap());
    let order: Vec<&str> = explanations.iter().map(|x| x.gate.as_str()).collect();
    assert_eq!(order, ["dev", "staging", "production"], "upstream first");
    assert_eq!(
        cached.audit(ns).await.unwrap(),
        direct.audit(ns).await.unwrap()
    );
    // A Bundle's diff (DECISION 140), against each thing it may be against.
    for against in [
        DiffAgainst::Previous,
        DiffAgainst::Named("dev".into()),
        DiffAgainst::Named("b1".into()),
        DiffAgainst::Gate("staging".into()),
        DiffAgainst::Bundle("w1".into()),
    ] {
        assert_eq!(
            cached.diff(ns, "b2", against.clone()).await.unwrap(),
            direct.diff(ns, "b2", against.clone()).await.unwrap(),
            "{against:?}"
        );
    }
    for (bundle, against) in [
        ("ghost", DiffAgainst::Previous),
        ("b2", DiffAgainst::Gate("ghost".into())),
        ("b2", DiffAgainst::Named("Not_A_Name".into())),
    ] {
        assert_eq!(
            cached
                .diff(ns, bundle, against.clone())
                .await
                .unwrap_err()
                .to_string(),
            direct
                .diff(ns, bundle, against)
                .await
                .unwrap_err()
                .to_string(),
        );
    }
    assert!(cached.namespaces().await.unwrap().contains(ns));
    assert_eq!(
        log.requests(),
        Vec::<String>::new(),
        "cached reads cost no requests"
    );
}

/// The first listing is the watches' first events where the API server streams lists
/// (DECISION 143): one request per kind, no LIST and no pages.
#[tokio::test]
async fn the_cache_streams_its_first_listing() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    gate(&env, "dev", gate_spec(&[], false)).await;
    bundles_in_order(&env, &["b1"]).await;
    let (client, log) = env
        .endpoint()
        .recording_client(Identity::Admin)
        .await
        .unwrap();
    let cached = Ops::new(env.admin.clone()).with_cache(started_cache(client).await);

    let requests = log.requests();
    for kind in KINDS {
        let of_kind = requests_for(&requests, kind);
        assert_eq!(of_kind.len(), 1, "{kind}: {requests:#?}");
        assert!(
            of_kind[0].starts_with("GET ")
                && of_kind[0].contains("watch=true")
                && of_kind[0].contains("sendInitialEvents=true"),
            "{kind}: {of_kind:?}"
        );
    }
    let names = |gates: Vec<hecate_types::Gate>| -> Vec<String> {
        gates.iter().map(kube::ResourceExt::name_any).collect()
    };
    assert_eq!(names(cached.gates(ns).await.unwrap()), ["dev"]);
    assert_eq!(cached.bundle(ns, "b1").await.unwrap().name_any(), "b1");
}

#[tokio::test]
async fn the_cache_follows_changes() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    gate(&env, "dev", gate_spec(&[], false)).await;
    let cached = Ops::new(env.admin.clone()).with_cache(started_cache(env.admin.clone()).await);
    assert_eq!(cached.bundles(ns).await.unwrap(), []);

    bundles_in_order(&env, &["b1"]).await;
    eventually("a new Bundle", || async {
        cached.explain(ns, "dev").await.unwrap().eligible == ["b1"]
    })
    .await;

    // A promotion judges what the API server holds, and the cache then sees its Passage.
    let created = cached.promote(ns, "dev", "b1", "alice").await.unwrap();
    eventually("a new Passage", || async {
        cached.passage(ns, &created.name_any()).await.is_ok()
    })
    .await;

    env.api::<hecate_types::Gate>()
        .delete("dev", &Default::default())
        .await
        .unwrap();
    eventually("a deleted Gate", || async {
        cached.gate(ns, "dev").await.is_err()
    })
    .await;
    assert_eq!(
        cached
            .overview(&Scope::Namespaces(vec![ns.clone()]))
            .await
            .unwrap()
            .namespaces,
        []
    );
}

#[tokio::test]
async fn a_remembered_explanation_stands_until_a_window_opens() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    let mut spec = gate_spec(&[], false);
    spec.windows = vec![Window {
        schedule: "0 9 * * *".into(),
        duration: "1h".into(),
        time_zone: "UTC".into(),
        deny: false,
    }];
    gate(&env, "dev", spec).await;
    bundles_in_order(&env, &["b1"]).await;

    // One clock for both paths, moved by the test.
    let clock = Arc::new(Mutex::new(ts("2026-08-10T08:59:00Z")));
    let read = |clock: &Arc<Mutex<jiff::Timestamp>>| {
        let clock = clock.clone();
        move || *clock.lock().unwrap()
    };
    let direct = Ops::new(env.admin.clone()).with_clock(read(&clock));
    let cached = Ops::new(env.admin.clone())
        .with_clock(read(&clock))
        .with_cache(started_cache(env.admin.clone()).await);
    let set = |at: &str| *clock.lock().unwrap() = ts(at);

    let closed = cached.explain(ns, "dev").await.unwrap();
    assert_eq!(closed.state, State::Blocked);
    assert_eq!(closed, direct.explain(ns, "dev").await.unwrap());

    // Nothing changed in the namespace, but the window opened: judged again.
    set("2026-08-10T09:00:00Z");
    let open = cached.explain(ns, "dev").await.unwrap();
    assert_eq!(open.state, State::Ready, "{open:#?}");
    assert_eq!(open, direct.explain(ns, "dev").await.unwrap());

    // And a clock read earlier than the remembered answer is not given it.
    set("2026-08-10T08:59:30Z");
    assert_eq!(cached.explain(ns, "dev").await.unwrap(), closed);
    set("2026-08-10T10:00:00Z");
    assert_eq!(
        cached.explain(ns, "dev").await.unwrap(),
        direct.explain(ns, "dev").await.unwrap(),
        "closed again at 10:00"
    );
    assert_eq!(
        cached.explain(ns, "dev").await.unwrap().state,
        State::Blocked
    );
}

fn ts(at: &str) -> jiff::Timestamp {
    at.parse().unwrap()
}

#[tokio::test]
async fn a_remembered_overview_stands_until_a_gate_or_the_namespace_changes() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    let mut spec = gate_spec(&[], false);
    spec.windows = vec![Window {
        schedule: "0 9 * * *".into(),
        duration: "1h".into(),
        time_zone: "UTC".into(),
        deny: false,
    }];
    gate(&env, "dev", spec).await;
    bundles_in_order(&env, &["b1"]).await;

    let clock = Arc::new(Mutex::new(ts("2026-08-10T08:59:00Z")));
    let read = |clock: &Arc<Mutex<jiff::Timestamp>>| {
        let clock = clock.clone();
        move || *clock.lock().unwrap()
    };
    let direct = Ops::new(env.admin.clone()).with_clock(read(&clock));
    let cached = Ops::new(env.admin.clone())
        .with_clock(read(&clock))
        .with_cache(started_cache(env.admin.clone()).await);
    let set = |at: &str| *clock.lock().unwrap() = ts(at);
    let scope = Scope::Namespaces(vec![ns.clone()]);
    let dev_state = |overview: &hecate_ops::Overview| overview.namespaces[0].gates[0].state;

    let closed = cached.overview(&scope).await.unwrap();
    assert_eq!(dev_state(&closed), State::Blocked);
    assert_eq!(closed, direct.overview(&scope).await.unwrap());
    assert_eq!(
        cached.overview(&scope).await.unwrap(),
        closed,
        "asked again"
    );

    // The window opens: the Gate's explanation changes with the clock, and so does the
    // namespace's share of the Overview.
    set("2026-08-10T09:00:00Z");
    let open = cached.overview(&scope).await.unwrap();
    assert_eq!(dev_state(&open), State::Ready, "{open:#?}");
    assert_eq!(open, direct.overview(&scope).await.unwrap());

    // A day later the activity's days move, whatever is remembered.
    set("2026-08-11T09:30:00Z");
    let next_day = cached.overview(&scope).await.unwrap();
    assert_eq!(next_day, direct.overview(&scope).await.unwrap());
    assert_eq!(
        next_day.activity.last().map(|day| day.date.as_str()),
        Some("2026-08-11")
    );

    // A change in the namespace is seen.
    bundles_in_order(&env, &["b2"]).await;
    eventually("a new Bundle in the Overview", || async {
        cached.overview(&scope).await.unwrap().namespaces[0]
            .timeline
            .len()
            == 2
    })
    .await;
    assert_eq!(
        cached.overview(&scope).await.unwrap(),
        direct.overview(&scope).await.unwrap()
    );
}
