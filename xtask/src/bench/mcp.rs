//! `hecate-mcp` as an agent's client runs it: over stdio (one process, newline-delimited
//! JSON-RPC on its stdin and stdout, reading the cluster directly) and over streamable
//! HTTP (`--listen`, each caller's bearer token reviewed, reads from the watch-backed
//! cache); the latency of `why_stuck` per call on each.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use hecate_testenv::{Endpoint, Identity};

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

/// The stateless protocol revision: each POST carries its revision in `_meta` (and the
/// header), so a tool call needs no handshake.
const MODERN: &str = "2026-07-28";

/// Starts `hecate-mcp --listen` as the `hecate-api` identity of `endpoint` (the
/// deployed roles; the caller's own access is what each call is authorised on) with
/// `--auth kubernetes`, and times `why_stuck` on `gate` as alice (granted the viewer
/// role in `namespace` by [`super::load::grant_viewer`]): one POST per call, as an
/// agent's HTTP client sends it. Also its peak memory (MiB).
pub(crate) async fn http(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    namespace: &str,
    gate: &str,
) -> anyhow::Result<(Measurement, f64)> {
    super::load::grant_viewer(admin, Identity::Alice, Some(namespace)).await?;
    let binary = super::binary(root, "hecate-mcp");
    let mut child = Command::new(&binary)
        .args(["--context", "hecate-api", "--namespace", namespace])
        .args(["--listen", "127.0.0.1:0", "--auth", "kubernetes"])
        .env("KUBECONFIG", endpoint.dir.join("kubeconfig"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let stderr = child.stderr.take().context("hecate-mcp's stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let banner = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .context("hecate-mcp said nothing within 30 s")??
        .context("hecate-mcp exited before serving")?;
    let address = banner
        .split("over http on ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .with_context(|| format!("no address in hecate-mcp's banner: {banner}"))?;
    let url = format!("http://{address}/mcp");
    // Drained so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    let http = reqwest::Client::new();
    let token = endpoint.tokens[&Identity::Alice].clone();
    let mut id = 0_u64;
    let mut call = || {
        id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "why_stuck",
            "arguments": {"gate": gate},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "hecate-bench", "version": env!("CARGO_PKG_VERSION")},
            },
        }});
        http.post(&url)
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "why_stuck")
            .body(body.to_string())
            .send()
    };
    // Warm up until the RoleBinding has taken effect (the answer is an explanation of
    // the Gate) and the cache has listed: until then the server reads the API server,
    // so a call that costs it no request is the sign.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let before = apiserver::counts(admin).await?;
        let body = call().await?.bytes().await?;
        let answer: Value = serde_json::from_slice(&body).unwrap_or_default();
        let result = &answer["result"];
        let explained = result["isError"] != true && result["structuredContent"]["gate"] == gate;
        if explained {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if before.until(apiserver::counts(admin).await?).hecate == 0.0 {
                break;
            }
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "why_stuck over HTTP did not answer from the cache within 60 s: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut samples = Vec::with_capacity(CALLS);
    let mut requests = apiserver::Counts::default();
    for i in 0..CALLS {
        let before = if i == CALLS - 1 {
            Some(apiserver::counts(admin).await?)
        } else {
            None
        };
        let sent = Instant::now();
        let response = call().await?;
        anyhow::ensure!(
            response.status().is_success(),
            "why_stuck over HTTP answered {}",
            response.status()
        );
        let _ = response.bytes().await?;
        samples.push(sent.elapsed());
        if let Some(before) = before {
            tokio::time::sleep(Duration::from_millis(100)).await;
            requests = before.until(apiserver::counts(admin).await?);
        }
    }
    let (_, peak_rss_mib) = child.id().map_or((0.0, 0.0), super::controller::memory);
    let _ = child.kill().await;
    Ok((
        summarise(
            format!("hecate-mcp --listen: POST tools/call why_stuck {gate} (as alice)"),
            samples,
            Some(requests),
        ),
        peak_rss_mib,
    ))
}
