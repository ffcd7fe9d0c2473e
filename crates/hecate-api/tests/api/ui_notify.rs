//! The Gate page says who is told about the Gate (issue 54, DECISION 166), in
//! Chromium against the real API server: the namespace's Notifiers that hear it,
//! whether each delivers and why not, and what they last sent about it; a Gate no
//! Notifier hears says nobody is told. axe-core finds nothing.

use hecate_testenv::Identity::*;
use hecate_testenv::fixtures::{gate, gate_spec};
use hecate_types::{
    Condition, ConditionStatus, NoticeKind, NoticeOutcome, NoticeRecord, Notifier, NotifierSpec,
    NotifierStatus, NotifierType, Severity,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use pretty_assertions::assert_eq;

use crate::harness::*;
use crate::ui_browser::*;
use crate::ui_rights::{at, drawn};

/// A Notifier of the test's namespace with `status` as the controller would write it.
async fn notifier(server: &Server, name: &str, spec: NotifierSpec, status: NotifierStatus) {
    let mut made = server.env.create(Notifier::new(name, spec)).await;
    made.status = Some(status);
    server.env.write_status(&made).await;
}

fn ready(ok: bool, reason: &str, message: &str) -> Condition {
    Condition {
        type_: "Ready".into(),
        status: if ok {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        },
        observed_generation: 1,
        last_transition_time: Time(jiff::Timestamp::now()),
        reason: reason.into(),
        message: message.into(),
    }
}

#[tokio::test]
async fn the_gate_page_says_who_is_told_and_what_was_sent() {
    let server = Server::start().await;
    gate(&server.env, "production", gate_spec(&[], false)).await;
    gate(&server.env, "dev", gate_spec(&[], false)).await;
    let ns = server.ns().to_string();
    let sent = NoticeRecord {
        key: format!("{ns}/production/b1/ApprovalWanted"),
        kind: NoticeKind::ApprovalWanted,
        namespace: ns.clone(),
        gate: "production".into(),
        passage: String::new(),
        summary: "production: 1.3.0: waits for 1 more approval; an approval from dave would count"
            .into(),
        at: Time(jiff::Timestamp::now()),
        outcome: NoticeOutcome::Sent,
        attempts: 1,
        last_attempt: Some(Time(jiff::Timestamp::now())),
        next_attempt: None,
        error: String::new(),
    };
    notifier(
        &server,
        "releases",
        NotifierSpec {
            type_: NotifierType::Slack,
            gates: vec!["production".into()],
            reminder: "4h".into(),
            ..NotifierSpec::default()
        },
        NotifierStatus {
            conditions: vec![ready(true, "Delivered", "the last notice was delivered")],
            deliveries: vec![sent],
            ..NotifierStatus::default()
        },
    )
    .await;
    notifier(
        &server,
        "pager",
        NotifierSpec {
            type_: NotifierType::Generic,
            gates: vec!["production".into()],
            event_severity: Severity::Error,
            ..NotifierSpec::default()
        },
        NotifierStatus {
            conditions: vec![ready(false, "DeliveryFailed", "the receiver answered 503")],
            ..NotifierStatus::default()
        },
    )
    .await;
    let browser = Browser::start(&server.base).await;

    browser.open(&at(&server, "/gates/?name=production")).await;
    browser.sign_in(&server.token(Alice)).await;
    drawn(&browser, "production").await;
    browser
        .until_text("tr[data-notifier=releases]", "delivers")
        .await;
    let rows = browser
        .js(
            "return [...document.querySelectorAll('tr[data-notifier]')].map(r => [...r.cells].map(c => c.textContent));",
            vec![],
        )
        .await;
    assert_eq!(
        rows,
        serde_json::json!([
            [
                "pager",
                "generic",
                "Gates production; every kind; errors only",
                "does not deliver the receiver answered 503"
            ],
            [
                "releases",
                "slack",
                "Gates production; every kind; reminds every 4h",
                "delivers"
            ],
        ])
    );
    let said = browser
        .until_text("tr[data-sent=ApprovalWanted]", "Sent")
        .await;
    assert!(
        said.contains("an approval from dave would count") && said.contains("releases"),
        "{said}"
    );
    assert_eq!(
        crate::ui_axe::check(&browser, "the Gate page's who is told").await,
        [0, 0]
    );
    browser.screenshot("gate-who-is-told", 1280).await;

    // dev: no Notifier hears it.
    browser.open(&at(&server, "/gates/?name=dev")).await;
    drawn(&browser, "dev").await;
    browser
        .until_text("#s-who-is-told + p.empty", "Nobody is told about dev")
        .await;
    browser.close().await;
}
