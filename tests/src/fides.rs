//! A stand-in Fides for the surfaces' tests (wiremock, every answer with an expected
//! count): a Gate whose evidence Fides checks, and the two questions preflight and
//! the evidence gate ask — which trail holds an artifact, and what the environment's
//! policies say of that trail.

use hecate_types::{EvidenceConfig, Gate, GateStatus, LocalSecretRef};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::TestEnv;
use crate::fixtures::{gate, gate_spec, usable_secret};

/// The Fides environment the Gate's evidence is checked in.
pub const ENVIRONMENT: &str = "7f3a1c2e-0000-4000-8000-000000009b04";
/// The trail Fides finds an artifact in.
pub const TRAIL: &str = "91b2ffff-0000-4000-8000-00000000abcd";

/// Gate `name` (manual, admitting Beacon `app`'s Bundles) whose evidence Fides at
/// `fides` checks in [`ENVIRONMENT`], with Secret `fides` holding its token; its status
/// lists `eligible`.
pub async fn evidence_gate(env: &TestEnv, name: &str, fides: &str, eligible: &[&str]) -> Gate {
    let mut spec = gate_spec(&[], false);
    spec.evidence = Some(EvidenceConfig {
        fides_environment: ENVIRONMENT.into(),
        server_url: fides.into(),
        credentials_ref: Some(LocalSecretRef {
            name: "fides".into(),
        }),
    });
    let mut created: Gate = gate(env, name, spec).await;
    created.status = Some(GateStatus {
        eligible: eligible.iter().map(|b| b.to_string()).collect(),
        ..GateStatus::default()
    });
    env.write_status(&created).await;
    env.create(usable_secret("fides", &[("token", "t0ken")]))
        .await;
    created
}

/// Fides finds the artifact with digest `sha` in [`TRAIL`], asked exactly `times`.
pub async fn knows_artifact(fides: &MockServer, sha: &str, times: u64) {
    Mock::given(method("GET"))
        .and(path("/api/v1/search/artifacts"))
        .and(query_param("sha", sha))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!([{"sha256": sha, "trail_id": TRAIL}])),
        )
        .expect(times)
        .mount(fides)
        .await;
}

/// Fides' policy check of [`TRAIL`] in [`ENVIRONMENT`] answers `verdict`, asked
/// exactly `times`.
pub async fn policy_check(fides: &MockServer, verdict: Value, times: u64) {
    Mock::given(method("GET"))
        .and(path(format!(
            "/api/v1/environments/{ENVIRONMENT}/policy-check"
        )))
        .and(query_param("trail", TRAIL))
        .respond_with(ResponseTemplate::new(200).set_body_json(verdict))
        .expect(times)
        .mount(fides)
        .await;
}
