//! What changed between two Bundles, in Chromium (issue 34, DECISION 140): the approve
//! and promote dialogs say what the Gate runs now and what would come — the artifacts
//! that change, the commits between them (ten at most, the rest counted), a rollback
//! said as one, a gap in the API's words — and still ask when the diff cannot be read;
//! a Bundle's page leads with its version and its commit, and compares it with its
//! previous Bundle or what a Gate runs; lists name versions, not hashes; the Delivery
//! page counts the time before the Bundle existed; sources and commits link to their
//! forges where a page surely exists. axe-core finds nothing, and nothing
//! is wider than a phone.

use hecate_testenv::Identity::*;
use hecate_testenv::TestEnv;
use hecate_testenv::fixtures::{
    bundle_status, commit, gate, gate_spec, passage, release, release_spec,
};
use hecate_types::{Bundle, Gate, GateOccupant, GateStatus, PassagePhase, Time};
use jiff::{SignedDuration, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, drawn, sign_in_as};

/// The dialog's changes, once drawn.
const CHANGES: &str = "#confirm-changes .diff, #confirm-changes .diff-unread";

/// A full SHA whose first seven characters say `n`: `100c0ff…` for 100.
fn sha(n: usize) -> String {
    format!("{:0<40}", format!("{n:02}c0ffee"))
}

fn ago(now: Timestamp, minutes: i64) -> Time {
    Time(now - SignedDuration::from_mins(minutes))
}

/// Gate `gate` runs `bundle` now.
async fn runs(env: &TestEnv, gate: &str, bundle: &str) {
    let mut g: Gate = env.api().get(gate).await.unwrap();
    g.status = Some(GateStatus {
        current: Some(GateOccupant {
            bundle: bundle.into(),
            digest: String::new(),
            passage: format!("{gate}-{bundle}"),
            entered_at: Time(Timestamp::now()),
            actor: "bob".into(),
            verified: None,
        }),
        ..GateStatus::default()
    });
    env.write_status(&g).await;
}

/// Three releases of Beacon `app`: app-1 (v1.0.0, its first), app-2 (v1.1.0, one
/// commit by Bea) and app-3 (v1.2.0, twelve commits by Ann, "checkout: retry the payment
/// call" the newest). staging runs app-2, production (after staging, with an approval)
/// app-1, qa nothing; app-3 cleared staging, so it waits for production's approval.
async fn releases(server: &Server) {
    let env = &server.env;
    let now = Timestamp::now();
    gate(env, "staging", gate_spec(&[], false)).await;
    gate(env, "qa", gate_spec(&[], false)).await;
    gate(env, "production", gate_spec(&["staging"], true)).await;
    release(
        env,
        "app-1",
        ago(now, 300),
        release_spec("v1.0.0", &sha(1), "", vec![]),
    )
    .await;
    release(
        env,
        "app-2",
        ago(now, 200),
        release_spec(
            "v1.1.0",
            &sha(2),
            &sha(1),
            vec![commit(
                &sha(2),
                "cart: keep the basket across sign-in",
                "Bea <bea@example.com>",
                ago(now, 210),
            )],
        ),
    )
    .await;
    let brings: Vec<_> = (0..12)
        .map(|i| {
            let subject = if i == 0 {
                "checkout: retry the payment call".to_string()
            } else {
                format!("search: change {}", 12 - i)
            };
            commit(
                &sha(100 - i),
                &subject,
                "Ann <ann@example.com>",
                ago(now, 110 + i as i64),
            )
        })
        .collect();
    let app3 = release(
        env,
        "app-3",
        ago(now, 100),
        release_spec("v1.2.0", &sha(100), &sha(2), brings),
    )
    .await;
    bundle_status(env, app3, &["staging"], &[]).await;
    runs(env, "staging", "app-2").await;
    runs(env, "production", "app-1").await;
}

