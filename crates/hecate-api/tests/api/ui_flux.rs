//! The Gate page's Flux panel and preflight verdicts in headless Chromium, against the
//! real API server, stand-in Flux CRDs on the real control plane (their status
//! written as Flux would) and wiremock as Fides. Surfaces spec §4.3 (Gate detail);
//! the routes behind it are API #47–53 and route 28.

use hecate_testenv::Identity::*;
use hecate_types::{Artifact, Bundle, BundleSpec, Gate};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::ui_browser::*;

use hecate_testenv::fides::ENVIRONMENT as ENV;

/// Gate `production` bound to the fake Fides, eligible `ready-1` (compliant) and
/// `held-1` (missing an SBOM for SOX), watching Kustomization `podinfo` (applied,
/// healthy) and `not-created-yet` (absent).
async fn setup(server: &Server, fides: &MockServer) {
    let env = &server.env;
    crate::flux::kustomization(server, "podinfo", json!({})).await;
    hecate_testenv::fides::evidence_gate(env, "production", &fides.uri(), &["ready-1", "held-1"])
        .await;
    crate::flux::watch(
        server,
        "production",
        json!([{"kind": "Kustomization", "name": "podinfo"}, {"kind": "Kustomization", "name": "not-created-yet"}]),
    )
    .await;
    on_cluster_eu_1(server).await;
    for (bundle, sha, trail, check) in [
        (
            "ready-1",
            "aaaa0000aaaa0000",
            "trail-ready",
            json!({"compliant": true, "results": []}),
        ),
        (
            "held-1",
            "bbbb0000bbbb0000",
            "trail-held",
            json!({"compliant": false, "results": [{"policy": "sox", "applies": true, "missing": ["sbom"]}]}),
        ),
    ] {
        env.create(Bundle::new(
            bundle,
            BundleSpec {
                beacon: "app".into(),
                artifacts: vec![Artifact::image(
                    "ghcr.io/acme/app",
                    bundle,
                    format!("sha256:{sha}"),
                )],
                ..BundleSpec::default()
            },
        ))
        .await;
        // The page asks on each draw; how many draws there are is the browser's
        // business, so each mock expects between one and a generous bound.
        Mock::given(method("GET"))
            .and(path("/api/v1/search/artifacts"))
            .and(query_param("sha", sha))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!([{"sha256": sha, "trail_id": trail}])),
            )
            .expect(1..=40)
            .mount(fides)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("/api/v1/environments/{ENV}/policy-check")))
            .and(query_param("trail", trail))
            .respond_with(ResponseTemplate::new(200).set_body_json(check))
            .expect(1..=40)
            .mount(fides)
            .await;
    }
}

/// Production also watches `podinfo` on connected cluster eu-1, and its health record
/// holds the controller's last look there: degraded.
async fn on_cluster_eu_1(server: &Server) {
    let gates: Api<Gate> = server.env.api();
    let mut gate = gates.get("production").await.unwrap();
    gate.spec.watch.push(hecate_types::HealthCheck {
        uses: "flux".into(),
        with: Some(json!({
            "resources": [{"kind": "Kustomization", "name": "podinfo"}],
            "clusterRef": {"name": "eu-1"},
        })),
    });
    let watch = serde_json::to_value(&gate.spec.watch).unwrap();
    gates
        .patch(
            "production",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"watch": watch}})),
        )
        .await
        .unwrap();
    let key = format!("Kustomization/{}/podinfo@eu-1", server.ns());
    let health = json!({"status": {"health": {
        "status": "Degraded",
        "issues": [format!("{key}: health check failed for deployment podinfo")],
        "details": {"flux": {key: {"health": "Degraded", "revision": "main@sha1:eu1"}}},
    }}});
    gates
        .patch_status("production", &PatchParams::default(), &Patch::Merge(health))
        .await
        .unwrap();
}

fn button(object: &str, action: &str) -> String {
    format!("[data-flux='{object}'] button[data-action={action}]")
}

