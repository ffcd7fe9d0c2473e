//! Rollback on the Gate page, in Chromium against the real API server (DECISION 139):
//! a Gate whose newest crossing was not verified says so (a `VerificationFailed`
//! blocker whose fix is a rollback button); each earlier occupant not marked "not
//! verified" offers "Roll back to this"; a promoter who clicks it and confirms opens a
//! Passage for that Bundle naming the crossing it undoes, and a viewer sees the button
//! disabled with the reason in words beside it. axe-core finds nothing at either size.

use hecate_testenv::Identity::*;
use hecate_testenv::fixtures::{bundles_in_order, gate, gate_spec, now, passage};
use hecate_types::{GateOccupant, GateStatus, Passage, PassagePhase};
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, drawn, sign_in_as};

/// Production, which verifies what crosses it (an `http` check), held b1, then b2
/// (both verified), and now b3, whose verification said no: the crossings are
/// Passages `production-1` … `-3`.
async fn unverified_production(server: &Server) {
    let env = &server.env;
    bundles_in_order(env, &["b1", "b2", "b3"]).await;
    let mut spec = gate_spec(&[], false);
    spec.verify = vec![hecate_types::Verification {
        uses: "http".into(),
        with: Some(json!({"url": "http://shop.example/healthz"})),
    }];
    let mut production = gate(env, "production", spec).await;
    for (n, bundle) in [(1, "b1"), (2, "b2"), (3, "b3")] {
        passage(
            env,
            &format!("production-{n}"),
            "production",
            bundle,
            PassagePhase::Succeeded,
        )
        .await;
    }
    // Started a minute apart (created together, they would tie), the newest not
    // verified.
    for n in 1..=3_i64 {
        let started = (jiff::Timestamp::now() - jiff::SignedDuration::from_mins(4 - n)).to_string();
        let mut status = json!({"startedAt": started});
        if n == 3 {
            status["verification"] =
                json!({"phase": "Failed", "message": "error rate 7% is above 1%"});
        }
        env.api::<Passage>()
            .patch_status(
                &format!("production-{n}"),
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(json!({ "status": status })),
            )
            .await
            .unwrap();
    }
    let occupant = |n: u32, bundle: &str, verified| GateOccupant {
        bundle: bundle.into(),
        digest: String::new(),
        passage: format!("production-{n}"),
        entered_at: now(),
        actor: "bob".into(),
        verified: Some(verified),
    };
    production.status = Some(GateStatus {
        current: Some(occupant(3, "b3", false)),
        history: vec![
            occupant(3, "b3", false),
            occupant(2, "b2", true),
            occupant(1, "b1", true),
        ],
        ..GateStatus::default()
    });
    env.write_status(&production).await;
}

/// A screenshot at phone width of the whole page as it lays out there (the page is
/// taller on a phone than the desktop height the harness would measure).
async fn phone_screenshot(browser: &Browser, name: &str) {
    let (width, height) = crate::ui_axe::PHONE;
    browser.client.set_window_size(width, height).await.unwrap();
    browser.screenshot(name, width).await;
}

/// The history row of Passage `passage`.
fn row(passage: &str) -> String {
    format!("tr[data-passage='{passage}']")
}

/// `[disabled, text beside it]` of the rollback button in `css`, or null.
async fn rollback_button(browser: &Browser, css: &str) -> Value {
    browser
        .js(
            "const b = document.querySelector(`${arguments[0]} button[data-action=rollback]`); \
             return b && [b.disabled, (b.parentElement.querySelector('.why-not') || {}).textContent || ''];",
            vec![json!(css)],
        )
        .await
}

