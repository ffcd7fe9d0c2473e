//! axe-core in the page: every rule axe runs by default (WCAG 2.x A and AA, and its
//! best practices) and `label-content-name-mismatch` (WCAG 2.5.3, label in name:
//! experimental in axe, so off unless asked for), at desktop size (1280×900) and on a
//! phone (390×844). A page passes with zero violations; a failure lists each rule and
//! the elements it found. Every page also fits a 375 px phone: nothing wider than the
//! screen, so nothing is cut off or scrolls sideways but a box that says it does.
//!
//! axe-core is vendored (`vendor/axe.min.js`, MPL-2.0): injected through WebDriver,
//! which the page's CSP does not govern, so the server never serves it.

use serde_json::{Value, json};

use crate::ui_browser::Browser;

const AXE: &str = include_str!("vendor/axe.min.js");

/// A phone's viewport: an iPhone 12–15's CSS pixels.
pub(crate) const PHONE: (u32, u32) = (390, 844);
/// The narrowest phone every page must fit: an iPhone SE's, or a 12 mini's.
pub(crate) const NARROW_PHONE: (u32, u32) = (375, 812);

/// The rules run besides axe's defaults: the accessible name of a control labelled by
/// its content must contain the words it shows (experimental in axe 4).
const EXTRA_RULES: &str = "{ 'label-content-name-mismatch': { enabled: true } }";
/// The desktop viewport the UI tests use.
pub(crate) const DESKTOP: (u32, u32) = (1280, 900);

/// axe's violations on the page as it stands: `[{id, impact, help, targets}]`.
pub(crate) async fn violations(browser: &Browser) -> Vec<Value> {
    // One script: axe's own `var axe` is in scope for the run that follows it.
    let script = format!(
        "{AXE}\n;const done = arguments[arguments.length - 1];\
         axe.run(document, {{ resultTypes: ['violations'], rules: {EXTRA_RULES} }})\
           .then((r) => done({{ rules: r.passes.length + r.incomplete.length + r.inapplicable.length + r.violations.length, violations: r.violations.map((v) => ({{ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }})) }}))\
           .catch((e) => done({{ error: String(e) }}));"
    );
    let answer = browser
        .client
        .execute_async(&script, vec![])
        .await
        .unwrap_or_else(|e| panic!("running axe-core: {e}"));
    // axe ran its rules, or the check says nothing: fail rather than pass unheard.
    let rules = answer["rules"].as_u64().unwrap_or(0);
    assert!(rules > 20, "axe-core did not run: {answer}");
    answer["violations"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("axe-core answered no violations list: {answer}"))
}

/// Runs axe at desktop and phone size on the page as it stands (the window is left at
/// desktop size), fails on any violation, and returns how many were found at each
/// size (`[0, 0]` when it returns at all).
pub(crate) async fn check(browser: &Browser, page: &str) -> [usize; 2] {
    let mut counts = [0; 2];
    let mut found = Vec::new();
    for (i, (width, height)) in [DESKTOP, PHONE].into_iter().enumerate() {
        browser
            .client
            .set_window_size(width, height)
            .await
            .unwrap_or_else(|e| panic!("resizing to {width}×{height}: {e}"));
        let violations = violations(browser).await;
        counts[i] = violations.len();
        if !violations.is_empty() {
            found.push(json!({"size": format!("{width}×{height}"), "violations": violations}));
        }
    }
    let (width, height) = DESKTOP;
    browser
        .client
        .set_window_size(width, height)
        .await
        .unwrap_or_else(|e| panic!("resizing back: {e}"));
    assert!(
        found.is_empty(),
        "axe-core found violations on {page}:\n{}",
        serde_json::to_string_pretty(&found).unwrap_or_default()
    );
    counts
}

/// Whether the page as it stands fits a 375 px phone: `document.scrollingElement` no
/// wider than the window. Fails naming the widest elements that stick out (the window is
/// left at desktop size).
pub(crate) async fn fits_a_phone(browser: &Browser, page: &str) {
    let (width, height) = NARROW_PHONE;
    browser
        .client
        .set_window_size(width, height)
        .await
        .unwrap_or_else(|e| panic!("resizing to {width}×{height}: {e}"));
    let fit = browser
        .js(
            "const page = document.scrollingElement;              const out = [...document.querySelectorAll('body *')]                .filter(el => el.getBoundingClientRect().right > innerWidth + 0.5 && !el.closest('.graph-scroll > *, .table-wrap > *, dialog:not([open])'))                .map(el => `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}.${[...el.classList].join('.')} right ${Math.round(el.getBoundingClientRect().right)}`)                .slice(0, 8);              return [page.scrollWidth, innerWidth, out];",
            vec![],
        )
        .await;
    // A stacked table's cells hold their labels: a label of two lines ("Passes in a
    // row") must not run into the next row's (#53).
    let overlapping = browser
        .js(
            "return [...document.querySelectorAll('.table-wrap tbody [data-label]')]\
               .filter(el => el.getBoundingClientRect().height > 0)\
               .filter(el => parseFloat(getComputedStyle(el, '::before').height) > el.getBoundingClientRect().height + 0.5)\
               .map(el => `${el.dataset.label}: label ${getComputedStyle(el, '::before').height}, cell ${Math.round(el.getBoundingClientRect().height)}px`)\
               .slice(0, 8);",
            vec![],
        )
        .await;
    let (desktop_width, desktop_height) = DESKTOP;
    browser
        .client
        .set_window_size(desktop_width, desktop_height)
        .await
        .unwrap_or_else(|e| panic!("resizing back: {e}"));
    assert!(
        fit[0].as_u64() <= fit[1].as_u64(),
        "{page} is wider than a {width} px phone ([scrollWidth, innerWidth, what sticks out]): {fit}"
    );
    assert_eq!(
        overlapping,
        serde_json::json!([]),
        "{page} on a {width} px phone: labels taller than their cells"
    );
}

