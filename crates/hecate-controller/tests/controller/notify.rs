//! Telling people (issue 54, DECISION 166): Gates offer what they have to tell, the
//! notifier sends it to wiremock standing in for Slack, GitHub and a webhook receiver,
//! and a Notifier's status is the record a restart reads back — against a real API
//! server, as the controller's own identity.

use std::collections::BTreeMap;
use std::sync::Arc;

use hecate_controller::metrics::Metrics;
use hecate_controller::notify::send::{DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER};
use hecate_controller::notify::{Links, Notifiers};
use hecate_steps::clock::Clock as _;
use hecate_steps::reach::Reach;
use hecate_types::{
    LocalSecretRef, NoticeKind, NoticeOutcome, Notifier, NotifierSpec, NotifierType, Passage,
    PassagePhase, PassageStatus, Time, wellknown,
};
use jiff::SignedDuration;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ListParams, ObjectMeta};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::harness::*;

/// The notifier over `h`'s namespace as the controller's identity, sending at most
/// `per_minute` a minute per Notifier, reading `h`'s clock.
async fn notifiers(h: &Harness, per_minute: usize) -> Notifiers {
    let client = crate::harness::controller_client(h).await;
    Notifiers::new(
        client,
        h.reconciler.outbox.clone(),
        // wiremock listens on this host.
        Reach {
            local: true,
            own: Vec::new(),
        },
        Links {
            ui: "https://hecate.example.com".into(),
        },
        "hecate-system".into(),
        per_minute,
        Arc::new(h.clock.clone()),
        Arc::new(Metrics::new()),
    )
}

/// One round over the Notifiers of `h`'s namespace.
async fn round(h: &Harness, n: &Notifiers) {
    let all = h
        .env
        .api::<Notifier>()
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(Arc::new)
        .collect();
    n.round(all).await;
}

/// dev, an automatic Gate, crosses b1: a round of the Notifiers before, when the
/// crossing starts and when it ends.
async fn dev_crosses_b1_told_at_each_turn(h: &Harness) -> Passage {
    auto_gate(h, "dev", &[]).await;
    bundle(&h.env, "b1").await;
    let n = notifiers(h, 30).await;
    round(h, &n).await;
    h.clock.advance(SignedDuration::from_secs(5));
    let passage = crossing_started(h).await;
    h.reconcile("dev").await;
    round(h, &n).await;
    h.clock.advance(SignedDuration::from_secs(30));
    crossing_succeeded(h, &passage).await;
    h.reconcile("dev").await;
    round(h, &n).await;
    passage
}

/// A Secret the Notifier may use (labelled so), holding `data`.
async fn secret(h: &Harness, name: &str, data: &[(&str, &str)]) {
    let data: BTreeMap<String, ByteString> = data
        .iter()
        .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
        .collect();
    h.env
        .create(Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some([(wellknown::LABEL_USABLE.to_string(), "true".to_string())].into()),
                ..ObjectMeta::default()
            },
            data: Some(data),
            ..Secret::default()
        })
        .await;
}

async fn notifier(h: &Harness, name: &str, spec: NotifierSpec) -> Notifier {
    h.env.create(Notifier::new(name, spec)).await
}

async fn stored(h: &Harness, name: &str) -> Notifier {
    h.env.api::<Notifier>().get(name).await.unwrap()
}

/// A webhook signed with `key`, at `server`'s `/hook`.
async fn signed_webhook(h: &Harness, server: &MockServer, key: &str) {
    secret(
        h,
        "hook",
        &[
            ("address", &format!("{}/hook", server.uri())),
            ("token", key),
        ],
    )
    .await;
    notifier(
        h,
        "releases",
        NotifierSpec {
            type_: NotifierType::GenericHmac,
            secret_ref: Some(LocalSecretRef {
                name: "hook".into(),
            }),
            ..NotifierSpec::default()
        },
    )
    .await;
}

/// A manual Gate `production` whose Bundles need an approval, and one Bundle.
async fn waiting_for_approval(h: &Harness) {
    create_gate(h, "production", gate_spec(false, &[], true)).await;
    bundle(&h.env, "b1").await;
}

fn body(request: &Request) -> Value {
    serde_json::from_slice(&request.body).unwrap()
}

