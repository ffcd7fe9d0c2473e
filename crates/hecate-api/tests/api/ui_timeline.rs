//! What people read (issue 20): the Overview draws each namespace's pipeline as the
//! graph and, under it, the timeline of recent Bundles — a dot per Gate on each
//! Bundle's way, each a link, drawn from ops' `timeline` as the API serves it; every
//! absolute time is the viewer's, with its zone; relative times tick without a refetch,
//! and stop ticking when they leave the page; one failed crossing is said in the
//! singular. As alice, a viewer.

use hecate_testenv::Identity::*;
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, demo_as_deployed, drawn};

/// This namespace's share of the Overview, as alice is served it.
async fn my_overview(server: &Server) -> Value {
    let overview = server
        .get("/api/v1alpha1/overview", Some(Alice))
        .await
        .json();
    overview["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["namespace"] == server.ns())
        .unwrap()
        .clone()
}

#[tokio::test]
async fn the_overview_draws_the_graph_and_a_timeline_of_recent_bundles() {
    let server = Server::start().await;
    demo_as_deployed(&server).await;
    let browser = Browser::start(&server.base).await;
    let ns = server.ns().to_string();
    let section = format!("section[data-namespace='{ns}']");

    browser.open(&at(&server, "/")).await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "Overview").await;
    let mine = my_overview(&server).await;
    let timeline = mine["timeline"].as_array().unwrap().clone();
    // Ten of the demo's twelve releases: the newest, every one a Gate runs among them.
    assert_eq!(timeline.len(), 10);
    browser
        .until(
            "the timeline",
            &format!(
                "document.querySelectorAll(\"{section} li.track\").length === {}",
                timeline.len()
            ),
        )
        .await;

    // The pipeline is the graph (no stage columns any more): Beacon, then the Gates
    // left to right in ops' order.
    let nodes = browser
        .js(
            "return [...document.querySelectorAll(`${arguments[0]} .graph-svg a[data-gate]`)].map(a => [a.dataset.gate, Math.round(a.getBoundingClientRect().left)]);",
            vec![json!(section)],
        )
        .await;
    let names: Vec<&str> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n[0].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = mine["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, expected);
    assert_eq!(names, ["dev", "staging", "production"]);
    let lefts: Vec<i64> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n[1].as_i64().unwrap())
        .collect();
    assert!(lefts.windows(2).all(|w| w[0] < w[1]), "{lefts:?}");
    assert_eq!(
        browser
            .js(
                "return [!!document.querySelector(`${arguments[0]} .graph-svg a[data-beacon=shop]`), document.querySelectorAll('.stage, ol.pipeline').length];",
                vec![json!(section)],
            )
            .await,
        json!([true, 0]),
        "the Beacon is drawn; the columns are gone"
    );

    // Newest first, each with a dot per Gate on its way: what ops said, dot for dot.
    let served: Vec<Value> = timeline
        .iter()
        .map(|t| {
            json!([
                t["bundle"],
                t["gates"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| json!([
                        s["gate"],
                        s["outcome"].as_str().unwrap_or("none"),
                        s["holding"].as_bool().unwrap_or(false)
                    ]))
                    .collect::<Vec<_>>()
            ])
        })
        .collect();
    let shown = browser
        .js(
            "return [...document.querySelectorAll(`${arguments[0]} li.track`)].map(t => [t.dataset.bundle, \
               [...t.querySelectorAll('li.stop')].map(s => [s.dataset.gate, s.dataset.outcome, s.dataset.holding === 'true'])]);",
            vec![json!(section)],
        )
        .await;
    assert_eq!(shown, json!(served));

    // Every dot is a link whose name says the Gate and what happened there.
    let links = browser
        .js(
            "const stops = [...document.querySelectorAll(`${arguments[0]} li.stop`)]; \
             return [stops.length, stops.filter(s => { const a = s.querySelector(':scope > a[href]'); return a && a.textContent.startsWith(s.dataset.gate); }).length];",
            vec![json!(section)],
        )
        .await;
    assert_eq!(links[0], links[1], "{links}");
    assert!(links[0].as_u64().unwrap() >= 30);

    // 1.11.0: cleared dev and runs there, is crossing staging now, production ahead.
    let newest = hecate_testenv::demo::release_bundle(11).name_any();
    let dots = browser
        .js(
            "return [...document.querySelectorAll(`${arguments[0]} li.track[data-bundle='${arguments[1]}'] li.stop a`)].map(a => [a.textContent, new URL(a.href).search]);",
            vec![json!(section), json!(newest)],
        )
        .await;
    let dots = dots.as_array().unwrap();
    assert!(
        dots[0][0].as_str().unwrap().starts_with("dev cleared ")
            && dots[0][0].as_str().unwrap().ends_with(", running here now"),
        "{dots:?}"
    );
    assert_eq!(
        dots[1],
        json!([
            "staging crossing now",
            format!("?name=staging-1-11-0&namespace={ns}")
        ])
    );
    assert_eq!(
        dots[2],
        json!([
            "production not yet",
            format!("?name=production&namespace={ns}")
        ])
    );
    // 1.8.0 runs in production.
    let running = hecate_testenv::demo::release_bundle(8).name_any();
    browser
        .until_text(
            &format!("{section} li.track[data-bundle='{running}'] .track-head"),
            "in production",
        )
        .await;
    // 1.7.0 failed production once: "1 failed crossing", in the singular.
    let failed = hecate_testenv::demo::release_bundle(7).name_any();
    let head = browser
        .until_text(
            &format!("{section} li.track[data-bundle='{failed}'] .track-head"),
            "failed crossing",
        )
        .await;
    assert!(
        head.contains("1 failed crossing") && !head.contains("crossings"),
        "{head}"
    );
    let axe = crate::ui_axe::check(&browser, "the Overview with its timeline").await;
    browser.screenshot("overview-timeline", 1280).await;
    browser.screenshot("overview-timeline-phone", 390).await;

    // The failed dot opens the Passage that failed.
    browser
        .click(&format!(
            "{section} li.track[data-bundle='{failed}'] li.stop[data-gate=production] a"
        ))
        .await;
    drawn(&browser, "production-1-7-0").await;
    // The Bundles page says where each runs from the same answer.
    browser.open(&at(&server, "/bundles/")).await;
    drawn(&browser, "Bundles").await;
    browser
        .until_text(&format!("tr[data-bundle='{running}']"), "in production")
        .await;
    browser
        .until_text(&format!("tr[data-bundle='{newest}']"), "in dev")
        .await;
    assert_eq!(axe, [0, 0]);
    browser.close().await;
}

