//! `flux-reconcile` against a real API server: stand-in Flux kinds, patched as the
//! controller's own identity under its deployed ClusterRole.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use hecate_controller::passage::wake::Watches;
use hecate_steps::flux::FluxAccess;
use hecate_steps::flux::FluxChecker;
use hecate_steps::flux_reconcile::{FluxReconcile, REQUESTED_AT};
use hecate_steps::flux_wait::FluxWait;
use hecate_steps::runner::{Progress, Runner, StepContext, StepError, StepResult};
use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Bundle, BundleSpec, HealthCheck};
use jiff::Timestamp;
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{Value, json};

use crate::process::eventually;
use hecate_steps::reason::Reason;

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
    run_step(step, env, config, 0)
        .await
        .map(|done| done.output.unwrap_or_default())
}

/// Runs `step` with `config` in the test's namespace, as its `attempt`-th call.
async fn run_step(
    step: &dyn Runner,
    env: &TestEnv,
    config: Value,
    attempt: u32,
) -> Result<StepResult, StepError> {
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
        attempt,
        failed: false,
        traceparent: "",
        started_at: STARTED.parse::<Timestamp>().unwrap(),
    };
    step.run(&ctx).await
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
        (missing.reason, missing.terminal),
        (Reason::InvalidConfig, true)
    );
    assert!(missing.message.contains("gone"), "{}", missing.message);

    let elsewhere = json!({"resources": [
        {"kind": "Kustomization", "name": "app", "namespace": "flux-system"}
    ]});
    let refused = run(&controller, &env, elsewhere).await.unwrap_err();
    assert_eq!(
        (refused.reason, refused.terminal),
        (Reason::InvalidConfig, true)
    );
    assert!(refused.message.contains("refused"), "{}", refused.message);

    // ci-bot may patch nothing: Forbidden is not worth another try.
    let nobody = step_as(&env, Identity::CiBot).await;
    let forbidden = run(&nobody, &env, apps(&["app"])).await.unwrap_err();
    assert_eq!(
        (forbidden.reason, forbidden.terminal),
        (Reason::FluxPatchFailed, true),
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
        (error.reason, error.terminal),
        (Reason::FluxPatchFailed, false),
        "{}",
        error.message
    );
}

/// `flux-wait` as the controller runs it: through the `flux` checker and the controller's
/// own identity (once its deployed role lets it read Kustomization `app`), woken by a
/// watch.
async fn flux_wait(env: &TestEnv) -> FluxWait {
    let client = env.client(Identity::HecateController).await;
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        &env.namespace,
        &KUSTOMIZATION.api_resource(),
    );
    // RBAC reaches the authorizer a moment after it is written.
    eventually(
        std::time::Duration::from_secs(10),
        "the controller's role",
        || async { api.get_opt("app").await.ok().flatten() },
    )
    .await;
    let checker = Arc::new(FluxChecker::new(
        Arc::new(FluxAccess::new(client.clone())),
        true,
    ));
    FluxWait::new(checker, true, Arc::new(Watches::new(client).0))
}

#[tokio::test]
async fn flux_wait_waits_until_the_revision_is_applied_then_hands_the_gate_its_check() {
    let env = TestEnv::new().await;
    standins::install_flux_standins(&env.admin).await.unwrap();
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    kustomization(&env, "app").await;
    let step = flux_wait(&env).await;
    let config = json!({
        "resources": [{"kind": "Kustomization", "name": "app"}],
        "expectedRevision": "main@sha1:2222",
    });
    let key = format!("Kustomization/{}/app", env.namespace);

    // Not reconciled yet: wait, soon at first, then longer (spec §5.14: Running).
    let waiting = run_step(&step, &env, config.clone(), 0).await.unwrap();
    assert_eq!(waiting.progress, Progress::Running);
    assert_eq!(waiting.retry_after, Some(std::time::Duration::from_secs(1)));
    assert!(
        waiting.watch.is_empty(),
        "nothing is handed over while waiting"
    );
    let later = run_step(&step, &env, config.clone(), 5).await.unwrap();
    assert_eq!(later.retry_after, Some(std::time::Duration::from_secs(15)));

    // Ready, at another revision: still waiting, and the message says why.
    standins::report_applied(
        &env.admin,
        KUSTOMIZATION,
        &env.namespace,
        "app",
        "main@sha1:1111",
    )
    .await
    .unwrap();
    let elsewhere = run_step(&step, &env, config.clone(), 1).await.unwrap();
    assert_eq!(
        elsewhere.progress,
        Progress::Running,
        "{}",
        elsewhere.message
    );
    assert_eq!(
        elsewhere.output.unwrap()["resources"][&key]["revision"],
        json!("main@sha1:1111")
    );

    // At the expected revision: done, and the Gate gets this very check to watch.
    standins::report_applied(
        &env.admin,
        KUSTOMIZATION,
        &env.namespace,
        "app",
        "main@sha1:2222",
    )
    .await
    .unwrap();
    let done = run_step(&step, &env, config.clone(), 2).await.unwrap();
    assert_eq!(done.progress, Progress::Succeeded, "{}", done.message);
    assert_eq!(
        done.output.unwrap(),
        json!({"resources": {key.as_str(): {"health": "Healthy", "revision": "main@sha1:2222"}}})
    );
    assert_eq!(
        done.watch,
        [HealthCheck {
            uses: "flux".into(),
            with: Some(config),
        }]
    );
}

