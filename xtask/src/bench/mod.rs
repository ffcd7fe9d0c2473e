//! `cargo xtask bench`: how fast Hecate answers, and what it costs the API server, on
//! the local control plane at a realistic scale.
//!
//! The seed (`--scale large`: 50 Gates in 5 pipelines of 10, 5,000 Bundles, 10,000
//! Passages with statuses; `small`: a tenth) lives in namespace `bench-<scale>` and is
//! reused when it is already there. Each timing is the median of several runs after a
//! warm-up, in an optimised build; request counts come from the API server's own
//! counter. Results go to `target/bench/results.{json,md}`; a large run also rewrites
//! the results section of `docs/BENCHMARKS.md`.

mod apiserver;
mod beacons;
mod cli;
mod controller;
mod crossings;
mod fan_out;
mod fleet;
mod flux;
mod load;
mod mcp;
mod report;
mod seed;
mod verification;

use std::path::Path;
use std::time::{Duration, Instant};

use hecate_ops::{Cache, Ops, Scope};
use hecate_testenv::{Endpoint, Identity};
use serde::Serialize;

const PIPELINES: usize = 5;
const GATES_PER_PIPELINE: usize = 10;
/// Timed runs per measurement (after one warm-up).
const RUNS: usize = 7;
/// The Gate explained: the last of pipeline 0, which needs approval.
const GATE: &str = "app-0-g9";

/// How big a namespace to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Scale {
    /// 50 Gates, 500 Bundles, 1,000 Passages.
    Small,
    /// 50 Gates, 5,000 Bundles, 10,000 Passages.
    Large,
    /// The fleet alone: 200 namespaces, 2,000 Gates, 2,000 Beacons, 100,000 Bundles
    /// and 100,000 Passages (`--only fleet` at the other scales: 4 or 50 namespaces).
    Fleet,
}

/// A part of the bench measured on its own (`--only`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Part {
    /// One Gate explained: `hecate explain`, `Ops::explain` (direct and cached) and
    /// hecate-mcp's `why_stuck` over stdio and over HTTP.
    Explain,
    /// The Overview: `Ops::overview` (direct and cached) and hecate-api's
    /// `/overview` under load — what a change to a read path re-measures.
    Overview,
    /// Crossings end to end (no seed): one crossing, releases one after another, many
    /// at once; with the controller's requests by verb and resource.
    Crossings,
    /// Releases through dev, staging and production on Flux's own controllers, with
    /// `flux-reconcile` and without: each stage's time, and where it went.
    Flux,
    /// hecate-controller over a fleet (no seed): its first pass, requests per
    /// reconcile, Bundle → Passage latency, requests per idle minute, memory.
    Controller,
    /// A platform's fleet (its own seed): the controller as one replica and as two
    /// shards, hecate-api for one namespace's reader and for everyone's, `hecate
    /// status`, hecate-mcp.
    Fleet,
    /// One Gate over 100 targets in four waves (no seed): promote → the last target
    /// crossed beside one target alone, the controller's requests per target, the
    /// Passage's record size, memory.
    FanOut,
    /// Gates verifying at once (no seed): the stand-ins' requests per verifier look,
    /// the controller's per reconcile, a minute of soaking, and plain crossings beside
    /// them against a baseline.
    Verification,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Self::Explain => "explain",
            Self::Overview => "overview",
            Self::Crossings => "crossings",
            Self::Flux => "flux",
            Self::Controller => "controller",
            Self::Fleet => "fleet",
            Self::Verification => "verification",
            Self::FanOut => "fan-out",
        }
    }
}

impl Scale {
    fn bundles(self) -> usize {
        match self {
            Self::Small => 500,
            Self::Large | Self::Fleet => 5_000,
        }
    }

    fn passages(self) -> usize {
        self.bundles() * 2
    }

    fn name(self) -> &'static str {
        match self {
            Self::Small => "small",
            Self::Large => "large",
            Self::Fleet => "fleet",
        }
    }

    fn namespace(self) -> String {
        format!("bench-{}", self.name())
    }
}

/// The build profile this bench (and the binaries it runs) was built with.
pub(crate) const PROFILE: &str = if cfg!(debug_assertions) {
    "debug"
} else {
    "release"
};

/// Where the binaries of this bench's profile are.
fn binary(root: &Path, name: &str) -> std::path::PathBuf {
    root.join("target").join(PROFILE).join(name)
}