fn header<'a>(request: &'a Request, name: &str) -> &'a str {
    request
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[tokio::test]
async fn an_approval_wanted_reaches_a_signed_webhook_once_and_is_recorded() {
    let h = Harness::new().await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/hook"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    signed_webhook(&h, &server, "s3cret").await;
    waiting_for_approval(&h).await;
    let n = notifiers(&h, 30).await;

    round(&h, &n).await; // learns who listens
    // The Notifier as a watch that lags would still hold it: before it sent anything.
    let lagging = Arc::new(stored(&h, "releases").await);
    h.reconcile("production").await; // offers what it has to tell
    round(&h, &n).await; // sends it
    round(&h, &n).await; // nothing more
    // A round on the lagging copy goes by what this process wrote, not by the copy.
    n.round(vec![lagging]).await;

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "sent once");
    let request = &requests[0];
    // The receiver checks the signature over the body it got, with the key it shares.
    let signature = header(request, SIGNATURE_HEADER)
        .strip_prefix("sha256=")
        .unwrap();
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, b"s3cret");
    ring::hmac::verify(&key, &request.body, &hex::decode(signature).unwrap())
        .expect("the signature verifies");
    assert_eq!(header(request, EVENT_HEADER), "ApprovalWanted");
    let key = format!("{}/production/b1/ApprovalWanted", h.env.namespace);
    assert_eq!(header(request, DELIVERY_HEADER), key);
    let notice = body(request);
    assert_eq!(notice["kind"], "ApprovalWanted");
    assert_eq!(notice["gate"], "production");
    assert!(
        notice["command"].as_str().unwrap().contains(&format!(
            "hecate approve b1 --gate production -n {}",
            h.env.namespace
        )),
        "{notice}"
    );
    assert_eq!(
        notice["link"],
        format!(
            "https://hecate.example.com/gates/?namespace={}&name=production",
            h.env.namespace
        )
    );

    let status = stored(&h, "releases").await.status.unwrap();
    assert_eq!(status.deliveries.len(), 1);
    let record = &status.deliveries[0];
    assert_eq!(
        (record.key.as_str(), record.outcome, record.attempts),
        (key.as_str(), NoticeOutcome::Sent, 1)
    );
    let ready = &status.conditions[0];
    assert_eq!(
        (ready.reason.as_str(), ready.status),
        ("Delivered", hecate_types::ConditionStatus::True)
    );
    // The Secret's values are in no status.
    let written = serde_json::to_string(&status).unwrap();
    assert!(
        !written.contains("s3cret") && !written.contains(&server.uri()),
        "{written}"
    );
}

#[tokio::test]
async fn a_destination_answering_500_then_200_gets_one_delivery_under_one_key() {
    let h = Harness::new().await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("try later"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    signed_webhook(&h, &server, "k").await;
    waiting_for_approval(&h).await;
    let n = notifiers(&h, 30).await;
    round(&h, &n).await;
    h.reconcile("production").await;
    round(&h, &n).await;

    let failing = stored(&h, "releases").await.status.unwrap();
    let record = &failing.deliveries[0];
    assert_eq!(record.outcome, NoticeOutcome::Retrying);
    assert_eq!(record.error, "HTTP 500 Internal Server Error: try later");
    let ready = &failing.conditions[0];
    assert_eq!(ready.reason, "DeliveryFailed");
    assert!(ready.message.contains("try later"), "{}", ready.message);

    // Not before its wait; then once.
    round(&h, &n).await;
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    h.clock.advance(SignedDuration::from_secs(11));
    round(&h, &n).await;
    round(&h, &n).await;
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        header(&requests[0], DELIVERY_HEADER),
        header(&requests[1], DELIVERY_HEADER)
    );
    let sent = stored(&h, "releases").await.status.unwrap();
    assert_eq!(
        (sent.deliveries[0].outcome, sent.deliveries[0].attempts),
        (NoticeOutcome::Sent, 2)
    );
}

#[tokio::test]
async fn a_restarted_controller_neither_loses_nor_repeats_a_notice() {
    let h = Harness::new().await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    signed_webhook(&h, &server, "k").await;
    waiting_for_approval(&h).await;
    let first = notifiers(&h, 30).await;
    round(&h, &first).await;
    h.reconcile("production").await;
    round(&h, &first).await;
    assert_eq!(server.received_requests().await.unwrap().len(), 1);

    // A new process: nothing in memory, its Gates looked at again.
    let restarted = h.sibling(Default::default(), Default::default());
    let second = notifiers(&restarted, 30).await;
    round(&restarted, &second).await;
    restarted.reconcile("production").await;
    round(&restarted, &second).await;
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        1,
        "the record says it was sent"
    );

    // Killed after sending and before recording it: the next process sends it again,
    // under the same key, for the receiver to see it has it.
    let mut forgotten = stored(&h, "releases").await;
    forgotten.status.as_mut().unwrap().deliveries.clear();
    h.env
        .api::<Notifier>()
        .replace_status("releases", &Default::default(), &forgotten)
        .await
        .unwrap();
    let third = h.sibling(Default::default(), Default::default());
    let n = notifiers(&third, 30).await;
    round(&third, &n).await;
    third.reconcile("production").await;
    round(&third, &n).await;
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        header(&requests[0], DELIVERY_HEADER),
        header(&requests[1], DELIVERY_HEADER)
    );
}

