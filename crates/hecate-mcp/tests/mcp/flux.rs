//! `preflight`, `flux_resources` and the Flux writes (`suspend_flux`, `resume_flux`,
//! `reconcile_flux`, only with `--allow-writes`): typed answers matching their output
//! schemas, stand-in Flux CRDs on the real API server, wiremock as Fides. Ops AC-128,
//! AC-133, AC-145, AC-148–150 as an agent meets them.

use std::collections::BTreeMap;

use hecate_testenv::TestEnv;
use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
use hecate_types::{EvidenceConfig, Gate, GateStatus, HealthCheck, LocalSecretRef};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ObjectMeta};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;

const ENV: &str = "7f3a1c2e-0000-4000-8000-000000009b04";
const TRAIL: &str = "91b2ffff-0000-4000-8000-00000000abcd";

fn schema_of(tools: &[rmcp::model::Tool], name: &str) -> Value {
    let tool = tools.iter().find(|t| t.name == name).unwrap();
    Value::Object(tool.output_schema.as_deref().cloned().unwrap())
}

fn valid(tools: &[rmcp::model::Tool], name: &str, value: &Value) {
    let validator = jsonschema::validator_for(&schema_of(tools, name)).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{value:#}");
}

#[tokio::test]
async fn flux_objects_are_read_and_operated_only_with_writes() {
    let env = TestEnv::new().await;
    standins::install(&env.admin, &[KUSTOMIZATION])
        .await
        .unwrap();
    let objects: Api<DynamicObject> = Api::namespaced_with(
        env.admin.clone(),
        &env.namespace,
        &KUSTOMIZATION.api_resource(),
    );
    for name in ["podinfo", "someone-elses"] {
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": KUSTOMIZATION.api_version(), "kind": "Kustomization",
            "metadata": {"name": name, "namespace": env.namespace}, "spec": {},
        }))
        .unwrap();
        objects.create(&Default::default(), &object).await.unwrap();
        standins::report_applied(
            &env.admin,
            KUSTOMIZATION,
            &env.namespace,
            name,
            "main@sha1:abc",
        )
        .await
        .unwrap();
    }
    let mut spec = gate_spec(&[], false);
    spec.watch = vec![HealthCheck {
        uses: "flux".into(),
        with: Some(json!({"resources": [{"kind": "Kustomization", "name": "podinfo"}]})),
    }];
    gate(&env, "production", spec).await;

    // Read-only: the list is there (AC-145), the writes are not.
    let read_only = piped(server(&env, None).await, Era::Modern).await;
    let listed = result(&read_only, "flux_resources", json!({"gate": "production"})).await;
    let value = structured(&listed);
    valid(&tools(&read_only).await, "flux_resources", &value);
    assert_eq!(value["resources"].as_array().unwrap().len(), 1);
    assert_eq!(
        (
            value["resources"][0]["name"].as_str(),
            value["resources"][0]["health"].as_str()
        ),
        (Some("podinfo"), Some("Healthy"))
    );
    assert!(
        text(&listed).contains("Kustomization/podinfo: Healthy at main@sha1:abc"),
        "{}",
        text(&listed)
    );
    let refused = call(
        &read_only,
        "suspend_flux",
        json!({"gate": "production", "kind": "Kustomization", "name": "podinfo"}),
    )
    .await
    .unwrap_err();
    assert_eq!(error_code(&refused), -32602);

    // With writes: suspend, resume, reconcile (AC-149, AC-150), each answer typed.
    let writing = piped(server(&env, Some("ada")).await, Era::Modern).await;
    let tools = tools(&writing).await;
    let target = json!({"gate": "production", "kind": "Kustomization", "name": "podinfo"});
    let suspended = structured(&result(&writing, "suspend_flux", target.clone()).await);
    valid(&tools, "suspend_flux", &suspended);
    assert_eq!(
        (suspended["suspended"].as_bool(), suspended["by"].as_str()),
        (Some(true), Some("mcp:ada"))
    );
    let object = objects.get("podinfo").await.unwrap();
    assert_eq!(object.data.pointer("/spec/suspend"), Some(&json!(true)));
    let resumed = structured(&result(&writing, "resume_flux", target.clone()).await);
    valid(&tools, "resume_flux", &resumed);
    assert_eq!(resumed["suspended"], false);
    let reconciled = structured(&result(&writing, "reconcile_flux", target).await);
    valid(&tools, "reconcile_flux", &reconciled);
    let object = objects.get("podinfo").await.unwrap();
    assert_eq!(
        object.metadata.annotations.unwrap_or_default()["reconcile.fluxcd.io/requestedAt"],
        reconciled["requestedAt"].as_str().unwrap()
    );

    // AC-148: what the Gate does not watch is a refusal to report, and stays as it was.
    let refused = result(
        &writing,
        "suspend_flux",
        json!({"gate": "production", "kind": "Kustomization", "name": "someone-elses"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    let problem = &refused.structured_content.clone().unwrap()["error"];
    assert_eq!(
        (problem["class"].as_str(), problem["code"].as_str()),
        (Some("Refused"), Some("NotWatched"))
    );
    let object = objects.get("someone-elses").await.unwrap();
    assert_eq!(object.data.pointer("/spec/suspend"), None);
    // A kind that is not one is corrected, not sent.
    let invalid = result(
        &writing,
        "reconcile_flux",
        json!({"gate": "production", "kind": "Kustom/ization", "name": "podinfo"}),
    )
    .await;
    assert_eq!(
        invalid.structured_content.unwrap()["error"]["class"],
        "InvalidArguments"
    );
}

#[tokio::test]
async fn preflight_answers_a_typed_verdict_per_eligible_bundle() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    let mut spec = gate_spec(&[], false);
    spec.evidence = Some(EvidenceConfig {
        fides_environment: ENV.into(),
        server_url: fides.uri(),
        credentials_ref: Some(LocalSecretRef {
            name: "fides".into(),
        }),
    });
    let mut production: Gate = gate(&env, "production", spec).await;
    production.status = Some(GateStatus {
        eligible: vec!["b1".into(), "b2".into()],
        ..GateStatus::default()
    });
    env.write_status(&production).await;
    env.create(Secret {
        metadata: ObjectMeta {
            name: Some("fides".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "token".to_string(),
            ByteString(b"t0ken".to_vec()),
        )])),
        ..Secret::default()
    })
    .await;
    bundle(&env, "b1").await;
    Mock::given(method("GET"))
        .and(path("/api/v1/search/artifacts"))
        .and(query_param("sha", "abcdef0123456789"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!([{"sha256": "abcdef0123456789", "trail_id": TRAIL}])),
        )
        .expect(1)
        .mount(&fides)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/api/v1/environments/{ENV}/policy-check")))
        .and(query_param("trail", TRAIL))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"compliant": true, "results": []})),
        )
        .expect(1)
        .mount(&fides)
        .await;
    let client = piped(server(&env, None).await, Era::Modern).await;
    let answer = result(&client, "preflight", json!({"gate": "production"})).await;
    let value = structured(&answer);
    valid(&tools(&client).await, "preflight", &value);
    assert_eq!(
        value["bundles"],
        json!([
            {"bundle": "b1", "compliant": true},
            {"bundle": "b2", "compliant": false, "unknown": "this Bundle could not be read"},
        ])
    );
    assert_eq!(
        text(&answer),
        "b1: evidence ready\nb2: evidence unknown — this Bundle could not be read"
    );
}