pub(crate) fn run(
    root: &Path,
    scale: Scale,
    only: Option<Part>,
    crossings: Option<usize>,
    releases: Option<usize>,
) -> anyhow::Result<()> {
    // Numbers from a debug build measure the debug build: the published (large) run
    // measures an optimised one. A small run checks that the harness works, so it
    // uses whatever build it finds itself in (in CI, the debug one the tests built).
    if cfg!(debug_assertions) && scale != Scale::Small {
        eprintln!("[bench] building xtask with optimisations…");
        let status = crate::cargo()
            .args(["run", "--quiet", "--release", "--package", "xtask", "--"])
            .args(["bench", "--scale", scale.name()])
            .args(only.iter().flat_map(|part| ["--only", part.name()]))
            .args(
                crossings
                    .iter()
                    .flat_map(|n| ["--crossings".into(), n.to_string()]),
            )
            .args(
                releases
                    .iter()
                    .flat_map(|n| ["--releases".into(), n.to_string()]),
            )
            .current_dir(root)
            .status()?;
        anyhow::ensure!(status.success(), "the optimised bench failed ({status})");
        return Ok(());
    }
    let endpoint = crate::control_plane::start(&crate::control_plane::dev_dir(root))?;
    let packages: &[&str] = match only {
        None => &[
            "hecate-api",
            "hecate-cli",
            "hecate-mcp",
            "hecate-controller",
        ],
        Some(Part::Explain) => &["hecate-cli", "hecate-mcp"],
        Some(Part::Overview) => &["hecate-api"],
        Some(
            Part::Crossings | Part::Flux | Part::Controller | Part::Verification | Part::FanOut,
        ) => &["hecate-controller"],
        Some(Part::Fleet) => &[
            "hecate-api",
            "hecate-cli",
            "hecate-mcp",
            "hecate-controller",
        ],
    };
    // `--scale fleet` is the fleet alone.
    let only = match (scale, only) {
        (Scale::Fleet, None) => Some(Part::Fleet),
        (_, only) => only,
    };
    eprintln!("[bench] building {} ({PROFILE})…", packages.join(", "));
    crate::build(root, packages, PROFILE == "release")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    if only == Some(Part::Explain) {
        let measurements = runtime.block_on(measure_explain(root, &endpoint, scale))?;
        let mut markdown = format!(
            "`--only explain`, {} scale, {PROFILE} build, namespace `{}`\n\n",
            scale.name(),
            scale.namespace()
        );
        report::table(&mut markdown, &measurements);
        println!("\n{markdown}");
        return Ok(());
    }
    if only == Some(Part::Overview) {
        let (ops, api) = runtime.block_on(measure_overview(root, &endpoint, scale))?;
        let mut markdown = format!(
            "`--only overview`, {} scale, {PROFILE} build, namespace `{}`\n\n",
            scale.name(),
            scale.namespace()
        );
        report::table(&mut markdown, &ops);
        report::levels(&mut markdown, &api);
        println!("\n{markdown}");
        return Ok(());
    }
    if only == Some(Part::Crossings) {
        let results = runtime.block_on(async {
            let admin = endpoint.client(Identity::Admin).await?;
            crossings::run(root, &endpoint, &admin, scale, crossings).await
        })?;
        println!(
            "\n`--only crossings`, {PROFILE} build\n\n{}",
            report::crossings(&results)
        );
        println!(
            "one crossing: {:.0} requests\n{}",
            results.one_requests,
            results.one_breakdown.lines()
        );
        println!(
            "{} at once: {:.1} requests per crossing\n{}",
            results.concurrent,
            results.concurrent_requests_per_crossing,
            results.concurrent_breakdown.lines()
        );
        return Ok(());
    }
    if only == Some(Part::Controller) {
        let results = runtime.block_on(async {
            let admin = endpoint.client(Identity::Admin).await?;
            controller::run(root, &endpoint, &admin, scale).await
        })?;
        println!(
            "\n`--only controller`, {} scale, {PROFILE} build\n\n{}",
            scale.name(),
            report::controller(&results)
        );
        return Ok(());
    }
    if only == Some(Part::Verification) {
        let results = runtime.block_on(async {
            let admin = endpoint.client(Identity::Admin).await?;
            verification::run(root, &endpoint, &admin, scale).await
        })?;
        let dir = root.join("target/bench");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("verification.json"),
            serde_json::to_string_pretty(&results)?,
        )?;
        println!(
            "\n`--only verification`, {} scale, {PROFILE} build\n\n{}",
            scale.name(),
            verification::report(&results)
        );
        println!("wrote target/bench/verification.json");
        return Ok(());
    }
    if only == Some(Part::FanOut) {
        let targets = crossings.unwrap_or(100);
        let results = runtime.block_on(async {
            let admin = endpoint.client(Identity::Admin).await?;
            fan_out::run(root, &endpoint, &admin, targets).await
        })?;
        println!(
            "\n`--only fan-out`, {PROFILE} build\n\n{}",
            report::fan_out(&results)
        );
        return Ok(());
    }
    if only == Some(Part::Fleet) {
        let results = runtime.block_on(async {
            let admin = endpoint.client(Identity::Admin).await?;
            fleet::run(root, &endpoint, &admin, scale).await
        })?;
        let markdown = report::fleet(&results);
        let dir = root.join("target/bench");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("fleet.json"),
            serde_json::to_string_pretty(&results)?,
        )?;
        println!(
            "\n`--only fleet`, {} scale, {PROFILE} build\n\n{markdown}",
            scale.name()
        );
        println!("wrote target/bench/fleet.json");
        return Ok(());
    }
    if only == Some(Part::Flux) {
        let results = runtime.block_on(async {
            let admin = endpoint.client(Identity::Admin).await?;
            flux::run(root, &endpoint, &admin, scale, releases).await
        })?;
        println!(
            "\n`--only flux`, {PROFILE} build\n\n{}",
            report::flux(&results)
        );
        return Ok(());
    }
    let results = runtime.block_on(measure(root, &endpoint, scale, crossings, releases))?;

    let dir = root.join("target/bench");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("results.json"),
        serde_json::to_string_pretty(&results)?,
    )?;
    let markdown = report::markdown(&results);
    std::fs::write(dir.join("results.md"), &markdown)?;
    println!("\n{markdown}");
    println!("wrote target/bench/results.json and target/bench/results.md");
    if scale == Scale::Large {
        report::publish(&root.join("docs/BENCHMARKS.md"), &markdown)?;
        println!("updated docs/BENCHMARKS.md");
    }
    Ok(())
}

