//! axe-core in the page: every rule axe runs by default (WCAG 2.x A and AA, and its
//! best practices), at desktop size (1280×900) and on a phone (390×844). A page passes
//! with zero violations; a failure lists each rule and the elements it found.
//!
//! axe-core is vendored (`vendor/axe.min.js`, MPL-2.0): injected through WebDriver,
//! which the page's CSP does not govern, so the server never serves it.

use serde_json::{Value, json};

use crate::ui_browser::Browser;

const AXE: &str = include_str!("vendor/axe.min.js");

/// A phone's viewport: an iPhone 12–15's CSS pixels.
pub(crate) const PHONE: (u32, u32) = (390, 844);
/// The desktop viewport the UI tests use.
pub(crate) const DESKTOP: (u32, u32) = (1280, 900);

/// axe's violations on the page as it stands: `[{id, impact, help, targets}]`.
pub(crate) async fn violations(browser: &Browser) -> Vec<Value> {
    // One script: axe's own `var axe` is in scope for the run that follows it.
    let script = format!(
        "{AXE}\n;const done = arguments[arguments.length - 1];\
         axe.run(document, {{ resultTypes: ['violations'] }})\
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

/// Every page of the demo pipeline, as alice (a viewer) and as bob (a promoter, who
/// sees the write buttons enabled): zero violations at desktop and phone size — the
/// Overview with its graph and timeline drawn. (The Settings page is checked by its
/// own tests.)
#[tokio::test]
async fn every_page_has_no_axe_violations_at_either_size() {
    use hecate_testenv::Identity::{Alice, Bob};
    use kube::ResourceExt as _;

    use crate::harness::Server;
    use crate::ui_rights::{at, demo_as_deployed, drawn};

    let server = Server::start().await;
    demo_as_deployed(&server).await;
    let browser = Browser::start(&server.base).await;
    let bundle = hecate_testenv::demo::awaiting_approval().name_any();
    let pages = [
        ("/", "Overview"),
        ("/gates/", "Gates"),
        ("/gates/?name=production", "production"),
        ("/gates/?name=staging", "staging"),
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
            let found = check(&browser, &format!("{path} as {who}")).await;
            counts.push((format!("{path} as {who}"), found));
        }
    }
    assert!(
        counts.iter().all(|(_, found)| *found == [0, 0]),
        "{counts:?}"
    );
    assert_eq!(counts.len(), 2 * pages.len());
    browser.close().await;
}
