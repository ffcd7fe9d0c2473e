//! `hecate-controller` at fleet scale, as its own process: Gates in many namespaces,
//! each judging its namespace's Bundles. Measured: how soon an automatic Gate opens a
//! crossing once a Bundle becomes eligible, what a reconcile costs the API server, what
//! idling costs per minute, and the controller's memory.
//!
//! The fleet (namespaces `bench-fleet-<scale>-<i>`) is created once and reused; the
//! latency probes (an automatic Gate `auto` and a Bundle of Beacon `fresh` in each
//! namespace) are removed and made again on every run.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::{StreamExt as _, TryStreamExt as _};
use hecate_testenv::{Endpoint, Identity};
use hecate_types::{
    Admission, Artifact, Bundle, BundleOrigin, BundleSpec, Gate, GateSpec, Passage,
    PassageTemplate, Step, wellknown,
};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use serde::Serialize;

use super::Scale;

/// The label that makes the fleet's namespaces the benched controller's shard (so
/// other namespaces on the control plane cost it nothing).
const SHARD_LABEL: &str = "hecate.dev/bench-fleet";

/// Gates per namespace.
const GATES: usize = 10;
/// Bundles per namespace (every Gate judges all of them).
const BUNDLES: usize = 20;

/// What one run measured.
#[derive(Serialize)]
pub(crate) struct ControllerResults {
    pub(crate) namespaces: usize,
    pub(crate) gates: usize,
    pub(crate) bundles: usize,
    /// From starting the process to every Gate reconciled once.
    pub(crate) first_pass_ms: f64,
    /// Requests the controller sent per Gate in that first pass (its own counter; it
    /// includes start-up: the CRD check, discovery, the watches' first lists).
    pub(crate) requests_per_gate_reconcile: f64,
    /// A Bundle created → the automatic Gate's Passage exists (one per namespace).
    pub(crate) eligible_to_passage_p50_ms: f64,
    pub(crate) eligible_to_passage_p99_ms: f64,
    pub(crate) eligible_to_passage_max_ms: f64,
    /// Requests per minute with nothing to do, and over how long that was measured.
    pub(crate) idle_requests_per_minute: f64,
    pub(crate) idle_window_s: f64,
    /// Resident memory at the end, and its peak.
    pub(crate) rss_mib: f64,
    pub(crate) peak_rss_mib: f64,
}

impl Scale {
    fn fleet_namespaces(self) -> usize {
        match self {
            Self::Small => 5,
            Self::Large | Self::Fleet => 50,
        }
    }

    fn idle_window(self) -> Duration {
        match self {
            Self::Small => Duration::from_secs(15),
            Self::Large | Self::Fleet => Duration::from_secs(60),
        }
    }
}

