//! Routes 28–31: preflight and the Flux objects a Gate depends on, through the API
//! with real identities, stand-in Flux CRDs on the real API server and wiremock as
//! Fides. Surfaces spec §2.2 and §5 cases API #47–55; ops AC-128 and AC-145–151 seen
//! through HTTP.

use hecate_testenv::Identity::{self, *};
use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
use hecate_types::{Artifact, Bundle, BundleSpec, Gate, HealthCheck};
use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef};
use kube::api::{Api, DynamicObject, ObjectMeta, Patch, PatchParams};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::MockServer;

use hecate_testenv::fides::{evidence_gate, knows_artifact, policy_check};

use crate::harness::*;

const FLUX: &str = "/api/v1alpha1/namespaces/{ns}/gates/production/flux";

/// Creates Kustomization `name` (generation 1) with `spec`, reported applied at
/// `main@sha1:abc` as Flux would.
pub(crate) async fn kustomization(server: &Server, name: &str, spec: Value) {
    let env = &server.env;
    standins::install(&env.admin, &[KUSTOMIZATION])
        .await
        .unwrap();
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": KUSTOMIZATION.api_version(),
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": env.namespace},
        "spec": spec,
    }))
    .unwrap();
    objects(server)
        .create(&Default::default(), &object)
        .await
        .unwrap();
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

fn objects(server: &Server) -> Api<DynamicObject> {
    Api::namespaced_with(
        server.env.admin.clone(),
        &server.env.namespace,
        &KUSTOMIZATION.api_resource(),
    )
}

/// Makes Gate `gate` (created if absent) watch `resources` with a `flux` check.
pub(crate) async fn watch(server: &Server, gate: &str, resources: Value) {
    watch_with(server, gate, json!({"resources": resources})).await;
}

async fn watch_with(server: &Server, gate: &str, with: Value) {
    let gates: Api<Gate> = server.env.api();
    if gates.get_opt(gate).await.unwrap().is_none() {
        hecate_testenv::fixtures::gate(
            &server.env,
            gate,
            hecate_testenv::fixtures::gate_spec(&[], false),
        )
        .await;
    }
    let watch = vec![HealthCheck {
        uses: "flux".into(),
        with: Some(with),
    }];
    gates
        .patch(
            gate,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"watch": watch}})),
        )
        .await
        .unwrap();
}

async fn suspended(server: &Server, name: &str) -> bool {
    let object = objects(server).get(name).await.unwrap();
    object
        .data
        .pointer("/spec/suspend")
        .and_then(Value::as_bool)
        == Some(true)
}

