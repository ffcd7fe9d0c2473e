//! One Gate nested too deep for any reader stops only itself (issue 30, item 3): the
//! API server stores a step's `with` nested 200 maps deep, which no reader decodes;
//! before every list and watch read each object on its own, the controller's
//! cluster-wide Gate LIST failed on it, and no Gate of any namespace got a status.

use std::time::Duration;

use hecate_types::{Condition, Gate, Step, wellknown};
use k8s_openapi::api::events::v1::Event;
use kube::Resource as _;
use kube::api::{Api, ListParams, PostParams};
use serde::Deserialize;
use serde_json::json;

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

/// Sends `request`, and not decodes the answer (it would not decode).
async fn send(client: &kube::Client, request: http::Request<Vec<u8>>) -> String {
    client.request_text(request).await.unwrap()
}

/// A Gate's conditions, read without decoding the rest of it.
async fn conditions(client: &kube::Client, namespace: &str, name: &str) -> Vec<Condition> {
    #[derive(Deserialize)]
    struct Only {
        #[serde(default)]
        status: Option<Status>,
    }
    #[derive(Deserialize)]
    struct Status {
        #[serde(default)]
        conditions: Vec<Condition>,
    }
    let url = format!("{}/{name}", Gate::url_path(&(), Some(namespace)));
    let text = send(client, http::Request::get(url).body(Vec::new()).unwrap()).await;
    let only: Only = serde_json::from_str(&text).unwrap();
    only.status.map(|s| s.conditions).unwrap_or_default()
}

#[tokio::test]
async fn a_gate_too_deep_to_read_is_reported_on_itself_and_every_other_gate_moves_on() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    let client = h.env.admin.clone();

    // Stored before the controller starts, as after a restart.
    let mut deep = Gate::new("deep", gate_spec(false, &[], false));
    deep.spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "http".into(),
        ..Step::default()
    }];
    h.env.create_deep_gate(deep, 200).await;
    let whole = h
        .env
        .api::<Gate>()
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert!(whole.to_string().contains("recursion limit"), "{whole}");
    let mut dev = Gate::new("dev", gate_spec(false, &[], false));
    dev.spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "http".into(),
        with: Some(json!({"url": "http://127.0.0.1:9/hook"})),
        ..Step::default()
    }];
    dev.metadata.namespace = Some(ns.clone());
    h.env
        .api::<Gate>()
        .create(&PostParams::default(), &dev)
        .await
        .unwrap();

    let controller = Controller::start(&h.env, &ns, &[]).await;

    // Every other Gate gets its status.
    let ready = eventually(Duration::from_secs(20), "dev has a status", || async {
        let status = h.gate("dev").await.status?;
        status
            .conditions
            .into_iter()
            .find(|c| c.type_ == wellknown::condition::READY)
    })
    .await;
    assert_eq!(ready.reason, wellknown::gate_reason::IDLE, "{ready:?}");

    // The one too deep says so itself, and so does an Event on it.
    let unreadable = eventually(
        Duration::from_secs(20),
        "deep says it cannot be read",
        || async {
            conditions(&client, &ns, "deep")
                .await
                .into_iter()
                .find(|c| c.reason == wellknown::gate_reason::UNREADABLE)
        },
    )
    .await;
    assert_eq!(unreadable.type_, wellknown::condition::READY);
    assert!(
        unreadable.message.contains("recursion limit exceeded")
            && unreadable.message.contains("cannot be read"),
        "{}",
        unreadable.message
    );
    let event = eventually(Duration::from_secs(20), "an Event on deep", || async {
        Api::<Event>::namespaced(client.clone(), &ns)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .find(|e| {
                e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("deep")
                    && e.reason.as_deref() == Some("Unreadable")
            })
    })
    .await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));

    let status = controller.terminate().await;
    assert!(status.success(), "{status:?}");
    // Other tests share the cluster: leave nothing no reader can decode.
    h.env.delete_gate_unread("deep").await;
}
