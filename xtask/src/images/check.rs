//! `cargo xtask images --check`: the images work as the chart will run them. Each is
//! pushed to a loopback registry (CNCF Distribution), removed locally and pulled back
//! with podman, then run: every binary answers `--version`; the controller's image
//! runs git, ssh (which needs its user in passwd), a shell, kustomize and helm; and
//! hecate-api and hecate-controller, given a kubeconfig for a local control plane,
//! become ready — which takes the cluster's answer through the image's TLS stack.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use hecate_testenv::{Binaries, ControlPlane, Identity, Lifetime, Tool};

use super::describe::Image;
use super::{Storage, output, push};

/// How long a server in an image may take to become ready.
const READY_WITHIN: Duration = Duration::from_secs(60);

pub(crate) fn run(storage: &Storage, built: &[(&Image, String)], tag: &str) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let registry = runtime.block_on(hecate_testenv::registry::Distribution::start(false));
    let mut pulled = Vec::new();
    for (image, name) in built {
        let reference = format!("{}/hecate/{}:{tag}", registry.addr, image.name);
        push(storage, name, &reference, false)?;
        output(storage.command("buildah").args(["rmi", name]))?;
        output(storage.command("podman").args([
            "pull",
            "--quiet",
            "--tls-verify=false",
            &reference,
        ]))?;
        eprintln!("[images] {reference}: pushed, removed here, pulled back");
        pulled.push((*image, reference));
    }

    for (image, reference) in &pulled {
        let version = run_in(storage, reference, None, &["--version"])?;
        let expected = format!("{} {}", image.name, env!("CARGO_PKG_VERSION"));
        anyhow::ensure!(
            version == expected,
            "{reference} --version said {version:?}, not {expected:?}"
        );
        eprintln!("[images] {reference} --version: {version}");
    }

    let (_, controller) = pulled
        .iter()
        .find(|(image, _)| image.tools)
        .context("one image carries the tools")?;
    for (program, args, expect) in [
        ("git", vec!["--version"], "git version".to_string()),
        // `ssh -G` prints the configuration it would use, the user's name among it.
        ("ssh", vec!["-G", "example.com"], "user nonroot".into()),
        ("sh", vec!["-c", "echo $HOME"], super::HOME.into()),
        (
            "kustomize",
            vec!["version"],
            Tool::Kustomize.version().into(),
        ),
        (
            "helm",
            vec!["version", "--short"],
            Tool::Helm.version().into(),
        ),
    ] {
        let said = run_in(storage, controller, Some(program), &args)?;
        anyhow::ensure!(
            said.contains(&expect),
            "{program} in {controller} said {said:?}, which lacks {expect:?}"
        );
        eprintln!(
            "[images] {controller}: {program} works ({})",
            said.lines().next().unwrap_or_default()
        );
    }

    serve_on_a_cluster(storage, &pulled)
}

/// Runs `reference` (with `entrypoint` instead of its own) on the host's network;
/// its output.
fn run_in(
    storage: &Storage,
    reference: &str,
    entrypoint: Option<&str>,
    args: &[&str],
) -> anyhow::Result<String> {
    let mut podman = storage.command("podman");
    podman.args(["run", "--rm", "--network", "host"]);
    if let Some(entrypoint) = entrypoint {
        podman.args(["--entrypoint", entrypoint]);
    }
    output(podman.arg(reference).args(args))
}

/// Every image that serves `/readyz` (hecate-api and hecate-controller), run with a
/// kubeconfig for a local control plane, answers it.
fn serve_on_a_cluster(storage: &Storage, pulled: &[(&Image, String)]) -> anyhow::Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("hecate-images-plane-")
        .tempdir()?;
    let plane = ControlPlane::start(
        &Binaries::locate_or_build()?,
        &dir.path().join("plane"),
        Lifetime::ThisProcess,
    )?;
    // Readable by the image's user: a throwaway control plane's admin.
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        plane.endpoint().kubeconfig_yaml(Identity::Admin),
    )?;
    super::set_mode(&kubeconfig, 0o644)?;
    let mount = format!("{}:/etc/hecate/kubeconfig:ro", kubeconfig.display());

    for (image, reference) in pulled {
        let Some(serves) = image.serves_readyz else {
            continue;
        };
        let port = free_port()?;
        let args: Vec<String> = serves
            .iter()
            .map(|arg| arg.replace("{port}", &port.to_string()))
            .collect();
        let container = format!("hecate-images-check-{}", image.name);
        let id = output(
            storage
                .command("podman")
                .args(["run", "--detach", "--network", "host", "--name", &container])
                .args(["--volume", &mount])
                .args(["--env", "KUBECONFIG=/etc/hecate/kubeconfig"])
                .arg(reference)
                .args(&args),
        )?;
        let ready = wait_ready(SocketAddr::from(([127, 0, 0, 1], port)));
        let logs = storage
            .command("podman")
            .args(["logs", &id])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
            .unwrap_or_default();
        let _ = output(storage.command("podman").args(["rm", "--force", &id]));
        match ready {
            Ok(took) => {
                eprintln!("[images] {reference}: ready on a local control plane in {took:.1?}")
            }
            Err(error) => anyhow::bail!("{reference} did not become ready: {error}\n{logs}"),
        }
    }
    Ok(())
}

/// Waits until `GET /readyz` on `addr` answers 200; how long that took.
fn wait_ready(addr: SocketAddr) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut last = String::from("nothing listening");
    while started.elapsed() < READY_WITHIN {
        match get(addr, "/readyz") {
            Ok((200, _)) => return Ok(started.elapsed()),
            Ok((status, body)) => last = format!("{status}: {}", body.trim()),
            Err(error) => last = error.to_string(),
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    anyhow::bail!("not ready within {READY_WITHIN:?}; last answer: {last}")
}

/// A plain HTTP/1.1 GET: the status and body.
fn get(addr: SocketAddr, path: &str) -> anyhow::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .context("an HTTP status line")?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