/// Asks Chromium, through chromedriver, to run a DevTools command in the page.
#[derive(Debug)]
struct Cdp(&'static str, Value);

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base: &reqwest::Url,
        session: Option<&str>,
    ) -> Result<reqwest::Url, <reqwest::Url as std::str::FromStr>::Err> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &reqwest::Url) -> (axum::http::Method, Option<String>) {
        let body = json!({"cmd": self.0, "params": self.1});
        (axum::http::Method::POST, Some(body.to_string()))
    }
}

/// Every `<time>` in <main>: `[datetime, title, text, data-tick]`.
async fn times(browser: &Browser) -> Vec<Value> {
    browser
        .js(
            "return [...document.querySelectorAll('main time')].map(t => [t.getAttribute('datetime'), t.title, t.textContent, t.dataset.tick || '']);",
            vec![],
        )
        .await
        .as_array()
        .unwrap()
        .clone()
}

/// `when` in India (UTC+5:30, no summer time): its hours and minutes on a 24-hour
/// and on a 12-hour clock (the browser's locale picks one).
fn in_india(when: &str) -> [String; 2] {
    let t: jiff::Timestamp = when.parse().unwrap();
    let india = jiff::tz::Offset::from_seconds(5 * 3600 + 30 * 60).unwrap();
    let zoned = t.to_zoned(jiff::tz::TimeZone::fixed(india));
    ["%H:%M", "%I:%M %p"].map(|f| zoned.strftime(f).to_string())
}

