//! The Overview says what waits on a person (DECISION 141), in Chromium: the Bundle
//! waiting for release managers' approval, with whom it waits for and a button that
//! approves it there; a failed crossing with a link to it; and no "nothing needs
//! attention" while anything does. axe-core finds nothing.

use hecate_testenv::Identity::*;
use hecate_testenv::fixtures::{cleared_by, gate, gate_spec, passage, release_managers_spec};
use hecate_types::PassagePhase;
use pretty_assertions::assert_eq;

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, drawn};

/// An item of this test's namespace: the Overview spans every namespace carol may
/// read, and tests running beside this one have Gates of the same names.
fn item(server: &Server, kind: &str, gate: &str) -> String {
    format!(
        "li.attention-item[data-namespace='{}'][data-kind={kind}][data-gate={gate}]",
        server.ns()
    )
}

#[tokio::test]
async fn the_overview_lists_what_waits_on_people_with_controls_that_settle_it() {
    let server = Server::start().await;
    gate(&server.env, "staging", gate_spec(&[], false)).await;
    gate(&server.env, "production", release_managers_spec("")).await;
    cleared_by(&server.env, "b1", &["staging"], "bob").await;
    passage(
        &server.env,
        "staging-b0",
        "staging",
        "b1",
        PassagePhase::Failed,
    )
    .await;
    let approval = item(&server, "Approval", "production");
    let failed = item(&server, "Failed", "staging");
    let browser = Browser::start(&server.base).await;

    crate::ui_rights::sign_in_as(&browser, &server, Carol, &at(&server, "/")).await;
    drawn(&browser, "Overview").await;
    browser
        .until_text(
            &approval,
            "0 of 2 from release-managers; an approval from release-managers would count",
        )
        .await;
    browser.until_text(&failed, "Open staging-b0").await;
    // Failures first: the most pressing thing leads.
    let kinds = browser
        .js(
            "return [...document.querySelectorAll(`li.attention-item[data-namespace='${arguments[0]}']`)].map(x => x.dataset.kind);",
            vec![serde_json::json!(server.ns())],
        )
        .await;
    assert_eq!(kinds, serde_json::json!(["Failed", "Approval"]));
    let calm = browser
        .js("return document.querySelector('.calm') === null;", vec![])
        .await;
    assert_eq!(calm, true, "no 'nothing needs attention' while things wait");
    browser.screenshot("overview-attention", 1280).await;

    // The approval is given from the Overview itself.
    browser
        .click(&format!("{approval} button[data-action=approve]"))
        .await;
    browser
        .until(
            "the confirmation",
            "document.querySelector('dialog#confirm[open]')",
        )
        .await;
    browser.click("#confirm-ok").await;
    browser.until_text(&approval, "carol approved").await;
    assert_eq!(
        crate::ui_axe::check(&browser, "the overview with things waiting").await,
        [0, 0]
    );
    browser.close().await;
}
