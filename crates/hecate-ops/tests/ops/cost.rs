//! Each call costs a bounded number of requests, however many objects there are: one
//! LIST or GET per kind, never one request per object.

use hecate_ops::{Ops, Person, Scope};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Bundle, PassagePhase};
use pretty_assertions::assert_eq;

use crate::fixtures::*;

#[tokio::test]
async fn explain_and_overview_cost_three_requests_at_any_size() {
    let env = TestEnv::new().await;
    for name in ["dev", "staging", "production"] {
        gate(&env, name, gate_spec(&[], false)).await;
    }
    for i in 0..40 {
        env.create(Bundle::new(&format!("b{i}"), bundle_spec()))
            .await;
        passage(
            &env,
            &format!("dev-b{i}"),
            "dev",
            &format!("b{i}"),
            PassagePhase::Succeeded,
        )
        .await;
    }
    let (client, log) = env
        .endpoint()
        .recording_client(Identity::Admin)
        .await
        .unwrap();
    let ops = Ops::new(client);
    let ns = &env.namespace;

    ops.explain(ns, "staging").await.unwrap();
    let mut requests = log.requests();
    requests.sort();
    assert_eq!(
        requests,
        [
            // Only the Bundles of the Beacon the Gate admits (DECISIONS 42).
            format!(
                "GET /apis/hecate.dev/v1alpha1/namespaces/{ns}/bundles?&fieldSelector=spec.beacon%3Dapp"
            ),
            format!("GET /apis/hecate.dev/v1alpha1/namespaces/{ns}/gates/staging"),
            // Only the Gate's Passages: the API server selects them (DECISIONS 42).
            format!(
                "GET /apis/hecate.dev/v1alpha1/namespaces/{ns}/passages?&fieldSelector=spec.gate%3Dstaging"
            ),
        ]
    );

    // What the caller's own promote would meet reads what Explain reads.
    log.clear();
    ops.your_crossings(ns, "staging", &Person::named("alice"))
        .await
        .unwrap();
    let mut again = log.requests();
    again.sort();
    assert_eq!(again, requests, "your_crossings costs what explain does");

    log.clear();
    let overview = ops
        .overview(&Scope::Namespaces(vec![ns.clone()]))
        .await
        .unwrap();
    assert_eq!(overview.totals.gates, 3);
    assert_eq!(log.requests().len(), 3, "{:?}", log.requests());

    log.clear();
    ops.overview(&Scope::All).await.unwrap();
    assert_eq!(log.requests().len(), 3, "{:?}", log.requests());
    assert!(
        log.requests()
            .iter()
            .all(|r| r.starts_with("GET /apis/hecate.dev/v1alpha1/")),
        "{:?}",
        log.requests()
    );

    log.clear();
    ops.namespaces().await.unwrap();
    assert_eq!(log.requests().len(), 2, "{:?}", log.requests());
}

/// Preflight reads the Gate and one LIST of its admitted Beacon's Bundles (narrowed
/// by the API server, as Explain's), never one request per eligible Bundle.
#[tokio::test]
async fn preflight_costs_the_gate_and_one_narrowed_list() {
    use hecate_testenv::fides::{evidence_gate, knows_artifact, policy_check};
    let env = TestEnv::new().await;
    let fides = wiremock::MockServer::start().await;
    let eligible: Vec<String> = (0..5).map(|i| format!("b{i}")).collect();
    let names: Vec<&str> = eligible.iter().map(String::as_str).collect();
    evidence_gate(&env, "production", &fides.uri(), &names).await;
    for name in &names {
        env.create(Bundle::new(name, bundle_spec())).await;
    }
    // Some other Beacon's Bundle, which the Gate does not admit.
    let mut other = bundle_spec();
    other.beacon = "other".into();
    env.create(Bundle::new("elsewhere", other)).await;
    // Fides is asked twice per eligible Bundle, whatever the cluster costs.
    knows_artifact(&fides, "abcdef0123456789", 5).await;
    policy_check(&fides, serde_json::json!({"compliant": true}), 5).await;
    let (client, log) = env
        .endpoint()
        .recording_client(Identity::Admin)
        .await
        .unwrap();
    let ns = &env.namespace;
    let verdicts = Ops::new(client).preflight(ns, "production").await.unwrap();
    assert_eq!(verdicts.len(), 5);
    assert!(verdicts.iter().all(|v| v.compliant), "{verdicts:?}");
    let mut requests = log.requests();
    requests.sort();
    assert_eq!(
        requests,
        [
            // The Fides token.
            format!("GET /api/v1/namespaces/{ns}/secrets/fides"),
            format!(
                "GET /apis/hecate.dev/v1alpha1/namespaces/{ns}/bundles?&fieldSelector=spec.beacon%3Dapp"
            ),
            format!("GET /apis/hecate.dev/v1alpha1/namespaces/{ns}/gates/production"),
        ]
    );
}
