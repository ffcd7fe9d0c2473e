//! The Approvals page under an approval policy, in Chromium (DECISION 137): each row
//! says where the Bundle stands against production's policy and what the signed-in
//! person's approval would do — in words on the page, not a tooltip —, the approve
//! button is disabled for someone who would not count, a rejection asks for its reason
//! in the dialog, and the one the policy names may withdraw it. axe-core finds
//! nothing.

use hecate_testenv::Identity::{self, *};
use hecate_testenv::fixtures::{cleared_by, gate, release_managers_spec};
use hecate_types::Bundle;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, drawn};

const ROW: &str = "tr[data-bundle='b1']";

async fn sign_in_as(browser: &Browser, server: &Server, who: Identity) {
    crate::ui_rights::sign_in_as(browser, server, who, &at(server, "/approvals/")).await;
    drawn(browser, "Approvals").await;
}

/// Clicks `button` in the row, and waits for the dialog it opens.
async fn opened(browser: &Browser, button: &str) {
    browser
        .click(&format!("{ROW} button[data-action={button}]"))
        .await;
    browser
        .until(
            "the confirmation",
            "document.querySelector('dialog#confirm[open]')",
        )
        .await;
}

/// Clicks `button` in the row, and confirms in the dialog that follows.
async fn confirmed(browser: &Browser, button: &str, typed: Option<&str>) {
    opened(browser, button).await;
    if let Some(text) = typed {
        assert_eq!(
            browser
                .js(
                    "return document.querySelector('#confirm-ok').disabled;",
                    vec![]
                )
                .await,
            true,
            "nothing typed yet"
        );
        browser.press(text).await;
    }
    browser.click("#confirm-ok").await;
}

