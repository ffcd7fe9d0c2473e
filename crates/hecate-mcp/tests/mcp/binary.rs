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
        assert_eq!(tool_names(&client).await.len(), 15);
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
    assert_eq!(tool_names(&bob).await.len(), 23);
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

/// The binary over stdio, spoken to line by line as a client would.
struct StdioSession {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl StdioSession {
    async fn start(kubeconfig: &std::path::Path, namespace: &str) -> Self {
        let mut child = command(&[
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--namespace",
            namespace,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        Self {
            stdin: child.stdin.take().unwrap(),
            lines: BufReader::new(child.stdout.take().unwrap()).lines(),
            child,
        }
    }

    /// Writes `message` as one line.
    async fn send(&mut self, message: &serde_json::Value) {
        use tokio::io::AsyncWriteExt as _;
        let line = format!("{message}\n");
        assert_eq!(line.matches('\n').count(), 1);
        self.stdin.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next line the server writes, which must be one whole JSON-RPC message.
    async fn reply(&mut self) -> (String, serde_json::Value) {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the server is still talking");
        let message = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("one line, one message ({e}): {line}"));
        (line, message)
    }

    /// Sends a request and returns its answer, which must be the next line.
    async fn ask(&mut self, message: serde_json::Value) -> serde_json::Value {
        self.send(&message).await;
        let (_, answer) = self.reply().await;
        assert_eq!(answer["id"], message["id"], "{answer}");
        answer
    }

    /// Ends the session by closing stdin; the server must then exit 0 having written
    /// nothing more.
    async fn close(mut self) {
        drop(self.stdin);
        let rest = tokio::time::timeout(Duration::from_secs(15), async {
            let mut rest = Vec::new();
            while let Some(line) = self.lines.next_line().await.unwrap() {
                rest.push(line);
            }
            rest
        })
        .await
        .expect("the server ends when stdin closes");
        assert_eq!(rest, Vec::<String>::new(), "nothing unanswered was pending");
        let status = self.child.wait().await.unwrap();
        assert_eq!(status.code(), Some(0));
    }
}

/// `_meta` of the stateless revision, as a client sends on each request.
fn modern_meta(version: &str) -> serde_json::Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    })
}

/// MCP #95 – #98, #104, #106 over the real binary's stdio, one JSON message per line:
/// - legacy `initialize` at 2025-06-18 answers that revision and `serverInfo`, and no
///   `resultType` (#97); at a revision nobody knows it falls back to the newest
///   `initialize` revision the server speaks, 2025-11-25 (#98);
/// - `server/discover` answers `resultType: complete`, the revisions newest first, and
///   `serverInfo` in `_meta` (#95); a request at an unknown revision in `_meta` is
///   error −32022 naming the revision asked and those supported (#96);
/// - notifications (`initialized`, `cancelled`) get no reply (#104);
/// - every message is one line: newlines inside strings travel escaped, both ways
///   (#106).
#[tokio::test]
async fn mcp95_to_98_the_stdio_protocol_line_by_line() {
    let env = TestEnv::new().await;
    let (_dir, alice) = kubeconfigs(&env);
    let initialize = |version: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }})
    };
    let newest = ProtocolVersion::V_2026_07_28.to_string();

    for (asked, answered) in [("2025-06-18", "2025-06-18"), ("1999-01-01", "2025-11-25")] {
        let mut session = StdioSession::start(&alice, &env.namespace).await;
        let answer = session.ask(initialize(asked)).await;
        let result = &answer["result"];
        assert_eq!(result["protocolVersion"], answered, "{asked}: {answer}");
        assert_eq!(result["serverInfo"]["name"], "hecate");
        assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(result.get("resultType").is_none(), "{answer}");
        // Notifications are not answered: the next line is the next request's answer.
        session
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        session
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "changed my mind"}}))
            .await;
        let tools = session
            .ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
            .await;
        assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 15);
        assert!(tools["result"].get("resultType").is_none(), "{tools}");
        session.close().await;
    }

    let mut session = StdioSession::start(&alice, &env.namespace).await;
    session
        .send(&json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": modern_meta(&newest)}}))
        .await;
    let (discover_line, discover) = session.reply().await;
    assert!(discover_line.contains(r"\n\n"), "{discover_line}");
    assert_eq!(discover["id"], "d");
    let result = &discover["result"];
    assert_eq!(result["resultType"], "complete", "{discover}");
    // The instructions hold newlines: escaped, the answer is still one line.
    assert!(
        result["instructions"].as_str().unwrap().contains("\n\n"),
        "{discover}"
    );
    assert_eq!(result["supportedVersions"][0], newest.as_str());
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2025-11-25"))
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "hecate",
        "{discover}"
    );
    assert!(
        result["instructions"]
            .as_str()
            .unwrap()
            .contains("why_stuck")
    );

    let unsupported = session
        .ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": modern_meta("1900-01-01")}}))
        .await;
    let error = &unsupported["error"];
    assert_eq!(error["code"], -32022, "{unsupported}");
    assert_eq!(error["data"]["requested"], "1900-01-01");
    assert_eq!(error["data"]["supported"], result["supportedVersions"]);

    // The first request at a revision the server speaks opens the session (rmcp ends
    // a session sent a notification before that).
    let tools = session
        .ask(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": modern_meta(&newest)}}))
        .await;
    assert_eq!(tools["result"]["resultType"], "complete", "{tools}");
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 15);
    session
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}))
        .await;
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "why_stuck",
        "arguments": {"gate": "multi\nline"},
        "_meta": modern_meta(&newest),
    }});
    session.send(&call).await;
    let (line, answer) = session.reply().await;
    assert_eq!(answer["id"], 5, "{line}");
    assert_eq!(answer["result"]["isError"], true, "{line}");
    assert!(
        answer["result"]["structuredContent"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains(r#""multi\nline""#),
        "the name read from the request is quoted back: {line}"
    );
    session.close().await;
}
