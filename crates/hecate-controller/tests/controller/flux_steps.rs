//! `flux-reconcile` against a real API server: stand-in Flux kinds, patched as the
//! controller's own identity under its deployed ClusterRole.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use hecate_controller::health::FluxAccess;
use hecate_controller::steps::flux_reconcile::{FLUX_PATCH_FAILED, FluxReconcile, REQUESTED_AT};
use hecate_controller::steps::runner::{INVALID_CONFIG, Runner, StepContext, StepError};
use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Bundle, BundleSpec};
use jiff::Timestamp;
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{Value, json};

const STARTED: &str = "2026-12-01T04:33:06.5Z";

async fn kustomization(env: &TestEnv, name: &str) -> Api<DynamicObject> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        env.admin.clone(),
        &env.namespace,
        &KUSTOMIZATION.api_resource(),
    );
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": KUSTOMIZATION.api_version(),
        "kind": KUSTOMIZATION.kind,
        "metadata": {"name": name},
        "spec": {"path": "./env/dev"},
    }))
    .unwrap();
    api.create(&PostParams::default(), &object).await.unwrap();
    api
}

async fn step_as(env: &TestEnv, who: Identity) -> FluxReconcile {
    let client = env.client(who).await;
    FluxReconcile::new(Arc::new(FluxAccess::new(client)), true)
}

async fn run(step: &FluxReconcile, env: &TestEnv, config: Value) -> Result<Value, StepError> {
    let bundle = Bundle::new("b", BundleSpec::default());
    let outputs = BTreeMap::new();
    let ctx = StepContext {
        namespace: &env.namespace,
        gate: "dev",
        passage: "dev-1",
        bundle: &bundle,
        actor: "controller",
        work_dir: Path::new("/nonexistent"),
        config,
        outputs: &outputs,
        attempt: 0,
        failed: false,
        traceparent: "",
        started_at: STARTED.parse::<Timestamp>().unwrap(),
    };
    step.run(&ctx)
        .await
        .map(|done| done.output.unwrap_or_default())
}

fn apps(names: &[&str]) -> Value {
    let resources: Vec<Value> = names
        .iter()
        .map(|name| json!({"kind": "Kustomization", "name": name}))
        .collect();
    json!({ "resources": resources })
}

#[tokio::test]
async fn each_object_is_asked_once_with_the_passage_start_and_a_rerun_changes_nothing() {
    let env = TestEnv::new().await;
    standins::install_flux_standins(&env.admin).await.unwrap();
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    let api = kustomization(&env, "app").await;
    kustomization(&env, "infra").await;
    let step = step_as(&env, Identity::HecateController).await;

    let output = run(&step, &env, apps(&["app", "infra"])).await.unwrap();
    assert_eq!(
        output,
        json!({"requestedAt": "2026-12-01T04:33:06.5Z", "resources": 2})
    );
    let patched = api.get("app").await.unwrap();
    assert_eq!(
        patched.metadata.annotations.unwrap_or_default()[REQUESTED_AT],
        "2026-12-01T04:33:06.5Z"
    );
    let version = patched.metadata.resource_version;

    // After a restart the step runs again: the same value, so no write reaches Flux.
    run(&step, &env, apps(&["app"])).await.unwrap();
    assert_eq!(
        api.get("app").await.unwrap().metadata.resource_version,
        version
    );
}

#[tokio::test]
async fn a_missing_object_another_namespace_and_a_refusal_are_terminal() {
    let env = TestEnv::new().await;
    standins::install_flux_standins(&env.admin).await.unwrap();
    kustomization(&env, "app").await;

    let controller = step_as(&env, Identity::Admin).await;
    let missing = run(&controller, &env, apps(&["gone"])).await.unwrap_err();
    assert_eq!(
        (missing.reason.as_str(), missing.terminal),
        (INVALID_CONFIG, true)
    );
    assert!(missing.message.contains("gone"), "{}", missing.message);

    let elsewhere = json!({"resources": [
        {"kind": "Kustomization", "name": "app", "namespace": "flux-system"}
    ]});
    let refused = run(&controller, &env, elsewhere).await.unwrap_err();
    assert_eq!(
        (refused.reason.as_str(), refused.terminal),
        (INVALID_CONFIG, true)
    );
    assert!(refused.message.contains("refused"), "{}", refused.message);

    // ci-bot may patch nothing: Forbidden is not worth another try.
    let nobody = step_as(&env, Identity::CiBot).await;
    let forbidden = run(&nobody, &env, apps(&["app"])).await.unwrap_err();
    assert_eq!(
        (forbidden.reason.as_str(), forbidden.terminal),
        (FLUX_PATCH_FAILED, true),
        "{}",
        forbidden.message
    );
}

#[tokio::test]
async fn an_unreachable_api_server_is_worth_another_crossing() {
    let env = TestEnv::new().await;
    let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    let step = FluxReconcile::new(Arc::new(FluxAccess::new(client)), true);
    let error = run(&step, &env, apps(&["app"])).await.unwrap_err();
    assert_eq!(
        (error.reason.as_str(), error.terminal),
        (FLUX_PATCH_FAILED, false),
        "{}",
        error.message
    );
}

/// What the deployed role must allow for the steps and sources that reach beyond
/// Hecate's own kinds: watching and patching Flux objects, reading Flux Operator
/// providers.
#[tokio::test]
async fn the_deployed_role_allows_what_flux_steps_and_providers_do() {
    use k8s_openapi::api::authorization::v1::{
        ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
    };
    let env = TestEnv::new().await;
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    let reviews = Api::<SubjectAccessReview>::all(env.admin.clone());
    for (group, resource, verb) in [
        ("kustomize.toolkit.fluxcd.io", "kustomizations", "list"),
        ("kustomize.toolkit.fluxcd.io", "kustomizations", "watch"),
        ("kustomize.toolkit.fluxcd.io", "kustomizations", "patch"),
        ("helm.toolkit.fluxcd.io", "helmreleases", "patch"),
        ("source.toolkit.fluxcd.io", "ocirepositories", "watch"),
        ("fluxcd.controlplane.io", "resourcesetinputproviders", "get"),
    ] {
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(Identity::HecateController.username().into()),
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(env.namespace.clone()),
                    group: Some(group.into()),
                    resource: Some(resource.into()),
                    verb: Some(verb.into()),
                    ..ResourceAttributes::default()
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        // The authorizer learns of a new binding from a watch: ask until it answers.
        let mut allowed = false;
        for _ in 0..100 {
            let answer = reviews
                .create(&PostParams::default(), &review)
                .await
                .unwrap();
            allowed = answer.status.is_some_and(|s| s.allowed);
            if allowed {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(allowed, "the controller may not {verb} {group}/{resource}");
    }
}