/// Clicks `button`, waits for the dialog's changes and returns `[the dialog's detail,
/// its changes' text, how many commits it lists]`; the dialog stays open.
async fn dialog(browser: &Browser, button: &str) -> (String, String, u64) {
    browser.click(button).await;
    browser
        .until(
            "the dialog's changes",
            &format!(
                "document.querySelector('dialog#confirm[open]') && document.querySelector({})",
                json!(CHANGES)
            ),
        )
        .await;
    let said = browser
        .js(
            "return [document.querySelector('#confirm-detail').textContent, document.querySelector('#confirm-changes').innerText, document.querySelectorAll('#confirm-changes li.diff-commit').length];",
            vec![],
        )
        .await;
    (
        said[0].as_str().unwrap().to_string(),
        said[1].as_str().unwrap().to_string(),
        said[2].as_u64().unwrap(),
    )
}

async fn cancel(browser: &Browser) {
    browser.click("#confirm-cancel").await;
    browser
        .until(
            "the dialog closed",
            "!document.querySelector('dialog#confirm[open]')",
        )
        .await;
}

fn says(text: &str, all: &[&str]) {
    for said in all {
        assert!(text.contains(said), "{said:?} not in:\n{text}");
    }
}

#[tokio::test]
async fn the_promote_and_approve_dialogs_say_what_would_change() {
    let server = Server::start().await;
    releases(&server).await;
    let browser = Browser::start(&server.base).await;

    // bob crosses staging with v1.2.0: what staging runs, what comes, the commits.
    sign_in_as(&browser, &server, Bob, &at(&server, "/gates/?name=staging")).await;
    drawn(&browser, "staging").await;
    let promote = |bundle: &str| format!("tr[data-bundle='{bundle}'] button[data-action=promote]");
    let (detail, changes, listed) = dialog(&browser, &promote("app-3")).await;
    assert!(detail.starts_with("This creates a Passage"), "{detail}");
    says(
        &changes,
        &[
            "staging runs v1.1.0 now → v1.2.0",
            "commit https://git.example/app: v1.1.0 → v1.2.0",
            "image ghcr.io/acme/app: v1.1.0 → v1.2.0",
            "Commits it brings (12):",
            "checkout: retry the payment call · Ann",
            "and 2 more",
        ],
    );
    assert_eq!(listed, 10, "ten at most: {changes}");
    // And what the crossing will run (issue 55): ops' preview for bob, each step with
    // what it does beyond the crossing's own directory.
    browser
        .click("#confirm-changes .preview-details summary")
        .await;
    let runs = browser
        .js(
            "return [document.querySelector('#confirm-changes .preview-details summary').textContent, [...document.querySelectorAll('#confirm-changes li.preview-step')].map(li => [li.dataset.uses, li.dataset.effect, li.querySelector('.muted').textContent])];",
            vec![],
        )
        .await;
    assert_eq!(
        runs,
        json!([
            "What it will run: 2 steps",
            [
                ["git-push", "Pushes", " — pushes to a remote"],
                ["flux-wait", "Cluster", " — asks Flux in a cluster"]
            ]
        ])
    );
    // Each commit with its short SHA (the whole on hover) and when, relatively.
    let first = browser
        .js(
            "const li = document.querySelector('#confirm-changes li.diff-commit'); return [li.dataset.sha, li.querySelector('code').textContent, li.querySelector('time').textContent, li.querySelector('.diff-author').title];",
            vec![],
        )
        .await;
    assert_eq!(
        first,
        json!([sha(100), "100c0ff", "2 hours ago", "Ann <ann@example.com>"])
    );
    // Small on a phone: the commits scroll in their own box, the dialog fits.
    assert_eq!(
        crate::ui_axe::check(&browser, "the promote dialog with its changes").await,
        [0, 0]
    );
    crate::ui_axe::fits_a_phone(&browser, "the promote dialog").await;
    let (width, height) = crate::ui_axe::NARROW_PHONE;
    browser.client.set_window_size(width, height).await.unwrap();
    let fit = browser
        .js(
            "const d = document.querySelector('dialog#confirm').getBoundingClientRect(); const list = document.querySelector('#confirm-changes .diff-scroll'); return [d.bottom <= innerHeight + 0.5, list.scrollHeight > list.clientHeight];",
            vec![],
        )
        .await;
    browser.screenshot("dialog-changes-phone", width).await;
    let (width, height) = crate::ui_axe::DESKTOP;
    browser.client.set_window_size(width, height).await.unwrap();
    assert_eq!(
        fit,
        json!([true, true]),
        "the dialog fits; its commits scroll"
    );
    browser.screenshot("dialog-changes", width).await;
    cancel(&browser).await;

    // Back to v1.0.0: a rollback, and the commits it would undo.
    let (_, back, listed) = dialog(&browser, &promote("app-1")).await;
    says(
        &back,
        &[
            "staging runs v1.1.0 now → v1.0.0",
            "Going back to an older Bundle: a rollback.",
            "These commits would be undone (1):",
            "cart: keep the basket across sign-in · Bea",
        ],
    );
    assert_eq!(listed, 1);
    assert!(!back.contains("more"), "{back}");
    cancel(&browser).await;

    // The diff cannot be read: said, and the dialog still crosses.
    browser
        .js(
            "const real = window.fetch; window.fetch = (url, init) => String(url).includes('/diff') ? Promise.resolve(new Response(JSON.stringify({error: 'the diff is down'}), {status: 503, headers: {'Content-Type': 'application/json'}})) : real(url, init);",
            vec![],
        )
        .await;
    let (_, unread, _) = dialog(&browser, &promote("app-3")).await;
    assert!(
        unread.starts_with("What changes could not be read: the diff is down.\n"),
        "{unread}"
    );
    browser.click("#confirm-ok").await;
    browser.until_text("#notice", "Crossing started:").await;

    // carol approves v1.2.0 for production: its thirteen commits since v1.0.0.
    sign_in_as(&browser, &server, Carol, &at(&server, "/approvals/")).await;
    drawn(&browser, "Approvals").await;
    let approve = "tr[data-bundle='app-3'] button[data-action=approve]";
    let (detail, changes, listed) = dialog(&browser, approve).await;
    assert!(
        detail.starts_with("Approving does not cross the Gate"),
        "{detail}"
    );
    says(
        &changes,
        &[
            "production runs v1.0.0 now → v1.2.0",
            "Commits it brings (13):",
            "and 3 more",
        ],
    );
    assert_eq!(listed, 10);
    cancel(&browser).await;

    // v1.1.0 is deleted by retention: the list says it may not be whole, in the API's
    // words.
    server
        .env
        .api::<Bundle>()
        .delete("app-2", &Default::default())
        .await
        .unwrap();
    let (_, gap, _) = dialog(&browser, approve).await;
    says(
        &gap,
        &[
            "Commits it brings (12):",
            "Not every commit is listed: a Bundle between them is no longer kept: the commits it brought are missing.",
        ],
    );
    browser.click("#confirm-ok").await;
    browser.until_text("#notice", "Approved:").await;
    browser.close().await;
}

