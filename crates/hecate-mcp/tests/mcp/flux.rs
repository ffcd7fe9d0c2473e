//! `preflight`, `flux_resources` and the Flux writes (`suspend_flux`, `resume_flux`,
//! `reconcile_flux`, only with `--allow-writes`): typed answers matching their output
//! schemas, stand-in Flux CRDs on the real API server, wiremock as Fides. Ops AC-128,
//! AC-133, AC-145, AC-148–150 as an agent meets them.

use hecate_testenv::TestEnv;
use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
use hecate_types::HealthCheck;
use kube::api::{Api, DynamicObject};
use pretty_assertions::assert_eq;
use serde_json::json;
use wiremock::MockServer;

use hecate_testenv::fides::{evidence_gate, knows_artifact, policy_check};

use crate::harness::*;

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
    evidence_gate(&env, "production", &fides.uri(), &["b1", "b2"]).await;
    bundle(&env, "b1").await;
    knows_artifact(&fides, "abcdef0123456789", 1).await;
    policy_check(&fides, json!({"compliant": true, "results": []}), 1).await;
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
