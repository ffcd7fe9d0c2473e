//! The built `hecate-mcp` binary, run as an MCP client runs it: over stdio with a
//! kubeconfig, over HTTP until SIGTERM, and refusing to start on flags that would be
//! unsafe or contradictory.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use hecate_testenv::{Identity, TestEnv};
use pretty_assertions::assert_eq;
use rmcp::model::{ClientConfig, ProtocolVersion};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt as _};
use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};

use crate::harness::*;

const BINARY: &str = env!("CARGO_BIN_EXE_hecate-mcp");

/// The binary with no ambient cluster configuration.
fn command(args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(BINARY);
    command
        .args(args)
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("RUST_LOG")
        .kill_on_drop(true);
    command
}

/// Kubeconfigs for every identity of the test control plane.
fn kubeconfigs(env: &TestEnv) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    env.endpoint().write_kubeconfigs(dir.path()).unwrap();
    let alice = dir.path().join("kubeconfig-alice");
    (dir, alice)
}

/// What a run that must end by itself printed, and its exit code.
async fn run_to_end(args: &[&str]) -> (i32, String, String) {
    let output = tokio::time::timeout(
        Duration::from_secs(30),
        command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("hecate-mcp {args:?} did not stop by itself"))
    .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn over_stdio_end_to_end_in_both_eras() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    pipeline(&env).await;
    let (_dir, alice) = kubeconfigs(&env);
    let alice = alice.to_str().unwrap();
    for (protocol, mode) in [
        (
            ProtocolVersion::V_2025_11_25,
            ClientLifecycleMode::Initialize,
        ),
        (
            ProtocolVersion::V_2026_07_28,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    ] {
        let (transport, stderr) = TokioChildProcess::builder(command(&[
            "--kubeconfig",
            alice,
            "--namespace",
            &env.namespace,
        ]))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let mut config = ClientConfig::default();
        config.protocol_version = protocol.clone();
        let client = config.serve_with_lifecycle(transport, mode).await.unwrap();
        assert_eq!(tool_names(&client).await.len(), 9);
        let answer = result(&client, "why_stuck", json!({"gate": "production"})).await;
        assert_eq!(
            structured(&answer)["blockers"][1]["kind"],
            "AwaitingApproval"
        );
        let refused = call(
            &client,
            "approve",
            json!({"bundle": "b1", "gate": "production"}),
        )
        .await
        .unwrap_err();
        assert_eq!(error_code(&refused), -32602);
        // Closing stdin ends the server.
        client.cancel().await.unwrap();
        let mut said = String::new();
        stderr.unwrap().read_to_string(&mut said).await.unwrap();
        assert!(
            said.starts_with(&format!(
                "hecate-mcp {} serving {} over stdio (read-only)",
                env!("CARGO_PKG_VERSION"),
                env.namespace
            )),
            "{protocol}: {said}"
        );
    }
}

#[tokio::test]
async fn over_http_until_sigterm() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    pipeline(&env).await;
    let (dir, _) = kubeconfigs(&env);
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = command(&[
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "--context",
        "hecate-api",
        "--namespace",
        &env.namespace,
        "--listen",
        "127.0.0.1:0",
        "--auth",
        "kubernetes",
        "--allow-writes",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let banner = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        banner.contains("over http on 127.0.0.1:")
            && banner.contains(
                "(writes enabled as each authenticated caller; callers authenticated by Kubernetes)"
            ),
        "{banner}"
    );
    let address = banner
        .split("over http on ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap();
    let base = format!("http://{address}");
    let bob = http_client(&base, Era::Legacy, Some(&token(&env, Identity::Bob))).await;
    assert_eq!(tool_names(&bob).await.len(), 11);
    let promoted =
        structured(&result(&bob, "promote", json!({"gate": "staging", "bundle": "b2"})).await);
    assert_eq!(promoted["actor"], "bob");
    let nobody = post(
        &base,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        &[],
    )
    .await;
    assert_eq!(nobody.status, 401);

    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    // Kept alive until here: the run's kubeconfigs.
    drop(dir);
}

#[tokio::test]
async fn refuses_to_serve_the_world_without_being_told() {
    for listen in ["0.0.0.0:8085", ":8085", "10.0.0.1:8085"] {
        let (code, stdout, stderr) =
            run_to_end(&["--listen", listen, "--allow-writes", "--actor", "ada"]).await;
        assert_eq!(code, 1, "{listen}: {stderr}");
        assert!(stderr.starts_with("hecate-mcp: "), "{stderr}");
        assert!(stderr.contains("--insecure"), "{stderr}");
        assert_eq!(stdout, "");
    }
}

#[tokio::test]
async fn refuses_flags_that_cannot_be_served() {
    let cases: [(&[&str], &str); 5] = [
        (&["--listen", "8085"], "host:port"),
        (&["--allow-writes"], "--actor"),
        (&["--actor", "ada"], "--allow-writes"),
        (&["--auth", "kubernetes"], "--listen"),
        (
            &[
                "--listen",
                "127.0.0.1:0",
                "--allowed-origins",
                "localhost:3000",
            ],
            "scheme://host",
        ),
    ];
    for (args, says) in cases {
        let (code, _, stderr) = run_to_end(args).await;
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let (code, _, stderr) = run_to_end(&["--no-such-flag"]).await;
    assert_eq!(code, 2, "{stderr}");
    let (code, stdout, _) = run_to_end(&["--version"]).await;
    assert_eq!(code, 0);
    assert_eq!(
        stdout.trim(),
        format!("hecate-mcp {}", env!("CARGO_PKG_VERSION"))
    );
    let (code, _, stderr) = run_to_end(&[]).await;
    assert_eq!(code, 1, "no kubeconfig: {stderr}");
    assert!(stderr.contains("Kubernetes configuration"), "{stderr}");
}

/// A client that closes stdin without a word ends the server cleanly.
#[tokio::test]
async fn an_empty_session_ends_cleanly() {
    let env = TestEnv::new().await;
    let (_dir, alice) = kubeconfigs(&env);
    let mut child = command(&["--kubeconfig", alice.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}
