//! Running `hecate-api` from xtask, as its own process with its own identity — the way
//! it runs in a cluster — for the demo and the bench.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;

/// A running `hecate-api`; stopped (SIGKILL, then reaped) when dropped.
pub(crate) struct ApiServer {
    child: Child,
    /// `http://<addr>`.
    pub(crate) base: String,
    /// From starting the process to `/readyz` answering 200 (its cache listed).
    pub(crate) ready_after: Duration,
}

impl ApiServer {
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `binary` on `addr` as the `hecate-api` identity of `kubeconfig`, logging to
/// `log` (or nowhere), and waits until it is ready.
pub(crate) async fn start(
    binary: &Path,
    addr: SocketAddr,
    kubeconfig: &Path,
    log: Option<&Path>,
) -> anyhow::Result<ApiServer> {
    // Say plainly when the port is taken, rather than waiting for a server that exited.
    drop(
        std::net::TcpListener::bind(addr)
            .with_context(|| format!("{addr} is in use (choose another with --addr)"))?,
    );
    let output = match log {
        Some(path) => Stdio::from(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        ),
        None => Stdio::null(),
    };
    let started = Instant::now();
    let child = Command::new(binary)
        .args(["--addr", &addr.to_string(), "--context", "hecate-api"])
        .env("KUBECONFIG", kubeconfig)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(output)
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let mut server = ApiServer {
        child,
        base: format!("http://{addr}"),
        ready_after: Duration::ZERO,
    };
    let http = reqwest::Client::new();
    loop {
        if let Some(status) = server.child.try_wait()? {
            anyhow::bail!("hecate-api exited ({status}) before it was ready");
        }
        let ready = http.get(format!("{}/readyz", server.base)).send().await;
        if ready.is_ok_and(|r| r.status().is_success()) {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(60),
            "hecate-api was not ready within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.ready_after = started.elapsed();
    Ok(server)
}
