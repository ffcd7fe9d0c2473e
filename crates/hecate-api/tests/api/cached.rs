//! The server as it runs: reads from its watch-backed cache. Ready once the cache has
//! listed; answers as the direct path does; writes show up a watch's latency later.

use std::time::Duration;

use hecate_testenv::Identity::*;
use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::harness::*;

/// Retries `get` until `done` holds, for up to ten seconds.
async fn eventually(server: &Server, path: &str, done: impl Fn(&Answer) -> bool) -> Answer {
    for _ in 0..200 {
        let answer = server.get(path, Some(Alice)).await;
        if done(&answer) {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path}: never as expected within 10 s");
}

#[tokio::test]
async fn a_cached_server_is_ready_once_listed_and_follows_writes() {
    let server = Server::start_cached().await;
    let ready = eventually(&server, "/readyz", |a| a.status == 200).await;
    assert_eq!(ready.json()["status"], "ok");

    server.pipeline().await;
    let ns = format!("/api/v1alpha1/namespaces/{}", server.ns());
    let explained = eventually(&server, &format!("{ns}/gates/staging/explain"), |a| {
        a.status == 200 && a.json()["eligible"] == serde_json::json!(["b1"])
    })
    .await;
    let direct = hecate_ops::Ops::new(server.env.admin.clone())
        .explain(server.ns(), "staging")
        .await
        .unwrap();
    assert_eq!(explained.json(), serde_json::to_value(direct).unwrap());

    let promoted = server
        .post(
            &format!("{ns}/gates/staging/promote"),
            Some(Bob),
            Some(r#"{"bundle":"b1"}"#),
        )
        .await;
    assert_eq!(promoted.status, 200, "{}", promoted.body);
    let passage = promoted.json()["metadata"]["name"].clone();
    let passages = eventually(&server, &format!("{ns}/passages"), |a| {
        a.json().as_array().is_some_and(|list| list.len() == 1)
    })
    .await;
    assert_eq!(passages.json()[0]["metadata"]["name"], passage);

    // A second promotion judges the API server's objects, not the cache's: refused
    // as already crossing however fresh the cache is.
    let again = server
        .post(
            &format!("{ns}/gates/staging/promote"),
            Some(Bob),
            Some(r#"{"bundle":"b1"}"#),
        )
        .await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(again.json()["code"], Value::from("AlreadyCrossing"));
}
