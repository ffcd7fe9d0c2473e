//! The Flux objects a Gate depends on: listed, suspended, resumed and asked to
//! reconcile, on a real API server with stand-in Flux CRDs whose status the test writes
//! as Flux would. Spec ops §10.3, acceptance cases AC-145–151.

use hecate_ops::{Error, Ops, RefusalCode};
use hecate_testenv::TestEnv;
use hecate_testenv::flux::{self as standins, KUSTOMIZATION, StandIn};
use hecate_types::{Health, HealthCheck};
use kube::api::{Api, DynamicObject};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::fixtures::*;

/// Flux's `HelmRelease`, stood in for like the Kustomization.
const HELM_RELEASE: StandIn = StandIn {
    group: "helm.toolkit.fluxcd.io",
    version: "v2",
    kind: "HelmRelease",
    plural: "helmreleases",
};

/// Gate `production` whose Flux check names `resources` (plus `extra` keys in `with`).
async fn watching(env: &TestEnv, resources: Value, extra: Value) {
    let mut with = json!({"resources": resources});
    if let (Some(with), Some(extra)) = (with.as_object_mut(), extra.as_object()) {
        with.extend(extra.clone());
    }
    let mut spec = gate_spec(&[], false);
    spec.watch = vec![HealthCheck {
        uses: "flux".into(),
        with: Some(with),
    }];
    gate(env, "production", spec).await;
}

fn api(env: &TestEnv, kind: StandIn) -> Api<DynamicObject> {
    Api::namespaced_with(env.admin.clone(), &env.namespace, &kind.api_resource())
}

/// Creates a Flux object (generation 1) and reports it applied at `main@sha1:abc`.
async fn applied(env: &TestEnv, kind: StandIn, name: &str, spec: Value) {
    standins::install(&env.admin, &[KUSTOMIZATION, HELM_RELEASE])
        .await
        .unwrap();
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": kind.api_version(),
        "kind": kind.kind,
        "metadata": {"name": name, "namespace": env.namespace},
        "spec": spec,
    }))
    .unwrap();
    api(env, kind)
        .create(&Default::default(), &object)
        .await
        .unwrap();
    standins::report_applied(&env.admin, kind, &env.namespace, name, "main@sha1:abc")
        .await
        .unwrap();
}

async fn suspended(env: &TestEnv, kind: StandIn, name: &str) -> bool {
    let object = api(env, kind).get(name).await.unwrap();
    object
        .data
        .pointer("/spec/suspend")
        .and_then(Value::as_bool)
        == Some(true)
}

#[tokio::test]
async fn ac145_flux_lists_what_the_gate_actually_watches() {
    let env = TestEnv::new().await;
    applied(&env, KUSTOMIZATION, "podinfo", json!({"path": "./apps"})).await;
    applied(&env, KUSTOMIZATION, "someone-elses", json!({})).await;
    watching(
        &env,
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
        json!({}),
    )
    .await;
    let resources = Ops::new(env.admin.clone())
        .flux_resources(&env.namespace, "production")
        .await
        .unwrap();
    let names: Vec<&str> = resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["podinfo"]);
    assert_eq!(resources[0].health, Health::Healthy);
    assert_eq!(resources[0].revision, "main@sha1:abc");
    assert_eq!(resources[0].namespace, env.namespace);
    assert!(!resources[0].missing && !resources[0].suspended);
    assert!(resources[0].operable, "the Gate's own, and there");
}

#[tokio::test]
async fn ac146_flux_reports_a_suspended_resource() {
    let env = TestEnv::new().await;
    applied(&env, KUSTOMIZATION, "podinfo", json!({"suspend": true})).await;
    watching(
        &env,
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
        json!({}),
    )
    .await;
    let resources = Ops::new(env.admin.clone())
        .flux_resources(&env.namespace, "production")
        .await
        .unwrap();
    assert!(resources[0].suspended);
    assert_eq!(
        resources[0].health,
        Health::Unknown,
        "suspended is not healthy"
    );
}

#[tokio::test]
async fn ac147_flux_reports_a_missing_resource_as_absent_not_broken() {
    let env = TestEnv::new().await;
    standins::install(&env.admin, &[KUSTOMIZATION])
        .await
        .unwrap();
    watching(
        &env,
        json!([{"kind": "Kustomization", "name": "not-created-yet"}]),
        json!({}),
    )
    .await;
    let ops = Ops::new(env.admin.clone());
    let resources = ops
        .flux_resources(&env.namespace, "production")
        .await
        .unwrap();
    assert_eq!(resources.len(), 1);
    assert!(resources[0].missing);
    assert!(!resources[0].operable, "nothing to operate");
    assert_eq!(resources[0].detail, "not in the cluster");
    // And a Gate that is not there is a NotFound, as for every read.
    let error = ops
        .flux_resources(&env.namespace, "ghost")
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error}");
}