/// Binds the shipped `hecate-flux-operator` role to `who` in the test's namespace
/// and waits until the API server knows it.
async fn flux_operator(server: &Server, who: Identity) {
    server
        .env
        .create(RoleBinding {
            metadata: ObjectMeta {
                name: Some(format!("{}-flux-operator", who.username())),
                ..ObjectMeta::default()
            },
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "ClusterRole".into(),
                name: "hecate-flux-operator".into(),
            },
            subjects: Some(vec![hecate_testenv::rbac::subject(who)]),
        })
        .await;
    let client = server.env.client(who).await;
    for _ in 0..100 {
        let review = k8s_openapi::api::authorization::v1::SelfSubjectAccessReview {
            spec: k8s_openapi::api::authorization::v1::SelfSubjectAccessReviewSpec {
                resource_attributes: Some(
                    k8s_openapi::api::authorization::v1::ResourceAttributes {
                        namespace: Some(server.env.namespace.clone()),
                        group: Some("kustomize.toolkit.fluxcd.io".into()),
                        resource: Some("kustomizations".into()),
                        verb: Some("patch".into()),
                        ..Default::default()
                    },
                ),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = Api::<k8s_openapi::api::authorization::v1::SelfSubjectAccessReview>::all(
            client.clone(),
        )
        .create(&Default::default(), &review)
        .await
        .unwrap();
        if answer.status.is_some_and(|s| s.allowed) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{who} was never allowed to patch kustomizations");
}

/// API #47 (AC-145): only what the Gate watches, judged as Flux reports it.
#[tokio::test]
async fn api47_flux_lists_what_the_gate_actually_watches() {
    let server = Server::start().await;
    kustomization(&server, "podinfo", json!({})).await;
    kustomization(&server, "someone-elses", json!({})).await;
    watch(
        &server,
        "production",
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
    )
    .await;
    let answer = server.get(FLUX, Some(Alice)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    // `operable` is ours (additive): ops says which objects may be operated from
    // here, so no surface decides it.
    assert_eq!(
        answer.json(),
        json!([{"kind": "Kustomization", "name": "podinfo", "namespace": server.ns(),
                "suspended": false, "health": "Healthy", "revision": "main@sha1:abc",
                "missing": false, "operable": true}])
    );
}

/// Issue 30, item 8: a Gate's watch naming a Flux object in another namespace never
/// shows that object — its health, message or revision — to someone who may only read
/// the Gate's namespace. The server reads Flux objects with its own identity, so the
/// rule (ops' `flux_watch`, the controller's own: no references across namespaces) is
/// what stops it: the entry says it was not read, and nothing is asked for it.
#[tokio::test]
async fn a_watched_object_in_another_namespace_is_not_read() {
    let server = Server::start().await;
    let env = &server.env;
    kustomization(&server, "podinfo", json!({})).await;
    let other = format!("{}-other", env.namespace);
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(env.admin.clone());
    namespaces
        .create(
            &Default::default(),
            &serde_json::from_value(json!({"metadata": {"name": other}})).unwrap(),
        )
        .await
        .unwrap();
    let theirs: DynamicObject = serde_json::from_value(json!({
        "apiVersion": KUSTOMIZATION.api_version(),
        "kind": "Kustomization",
        "metadata": {"name": "x", "namespace": other},
        "spec": {"path": "./secret-plans"},
    }))
    .unwrap();
    Api::<DynamicObject>::namespaced_with(env.admin.clone(), &other, &KUSTOMIZATION.api_resource())
        .create(&Default::default(), &theirs)
        .await
        .unwrap();
    standins::report_applied(
        &env.admin,
        KUSTOMIZATION,
        &other,
        "x",
        "main@sha1:their-secret",
    )
    .await
    .unwrap();
    watch(
        &server,
        "production",
        json!([
            {"kind": "Kustomization", "name": "x", "namespace": other},
            {"kind": "Kustomization", "name": "podinfo"},
        ]),
    )
    .await;

    for who in [Alice, Bob] {
        let answer = server.get(FLUX, Some(who)).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let listed = answer.json();
        assert_eq!(listed[0]["name"], "podinfo", "{listed}");
        assert_eq!(listed[0]["revision"], "main@sha1:abc", "its own is shown");
        assert_eq!(
            listed[1],
            json!({"kind": "Kustomization", "name": "x", "namespace": other,
                   "suspended": false, "health": "Unknown", "missing": false,
                   "detail": format!("in namespace {other}, outside Gate production's namespace {}: not read", env.namespace)}),
            "{who}"
        );
        assert!(!answer.body.contains("their-secret"), "{}", answer.body);
    }
    namespaces
        .delete(&other, &Default::default())
        .await
        .unwrap();
}

/// API #48, #49 (AC-146, AC-147): a suspended object says so; an absent one is
/// missing, not broken.
#[tokio::test]
async fn api48_api49_suspended_and_missing_objects() {
    let server = Server::start().await;
    kustomization(&server, "podinfo", json!({"suspend": true})).await;
    watch(
        &server,
        "production",
        json!([{"kind": "Kustomization", "name": "podinfo"}, {"kind": "Kustomization", "name": "not-created-yet"}]),
    )
    .await;
    let listed = server.get(FLUX, Some(Alice)).await.json();
    assert_eq!(listed[0]["name"], "not-created-yet");
    assert_eq!(
        (listed[0]["missing"].as_bool(), listed[0]["detail"].as_str()),
        (Some(true), Some("not in the cluster"))
    );
    assert_eq!(listed[1]["name"], "podinfo");
    assert_eq!(listed[1]["suspended"], true);
}

/// API #50: operating Flux is its own permission — `patch` in Flux's group —
/// which reading and promoting do not confer.
#[tokio::test]
async fn api50_suspend_needs_its_own_permission() {
    let server = Server::start().await;
    kustomization(&server, "podinfo", json!({})).await;
    watch(
        &server,
        "production",
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
    )
    .await;
    // bob reads and promotes (hecate-promoter), nothing more.
    let answer = server
        .post(
            &format!("{FLUX}/suspend"),
            Some(Bob),
            Some(r#"{"kind":"Kustomization","name":"podinfo","suspend":true}"#),
        )
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(
        answer.json()["error"],
        format!("bob may not patch kustomizations in {}", server.ns())
    );
    assert!(!suspended(&server, "podinfo").await);
}

/// API #51, #52 (AC-148, AC-149): suspend and resume what the Gate watches; anything
/// else is refused (409 with its code, not the reference's 500) and left alone.
#[tokio::test]
async fn api51_api52_suspend_and_resume_only_what_the_gate_watches() {
    let server = Server::start().await;
    kustomization(&server, "podinfo", json!({})).await;
    kustomization(&server, "someone-elses", json!({})).await;
    watch(
        &server,
        "production",
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
    )
    .await;
    flux_operator(&server, Alice).await;
    let suspend = format!("{FLUX}/suspend");

    let refused = server
        .post(
            &suspend,
            Some(Alice),
            Some(r#"{"kind":"Kustomization","name":"someone-elses","suspend":true}"#),
        )
        .await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert_eq!(refused.json()["code"], "NotWatched");
    assert!(!suspended(&server, "someone-elses").await);

    for state in [true, false] {
        let body = format!(r#"{{"kind":"Kustomization","name":"podinfo","suspend":{state}}}"#);
        let answer = server.post(&suspend, Some(Alice), Some(&body)).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let answered = answer.json();
        assert_eq!(
            (
                answered["kind"].as_str(),
                answered["name"].as_str(),
                answered["suspended"].as_bool(),
                answered["by"].as_str()
            ),
            (
                Some("Kustomization"),
                Some("podinfo"),
                Some(state),
                Some("alice")
            )
        );
        let listed = server.get(FLUX, Some(Alice)).await.json();
        assert_eq!(listed[0]["suspended"], state);
        assert_eq!(suspended(&server, "podinfo").await, state);
    }
}

/// API #53 (AC-150): the stamp answered is the one written.
#[tokio::test]
async fn api53_reconcile_stamps_and_echoes_it() {
    let server = Server::start().await;
    kustomization(&server, "podinfo", json!({})).await;
    watch(
        &server,
        "production",
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
    )
    .await;
    flux_operator(&server, Alice).await;
    let answer = server
        .post(
            &format!("{FLUX}/reconcile"),
            Some(Alice),
            Some(r#"{"kind":"Kustomization","name":"podinfo"}"#),
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let stamp = answer.json()["requestedAt"].as_str().unwrap().to_string();
    assert!(!stamp.is_empty());
    let object = objects(&server).get("podinfo").await.unwrap();
    assert_eq!(
        object.metadata.annotations.unwrap_or_default()["reconcile.fluxcd.io/requestedAt"],
        stamp
    );
}

/// API #54 (AC-151), deliberately different (issue 52, DECISION 161): a connected
/// cluster's objects are listed — marked with their cluster, as the controller last
/// assessed them (not yet, here) — where the reference left them out; as there, they
/// are never operated, and the same-named local object the Gate does not watch is not
/// touched.
#[tokio::test]
async fn api54_flux_lists_a_remote_clusters_objects_and_never_operates_them() {
    let server = Server::start().await;
    kustomization(&server, "podinfo", json!({})).await;
    watch_with(
        &server,
        "production",
        json!({"resources": [{"kind": "Kustomization", "name": "podinfo"}], "clusterRef": {"name": "elsewhere"}}),
    )
    .await;
    flux_operator(&server, Alice).await;
    let listed = server.get(FLUX, Some(Alice)).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let listed: serde_json::Value = serde_json::from_str(&listed.body).unwrap();
    assert_eq!(
        listed,
        json!([{
            "kind": "Kustomization", "name": "podinfo", "namespace": server.ns(),
            "cluster": "elsewhere", "suspended": false, "health": "Unknown", "missing": false,
            "detail": "not assessed by the controller yet",
        }])
    );
    let answer = server
        .post(
            &format!("{FLUX}/suspend"),
            Some(Alice),
            Some(r#"{"kind":"Kustomization","name":"podinfo","suspend":true}"#),
        )
        .await;
    assert_ne!(answer.status, 200, "{}", answer.body);
    assert!(!suspended(&server, "podinfo").await);
}

/// API #55: a kind and a name are required (400), before anything is asked.
#[tokio::test]
async fn api55_flux_needs_a_kind_and_a_name() {
    let server = Server::start().await;
    kustomization(&server, "podinfo", json!({})).await;
    watch(
        &server,
        "production",
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
    )
    .await;
    flux_operator(&server, Alice).await;
    for body in [
        r#"{}"#,
        r#"{"kind":"","name":"podinfo"}"#,
        r#"{"kind":"Kustomization","name":""}"#,
    ] {
        let answer = server
            .post(&format!("{FLUX}/reconcile"), Some(Alice), Some(body))
            .await;
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
    }
    let answer = server
        .post(
            &format!("{FLUX}/reconcile"),
            Some(Alice),
            Some(r#"{"kind":"","name":""}"#),
        )
        .await;
    assert_eq!(answer.json()["error"], "kind and name are required");
}

/// Route 28 (AC-128, AC-129 through HTTP): each eligible Bundle's verdict, asked of
/// Fides once per Bundle; a reader of Gates may ask.
#[tokio::test]
async fn route28_preflight_answers_a_verdict_per_eligible_bundle() {
    let server = Server::start().await;
    let fides = MockServer::start().await;
    let env = &server.env;
    evidence_gate(env, "production", &fides.uri(), &["b1", "b2"]).await;
    for (name, digest) in [("b1", "sha256:abcdef0123456789"), ("b2", "")] {
        env.create(Bundle::new(
            name,
            BundleSpec {
                beacon: "app".into(),
                artifacts: vec![Artifact::image("ghcr.io/acme/app", "1.0.0", digest)],
                ..BundleSpec::default()
            },
        ))
        .await;
    }
    knows_artifact(&fides, "abcdef0123456789", 1).await;
    policy_check(
        &fides,
        json!({"compliant": false, "results": [
            {"policy": "sox", "applies": true, "missing": ["servicenow-change", "sbom"]},
        ]}),
        1,
    )
    .await;
    let answer = server
        .get(
            "/api/v1alpha1/namespaces/{ns}/gates/production/preflight",
            Some(Alice),
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.json(),
        json!([
            {"bundle": "b1", "compliant": false, "missing": ["sbom", "servicenow-change"], "policies": ["sox"]},
            {"bundle": "b2", "compliant": false, "unknown": "pins no image digest, so there is no artifact to hold evidence about"},
        ])
    );
    // A Gate that does not gate on evidence: [] and Fides is not asked (the mocks'
    // counts above are checked when the server drops).
    hecate_testenv::fixtures::gate(
        env,
        "staging",
        hecate_testenv::fixtures::gate_spec(&[], false),
    )
    .await;
    let none = server
        .get(
            "/api/v1alpha1/namespaces/{ns}/gates/staging/preflight",
            Some(Alice),
        )
        .await;
    assert_eq!((none.status, none.body.as_str()), (200, "[]"));
}