#[tokio::test]
async fn flux_wait_fails_on_a_degraded_object_and_refuses_bad_targets() {
    let env = TestEnv::new().await;
    standins::install_flux_standins(&env.admin).await.unwrap();
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    kustomization(&env, "app").await;
    let step = flux_wait(&env).await;
    let config = json!({
        "resources": [{"kind": "Kustomization", "name": "app"}],
        "expectedRevision": "main@sha1:3333",
    });

    // Flux gave up on the revision waited for: terminal FluxDegraded, with the output.
    standins::report_failed(
        &env.admin,
        KUSTOMIZATION,
        &env.namespace,
        "app",
        "main@sha1:3333",
        "health check failed after 5m: Deployment/app not ready",
    )
    .await
    .unwrap();
    let degraded = run_step(&step, &env, config, 0).await.unwrap_err();
    assert_eq!(
        (degraded.reason, degraded.terminal),
        (Reason::FluxDegraded, true),
        "{}",
        degraded.message
    );
    assert!(
        degraded.message.contains("Deployment/app not ready"),
        "{}",
        degraded.message
    );
    let key = format!("Kustomization/{}/app", env.namespace);
    assert_eq!(
        degraded.output.unwrap()["resources"][&key]["health"],
        json!("Degraded")
    );

    // What the flux check refuses is a terminal InvalidConfig: another namespace, a
    // kind nobody knows without its apiVersion, no objects at all.
    for (config, words) in [
        (
            json!({"resources": [{"kind": "Kustomization", "name": "app", "namespace": "flux-system"}]}),
            "refused",
        ),
        (
            json!({"resources": [{"kind": "Widget", "name": "app"}]}),
            "Widget",
        ),
        (json!({"resources": []}), "resources"),
        (
            json!({"resources": [{"kind": "Kustomization", "name": "app"}], "failAfter": "soon"}),
            "failAfter",
        ),
    ] {
        let error = run_step(&step, &env, config.clone(), 0).await.unwrap_err();
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::InvalidConfig, true),
            "{config}: {}",
            error.message
        );
        assert!(error.message.contains(words), "{config}: {}", error.message);
    }

    // A missing object is waited for (spec §3.5; the step's `timeout:` bounds it).
    let missing = json!({"resources": [{"kind": "Kustomization", "name": "gone"}]});
    let waiting = run_step(&step, &env, missing, 0).await.unwrap();
    assert_eq!(waiting.progress, Progress::Running);
    assert!(waiting.message.contains("not found"), "{}", waiting.message);
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

/// A `clusterRef` naming a Secret whose `value` is not a kubeconfig fails the step in
/// our words — what is wrong and where — never with the parser's quote of the Secret's
/// text: not in the Passage's status (which `hecate-viewer` reads), not in an Event
/// (#50, DECISION 146). Through the controller as its own process.
#[tokio::test]
async fn a_secret_that_is_no_kubeconfig_is_never_quoted() {
    use crate::git_steps::secret;
    use crate::harness::{Harness, bundle, create_gate, gate_spec};
    use crate::process::{Controller, join_shard};
    use hecate_types::{Passage, PassagePhase, Step};
    use std::time::Duration;

    const TEXT: &str = "TOPSECRET-PLAIN-789";
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    h.env.create(secret("remote", &[("value", TEXT)])).await;
    let _controller = Controller::start(&h.env, &ns, &[]).await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "flux-reconcile".into(),
        with: Some(json!({
            "resources": [{"kind": "Kustomization", "name": "app"}],
            "clusterRef": {"name": "remote"},
        })),
        // A Secret can be fixed, so the step tries again; not for long here.
        timeout: "3s".into(),
        ..Step::default()
    }];
    create_gate(&h, "dev", spec).await;
    bundle(&h.env, "b1").await;

    let passage = eventually(Duration::from_secs(60), "dev-1 failed", || async {
        h.env
            .api::<Passage>()
            .get_opt("dev-1")
            .await
            .unwrap()
            .filter(|p| p.is_terminal())
    })
    .await;
    let status = passage.status.clone().unwrap();
    assert_eq!(status.phase(), PassagePhase::Failed, "{status:?}");
    let recorded = serde_json::to_string(&passage).unwrap();
    assert!(!recorded.contains(TEXT), "{recorded}");
    let said = &status.steps[0].message;
    assert!(
        said.contains(&format!(
            "the kubeconfig in Secret {ns}/remote cannot be used: it is not a kubeconfig (YAML error at line 1, column 1)"
        )),
        "{said}"
    );

    // The controller's Events of the crossing, the failure's included.
    let events = eventually(Duration::from_secs(20), "PassageFailed", || async {
        let events = h.events().await;
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("PassageFailed"))
            .then_some(events)
    })
    .await;
    let events = serde_json::to_string(&events).unwrap();
    assert!(events.contains("cannot be used"), "{events}");
    assert!(!events.contains(TEXT), "{events}");
}