#[tokio::test]
async fn times_are_the_viewers_with_their_zone_and_relative_ones_tick() {
    let server = Server::start().await;
    demo_as_deployed(&server).await;
    let browser = Browser::start(&server.base).await;
    // The viewer is in India: every absolute time is theirs, saying so.
    browser
        .client
        .issue_cmd(Cdp(
            "Emulation.setTimezoneOverride",
            json!({"timezoneId": "Asia/Kolkata"}),
        ))
        .await
        .unwrap();
    let awaiting = hecate_testenv::demo::awaiting_approval().name_any();
    browser
        .open(&at(&server, &format!("/bundles/?name={awaiting}")))
        .await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "v1.10.0").await;
    browser.until_text("main", "Timeline").await;
    let mut seen = 0;
    for path in [
        format!("/bundles/?name={awaiting}"),
        "/audit/".to_string(),
        "/passages/?name=staging-1-11-0".to_string(),
        "/".to_string(),
    ] {
        browser.open(&at(&server, &path)).await;
        browser
            .until(
                &format!("{path} drawn with its times"),
                "!document.querySelector('main[aria-busy]') && document.querySelector('main time')",
            )
            .await;
        for t in times(&browser).await {
            let [when, title, text, tick] =
                [0, 1, 2, 3].map(|i| t[i].as_str().unwrap_or_default().to_string());
            let hm = in_india(&when);
            assert!(
                title.ends_with(" GMT+5:30") && hm.iter().any(|x| title.contains(x)),
                "{path}: the hover of {t} is {hm:?} in the viewer's zone"
            );
            if tick.is_empty() {
                // Written out: the local time and its zone, as on hover.
                assert_eq!(text, title, "{path}: {t}");
            }
            seen += 1;
        }
        // The timeline's dots say their times on hover too.
        let titles = browser
            .js(
                "return [...document.querySelectorAll('li.stop:not([data-outcome=none]) a')].map(a => a.title);",
                vec![],
            )
            .await;
        for title in titles.as_array().unwrap() {
            assert!(title.as_str().unwrap().ends_with(" GMT+5:30"), "{title}");
        }
    }
    assert!(seen > 20, "only {seen} times seen");

    // Relative times tick — without asking the server again.
    browser.open(&at(&server, "/passages/")).await;
    drawn(&browser, "Passages").await;
    let row = "tr[data-passage='staging-1-11-0']";
    // The stream's `open` makes the page look again once: let that redraw settle
    // before touching what it would replace.
    browser
        .until(
            "the page redrawn after the stream opened",
            "document.querySelector('#live').dataset.state === 'live' && performance.getEntriesByType('resource').filter(e => /\\/passages(\\?|$)/.test(e.name)).length >= 2 && !document.querySelector('main[aria-busy]')",
        )
        .await;
    browser
        .until(
            "the running crossing's time so far",
            &format!("document.querySelector(\"{row} time[data-tick=since]\") && document.querySelector(\"{row} time[data-tick=ago]\")"),
        )
        .await;
    let before = browser
        .js(
            "document.querySelector(`${arguments[0]} time[data-tick=since]`).setAttribute('datetime', new Date(Date.now() - 3723000).toISOString()); \
             document.querySelector(`${arguments[0]} time[data-tick=ago]`).setAttribute('datetime', new Date(Date.now() - 600000).toISOString()); \
             return [document.documentElement.dataset.ticking, performance.getEntriesByType('resource').filter(e => e.name.includes('/api/') && !e.name.includes('/watch')).length];",
            vec![json!(row)],
        )
        .await;
    assert_eq!(before[0], "on");
    browser
        .until(
            "both times re-worded by the tick",
            &format!("document.querySelector(\"{row} time[data-tick=since]\").textContent === '1h 2m' && document.querySelector(\"{row} time[data-tick=ago]\").textContent === '10 minutes ago'"),
        )
        .await;
    let after = browser
        .js(
            "return performance.getEntriesByType('resource').filter(e => e.name.includes('/api/') && !e.name.includes('/watch')).length;",
            vec![],
        )
        .await;
    assert_eq!(after, before[1], "no refetch");
    // A page without relative times stops the interval; one with them starts it again.
    browser.click("#nav a[href^='/settings/']").await;
    drawn(&browser, "Settings").await;
    assert_eq!(
        browser
            .js(
                "return [document.querySelectorAll('time[data-tick]').length, document.documentElement.dataset.ticking || 'off'];",
                vec![]
            )
            .await,
        json!([0, "off"])
    );
    browser.click("#nav a[href^='/passages/']").await;
    drawn(&browser, "Passages").await;
    browser
        .until(
            "ticking again",
            "document.documentElement.dataset.ticking === 'on'",
        )
        .await;
    browser.close().await;
}