/// Makes the open Gate page draw again, as any change to the Gate does (the event
/// stream says so): the Flux objects themselves are not Hecate's to follow.
async fn nudge(server: &Server, n: u32) {
    let gates: Api<Gate> = server.env.api();
    gates
        .patch(
            "production",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"test.hecate.dev/nudge": n.to_string()}}}),
            ),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn the_gate_page_shows_flux_and_what_evidence_would_say() {
    let server = Server::start().await;
    let fides = MockServer::start().await;
    setup(&server, &fides).await;
    let browser = Browser::start(&server.base).await;
    browser
        .open(&format!(
            "/gates/?name=production&namespace={}",
            server.ns()
        ))
        .await;
    browser.sign_in(&server.token(Admin)).await;

    // Preflight: the ready Bundle can be crossed; the one evidence would refuse says
    // what it lacks, and its Cross button is disabled.
    let ready = browser
        .until_text(
            "tr[data-bundle='ready-1'] [data-preflight]",
            "evidence ready",
        )
        .await;
    assert!(ready.contains("evidence ready"), "{ready}");
    let held = browser
        .until_text(
            "tr[data-bundle='held-1'] [data-preflight=refused]",
            "would be refused",
        )
        .await;
    assert!(held.contains("needs sbom — for sox"), "{held}");
    let disabled = |bundle: &str| {
        format!(
            "return document.querySelector(\"tr[data-bundle='{bundle}'] button[data-action=promote]\").disabled;"
        )
    };
    assert_eq!(
        browser.js(&disabled("held-1"), vec![]).await,
        Value::Bool(true)
    );
    assert_eq!(
        browser.js(&disabled("ready-1"), vec![]).await,
        Value::Bool(false)
    );

    // The Flux panel: podinfo healthy at its revision, not-created-yet absent (and
    // without buttons), no banner while nothing is suspended.
    let card = browser
        .until_text("[data-flux='Kustomization/podinfo']", "main@sha1:abc")
        .await;
    assert!(card.contains("Healthy"), "{card}");
    let missing = browser
        .until_text(
            "[data-flux='Kustomization/not-created-yet']",
            "not in the cluster",
        )
        .await;
    assert!(!missing.contains("Suspend"), "{missing}");
    // eu-1's podinfo: its own card, as the controller last saw it, with no buttons.
    let remote = browser
        .until_text("[data-cluster='eu-1']", "on cluster eu-1")
        .await;
    assert!(
        remote.contains("Degraded")
            && remote.contains("main@sha1:eu1")
            && remote.contains("health check failed for deployment podinfo")
            && !remote.contains("Suspend")
            && !remote.contains("Reconcile"),
        "{remote}"
    );
    assert_eq!(
        browser
            .js(
                "return !!document.querySelector('[data-flux-suspended]');",
                vec![]
            )
            .await,
        Value::Bool(false)
    );
    browser.screenshot("gate-flux-preflight", 1280).await;

    // Suspend: confirmed, written, and then a standing banner and Reconcile disabled.
    browser
        .click(&button("Kustomization/podinfo", "suspend"))
        .await;
    browser
        .until(
            "the confirmation",
            "document.querySelector('dialog#confirm[open]')",
        )
        .await;
    browser.click("#confirm-ok").await;
    browser.until_text("#notice", "Suspended:").await;
    browser
        .until_text("[data-flux-suspended]", "Kustomization/podinfo")
        .await;
    let objects: Api<DynamicObject> = Api::namespaced_with(
        server.env.admin.clone(),
        server.ns(),
        &hecate_testenv::flux::KUSTOMIZATION.api_resource(),
    );
    let object = objects.get("podinfo").await.unwrap();
    assert_eq!(object.data.pointer("/spec/suspend"), Some(&json!(true)));
    browser
        .until(
            "Reconcile is disabled while suspended",
            &format!(
                "document.querySelector(\"{}\").disabled",
                button("Kustomization/podinfo", "reconcile")
            ),
        )
        .await;

    // Resume, then Reconcile now: "Asked…" until Flux echoes the stamp, then
    // "Reconciled.".
    browser
        .click(&button("Kustomization/podinfo", "resume"))
        .await;
    browser
        .until(
            "the confirmation",
            "document.querySelector('dialog#confirm[open]')",
        )
        .await;
    browser.click("#confirm-ok").await;
    browser.until_text("#notice", "Resumed:").await;
    browser
        .until(
            "the banner is gone",
            "!document.querySelector('[data-flux-suspended]') && document.querySelector(\"[data-flux='Kustomization/podinfo'] button[data-action=suspend]\")",
        )
        .await;
    browser
        .click(&button("Kustomization/podinfo", "reconcile"))
        .await;
    browser.until_text("[data-reconcile=asked]", "Asked…").await;
    let object = objects.get("podinfo").await.unwrap();
    let stamp =
        object.metadata.annotations.unwrap_or_default()["reconcile.fluxcd.io/requestedAt"].clone();
    // Flux handles the request and says so.
    objects
        .patch_status(
            "podinfo",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"lastHandledReconcileAt": stamp}})),
        )
        .await
        .unwrap();
    nudge(&server, 1).await;
    browser
        .until_text("[data-reconcile=done]", "Reconciled.")
        .await;
    browser.close().await;
}

/// A person who may read but not operate Flux sees the Flux panel with Suspend and
/// Reconcile disabled, each naming the role that holds the permission; the object is
/// left as it was.
#[tokio::test]
async fn operating_flux_without_the_permission_names_the_role() {
    let server = Server::start().await;
    crate::flux::kustomization(&server, "podinfo", json!({})).await;
    crate::flux::watch(
        &server,
        "production",
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
    )
    .await;
    let browser = Browser::start(&server.base).await;
    browser
        .open(&format!(
            "/gates/?name=production&namespace={}",
            server.ns()
        ))
        .await;
    browser.sign_in(&server.token(Alice)).await;
    browser
        .until_text("[data-flux='Kustomization/podinfo']", "Healthy")
        .await;
    for action in ["suspend", "reconcile"] {
        let css = button("Kustomization/podinfo", action);
        let title = browser
            .until(
                &format!("{action} is disabled for alice"),
                &format!(
                    "(() => {{ const b = document.querySelector(\"{css}\"); return b && b.disabled ? b.title : null; }})()"
                ),
            )
            .await;
        let title = title.as_str().unwrap_or_default();
        assert!(title.contains("hecate-flux-operator"), "{title}");
        assert!(title.contains("patch kustomizations"), "{title}");
    }
    let objects: Api<DynamicObject> = Api::namespaced_with(
        server.env.admin.clone(),
        server.ns(),
        &hecate_testenv::flux::KUSTOMIZATION.api_resource(),
    );
    let object = objects.get("podinfo").await.unwrap();
    assert_eq!(object.data.pointer("/spec/suspend"), None);
    browser.close().await;
}
