//! The API server validates our kinds with our schemas: invalid objects are refused
//! with 422 Unprocessable Entity and nothing is stored.

use hecate_testenv::TestEnv;
use hecate_types::{Bundle, Gate};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

fn gates(env: &TestEnv) -> Api<DynamicObject> {
    Api::namespaced_with(
        env.admin.clone(),
        &env.namespace,
        &ApiResource::erase::<Gate>(&()),
    )
}

fn gate(name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "hecate.dev/v1alpha1",
        "kind": "Gate",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .unwrap()
}

/// Creating `spec` fails with 422, and the message names `field`.
async fn refused(env: &TestEnv, name: &str, spec: Value, field: &str) {
    let err = gates(env)
        .create(&PostParams::default(), &gate(name, spec))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = &err else {
        panic!("not an API error: {err}")
    };
    let (code, message) = (&status.code, &status.message);
    assert_eq!(*code, 422, "{message}");
    assert!(message.contains(field), "{message} does not name {field}");
    assert!(
        gates(env).get_opt(name).await.unwrap().is_none(),
        "nothing was stored"
    );
}

#[tokio::test]
async fn a_gate_needs_admissions() {
    let env = TestEnv::new().await;
    refused(&env, "no-admits", json!({"auto": true}), "spec.admits").await;
    refused(&env, "empty-admits", json!({"admits": []}), "spec.admits").await;
}

#[tokio::test]
async fn a_window_time_zone_is_a_string() {
    let env = TestEnv::new().await;
    let spec = json!({
        "admits": [{"from": {"beacon": "app"}}],
        "windows": [{"schedule": "0 9 * * 1-5", "duration": "8h", "timeZone": 1}],
    });
    refused(&env, "bad-window", spec, "spec.windows[0].timeZone").await;
}

#[tokio::test]
async fn an_artifact_has_exactly_one_member() {
    let env = TestEnv::new().await;
    let bundles = Api::<DynamicObject>::namespaced_with(
        env.admin.clone(),
        &env.namespace,
        &ApiResource::erase::<Bundle>(&()),
    );
    for (name, artifact) in [
        (
            "two-members",
            json!({"image": {"repo": "ghcr.io/acme/app"}, "chart": {"repo": "oci://acme", "version": "1.0.0"}}),
        ),
        ("no-member", json!({})),
    ] {
        let bundle: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "hecate.dev/v1alpha1",
            "kind": "Bundle",
            "metadata": {"name": name},
            "spec": {"beacon": "app", "artifacts": [artifact]},
        }))
        .unwrap();
        let err = bundles
            .create(&PostParams::default(), &bundle)
            .await
            .unwrap_err();
        let kube::Error::Api(status) = &err else {
            panic!("not an API error: {err}")
        };
        assert_eq!(status.code, 422, "{name}: {}", status.message);
        assert!(
            status.message.contains("spec.artifacts[0]"),
            "{name}: {}",
            status.message
        );
    }
}

#[tokio::test]
async fn evidence_names_a_fides_environment_by_uuid() {
    let env = TestEnv::new().await;
    let spec = json!({
        "admits": [{"from": {"beacon": "app"}}],
        "evidence": {"fidesEnvironment": "production"},
    });
    refused(&env, "bad-evidence", spec, "spec.evidence.fidesEnvironment").await;
}

#[tokio::test]
async fn unknown_health_is_refused_on_the_status_subresource() {
    let env = TestEnv::new().await;
    let created = gates(&env)
        .create(
            &PostParams::default(),
            &gate("health", json!({"admits": [{"from": {"beacon": "app"}}]})),
        )
        .await
        .unwrap();
    let patch = json!({"status": {"health": {"status": "Sideways"}}});
    let err = gates(&env)
        .patch_status("health", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = &err else {
        panic!("not an API error: {err}")
    };
    let (code, message) = (&status.code, &status.message);
    assert_eq!(*code, 422, "{message}");
    assert!(message.contains("status.health.status"), "{message}");
    let stored = gates(&env).get("health").await.unwrap();
    assert_eq!(
        stored.data.get("status"),
        created.data.get("status"),
        "the status is unchanged"
    );
}

#[tokio::test]
async fn a_realistic_gate_from_the_spec_is_accepted() {
    // Written from spec/api-types.md, not from our Rust types: if our schema were
    // stricter than the reference's, this would fail.
    let env = TestEnv::new().await;
    let spec = json!({
        "admits": [{"from": {"beacon": "app"}, "after": ["staging"], "requireApproval": true}],
        "passage": {"steps": [
            {"uses": "git-clone", "as": "repo", "with": {"repo": "https://github.com/acme/config"}},
            {"uses": "flux-wait", "timeout": "10m", "continueOnError": false, "if": "always", "with": {"timeout": 600}},
        ]},
        "watch": [{"uses": "flux", "with": ["any", "json", 1]}],
        "verify": [{"uses": "flagger"}],
        "auto": false,
        "windows": [{"schedule": "@daily", "duration": "1.5h", "timeZone": "America/New_York", "deny": true}],
        "suspend": false,
        "vars": [{"name": "cluster", "value": "prod"}],
        "retain": 0,
        "evidence": {"fidesEnvironment": "6F1C2A9E-4B7D-4E2A-9C3F-8D5E1A2B3C4D", "serverURL": "https://fides.example", "credentialsRef": {"name": "fides"}},
    });
    let created = gates(&env)
        .create(&PostParams::default(), &gate("production", spec.clone()))
        .await
        .unwrap();
    assert_eq!(created.data["spec"], spec);
}
