//! A rollout across a Gate's targets on the Gate page, in Chromium against the real
//! API server (issue 52, DECISION 158): its targets wave by wave with their phase,
//! attempt, step and revision; a halted rollout's blocker with its three ways out —
//! retry and accept as buttons, disabled with why for a viewer; a promoter who retries
//! and then accepts (with a reason the dialog asks for) leaves each request on the
//! Passage in their name. axe-core finds nothing.

use hecate_testenv::Identity::*;
use hecate_testenv::fixtures::{HALT, bundle, gate, gate_spec, halted};
use hecate_types::{Passage, Target, Targets};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, drawn, sign_in_as};

/// Production over the canary and eu-1, its rollout of b1 halted on the canary.
async fn halted_production(server: &Server) {
    let env = &server.env;
    let mut spec = gate_spec(&[], false);
    spec.targets = Some(Targets {
        list: ["canary", "eu-1"]
            .map(|name| Target {
                name: name.into(),
                ..Target::default()
            })
            .to_vec(),
        selector: None,
    });
    gate(env, "production", spec).await;
    bundle(env, "b1").await;
    halted(env, "production-7", "production", "b1").await;
}

/// `[wave, target, phase, attempt, step, revision]` of each row of the targets table, by wave.
async fn rows(browser: &Browser) -> serde_json::Value {
    browser
        .js(
            "return [...document.querySelectorAll('tr[data-target]')].map(r => [r.dataset.wave, r.dataset.target, ...[...r.cells].slice(2, 6).map(c => c.textContent)]);",
            vec![],
        )
        .await
}

/// What [`rows`] reads of the halted rollout: the canary failed, eu-1 not started.
fn halted_rows() -> serde_json::Value {
    json!([
        [
            "1",
            "canary",
            "Failed",
            "1",
            "2 (GitRejected)",
            "main@sha1:3f1c2a9d0e4b"
        ],
        ["2", "eu-1", "Pending", "–", "–", "–"],
    ])
}

