//! `evidence` with a Gate bound to Fides (wiremock as Fides): the verdict as a typed
//! answer, and an unreachable Fides as a result the model can read.

use hecate_testenv::TestEnv;
use hecate_types::{EvidenceConfig, LocalSecretRef};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;

const TRAIL: &str = "91b2ffff-0000-4000-8000-00000000abcd";

/// Gate `staging` bound to `fides`, its credentials Secret, and Bundle b1 whose image
/// digest Fides knows on `TRAIL`.
async fn bound_to(env: &TestEnv, fides: &MockServer) {
    let mut spec = gate_spec(&[], false);
    spec.evidence = Some(EvidenceConfig {
        fides_environment: "7f3a1c2e-0000-4000-8000-000000009b04".into(),
        server_url: fides.uri(),
        credentials_ref: Some(LocalSecretRef {
            name: "fides".into(),
        }),
    });
    gate(env, "staging", spec).await;
    env.create(hecate_testenv::fixtures::usable_secret(
        "fides",
        &[("token", "t0ken")],
    ))
    .await;
    bundle(env, "b1").await;
    Mock::given(method("GET"))
        .and(path("/api/v1/search/artifacts"))
        .and(query_param("sha", "abcdef0123456789"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!([{"sha256": "abcdef0123456789", "trail_id": TRAIL}])),
        )
        .mount(fides)
        .await;
}

fn held_verdict() -> Value {
    json!({"trail_id": TRAIL, "recommendation": "hold", "approved": false, "risk_score": 45,
        "risk_level": "medium", "passed": ["CC8.1"],
        "failed": [{"control": "CC7.2", "name": "Vulnerability scanning", "reasons": ["failed vuln-scan"]}],
        "missing_evidence": [], "waived": [], "attestations": {"total": 4, "non_compliant": 1},
        "approvals": {"count": 1, "human_approvers": 1, "four_eyes": false,
            "approvers": ["olaf@acme.example"], "deployers": []},
        "segregation_of_duties": {"committer": "olaf@acme.example",
            "approvers": ["olaf@acme.example"], "deployers": [], "compliant": false,
            "violations": ["committer and approver are the same person"]},
        "summary": "Controls failed."})
}

#[tokio::test]
async fn evidence_carries_fides_verdict() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    bound_to(&env, &fides).await;
    Mock::given(method("GET"))
        .and(path(format!("/api/v1/trails/{TRAIL}/change-gate")))
        .respond_with(ResponseTemplate::new(200).set_body_json(held_verdict()))
        .mount(&fides)
        .await;
    Mock::given(path("/api/v1/search/attestations"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&fides)
        .await;
    let client = piped(server(&env, None).await, Era::Legacy).await;
    let answer = result(&client, "evidence", json!({"bundle": "b1"})).await;
    let value = structured(&answer);
    assert_eq!(value["trail"], TRAIL);
    assert_eq!(value["gate"], "staging");
    assert_eq!(value["verdict"]["recommendation"], "hold");
    assert_eq!(value["verdict"]["risk_score"], 45);
    assert_eq!(
        value["verdict"]["segregation_of_duties"]["compliant"],
        false
    );

    let tools = tools(&client).await;
    let schema = tools.iter().find(|t| t.name == "evidence").unwrap();
    let schema = Value::Object(schema.output_schema.as_deref().cloned().unwrap());
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{value:#}");
}

#[tokio::test]
async fn an_unreachable_fides_is_a_result_to_read() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    bound_to(&env, &fides).await;
    Mock::given(path_regex("change-gate$"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&fides)
        .await;
    let client = piped(server(&env, None).await, Era::Legacy).await;
    let answer = result(&client, "evidence", json!({"bundle": "b1"})).await;
    assert_eq!(answer.is_error, Some(true));
    let said = text(&answer);
    assert!(
        said.starts_with("reading the change-gate verdict:"),
        "{said}"
    );
    assert!(said.contains("trying again later may work"), "{said}");
    assert_eq!(
        answer.structured_content.unwrap()["error"]["class"],
        "Unavailable"
    );
}