#[tokio::test]
async fn a_bundles_page_leads_with_its_version_and_says_what_changed() {
    let server = Server::start().await;
    releases(&server).await;
    passage(
        &server.env,
        "staging-app-3",
        "staging",
        "app-3",
        PassagePhase::Succeeded,
    )
    .await;
    let browser = Browser::start(&server.base).await;
    sign_in_as(
        &browser,
        &server,
        Alice,
        &at(&server, "/bundles/?name=app-3"),
    )
    .await;

    // Its version first, its name in small print; then the commit it is.
    drawn(&browser, "v1.2.0").await;
    let heading = browser
        .js(
            "return document.querySelector('main h1').textContent;",
            vec![],
        )
        .await;
    assert_eq!(heading, "v1.2.0 app-3");
    let subject = browser
        .until_text("[data-field=subject]", "checkout: retry the payment call")
        .await;
    says(&subject, &[" — by Ann · 2 hours ago · 100c0ff"]);

    // What changed: against its previous Bundle, every commit listed.
    let changed = browser
        .until_text("#s-what-changed ~ .diff", "v1.1.0 → v1.2.0")
        .await;
    says(&changed, &["Commits it brings (12):"]);
    assert!(!changed.contains("more"), "{changed}");
    let options = browser
        .js(
            "return [...document.querySelectorAll('#bundle-against option')].map(o => [o.value, o.textContent]);",
            vec![],
        )
        .await;
    assert_eq!(
        options,
        json!([
            ["", "its previous Bundle"],
            ["qa", "what qa runs now"],
            ["staging", "what staging runs now"],
            ["production", "what production runs now"],
        ])
    );
    // Its sources are links; a commit links to its forge's page only where the forge is
    // known to show one there (git.example is not), so no link leads nowhere.
    let links = browser
        .js(
            "return [...document.querySelectorAll('main a.out')].map(a => a.getAttribute('href'));",
            vec![],
        )
        .await;
    assert!(
        links
            .as_array()
            .is_some_and(|l| !l.is_empty() && l.iter().all(|h| h == "https://git.example/app")),
        "{links}"
    );
    let hrefs = browser
        .js(
            "return import('/ui/js/format.js').then(f => [\
               f.commitHref('https://github.com/acme/app.git', 'ab4eac1d'), \
               f.commitHref('git@gitlab.com:acme/app.git', 'ab4eac1d'), \
               f.commitHref('https://git.example/app', 'ab4eac1d'), \
               f.commitHref('https://github.com/acme/app', 'not a sha'), \
               f.sourceHref('http://127.0.0.1:8080/app.git'), \
               f.sourceHref('https://user:secret@github.com/acme/app'), \
               f.sourceHref('https://charts.example/stable/')]);",
            vec![],
        )
        .await;
    assert_eq!(
        hrefs,
        json!([
            "https://github.com/acme/app/commit/ab4eac1d",
            "https://gitlab.com/acme/app/-/commit/ab4eac1d",
            null,
            null,
            null,
            null,
            "https://charts.example/stable"
        ])
    );
    assert_eq!(
        crate::ui_axe::check(&browser, "a Bundle's page").await,
        [0, 0]
    );
    crate::ui_axe::fits_a_phone(&browser, "a Bundle's page").await;
    browser.screenshot("bundle-diff", 1280).await;

    // Against what a Gate runs: the choice is the URL's.
    let choose = |gate: &str| {
        format!(
            "const s = document.querySelector('#bundle-against'); s.value = '{gate}'; s.dispatchEvent(new Event('change'));"
        )
    };
    browser.js(&choose("production"), vec![]).await;
    browser
        .until_text(
            ".diff[data-gate=production]",
            "production runs v1.0.0 now → v1.2.0",
        )
        .await;
    assert!(
        browser
            .js("return location.search;", vec![])
            .await
            .as_str()
            .unwrap()
            .contains("against=production")
    );
    browser.js(&choose("qa"), vec![]).await;
    browser
        .until_text(".diff[data-gate=qa]", "qa runs nothing yet → v1.2.0")
        .await;

    // The lists name versions: the Bundles with their subjects, the Passages.
    browser.open(&at(&server, "/bundles/")).await;
    drawn(&browser, "Bundles").await;
    let row = |bundle: &str| {
        format!(
            "return [...document.querySelectorAll(\"tr[data-bundle='{bundle}'] th, tr[data-bundle='{bundle}'] td\")].slice(0, 2).map(c => c.textContent);"
        )
    };
    let cells = browser.js(&row("app-3"), vec![]).await;
    assert_eq!(cells[0], "v1.2.0 app-3");
    let subject = cells[1].as_str().unwrap();
    assert!(
        subject.starts_with("checkout: retry the payment call · Ann · "),
        "{subject}"
    );
    assert_eq!(
        browser.js(&row("app-1"), vec![]).await,
        json!(["v1.0.0 app-1", ""])
    );
    assert_eq!(
        crate::ui_axe::check(&browser, "the Bundles with versions").await,
        [0, 0]
    );
    crate::ui_axe::fits_a_phone(&browser, "the Bundles with versions").await;
    browser.open(&at(&server, "/passages/")).await;
    drawn(&browser, "Passages").await;
    browser
        .until_text("tr[data-passage='staging-app-3']", "v1.2.0 app-3 → staging")
        .await;
    browser.close().await;
}

