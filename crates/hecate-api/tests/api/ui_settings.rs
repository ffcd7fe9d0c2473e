//! The Settings page in headless Chromium (surfaces spec §4.3), against the real API
//! server with the settings RBAC the chart gives it, wiremock as Fides and connected
//! clusters whose kubeconfigs point at the real control plane: who is signed in, the
//! evidence servers and clusters with the server's reachability verdicts, the grants,
//! and the three forms — each write landing in the cluster, a refusal shown in the
//! cluster's words.

use hecate_testenv::Identity::*;
use hecate_types::{EvidenceConfig, Gate};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{Api, ObjectMeta};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::ui_browser::*;

const ENVIRONMENT: &str = "3c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f";

/// A kubeconfig for the control plane as alice, with `token` instead of hers when
/// given.
fn kubeconfig(server: &Server, token: Option<&str>) -> String {
    let yaml = server.env.endpoint().kubeconfig_yaml(Alice);
    let mut config: Value = serde_yaml_ng::from_str(&yaml).unwrap();
    if let Some(token) = token {
        for user in config["users"].as_array_mut().unwrap() {
            user["user"]["token"] = json!(token);
        }
    }
    serde_json::to_string(&config).unwrap()
}

async fn cluster_secret(server: &Server, name: &str, kubeconfig: &str) {
    server
        .env
        .create(Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some([("hecate.dev/cluster".to_string(), "true".to_string())].into()),
                ..ObjectMeta::default()
            },
            data: Some(
                [(
                    "value".to_string(),
                    ByteString(kubeconfig.as_bytes().to_vec()),
                )]
                .into(),
            ),
            ..Secret::default()
        })
        .await;
}

/// Sets form fields by id (`#id` → value) and submits the form `form`.
async fn fill_and_submit(browser: &Browser, form: &str, fields: &[(&str, &str)]) {
    for (id, value) in fields {
        browser
            .js(
                "const el = document.getElementById(arguments[0]); el.value = arguments[1]; return el.value;",
                vec![json!(id), json!(value)],
            )
            .await;
    }
    browser.click(&format!("#{form} button[type=submit]")).await;
}

