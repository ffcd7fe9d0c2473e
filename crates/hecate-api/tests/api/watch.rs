//! The event stream: it opens, reports a change within two seconds, needs read access,
//! and leaves nothing behind when the client goes away.

use std::time::Duration;

use futures::StreamExt as _;
use hecate_testenv::Identity::*;
use hecate_types::{Gate, GateStatus, Health, HealthReport};
use pretty_assertions::assert_eq;

use crate::harness::*;

/// Reads the stream until `needle` shows up, or fails after `within`.
async fn read_until(
    stream: &mut (impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    seen: &mut String,
    needle: &str,
    within: Duration,
) {
    let deadline = tokio::time::Instant::now() + within;
    while !seen.contains(needle) {
        let chunk = tokio::time::timeout_at(deadline, stream.next())
            .await
            .unwrap_or_else(|_| panic!("no {needle:?} within {within:?}: {seen}"));
        seen.push_str(&String::from_utf8_lossy(&chunk.unwrap().unwrap()));
    }
}

#[tokio::test]
async fn a_status_change_arrives_within_two_seconds() {
    let server = Server::start().await;
    server.pipeline().await;
    let response = server
        .http
        .get(format!(
            "{}/api/v1alpha1/namespaces/{}/watch",
            server.base,
            server.ns()
        ))
        .bearer_auth(server.token(Alice))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-store");
    let mut stream = response.bytes_stream();
    let mut seen = String::new();
    read_until(
        &mut stream,
        &mut seen,
        "event: open",
        Duration::from_secs(3),
    )
    .await;
    assert!(seen.contains(server.ns()));
    assert_eq!(server.state.metrics().open_watch_streams(), 1);

    // The watch needs a moment to be established; then a status write is reported.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut gate: Gate = server.env.api().get("staging").await.unwrap();
    gate.status = Some(GateStatus {
        health: Some(HealthReport {
            status: Health::Degraded,
            issues: vec![],
            details: None,
            observed_at: None,
            since: None,
        }),
        ..GateStatus::default()
    });
    server.env.write_status(&gate).await;
    read_until(
        &mut stream,
        &mut seen,
        "event: changed",
        Duration::from_secs(2),
    )
    .await;
    assert!(
        seen.contains(r#""kind":"Gate""#) && seen.contains(r#""name":"staging""#),
        "{seen}"
    );

    drop(stream);
    for _ in 0..50 {
        if server.state.metrics().open_watch_streams() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the stream's watches outlived the client");
}

#[tokio::test]
async fn the_stream_needs_read_access() {
    let server = Server::start().await;
    assert_eq!(
        server
            .get("/api/v1alpha1/namespaces/{ns}/watch", None)
            .await
            .status,
        401
    );
    assert_eq!(
        server
            .get("/api/v1alpha1/namespaces/{ns}/watch", Some(CiBot))
            .await
            .status,
        403
    );
}

/// API #82: after `open`, a stream over a namespace where nothing changes says nothing
/// — not the objects that already exist, not a periodic "changed" — for three of the
/// reference's ticks (9 s), and then only the `: ping` keep-alive (every 20 s). It is
/// still listening: the next change is reported at once.
#[tokio::test]
async fn api82_the_stream_is_silent_while_nothing_changes() {
    let server = Server::start().await;
    server.pipeline().await;
    hecate_testenv::fixtures::passage(
        &server.env,
        "staging-1",
        "staging",
        "b1",
        hecate_types::PassagePhase::Succeeded,
    )
    .await;
    let response = server
        .http
        .get(format!(
            "{}/api/v1alpha1/namespaces/{}/watch",
            server.base,
            server.ns()
        ))
        .bearer_auth(server.token(Alice))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut seen = String::new();
    read_until(
        &mut stream,
        &mut seen,
        "event: open",
        Duration::from_secs(3),
    )
    .await;
    // The whole `open` frame, up to its blank line.
    read_until(&mut stream, &mut seen, "\n\n", Duration::from_secs(1)).await;
    let opened_at = tokio::time::Instant::now();
    let opened = seen.clone();

    let quiet = tokio::time::timeout(Duration::from_secs(9), stream.next()).await;
    assert!(
        quiet.is_err(),
        "a frame while nothing changed: {:?}",
        quiet.map(|chunk| chunk.map(|c| String::from_utf8_lossy(&c.unwrap()).into_owned()))
    );
    // Still nothing but the keep-alive: one `: ping` comment 20 s after `open`, and
    // no event.
    read_until(
        &mut stream,
        &mut seen,
        ": ping\n\n",
        Duration::from_secs(23).saturating_sub(opened_at.elapsed()),
    )
    .await;
    assert_eq!(
        &seen[opened.len()..],
        ": ping\n\n",
        "only the keep-alive while nothing changed"
    );
    assert!(
        opened_at.elapsed() >= Duration::from_secs(19),
        "the keep-alive comes every 20 s: {:?}",
        opened_at.elapsed()
    );
    let opened = seen.clone();

    let mut gate: Gate = server.env.api().get("staging").await.unwrap();
    gate.status = Some(GateStatus {
        health: Some(HealthReport {
            status: Health::Degraded,
            issues: vec![],
            details: None,
            observed_at: None,
            since: None,
        }),
        ..GateStatus::default()
    });
    server.env.write_status(&gate).await;
    read_until(
        &mut stream,
        &mut seen,
        "event: changed",
        Duration::from_secs(2),
    )
    .await;
    assert!(
        seen[opened.len()..].starts_with("event: changed\n"),
        "the first frame after open is the change: {seen}"
    );
}