/// The Overview's list of what waits on people names the Bundle by its version, and
/// its approve button's dialog says what a Gate that crosses by itself will do with
/// the approval (ops' `auto`), and what would change.
#[tokio::test]
async fn the_overview_names_versions_and_its_approve_dialog_knows_an_automatic_gate() {
    let server = Server::start().await;
    releases(&server).await;
    server
        .env
        .api::<Gate>()
        .patch(
            "production",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"auto": true}})),
        )
        .await
        .unwrap();
    let overview: Value = server
        .get("/api/v1alpha1/overview", Some(Carol))
        .await
        .json();
    // Every namespace carol may read: this test's.
    let mine = overview["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["namespace"] == server.ns())
        .unwrap();
    let auto: Vec<(&str, bool)> = mine["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["name"].as_str().unwrap(), g["auto"] == true))
        .collect();
    assert_eq!(
        auto,
        [("qa", false), ("staging", false), ("production", true)]
    );
    let browser = Browser::start(&server.base).await;
    sign_in_as(&browser, &server, Carol, &at(&server, "/")).await;
    drawn(&browser, "Overview").await;
    let item = format!(
        "li.attention-item[data-namespace='{}'][data-kind=Approval][data-gate=production]",
        server.ns()
    );
    let item = item.as_str();
    let text = browser.until_text(item, "v1.2.0 app-3").await;
    says(&text, &["v1.2.0: awaiting approval"]);
    let button = browser
        .js(
            &format!("const b = document.querySelector(\"{item} button[data-action=approve]\"); return [b.textContent, b.hasAttribute('data-shows-why')];"),
            vec![],
        )
        .await;
    assert_eq!(button, json!(["Approve v1.2.0 for production", false]));
    let (detail, changes, _) =
        dialog(&browser, &format!("{item} button[data-action=approve]")).await;
    assert_eq!(
        detail,
        "Approving lets production cross by itself: the controller starts the crossing as soon as nothing else holds it."
    );
    says(&changes, &["production runs v1.0.0 now → v1.2.0"]);
    cancel(&browser).await;
    browser.close().await;
}

/// Lead time starts at the commit (DECISION 140): the time before the Bundle existed
/// is a part of its own on the Delivery page, and the parts add up.
#[tokio::test]
async fn the_delivery_page_counts_the_time_before_the_bundle() {
    let server = Server::start().await;
    let env = &server.env;
    let now = Timestamp::now();
    gate(env, "production", gate_spec(&[], false)).await;
    // Committed three hours ago, emitted an hour later, crossed now.
    release(
        env,
        "app-1",
        ago(now, 120),
        release_spec(
            "v1.0.0",
            &sha(1),
            "",
            vec![commit(
                &sha(1),
                "checkout: retry the payment call",
                "Ann <ann@example.com>",
                ago(now, 180),
            )],
        ),
    )
    .await;
    passage(
        env,
        "production-app-1",
        "production",
        "app-1",
        PassagePhase::Succeeded,
    )
    .await;
    let figures = server
        .get(
            "/api/v1alpha1/namespaces/{ns}/metrics?since=30d",
            Some(Alice),
        )
        .await
        .json();
    let parts = &figures["gates"][0]["leadTime"]["parts"];
    assert_eq!(parts["emissionSeconds"], json!(3600), "{parts}");

    let browser = Browser::start(&server.base).await;
    sign_in_as(
        &browser,
        &server,
        Alice,
        &at(&server, "/delivery/?gate=production"),
    )
    .await;
    drawn(&browser, "Delivery").await;
    let before = browser
        .until_text(".gate-figures li[data-part=emission]", "before the Bundle")
        .await;
    assert!(
        before.starts_with(
            "before the Bundle — 33% (1h): from the commit until its Beacon emitted the Bundle"
        ),
        "{before}"
    );
    let label = browser
        .js(
            "return document.querySelectorAll('.gate-figures svg[role=img]')[2].getAttribute('aria-label');",
            vec![],
        )
        .await;
    assert_eq!(
        label,
        "Where the time goes: before the Bundle 33%, queued 67%"
    );
    assert_eq!(
        crate::ui_axe::check(&browser, "delivery with the time before the Bundle").await,
        [0, 0]
    );
    browser.close().await;
}

/// A right-to-left override in a Bundle's alias and its commit's subject (anyone may
/// write them) is shown as `\u{202e}`, never obeyed (DECISION 146): in the lists, on
/// the Bundle's page and in the approve dialog, what follows it — the SHA, "2 hours
/// ago" — reads left to right, in order.
#[tokio::test]
async fn a_right_to_left_override_is_shown_and_reverses_nothing() {
    const ALIAS: &str = "v2.0.0-\u{202e}lanif";
    const SUBJECT: &str = "login: \u{202e}gnp.exe";
    let server = Server::start().await;
    let env = &server.env;
    let now = Timestamp::now();
    gate(env, "staging", gate_spec(&[], false)).await;
    gate(env, "production", gate_spec(&["staging"], true)).await;
    release(
        env,
        "app-1",
        ago(now, 300),
        release_spec("v1.0.0", &sha(1), "", vec![]),
    )
    .await;
    let mut spec = release_spec(
        "v2.0.0",
        &sha(2),
        &sha(1),
        vec![commit(
            &sha(2),
            SUBJECT,
            "Bea <bea@example.com>",
            ago(now, 120),
        )],
    );
    spec.alias = ALIAS.into();
    let app2 = release(env, "app-2", ago(now, 100), spec).await;
    bundle_status(env, app2, &["staging"], &[]).await;
    runs(env, "production", "app-1").await;

    let browser = Browser::start(&server.base).await;
    sign_in_as(&browser, &server, Carol, &at(&server, "/bundles/")).await;
    drawn(&browser, "Bundles").await;
    // Nothing on the page holds a bidirectional control, in its text or in what people
    // read of its attributes; the alias and the subject say where theirs were.
    const NO_CONTROLS: &str = "const bidi = /[\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]/; \
        const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT); \
        const found = []; while (walk.nextNode()) if (bidi.test(walk.currentNode.data)) found.push(walk.currentNode.data); \
        for (const el of document.querySelectorAll('[title], [aria-label]')) for (const a of ['title', 'aria-label']) { const v = el.getAttribute(a); if (v && bidi.test(v)) found.push(v); } \
        if (bidi.test(document.title)) found.push(document.title); return found;";
    let cells = browser
        .js(
            "return [...document.querySelectorAll(\"tr[data-bundle='app-2'] th, tr[data-bundle='app-2'] td\")].slice(0, 2).map(c => c.textContent);",
            vec![],
        )
        .await;
    assert_eq!(cells[0], "v2.0.0-\\u{202e}lanif app-2");
    let listed = cells[1].as_str().unwrap();
    assert!(
        listed.starts_with("login: \\u{202e}gnp.exe · Bea · "),
        "{listed}"
    );
    assert_eq!(browser.js(NO_CONTROLS, vec![]).await, json!([]));

    // The approve dialog: the commit's subject, then its author, its time and its
    // SHA, in that order from left to right.
    browser.open(&at(&server, "/approvals/")).await;
    drawn(&browser, "Approvals").await;
    let (_, changes, listed) = dialog(
        &browser,
        "tr[data-bundle='app-2'] button[data-action=approve]",
    )
    .await;
    assert_eq!(listed, 1, "{changes}");
    says(
        &changes,
        &[
            "production runs v1.0.0 now → v2.0.0-\\u{202e}lanif",
            "login: \\u{202e}gnp.exe · Bea · 2 hours ago · 02c0ffe",
        ],
    );
    let order = browser
        .js(
            "const li = document.querySelector('#confirm-changes li.diff-commit'); \
             const x = (el) => el.getBoundingClientRect().left; \
             const subject = li.querySelector('.diff-subject'); \
             return [x(subject) < x(li.querySelector('.diff-author')), \
                     x(li.querySelector('.diff-author')) < x(li.querySelector('time')), \
                     x(li.querySelector('time')) < x(li.querySelector('code'))];",
            vec![],
        )
        .await;
    assert_eq!(order, json!([true, true, true]), "{changes}");
    assert_eq!(browser.js(NO_CONTROLS, vec![]).await, json!([]));
    browser.screenshot("bidi-override-dialog", 1280).await;
    cancel(&browser).await;

    // The Bundle's page leads with its version and its commit, shown the same way.
    browser.open(&at(&server, "/bundles/?name=app-2")).await;
    drawn(&browser, "v2.0.0-\\u{202e}lanif").await;
    let subject = browser
        .until_text("[data-field=subject]", "login: \\u{202e}gnp.exe")
        .await;
    says(&subject, &[" — by Bea · 2 hours ago · 02c0ffe"]);
    assert_eq!(browser.js(NO_CONTROLS, vec![]).await, json!([]));
    browser.close().await;
}

/// After an abort whose push had landed, the Cross dialog does not only say what the
/// Gate's record runs: the branch holds the aborted crossing's commit, which Flux
/// applies until the next crossing (#53: "dev runs v1.6.0 now → v1.7.0" while Flux
/// applied 1.7.0). The API's diff carries it as `leftBehind`.
#[tokio::test]
async fn the_cross_dialog_after_an_abort_says_what_the_branch_holds() {
    let server = Server::start().await;
    releases(&server).await;
    let mut aborted = passage(
        &server.env,
        "staging-aborted",
        "staging",
        "app-3",
        PassagePhase::Aborted,
    )
    .await;
    if let Some(status) = aborted.status.as_mut() {
        status.steps = vec![hecate_types::StepStatus {
            uses: "git-push".into(),
            phase: hecate_types::StepPhase::Succeeded,
            output: Some(json!({"branch": "env/staging", "sha": sha(100), "pushed": true})),
            ..hecate_types::StepStatus::default()
        }];
        status.started_at = Some(Time(Timestamp::now()));
    }
    server.env.write_status(&aborted).await;
    let answer = server
        .get(
            &format!(
                "/api/v1alpha1/namespaces/{}/bundles/app-3/diff?against=staging",
                server.ns()
            ),
            Some(Bob),
        )
        .await
        .json();
    assert_eq!(
        answer["leftBehind"],
        json!({"passage": "staging-aborted", "bundle": "app-3", "branch": "env/staging", "commit": sha(100)})
    );

    let browser = Browser::start(&server.base).await;
    sign_in_as(&browser, &server, Bob, &at(&server, "/gates/?name=staging")).await;
    drawn(&browser, "staging").await;
    let (_, changes, _) = dialog(
        &browser,
        "tr[data-bundle='app-3'] button[data-action=promote]",
    )
    .await;
    says(
        &changes,
        &[
            "staging runs v1.1.0 now → v1.2.0",
            "But env/staging holds 100c0ff, pushed by the aborted staging-aborted (app-3): Flux applies it there until the next crossing, whatever staging's record says it runs.",
        ],
    );
    assert_eq!(
        crate::ui_axe::check(&browser, "the cross dialog after an abort").await,
        [0, 0]
    );
    browser.close().await;
}
