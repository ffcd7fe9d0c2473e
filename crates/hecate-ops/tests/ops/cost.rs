//! Each call costs a bounded number of requests, however many objects there are: one
//! LIST or GET per kind, never one request per object.

use hecate_ops::{Ops, Scope};
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
