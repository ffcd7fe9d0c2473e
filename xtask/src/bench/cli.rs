//! The command line, side by side with kubectl reading the same objects: wall time of
//! the whole process (start-up, kubeconfig, requests, rendering) and what the API
//! server served for it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use hecate_testenv::Endpoint;
use serde::Serialize;

use super::apiserver;
use super::{Measurement, RUNS, summarise};

/// The commands measured, and how they compare.
#[derive(Serialize)]
pub(crate) struct Commands {
    pub(crate) measurements: Vec<Measurement>,
    /// `hecate status` wall time over `kubectl get`'s (the floor: merely reading the
    /// same objects); absent without kubectl.
    pub(crate) status_over_kubectl: Option<f64>,
    /// `kubectl version --client`, or why there is no kubectl.
    pub(crate) kubectl: String,
}

/// Times `hecate status`, `hecate explain <gate>` and `hecate --version`, and `kubectl
/// get gates,bundles,passages` when kubectl is there (`$KUBECTL`, else on `PATH`).
pub(crate) async fn run(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    namespace: &str,
    gate: &str,
) -> anyhow::Result<Commands> {
    let hecate = super::binary(root, "hecate");
    let kubeconfig = endpoint.dir.join("kubeconfig");
    let kubectl = PathBuf::from(std::env::var_os("KUBECTL").unwrap_or_else(|| "kubectl".into()));
    let kubectl_version = tokio::process::Command::new(&kubectl)
        .args(["version", "--client"])
        .output()
        .await
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|o| o.lines().next().map(str::to_string));

    let mut measurements = vec![
        command(
            admin,
            &kubeconfig,
            &hecate,
            &["status", "-n", namespace, "-o", "json"],
        )
        .await?,
        command(
            admin,
            &kubeconfig,
            &hecate,
            &["explain", gate, "-n", namespace, "-o", "json"],
        )
        .await?,
        command(admin, &kubeconfig, &hecate, &["--version"]).await?,
    ];
    let mut status_over_kubectl = None;
    if kubectl_version.is_some() {
        let floor = command(
            admin,
            &kubeconfig,
            &kubectl,
            &[
                "get",
                "gates,bundles,passages",
                "-n",
                namespace,
                "-o",
                "json",
            ],
        )
        .await?;
        status_over_kubectl = Some(measurements[0].median_ms / floor.median_ms);
        measurements.push(floor);
    }
    Ok(Commands {
        measurements,
        status_over_kubectl,
        kubectl: kubectl_version
            .unwrap_or_else(|| format!("not measured: no {} (set KUBECTL)", kubectl.display())),
    })
}

/// `RUNS` runs after a warm-up (which also fills kubectl's discovery cache, as any
/// user's is); the API server's count is taken around the last run.
pub(crate) async fn command(
    admin: &kube::Client,
    kubeconfig: &Path,
    program: &Path,
    args: &[&str],
) -> anyhow::Result<Measurement> {
    let name = format!(
        "{} {}",
        program.file_name().unwrap_or_default().to_string_lossy(),
        args.join(" ")
    );
    let run = || async {
        let output = tokio::process::Command::new(program)
            .args(args)
            .env("KUBECONFIG", kubeconfig)
            .output()
            .await
            .with_context(|| format!("running {name}"))?;
        anyhow::ensure!(
            output.status.success(),
            "{name} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(())
    };
    run().await?;
    let mut samples = Vec::with_capacity(RUNS);
    let mut requests = apiserver::Counts::default();
    for i in 0..RUNS {
        let last = i == RUNS - 1;
        let before = if last {
            Some(apiserver::counts(admin).await?)
        } else {
            None
        };
        let started = Instant::now();
        run().await?;
        samples.push(started.elapsed());
        if let Some(before) = before {
            tokio::time::sleep(Duration::from_millis(100)).await;
            requests = before.until(apiserver::counts(admin).await?);
        }
    }
    Ok(summarise(name, samples, Some(requests)))
}
