//! The web UI in headless Chromium, against the real API server and a real control
//! plane holding the demo pipeline: signing in and out, every page, the approve →
//! promote flow with its confirmations and a refusal (the approver may not promote)
//! shown verbatim, keyboard use, live updates without reloading, and server text that
//! stays text.

use fantoccini::key::Key;
use hecate_testenv::Identity::*;
use hecate_types::{Bundle, Gate, Passage};
use kube::ResourceExt as _;
use kube::api::{Patch, PatchParams};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;
use crate::ui_browser::*;

fn awaiting() -> String {
    hecate_testenv::demo::awaiting_approval().name_any()
}

/// A page's URL in the test namespace.
fn at(server: &Server, path: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}namespace={}", server.ns())
}

/// Waits for a page to finish drawing: a heading, nothing in flight.
async fn drawn(browser: &Browser, heading: &str) {
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

/// Waits for the confirmation dialog and returns what it says will happen.
/// The refusal said beside `button` once there is one: its words and role, whether it
/// is in the viewport, how far it is from the button (the gap between their boxes, in
/// CSS pixels), and what the notice at the top says.
async fn refused_beside(browser: &Browser, button: &str) -> Value {
    browser
        .until(
            "a refusal beside the button",
            &format!(
                "(() => {{ const b = document.querySelector({button}); const r = b && b.parentElement.querySelector(':scope > .refused-here'); \
                   if (!r) return null; const a = b.getBoundingClientRect(), z = r.getBoundingClientRect(); \
                   const gap = Math.max(0, z.left - a.right, a.left - z.right, z.top - a.bottom, a.top - z.bottom); \
                   return {{ text: r.textContent, role: r.getAttribute('role'), gap, \
                     inView: z.top >= 0 && z.left >= 0 && z.bottom <= innerHeight && z.right <= innerWidth, \
                     notice: document.getElementById('notice').textContent }}; }})()",
                button = json!(button)
            ),
        )
        .await
}

async fn confirmation(browser: &Browser) -> Value {
    browser
        .until(
            "the confirmation",
            "document.querySelector('dialog#confirm[open]')",
        )
        .await;
    browser
        .js(
            "return document.querySelector('#confirm-text').textContent;",
            vec![],
        )
        .await
}

#[tokio::test]
async fn signs_in_and_shows_every_page() {
    let server = Server::start().await;
    server.demo().await;
    let browser = Browser::start(&server.base).await;
    let ns = server.ns().to_string();

    // Not signed in: the form, not the app. A token the cluster rejects is refused.
    browser.open("/").await;
    drawn(&browser, "Sign in").await;
    browser.screenshot("sign-in", 1280).await;
    browser
        .until(
            "the token field has a label",
            "document.querySelector('label[for=token]')",
        )
        .await;
    browser
        .client
        .find(fantoccini::Locator::Css("#token"))
        .await
        .unwrap()
        .send_keys("not-a-token")
        .await
        .unwrap();
    browser.click(".sign-in button[type=submit]").await;
    browser
        .until_text("#sign-in-error", "did not accept this token")
        .await;
    assert_eq!(
        browser
            .js("return sessionStorage.getItem('hecate.token');", vec![])
            .await,
        Value::Null,
        "a rejected token is not kept"
    );
    browser
        .js("document.querySelector('#token').value = '';", vec![])
        .await;
    browser.sign_in(&server.token(Alice)).await;

    // The overview: the three Gates, each in its stage, in its API state.
    browser.open(&at(&server, "/")).await;
    drawn(&browser, "Overview").await;
    let overview = server
        .get("/api/v1alpha1/overview", Some(Alice))
        .await
        .json();
    let gates = overview["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["namespace"] == ns.as_str())
        .unwrap()["gates"]
        .clone();
    let expected: Vec<(String, String)> = gates
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["name"].as_str().unwrap().to_string(),
                g["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // Upstream first: the server orders the pipeline. Production holds the newest it
    // has cleared; newer Bundles wait for approvals, and its older ones are there to
    // roll back to, not "ready to cross" (DECISION 152).
    assert_eq!(
        expected,
        [
            ("dev".to_string(), "Idle".to_string()),
            ("staging".to_string(), "Crossing".to_string()),
            ("production".to_string(), "Blocked".to_string()),
        ]
    );
    // The graph (graph.js, as on the Gates page): a node per Gate, left to right in
    // pipeline order, its state and health in words.
    browser
        .until(
            "the graph's three Gates",
            &format!("document.querySelectorAll(\"section[aria-labelledby='ns-{ns}'] .graph-svg a[data-gate]\").length === 3"),
        )
        .await;
    let shown = browser
        .js(
            "return [...document.querySelectorAll(`section[aria-labelledby='ns-${arguments[0]}'] .graph-svg a[data-gate]`)].map(a => \
               [a.dataset.gate, a.dataset.state, a.dataset.health, a.getAttribute('aria-label').includes(`${a.dataset.state} · ${a.dataset.health}`)]);",
            vec![json!(ns)],
        )
        .await;
    assert_eq!(
        shown,
        json!([
            ["dev", "Idle", "Healthy", true],
            ["staging", "Crossing", "Progressing", true],
            ["production", "Blocked", "Healthy", true],
        ]),
        "one node per Gate, in pipeline order, state and health in words"
    );
    // Scoped to this test's namespace: alice may read other tests' namespaces too.
    browser
        .until_text(
            &format!("section[aria-labelledby='ns-{ns}'] .graph-svg a[data-gate=staging]"),
            "crossing: staging-1-11-0",
        )
        .await;
    browser
        .until_text("#version", &format!("hecate {}", env!("CARGO_PKG_VERSION")))
        .await;
    browser.screenshot("overview", 1280).await;
    browser.screenshot("overview-phone", 390).await;

    // Gates, through the navigation (the URL keeps the namespace).
    browser.click("#nav a[href^='/gates/']").await;
    drawn(&browser, "Gates").await;
    assert!(
        browser
            .js("return location.search;", vec![])
            .await
            .as_str()
            .unwrap()
            .contains(&ns)
    );
    browser.until_text(".graph-scroll", "shop").await;
    browser.screenshot("gates", 1280).await;

    // Production (its window removed): what is newer waits for approvals — that is
    // what stands in the way —, and the Bundles it could roll back to.
    browser.click(".gate-card[data-gate=production] h3 a").await;
    drawn(&browser, "production").await;
    browser
        .until(
            "an AwaitingApproval blocker",
            "document.querySelector('.blocker[data-kind=AwaitingApproval]')",
        )
        .await;
    browser
        .until_text(
            &format!("tr[data-bundle='{}']", awaiting()),
            "awaiting approval",
        )
        .await;
    browser.screenshot("gate-production", 1280).await;

    // A Bundle: artifacts with digests, the Gates it cleared, and evidence said to be
    // unavailable (no Gate records evidence in Fides here) — never an empty panel.
    browser
        .open(&at(&server, &format!("/bundles/?name={}", awaiting())))
        .await;
    drawn(&browser, "v1.10.0").await;
    let bundle: Bundle = server.env.api().get(&awaiting()).await.unwrap();
    let digest = bundle.spec.artifacts[0]
        .image
        .as_ref()
        .unwrap()
        .digest
        .clone();
    browser.until_text("main", &digest).await;
    browser
        .until_text(
            "[data-evidence=unavailable]",
            "Evidence unavailable: no Gate in this namespace records evidence in Fides",
        )
        .await;
    browser
        .until_text("#s-gates-cleared + .table-wrap", "staging")
        .await;
    browser.screenshot("bundle", 1280).await;
    browser.open(&at(&server, "/bundles/")).await;
    drawn(&browser, "Bundles").await;
    browser.screenshot("bundles", 1280).await;

    // Passages: the failed production crossing, at its step.
    browser.open(&at(&server, "/passages/")).await;
    drawn(&browser, "Passages").await;
    browser.screenshot("passages", 1280).await;
    browser
        .open(&at(&server, "/passages/?name=production-1-7-0"))
        .await;
    drawn(&browser, "production-1-7-0").await;
    browser.until_text("tr.refused", "flux-wait").await;
    browser.until_text("tr.refused", "FluxDegraded").await;
    assert_eq!(
        browser
            .js(
                "return document.querySelector('h1 [data-phase]').dataset.phase;",
                vec![]
            )
            .await,
        "Failed"
    );
    browser.screenshot("passage", 1280).await;

    // Beacons.
    browser.open(&at(&server, "/beacons/")).await;
    drawn(&browser, "Beacons").await;
    browser
        .until_text("main table", "ghcr.io/acme/shop-api")
        .await;
    browser.screenshot("beacons", 1280).await;
    browser.open(&at(&server, "/beacons/?name=shop")).await;
    drawn(&browser, "shop").await;
    browser.until_text("main", "Check for new versions").await;
    browser.screenshot("beacon", 1280).await;

    // Approvals: the queue is the AwaitingApproval entries, 1.10.0 among them.
    browser.open(&at(&server, "/approvals/")).await;
    drawn(&browser, "Approvals").await;
    browser
        .until_text(
            &format!("tr[data-bundle='{}']", awaiting()),
            "Approve for production",
        )
        .await;
    browser.screenshot("approvals", 1280).await;

    // Audit: newest first, refusals marked; the kind filter keeps only refusals.
    browser.open(&at(&server, "/audit/")).await;
    drawn(&browser, "Audit").await;
    browser.until_text("tr.refused", "production-1-7-0").await;
    browser.screenshot("audit", 1280).await;
    browser
        .js(
            "const s = document.querySelector('#audit-kind'); s.value = 'refused'; s.dispatchEvent(new Event('change'));",
            vec![],
        )
        .await;
    browser
        .until(
            "only refusals after filtering",
            "location.search.includes('kind=refused') && [...document.querySelectorAll('tbody tr')].length > 0 && [...document.querySelectorAll('tbody tr')].every(r => r.dataset.kind === 'refused')",
        )
        .await;

    // A freeze in force: nothing newer is eligible here (what is newer waits on
    // staging), so the window is not what stands in the way (DECISION 152) — and no
    // button offers a crossing the window would refuse.
    server
        .env
        .api::<Gate>()
        .patch(
            "production",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"windows": [{"schedule": "* * * * *", "duration": "2m", "deny": true}]}})),
        )
        .await
        .unwrap();
    browser.open(&at(&server, "/gates/?name=production")).await;
    drawn(&browser, "production").await;
    browser.until_text("main", "cannot cross").await;
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('button[data-action=promote]').length;",
                vec![]
            )
            .await,
        0,
        "nothing offered that the window would refuse"
    );
    browser.screenshot("gate-production-frozen", 1280).await;

    // Unknown paths get the 404 page, not the app.
    browser.open("/no-such-page").await;
    drawn(&browser, "Not found").await;
    browser.screenshot("not-found", 1280).await;

    // Signing out forgets the token; someone without a Role is told the cluster said no.
    browser.open(&at(&server, "/gates/")).await;
    drawn(&browser, "Gates").await;
    browser.click("#sign-out").await;
    drawn(&browser, "Sign in").await;
    assert_eq!(
        browser
            .js("return sessionStorage.getItem('hecate.token');", vec![])
            .await,
        Value::Null
    );
    browser.until_text("#notice", "Signed out").await;
    browser.sign_in(&server.token(CiBot)).await;
    drawn(&browser, "Not permitted").await;
    browser
        .until_text("main", &format!("ci-bot may not list gates in {ns}"))
        .await;
    browser.close().await;
}

