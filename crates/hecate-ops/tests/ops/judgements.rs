//! Explain and Overview over objects in a real API server, statuses written through
//! the status subresource.

use hecate_ops::{BlockerKind, Ops, Scope, State};
use hecate_testenv::TestEnv;
use hecate_types::{GateOccupant, GateStatus, Health, HealthReport, PassagePhase};
use pretty_assertions::assert_eq;

use crate::fixtures::*;

fn kinds(blockers: &[hecate_ops::Blocker]) -> Vec<BlockerKind> {
    blockers.iter().map(|b| b.kind).collect()
}

/// dev → staging → production (approval): b1 cleared dev and staging and was approved
/// for production by carol; b2 cleared dev; b3 is new. staging is crossing b2.
async fn pipeline(env: &TestEnv) {
    gate(env, "dev", gate_spec(&[], false)).await;
    gate(env, "staging", gate_spec(&["dev"], false)).await;
    let mut production = gate(env, "production", gate_spec(&["staging"], true)).await;
    let bundles = bundles_in_order(env, &["b1", "b2", "b3"]).await;
    bundle_status(
        env,
        bundles[0].clone(),
        &["dev", "staging"],
        &[("production", "carol")],
    )
    .await;
    bundle_status(env, bundles[1].clone(), &["dev"], &[]).await;
    passage(env, "staging-b2", "staging", "b2", PassagePhase::Running).await;
    passage(
        env,
        "production-b0",
        "production",
        "b0",
        PassagePhase::Failed,
    )
    .await;
    production.status = Some(GateStatus {
        current: Some(GateOccupant {
            bundle: "b0".into(),
            digest: String::new(),
            passage: "production-a".into(),
            entered_at: now(),
            actor: "bob".into(),
            verified: None,
        }),
        health: Some(HealthReport {
            status: Health::Degraded,
            issues: vec!["Kustomization app: Ready=False".into()],
            details: None,
            observed_at: None,
            since: None,
        }),
        ..GateStatus::default()
    });
    env.write_status(&production).await;
}

#[tokio::test]
async fn explain_judges_what_the_api_server_holds() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let ops = Ops::new(env.admin.clone());
    let ns = &env.namespace;

    let dev = ops.explain(ns, "dev").await.unwrap();
    assert_eq!(dev.state, State::Ready);
    assert_eq!(dev.eligible, ["b3", "b2", "b1"], "newest first");

    let staging = ops.explain(ns, "staging").await.unwrap();
    assert_eq!(staging.state, State::Crossing);
    assert_eq!(staging.summary, "crossing b2");

    let production = ops.explain(ns, "production").await.unwrap();
    assert_eq!(production.state, State::Failed, "{}", production.summary);
    assert_eq!(production.current.as_deref(), Some("b0"));
    assert_eq!(production.health, Some(Health::Degraded));
    assert_eq!(production.eligible, ["b1"]);
    assert_eq!(
        kinds(&production.blockers),
        [
            BlockerKind::PassageFailed,
            BlockerKind::Unhealthy,
            BlockerKind::Manual
        ]
    );
    assert!(
        production.blockers[2].detail.contains("carol"),
        "{}",
        production.blockers[2].detail
    );
    let waiting: Vec<(&str, &str)> = production
        .waiting
        .iter()
        .map(|w| (w.bundle.as_str(), w.reason.as_str()))
        .collect();
    assert_eq!(
        waiting,
        [
            ("b3", "has not cleared staging"),
            ("b2", "has not cleared staging")
        ]
    );
}

