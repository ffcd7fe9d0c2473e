//! Who is signed in and what they may do (issue 20, finding 3): `GET {ns}/rights`
//! answers each caller from the operation catalogue; the header says "alice · may
//! read"; a write the caller may not perform is disabled, its title naming the role
//! that would allow it; someone who may read nothing is told so, never that nothing
//! needs attention. With the roles as the chart ships them: alice a viewer, bob a
//! promoter, carol an approver, ci-bot nothing. axe-core finds nothing at either size.

use hecate_testenv::Identity::{self, *};
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;
use crate::ui_browser::*;

/// The demo pipeline with the deployed roles only (not the demo's own grants, which
/// let everyone do everything), production's window removed.
pub(crate) async fn demo_as_deployed(server: &Server) {
    hecate_testenv::demo::load(&server.env.admin, server.ns(), jiff::Timestamp::now())
        .await
        .unwrap();
    server
        .env
        .api::<hecate_types::Gate>()
        .patch(
            "production",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"windows": null}})),
        )
        .await
        .unwrap();
}

/// A page's URL in the test namespace.
pub(crate) fn at(server: &Server, path: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}namespace={}", server.ns())
}

/// Waits for a page to finish drawing: a heading, nothing in flight.
pub(crate) async fn drawn(browser: &Browser, heading: &str) {
    browser
        .until(
            &format!("the page {heading:?}"),
            &format!(
                "!document.querySelector('main[aria-busy]') && (document.querySelector('main h1') || {{}}).textContent?.startsWith({})",
                json!(heading)
            ),
        )
        .await;
}

fn rights_path() -> &'static str {
    "/api/v1alpha1/namespaces/{ns}/rights"
}

/// The write operations the caller may perform here, as the API names them.
async fn may(server: &Server, who: Identity) -> (bool, Value) {
    let answer = server.get(rights_path(), Some(who)).await;
    assert_eq!(answer.status, 200, "{who:?}: {}", answer.body);
    let rights = answer.json();
    assert_eq!(rights["user"], who.username());
    assert_eq!(rights["namespace"], server.ns());
    (rights["reads"].as_bool().unwrap(), rights["may"].clone())
}