async fn cell(browser: &Browser, data: &str) -> String {
    browser
        .js(
            &format!("return document.querySelector(\"{ROW} [data-{data}]\").textContent;"),
            vec![],
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn disabled(browser: &Browser, action: &str) -> bool {
    browser
        .js(
            &format!(
                "return document.querySelector(\"{ROW} button[data-action={action}]\").disabled;"
            ),
            vec![],
        )
        .await
        == true
}

#[tokio::test]
async fn the_queue_says_where_each_bundle_stands_and_what_your_approval_would_do() {
    let server = Server::start().await;
    gate(&server.env, "production", release_managers_spec("")).await;
    cleared_by(&server.env, "b1", &["staging"], "bob").await;
    // bob may approve as far as the cluster goes; the policy still does not count him.
    server
        .env
        .grant(Bob, &["update"], &["bundles/status"])
        .await;
    let browser = Browser::start(&server.base).await;

    sign_in_as(&browser, &server, Bob).await;
    browser
        .until_text(ROW, "0 of 2 from release-managers")
        .await;
    assert_eq!(
        cell(&browser, "you").await,
        "Your approval would not count: you promoted it through an earlier Gate."
    );
    assert!(disabled(&browser, "approve").await, "bob's approve button");

    // carol approves: the dialog, then the page says where it stands now.
    sign_in_as(&browser, &server, Carol).await;
    assert_eq!(cell(&browser, "you").await, "Your approval would count.");
    confirmed(&browser, "approve", None).await;
    browser
        .until_text(
            "#notice",
            "Now: 1 of 2 from release-managers; carol approved.",
        )
        .await;
    browser
        .until_text(&format!("{ROW} [data-you]"), "You approved it.")
        .await;
    assert_eq!(
        cell(&browser, "progress").await,
        "1 of 2 from release-managers; carol approved"
    );
    // The Gate page's and the Overview's Approve buttons are judged before the click
    // as this page judges them (before, enabled, and refused after the click, #53).
    for page in ["/gates/?name=production", "/"] {
        browser.open(&at(&server, page)).await;
        let why = browser
            .until_text(
                "button[data-action=approve][data-bundle=b1] + .why-not",
                "would not count",
            )
            .await;
        assert_eq!(
            why, "Your approval would not count: you approved it",
            "{page}"
        );
    }

    // dave opens the Reject dialog and thinks better of it: Cancel closes it, reason
    // empty (before, the empty required reason held it open, #53), and nothing is held.
    sign_in_as(&browser, &server, Dave).await;
    opened(&browser, "reject").await;
    browser.click("#confirm-cancel").await;
    browser
        .until(
            "the dialog closed",
            "!document.querySelector('dialog#confirm[open]')",
        )
        .await;
    let untouched: Bundle = server.env.api().get("b1").await.unwrap();
    assert!(
        untouched.status.is_none_or(|s| s.rejections.is_empty()),
        "a cancelled rejection records nothing"
    );

    // dave rejects it, with a reason the dialog asks for.
    confirmed(&browser, "reject", Some("not this week")).await;
    browser.until_text("#notice", "Rejected:").await;
    browser
        .until_text(ROW, "Rejected by dave: not this week")
        .await;
    let held: Bundle = server.env.api().get("b1").await.unwrap();
    let rejection = &held.status.unwrap().rejections[0];
    assert_eq!(
        (rejection.actor.as_str(), rejection.reason.as_str()),
        ("dave", "not this week")
    );
    assert_eq!(
        crate::ui_axe::check(&browser, "approvals with a rejection").await,
        [0, 0]
    );

    // carol, a release manager the policy names, may lift it.
    sign_in_as(&browser, &server, Carol).await;
    assert_eq!(
        cell(&browser, "you").await,
        "You may withdraw the rejection."
    );
    assert!(!disabled(&browser, "withdraw").await);
    confirmed(&browser, "withdraw", None).await;
    browser.until_text("#notice", "Withdrawn:").await;
    browser
        .until_text(&format!("{ROW} [data-you]"), "You approved it.")
        .await;
    let answer = server
        .get("/api/v1alpha1/namespaces/{ns}/approvals", Some(Carol))
        .await;
    assert_eq!(answer.json()[0]["progress"]["rejected"], json!(null));

    // The Bundle's own page is the record of the decision (#53): where its approvals
    // stand for carol, with the same buttons, and every approval and rejection — who,
    // with which groups, why — newest first.
    browser.open(&at(&server, "/bundles/?name=b1")).await;
    browser
        .until_text(
            ".decisions [data-progress]",
            "1 of 2 from release-managers; carol approved",
        )
        .await;
    browser
        .until_text(".decisions [data-you]", "You approved it.")
        .await;
    let record = browser
        .js(
            "return [...document.querySelectorAll('.decisions tr[data-decision]')].map(r => [r.dataset.decision, r.cells[3].textContent, r.cells[4].textContent]);",
            vec![],
        )
        .await;
    let record: Vec<(String, String, String)> = serde_json::from_value(record).unwrap();
    let kinds: Vec<(&str, &str)> = record
        .iter()
        .map(|(kind, who, _)| (kind.as_str(), who.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("withdrawn", "carol"),
            ("rejected", "dave"),
            ("approved", "carol")
        ]
    );
    assert!(record[1].2.contains("not this week"), "{record:?}");
    assert!(record[2].2.contains("release-managers"), "{record:?}");
    assert_eq!(
        crate::ui_axe::check(&browser, "a Bundle's decision record").await,
        [0, 0]
    );
    browser.screenshot("bundle-decisions", 1280).await;
    crate::ui_axe::fits_a_phone(&browser, "a Bundle's decision record").await;
    browser.screenshot("bundle-decisions-phone", 375).await;
    browser.close().await;
}

/// The approve dialog says what will happen (issue 34, item 1): on a Gate that crosses
/// by itself (`spec.auto`), approving is what lets it cross — the controller starts
/// the crossing once nothing else holds the Bundle —; on one that crosses when asked,
/// someone else starts it. From the Approvals page and from the Gate's own page.
#[tokio::test]
async fn the_approve_dialog_says_whether_the_gate_crosses_by_itself() {
    use kube::ResourceExt as _;
    let server = Server::start().await;
    crate::ui_rights::demo_as_deployed(&server).await;
    let awaiting = hecate_testenv::demo::awaiting_approval().name_any();
    let browser = Browser::start(&server.base).await;
    let approvals = at(&server, "/approvals/");
    let production = at(&server, "/gates/?name=production");
    let row = format!("tr[data-bundle='{awaiting}']");

    /// The dialog's detail after clicking `button` once it is enabled; the dialog is
    /// then cancelled.
    async fn detail(browser: &Browser, button: &str) -> String {
        browser
            .until(
                "carol's approve button",
                &format!("document.querySelector(\"{button}\")?.disabled === false"),
            )
            .await;
        browser.click(button).await;
        browser
            .until(
                "the confirmation",
                "document.querySelector('dialog#confirm[open]')",
            )
            .await;
        let text = browser
            .js(
                "return document.querySelector('#confirm-detail').textContent;",
                vec![],
            )
            .await;
        browser.click("#confirm-cancel").await;
        browser
            .until(
                "the dialog closed",
                "!document.querySelector('dialog#confirm[open]')",
            )
            .await;
        text.as_str().unwrap_or_default().to_string()
    }

    // The demo's production is frozen at weekends: what its windows hold is said
    // last, with a window of the test's own.
    let windows = |windows: serde_json::Value| {
        let gates = server.env.api::<hecate_types::Gate>();
        async move {
            gates
                .patch(
                    "production",
                    &kube::api::PatchParams::default(),
                    &kube::api::Patch::Merge(json!({"spec": {"windows": windows}})),
                )
                .await
                .unwrap();
        }
    };
    windows(json!([])).await;
    let manual = "Approving does not cross the Gate: someone else starts the crossing, and the one who approved may not be the one who promotes.";
    let automatic = "Approving lets production cross by itself: the controller starts the crossing as soon as nothing else holds it.";
    crate::ui_rights::sign_in_as(&browser, &server, Carol, &approvals).await;
    drawn(&browser, "Approvals").await;
    let approve = format!("{row} button[data-action=approve]");
    assert_eq!(
        detail(&browser, &approve).await,
        manual,
        "production crosses when asked"
    );

    // production crosses by itself from now on.
    server
        .env
        .api::<hecate_types::Gate>()
        .patch(
            "production",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"auto": true}})),
        )
        .await
        .unwrap();
    browser.open(&approvals).await;
    drawn(&browser, "Approvals").await;
    assert_eq!(detail(&browser, &approve).await, automatic);
    browser.open(&production).await;
    drawn(&browser, "production").await;
    assert_eq!(detail(&browser, &approve).await, automatic);

    // A freeze from this hour for two hours (UTC): the approval waits for it, and the
    // dialog says that production then crosses by itself, unattended, and when (#53).
    let hour = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .hour();
    windows(json!([{"schedule": format!("0 {hour} * * *"), "duration": "2h", "deny": true}])).await;
    browser.open(&approvals).await;
    drawn(&browser, "Approvals").await;
    let held = detail(&browser, &approve).await;
    for said in [
        "production's windows hold crossings now: blocked by deny window",
        "Your approval waits for them: once nothing else holds it, production crosses by itself as they open (",
        " your time), with nobody watching.",
    ] {
        assert!(held.contains(said), "{said}: {held}");
    }
    browser.close().await;
}