#[tokio::test]
async fn a_reminder_re_announces_an_approval_still_waiting() {
    let h = Harness::new().await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    signed_webhook(&h, &server, "k").await;
    let mut reminding = stored(&h, "releases").await;
    reminding.spec.reminder = "2h".into();
    h.env
        .api::<Notifier>()
        .replace("releases", &Default::default(), &reminding)
        .await
        .unwrap();
    waiting_for_approval(&h).await;
    let n = notifiers(&h, 30).await;
    round(&h, &n).await;
    h.reconcile("production").await;
    round(&h, &n).await;
    h.clock.advance(SignedDuration::from_hours(2));
    h.reconcile("production").await;
    round(&h, &n).await;
    let keys: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| header(r, DELIVERY_HEADER).to_string())
        .collect();
    let key = format!("{}/production/b1/ApprovalWanted", h.env.namespace);
    assert_eq!(keys, [key.clone(), format!("{key}#2")]);
}

#[tokio::test]
async fn a_notifier_sends_no_more_than_its_rate_and_the_rest_later() {
    let h = Harness::new().await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    signed_webhook(&h, &server, "k").await;
    for gate in ["eu", "us", "ap"] {
        create_gate(&h, gate, gate_spec(false, &[], true)).await;
    }
    bundle(&h.env, "b1").await;
    let n = notifiers(&h, 2).await;
    round(&h, &n).await;
    for gate in ["eu", "us", "ap"] {
        h.reconcile(gate).await;
    }
    round(&h, &n).await;
    round(&h, &n).await;
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
    // The third is not recorded as anything: it is sent when the minute allows.
    assert_eq!(
        stored(&h, "releases")
            .await
            .status
            .unwrap()
            .deliveries
            .len(),
        2
    );
}

#[tokio::test]
async fn a_namespace_never_hears_another_namespaces_notices() {
    let ours = Harness::new().await;
    let theirs = Harness::new().await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    // Their Notifier asks for every namespace; it is not in the controller's own.
    secret(
        &theirs,
        "hook",
        &[("address", &format!("{}/hook", server.uri()))],
    )
    .await;
    notifier(
        &theirs,
        "everything",
        NotifierSpec {
            type_: NotifierType::Generic,
            secret_ref: Some(LocalSecretRef {
                name: "hook".into(),
            }),
            all_namespaces: true,
            ..NotifierSpec::default()
        },
    )
    .await;
    waiting_for_approval(&ours).await;
    // One notifier for the cluster: the same outbox, both namespaces' Notifiers.
    let n = notifiers(&ours, 30).await;
    let all = || async {
        let mut all = Vec::new();
        for h in [&ours, &theirs] {
            all.extend(
                h.env
                    .api::<Notifier>()
                    .list(&ListParams::default())
                    .await
                    .unwrap()
                    .items
                    .into_iter()
                    .map(Arc::new),
            );
        }
        all
    };
    n.round(all().await).await;
    ours.reconcile("production").await;
    n.round(all().await).await;
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
    let status = stored(&theirs, "everything").await.status.unwrap();
    assert_eq!(status.conditions[0].reason, "InvalidSpec");
    assert!(status.deliveries.is_empty());
}

/// A crossing of `b1` through auto Gate `dev`, started now by the Gate itself.
async fn crossing_started(h: &Harness) -> Passage {
    h.reconcile("dev").await;
    let mut passage = h.the_passage().await;
    passage.status = Some(PassageStatus {
        phase: Some(PassagePhase::Running),
        started_at: Some(Time(h.clock.now())),
        ..PassageStatus::default()
    });
    h.env.write_status(&passage).await
}

/// The same crossing, succeeded now.
async fn crossing_succeeded(h: &Harness, passage: &Passage) {
    let mut passage = h
        .env
        .api::<Passage>()
        .get(&passage.metadata.name.clone().unwrap())
        .await
        .unwrap();
    let status = passage.status.get_or_insert_with(Default::default);
    status.phase = Some(PassagePhase::Succeeded);
    status.finished_at = Some(Time(h.clock.now()));
    h.env.write_status(&passage).await;
}