/// Everything one run measured.
#[derive(Serialize)]
pub(crate) struct Results {
    pub(crate) environment: report::Environment,
    pub(crate) scale: &'static str,
    /// `release`, or `debug` (numbers not representative).
    pub(crate) profile: &'static str,
    pub(crate) namespace: String,
    pub(crate) gates: usize,
    pub(crate) bundles: usize,
    pub(crate) passages: usize,
    pub(crate) commands: cli::Commands,
    pub(crate) ops: Vec<Measurement>,
    pub(crate) api: load::ApiResults,
    pub(crate) mcp: Vec<Measurement>,
    pub(crate) controller: controller::ControllerResults,
    pub(crate) crossings: crossings::CrossingResults,
    pub(crate) flux: flux::FluxResults,
    pub(crate) beacons: beacons::BeaconResults,
    pub(crate) fleet: fleet::FleetResults,
}

/// One thing timed.
#[derive(Serialize)]
pub(crate) struct Measurement {
    pub(crate) name: String,
    pub(crate) median_ms: f64,
    pub(crate) min_ms: f64,
    pub(crate) max_ms: f64,
    /// What the API server served for one run (none: nothing was asked of it).
    pub(crate) apiserver_requests: Option<apiserver::Counts>,
}

/// The `p` quantile (0–1) of `sorted`, in milliseconds: the sample at rank
/// round((n − 1) · p); 0 when there are none. Every latency the bench reports uses it.
pub(crate) fn percentile_ms(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// The median, minimum and maximum of `samples`.
fn summarise(
    name: String,
    mut samples: Vec<Duration>,
    apiserver_requests: Option<apiserver::Counts>,
) -> Measurement {
    samples.sort();
    let ms = |d: Option<&Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    Measurement {
        name,
        median_ms: ms(samples.get(samples.len() / 2)),
        min_ms: ms(samples.first()),
        max_ms: ms(samples.last()),
        apiserver_requests,
    }
}

async fn measure(
    root: &Path,
    endpoint: &Endpoint,
    scale: Scale,
    concurrent: Option<usize>,
    releases: Option<usize>,
) -> anyhow::Result<Results> {
    let admin = endpoint.client(Identity::Admin).await?;
    let namespace = scale.namespace();
    seed::seed(&admin, &namespace, scale).await?;

    eprintln!("[bench] the command line, and kubectl…");
    let commands = cli::run(root, endpoint, &admin, &namespace, GATE).await?;

    eprintln!("[bench] hecate-ops in this process, direct and cached…");
    let direct = Ops::new(admin.clone());
    let (cache, driver) = Cache::start(admin.clone());
    let driver = tokio::spawn(driver);
    cache.ready().await;
    let cached = Ops::new(admin.clone()).with_cache(cache);
    let scope = Scope::Namespaces(vec![namespace.clone()]);
    let ops = vec![
        time("Ops::overview", &admin, || direct.overview(&scope)).await?,
        time("Ops::explain", &admin, || direct.explain(&namespace, GATE)).await?,
        time("Ops::namespaces", &admin, || direct.namespaces()).await?,
        time("Ops::overview, cached", &admin, || cached.overview(&scope)).await?,
        time("Ops::explain, cached", &admin, || {
            cached.explain(&namespace, GATE)
        })
        .await?,
    ];
    driver.abort();

    eprintln!("[bench] hecate-api under load…");
    let routes = [
        format!("/api/v1alpha1/namespaces/{namespace}/gates/{GATE}/explain"),
        "/api/v1alpha1/overview".to_string(),
    ];
    let api = load::run(root, endpoint, &admin, &namespace, &routes).await?;

    eprintln!("[bench] hecate-mcp over stdio and HTTP…");
    let mut mcp = mcp::run(
        root,
        &endpoint.dir.join("kubeconfig"),
        &admin,
        &namespace,
        GATE,
    )
    .await?;
    mcp.push(mcp::http(root, endpoint, &admin, &namespace, GATE).await?.0);

    eprintln!("[bench] hecate-controller over a fleet…");
    let controller = controller::run(root, endpoint, &admin, scale).await?;

    eprintln!("[bench] crossings end to end…");
    let crossings = crossings::run(root, endpoint, &admin, scale, concurrent).await?;

    eprintln!("[bench] releases through Flux's own controllers…");
    let flux = flux::run(root, endpoint, &admin, scale, releases).await?;

    eprintln!("[bench] Beacons polling a registry…");
    let beacons = beacons::run(root, endpoint, &admin, scale).await?;

    eprintln!("[bench] a fleet…");
    let fleet = fleet::run(root, endpoint, &admin, scale).await?;

    Ok(Results {
        environment: report::Environment::describe(root).await,
        scale: scale.name(),
        profile: PROFILE,
        namespace,
        gates: PIPELINES * GATES_PER_PIPELINE,
        bundles: scale.bundles(),
        passages: scale.passages(),
        commands,
        ops,
        api,
        mcp,
        controller,
        crossings,
        flux,
        beacons,
        fleet,
    })
}

/// `--only explain`: the seed, then one Gate explained every way a person or an agent
/// asks — the command, ops in process (direct and cached), hecate-mcp over stdio and
/// over HTTP.
async fn measure_explain(
    root: &Path,
    endpoint: &Endpoint,
    scale: Scale,
) -> anyhow::Result<Vec<Measurement>> {
    let admin = endpoint.client(Identity::Admin).await?;
    let namespace = scale.namespace();
    seed::seed(&admin, &namespace, scale).await?;
    let kubeconfig = endpoint.dir.join("kubeconfig");
    let hecate = binary(root, "hecate");
    let args = ["explain", GATE, "-n", &namespace, "-o", "json"];
    let mut measurements = vec![cli::command(&admin, &kubeconfig, &hecate, &args).await?];
    let direct = Ops::new(admin.clone());
    let (cache, driver) = Cache::start(admin.clone());
    let driver = tokio::spawn(driver);
    cache.ready().await;
    let cached = Ops::new(admin.clone()).with_cache(cache);
    measurements.push(time("Ops::explain", &admin, || direct.explain(&namespace, GATE)).await?);
    measurements.push(
        time("Ops::explain, cached", &admin, || {
            cached.explain(&namespace, GATE)
        })
        .await?,
    );
    driver.abort();
    measurements.push(notices_of_a_gate(&admin, &namespace).await?);
    measurements.extend(mcp::run(root, &kubeconfig, &admin, &namespace, GATE).await?);
    measurements.push(mcp::http(root, endpoint, &admin, &namespace, GATE).await?.0);
    Ok(measurements)
}

/// What the Gate reconcile adds when a Notifier hears the namespace (DECISION 166):
/// Explain over the Gate's snapshot and `rules::notice::of_gate` — in process, no
/// request, from what the reconcile already holds.
async fn notices_of_a_gate(admin: &kube::Client, namespace: &str) -> anyhow::Result<Measurement> {
    use hecate_ops::rules::{NamespaceSnapshot, explain, notice};
    use hecate_types::{Bundle, Gate, Passage};
    use kube::api::Api;
    let list = Default::default();
    let gate = Api::<Gate>::namespaced(admin.clone(), namespace)
        .get(GATE)
        .await?;
    let bundles = Api::<Bundle>::namespaced(admin.clone(), namespace)
        .list(&list)
        .await?
        .items;
    let passages = Api::<Passage>::namespaced(admin.clone(), namespace)
        .list(&list)
        .await?
        .items;
    let passages = passages
        .into_iter()
        .filter(|p| p.spec.gate == GATE)
        .collect();
    let snapshot = std::sync::Arc::new(NamespaceSnapshot::new(
        namespace.to_string(),
        vec![gate],
        bundles,
        passages,
    ));
    time(
        "a Gate's notices (Explain + rules::notice::of_gate)",
        admin,
        || {
            let snapshot = snapshot.clone();
            async move {
                let now = jiff::Timestamp::now();
                let told = snapshot.gate(GATE).map_or(0, |gate| {
                    let explanation = explain::explain(&snapshot, gate, now);
                    notice::of_gate(&snapshot, gate, &explanation, now).len()
                });
                Ok::<usize, std::io::Error>(told)
            }
        },
    )
    .await
}

/// The Overview of the seeded namespace: `Ops::overview` direct and cached, and
/// hecate-api's `/overview` under load as alice.
async fn measure_overview(
    root: &Path,
    endpoint: &Endpoint,
    scale: Scale,
) -> anyhow::Result<(Vec<Measurement>, load::ApiResults)> {
    let admin = endpoint.client(Identity::Admin).await?;
    let namespace = scale.namespace();
    seed::seed(&admin, &namespace, scale).await?;
    let direct = Ops::new(admin.clone());
    let (cache, driver) = Cache::start(admin.clone());
    let driver = tokio::spawn(driver);
    cache.ready().await;
    let cached = Ops::new(admin.clone()).with_cache(cache);
    let scope = Scope::Namespaces(vec![namespace.clone()]);
    let ops = vec![
        time("Ops::overview", &admin, || direct.overview(&scope)).await?,
        time("Ops::overview, cached", &admin, || cached.overview(&scope)).await?,
    ];
    driver.abort();
    let routes = ["/api/v1alpha1/overview".to_string()];
    let api = load::run(root, endpoint, &admin, &namespace, &routes).await?;
    Ok((ops, api))
}

/// `RUNS` runs of an in-process call after a warm-up; the API server's count is
/// taken around the last.
async fn time<T, E, F, Fut>(
    name: &str,
    admin: &kube::Client,
    mut call: F,
) -> anyhow::Result<Measurement>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    call().await?;
    let mut samples = Vec::with_capacity(RUNS);
    let mut requests = apiserver::Counts::default();
    for i in 0..RUNS {
        let before = if i == RUNS - 1 {
            Some(apiserver::counts(admin).await?)
        } else {
            None
        };
        let started = Instant::now();
        call().await?;
        samples.push(started.elapsed());
        if let Some(before) = before {
            tokio::time::sleep(Duration::from_millis(100)).await;
            requests = before.until(apiserver::counts(admin).await?);
        }
    }
    Ok(summarise(name.into(), samples, Some(requests)))
}

/// Creates `namespace` labelled `<label>=true`: a bench part's controller watches only
/// its own namespace (`--watch-label-selector`), never the seed's or another part's.
pub(crate) async fn shard_namespace(
    admin: &kube::Client,
    namespace: &str,
    label: &str,
) -> anyhow::Result<()> {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{Api, ObjectMeta, PostParams};
    let object = Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.to_string()),
            labels: Some([(label.to_string(), "true".to_string())].into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(admin.clone())
        .create(&PostParams::default(), &object)
        .await?;
    Ok(())
}
