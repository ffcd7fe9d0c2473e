//! Preflight: would the evidence gate let each eligible Bundle through? A real API
//! server, wiremock as Fides, every mock with the number of calls it expects. Spec ops
//! §10.2, acceptance cases AC-128–135.

use hecate_ops::Ops;
use hecate_testenv::TestEnv;
use hecate_types::{Artifact, Bundle, BundleSpec, Gate, GateStatus};
use k8s_openapi::api::core::v1::Secret;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use hecate_testenv::fides::{ENVIRONMENT as ENV, TRAIL, evidence_gate};

use crate::fixtures::*;

const DIGEST: &str = "sha256:abcdef0123456789";

/// `testGate(production)` + `withEvidence(fides)` + `status.eligible = [b1]`, the
/// Secret, and `b1` pinning the digest (or not).
async fn setup(env: &TestEnv, fides: Option<&MockServer>, digest: bool) {
    match fides {
        Some(fides) => {
            evidence_gate(env, "production", &fides.uri(), &["b1"]).await;
        }
        None => {
            let mut gate: Gate = gate(env, "production", gate_spec(&[], false)).await;
            gate.status = Some(GateStatus {
                eligible: vec!["b1".into()],
                ..GateStatus::default()
            });
            env.write_status(&gate).await;
        }
    }
    let artifacts = if digest {
        vec![Artifact::image("ghcr.io/acme/app", "1.0.0", DIGEST)]
    } else {
        vec![Artifact::commit(
            "https://github.com/acme/app",
            "0123456789abcdef",
        )]
    };
    env.create(Bundle::new(
        "b1",
        BundleSpec {
            beacon: "app".into(),
            artifacts,
            ..BundleSpec::default()
        },
    ))
    .await;
}

fn knows_the_trail(known: bool) -> Mock {
    let rows = if known {
        json!([{"sha256": "abcdef0123456789", "trail_id": TRAIL}])
    } else {
        json!([])
    };
    Mock::given(method("GET"))
        .and(path("/api/v1/search/artifacts"))
        .and(query_param("sha", "abcdef0123456789"))
        .respond_with(ResponseTemplate::new(200).set_body_json(rows))
}

fn policy_check(status: u16, body: Value) -> Mock {
    Mock::given(method("GET"))
        .and(path(format!("/api/v1/environments/{ENV}/policy-check")))
        .and(query_param("trail", TRAIL))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
}

async fn preflight(env: &TestEnv) -> Vec<hecate_ops::Preflight> {
    Ops::new(env.admin.clone())
        .preflight(&env.namespace, "production")
        .await
        .unwrap()
}

#[tokio::test]
async fn ac128_preflight_says_a_bundle_would_cross() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, Some(&fides), true).await;
    knows_the_trail(true).expect(1).mount(&fides).await;
    policy_check(200, json!({"compliant": true, "results": []}))
        .expect(1)
        .mount(&fides)
        .await;
    let verdicts = preflight(&env).await;
    assert_eq!(verdicts.len(), 1);
    assert_eq!(
        (
            verdicts[0].bundle.as_str(),
            verdicts[0].compliant,
            verdicts[0].unknown.as_str()
        ),
        ("b1", true, "")
    );
}

#[tokio::test]
async fn ac129_preflight_names_what_is_missing() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, Some(&fides), true).await;
    knows_the_trail(true).expect(1).mount(&fides).await;
    policy_check(
        200,
        json!({"compliant": false, "trail_id": TRAIL, "results": [
            {"policy": "change-control", "applies": true, "missing": ["servicenow-change"]},
            {"policy": "sox", "applies": true, "missing": ["servicenow-change", "sbom"]},
        ]}),
    )
    .expect(1)
    .mount(&fides)
    .await;
    let verdict = &preflight(&env).await[0];
    assert!(!verdict.compliant);
    assert_eq!(verdict.missing, ["sbom", "servicenow-change"]);
    assert_eq!(verdict.policies, ["change-control", "sox"]);
}