/// The Cross button says before the click that the one who approved may not also
/// cross it (issue 34): carol and dave, release managers, approved b1 for production;
/// carol, who may create Passages, opens production's page and finds her Cross button
/// disabled with promote's own reason beside it; bob's is enabled.
#[tokio::test]
async fn the_cross_button_of_a_bundle_you_approved_says_you_may_not_cross_it() {
    let server = Server::start().await;
    gate(&server.env, "production", release_managers_spec("")).await;
    cleared_by(&server.env, "b1", &["staging"], "bob").await;
    for who in [Carol, Dave] {
        let approved = server
            .post(
                "/api/v1alpha1/namespaces/{ns}/bundles/b1/approve",
                Some(who),
                Some(r#"{"gate":"production"}"#),
            )
            .await;
        assert_eq!(approved.status, 200, "{}", approved.body);
    }
    // carol may cross as far as the cluster goes: the policy is what says no.
    server.env.grant(Carol, &["create"], &["passages"]).await;
    hecate_testenv::rbac::await_access(&server.env, Carol, "create", "passages", "").await;
    let browser = Browser::start(&server.base).await;
    let production = at(&server, "/gates/?name=production");
    let cross = format!("{ROW} button[data-action=promote]");

    crate::ui_rights::sign_in_as(&browser, &server, Carol, &production).await;
    drawn(&browser, "production").await;
    browser
        .until(
            "carol's Cross button, disabled",
            &format!("document.querySelector(\"{cross}\")?.disabled"),
        )
        .await;
    let reason = "carol approved it and cannot also promote it (1 of 2 from release-managers; dave approved; carol's approval does not count (they are the one promoting it))";
    let reasons = crate::ui_rights::disabled_reasons(&browser).await;
    assert!(!reasons.is_empty());
    for (button, said, visible) in &reasons {
        assert!(button.starts_with("Cross production"), "{button}");
        assert_eq!(said, reason, "{button}");
        assert!(visible, "{button}'s reason is shown on the page");
    }
    assert_eq!(
        browser
            .js(
                &format!("return document.querySelector(\"{cross} + .why-not\")?.textContent;"),
                vec![]
            )
            .await,
        reason,
        "said right after the button"
    );
    assert_eq!(
        crate::ui_axe::check(&browser, "production as carol, who approved").await,
        [0, 0]
    );

    crate::ui_rights::sign_in_as(&browser, &server, Bob, &production).await;
    drawn(&browser, "production").await;
    browser
        .until(
            "bob's Cross button, enabled",
            &format!("document.querySelector(\"{cross}\")?.disabled === false"),
        )
        .await;
    assert_eq!(
        crate::ui_rights::disabled_reasons(&browser).await,
        Vec::<(String, String, bool)>::new(),
        "nothing refuses bob"
    );
    browser.close().await;
}