#[tokio::test]
async fn overview_of_one_namespace_and_of_several() {
    let env = TestEnv::new().await;
    let other = TestEnv::new().await;
    pipeline(&env).await;
    gate(&other, "dev", gate_spec(&[], false)).await;
    let ops = Ops::new(env.admin.clone());

    let one = ops
        .overview(&Scope::Namespaces(vec![env.namespace.clone()]))
        .await
        .unwrap();
    assert_eq!(one.namespaces.len(), 1);
    let gates: Vec<(&str, State)> = one.namespaces[0]
        .gates
        .iter()
        .map(|g| (g.name.as_str(), g.state))
        .collect();
    // Upstream first, as the pipeline runs — not by name.
    assert_eq!(
        gates,
        [
            ("dev", State::Ready),
            ("staging", State::Crossing),
            ("production", State::Failed)
        ]
    );
    assert_eq!(
        one.namespaces[0].gates[1].running.as_deref(),
        Some("staging-b2")
    );
    assert_eq!(
        (
            one.totals.gates,
            one.totals.degraded,
            one.totals.unknown,
            one.totals.running,
            one.totals.failed
        ),
        (3, 1, 2, 1, 1)
    );

    let both = ops
        .overview(&Scope::Namespaces(vec![
            env.namespace.clone(),
            other.namespace.clone(),
        ]))
        .await
        .unwrap();
    let namespaces: Vec<&str> = both
        .namespaces
        .iter()
        .map(|n| n.namespace.as_str())
        .collect();
    let mut expected = vec![env.namespace.as_str(), other.namespace.as_str()];
    expected.sort();
    assert_eq!(namespaces, expected);
    assert_eq!(both.totals.gates, 4);

    let none = ops.overview(&Scope::Namespaces(vec![])).await.unwrap();
    assert!(none.namespaces.is_empty());
    assert_eq!(none.activity.len(), 14);

    let all = ops.overview(&Scope::All).await.unwrap();
    assert!(all.namespaces.iter().any(|n| n.namespace == env.namespace));
    assert!(
        all.namespaces
            .iter()
            .any(|n| n.namespace == other.namespace)
    );
}

/// A Gate in `env`'s namespace of `health`, entered `entries` times at `at`.
async fn gate_with_history(
    env: &TestEnv,
    name: &str,
    health: Health,
    entries: usize,
    at: jiff::Timestamp,
) {
    let mut created = gate(env, name, gate_spec(&[], false)).await;
    created.status = Some(GateStatus {
        health: Some(HealthReport {
            status: health,
            issues: vec![],
            details: None,
            observed_at: None,
            since: None,
        }),
        history: (0..entries)
            .map(|i| GateOccupant {
                bundle: format!("b{i}"),
                digest: String::new(),
                passage: format!("{name}-{i}"),
                entered_at: hecate_types::Time(at),
                actor: String::new(),
                verified: None,
            })
            .collect(),
        ..GateStatus::default()
    });
    env.write_status(&created).await;
}

/// AC-136, AC-141, AC-143 through ops and the API server: the Overview of the
/// namespaces asked for holds nothing of another, however much is there — not its
/// Gates, not its health or failures in the totals, not its crossings in the activity
/// — and of no namespace at all it is empty, not null. (Which namespaces a caller may
/// read is the surface's question: the API's overview route asks it, see hecate-api's
/// tests.)
#[tokio::test]
async fn ac136_ac141_ac143_the_overview_holds_only_the_namespaces_asked_for() {
    let acme = TestEnv::new().await;
    let finance = TestEnv::new().await;
    let t0: jiff::Timestamp = "2026-08-11T12:00:00Z".parse().unwrap();
    gate_with_history(&acme, "production", Health::Healthy, 1, t0).await;
    gate_with_history(&finance, "payments", Health::Degraded, 2, t0).await;
    let mut failed = passage(
        &finance,
        "payments-1",
        "payments",
        "b9",
        PassagePhase::Failed,
    )
    .await;
    failed.status.as_mut().unwrap().finished_at = Some(hecate_types::Time(t0));
    finance.write_status(&failed).await;
    let ops = Ops::new(acme.admin.clone()).with_clock(move || t0);

    // The data is there to be seen when asked for.
    let both = ops
        .overview(&Scope::Namespaces(vec![
            acme.namespace.clone(),
            finance.namespace.clone(),
        ]))
        .await
        .unwrap();
    assert_eq!(
        (
            both.totals.gates,
            both.totals.degraded,
            both.totals.failed,
            both.activity[13].crossed,
            both.activity[13].failed
        ),
        (2, 1, 1, 3, 1)
    );

    let only_acme = ops
        .overview(&Scope::Namespaces(vec![acme.namespace.clone()]))
        .await
        .unwrap();
    let namespaces: Vec<&str> = only_acme
        .namespaces
        .iter()
        .map(|n| n.namespace.as_str())
        .collect();
    assert_eq!(namespaces, [acme.namespace.as_str()]);
    assert_eq!(only_acme.namespaces[0].gates[0].name, "production");
    assert_eq!(
        (
            only_acme.totals.gates,
            only_acme.totals.healthy,
            only_acme.totals.degraded,
            only_acme.totals.failed
        ),
        (1, 1, 0, 0),
        "AC-136"
    );
    let today = &only_acme.activity[13];
    assert_eq!(
        (today.date.as_str(), today.crossed, today.failed),
        ("2026-08-11", 1, 0),
        "AC-143"
    );
    let json = serde_json::to_string(&only_acme).unwrap();
    assert!(!json.contains("payments"), "{json}");
    assert!(!json.contains(&finance.namespace), "{json}");

    let nothing = ops.overview(&Scope::Namespaces(vec![])).await.unwrap();
    let json = serde_json::to_value(&nothing).unwrap();
    assert_eq!(json["namespaces"], serde_json::json!([]), "AC-141");
    assert_eq!(nothing.totals.gates, 0);
    assert_eq!(nothing.activity.len(), 14);
    assert!(nothing.activity.iter().all(|d| d.crossed + d.failed == 0));
}