#[tokio::test]
async fn a_slack_bot_posts_one_message_per_crossing_and_updates_it_in_place() {
    let h = Harness::new().await;
    let slack = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"ok": true, "channel": "C024BE91L", "ts": "1700000000.000100"}),
            ),
        )
        .mount(&slack)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat.update"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
        .mount(&slack)
        .await;
    secret(&h, "slack", &[("token", "xoxb-not-a-real-token")]).await;
    notifier(
        &h,
        "releases",
        NotifierSpec {
            type_: NotifierType::Slack,
            address: format!("{}/api", slack.uri()),
            channel: "#releases".into(),
            secret_ref: Some(LocalSecretRef {
                name: "slack".into(),
            }),
            ..NotifierSpec::default()
        },
    )
    .await;
    dev_crosses_b1_told_at_each_turn(&h).await;

    let calls: Vec<(String, Value)> = slack
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| (r.url.path().to_string(), body(r)))
        .collect();
    let paths: Vec<&str> = calls.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/api/chat.postMessage",
            "/api/chat.update",
            "/api/chat.postMessage"
        ]
    );
    assert_eq!(calls[0].1["channel"], "#releases");
    assert!(
        calls[0].1["text"]
            .as_str()
            .unwrap()
            .starts_with("Crossing started")
    );
    // The message is updated where it is, to say it crossed, and the news is in its
    // thread.
    assert_eq!(calls[1].1["ts"], "1700000000.000100");
    assert_eq!(calls[1].1["channel"], "C024BE91L");
    assert!(calls[1].1["text"].as_str().unwrap().starts_with("Crossed"));
    assert_eq!(calls[2].1["thread_ts"], "1700000000.000100");
    let requests = slack.received_requests().await.unwrap();
    assert_eq!(
        header(&requests[0], "authorization"),
        "Bearer xoxb-not-a-real-token"
    );
    let status = stored(&h, "releases").await.status.unwrap();
    assert_eq!(status.threads.len(), 1);
    assert_eq!(status.threads[0].id, "1700000000.000100");
    assert_eq!(
        status.deliveries.iter().map(|d| d.kind).collect::<Vec<_>>(),
        [NoticeKind::Crossed, NoticeKind::CrossingStarted]
    );
}

#[tokio::test]
async fn a_github_deployment_follows_a_crossing_with_its_statuses_in_order() {
    let h = Harness::new().await;
    let github = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/shop"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"default_branch": "main"})))
        .mount(&github)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/shop/deployments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 4242})))
        .mount(&github)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/shop/deployments/4242/statuses"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1})))
        .mount(&github)
        .await;
    secret(&h, "github", &[("token", "ghp_not_a_real_token")]).await;
    notifier(
        &h,
        "deployments",
        NotifierSpec {
            type_: NotifierType::GitHub,
            address: github.uri(),
            repository: "acme/shop".into(),
            secret_ref: Some(LocalSecretRef {
                name: "github".into(),
            }),
            ..NotifierSpec::default()
        },
    )
    .await;
    let passage = dev_crosses_b1_told_at_each_turn(&h).await;

    let requests = github.received_requests().await.unwrap();
    let calls: Vec<(String, String)> = requests
        .iter()
        .map(|r| (r.method.to_string(), r.url.path().to_string()))
        .collect();
    assert_eq!(
        calls,
        [
            ("GET".into(), "/repos/acme/shop".into()),
            ("POST".into(), "/repos/acme/shop/deployments".into()),
            (
                "POST".into(),
                "/repos/acme/shop/deployments/4242/statuses".into()
            ),
            (
                "POST".into(),
                "/repos/acme/shop/deployments/4242/statuses".into()
            ),
        ]
    );
    let deployment = body(&requests[1]);
    assert_eq!(deployment["environment"], "dev");
    assert_eq!(deployment["ref"], "main");
    assert_eq!(
        deployment["payload"]["passage"],
        passage.metadata.name.clone().unwrap()
    );
    let states: Vec<Value> = requests[2..]
        .iter()
        .map(|r| body(r)["state"].clone())
        .collect();
    assert_eq!(states, [json!("in_progress"), json!("success")]);
    assert_eq!(
        header(&requests[1], "authorization"),
        "Bearer ghp_not_a_real_token"
    );
}

#[tokio::test]
async fn a_destination_on_this_host_is_refused_without_the_operators_flag() {
    let h = Harness::new().await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    signed_webhook(&h, &server, "k").await;
    waiting_for_approval(&h).await;
    let mut n = notifiers(&h, 30).await;
    // The reach of `http` steps without --allow-local-http.
    n.reach = Reach::default();
    round(&h, &n).await;
    h.reconcile("production").await;
    round(&h, &n).await;
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
    let record = &stored(&h, "releases").await.status.unwrap().deliveries[0];
    assert_eq!(record.outcome, NoticeOutcome::Retrying);
    assert!(
        record.error.contains("--allow-local-http") && !record.error.contains(&server.uri()),
        "{}",
        record.error
    );
}
