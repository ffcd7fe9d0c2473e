//! The controller process at work: crossing by itself, sharded, metrics, shutdown.

use std::time::{Duration, Instant};

use hecate_types::{Bundle, Gate, Passage, PassagePhase, PassageStatus};

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

#[tokio::test]
async fn an_auto_gate_crosses_by_itself_and_records_it() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    let controller = Controller::start(&h.env, &ns, &[]).await;
    auto_gate(&h, "dev", &[]).await;
    let created = Instant::now();
    bundle(&h.env, "b1").await;

    // The Bundle's own watch wakes the Gate: no waiting for the minute's tick.
    let passage: Passage = eventually(Duration::from_secs(10), "a Passage", || async {
        h.env.api::<Passage>().get_opt("dev-1").await.unwrap()
    })
    .await;
    let latency = created.elapsed();
    assert!(latency < Duration::from_secs(3), "took {latency:?}");
    assert_eq!(
        (passage.spec.bundle.as_str(), passage.spec.actor.as_str()),
        ("b1", "controller")
    );

    // The Passage controller (part 2) is played by the test: finish it.
    let mut finished = passage.clone();
    finished.status = Some(PassageStatus {
        phase: Some(PassagePhase::Succeeded),
        ..PassageStatus::default()
    });
    h.env.write_status(&finished).await;
    // Recorded twice: on the Bundle first, then as the Gate's occupant.
    eventually(Duration::from_secs(10), "b1 cleared dev", || async {
        let bundle: Bundle = h.env.api::<Bundle>().get("b1").await.unwrap();
        bundle.has_cleared("dev").then_some(())
    })
    .await;
    eventually(Duration::from_secs(10), "b1 in dev", || async {
        let gate: Gate = h.gate("dev").await;
        (gate.current_bundle() == Some("b1")).then_some(())
    })
    .await;
    assert_eq!(h.passages().await.len(), 1, "and it does not cross again");

    let metrics = controller.scrape().await;
    assert!(
        metrics.contains(&format!(
            r#"hecate_gate_health{{namespace="{ns}",gate="dev",status="NotApplicable"}} 1"#
        )),
        "{metrics}"
    );

    // A deleted Gate's health series goes with it (kube-runtime never reconciles what
    // is gone; the watch's delete is what forgets it).
    h.env
        .api::<Gate>()
        .delete("dev", &Default::default())
        .await
        .unwrap();
    let series = format!(r#"hecate_gate_health{{namespace="{ns}",gate="dev""#);
    eventually(
        Duration::from_secs(10),
        "dev's series forgotten",
        || async { (!controller.scrape().await.contains(&series)).then_some(()) },
    )
    .await;

    let status = controller.terminate().await;
    assert!(status.success(), "a SIGTERM is a clean stop: {status:?}");
}

#[tokio::test]
async fn two_shards_split_the_namespaces_and_never_touch_each_others_gates() {
    let h = Harness::new().await;
    let mut namespaces = vec![h.env.namespace.clone()];
    for _ in 0..3 {
        namespaces.push(hecate_testenv::TestEnv::new().await.namespace);
    }
    let shard = |i: usize| format!("{}-{}", h.env.namespace, i % 2);
    for (i, ns) in namespaces.iter().enumerate() {
        join_shard(&h.env, ns, &shard(i)).await;
    }
    let first = Controller::start(&h.env, &shard(0), &[]).await;
    let second = Controller::start(&h.env, &shard(1), &[]).await;
    for ns in &namespaces {
        let gates = kube::Api::<Gate>::namespaced(h.env.admin.clone(), ns);
        let mut gate = Gate::new("dev", gate_spec(false, &[], false));
        gate.metadata.namespace = Some(ns.clone());
        gates.create(&Default::default(), &gate).await.unwrap();
    }
    for (i, ns) in namespaces.iter().enumerate() {
        eventually(Duration::from_secs(10), "the Gate reconciled", || async {
            let gate = kube::Api::<Gate>::namespaced(h.env.admin.clone(), ns)
                .get("dev")
                .await
                .unwrap();
            gate.status.filter(|s| !s.conditions.is_empty()).map(|_| ())
        })
        .await;
        let (mine, theirs) = if i % 2 == 0 {
            (&first, &second)
        } else {
            (&second, &first)
        };
        let series = format!(r#"namespace="{ns}",gate="dev""#);
        assert!(
            mine.scrape().await.contains(&series),
            "{ns} is shard {}'s",
            i % 2
        );
        assert!(
            !theirs.scrape().await.contains(&series),
            "{ns} is not shard {}'s",
            (i + 1) % 2
        );
    }
}

#[tokio::test]
async fn fifty_idle_gates_cost_nothing_at_rest_and_wake_when_what_they_watch_changes() {
    use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
    use hecate_types::{Health, HealthCheck};

    const GATES: usize = 50;
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    // Flux's kinds are served before the controller starts: it watches them from then.
    applied_kustomization(&h, "app", "main@sha1:1").await;
    // Half watch the Kustomization (health followed from the watch), half nothing.
    for i in 0..GATES {
        let mut spec = gate_spec(i % 2 == 0, &[], false);
        if i % 2 == 1 {
            spec.watch = vec![HealthCheck {
                uses: "flux".into(),
                with: Some(
                    serde_json::json!({"resources": [{"kind": "Kustomization", "name": "app"}]}),
                ),
            }];
        }
        create_gate(&h, &format!("idle-{i}"), spec).await;
    }
    let controller = Controller::start(&h.env, &ns, &[]).await;
    let health_of = |name: &'static str| {
        let api = h.env.api::<Gate>();
        async move {
            api.get(name)
                .await
                .unwrap()
                .status
                .and_then(|s| s.health)
                .map(|health| health.status)
        }
    };
    eventually(Duration::from_secs(30), "every Gate reconciled", || async {
        let gates = h.env.api::<Gate>().list(&Default::default()).await.unwrap();
        gates
            .items
            .iter()
            .all(|g| g.status.as_ref().is_some_and(|s| !s.conditions.is_empty()))
            .then_some(())
    })
    .await;
    assert_eq!(health_of("idle-1").await, Some(Health::Healthy));
    tokio::time::sleep(Duration::from_secs(2)).await;

    let before = controller.requests_sent().await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let spent = controller.requests_sent().await - before;
    eprintln!("{GATES} idle Gates: {spent} requests in 60 s");
    // At rest a Gate is read from the watches, its Flux objects too, and its status is
    // not rewritten to say it looked: nothing per Gate. Slack for a watch reconnecting.
    assert!(
        spent <= 5.0,
        "{spent} requests in 60 s for {GATES} idle Gates"
    );

    // What they watch failing wakes them by the watch, long before any tick.
    let failed = Instant::now();
    standins::report_failed(
        &h.env.admin,
        KUSTOMIZATION,
        &ns,
        "app",
        "main@sha1:2",
        "Deployment/app: 0 of 8 replicas ready",
    )
    .await
    .unwrap();
    eventually(
        Duration::from_secs(20),
        "idle-1 no longer Healthy",
        || async {
            health_of("idle-1")
                .await
                .filter(|health| *health != Health::Healthy)
                .map(|_| ())
        },
    )
    .await;
    let woke = failed.elapsed();
    eprintln!("a failing Kustomization reached its Gates' health in {woke:?}");
    assert!(woke < Duration::from_secs(10), "took {woke:?}");
    assert_eq!(
        health_of("idle-0").await,
        Some(Health::NotApplicable),
        "a Gate watching nothing is untouched"
    );
}