#[tokio::test]
async fn carol_approves_bob_promotes_and_a_refusal_is_shown_verbatim() {
    let server = Server::start().await;
    server.demo().await;
    let browser = Browser::start(&server.base).await;
    let bundle = awaiting();
    let production = at(&server, "/gates/?name=production");

    // Carol, with the keyboard only: Tab to the approval, Enter, read, confirm.
    browser.open(&production).await;
    browser.sign_in(&server.token(Carol)).await;
    drawn(&browser, "production").await;
    browser
        .until(
            "the approve button of the Bundle awaiting approval",
            &format!(
                "document.querySelector(\"tr[data-bundle='{bundle}'] button[data-action=approve]\")"
            ),
        )
        .await;
    let target = format!("tr[data-bundle='{bundle}'] button[data-action=approve]");
    let mut reached = false;
    for _ in 0..80 {
        browser.press(&Key::Tab).await;
        let focused = browser
            .js(
                "return document.activeElement.matches(arguments[0]);",
                vec![json!(target)],
            )
            .await;
        if focused == true {
            reached = true;
            break;
        }
    }
    assert!(reached, "Tab never reached the approve button");
    let outline = browser
        .js(
            "return getComputedStyle(document.activeElement).outlineStyle;",
            vec![],
        )
        .await;
    assert_ne!(outline, "none", "focus is visible");
    browser.press(&Key::Enter).await;
    assert_eq!(
        confirmation(&browser).await,
        format!("Approve v1.10.0 ({bundle}) for production as you.")
    );
    assert_eq!(
        browser
            .js("return document.activeElement.id;", vec![])
            .await,
        "confirm-cancel",
        "the safe choice has focus"
    );
    browser.press(&Key::Tab).await;
    assert_eq!(
        browser
            .js("return document.activeElement.id;", vec![])
            .await,
        "confirm-ok"
    );
    browser.press(&Key::Enter).await;
    browser.until_text("#notice", "Approved:").await;
    let approved: Bundle = server.env.api().get(&bundle).await.unwrap();
    let approvals = approved.status.unwrap().approved_for;
    assert!(
        approvals
            .iter()
            .any(|a| a.gate == "production" && a.actor == "carol"),
        "{approvals:?}"
    );
    // The page refetched: the Bundle is now among those that could cross.
    browser
        .until(
            "the approved Bundle could cross",
            &format!(
                "document.querySelector(\"button[data-action=promote][data-bundle='{bundle}']\")"
            ),
        )
        .await;

    // Carol may not cross with her own approval (SelfApproved, segregation of duties):
    // her Cross button says so before the click, in promote's own words (issue 34).
    let promote = format!("tr[data-bundle='{bundle}'] button[data-action=promote]");
    let refusal = server
        .post(
            "/api/v1alpha1/namespaces/{ns}/gates/production/promote",
            Some(Carol),
            Some(&json!({"bundle": bundle}).to_string()),
        )
        .await;
    assert_eq!(refusal.status, 409);
    assert_eq!(refusal.json()["code"], "SelfApproved");
    let message = refusal.json()["error"].as_str().unwrap().to_string();
    let said = browser
        .until(
            "carol's Cross button, disabled with why",
            &format!(
                "document.querySelector(\"{promote}\")?.disabled && document.querySelector(\"{promote} + .why-not\")?.textContent"
            ),
        )
        .await;
    assert!(
        message.ends_with(said.as_str().unwrap()),
        "{said} is what promote answers: {message}"
    );
    // A page drawn before the rules said no still asks; the server refuses, and the
    // page says so in the server's own words — beside the button she clicked, in view,
    // on a desktop and on a phone (issue 34, item 2).
    for (width, height) in [crate::ui_axe::DESKTOP, crate::ui_axe::NARROW_PHONE] {
        browser.client.set_window_size(width, height).await.unwrap();
        // Enabled and clicked in one script: a live redraw (the approval's own event
        // arriving) between the two would put back the disabled button.
        browser
            .js(
                "const b = document.querySelector(arguments[0]); b.disabled = false; \
                 b.scrollIntoView({block: 'center'}); b.click();",
                vec![json!(promote)],
            )
            .await;
        confirmation(&browser).await;
        // The page is redrawn while she confirms (as a live update does; the last
        // time round, as the copies have no handlers): the refusal still finds the
        // button she clicked — the row's, not the same Bundle's Cross button under
        // "In the way", which comes first on the page.
        if width < 1000 {
            let alike = browser
            .js(
                "const m = document.querySelector('main'); \
                 m.replaceChildren(...[...m.childNodes].map((n) => n.cloneNode(true))); \
                 return document.querySelectorAll(\"main button[data-action=promote][data-bundle='\" + arguments[0] + \"']\").length;",
                vec![json!(bundle)],
            )
            .await;
            assert_eq!(
                alike, 2,
                "the Bundle's Cross button in its row and in the way"
            );
        }
        browser.click("#confirm-ok").await;
        let beside = refused_beside(&browser, &promote).await;
        assert_eq!(
            beside["text"],
            format!("{message} (SelfApproved)"),
            "the refusal verbatim, at {width} px: {beside}"
        );
        assert_eq!(beside["role"], "alert", "announced: {beside}");
        assert_eq!(beside["inView"], true, "in view at {width} px: {beside}");
        assert!(
            beside["gap"].as_f64().unwrap() <= 16.0,
            "beside the button at {width} px: {beside}"
        );
        assert_eq!(beside["notice"], "", "not at the top of the page: {beside}");
        browser
            .screenshot(
                if width > 1000 {
                    "refusal"
                } else {
                    "refusal-phone"
                },
                width,
            )
            .await;
    }
    browser.client.set_window_size(1280, 900).await.unwrap();
    let passages = server.env.api::<Passage>();
    let crossing = |list: Vec<Passage>| -> Vec<Passage> {
        list.into_iter()
            .filter(|p| p.spec.gate == "production" && p.spec.bundle == bundle)
            .collect()
    };
    assert!(
        crossing(passages.list(&Default::default()).await.unwrap().items).is_empty(),
        "a refusal creates nothing"
    );

    // Carol signs out; bob signs in and starts the crossing.
    browser.click("#sign-out").await;
    drawn(&browser, "Sign in").await;
    assert_eq!(
        browser
            .js("return sessionStorage.getItem('hecate.token');", vec![])
            .await,
        Value::Null
    );
    browser.sign_in(&server.token(Bob)).await;
    drawn(&browser, "production").await;
    browser
        .click(&format!(
            "tr[data-bundle='{bundle}'] button[data-action=promote]"
        ))
        .await;
    assert_eq!(
        confirmation(&browser).await,
        format!("Start crossing v1.10.0 ({bundle}) through production as you.")
    );
    browser.click("#confirm-ok").await;
    browser.until_text("#notice", "Crossing started:").await;
    let started = crossing(passages.list(&Default::default()).await.unwrap().items);
    assert_eq!(started.len(), 1, "one Passage for the crossing");
    assert_eq!(
        started[0].spec.actor, "bob",
        "the server recorded the caller"
    );
    let passage = started[0].name_any();
    browser
        .until(
            "production is crossing",
            "document.querySelector('h1 [data-state]').dataset.state === 'Crossing'",
        )
        .await;
    browser
        .until_text(&format!("li.passage[data-passage='{passage}']"), "Pending")
        .await;
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('button[data-action=promote]').length;",
                vec![]
            )
            .await,
        0,
        "while a crossing runs, nothing else is offered"
    );
    browser.screenshot("gate-production-crossing", 1280).await;
    browser.close().await;
}

