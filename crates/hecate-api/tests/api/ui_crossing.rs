//! The Gate page says what ops decided about a crossing, in headless Chromium against
//! the real API server: a crossing nobody starts is named as such (never "nothing
//! stands in the way"), the Bundles behind it stay listed, and an eligible Bundle whose
//! last crossing here failed is marked before anyone crosses it again.

use hecate_testenv::Identity::*;
use hecate_types::{Passage, PassageSpec, Step};
use kube::ResourceExt as _;
use serde_json::Value;

use crate::harness::*;
use crate::ui_browser::*;

fn gate_page(server: &Server) -> String {
    format!("/gates/?name=production&namespace={}", server.ns())
}

#[tokio::test]
async fn a_crossing_that_never_starts_is_named() {
    let server = Server::start().await;
    let env = &server.env;
    hecate_testenv::fixtures::gate(
        env,
        "production",
        hecate_testenv::fixtures::gate_spec(&[], false),
    )
    .await;
    hecate_testenv::fixtures::bundles_in_order(env, &["b1", "b2"]).await;
    // Asked for three minutes ago (as promote records it); no controller runs here.
    let mut stuck = Passage::new(
        "production-1",
        PassageSpec {
            gate: "production".into(),
            bundle: "b1".into(),
            actor: "bob".into(),
            steps: vec![Step {
                uses: "flux-wait".into(),
                ..Step::default()
            }],
            ..PassageSpec::default()
        },
    );
    stuck.metadata.annotations = Some(
        [(
            hecate_types::wellknown::ANNOTATION_CREATED_AT.to_string(),
            (jiff::Timestamp::now() - jiff::SignedDuration::from_mins(3)).to_string(),
        )]
        .into(),
    );
    env.create(stuck).await;

    let browser = Browser::start(&server.base).await;
    browser.open(&gate_page(&server)).await;
    browser.sign_in(&server.token(Admin)).await;

    let blocker = browser
        .until_text(
            ".blocker[data-kind=NotStarted]",
            "is hecate-controller running?",
        )
        .await;
    assert!(blocker.contains("production-1 was created at"), "{blocker}");
    assert!(
        blocker.contains("kubectl get pods -A -l app.kubernetes.io/name=hecate-controller"),
        "the fix names the command: {blocker}"
    );
    let crossing = browser
        .until_text("[data-stalled=true]", "not started")
        .await;
    assert!(crossing.contains("production-1"), "{crossing}");
    assert!(crossing.contains("3 minutes ago"), "its age: {crossing}");
    let page = browser.page_text().await;
    assert!(
        !page.contains("Nothing stands in the way"),
        "a crossing Gate never says so: {page}"
    );
    // b2 is still listed, with nothing offered while b1 is crossing.
    browser.until_text("tr[data-bundle='b2']", "b2").await;
    browser
        .until_text("main", "Could cross after this crossing")
        .await;
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('button[data-action=promote]').length;",
                vec![]
            )
            .await,
        0
    );
    browser.screenshot("gate-crossing-not-started", 1280).await;
    browser.close().await;
}

#[tokio::test]
async fn a_bundle_that_failed_here_before_is_marked() {
    let server = Server::start().await;
    server.demo().await;
    // 1.7.0 failed in production, then 1.8.0 crossed; 1.7.0 is still eligible.
    let failed = hecate_testenv::demo::release_bundle(7).name_any();
    let browser = Browser::start(&server.base).await;
    browser.open(&gate_page(&server)).await;
    browser.sign_in(&server.token(Bob)).await;

    let mark = browser
        .until_text(
            &format!("tr[data-bundle='{failed}'] [data-failed-before=production-1-7-0]"),
            "failed here before",
        )
        .await;
    assert!(mark.contains("FluxDegraded"), "says why: {mark}");
    // Only that one: the others never failed here.
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('[data-failed-before]').length;",
                vec![]
            )
            .await,
        Value::from(1)
    );
    browser.screenshot("gate-failed-before", 1280).await;

    // Its windows in ops' words, not as cron.
    server
        .env
        .api::<hecate_types::Gate>()
        .patch(
            "production",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({"spec": {"windows": [
                {"schedule": "0 0 * * 6", "duration": "48h", "timeZone": "Europe/London", "deny": true}
            ]}})),
        )
        .await
        .unwrap();
    browser.open(&gate_page(&server)).await;
    let words = browser
        .until_text(
            "ul.windows li",
            "no crossings Sat 00:00 – Mon 00:00 Europe/London",
        )
        .await;
    assert!(!words.contains("0 0 * * 6"), "{words}");

    // The audit says "failed" as Passages do, while the filter keeps the code.
    browser
        .open(&format!("/audit/?namespace={}", server.ns()))
        .await;
    browser
        .until_text("tr.refused [data-outcome=failed]", "failed")
        .await;
    browser.close().await;
}

#[tokio::test]
async fn a_waiting_step_says_how_often_it_looked_not_which_attempt() {
    let server = Server::start().await;
    let env = &server.env;
    hecate_testenv::fixtures::gate(
        env,
        "production",
        hecate_testenv::fixtures::gate_spec(&[], false),
    )
    .await;
    hecate_testenv::fixtures::bundles_in_order(env, &["b1"]).await;
    env.create(Passage::new(
        "production-1",
        PassageSpec {
            gate: "production".into(),
            bundle: "b1".into(),
            actor: "bob".into(),
            steps: vec![Step {
                uses: "flux-wait".into(),
                ..Step::default()
            }],
            ..PassageSpec::default()
        },
    ))
    .await;
    // What the controller records of two and a half minutes of normal waiting: each
    // look is counted in `attempts`, and nothing failed (no reason).
    let started = (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(150)).to_string();
    env.api::<Passage>()
        .patch_status(
            "production-1",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({"status": {
                "phase": "Running",
                "startedAt": started,
                "steps": [{
                    "uses": "flux-wait",
                    "phase": "Running",
                    "message": "Kustomization shop-production is reconciling",
                    "startedAt": started,
                    "attempts": 14,
                }],
            }})),
        )
        .await
        .unwrap();

    let browser = Browser::start(&server.base).await;
    browser.open(&gate_page(&server)).await;
    browser.sign_in(&server.token(Admin)).await;
    let crossing = browser.until_text(".crossing-now", "looked 14 times").await;
    assert!(crossing.contains("flux-wait"), "{crossing}");
    assert!(
        !crossing.contains("attempt"),
        "a wait is not a string of failed attempts: {crossing}"
    );
    browser.close().await;
}