#[tokio::test]
async fn the_api_tells_each_caller_what_they_may_do() {
    let server = Server::start().await;
    server.pipeline().await;
    assert_eq!(may(&server, Alice).await, (true, json!([])));
    assert_eq!(
        may(&server, Bob).await,
        (
            true,
            json!([
                "promote",
                "rollback",
                "abort",
                "retryTargets",
                "acceptFailures"
            ])
        )
    );
    assert_eq!(
        may(&server, Carol).await,
        (true, json!(["approve", "reject", "withdrawRejection"]))
    );
    // Someone with no role is answered, not refused: that is what they may do.
    assert_eq!(may(&server, CiBot).await, (false, json!([])));

    let bob = server.get(rights_path(), Some(Bob)).await.json();
    let approve = bob["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == "approve")
        .unwrap()
        .clone();
    assert_eq!(
        approve,
        json!({"operation": "approve", "allowed": false, "writes": true, "role": "hecate-approver",
               "permission": {"verb": "update", "group": "hecate.dev", "resource": "bundles", "subresource": "status"}})
    );
    assert!(
        bob["operations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["operation"] != "grant" && r["operation"] != "listGrants"),
        "only a namespace's operations: {bob}"
    );
    assert_eq!(server.get(rights_path(), None).await.status, 401);
    let malformed = server
        .get(
            "/api/v1alpha1/namespaces/Not_A_Namespace/rights",
            Some(Alice),
        )
        .await;
    assert_eq!(malformed.status, 400, "{}", malformed.body);
}

/// The header's words.
async fn whoami(browser: &Browser, expected: &str) {
    browser.until_text("#whoami", expected).await;
    let text = browser
        .js(
            "return [...document.querySelector('#whoami').childNodes].filter(n => !n.classList?.contains('visually-hidden')).map(n => n.textContent).join('');",
            vec![],
        )
        .await;
    assert_eq!(text, expected);
}

/// Every `button[data-action=<action>]`: `[disabled, needs-role, title]`.
async fn buttons(browser: &Browser, action: &str) -> Vec<(bool, String, String)> {
    let value = browser
        .js(
            "return [...document.querySelectorAll(`main button[data-action=${arguments[0]}]`)].map(b => [b.disabled, b.dataset.needsRole || '', b.title]);",
            vec![json!(action)],
        )
        .await;
    serde_json::from_value(value).unwrap()
}

/// Every disabled write button in <main>: `(its words, the text its
/// aria-describedby points at, whether that text is shown)`.
pub(crate) async fn disabled_reasons(browser: &Browser) -> Vec<(String, String, bool)> {
    let value = browser
        .js(
            "return [...document.querySelectorAll('main button[data-action]:disabled')].map(b => {                const said = (b.getAttribute('aria-describedby') || '').split(' ').filter(Boolean).map(id => document.getElementById(id));                return [b.getAttribute('aria-label') || b.textContent, said.map(el => el ? el.textContent : '').join(' '),                  said.length > 0 && said.every(el => el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden' && el.textContent.trim() !== '')]; });",
            vec![],
        )
        .await;
    serde_json::from_value(value).unwrap()
}

/// Signs out whoever is signed in, opens `path` and signs in as `who`.
pub(crate) async fn sign_in_as(browser: &Browser, server: &Server, who: Identity, path: &str) {
    if browser
        .js("return !!document.querySelector('#sign-out');", vec![])
        .await
        == true
    {
        browser.click("#sign-out").await;
        drawn(browser, "Sign in").await;
    }
    browser.open(path).await;
    browser.sign_in(&server.token(who)).await;
}

#[tokio::test]
async fn the_header_names_the_caller_and_buttons_name_the_role_they_need() {
    let server = Server::start().await;
    demo_as_deployed(&server).await;
    let browser = Browser::start(&server.base).await;
    let production = at(&server, "/gates/?name=production");
    let awaiting = hecate_testenv::demo::awaiting_approval().name_any();
    let approve_row = format!("tr[data-bundle='{awaiting}'] button[data-action=approve]");
    let ns = server.ns().to_string();

    // alice, a viewer: may read; every write on the page disabled, naming its role.
    browser.open(&production).await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "production").await;
    whoami(&browser, "alice · may read").await;
    browser
        .until(
            "the approve button, disabled",
            &format!("document.querySelector(\"{approve_row}\")?.disabled"),
        )
        .await;
    // Production holds the newest it cleared: what it offers is to go back (its
    // older Bundles are rollback targets, not crossings, DECISION 152) — a crossing
    // all the same, under the promoter's role.
    let promote = buttons(&browser, "rollback").await;
    assert!(!promote.is_empty(), "production offers a rollback");
    for (disabled, role, title) in promote {
        assert!(disabled, "alice may not roll back");
        assert_eq!(role, "hecate-promoter");
        assert_eq!(
            title,
            format!(
                "alice may not do this in {ns}: it needs the hecate-promoter role (create passages)."
            )
        );
    }
    for (disabled, role, title) in buttons(&browser, "approve").await {
        assert!(disabled, "alice may not approve");
        assert_eq!(role, "hecate-approver");
        assert!(title.contains("update bundles/status"), "{title}");
    }
    // Not only on hover: every disabled write says why in text on the page, tied to
    // the button, which a keyboard or a phone reaches too (issue 34, item 4).
    for (width, height) in [crate::ui_axe::DESKTOP, crate::ui_axe::NARROW_PHONE] {
        browser.client.set_window_size(width, height).await.unwrap();
        let reasons = disabled_reasons(&browser).await;
        assert!(
            reasons.len() >= 3,
            "production's writes, disabled: {reasons:?}"
        );
        for (button, said, visible) in &reasons {
            assert!(
                visible,
                "{button}'s reason is shown at {width} px: {said:?}"
            );
            assert!(
                said.starts_with(&format!(
                    "alice may not do this in {ns}: it needs the hecate-"
                )),
                "{button}: {said:?}"
            );
        }
    }
    browser.client.set_window_size(1280, 900).await.unwrap();
    let axe_alice = crate::ui_axe::check(&browser, "production as alice").await;
    browser.screenshot("rights-alice-gate", 1280).await;
    browser.screenshot("rights-alice-gate-phone", 390).await;

    // bob, a promoter: may cross and abort, not approve.
    sign_in_as(&browser, &server, Bob, &production).await;
    drawn(&browser, "production").await;
    whoami(&browser, "bob · may read, promote and abort").await;
    browser
        .until(
            "the approve button, disabled",
            &format!("document.querySelector(\"{approve_row}\")?.disabled"),
        )
        .await;
    // Bob's rights disable nothing of the promoter's (what ops refuses him is ops').
    let promote = buttons(&browser, "rollback").await;
    assert!(!promote.is_empty());
    assert!(
        promote.iter().all(|(_, role, _)| role.is_empty()),
        "bob may roll back: {promote:?}"
    );
    assert!(
        buttons(&browser, "approve")
            .await
            .iter()
            .all(|(disabled, role, _)| *disabled && role == "hecate-approver")
    );
    browser.screenshot("rights-bob-gate", 1280).await;

    // carol, an approver: may approve, not cross.
    sign_in_as(&browser, &server, Carol, &production).await;
    drawn(&browser, "production").await;
    whoami(&browser, "carol · may read and approve").await;
    browser
        .until(
            "the approve button, enabled",
            &format!("document.querySelector(\"{approve_row}\")?.disabled === false"),
        )
        .await;
    assert!(
        buttons(&browser, "rollback")
            .await
            .iter()
            .all(|(disabled, role, _)| *disabled && role == "hecate-promoter")
    );

    // ci-bot, with no role anywhere: told it can read nothing — never a green "nothing
    // needs attention".
    sign_in_as(&browser, &server, CiBot, "/").await;
    drawn(&browser, "Overview").await;
    browser
        .until_text("[data-readable=none]", "You can read no namespace.")
        .await;
    whoami(&browser, "ci-bot · can read no namespace").await;
    assert_eq!(
        browser
            .js("return document.querySelector('main .calm');", vec![])
            .await,
        Value::Null,
        "no all-clear for someone who can see nothing"
    );
    assert!(
        !browser
            .page_text()
            .await
            .contains("Nothing needs attention")
    );
    let axe_bot = crate::ui_axe::check(&browser, "the overview as ci-bot").await;
    browser.screenshot("rights-ci-bot-overview", 1280).await;
    browser
        .screenshot("rights-ci-bot-overview-phone", 390)
        .await;
    assert_eq!([axe_alice, axe_bot], [[0, 0], [0, 0]]);
    // The check can fail: an image without a text alternative is found.
    browser
        .js(
            "const i = document.createElement('img'); i.src = '/ui/favicon.svg'; document.querySelector('main').append(i);",
            vec![],
        )
        .await;
    let found = crate::ui_axe::violations(&browser).await;
    assert!(
        found.iter().any(|v| v["id"] == "image-alt"),
        "axe-core sees a missing alt: {found:?}"
    );
    browser.close().await;
}

/// Rights are asked once per distinct permission (operations share them) and cached as
/// reads are: asking again within seconds costs the API server no review; a write is
/// still asked afresh when it is made.
#[tokio::test]
async fn rights_cost_one_review_per_permission_and_are_cached() {
    let (server, log) = Server::start_recording().await;
    server.pipeline().await;
    let sars = |log: &hecate_testenv::RequestLog| {
        log.requests()
            .iter()
            .filter(|r| r.starts_with("POST /apis/authorization.k8s.io/v1/subjectaccessreviews"))
            .count()
    };
    log.clear();
    let first = server.get(rights_path(), Some(Bob)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let operations = first.json()["operations"].as_array().unwrap().len();
    let mut permissions: Vec<String> = first.json()["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["permission"].to_string())
        .collect();
    permissions.sort();
    permissions.dedup();
    assert!(
        permissions.len() < operations,
        "operations share permissions"
    );
    assert_eq!(sars(&log), permissions.len(), "{:?}", log.requests());
    log.clear();
    let again = server.get(rights_path(), Some(Bob)).await;
    assert_eq!(again.json(), first.json());
    assert_eq!(sars(&log), 0, "cached: {:?}", log.requests());
    // Being told one may promote does not spare the promotion its own review.
    let promote = server
        .post(
            "/api/v1alpha1/namespaces/{ns}/gates/staging/promote",
            Some(Bob),
            Some(r#"{"bundle":"b1"}"#),
        )
        .await;
    assert_ne!(promote.status, 403, "{}", promote.body);
    assert_eq!(sars(&log), 1, "{:?}", log.requests());
}
