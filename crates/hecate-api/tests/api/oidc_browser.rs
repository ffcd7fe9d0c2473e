//! Browser sign-in end to end: a kube-apiserver of its own that trusts the loopback
//! OIDC provider (`--oidc-issuer-url`, `--oidc-ca-file`, the email and groups claims),
//! so the ID token really is a Kubernetes bearer token; hecate-api with `/auth/*`;
//! and headless Chromium clicking "Sign in with SSO". The cluster's RBAC, granted to
//! the provider's group, decides what the signed-in user sees.

use std::sync::Arc;
use std::time::Duration;

use hecate_api::AppState;
use hecate_api::oidc::{Oidc, Settings};
use hecate_testenv::fixtures::{bundle, gate, gate_spec};
use hecate_testenv::oidc::{Provider, User};
use hecate_testenv::{Binaries, ControlPlane, Endpoint, Identity, Lifetime, TestEnv};
use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef, Subject};
use kube::api::ObjectMeta;
use serde_json::Value;

use crate::ui_browser::Browser;

const CLIENT_ID: &str = "hecate";

#[tokio::test]
async fn sign_in_with_sso_in_chromium_is_the_cluster_deciding() {
    let provider = Provider::start(User::new("ada@example.com", &["sso-viewers"])).await;
    let dir = std::env::temp_dir().join(format!("hecate-oidc-plane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("oidc-ca.crt");
    std::fs::write(&ca_file, provider.ca_pem()).unwrap();
    let extra = vec![
        format!("--oidc-issuer-url={}", provider.issuer()),
        format!("--oidc-client-id={CLIENT_ID}"),
        format!("--oidc-ca-file={}", ca_file.display()),
        "--oidc-username-claim=email".to_string(),
        "--oidc-username-prefix=oidc:".to_string(),
        "--oidc-groups-claim=groups".to_string(),
        "--oidc-groups-prefix=oidc:".to_string(),
    ];
    let mut plane = tokio::task::spawn_blocking(move || {
        let binaries = Binaries::locate_or_build()?;
        ControlPlane::start_with(&binaries, &dir, Lifetime::ThisProcess, &extra)
    })
    .await
    .unwrap()
    .expect("a control plane trusting the OIDC provider");
    let endpoint: &'static Endpoint = Box::leak(Box::new(plane.endpoint().clone()));
    let env = TestEnv::on(endpoint).await;
    hecate_testenv::rbac::grant_deployed_roles(&env).await;
    gate(&env, "production", gate_spec(&[], true)).await;
    bundle(&env, "b1").await;
    // The provider's group may read Hecate's objects here, and nowhere else.
    env.create(RoleBinding {
        metadata: ObjectMeta {
            name: Some("sso-viewers".into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "hecate-viewer".into(),
        },
        subjects: Some(vec![Subject {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Group".into(),
            name: "oidc:sso-viewers".into(),
            namespace: None,
        }]),
    })
    .await;

    // hecate-api on that cluster, signing browsers in through the provider.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let oidc = Oidc::discover(
        &Settings {
            issuer: provider.issuer(),
            client_id: CLIENT_ID.into(),
            client_secret: Some("s3cret".into()),
            redirect_url: format!("{base}/auth/callback"),
            scopes: vec!["profile".into(), "email".into(), "groups".into()],
            // Plain HTTP on loopback, as `--oidc-insecure-cookie` is for.
            secure_cookie: false,
        },
        &[provider.ca_pem().as_bytes().to_vec()],
    )
    .await
    .unwrap();
    let state = AppState::new(env.client(Identity::HecateApi).await, vec![]).with_oidc_sign_in();
    let app = Arc::new(oidc).router().merge(hecate_api::router(state));
    tokio::spawn(hecate_api::serve(
        listener,
        app,
        hecate_api::Limits::default(),
        std::future::pending(),
    ));

    // An ID token is a bearer token this cluster accepts (its authenticator reads the
    // provider's keys in the background after start), and RBAC shows one namespace.
    let http = reqwest::Client::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let namespaces = loop {
        // A fresh token each time: a refusal is remembered for its token a while.
        let token = provider.id_token(CLIENT_ID, None, 600);
        let answer = http
            .get(format!("{base}/api/v1alpha1/namespaces"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        if answer.status() == 200 {
            break serde_json::from_str::<Value>(&answer.text().await.unwrap()).unwrap();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cluster never accepted the provider's ID token: {}",
            answer.status()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(
        namespaces,
        serde_json::json!({"namespaces": [env.namespace]})
    );

    // The browser: "Sign in with SSO", the provider, back signed in.
    let browser = Browser::start_with(&base, &["--ignore-certificate-errors"]).await;
    browser.open("/").await;
    browser.until_text("main", "Sign in with SSO").await;
    assert_eq!(
        browser
            .js("return document.querySelector('#token') === null;", vec![])
            .await,
        Value::Bool(true),
        "with SSO there is no token form"
    );
    browser.click("#sign-in-sso").await;
    browser.until_text("main", "production").await;
    let url = browser.client.current_url().await.unwrap();
    assert!(
        url.as_str()
            .contains(&format!("namespace={}", env.namespace)),
        "{url}"
    );
    // The token stays in the HttpOnly cookie: the page never sees it.
    assert_eq!(
        browser.js("return document.cookie;", vec![]).await,
        Value::String(String::new())
    );
    // Signing out ends the server's session: the SSO button again, and no way back
    // in without the provider.
    browser.click("#sign-out").await;
    browser.until_text("main", "Sign in with SSO").await;
    browser.open("/").await;
    browser.until_text("main", "Sign in with SSO").await;
    browser.close().await;
    plane.stop();
}
