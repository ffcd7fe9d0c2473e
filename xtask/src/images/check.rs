//! `cargo xtask images --check`: the images work as the chart will run them. Each is
//! pushed to a loopback registry (CNCF Distribution), removed locally and pulled back
//! with podman, then run: every binary answers `--version`; the controller's image
//! runs git, ssh (which needs its user in passwd), a shell, kustomize and helm; and
//! hecate-api and hecate-controller, given a kubeconfig for a local control plane,
//! become ready — which takes the cluster's answer through the image's TLS stack.

use std::net::TcpListener;
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

    serve_on_a_cluster(&runtime, storage, &pulled)
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
fn serve_on_a_cluster(
    runtime: &tokio::runtime::Runtime,
    storage: &Storage,
    pulled: &[(&Image, String)],
) -> anyhow::Result<()> {
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
        let ready = runtime.block_on(wait_ready(&format!("http://127.0.0.1:{port}/readyz")));
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

/// Waits until `GET url` answers 200; how long that took.
async fn wait_ready(url: &str) -> anyhow::Result<Duration> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()?;
    let started = Instant::now();
    let mut last = String::from("nothing listening");
    while started.elapsed() < READY_WITHIN {
        match http.get(url).send().await {
            Ok(answer) if answer.status().is_success() => return Ok(started.elapsed()),
            Ok(answer) => {
                let status = answer.status();
                last = format!(
                    "{status}: {}",
                    answer.text().await.unwrap_or_default().trim()
                );
            }
            Err(error) => last = error.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    anyhow::bail!("not ready within {READY_WITHIN:?}; last answer: {last}")
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