/// A Bundle's timeline starts with its emission (issue 34, item 6), even when a Gate
/// cleared it within the second it was emitted: the emission's time has a fraction of
/// a second (`hecate.dev/created-at`), the records' whole seconds, and "cleared" at
/// 12:00:01 is not before "emitted" at 12:00:01.9.
#[tokio::test]
async fn a_bundles_timeline_starts_with_its_emission() {
    use hecate_types::{Bundle, BundleStatus, GateCrossing, Time};
    let server = Server::start().await;
    server.pipeline().await;
    let second = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).unwrap();
    let emitted = second + jiff::SignedDuration::from_millis(900);
    let mut fresh = Bundle::new("b2", hecate_testenv::fixtures::bundle_spec());
    fresh.annotations_mut().insert(
        "hecate.dev/created-at".into(),
        emitted.strftime("%Y-%m-%dT%H:%M:%S%.9fZ").to_string(),
    );
    let mut fresh = server.env.create(fresh).await;
    fresh.status = Some(BundleStatus {
        cleared: vec![GateCrossing {
            gate: "staging".into(),
            passage: "staging-1".into(),
            at: Time(second),
            actor: "bob".into(),
            reason: String::new(),
        }],
        ..BundleStatus::default()
    });
    server.env.write_status(&fresh).await;
    let browser = Browser::start(&server.base).await;
    browser.open(&at(&server, "/bundles/?name=b2")).await;
    browser.sign_in(&server.token(Alice)).await;
    // Headed by its version, derived from its image's tag (it has no alias).
    drawn(&browser, "1.0.0").await;
    browser.until_text("main", "Timeline").await;
    let order = browser
        .js(
            "return [...document.querySelectorAll('main tr[data-what]')].map(r => r.dataset.what);",
            vec![],
        )
        .await;
    assert_eq!(order, json!(["emitted", "cleared"]));
    browser.close().await;
}

/// A Gate's window is said in its own zone, and — when the viewer's clock reads it
/// differently — its opening in the viewer's zone too (issue 34, item 7).
#[tokio::test]
async fn a_window_is_said_in_the_viewers_zone_too() {
    let server = Server::start().await;
    demo_as_deployed(&server).await;
    // production's weekend freeze, in London.
    server
        .env
        .api::<hecate_types::Gate>()
        .patch(
            "production",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"windows": [
                {"schedule": "0 0 * * 6", "duration": "48h", "timeZone": "Europe/London", "deny": true}
            ]}})),
        )
        .await
        .unwrap();
    let browser = Browser::start(&server.base).await;
    let page = at(&server, "/gates/?name=production");
    let zone = |id: &'static str| Cdp("Emulation.setTimezoneOverride", json!({"timezoneId": id}));

    // A viewer in India: the freeze's opening in their time, with their zone.
    browser
        .client
        .issue_cmd(zone("Asia/Kolkata"))
        .await
        .unwrap();
    browser.open(&page).await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "production").await;
    let theirs = browser
        .until_text("ul.windows li .your-zone", "In your time zone: ")
        .await;
    assert!(
        theirs.matches("GMT+5:30").count() == 2,
        "its start and end in the viewer's zone: {theirs}"
    );
    let text = browser
        .js(
            "return document.querySelector('ul.windows li').textContent;",
            vec![],
        )
        .await;
    assert!(
        text.as_str()
            .unwrap()
            .starts_with("no crossings Sat 00:00 – Mon 00:00"),
        "the window in its own zone first: {text}"
    );

    // A viewer in London reads the window's own words: nothing more.
    browser
        .client
        .issue_cmd(zone("Europe/London"))
        .await
        .unwrap();
    browser.open(&page).await;
    drawn(&browser, "production").await;
    browser
        .until("the windows", "document.querySelector('ul.windows li')")
        .await;
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('.your-zone').length;",
                vec![]
            )
            .await,
        json!(0)
    );
    browser.close().await;
}