#[tokio::test]
async fn live_updates_appear_without_reloading_and_server_text_stays_text() {
    let server = Server::start().await;
    server.demo().await;
    let browser = Browser::start(&server.base).await;
    // The Gates page follows its one namespace's stream. (The overview spans every
    // namespace alice may read — here other tests' too — and past three it refreshes
    // on a timer instead of holding a connection per namespace.)
    browser.open(&at(&server, "/gates/")).await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "Gates").await;
    browser
        .until(
            "the event stream is open",
            "document.querySelector('#live').dataset.state === 'live'",
        )
        .await;
    // A reload would lose this.
    browser.js("window.__samePage = true;", vec![]).await;

    // A status written by someone else (here the admin, as a controller would): the
    // page shows it without being asked. The stream says `open` only once its watches
    // listen, so one write, right after, must show.
    // production's health, written as its controller would.
    let env = &server.env;
    let health = |status: &str, issue: &str| {
        let patch = json!({"status": {"health": {"status": status, "issues": [issue]}}});
        async move {
            env.api::<Gate>()
                .patch_status("production", &PatchParams::default(), &Patch::Merge(patch))
                .await
                .unwrap();
        }
    };
    let issue = r#"<img src=x onerror="window.__xss=1"> rollout stuck"#.to_string();
    health("Degraded", &issue).await;
    browser
        .until(
            "the change, without a reload",
            &format!(
                "(document.querySelector('.gate-card[data-gate=production] .issues') || {{}}).textContent === {}",
                json!(issue)
            ),
        )
        .await;
    let card = browser
        .js(
            "const card = document.querySelector('.gate-card[data-gate=production]'); \
             return {health: card.querySelector('[data-health]').textContent, issues: card.querySelector('.issues').textContent, images: document.querySelectorAll('main img').length};",
            vec![],
        )
        .await;
    assert_eq!(
        card,
        json!({"health": "Degraded", "issues": issue, "images": 0}),
        "the health word changed, and the markup in the issue is text"
    );
    // Red is for Degraded: Flux at work is said, not alarmed (#53).
    let red = |state: &str| {
        format!(
            "const el = document.querySelector('.gate-card[data-gate=production] .issues[data-health={state}]'); \
             if (!el) return null; const probe = document.createElement('span'); probe.style.color = 'var(--bad)'; \
             document.body.append(probe); const bad = getComputedStyle(probe).color; probe.remove(); \
             return getComputedStyle(el).color === bad;"
        )
    };
    assert_eq!(browser.js(&red("Degraded"), vec![]).await, json!(true));
    health("Progressing", "Kustomization app: reconciling").await;
    browser
        .until(
            "Progressing, without a reload",
            "!!document.querySelector('.gate-card[data-gate=production] .issues[data-health=Progressing]')",
        )
        .await;
    assert_eq!(browser.js(&red("Progressing"), vec![]).await, json!(false));
    assert_eq!(
        browser
            .js("return window.__samePage === true;", vec![])
            .await,
        true,
        "no reload"
    );
    assert_eq!(
        browser
            .js("return window.__xss === undefined;", vec![])
            .await,
        true,
        "nothing ran"
    );
    browser.until_text("#live", "updated").await;
    browser.screenshot("gates-live-update", 1280).await;
    browser.close().await;
}