#[tokio::test]
async fn a_promoter_rolls_back_from_the_history_and_a_viewer_is_told_why_not() {
    let server = Server::start().await;
    unverified_production(&server).await;
    let ns = server.ns().to_string();
    let page = at(&server, "/gates/?name=production");
    let browser = Browser::start(&server.base).await;

    // alice, a viewer: the rollbacks are there, disabled, with why in words.
    browser.open(&page).await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "production").await;
    let blocker = browser
        .until_text(
            ".blocker[data-kind=VerificationFailed]",
            "error rate 7% is above 1%",
        )
        .await;
    assert!(
        blocker.contains("hecate rollback production"),
        "the fix in words: {blocker}"
    );
    let why = format!(
        "alice may not do this in {ns}: it needs the hecate-promoter role (create passages)."
    );
    browser
        .until(
            "alice's rollback, disabled with its reason",
            &format!(
                "document.querySelector(\"{} .why-not\")?.textContent === {}",
                row("production-1"),
                json!(why)
            ),
        )
        .await;
    for css in [
        row("production-1"),
        row("production-2"),
        ".blocker[data-kind=VerificationFailed]".to_string(),
    ] {
        assert_eq!(
            rollback_button(&browser, &css).await,
            json!([true, why]),
            "{css}"
        );
    }
    // The current occupant is what a rollback undoes: no button, and marked.
    assert_eq!(
        rollback_button(&browser, &row("production-3")).await,
        Value::Null
    );
    let marks = browser
        .js(
            "return ['production-3', 'production-2', 'production-1'].map(p => document.querySelector(`tr[data-passage=${p}] [data-verified]`).textContent);",
            vec![],
        )
        .await;
    assert_eq!(marks, json!(["not verified", "verified", "verified"]));
    let axe_alice = crate::ui_axe::check(&browser, "a Gate not verified, as alice").await;
    browser.screenshot("rollback-alice-gate", 1280).await;
    phone_screenshot(&browser, "rollback-alice-gate-phone").await;

    // bob, a promoter: rolls back to b1, the older row.
    sign_in_as(&browser, &server, Bob, &page).await;
    drawn(&browser, "production").await;
    browser
        .until(
            "bob's rollback, enabled",
            &format!(
                "document.querySelector(\"{} button[data-action=rollback]\")?.disabled === false",
                row("production-1")
            ),
        )
        .await;
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('main .why-not').length;",
                vec![]
            )
            .await,
        json!(0),
        "nothing to explain to bob"
    );
    let axe_bob = crate::ui_axe::check(&browser, "a Gate not verified, as bob").await;
    browser.screenshot("rollback-bob-gate", 1280).await;
    phone_screenshot(&browser, "rollback-bob-gate-phone").await;
    browser
        .click(&format!(
            "{} button[data-action=rollback]",
            row("production-1")
        ))
        .await;
    let asked = browser
        .until(
            "the confirmation",
            "document.querySelector('dialog#confirm[open]')?.textContent",
        )
        .await;
    let asked = asked.as_str().unwrap_or_default();
    assert!(
        asked.contains(
            "Roll production back to 1.0.0 (b1) as you, undoing the crossing of 1.0.0 (b3)."
        ),
        "{asked}"
    );
    // What it changes, as the Cross dialog says (#53): going back, and what it undoes.
    let changes = browser
        .until_text("#confirm-changes .diff", "a rollback")
        .await;
    assert!(
        changes.contains("Going back to an older Bundle: a rollback."),
        "{changes}"
    );
    browser.screenshot("rollback-confirm", 1280).await;
    // Asked from far down the page, its result is said where it is seen (#53).
    let scrolled = browser
        .js(
            "window.scrollTo(0, document.body.scrollHeight); return window.scrollY > 0;",
            vec![],
        )
        .await;
    assert_eq!(scrolled, json!(true));
    browser.click("#confirm-ok").await;
    let said = browser
        .until_text("#notice [data-kind=ok]", "Rollback started")
        .await;
    let seen = browser
        .js(
            "const r = document.querySelector('#notice .message').getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight;",
            vec![],
        )
        .await;
    assert_eq!(seen, json!(true), "the notice is in view");
    assert!(said.contains("undoing production-3"), "{said}");
    let opened = browser
        .until(
            "the new Passage's link",
            "document.querySelector('#notice a[data-rollback-passage]')?.dataset.rollbackPassage",
        )
        .await;
    let opened = opened.as_str().unwrap_or_default().to_string();

    let passages = server
        .env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap();
    let rollbacks: Vec<_> = passages
        .items
        .iter()
        .filter(|p| p.annotations().contains_key("hecate.dev/rollback-of"))
        .map(|p| {
            (
                p.name_any(),
                p.spec.bundle.clone(),
                p.spec.actor.clone(),
                p.annotations()["hecate.dev/rollback-of"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rollbacks,
        vec![(
            opened.clone(),
            "b1".into(),
            "bob".into(),
            "production-3".into()
        )]
    );
    assert_eq!([axe_alice, axe_bob], [[0, 0], [0, 0]]);

    // The rollback says so wherever it is named (#53; before, it read as any crossing).
    browser
        .open(&at(&server, &format!("/passages/?name={opened}")))
        .await;
    let line = browser
        .until_text("[data-field=rollback-of]", "undoing")
        .await;
    assert_eq!(line, "↶ A rollback: bob rolled back, undoing production-3.");
    browser.screenshot("rollback-passage", 1280).await;
    browser.open(&at(&server, "/passages/")).await;
    let marked = browser
        .until_text(
            &format!("tr[data-passage={opened}] [data-rollback-of]"),
            "rollback",
        )
        .await;
    assert_eq!(marked.trim(), "↶ rollback of production-3");
    browser.open(&at(&server, "/audit/")).await;
    let audited = browser
        .until_text("[data-rollback-of=production-3]", "rolling back")
        .await;
    assert_eq!(audited.trim(), "↶ rolling back");
    let undid = browser
        .until_text("[data-field=rollback-of]", "undid")
        .await;
    assert!(undid.starts_with("undid production-3"), "{undid}");
    assert_eq!(
        crate::ui_axe::check(&browser, "the audit trail with a rollback").await,
        [0, 0]
    );

    // While it crosses, no other rollback can start, and each button says so.
    server
        .env
        .api::<hecate_types::Gate>()
        .patch_status(
            "production",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"status": {"activePassage": rollbacks[0].0}})),
        )
        .await
        .unwrap();
    browser.open(&page).await;
    drawn(&browser, "production").await;
    let busy = browser
        .until_text(
            &format!("{} .why-not", row("production-2")),
            "is already crossing",
        )
        .await;
    assert!(busy.contains(&rollbacks[0].0), "{busy}");
    browser.close().await;
}