/// Gives the running step of Passage `passage` the message `words`, as a controller
/// records what a step waits for: long words (revisions, paths) that a phone must wrap.
pub(crate) async fn running_step_says(server: &crate::harness::Server, passage: &str, words: &str) {
    use kube::api::{Patch, PatchParams};
    let passages = server.env.api::<hecate_types::Passage>();
    let running = passages.get(passage).await.unwrap();
    let mut steps = serde_json::to_value(&running.status.as_ref().unwrap().steps).unwrap();
    for step in steps.as_array_mut().unwrap() {
        if step["phase"] == "Running" {
            step["message"] = json!(words);
        }
    }
    passages
        .patch_status(
            passage,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"steps": steps}})),
        )
        .await
        .unwrap();
}

/// Every page of the demo pipeline, as alice (a viewer) and as bob (a promoter, who
/// sees the write buttons enabled): zero violations at desktop and phone size — the
/// Overview with its graph and timeline drawn —, and no page wider than a 375 px phone.
#[tokio::test]
async fn every_page_has_no_axe_violations_at_either_size() {
    use hecate_testenv::Identity::{Alice, Bob};
    use kube::ResourceExt as _;

    use crate::harness::Server;
    use crate::ui_rights::{at, demo_as_deployed, drawn};

    let server = Server::start().await;
    demo_as_deployed(&server).await;
    // Words far wider than a phone, as a step may record them (these are how flux-wait
    // said its revisions before it said them short; a Flux message or a path can be as
    // long): the staging page grew to 604 px on a 375 px phone with them.
    running_step_says(
        &server,
        "staging-1-11-0",
        "Kustomization/demo/shop-staging: ready at env/staging@sha1:f577c28e0b8a4d7f9c1b2a3d4e5f60718293a4b5; waiting for 46eeba7c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a",
    )
    .await;
    let browser = Browser::start(&server.base).await;
    let bundle = hecate_testenv::demo::awaiting_approval().name_any();
    let pages = [
        ("/", "Overview"),
        ("/gates/", "Gates"),
        ("/gates/?name=production", "production"),
        ("/gates/?name=staging", "staging"),
        ("/gates/?name=dev", "dev"),
        ("/beacons/", "Beacons"),
        ("/beacons/?name=shop", "shop"),
        ("/bundles/", "Bundles"),
        (&format!("/bundles/?name={bundle}"), "v1.10.0"),
        ("/passages/", "Passages"),
        ("/passages/?name=production-1-7-0", "production-1-7-0"),
        ("/passages/?name=staging-1-11-0", "staging-1-11-0"),
        ("/approvals/", "Approvals"),
        ("/audit/", "Audit"),
        ("/delivery/", "Delivery"),
        ("/delivery/?gate=staging&since=7d", "Delivery"),
        ("/settings/", "Settings"),
    ];
    let mut counts = Vec::new();
    for (who, token) in [("alice", server.token(Alice)), ("bob", server.token(Bob))] {
        browser.open(&at(&server, "/")).await;
        if browser
            .js("return !!document.querySelector('#sign-out');", vec![])
            .await
            == true
        {
            browser.click("#sign-out").await;
            drawn(&browser, "Sign in").await;
        }
        browser.sign_in(&token).await;
        for (path, heading) in &pages {
            browser.open(&at(&server, path)).await;
            drawn(&browser, heading).await;
            if *path == "/" {
                // The Overview's timeline of recent Bundles is checked drawn.
                browser
                    .until(
                        "the timeline",
                        "document.querySelector('li.track li.stop a')",
                    )
                    .await;
            }
            // The header's rights are drawn once answered: wait for them too.
            browser
                .until("the header's rights", "document.querySelector('#whoami')")
                .await;
            if *path == "/settings/" {
                // Drawn once the server's probes have answered.
                browser
                    .until("the settings", "document.querySelector('#identity')")
                    .await;
            }
            let found = check(&browser, &format!("{path} as {who}")).await;
            counts.push((format!("{path} as {who}"), found));
            fits_a_phone(&browser, &format!("{path} as {who}")).await;
        }
    }
    assert!(
        counts.iter().all(|(_, found)| *found == [0, 0]),
        "{counts:?}"
    );
    assert_eq!(counts.len(), 2 * pages.len());
    // The check can fail: a control whose name does not say what it shows is found,
    // and a page wider than the phone is.
    browser
        .js(
            "const b = document.createElement('button'); b.textContent = 'Reconcile now'; b.setAttribute('aria-label', 'Reconcile Kustomization/x now'); document.querySelector('main').append(b);              const w = document.createElement('div'); w.style.width = '600px'; w.textContent = 'wide'; document.querySelector('main').append(w);",
            vec![],
        )
        .await;
    let found = violations(&browser).await;
    assert!(
        found
            .iter()
            .any(|v| v["id"] == "label-content-name-mismatch"),
        "axe-core checks that names say what is shown: {found:?}"
    );
    let (width, height) = NARROW_PHONE;
    browser.client.set_window_size(width, height).await.unwrap();
    let overflows = browser
        .js(
            "return document.scrollingElement.scrollWidth > innerWidth;",
            vec![],
        )
        .await;
    assert_eq!(
        overflows,
        serde_json::json!(true),
        "the width check sees a wide page"
    );
    browser.close().await;
}
