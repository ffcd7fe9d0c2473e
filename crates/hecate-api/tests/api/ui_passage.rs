//! A Passage's page (issue 20, finding 7): each step's start, duration, attempts and
//! outputs; and on a phone (390×844) the menu folded into one button and wide tables
//! as stacked rows, nothing scrolling sideways. As alice, a viewer.

use hecate_testenv::Identity::*;
use hecate_types::Passage;
use kube::api::{Patch, PatchParams};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, demo_as_deployed, drawn};

/// The text of step `step`'s `field` cell on a Passage's page.
async fn cell(browser: &Browser, step: &str, field: &str) -> String {
    browser
        .js(
            "const el = document.querySelector(`tr[data-step='${arguments[0]}'] [data-field=${arguments[1]}]`); return el ? el.textContent : null;",
            vec![json!(step), json!(field)],
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_passage_shows_each_steps_start_duration_attempts_and_outputs() {
    let server = Server::start().await;
    demo_as_deployed(&server).await;
    // What the controller records of a crossing: the commit step's outputs, and a
    // flux-wait that asked three times.
    let passages = server.env.api::<Passage>();
    let failed = passages.get("production-1-7-0").await.unwrap();
    let mut steps = serde_json::to_value(&failed.status.as_ref().unwrap().steps).unwrap();
    for step in steps.as_array_mut().unwrap() {
        match step["as"].as_str().or(step["uses"].as_str()) {
            Some("commit") => {
                step["output"] = json!({"commit": "9f2c1e7", "branch": "main", "changed": true});
            }
            Some("flux-wait") => step["attempts"] = json!(3),
            _ => {}
        }
    }
    passages
        .patch_status(
            "production-1-7-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"steps": steps}})),
        )
        .await
        .unwrap();
    let browser = Browser::start(&server.base).await;
    browser
        .open(&at(&server, "/passages/?name=production-1-7-0"))
        .await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "production-1-7-0").await;
    browser
        .until_text("tr[data-step=commit] [data-field=outputs]", "9f2c1e7")
        .await;
    let outputs = browser
        .js(
            "return [...document.querySelectorAll('tr[data-step=commit] .outputs div')].map(d => [d.querySelector('dt').textContent, d.querySelector('dd').textContent]);",
            vec![],
        )
        .await;
    assert_eq!(
        outputs,
        json!([
            ["branch", "main"],
            ["changed", "true"],
            ["commit", "9f2c1e7"]
        ])
    );
    // A wait's looks are calls, not failed attempts.
    assert_eq!(cell(&browser, "flux-wait", "attempts").await, "3 calls");
    assert_eq!(cell(&browser, "commit", "attempts").await, "1 call");
    // Started: how long ago, and the local date and time; a finished step's duration.
    let started = browser
        .js(
            "const t = document.querySelector('tr[data-step=commit] [data-field=started] time'); return t && [t.getAttribute('datetime'), t.textContent];",
            vec![],
        )
        .await;
    let when = failed.status.as_ref().unwrap().steps[0]
        .started_at
        .as_ref()
        .unwrap()
        .0
        .to_string();
    assert_eq!(
        started[0].as_str().map(|t| t
            .trim_end_matches('Z')
            .split('.')
            .next()
            .unwrap_or_default()
            .to_string()),
        Some(
            when.trim_end_matches('Z')
                .split('.')
                .next()
                .unwrap_or_default()
                .to_string()
        )
    );
    assert!(started[1].as_str().unwrap().contains("ago"), "{started}");
    let took = cell(&browser, "commit", "took").await;
    assert!(!took.is_empty() && !took.contains("so far"), "{took:?}");
    let axe_passage = crate::ui_axe::check(&browser, "a failed Passage").await;
    browser.screenshot("passage-steps", 1280).await;

    // A crossing under way: the running step's time so far, the steps not started said
    // so; alice may not abort (the promoter's role may).
    browser
        .open(&at(&server, "/passages/?name=staging-1-11-0"))
        .await;
    drawn(&browser, "staging-1-11-0").await;
    browser
        .until(
            "a running step's time so far",
            "[...document.querySelectorAll('[data-field=took]')].some(c => c.textContent.endsWith('so far'))",
        )
        .await;
    browser.until_text("main tbody", "not started").await;
    let abort = browser
        .until(
            "the abort button, disabled for alice",
            "(() => { const b = document.querySelector('button[data-action=abort]'); return b && b.disabled ? b.dataset.needsRole : null; })()",
        )
        .await;
    assert_eq!(abort, "hecate-promoter");

    // A phone: the menu is one button until opened; the Passage list's rows are
    // stacked, each value under its column's name; nothing scrolls sideways.
    let (width, height) = crate::ui_axe::PHONE;
    browser.client.set_window_size(width, height).await.unwrap();
    browser.open(&at(&server, "/passages/")).await;
    drawn(&browser, "Passages").await;
    let folded = browser
        .js(
            "const b = document.querySelector('#menu-toggle'); const nav = document.querySelector('#nav'); \
             return [getComputedStyle(b).display !== 'none', b.getAttribute('aria-expanded'), nav.offsetParent === null, document.querySelector('header.top').getBoundingClientRect().height < 140];",
            vec![],
        )
        .await;
    assert_eq!(
        folded,
        json!([true, "false", true, true]),
        "one button, list hidden"
    );
    let stacked = browser
        .js(
            "const row = document.querySelector('main tbody tr'); const cell = row.querySelector('td'); \
             return [getComputedStyle(row).display, getComputedStyle(cell, '::before').content, document.documentElement.scrollWidth <= window.innerWidth];",
            vec![],
        )
        .await;
    assert_eq!(stacked, json!(["block", "\"Crossing\"", true]));
    browser.screenshot("passages-phone", width).await;
    browser.client.set_window_size(width, height).await.unwrap();
    browser.click("#menu-toggle").await;
    let open = browser
        .js(
            "return [document.querySelector('#menu-toggle').getAttribute('aria-expanded'), document.querySelector('#nav').offsetParent !== null];",
            vec![],
        )
        .await;
    assert_eq!(open, json!(["true", true]));
    browser.screenshot("menu-open-phone", width).await;
    browser.client.set_window_size(width, height).await.unwrap();
    browser.click("#nav a[href^='/gates/']").await;
    drawn(&browser, "Gates").await;
    assert_eq!(
        browser
            .js(
                "return document.querySelector('#menu-toggle').getAttribute('aria-expanded');",
                vec![]
            )
            .await,
        "false",
        "choosing a page folds the menu again"
    );
    browser.client.set_window_size(1280, 900).await.unwrap();
    browser.open(&at(&server, "/passages/")).await;
    drawn(&browser, "Passages").await;
    let axe_list = crate::ui_axe::check(&browser, "the Passage list").await;
    browser
        .open(&at(&server, "/passages/?name=production-1-7-0"))
        .await;
    drawn(&browser, "production-1-7-0").await;
    browser.screenshot("passage-steps-phone", width).await;
    assert_eq!([axe_passage, axe_list], [[0, 0], [0, 0]]);
    browser.close().await;
}

/// An aborted crossing whose `git-push` had succeeded left its commit on the
/// environment's branch (issue 34, item 13): its page says so, from ops' reading of
/// the step records (the Gate's `leftBehind`). One aborted before its push says
/// nothing of the kind.
#[tokio::test]
async fn an_aborted_passage_says_the_commit_it_pushed_is_still_on_the_branch() {
    use hecate_types::{
        PassagePhase, PassageSpec, PassageStatus, Step, StepPhase, StepStatus, Time,
    };
    use kube::ResourceExt as _;
    let server = Server::start().await;
    demo_as_deployed(&server).await;
    let bundle = hecate_testenv::demo::awaiting_approval().name_any();
    let now = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).unwrap();
    let sha = "46eeba7c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a";
    // Two aborted crossings of production, the newest first to have pushed.
    for (name, pushed, minutes_ago) in [
        ("production-aborted-early", false, 2),
        ("production-aborted", true, 1),
    ] {
        let step = |uses: &str| Step {
            uses: uses.into(),
            ..Step::default()
        };
        let mut passage = Passage::new(
            name,
            PassageSpec {
                gate: "production".into(),
                bundle: bundle.clone(),
                steps: vec![step("git-push"), step("flux-wait")],
                actor: "bob".into(),
                ..PassageSpec::default()
            },
        );
        passage.labels_mut().insert(
            hecate_types::wellknown::LABEL_GATE.into(),
            "production".into(),
        );
        let mut passage = server.env.create(passage).await;
        let started = Time(now - jiff::SignedDuration::from_mins(minutes_ago));
        let push = StepStatus {
            uses: "git-push".into(),
            phase: if pushed {
                StepPhase::Succeeded
            } else {
                StepPhase::Aborted
            },
            output: pushed.then(|| json!({"branch": "env/production", "sha": sha, "pushed": true})),
            started_at: Some(started.clone()),
            ..StepStatus::default()
        };
        let wait = StepStatus {
            uses: "flux-wait".into(),
            phase: StepPhase::Aborted,
            ..StepStatus::default()
        };
        passage.status = Some(PassageStatus {
            phase: Some(PassagePhase::Aborted),
            message: "aborted".into(),
            steps: vec![push, wait],
            started_at: Some(started.clone()),
            finished_at: Some(started),
            ..PassageStatus::default()
        });
        server.env.write_status(&passage).await;
    }
    let browser = Browser::start(&server.base).await;
    browser
        .open(&at(&server, "/passages/?name=production-aborted"))
        .await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "production-aborted").await;
    let said = browser
        .until_text("[data-left-behind=production-aborted]", "still on")
        .await;
    assert_eq!(
        said,
        "The commit pushed by this crossing (46eeba7) is still on env/production: the environment may run it until the next crossing."
    );
    // The Gate's page does not claim more than it knows: beside "Running now", what
    // Flux applies on the branch (#53).
    browser.open(&at(&server, "/gates/?name=production")).await;
    drawn(&browser, "production").await;
    let said = browser
        .until_text("[data-left-behind=production-aborted]", "aborted")
        .await;
    assert!(
        said.contains("'s commit 46eeba7, pushed to env/production by the aborted production-aborted: Flux applies it there until the next crossing"),
        "{said}"
    );
    browser
        .open(&at(&server, "/passages/?name=production-aborted-early"))
        .await;
    drawn(&browser, "production-aborted-early").await;
    browser.until_text("main", "Steps").await;
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('[data-left-behind]').length;",
                vec![]
            )
            .await,
        json!(0)
    );
    browser.close().await;
}

