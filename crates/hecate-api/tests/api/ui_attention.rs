//! The Overview says what waits on a person (DECISION 141), in Chromium: the Bundle
//! waiting for release managers' approval, with whom it waits for and a button that
//! approves it there; a failed crossing with a link to it; and no "nothing needs
//! attention" while anything does; another namespace's items counted with a link, not
//! listed among this one's. axe-core finds nothing.

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
    // Another team's namespace carol may read: its failure is counted, not listed here.
    let other = hecate_testenv::TestEnv::new().await;
    hecate_testenv::rbac::grant_deployed_roles(&other).await;
    gate(&other, "staging", gate_spec(&[], false)).await;
    passage(&other, "staging-b0", "staging", "b1", PassagePhase::Failed).await;
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
    // The list is the selected namespace's; another namespace's items are a link there.
    let listed_elsewhere = browser
        .js(
            "return document.querySelectorAll(`li.attention-item:not([data-namespace='${arguments[0]}'])`).length;",
            vec![serde_json::json!(server.ns())],
        )
        .await;
    assert_eq!(listed_elsewhere, serde_json::json!(0));
    browser
        .until_text(
            &format!(
                ".attention-elsewhere a[data-namespace='{}']",
                other.namespace
            ),
            &format!("1 in {}", other.namespace),
        )
        .await;
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

/// A Bundle an automatic Gate takes by itself once its window opens stays on the
/// Overview, saying when, in the viewer's time (DECISION 159): nobody is surprised by
/// the unattended crossing.
#[tokio::test]
async fn the_overview_says_when_a_frozen_gate_crosses_by_itself() {
    let server = Server::start().await;
    // A freeze from this hour for two hours (UTC), whatever the day.
    let hour = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .hour();
    let mut spec = gate_spec(&[], false);
    spec.auto = true;
    spec.windows = vec![hecate_types::Window {
        schedule: format!("0 {hour} * * *"),
        duration: "2h".into(),
        deny: true,
        ..hecate_types::Window::default()
    }];
    gate(&server.env, "nightly", spec).await;
    hecate_testenv::fixtures::bundle(&server.env, "b1").await;
    let scheduled = item(&server, "Scheduled", "nightly");
    let browser = Browser::start(&server.base).await;
    crate::ui_rights::sign_in_as(&browser, &server, Carol, &at(&server, "/")).await;
    drawn(&browser, "Overview").await;
    let said = browser
        .until_text(
            &scheduled,
            "crosses by itself, unattended, once the window lets it",
        )
        .await;
    assert!(said.contains("Crosses by itself"), "{said}");
    let due = browser
        .js(
            &format!(
                "return document.querySelector(\"{scheduled} [data-due] time\")?.textContent;"
            ),
            vec![],
        )
        .await;
    assert!(
        due.as_str().is_some_and(|t| !t.is_empty()),
        "when, in the viewer's time: {due}"
    );
    assert_eq!(
        crate::ui_axe::check(&browser, "the overview with a scheduled crossing").await,
        [0, 0]
    );
    browser.close().await;
}
