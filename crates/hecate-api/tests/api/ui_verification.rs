//! Verification after a crossing, as people read it (DECISION 139): a Passage's page
//! has a Verification section — where it stands, and each verifier's phase, counts,
//! last value, last and next look (the viewer's time, with its zone) and message —
//! and the timeline marks a crossing verified, being verified or not verified, on the
//! Overview and on the Bundle's page. The records are written as the controller writes
//! them, through the status subresources. As alice, a viewer.

use hecate_testenv::Identity::*;
use hecate_types::{Bundle, Passage, Time};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;
use kube::api::{Patch, PatchParams};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, demo_as_deployed, drawn};

/// `seconds` from `now`, as the API writes times.
fn time(now: Timestamp, seconds: i64) -> Value {
    serde_json::to_value(Time(
        (now + SignedDuration::from_secs(seconds))
            .round(jiff::Unit::Second)
            .unwrap(),
    ))
    .unwrap()
}

async fn write_verification(server: &Server, passage: &str, verification: Value) {
    server
        .env
        .api::<Passage>()
        .patch_status(
            passage,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"verification": verification}})),
        )
        .await
        .unwrap();
}

/// Bundle `bundle`'s record at `gate` as the controller leaves it when the crossing by
/// `passage` is still being verified (not cleared) or said no (`unverified`, why).
async fn unclear(server: &Server, bundle: &str, gate: &str, unverified: Option<(&str, Value)>) {
    let bundles = server.env.api::<Bundle>();
    let status = bundles
        .get(bundle)
        .await
        .unwrap()
        .status
        .unwrap_or_default();
    let cleared: Vec<_> = status.cleared.iter().filter(|c| c.gate != gate).collect();
    let mut patch = json!({"status": {"cleared": cleared}});
    if let Some((reason, at)) = unverified {
        let passage = status
            .cleared
            .iter()
            .find(|c| c.gate == gate)
            .map(|c| c.passage.clone())
            .unwrap();
        patch["status"]["unverified"] = json!([{
            "gate": gate, "passage": passage, "at": at, "actor": "alice", "reason": reason,
        }]);
    }
    bundles
        .patch_status(bundle, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
}

/// The text of `field` in verifier `uses`'s row.
async fn field(browser: &Browser, uses: &str, field: &str) -> String {
    browser
        .js(
            "const el = document.querySelector(`tr[data-verifier='${arguments[0]}'] [data-field=${arguments[1]}]`); return el ? el.textContent : null;",
            vec![json!(uses), json!(field)],
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_passage_shows_its_verification_and_the_timeline_marks_verified_from_crossed() {
    let server = Server::start().await;
    demo_as_deployed(&server).await;
    let now = Timestamp::now();
    let ns = server.ns().to_string();
    let release = |i: usize| hecate_testenv::demo::release_bundle(i).name_any();

    // 1.8.0 runs in production and is being verified there: prometheus has passed
    // twice of three, the soak has not looked yet.
    write_verification(
        &server,
        "production-1-8-0",
        json!({
            "phase": "Verifying",
            "startedAt": time(now, -90),
            "message": "prometheus: 2 passes in a row, last 0.002",
            "verifiers": [
                {
                    "uses": "prometheus", "phase": "Verifying", "passes": 2, "lastValue": "0.002",
                    "lastLookAt": time(now, -30), "nextLookAt": time(now, 600),
                    "message": "error rate 0.002 < 0.01",
                },
                {
                    "uses": "soak", "phase": "Verifying", "nextLookAt": time(now, 1800),
                    "restarts": [
                        {"at": time(now, -600), "reason": format!("the Gate turned Degraded at {} (Kustomization podinfo: Ready=False)", time(now, -600).as_str().unwrap_or_default())},
                        {"at": time(now, -300), "reason": "the Gate turned Progressing"},
                    ],
                },
            ],
        }),
    )
    .await;
    unclear(&server, &release(8), "production", None).await;
    // 1.10.0 crossed staging, and its verification said no.
    let no = "prometheus verification said no: error rate 0.2 > 0.01";
    write_verification(
        &server,
        "staging-1-10-0",
        json!({
            "phase": "Failed", "startedAt": time(now, -600), "finishedAt": time(now, -500),
            "message": no,
            "verifiers": [{
                "uses": "prometheus", "phase": "Failed", "failures": 2, "inconclusive": 1,
                "lastValue": "0.2", "lastLookAt": time(now, -500), "message": "error rate 0.2 > 0.01",
            }],
        }),
    )
    .await;
    unclear(
        &server,
        &release(10),
        "staging",
        Some((no, time(now, -500))),
    )
    .await;
    // 1.9.0 crossed staging and was verified there.
    write_verification(
        &server,
        "staging-1-9-0",
        json!({
            "phase": "Verified", "startedAt": time(now, -5000), "finishedAt": time(now, -4900),
            "message": "every verification passed",
            "verifiers": [{"uses": "prometheus", "phase": "Verified", "passes": 3, "lastValue": "0.001", "lastLookAt": time(now, -4900)}],
        }),
    )
    .await;

    let browser = Browser::start(&server.base).await;
    browser
        .open(&at(&server, "/passages/?name=production-1-8-0"))
        .await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "production-1-8-0").await;
    let lead = browser
        .until_text("[data-field=verification]", "Verifying")
        .await;
    assert!(
        lead.contains("prometheus: 2 passes in a row, last 0.002"),
        "{lead}"
    );
    let counts = [
        field(&browser, "prometheus", "passes").await,
        field(&browser, "prometheus", "failures").await,
        field(&browser, "prometheus", "inconclusive").await,
        field(&browser, "prometheus", "value").await,
        field(&browser, "prometheus", "message").await,
    ];
    assert_eq!(
        counts,
        ["2", "0", "0", "0.002", "error rate 0.002 < 0.01"].map(String::from)
    );
    // Each verifier's phase, in words.
    let phases = browser
        .js(
            "return [...document.querySelectorAll('tr[data-verifier]')].map(r => [r.dataset.verifier, r.querySelector('[data-phase]').dataset.phase]);",
            vec![],
        )
        .await;
    assert_eq!(
        phases,
        json!([["prometheus", "Verifying"], ["soak", "Verifying"]])
    );
    // The soak's countdown is its next look (its end), and each time it started
    // again is listed, newest first, with why (DECISION 169).
    let soak_end = browser
        .js(
            "return document.querySelector('tr[data-verifier=soak] [data-field=next] time').textContent;",
            vec![],
        )
        .await;
    assert!(soak_end.as_str().unwrap().starts_with("in "), "{soak_end}");
    let restarts = browser
        .js(
            "const box = document.querySelector('[data-restarts=soak]'); return [box.querySelector('h3').textContent, [...box.querySelectorAll('li')].map(li => [li.dataset.restart, li.textContent])];",
            vec![],
        )
        .await;
    assert_eq!(restarts[0], "soak: started again 2 times");
    assert_eq!(restarts[1][0][0], time(now, -300));
    assert!(
        restarts[1][0][1]
            .as_str()
            .unwrap()
            .ends_with("the Gate turned Progressing"),
        "{restarts}"
    );
    assert!(
        restarts[1][1][1]
            .as_str()
            .unwrap()
            .contains("Kustomization podinfo: Ready=False"),
        "{restarts}"
    );
    // The server's UTC instant, said in the viewer's zone (#53): a <time> keeps it.
    let said = browser
        .js(
            "const t = document.querySelectorAll('[data-restarts=soak] li')[1].querySelector('span time'); return [t.getAttribute('datetime'), t.textContent];",
            vec![],
        )
        .await;
    assert_eq!(said[0], time(now, -600));
    assert!(!said[1].as_str().unwrap().contains('Z'), "{said}");
    // Last and next look: how long ago (how soon), and the local time with its zone,
    // as the steps show theirs; a verifier that has not looked says so.
    let looks = browser
        .js(
            "return ['last', 'next'].map(f => { const el = document.querySelector(`tr[data-verifier=prometheus] [data-field=${f}]`); const t = el.querySelector('time'); return [t.getAttribute('datetime'), t.textContent, el.textContent]; });",
            vec![],
        )
        .await;
    assert_eq!(looks[0][0], time(now, -30));
    assert_eq!(looks[1][0], time(now, 600));
    assert!(looks[0][1].as_str().unwrap().contains("ago"), "{looks}");
    assert!(looks[1][1].as_str().unwrap().starts_with("in "), "{looks}");
    for look in looks.as_array().unwrap() {
        let text = look[2].as_str().unwrap();
        let zone = text.rsplit(' ').next().unwrap();
        assert!(
            text.contains(" · ") && zone.chars().any(|c| c.is_ascii_uppercase()),
            "the local time with its zone: {text}"
        );
    }
    assert_eq!(field(&browser, "soak", "last").await, "not yet");
    let axe = crate::ui_axe::check(&browser, "a Passage being verified").await;
    browser.screenshot("passage-verification", 1280).await;
    crate::ui_axe::fits_a_phone(&browser, "a Passage being verified").await;
    browser.screenshot("passage-verification-phone", 375).await;

    // A verification that said no: said so, with why, each count shown.
    browser
        .open(&at(&server, "/passages/?name=staging-1-10-0"))
        .await;
    drawn(&browser, "staging-1-10-0").await;
    let lead = browser
        .until_text("[data-field=verification]", "Failed")
        .await;
    assert!(lead.contains(no), "{lead}");
    assert_eq!(
        [
            field(&browser, "prometheus", "failures").await,
            field(&browser, "prometheus", "inconclusive").await,
            field(&browser, "prometheus", "next").await,
        ],
        ["2", "1", "no more looks"].map(String::from)
    );
    browser
        .screenshot("passage-verification-failed", 1280)
        .await;
    // A crossing with nothing recorded (it failed): no section.
    browser
        .open(&at(&server, "/passages/?name=production-1-7-0"))
        .await;
    drawn(&browser, "production-1-7-0").await;
    browser.until_text("main", "Steps").await;
    assert_eq!(
        browser
            .js(
                "return document.querySelector('[data-field=verification]') === null;",
                vec![]
            )
            .await,
        json!(true)
    );

    // The Overview's timeline: verified, being verified, not verified — the dot and the
    // link's words; the time and the verifier's words on hover.
    browser.open(&at(&server, "/")).await;
    drawn(&browser, "Overview").await;
    let section = format!("section[data-namespace='{ns}']");
    let dot = |bundle: String, gate: &str| {
        format!("{section} li.track[data-bundle='{bundle}'] li.stop[data-gate={gate}]")
    };
    browser
        .until(
            "the timeline's verification marks",
            &format!(
                "!!document.querySelector(\"{}[data-verification]\")",
                dot(release(8), "production")
            ),
        )
        .await;
    let marks = browser
        .js(
            "return [...arguments].map(css => { const s = document.querySelector(css); return [s.dataset.outcome, s.dataset.verification || null, s.querySelector('a').textContent, s.querySelector('a').title]; });",
            vec![
                json!(dot(release(8), "production")),
                json!(dot(release(10), "staging")),
                json!(dot(release(9), "staging")),
                json!(dot(release(9), "dev")),
            ],
        )
        .await;
    let marks: Vec<(String, Option<String>, String, String)> =
        serde_json::from_value(marks).unwrap();
    let verification = |i: usize| (marks[i].0.as_str(), marks[i].1.as_deref());
    assert_eq!(verification(0), ("crossed", Some("Verifying")));
    assert_eq!(marks[0].2, "production being verified, running here now");
    assert!(
        marks[0]
            .3
            .contains("prometheus: 2 passes in a row, last 0.002"),
        "{marks:?}"
    );
    assert_eq!(verification(1), ("crossed", Some("Failed")));
    assert!(
        marks[1].2.starts_with("staging not verified ")
            && marks[1].2.ends_with(", running here now"),
        "{marks:?}"
    );
    assert!(marks[1].3.contains(no), "{marks:?}");
    assert_eq!(verification(2), ("crossed", Some("Verified")));
    assert!(marks[2].2.starts_with("staging verified "), "{marks:?}");
    // dev verifies nothing: cleared, as ever.
    assert_eq!(verification(3), ("crossed", None));
    assert!(marks[3].2.starts_with("dev cleared "), "{marks:?}");
    let axe_overview =
        crate::ui_axe::check(&browser, "the Overview's timeline with verification").await;
    browser.screenshot("timeline-verification", 1280).await;

    // The Bundle's page: where it stands, from the same answer, and its record of the
    // "no" in its own timeline.
    browser
        .open(&at(&server, &format!("/bundles/?name={}", release(10))))
        .await;
    browser
        .until_text("main li.stop[data-gate=staging]", "not verified")
        .await;
    let row = browser
        .until_text("main tr[data-what='not verified']", "staging")
        .await;
    assert!(row.contains(no), "{row}");
    let axe_bundle = crate::ui_axe::check(&browser, "a Bundle not verified in staging").await;
    browser.screenshot("bundle-verification", 1280).await;
    assert_eq!([axe, axe_overview, axe_bundle], [[0, 0]; 3]);
    browser.close().await;
}

/// A Gate that verifies nothing (no `spec.verify`) has no verified state to show
/// (issue 34, item 9): its history has no Verified column, and the audit trail's rows
/// for it say nothing there — never "not verified" on every row.
#[tokio::test]
async fn a_gate_that_verifies_nothing_shows_no_verified_state() {
    let server = Server::start().await;
    demo_as_deployed(&server).await;
    let browser = Browser::start(&server.base).await;
    browser.open(&at(&server, "/gates/?name=production")).await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "production").await;
    browser.until_text("main", "History").await;
    let history = browser
        .js(
            "const t = [...document.querySelectorAll('main table')].find(t => t.caption.textContent.startsWith('Bundles that entered')); \
             return [[...t.querySelectorAll('thead th')].map(th => th.textContent), t.querySelectorAll('tbody tr').length, t.querySelectorAll('[data-verified]').length];",
            vec![],
        )
        .await;
    assert_eq!(
        history,
        json!([
            ["Bundle", "Entered", "By", "Passage", "Action"],
            history[1],
            0
        ]),
        "{history}"
    );
    assert!(history[1].as_u64().unwrap() > 0, "production has a history");

    browser.open(&at(&server, "/audit/")).await;
    drawn(&browser, "Audit").await;
    let audit = browser
        .js(
            "return [...document.querySelectorAll('main tr.entry')].map(r => r.querySelector('td[data-label=Verified]').textContent);",
            vec![],
        )
        .await;
    let cells = audit.as_array().unwrap();
    assert!(!cells.is_empty());
    assert!(
        cells.iter().all(|c| c == "—nothing to verify"),
        "no Gate of the demo verifies: {audit}"
    );
    browser.close().await;
}