/// A rollback the cluster would refuse is judged before the click, by ops for the
/// signed-in person, and the reason said beside the button (#53: before, "Roll back to
/// this" was enabled inside a deny window and refused after the click).
#[tokio::test]
async fn a_refused_rollback_is_said_beside_its_button() {
    let server = Server::start().await;
    unverified_production(&server).await;
    // A freeze open all day: no crossing starts, a rollback neither.
    server
        .env
        .api::<hecate_types::Gate>()
        .patch(
            "production",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"windows": [
                {"schedule": "0 0 * * *", "duration": "24h", "deny": true}
            ]}})),
        )
        .await
        .unwrap();
    let page = at(&server, "/gates/?name=production");
    let browser = Browser::start(&server.base).await;
    browser.open(&page).await;
    browser.sign_in(&server.token(Bob)).await;
    drawn(&browser, "production").await;
    let frozen = browser
        .until_text(&format!("{} .why-not", row("production-1")), "deny window")
        .await;
    assert!(frozen.contains("deny window"), "{frozen}");
    assert_eq!(
        rollback_button(&browser, &row("production-1")).await[0],
        json!(true),
        "disabled before the click"
    );

    browser.screenshot("rollback-refused", 1280).await;
    phone_screenshot(&browser, "rollback-refused-phone").await;
    // No Passage was opened.
    let passages = server
        .env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(passages.items.len(), 3);

    // Suspended, the Gate takes nothing: the page says so beside each rollback.
    server
        .env
        .api::<hecate_types::Gate>()
        .patch(
            "production",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"suspend": true}})),
        )
        .await
        .unwrap();
    browser.open(&page).await;
    drawn(&browser, "production").await;
    browser
        .until_text(
            &format!("{} .why-not", row("production-2")),
            "Gate production is suspended",
        )
        .await;
    assert_eq!(
        rollback_button(&browser, &row("production-2")).await[0],
        json!(true)
    );
    browser.close().await;
}