/// A step's log (#53): what a waiting step said over its looks, each line with when and
/// how many more times it said the same, behind a disclosure beside its message; a step
/// that said one thing once shows no log.
#[tokio::test]
async fn a_steps_log_shows_what_it_said_over_its_looks() {
    use hecate_types::{PassagePhase, StepLogLine, StepPhase, StepStatus, Time};
    let server = Server::start().await;
    hecate_testenv::fixtures::gate(
        &server.env,
        "staging",
        hecate_testenv::fixtures::gate_spec(&[], false),
    )
    .await;
    let mut passage = hecate_testenv::fixtures::passage(
        &server.env,
        "staging-1",
        "staging",
        "b1",
        PassagePhase::Succeeded,
    )
    .await;
    let at = |minutes: i64| Time(jiff::Timestamp::now() - jiff::SignedDuration::from_mins(minutes));
    let line = |minutes: i64, text: &str, repeated: u32| StepLogLine {
        at: at(minutes),
        text: text.into(),
        repeated,
    };
    if let Some(status) = passage.status.as_mut() {
        status.started_at = Some(at(10));
        status.steps = vec![StepStatus {
            uses: "flux-wait".into(),
            phase: StepPhase::Succeeded,
            message: "Flux applied 46eeba7 and it is Ready".into(),
            started_at: Some(at(10)),
            finished_at: Some(at(1)),
            attempts: 12,
            log: vec![
                line(
                    10,
                    "Flux has not applied 46eeba7 yet; the last applied is f577c28",
                    9,
                ),
                line(2, "Flux applied 46eeba7; waiting for Ready", 0),
                line(1, "Flux applied 46eeba7 and it is Ready", 0),
            ],
            ..StepStatus::default()
        }];
    }
    server.env.write_status(&passage).await;
    let browser = Browser::start(&server.base).await;
    browser
        .open(&crate::ui_rights::at(&server, "/passages/?name=staging-1"))
        .await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "staging-1").await;
    browser
        .until_text("[data-field=log] summary", "Log: 12 messages")
        .await;
    browser.click("[data-field=log] summary").await;
    let lines = browser
        .js(
            "return [...document.querySelectorAll('[data-field=log] li')].map(li => li.querySelector('.server-text').textContent + (li.lastChild.classList.contains('server-text') ? '' : li.lastChild.textContent));",
            vec![],
        )
        .await;
    assert_eq!(
        lines,
        json!([
            "Flux has not applied 46eeba7 yet; the last applied is f577c28 (said 9 more times)",
            "Flux applied 46eeba7; waiting for Ready",
            "Flux applied 46eeba7 and it is Ready",
        ])
    );
    assert_eq!(crate::ui_axe::check(&browser, "a step's log").await, [0, 0]);
    crate::ui_axe::fits_a_phone(&browser, "a step's log").await;
    browser.close().await;
}
