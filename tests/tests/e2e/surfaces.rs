//! One Gate asked about through every surface — `hecate explain -o json`, hecate-api's
//! `GET …/explain` and hecate-mcp's `why_stuck` — each as its own process, as alice:
//! the blockers and waiting Bundles, with their typed fixes (`action`), are the same
//! values, because every surface serialises ops' answer and adds nothing of its own.

use std::process::Stdio;
use std::time::{Duration, Instant};

use hecate_testenv::fixtures::*;
use hecate_testenv::{Identity, TestEnv, rbac};
use hecate_types::PassagePhase;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::Command;

use crate::fleet::{binary, hecate};

/// What a surface says can be done: the blockers and the waiting Bundles, whole —
/// kind, words, the `fix` string and the typed `action`.
fn fixes(explanation: &Value) -> (Value, Value) {
    (
        explanation["blockers"].clone(),
        explanation["waiting"].clone(),
    )
}

/// The `type` of every `action` in `fixes`, in order.
fn action_types((blockers, waiting): &(Value, Value)) -> Vec<String> {
    [blockers, waiting]
        .into_iter()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|entry| entry["action"]["type"].as_str().map(str::to_string))
        .collect()
}

/// `why_stuck` on `gate` through `hecate-mcp` over stdio, as the kubeconfig's user.
async fn why_stuck(kubeconfig: &std::path::Path, namespace: &str, gate: &str) -> Value {
    let mut child = Command::new(binary("hecate-mcp"))
        .args(["--namespace", namespace])
        .env("KUBECONFIG", kubeconfig)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "hecate-e2e", "version": "0"},
        }}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "why_stuck",
            "arguments": {"gate": gate},
        }}),
    ];
    for message in messages {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    stdin.flush().await.unwrap();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
            .await
            .expect("hecate-mcp answers within 30 s")
            .unwrap()
            .expect("hecate-mcp answers before closing its stdout");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            let result = &message["result"];
            assert_ne!(result["isError"], true, "{line}");
            return result["structuredContent"].clone();
        }
    }
}

/// `GET …/gates/{gate}/explain` from `hecate-api` (its own process, as the
/// `hecate-api` identity), with `token` as the caller.
async fn api_explain(
    kubeconfig: &std::path::Path,
    namespace: &str,
    gate: &str,
    token: &str,
) -> Value {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _server = Command::new(binary("hecate-api"))
        .args([
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--context",
            "hecate-api",
        ])
        .env("KUBECONFIG", kubeconfig)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    // Ready once its cache has listed; the answer comes from the cache.
    while !http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        assert!(
            Instant::now() < deadline,
            "hecate-api not ready within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let response = http
        .get(format!(
            "{base}/api/v1alpha1/namespaces/{namespace}/gates/{gate}/explain"
        ))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

#[tokio::test]
async fn every_surface_offers_the_same_typed_fixes() {
    let env = TestEnv::new().await;
    let ns = env.namespace.clone();
    rbac::grant_deployed_roles(&env).await;
    // staging needs an approval and comes after dev; its last crossing failed. b1 has
    // cleared dev (it waits for an approval), b2 has not (it waits on dev).
    gate(&env, "dev", gate_spec(&[], false)).await;
    gate(&env, "staging", gate_spec(&["dev"], true)).await;
    let bundles = bundles_in_order(&env, &["b1", "b2"]).await;
    bundle_status(&env, bundles[0].clone(), &["dev"], &[]).await;
    passage(&env, "staging-1", "staging", "b1", PassagePhase::Failed).await;

    let dir = tempfile::tempdir().unwrap();
    env.endpoint().write_kubeconfigs(dir.path()).unwrap();
    let alice = dir.path().join("kubeconfig-alice");

    let (code, cli) = hecate(
        dir.path(),
        Identity::Alice,
        &["explain", "staging", "-n", &ns, "-o", "json"],
    )
    .await;
    assert_eq!(code, 0, "{cli}");
    let cli: Value = serde_json::from_str(&cli).unwrap();
    let token = env.endpoint().tokens[&Identity::Alice].clone();
    let api = api_explain(&dir.path().join("kubeconfig"), &ns, "staging", &token).await;
    let mcp = why_stuck(&alice, &ns, "staging").await;

    let from_cli = fixes(&cli);
    let types = action_types(&from_cli);
    for expected in ["inspectPassage", "approve", "promoteUpstream"] {
        assert!(types.iter().any(|t| t == expected), "{expected}: {cli:#}");
    }
    let waiting: Vec<&Value> = from_cli
        .1
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| &w["action"])
        .collect();
    assert!(
        waiting.contains(&&json!({"type": "approve", "gate": "staging", "bundle": "b1"})),
        "{cli:#}"
    );
    assert!(
        waiting.contains(&&json!({"type": "promoteUpstream", "gate": "dev", "bundle": "b2"})),
        "{cli:#}"
    );
    assert_eq!(fixes(&api), from_cli, "the API's explanation: {api:#}");
    assert_eq!(fixes(&mcp), from_cli, "MCP's why_stuck: {mcp:#}");
}