/// A Passage of `gate` that has not started, created (by its `hecate.dev/created-at`)
/// at `created`.
async fn pending_since(env: &TestEnv, name: &str, gate: &str, created: jiff::Timestamp) {
    let mut passage = hecate_types::Passage::new(
        name,
        hecate_types::PassageSpec {
            gate: gate.into(),
            bundle: "b1".into(),
            steps: vec![hecate_types::Step {
                uses: "flux-wait".into(),
                ..hecate_types::Step::default()
            }],
            ..hecate_types::PassageSpec::default()
        },
    );
    passage.metadata.annotations = Some(
        [(
            hecate_types::wellknown::ANNOTATION_CREATED_AT.to_string(),
            created.to_string(),
        )]
        .into(),
    );
    env.create(passage).await;
}

/// Issue #20: ops says until when its explanations hold with no object changed — the
/// earliest instant a time rule flips, over every Gate asked about: here a crossing
/// that has not started (named `NotStarted` 2 minutes after its creation) before a
/// window that closes later. At that instant the explanation has changed, and the next
/// instant is the window's; with nothing timed, there is none.
#[tokio::test]
async fn explanations_say_when_time_alone_changes_them() {
    let env = TestEnv::new().await;
    let t0: jiff::Timestamp = "2026-08-11T12:00:00Z".parse().unwrap();
    let seconds = jiff::SignedDuration::from_secs;
    gate(&env, "staging", gate_spec(&[], false)).await;
    let mut windowed = gate_spec(&[], false);
    // Open from 11:00 for 70 minutes: it closes at t0 + 10 min.
    windowed.windows = vec![hecate_types::Window {
        schedule: "0 11 * * *".into(),
        duration: "70m".into(),
        time_zone: String::new(),
        deny: false,
    }];
    gate(&env, "production", windowed).await;
    bundle(&env, "b1").await;
    pending_since(&env, "staging-1", "staging", t0 - seconds(30)).await;
    let scope = Scope::Namespaces(vec![env.namespace.clone()]);
    let summary = |at: &hecate_ops::TimedExplanations, gate: &str| {
        at.explanations
            .iter()
            .find(|x| x.gate == gate)
            .map(|x| (x.summary.clone(), kinds(&x.blockers)))
            .unwrap()
    };

    let before = Ops::new(env.admin.clone())
        .with_clock(move || t0)
        .explanations_until(&scope)
        .await
        .unwrap();
    assert_eq!(before.at, t0);
    assert_eq!(
        before.unchanged_until,
        Some(t0 + hecate_ops::rules::explain::STALL_AFTER - seconds(30)),
        "the stall, 90 s on, comes before the window closes"
    );
    assert_eq!(
        summary(&before, "staging"),
        (
            "crossing b1: staging-1 is about to start".to_string(),
            vec![]
        )
    );

    let flip = before.unchanged_until.unwrap();
    let after = Ops::new(env.admin.clone())
        .with_clock(move || flip)
        .explanations_until(&scope)
        .await
        .unwrap();
    assert_eq!(
        summary(&after, "staging"),
        (
            "crossing b1, but staging-1 has not started".to_string(),
            vec![BlockerKind::NotStarted]
        )
    );
    assert_eq!(
        after.unchanged_until,
        Some(t0 + seconds(600)),
        "next, the window closing"
    );
    assert_eq!(
        after.explanations,
        Ops::new(env.admin.clone())
            .with_clock(move || flip)
            .explanations(&scope)
            .await
            .unwrap(),
        "the same explanations as explanations() gives"
    );

    // Nothing timed: no instant.
    let plain = TestEnv::new().await;
    gate(&plain, "dev", gate_spec(&[], false)).await;
    let untimed = Ops::new(plain.admin.clone())
        .with_clock(move || t0)
        .explanations_until(&Scope::Namespaces(vec![plain.namespace.clone()]))
        .await
        .unwrap();
    assert_eq!(
        (untimed.explanations.len(), untimed.unchanged_until),
        (1, None)
    );
}
