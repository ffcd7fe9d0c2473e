//! `hecate-mcp` over stdio, as an agent's client runs it: one process, newline-delimited
//! JSON-RPC on its stdin and stdout; the latency of `why_stuck` per call.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{Measurement, apiserver, summarise};

/// `why_stuck` calls timed (after one warm-up).
pub(crate) const CALLS: usize = 25;

/// Starts `hecate-mcp` on `namespace`, initialises the session (timed: start-up
/// included), then times `why_stuck` on `gate`.
pub(crate) async fn run(
    root: &Path,
    kubeconfig: &Path,
    admin: &kube::Client,
    namespace: &str,
    gate: &str,
) -> anyhow::Result<Vec<Measurement>> {
    let binary = super::binary(root, "hecate-mcp");
    let started = Instant::now();
    let mut child = Command::new(&binary)
        .args(["--namespace", namespace])
        .env("KUBECONFIG", kubeconfig)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let mut session = Session::new(&mut child)?;
    session
        .call(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "hecate-bench", "version": env!("CARGO_PKG_VERSION")}
            }),
        )
        .await?;
    session.notify("notifications/initialized").await?;
    let initialised = summarise(
        "hecate-mcp: start and initialize".into(),
        vec![started.elapsed()],
        None,
    );

    let arguments = json!({"name": "why_stuck", "arguments": {"gate": gate}});
    let answer = session.call("tools/call", arguments.clone()).await?;
    anyhow::ensure!(
        answer["isError"] != true && answer["structuredContent"]["gate"] == gate,
        "why_stuck answered something else than an explanation: {answer}"
    );
    let mut samples = Vec::with_capacity(CALLS);
    let mut requests = apiserver::Counts::default();
    for i in 0..CALLS {
        let before = if i == CALLS - 1 {
            Some(apiserver::counts(admin).await?)
        } else {
            None
        };
        let sent = Instant::now();
        session.call("tools/call", arguments.clone()).await?;
        samples.push(sent.elapsed());
        if let Some(before) = before {
            tokio::time::sleep(Duration::from_millis(100)).await;
            requests = before.until(apiserver::counts(admin).await?);
        }
    }
    drop(session);
    let _ = child.kill().await;
    Ok(vec![
        initialised,
        summarise(
            format!("hecate-mcp: tools/call why_stuck {gate}"),
            samples,
            Some(requests),
        ),
    ])
}

/// A JSON-RPC session over a child's stdio.
struct Session {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Session {
    fn new(child: &mut Child) -> anyhow::Result<Self> {
        Ok(Self {
            stdin: child.stdin.take().context("hecate-mcp's stdin")?,
            stdout: BufReader::new(child.stdout.take().context("hecate-mcp's stdout")?),
            next_id: 1,
        })
    }

    async fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.stdin.write_all(&line).await?;
        self.stdin.flush().await?;
        Ok(())
    }

    async fn notify(&mut self, method: &str) -> anyhow::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
            .await
    }

    /// Sends a request and returns its result (an error for a JSON-RPC error), skipping
    /// any notifications the server sends meanwhile.
    async fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        let mut line = String::new();
        loop {
            line.clear();
            let read =
                tokio::time::timeout(Duration::from_secs(30), self.stdout.read_line(&mut line))
                    .await
                    .with_context(|| format!("hecate-mcp did not answer {method} within 30 s"))??;
            anyhow::ensure!(read > 0, "hecate-mcp closed its stdout during {method}");
            let message: Value = serde_json::from_str(&line)
                .with_context(|| format!("hecate-mcp wrote something else than JSON: {line}"))?;
            if message["id"] != id {
                continue;
            }
            if let Some(error) = message.get("error") {
                anyhow::bail!("{method} failed: {error}");
            }
            return Ok(message["result"].clone());
        }
    }
}