#[tokio::test]
async fn ac130_preflight_ignores_a_policy_that_does_not_apply() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, Some(&fides), true).await;
    knows_the_trail(true).expect(1).mount(&fides).await;
    policy_check(
        200,
        json!({"compliant": true, "results": [{"policy": "pci", "applies": false, "missing": ["pci-scan"]}]}),
    )
    .expect(1)
    .mount(&fides)
    .await;
    let verdict = &preflight(&env).await[0];
    assert!(verdict.compliant);
    assert!(verdict.missing.is_empty() && verdict.policies.is_empty());
}

#[tokio::test]
async fn ac131_preflight_asks_about_the_gates_environment_and_the_bundles_trail() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, Some(&fides), true).await;
    knows_the_trail(true).expect(1).mount(&fides).await;
    // Any policy check at all, so the one made is counted whatever its path.
    Mock::given(method("GET"))
        .and(wiremock::matchers::path_regex("/policy-check$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"compliant": true})))
        .expect(1)
        .mount(&fides)
        .await;
    preflight(&env).await;
    let requests = fides.received_requests().await.unwrap();
    let checks: Vec<String> = requests
        .iter()
        .filter(|r| r.url.path().ends_with("/policy-check"))
        .map(|r| format!("{}?{}", r.url.path(), r.url.query().unwrap_or_default()))
        .collect();
    assert_eq!(checks.len(), 1);
    assert!(
        checks[0].contains(ENV) && checks[0].contains(TRAIL),
        "{}",
        checks[0]
    );
    for request in &requests {
        assert_eq!(
            request.headers.get("authorization").unwrap(),
            "Bearer t0ken"
        );
    }
}

#[tokio::test]
async fn ac132_preflight_does_not_call_anyone_when_the_gate_does_not_gate_on_evidence() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, None, true).await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&fides)
        .await;
    assert_eq!(preflight(&env).await, []);
}

#[tokio::test]
async fn ac133_preflight_says_unknown_rather_than_compliant_with_no_trail_yet() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, Some(&fides), true).await;
    knows_the_trail(false).expect(1).mount(&fides).await;
    policy_check(200, json!({"compliant": true}))
        .expect(0)
        .mount(&fides)
        .await;
    let verdict = &preflight(&env).await[0];
    assert!(!verdict.compliant);
    assert!(
        verdict.unknown.contains("no Fides trail"),
        "{}",
        verdict.unknown
    );
}

#[tokio::test]
async fn ac134_preflight_says_unknown_rather_than_compliant_when_fides_refuses() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, Some(&fides), true).await;
    knows_the_trail(true).expect(1).mount(&fides).await;
    policy_check(500, json!({"error": "boom"}))
        .expect(1)
        .mount(&fides)
        .await;
    let verdict = &preflight(&env).await[0];
    assert!(!verdict.compliant);
    assert!(
        verdict.unknown.contains("asking Fides"),
        "{}",
        verdict.unknown
    );
}

#[tokio::test]
async fn ac135_preflight_reports_a_bundle_with_no_digest() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, Some(&fides), false).await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&fides)
        .await;
    let verdict = &preflight(&env).await[0];
    assert!(!verdict.compliant);
    assert!(
        verdict.unknown.contains("no image digest"),
        "{}",
        verdict.unknown
    );
}

#[tokio::test]
async fn preflight_says_unknown_for_each_bundle_when_fides_cannot_be_dialled() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, Some(&fides), true).await;
    // The Secret loses its token: Fides cannot be asked at all.
    let secrets: kube::Api<Secret> = env.api();
    secrets.delete("fides", &Default::default()).await.unwrap();
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&fides)
        .await;
    let verdicts = preflight(&env).await;
    assert_eq!(verdicts.len(), 1);
    assert!(!verdicts[0].compliant);
    assert!(
        verdicts[0]
            .unknown
            .starts_with("Fides is not reachable: reading Secret"),
        "{}",
        verdicts[0].unknown
    );
    // A Gate that is not there is a NotFound.
    let error = Ops::new(env.admin.clone())
        .preflight(&env.namespace, "ghost")
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error}");
}