#[tokio::test]
async fn the_settings_page_shows_the_installation_and_its_forms_write() {
    let server = Server::start().await;
    crate::settings::writable(&server.env).await;
    server.pipeline().await;
    let ns = server.ns().to_string();
    let fides = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/v1/flows"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .expect(1..)
        .mount(&fides)
        .await;
    let mut spec = hecate_testenv::fixtures::gate_spec(&[], false);
    spec.evidence = Some(EvidenceConfig {
        fides_environment: ENVIRONMENT.into(),
        server_url: fides.uri(),
        credentials_ref: None,
    });
    hecate_testenv::fixtures::gate(&server.env, "production", spec).await;
    cluster_secret(&server, "good", &kubeconfig(&server, None)).await;
    cluster_secret(
        &server,
        "rejected",
        &kubeconfig(&server, Some("expired-token")),
    )
    .await;

    let browser = Browser::start(&server.base).await;
    browser.open(&format!("/settings/?namespace={ns}")).await;
    browser.sign_in(&server.token(Admin)).await;
    browser.until_text("main h1", "Settings").await;
    browser.until_text("#identity", "admin").await;
    browser.until_text("a[aria-current=page]", "Settings").await;

    // Evidence servers: the server's verdict, and the Gates using it.
    let row = format!("tr[data-server={}]", json!(fides.uri()));
    browser
        .until(
            "Fides is reachable",
            &format!("document.querySelector('{row} [data-reachable=true]')"),
        )
        .await;
    browser.until_text(&row, &format!("{ns}/production")).await;
    browser.until_text(&row, ENVIRONMENT).await;

    // Clusters: one connected and unused (with the hint), one refused (why, never
    // "connected").
    let good = format!("tr[data-cluster={}]", json!(format!("{ns}/good")));
    browser.until_text(&good, "Connected").await;
    browser.until_text(&good, "clusterRef").await;
    let rejected = format!("tr[data-cluster={}]", json!(format!("{ns}/rejected")));
    let text = browser.until_text(&rejected, "expired").await;
    assert!(text.contains("Not connected"), "{text}");

    // Who may use Hecate: the admin may list the grants.
    browser
        .until(
            "the grants, and the form to grant",
            "document.querySelector('#grant-form') && !document.querySelector('#grants-hidden')",
        )
        .await;
    browser.screenshot("settings", 1280).await;
    // Accessible at desktop and phone size, forms included.
    crate::ui_axe::check(&browser, "settings").await;

    // The grant form.
    let subject = format!("{ns}-ui");
    fill_and_submit(
        &browser,
        "grant-form",
        &[
            ("grant-subject", &subject),
            ("grant-kind", "User"),
            ("grant-role", "hecate-promoter"),
        ],
    )
    .await;
    browser
        .until_text("#notice [data-kind=ok]", "Granted")
        .await;
    let binding = format!("hecate-promoter-user-{subject}");
    browser
        .until_text(&format!("tr[data-binding={}]", json!(binding)), "admin")
        .await;
    let bindings: Api<ClusterRoleBinding> = Api::all(server.env.admin.clone());
    assert_eq!(
        bindings.get(&binding).await.unwrap().role_ref.name,
        "hecate-promoter"
    );

    // The cluster form: the new cluster is probed on the redrawn page.
    fill_and_submit(
        &browser,
        "cluster-form",
        &[
            ("cluster-name", "added"),
            ("cluster-kubeconfig", &kubeconfig(&server, None)),
        ],
    )
    .await;
    browser
        .until_text("#notice [data-kind=ok]", "Connected")
        .await;
    let added = format!("tr[data-cluster={}]", json!(format!("{ns}/added")));
    browser.until_text(&added, "Connected").await;
    let secrets: Api<Secret> = server.env.api();
    assert!(secrets.get_opt("added").await.unwrap().is_some());

    // The evidence form.
    let environment = "99999999-8888-4777-8666-555555555555";
    fill_and_submit(
        &browser,
        "evidence-form",
        &[
            ("evidence-gate", "staging"),
            ("evidence-server", &fides.uri()),
            ("evidence-environment", environment),
        ],
    )
    .await;
    browser.until_text("#notice [data-kind=ok]", "Flux").await;
    let gates: Api<Gate> = server.env.api();
    let evidence = gates.get("staging").await.unwrap().spec.evidence.unwrap();
    assert_eq!(evidence.fides_environment, environment);
    assert_eq!(evidence.server_url, fides.uri());

    // A write the server refuses is said beside the button that sent it, not at the
    // top of the page (issue 34, item 2): here, an environment that is no UUID — once
    // the page has been drawn again after the last write.
    browser
        .until(
            "the page drawn again",
            "!document.querySelector('main[aria-busy]') && document.querySelector('#evidence-form')",
        )
        .await;
    fill_and_submit(
        &browser,
        "evidence-form",
        &[
            ("evidence-gate", "staging"),
            ("evidence-server", &fides.uri()),
            ("evidence-environment", "not-a-uuid"),
        ],
    )
    .await;
    let beside = browser
        .until_text(
            "#evidence-form button[type=submit] + .refused-here[role=alert]",
            "It did not work: ",
        )
        .await;
    assert!(beside.contains("fidesEnvironment"), "{beside}");
    assert_eq!(
        browser
            .js(
                "return document.getElementById('notice').textContent;",
                vec![]
            )
            .await,
        json!("")
    );

    // Alice (a viewer) and ci-bot (no role at all) may change nothing here: they do not
    // see the grants, and the forms are there read-only, saying why (issue 34, item 5).
    for who in [Alice, CiBot] {
        browser.click("#sign-out").await;
        browser.open(&format!("/settings/?namespace={ns}")).await;
        browser.sign_in(&server.token(who)).await;
        browser.until_text("#identity", who.username()).await;
        browser
            .until("grants hidden", "document.querySelector('#grants-hidden')")
            .await;
        assert_eq!(
            browser
                .js(
                    "return document.querySelector('#grant-form') === null;",
                    vec![]
                )
                .await,
            json!(true)
        );
        for (form, needs) in [
            ("evidence-form", "(update gates)"),
            ("cluster-form", "(create secrets)"),
        ] {
            let state = browser
                .js(
                    "const form = document.getElementById(arguments[0]);                      const group = form.querySelector('fieldset');                      const why = document.getElementById(group.getAttribute('aria-describedby') || '');                      return [form.querySelectorAll('input:enabled, select:enabled, textarea:enabled, button:enabled').length,                              why ? why.textContent : '', why ? why.getClientRects().length > 0 : false];",
                    vec![json!(form)],
                )
                .await;
            assert_eq!(
                state[0],
                json!(0),
                "{who:?}: nothing in #{form} can be used"
            );
            let why = state[1].as_str().unwrap_or_default();
            assert!(
                why.starts_with(&format!(
                    "{} may not do this in {ns}: it needs ",
                    who.username()
                )) && why.contains(needs),
                "{who:?}, #{form}: {why:?}"
            );
            assert_eq!(state[2], json!(true), "{who:?}: the reason is shown");
        }
        crate::ui_axe::check(&browser, &format!("settings as {who:?}")).await;
    }
    browser.close().await;
}