#[tokio::test]
async fn ac148_suspend_refuses_a_resource_the_gate_does_not_watch() {
    let env = TestEnv::new().await;
    applied(&env, KUSTOMIZATION, "podinfo", json!({})).await;
    applied(&env, KUSTOMIZATION, "someone-elses", json!({})).await;
    watching(
        &env,
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
        json!({}),
    )
    .await;
    let ops = Ops::new(env.admin.clone());
    let error = ops
        .set_flux_suspend(
            &env.namespace,
            "production",
            "Kustomization",
            "someone-elses",
            true,
            "ada",
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Refused {
                code: RefusalCode::NotWatched,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains("not watched by Gate production"),
        "{error}"
    );
    assert!(!suspended(&env, KUSTOMIZATION, "someone-elses").await);
    // The same name of another kind is not what the Gate watches either.
    let error = ops
        .reconcile_flux(&env.namespace, "production", "HelmRelease", "podinfo")
        .await
        .unwrap_err();
    assert!(error.is_refused(), "{error}");
}

#[tokio::test]
async fn ac149_suspend_and_resume() {
    let env = TestEnv::new().await;
    applied(&env, KUSTOMIZATION, "podinfo", json!({})).await;
    watching(
        &env,
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
        json!({}),
    )
    .await;
    let ops = Ops::new(env.admin.clone());
    let answer = ops
        .set_flux_suspend(
            &env.namespace,
            "production",
            "Kustomization",
            "podinfo",
            true,
            "ada",
        )
        .await
        .unwrap();
    assert_eq!((answer.suspended, answer.by.as_str()), (true, "ada"));
    let listed = ops
        .flux_resources(&env.namespace, "production")
        .await
        .unwrap();
    assert!(listed[0].suspended);
    assert!(suspended(&env, KUSTOMIZATION, "podinfo").await);

    ops.set_flux_suspend(
        &env.namespace,
        "production",
        "Kustomization",
        "podinfo",
        false,
        "ada",
    )
    .await
    .unwrap();
    let listed = ops
        .flux_resources(&env.namespace, "production")
        .await
        .unwrap();
    assert!(!listed[0].suspended);
}

#[tokio::test]
async fn ac150_reconcile_stamps_and_echoes_it() {
    let env = TestEnv::new().await;
    applied(&env, KUSTOMIZATION, "podinfo", json!({})).await;
    watching(
        &env,
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
        json!({}),
    )
    .await;
    let answer = Ops::new(env.admin.clone())
        .reconcile_flux(&env.namespace, "production", "Kustomization", "podinfo")
        .await
        .unwrap();
    assert!(!answer.requested_at.is_empty());
    assert!(
        answer.requested_at.parse::<jiff::Timestamp>().is_ok(),
        "{}",
        answer.requested_at
    );
    let object = api(&env, KUSTOMIZATION).get("podinfo").await.unwrap();
    assert_eq!(
        object.metadata.annotations.unwrap_or_default()["reconcile.fluxcd.io/requestedAt"],
        answer.requested_at
    );
}

/// AC-151, deliberately different (issue 52, DECISION 161): a watch with a
/// `clusterRef` is listed — its object marked with its cluster, as the controller
/// last assessed it (here, not yet) — where the reference answered `[]`; as there, it
/// is never operated, and the same-named local object is left alone.
#[tokio::test]
async fn ac151_flux_lists_a_remote_clusters_object_and_never_operates_it() {
    let env = TestEnv::new().await;
    applied(&env, KUSTOMIZATION, "podinfo", json!({})).await;
    watching(
        &env,
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
        json!({"clusterRef": {"name": "elsewhere"}}),
    )
    .await;
    let ops = Ops::new(env.admin.clone());
    let listed = ops
        .flux_resources(&env.namespace, "production")
        .await
        .unwrap();
    let seen: Vec<(&str, &str, Health, &str)> = listed
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.cluster.as_str(),
                r.health,
                r.detail.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [(
            "podinfo",
            "elsewhere",
            Health::Unknown,
            "not assessed by the controller yet"
        )]
    );
    assert!(
        !listed[0].operable,
        "a connected cluster's is never operated"
    );
    let error = ops
        .set_flux_suspend(
            &env.namespace,
            "production",
            "Kustomization",
            "podinfo",
            true,
            "ada",
        )
        .await
        .unwrap_err();
    assert!(error.is_refused(), "{error}");
    assert!(
        error.to_string().contains("is on cluster elsewhere"),
        "{error}"
    );
    assert!(!suspended(&env, KUSTOMIZATION, "podinfo").await);
}

#[tokio::test]
async fn a_helm_release_is_operated_at_its_own_api_version() {
    let env = TestEnv::new().await;
    applied(&env, HELM_RELEASE, "db", json!({"chart": {}})).await;
    watching(
        &env,
        json!([{"kind": "HelmRelease", "name": "db"}, {"kind": "Kustomization", "name": "podinfo"}]),
        json!({}),
    )
    .await;
    let ops = Ops::new(env.admin.clone());
    let listed = ops
        .flux_resources(&env.namespace, "production")
        .await
        .unwrap();
    let kinds: Vec<(&str, bool, Health)> = listed
        .iter()
        .map(|r| (r.kind.as_str(), r.missing, r.health))
        .collect();
    assert_eq!(
        kinds,
        [
            ("HelmRelease", false, Health::Healthy),
            ("Kustomization", true, Health::Unknown)
        ]
    );
    ops.set_flux_suspend(
        &env.namespace,
        "production",
        "HelmRelease",
        "db",
        true,
        "ada",
    )
    .await
    .unwrap();
    assert!(suspended(&env, HELM_RELEASE, "db").await);
    // Patching what the Gate watches but is not there says so, in words.
    let error = ops
        .reconcile_flux(&env.namespace, "production", "Kustomization", "podinfo")
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("no Kustomization named podinfo"),
        "{error}"
    );
}