#[tokio::test]
async fn a_halted_rollout_on_the_gate_page_is_retried_and_accepted() {
    let server = Server::start().await;
    halted_production(&server).await;
    let page = at(&server, "/gates/?name=production");
    let browser = Browser::start(&server.base).await;

    // alice, a viewer: the targets by wave, the halt and its ways out, disabled.
    browser.open(&page).await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "production").await;
    browser
        .until_text("[data-rollout=Halted]", "canary failed")
        .await;
    assert_eq!(rows(&browser).await, halted_rows());
    let blocker = browser
        .until_text(".blocker[data-kind=RolloutHalted]", HALT)
        .await;
    for said in [
        "hecate retry production-7",
        "Or: accept the failures and go on: hecate accept-failures production-7 --reason <why>",
        "Or: stop the rollout and roll the failed targets back: hecate abort production-7 -n",
        "then hecate rollback production --targets failed",
        "Or: stop the rollout: hecate abort production-7",
    ] {
        assert!(blocker.contains(said), "{said}: {blocker}");
    }
    let why = browser
        .until(
            "alice's retry, disabled with its reason",
            "document.querySelector('.blocker button[data-action=retryTargets]')?.disabled && document.querySelector('.blocker .why-not')?.textContent",
        )
        .await;
    assert!(
        why.as_str().unwrap_or_default().contains("hecate-promoter"),
        "{why}"
    );
    let axe_alice = crate::ui_axe::check(&browser, "a halted rollout, as alice").await;
    browser.screenshot("fan-out-halted-alice", 1280).await;

    // bob, a promoter: retries the canary, then accepts its failure with a reason.
    sign_in_as(&browser, &server, Bob, &page).await;
    drawn(&browser, "production").await;
    browser
        .until(
            "bob's retry, enabled",
            "document.querySelector('.blocker button[data-action=retryTargets]')?.disabled === false",
        )
        .await;
    browser
        .click(".blocker button[data-action=retryTargets]")
        .await;
    let asked = browser
        .until(
            "the confirmation",
            "document.querySelector('dialog#confirm[open]')?.textContent",
        )
        .await;
    assert!(
        asked
            .as_str()
            .unwrap_or_default()
            .contains("Cross canary again, for Passage production-7, as you."),
        "{asked}"
    );
    browser.click("#confirm-ok").await;
    browser.until_text("#notice", "Retry asked:").await;

    browser
        .click(".blocker button[data-action=acceptFailures]")
        .await;
    browser
        .until(
            "the confirmation",
            "document.querySelector('dialog#confirm[open]')",
        )
        .await;
    browser.press("the canary is being rebuilt").await;
    browser.click("#confirm-ok").await;
    browser.until_text("#notice", "Accepted:").await;
    let axe_bob = crate::ui_axe::check(&browser, "a halted rollout, as bob").await;

    let asked = server
        .env
        .api::<Passage>()
        .get("production-7")
        .await
        .unwrap()
        .spec
        .rollout
        .unwrap_or_default();
    let by = |requests: &[hecate_types::RolloutRequest]| {
        requests
            .iter()
            .map(|r| (r.by.clone(), r.reason.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(by(&asked.retries), [("bob".to_string(), String::new())]);
    assert_eq!(
        by(&asked.acceptances),
        [("bob".to_string(), "the canary is being rebuilt".to_string())]
    );
    assert_eq!([axe_alice, axe_bob], [[0, 0], [0, 0]]);

    // A rollback of the canary alone since (DECISION 163): listed under the rollout.
    hecate_testenv::fixtures::rolled_back_targets(
        &server.env,
        "production-8",
        "production",
        "b1",
        "production-7",
        &["canary"],
    )
    .await;
    browser.open(&page).await;
    drawn(&browser, "production").await;
    let since = browser
        .until_text(".since li[data-kind=rollback]", "production-8")
        .await;
    assert_eq!(since, "production-8: rollback of canary to 1.0.0 Completed");

    // The Passage's own page: the same record, target by target, and its steps as
    // what each target runs.
    browser
        .open(&at(&server, "/passages/?name=production-7"))
        .await;
    browser.until_text("[data-rollout=Halted]", HALT).await;
    assert_eq!(rows(&browser).await, halted_rows());
    let steps = browser.until_text(".steps-template", "flux-wait").await;
    assert_eq!(steps, "flux-wait");
    assert_eq!(
        crate::ui_axe::check(&browser, "a halted rollout's Passage").await,
        [0, 0]
    );
    browser.screenshot("fan-out-passage", 1280).await;
}

/// A rollout that ended with a target failed — aborted after its halt — and a Bundle
/// the Gate ran before: the Targets panel offers rolling the failed target back, as
/// ops judged it (DECISION 163), and bob's click opens a Passage of that target
/// alone, back to what it ran.
#[tokio::test]
async fn a_finished_rollouts_failed_targets_are_rolled_back_from_the_gate_page() {
    let server = Server::start().await;
    halted_production(&server).await;
    let env = &server.env;
    bundle(env, "b0").await;
    let mut production: hecate_types::Gate = env.api().get("production").await.unwrap();
    production.status = Some(hecate_types::GateStatus {
        current: Some(hecate_types::GateOccupant {
            bundle: "b0".into(),
            digest: String::new(),
            passage: "production-6".into(),
            entered_at: hecate_types::Time("2026-08-10T12:00:00Z".parse().unwrap()),
            actor: "bob".into(),
            verified: None,
        }),
        ..hecate_types::GateStatus::default()
    });
    env.write_status(&production).await;
    let mut aborted: Passage = env.api().get("production-7").await.unwrap();
    if let Some(status) = aborted.status.as_mut() {
        status.phase = Some(hecate_types::PassagePhase::Aborted);
    }
    env.write_status(&aborted).await;

    let page = at(&server, "/gates/?name=production");
    let browser = Browser::start(&server.base).await;
    browser.open(&page).await;
    browser.sign_in(&server.token(Bob)).await;
    drawn(&browser, "production").await;
    let offered = browser
        .until_text(
            ".target-fixes li[data-kind=rollbackFailedTargets]",
            "hecate rollback",
        )
        .await;
    assert!(
        offered.contains("hecate rollback production --targets failed"),
        "{offered}"
    );
    browser.screenshot("fan-out-failed-targets", 1280).await;
    browser
        .click(".target-fixes button[data-action=rollback]")
        .await;
    browser
        .until(
            "the confirmation",
            "document.querySelector('dialog#confirm[open]')",
        )
        .await;
    browser.click("#confirm-ok").await;
    let started = browser.until_text("#notice", "Rollback started:").await;
    assert!(started.contains("canary go back to b0"), "{started}");
    assert_eq!(
        crate::ui_axe::check(&browser, "a finished rollout's fixes, as bob").await,
        [0, 0]
    );

    let back = env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|p| p.spec.is_partial())
        .expect("the rollback's Passage");
    assert_eq!(
        (
            back.spec.bundle.as_str(),
            back.spec.targets.as_slice(),
            back.spec.actor.as_str()
        ),
        ("b0", ["canary".to_string()].as_slice(), "bob")
    );
}