/// No page load asks for something that is not there, or logs an error (issue 34,
/// item 11): the sign-in page asks how to sign in (`/auth/config`), which the server
/// answers without an identity provider too, and every page after it loads clean.
#[tokio::test]
async fn no_page_meets_a_404_or_logs_an_error() {
    let server = Server::start().await;
    server.demo().await;
    let browser = Browser::start(&server.base).await;
    /// The resources the page loaded that failed (`[url, status]`), and the console's
    /// errors since it was last asked.
    async fn trouble(browser: &Browser) -> (Value, Vec<Value>) {
        let failed = browser
            .js(
                "return performance.getEntriesByType('resource').filter(e => e.responseStatus >= 400).map(e => [e.name, e.responseStatus]);",
                vec![],
            )
            .await;
        let errors = browser
            .console()
            .await
            .into_iter()
            .filter(|e| e["level"] == "SEVERE")
            .collect();
        (failed, errors)
    }
    browser.open(&at(&server, "/")).await;
    drawn(&browser, "Sign in").await;
    browser
        .until(
            "the sign-in page asked how to sign in",
            "performance.getEntriesByType('resource').some(e => e.name.endsWith('/auth/config') && e.responseStatus === 200)",
        )
        .await;
    assert_eq!(
        trouble(&browser).await,
        (json!([]), vec![]),
        "the sign-in page"
    );
    browser.sign_in(&server.token(Alice)).await;
    for (path, heading) in [
        ("/", "Overview"),
        ("/gates/?name=production", "production"),
        ("/approvals/", "Approvals"),
        ("/audit/", "Audit"),
    ] {
        browser.open(&at(&server, path)).await;
        drawn(&browser, heading).await;
        browser
            .until("the header's rights", "document.querySelector('#whoami')")
            .await;
        assert_eq!(trouble(&browser).await, (json!([]), vec![]), "{path}");
    }
    // Settings asks who holds the roles, which the cluster may refuse alice (a 403,
    // shown as such): an answer, not something missing.
    browser.open(&at(&server, "/settings/")).await;
    drawn(&browser, "Settings").await;
    browser
        .until("the settings", "document.querySelector('#identity')")
        .await;
    let (failed, _) = trouble(&browser).await;
    assert!(
        failed.as_array().unwrap().iter().all(|f| f[1] == 403),
        "nothing missing on the settings page: {failed}"
    );
    browser.close().await;
}