pub(crate) async fn run(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    scale: Scale,
) -> anyhow::Result<ControllerResults> {
    let namespaces: Vec<String> = (0..scale.fleet_namespaces())
        .map(|i| format!("bench-fleet-{}-{i}", scale.name()))
        .collect();
    seed(admin, &namespaces).await?;
    fresh_gates(admin, &namespaces).await?;
    label(admin, &namespaces, scale).await?;
    reset_probes(admin, &namespaces).await?;

    let started = Instant::now();
    let process = Process::start(
        root,
        endpoint,
        "bench-controller",
        &format!("{SHARD_LABEL}={}", scale.name()),
    )?;
    let scrape = || process.requests();

    // The first pass: every Gate of the fleet reconciled once (and the controller
    // answering on its metrics address).
    let gates = namespaces.len() * GATES;
    process.serving().await?;
    loop {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(300),
            "the controller did not reconcile {gates} Gates within 5 minutes"
        );
        if reconciled(admin, &namespaces).await? >= gates {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let first_pass = started.elapsed();
    let first_pass_requests = scrape().await?;

    // Idle: nothing changes; what does looking cost? (After the start-up's last wave:
    // each shard namespace's first listing wakes its Gates once more.)
    tokio::time::sleep(Duration::from_secs(5)).await;
    let window = scale.idle_window();
    let before = scrape().await?;
    tokio::time::sleep(window).await;
    let idle = scrape().await? - before;

    // Latency: per namespace, an automatic Gate, then a Bundle it may cross.
    for namespace in &namespaces {
        Api::<Gate>::namespaced(admin.clone(), namespace)
            .create(&PostParams::default(), &gate("auto", "fresh", true))
            .await?;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut latencies = Vec::new();
    for namespace in &namespaces {
        let passages = Api::<Passage>::namespaced(admin.clone(), namespace);
        let created = Instant::now();
        Api::<Bundle>::namespaced(admin.clone(), namespace)
            .create(&PostParams::default(), &bundle("fresh-1", "fresh", 1))
            .await?;
        loop {
            if passages.get_opt("auto-1").await?.is_some() {
                break;
            }
            anyhow::ensure!(
                created.elapsed() < Duration::from_secs(120),
                "no Passage in {namespace} within 2 minutes"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        latencies.push(created.elapsed());
    }
    latencies.sort();
    let percentile = |p: f64| super::percentile_ms(&latencies, p);
    let (rss_mib, peak_rss_mib) = process.memory();
    drop(process);
    reset_probes(admin, &namespaces).await?;

    Ok(ControllerResults {
        namespaces: namespaces.len(),
        gates,
        bundles: namespaces.len() * BUNDLES,
        first_pass_ms: first_pass.as_secs_f64() * 1000.0,
        requests_per_gate_reconcile: first_pass_requests / gates as f64,
        eligible_to_passage_p50_ms: percentile(0.5),
        eligible_to_passage_p99_ms: percentile(0.99),
        eligible_to_passage_max_ms: percentile(1.0),
        idle_requests_per_minute: idle * 60.0 / window.as_secs_f64(),
        idle_window_s: window.as_secs_f64(),
        rss_mib,
        peak_rss_mib,
    })
}

/// The fleet: per namespace `GATES` manual Gates over `BUNDLES` Bundles of Beacon
/// `app`. Created once; a complete fleet is reused.
async fn seed(admin: &kube::Client, namespaces: &[String]) -> anyhow::Result<()> {
    let last = namespaces.last().map(String::as_str).unwrap_or_default();
    let complete = Api::<Bundle>::namespaced(admin.clone(), last)
        .list(&ListParams::default().limit(1))
        .await
        .is_ok_and(|list| !list.items.is_empty());
    if complete {
        return Ok(());
    }
    eprintln!(
        "[bench] seeding the controller's fleet ({} namespaces)…",
        namespaces.len()
    );
    futures::stream::iter(namespaces.iter().map(Ok::<_, anyhow::Error>))
        .try_for_each_concurrent(8, |namespace| async move {
            let object = Namespace {
                metadata: ObjectMeta {
                    name: Some(namespace.clone()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            };
            ignore_exists(
                Api::<Namespace>::all(admin.clone())
                    .create(&PostParams::default(), &object)
                    .await,
            )?;
            let gates = Api::<Gate>::namespaced(admin.clone(), namespace);
            for i in 0..GATES {
                ignore_exists(
                    gates
                        .create(
                            &PostParams::default(),
                            &gate(&format!("g{i}"), "app", false),
                        )
                        .await,
                )?;
            }
            let bundles = Api::<Bundle>::namespaced(admin.clone(), namespace);
            for i in 0..BUNDLES {
                ignore_exists(
                    bundles
                        .create(
                            &PostParams::default(),
                            &bundle(&format!("app-{i}"), "app", i),
                        )
                        .await,
                )?;
            }
            Ok(())
        })
        .await
}

/// Labels the fleet's namespaces as the benched controller's shard.
async fn label(admin: &kube::Client, namespaces: &[String], scale: Scale) -> anyhow::Result<()> {
    let patch = serde_json::json!({"metadata": {"labels": {SHARD_LABEL: scale.name()}}});
    for namespace in namespaces {
        Api::<Namespace>::all(admin.clone())
            .patch(namespace, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
    }
    Ok(())
}

/// The fleet's Gates made anew, so the first pass is this run's (a Gate reconciled by an
/// earlier run already has a Ready condition).
async fn fresh_gates(admin: &kube::Client, namespaces: &[String]) -> anyhow::Result<()> {
    futures::stream::iter(namespaces.iter().map(Ok::<_, anyhow::Error>))
        .try_for_each_concurrent(8, |namespace| async move {
            let gates = Api::<Gate>::namespaced(admin.clone(), namespace);
            for i in 0..GATES {
                let name = format!("g{i}");
                let _ = gates.delete(&name, &DeleteParams::default()).await;
                // Deletion is immediate (no finalizers); create it again.
                let mut attempts = 0;
                loop {
                    match gates
                        .create(&PostParams::default(), &gate(&name, "app", false))
                        .await
                    {
                        Ok(_) => break,
                        Err(kube::Error::Api(status)) if status.code == 409 && attempts < 50 => {
                            attempts += 1;
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        Err(error) => return Err(error.into()),
                    }
                }
            }
            Ok(())
        })
        .await
}

/// Removes the latency probes of `namespaces` (the Gate `auto`, the Bundle `fresh-1` and
/// their Passages), so that a run makes them afresh.
pub(crate) async fn reset_probes(
    admin: &kube::Client,
    namespaces: &[String],
) -> anyhow::Result<()> {
    futures::stream::iter(namespaces)
        .map(|namespace| async move {
            let _ = Api::<Gate>::namespaced(admin.clone(), namespace)
                .delete("auto", &DeleteParams::default())
                .await;
            let _ = Api::<Bundle>::namespaced(admin.clone(), namespace)
                .delete("fresh-1", &DeleteParams::default())
                .await;
            let _ = Api::<Passage>::namespaced(admin.clone(), namespace)
                .delete_collection(
                    &DeleteParams::default(),
                    &ListParams::default().labels(&format!("{}=auto", wellknown::LABEL_GATE)),
                )
                .await;
        })
        .buffer_unordered(48)
        .collect::<Vec<()>>()
        .await;
    Ok(())
}

/// How many of the fleet's Gates have a Ready condition.
async fn reconciled(admin: &kube::Client, namespaces: &[String]) -> anyhow::Result<usize> {
    let counts = futures::stream::iter(namespaces.iter())
        .map(|namespace| async move {
            let gates = Api::<Gate>::namespaced(admin.clone(), namespace)
                .list(&ListParams::default())
                .await?;
            anyhow::Ok(
                gates
                    .items
                    .iter()
                    .filter(|g| g.status.as_ref().is_some_and(|s| !s.conditions.is_empty()))
                    .count(),
            )
        })
        .buffer_unordered(8)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(counts.into_iter().sum())
}

fn gate(name: &str, beacon: &str, auto: bool) -> Gate {
    Gate::new(
        name,
        GateSpec {
            admits: vec![Admission {
                from: BundleOrigin {
                    beacon: beacon.into(),
                },
                ..Admission::default()
            }],
            passage: Some(PassageTemplate {
                steps: vec![Step {
                    uses: "flux-wait".into(),
                    with: Some(
                        serde_json::json!({"resources": [{"kind": "Kustomization", "name": "app"}]}),
                    ),
                    ..Step::default()
                }],
            }),
            auto,
            ..GateSpec::default()
        },
    )
}

/// Bundle `name` of Beacon `beacon`: one image, `1.0.<i>`, its own digest.
pub(crate) fn bundle(name: &str, beacon: &str, i: usize) -> Bundle {
    Bundle::new(
        name,
        BundleSpec {
            beacon: beacon.into(),
            artifacts: vec![Artifact::image(
                "ghcr.io/acme/app",
                format!("1.0.{i}"),
                format!("sha256:{:064x}", i),
            )],
            ..BundleSpec::default()
        },
    )
}

/// `hecate-controller` as its own process over the namespaces `selector` matches,
/// with its metrics on a loopback port and its log in `<dev dir>/<name>/`. Killed
/// when dropped.
pub(crate) struct Process {
    _child: tokio::process::Child,
    pid: u32,
    metrics: std::net::SocketAddr,
    /// Where its log goes.
    pub(crate) log: std::path::PathBuf,
}

impl Process {
    pub(crate) fn start(
        root: &Path,
        endpoint: &Endpoint,
        name: &str,
        selector: &str,
    ) -> anyhow::Result<Self> {
        Self::start_with(root, endpoint, name, selector, &[])
    }

    /// The same, with `extra` flags.
    pub(crate) fn start_with(
        root: &Path,
        endpoint: &Endpoint,
        name: &str,
        selector: &str,
        extra: &[String],
    ) -> anyhow::Result<Self> {
        let dir = endpoint.dir.join(name);
        std::fs::create_dir_all(&dir)?;
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, endpoint.kubeconfig_yaml(Identity::Admin))?;
        let metrics = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
            listener.local_addr()?
        };
        let log = dir.join("hecate-controller.log");
        let child = tokio::process::Command::new(super::binary(root, "hecate-controller"))
            .arg(format!("--metrics-bind-address={metrics}"))
            .arg("--health-probe-bind-address=0")
            .arg(format!("--watch-label-selector={selector}"))
            .arg(format!("--work-root={}", dir.join("work").display()))
            // The bench's world is local: repositories on this disk, receivers on
            // loopback.
            .args(["--allow-local-git", "--allow-local-http"])
            .args(extra)
            .env("KUBECONFIG", &kubeconfig)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .kill_on_drop(true)
            .spawn()?;
        Ok(Self {
            pid: child.id().unwrap_or_default(),
            _child: child,
            metrics,
            log,
        })
    }

    /// The requests it has sent the API server so far, by its own count.
    pub(crate) async fn requests(&self) -> anyhow::Result<f64> {
        Ok(requests_sent(&self.scrape().await?))
    }

    /// The requests it has sent so far by verb and resource (`update gates/status`).
    pub(crate) async fn requests_by_kind(&self) -> anyhow::Result<Breakdown> {
        Ok(Breakdown::of(&self.scrape().await?))
    }

    /// The reconciles its `controller` loop (`gate`, `passage`, `beacon`) has run so
    /// far, by its own `hecate_controller_reconciles_total`.
    pub(crate) async fn reconciles(&self, controller: &str) -> anyhow::Result<f64> {
        let series = format!("hecate_controller_reconciles_total{{controller=\"{controller}\"}} ");
        Ok(self
            .scrape()
            .await?
            .lines()
            .find_map(|line| line.strip_prefix(&series)?.trim().parse::<f64>().ok())
            .unwrap_or(0.0))
    }

    async fn scrape(&self) -> anyhow::Result<String> {
        Ok(reqwest::get(format!("http://{}/metrics", self.metrics))
            .await
            .with_context(|| {
                format!(
                    "scraping hecate-controller (its log: {})",
                    self.log.display()
                )
            })?
            .text()
            .await?)
    }

    /// Waits until it serves its metrics.
    pub(crate) async fn serving(&self) -> anyhow::Result<()> {
        let started = Instant::now();
        while self.requests().await.is_err() {
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(60),
                "hecate-controller did not serve metrics within a minute (its log: {})",
                self.log.display()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// (resident, peak resident) memory in MiB.
    pub(crate) fn memory(&self) -> (f64, f64) {
        memory(self.pid)
    }
}

fn ignore_exists<T>(result: Result<T, kube::Error>) -> anyhow::Result<()> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// The sum of the controller's `hecate_controller_kube_requests_total` series.
fn requests_sent(metrics: &str) -> f64 {
    metrics
        .lines()
        .filter(|l| l.starts_with("hecate_controller_kube_requests_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Requests by verb and resource (`update gates/status`), from the controller's
/// `hecate_controller_kube_requests_total{verb,resource}` series.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Breakdown(pub(crate) BTreeMap<String, f64>);

impl Breakdown {
    fn of(metrics: &str) -> Self {
        let mut counts = BTreeMap::new();
        for line in metrics
            .lines()
            .filter(|l| l.starts_with("hecate_controller_kube_requests_total{"))
        {
            let label = |name: &str| line.split(&format!("{name}=\"")).nth(1)?.split('"').next();
            let (Some(verb), Some(resource)) = (label("verb"), label("resource")) else {
                continue;
            };
            let Some(value) = line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) else {
                continue;
            };
            *counts.entry(format!("{verb} {resource}")).or_default() += value;
        }
        Self(counts)
    }

    /// What was sent after `before`, divided by `per` (leaving out what did not grow).
    pub(crate) fn since(&self, before: &Self, per: f64) -> Self {
        Self(
            self.0
                .iter()
                .map(|(key, now)| (key.clone(), (now - before.0.get(key).unwrap_or(&0.0)) / per))
                .filter(|(_, n)| *n > 0.0)
                .collect(),
        )
    }

    /// One line per verb and resource, most first.
    pub(crate) fn lines(&self) -> String {
        let mut rows: Vec<(&String, &f64)> = self.0.iter().collect();
        rows.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
        rows.iter()
            .map(|(key, n)| format!("  {n:>8.1}  {key}\n"))
            .collect()
    }
}

/// (VmRSS, VmHWM) of `pid`, in MiB.
/// (resident, peak resident) memory of process `pid` in MiB.
pub(crate) fn memory(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map_or(0.0, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
