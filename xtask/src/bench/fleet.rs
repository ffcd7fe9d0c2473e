//! `--scale fleet` (or `--only fleet`): a platform team's installation — many
//! namespaces, each with ten Beacons and a pipeline of ten Gates, fifty releases per
//! Beacon with their crossings — and every process measured over it at once:
//! hecate-controller as one replica and as two shards, hecate-api for a person who
//! may read one namespace and one who may read them all, `hecate status` for one
//! namespace and for all, and `hecate-mcp --listen`.
//!
//! The fleet (namespaces `fleet-<scale>-<i>`) is seeded once, with progress, and reused
//! when complete; its Gates' conditions are cleared before each controller run so that
//! "every Gate reconciled once" is that run's. The probes (an automatic Gate `auto`
//! over Beacon `fresh`, crossing with one `http` step to a loopback server) are made
//! and removed by each run.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::{StreamExt as _, TryStreamExt as _};
use hecate_testenv::{Endpoint, Identity};
use hecate_types::{
    Admission, Artifact, Beacon, BeaconSpec, Bundle, BundleOrigin, BundleSpec, BundleStatus, Gate,
    GateCrossing, GateOccupant, GateSpec, GateStatus, ImageWatch, Passage, PassagePhase,
    PassageSpec, PassageStatus, PassageTemplate, Step, Time, WatchSource, digest, wellknown,
};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::ResourceExt as _;
use kube::api::{Api, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use serde::Serialize;

use super::controller::{Process, reset_probes};
use super::{Measurement, Scale};

/// The label that puts a fleet namespace in shard `<scale>-a` or `<scale>-b`.
const SHARD_LABEL: &str = "hecate.dev/bench-fleet-shard";
/// Beacons, and Gates in the pipeline, per namespace.
const BEACONS: usize = 10;
const GATES: usize = 10;
/// Releases per Beacon: each a Bundle, and a Passage at the deepest Gate it reached.
const RELEASES: usize = 50;
/// What the Gates and Beacons keep (enough for the seeded history: the controller's
/// retention must not eat the seed).
const RETAIN: i32 = 60;
/// Writes in flight while seeding.
const CONCURRENCY: usize = 48;
/// The marker of a complete seed, in the first namespace.
const COMPLETE: &str = "bench-fleet-complete";

impl Scale {
    fn fleet_size(self) -> usize {
        match self {
            Self::Small => 4,
            Self::Large => 50,
            Self::Fleet => 200,
        }
    }

    /// How long idling is watched, and each API load level lasts.
    fn fleet_window(self) -> (Duration, Duration) {
        match self {
            Self::Small => (Duration::from_secs(10), Duration::from_secs(2)),
            Self::Large | Self::Fleet => (Duration::from_secs(60), Duration::from_secs(10)),
        }
    }
}

/// What one run measured.
#[derive(Serialize)]
pub(crate) struct FleetResults {
    pub(crate) namespaces: usize,
    pub(crate) gates: usize,
    pub(crate) beacons: usize,
    pub(crate) bundles: usize,
    pub(crate) passages: usize,
    /// Seeding, when this run seeded: objects written, and how fast.
    pub(crate) seeded: Option<Seeded>,
    /// One replica over the fleet, then each of two shards.
    pub(crate) controllers: Vec<ControllerRun>,
    /// With one replica and the fleet at rest: one Bundle → its crossing succeeded.
    pub(crate) one_crossing_ms: f64,
    /// Then one Bundle in every namespace at once, each to its crossing succeeded.
    pub(crate) at_once: usize,
    pub(crate) at_once_p50_ms: f64,
    pub(crate) at_once_p99_ms: f64,
    pub(crate) at_once_max_ms: f64,
    /// hecate-api over the fleet.
    pub(crate) api_ready_ms: f64,
    pub(crate) api_rss_mib: f64,
    pub(crate) api_peak_rss_mib: f64,
    pub(crate) api: Vec<super::load::Level>,
    /// The UI's first page (`/` and the Overview it asks for), per person.
    pub(crate) first_page: Vec<Measurement>,
    /// `hecate status` for one namespace and for all.
    pub(crate) commands: Vec<Measurement>,
    /// `hecate-mcp --listen`: `why_stuck`, and its peak memory.
    pub(crate) mcp: Measurement,
    pub(crate) mcp_peak_rss_mib: f64,
}

#[derive(Serialize)]
pub(crate) struct Seeded {
    pub(crate) objects: usize,
    pub(crate) seconds: f64,
    pub(crate) per_second: f64,
}

/// One controller process over its share of the fleet.
#[derive(Serialize)]
pub(crate) struct ControllerRun {
    pub(crate) name: String,
    pub(crate) namespaces: usize,
    pub(crate) gates: usize,
    /// From starting the process to each of its Gates reconciled once.
    pub(crate) first_pass_ms: f64,
    /// Requests it sent in that time, per Gate (start-up's lists included).
    pub(crate) requests_per_gate: f64,
    /// Requests per minute with nothing to do.
    pub(crate) idle_requests_per_minute: f64,
    /// Resident memory at rest, and its peak.
    pub(crate) rss_mib: f64,
    pub(crate) peak_rss_mib: f64,
}

pub(crate) async fn run(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    scale: Scale,
) -> anyhow::Result<FleetResults> {
    let namespaces: Vec<String> = (0..scale.fleet_size())
        .map(|i| format!("fleet-{}-{i}", scale.name()))
        .collect();
    let shard = |i: usize| {
        format!(
            "{}-{}",
            scale.name(),
            if i.is_multiple_of(2) { "a" } else { "b" }
        )
    };
    let seeded = seed(admin, &namespaces, &shard).await?;
    let (idle_window, level) = scale.fleet_window();
    let gates = namespaces.len() * GATES;

    eprintln!("[bench] fleet: hecate-controller, one replica…");
    // As a single installation runs: one watch per kind across the cluster (a selector
    // that names no values watches the cluster and keeps what it selects), holding
    // this scale's fleet and not another scale's left on the same control plane.
    let others: Vec<String> = [Scale::Small, Scale::Large, Scale::Fleet]
        .into_iter()
        .filter(|other| *other != scale)
        .flat_map(|other| ["a", "b"].map(|half| format!("{}-{half}", other.name())))
        .collect();
    let one_replica = format!("{SHARD_LABEL},{SHARD_LABEL} notin ({})", others.join(","));
    let mut controllers = Vec::new();
    clear_conditions(admin, &namespaces).await?;
    let (one, process) = controller_started(
        root,
        endpoint,
        admin,
        "one replica",
        &one_replica,
        &namespaces,
    )
    .await?;
    controllers.push(idle(&process, one, idle_window).await?);
    let receiver = Receiver::start().await?;
    let (one_crossing, at_once) = crossings(admin, &namespaces, &receiver).await?;
    drop(process);
    reset_probes(admin, &namespaces).await?;

    eprintln!("[bench] fleet: hecate-controller, two shards…");
    let halves: [Vec<String>; 2] = [0, 1].map(|half| {
        namespaces
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == half)
            .map(|(_, ns)| ns.clone())
            .collect()
    });
    clear_conditions(admin, &namespaces).await?;
    // Each shard names its namespaces' label value: one watch per kind per namespace.
    let (shard_a, shard_b) = (
        format!("{SHARD_LABEL} in ({})", shard(0)),
        format!("{SHARD_LABEL} in ({})", shard(1)),
    );
    let (a, b) = futures::try_join!(
        controller_started(root, endpoint, admin, "shard a", &shard_a, &halves[0]),
        controller_started(root, endpoint, admin, "shard b", &shard_b, &halves[1]),
    )?;
    let ((run_a, process_a), (run_b, process_b)) = (a, b);
    let before = (process_a.requests().await?, process_b.requests().await?);
    tokio::time::sleep(idle_window).await;
    let per_minute = 60.0 / idle_window.as_secs_f64();
    for (mut run, process, before) in [(run_a, &process_a, before.0), (run_b, &process_b, before.1)]
    {
        run.idle_requests_per_minute = (process.requests().await? - before) * per_minute;
        (run.rss_mib, run.peak_rss_mib) = process.memory();
        controllers.push(run);
    }
    drop((process_a, process_b));

    eprintln!("[bench] fleet: hecate-api, hecate status, hecate-mcp…");
    let first = &namespaces[0];
    super::load::grant_viewer(admin, Identity::Alice, Some(first)).await?;
    super::load::grant_viewer(admin, Identity::Carol, None).await?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let server = crate::api_server::start(
        &super::binary(root, "hecate-api"),
        std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        &endpoint.dir.join("kubeconfig"),
        None,
    )
    .await?;
    let (api_rss, _) = super::controller::memory(server.pid());
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()?;
    let explain = format!(
        "/api/v1alpha1/namespaces/{first}/gates/g{}/explain",
        GATES - 1
    );
    let overview = "/api/v1alpha1/overview".to_string();
    let mut api = Vec::new();
    let mut first_page = Vec::new();
    for who in [Identity::Alice, Identity::Carol] {
        let token = endpoint.tokens[&who].clone();
        for route in [&overview, &explain] {
            super::load::warm(&http, &server.base, route, &token).await?;
            let mut result =
                super::load::level(&http, &server.base, route, &token, 32, level).await;
            result.route = format!("{route} as {who}");
            api.push(result);
        }
        first_page.push(page(&http, &server.base, &token, who).await?);
    }
    let (_, api_peak) = super::controller::memory(server.pid());
    let api_ready_ms = server.ready_after.as_secs_f64() * 1000.0;
    drop(server);

    let kubeconfig = endpoint.dir.join("kubeconfig");
    let hecate = super::binary(root, "hecate");
    let commands = vec![
        super::cli::command(
            admin,
            &kubeconfig,
            &hecate,
            &["status", "-n", first, "-o", "json"],
        )
        .await?,
        super::cli::command(admin, &kubeconfig, &hecate, &["status", "-A", "-o", "json"]).await?,
    ];
    let (mcp, mcp_peak_rss_mib) =
        super::mcp::http(root, endpoint, admin, first, &format!("g{}", GATES - 1)).await?;

    Ok(FleetResults {
        namespaces: namespaces.len(),
        gates,
        beacons: namespaces.len() * BEACONS,
        bundles: namespaces.len() * BEACONS * RELEASES,
        passages: namespaces.len() * BEACONS * RELEASES,
        seeded,
        controllers,
        one_crossing_ms: one_crossing.as_secs_f64() * 1000.0,
        at_once: at_once.len(),
        at_once_p50_ms: super::percentile_ms(&at_once, 0.5),
        at_once_p99_ms: super::percentile_ms(&at_once, 0.99),
        at_once_max_ms: super::percentile_ms(&at_once, 1.0),
        api_ready_ms,
        api_rss_mib: api_rss,
        api_peak_rss_mib: api_peak,
        api,
        first_page,
        commands,
        mcp,
        mcp_peak_rss_mib,
    })
}

/// Starts a controller over the namespaces `selector` matches and waits until each
/// Gate of `namespaces` has been reconciled once.
async fn controller_started(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    name: &str,
    selector: &str,
    namespaces: &[String],
) -> anyhow::Result<(ControllerRun, Process)> {
    let started = Instant::now();
    let process = Process::start(
        root,
        endpoint,
        &format!("bench-fleet-{}", name.replace(' ', "-")),
        selector,
    )?;
    process.serving().await?;
    let gates = namespaces.len() * GATES;
    loop {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "{name} did not reconcile {gates} Gates within 10 minutes (its log: {})",
            process.log.display()
        );
        if reconciled(admin, namespaces).await? >= gates {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let first_pass = started.elapsed();
    let requests = process.requests().await?;
    eprintln!(
        "[bench] {name}: {gates} Gates reconciled in {first_pass:.1?}, {requests:.0} requests"
    );
    Ok((
        ControllerRun {
            name: name.into(),
            namespaces: namespaces.len(),
            gates,
            first_pass_ms: first_pass.as_secs_f64() * 1000.0,
            requests_per_gate: requests / gates as f64,
            idle_requests_per_minute: 0.0,
            rss_mib: 0.0,
            peak_rss_mib: 0.0,
        },
        process,
    ))
}

/// Watches `process` idle for `window` after the start-up's last wave, and adds its
/// requests per minute and memory to `run`.
async fn idle(
    process: &Process,
    mut run: ControllerRun,
    window: Duration,
) -> anyhow::Result<ControllerRun> {
    tokio::time::sleep(Duration::from_secs(5)).await;
    let before = process.requests().await?;
    tokio::time::sleep(window).await;
    run.idle_requests_per_minute =
        (process.requests().await? - before) * 60.0 / window.as_secs_f64();
    (run.rss_mib, run.peak_rss_mib) = process.memory();
    eprintln!(
        "[bench] {}: {:.0} requests per idle minute, {:.1} MiB resident",
        run.name, run.idle_requests_per_minute, run.rss_mib
    );
    Ok(run)
}

/// With the fleet at rest: an automatic Gate `auto` in every namespace; one Bundle in
/// the first, timed to its crossing; then one in every other namespace at once.
async fn crossings(
    admin: &kube::Client,
    namespaces: &[String],
    receiver: &Receiver,
) -> anyhow::Result<(Duration, Vec<Duration>)> {
    reset_probes(admin, namespaces).await?;
    for namespace in namespaces {
        Api::<Gate>::namespaced(admin.clone(), namespace)
            .create(&PostParams::default(), &auto_gate(&receiver.url))
            .await?;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let one = cross(admin, &namespaces[..1]).await?;
    let rest = cross(admin, &namespaces[1..]).await?;
    Ok((one.first().copied().unwrap_or_default(), rest))
}

/// Creates Bundle `fresh-1` in each of `namespaces` at once and times each to its
/// crossing (`auto-1`) seen succeeded, sorted: polled with one LIST every 50 ms, so
/// each time is late by up to a poll and a LIST.
async fn cross(admin: &kube::Client, namespaces: &[String]) -> anyhow::Result<Vec<Duration>> {
    let started = Instant::now();
    futures::stream::iter(namespaces)
        .map(|namespace| async move {
            Api::<Bundle>::namespaced(admin.clone(), namespace)
                .create(&PostParams::default(), &fresh_bundle())
                .await
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<Vec<_>>()
        .await?;
    let mut crossed: BTreeMap<String, Duration> = BTreeMap::new();
    while crossed.len() < namespaces.len() {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(300),
            "{} of {} crossings succeeded within 5 minutes",
            crossed.len(),
            namespaces.len()
        );
        let passages = Api::<Passage>::all(admin.clone())
            .list(&ListParams::default().labels(&format!("{}=auto", wellknown::LABEL_GATE)))
            .await?;
        for passage in passages.items {
            let namespace = passage.namespace().unwrap_or_default();
            if namespaces.contains(&namespace) && passage.phase() == PassagePhase::Succeeded {
                crossed
                    .entry(namespace)
                    .or_insert_with(|| started.elapsed());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut times: Vec<Duration> = crossed.into_values().collect();
    times.sort();
    Ok(times)
}

/// Removes the probes: Gates `auto`, Bundles `fresh-1`, their Passages.
fn auto_gate(url: &str) -> Gate {
    Gate::new(
        "auto",
        GateSpec {
            admits: vec![Admission {
                from: BundleOrigin {
                    beacon: "fresh".into(),
                },
                ..Admission::default()
            }],
            passage: Some(PassageTemplate {
                steps: vec![Step {
                    uses: "http".into(),
                    with: Some(serde_json::json!({"url": url})),
                    ..Step::default()
                }],
            }),
            auto: true,
            ..GateSpec::default()
        },
    )
}

fn fresh_bundle() -> Bundle {
    let artifacts = vec![Artifact::image(
        "ghcr.io/acme/fresh",
        "1.0.0",
        format!("sha256:{:064x}", 1),
    )];
    let mut bundle = Bundle::new(
        "fresh-1",
        BundleSpec {
            beacon: "fresh".into(),
            digest: digest::content_digest(&artifacts),
            artifacts,
            ..BundleSpec::default()
        },
    );
    bundle
        .labels_mut()
        .insert(wellknown::LABEL_BEACON.into(), "fresh".into());
    bundle
}

/// A loopback HTTP server that answers every request 200: what the probes' step calls.
struct Receiver {
    url: String,
    _task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start() -> anyhow::Result<Self> {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/deployed", listener.local_addr()?);
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buffer = [0_u8; 4096];
                    // One request per connection: read its head, answer, close.
                    let _ = socket.read(&mut buffer).await;
                    let _ = socket
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                        )
                        .await;
                });
            }
        });
        Ok(Self { url, _task: task })
    }
}

/// The UI's first page as `who` sees it: the page, then the Overview it asks for.
async fn page(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    who: Identity,
) -> anyhow::Result<Measurement> {
    let mut samples = Vec::new();
    for _ in 0..=super::RUNS {
        let started = Instant::now();
        for route in ["/", "/api/v1alpha1/overview"] {
            let response = http
                .get(format!("{base}{route}"))
                .bearer_auth(token)
                .send()
                .await?;
            anyhow::ensure!(
                response.status().is_success(),
                "{route} answered {}",
                response.status()
            );
            let _ = response.bytes().await?;
        }
        samples.push(started.elapsed());
    }
    samples.remove(0);
    Ok(super::summarise(
        format!("the UI's first page (/ and the Overview) as {who}"),
        samples,
        None,
    ))
}

/// How many of `namespaces`' pipeline Gates have a Ready condition (one LIST).
async fn reconciled(admin: &kube::Client, namespaces: &[String]) -> anyhow::Result<usize> {
    let gates = Api::<Gate>::all(admin.clone())
        .list(&ListParams::default())
        .await?;
    Ok(gates
        .items
        .iter()
        .filter(|g| g.name_any() != "auto")
        .filter(|g| namespaces.contains(&g.namespace().unwrap_or_default()))
        .filter(|g| g.status.as_ref().is_some_and(|s| !s.conditions.is_empty()))
        .count())
}

/// Clears the Gates' conditions, so a controller's first pass shows.
async fn clear_conditions(admin: &kube::Client, namespaces: &[String]) -> anyhow::Result<()> {
    let patch = serde_json::json!({"status": {"conditions": null}});
    let names: Vec<(String, String)> = namespaces
        .iter()
        .flat_map(|ns| (0..GATES).map(move |g| (ns.clone(), format!("g{g}"))))
        .collect();
    futures::stream::iter(names)
        .map(|(namespace, name)| {
            let patch = patch.clone();
            async move {
                Api::<Gate>::namespaced(admin.clone(), &namespace)
                    .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map(|_| ())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<()>()
        .await?;
    Ok(())
}

/// Writes the fleet unless a complete one is there; says how it went.
async fn seed(
    admin: &kube::Client,
    namespaces: &[String],
    shard: &impl Fn(usize) -> String,
) -> anyhow::Result<Option<Seeded>> {
    hecate_testenv::install_crds(admin)
        .await
        .context("installing the CRDs")?;
    let first = &namespaces[0];
    if Api::<ConfigMap>::namespaced(admin.clone(), first)
        .get_opt(COMPLETE)
        .await
        .ok()
        .flatten()
        .is_some()
    {
        eprintln!(
            "[bench] reusing the fleet ({} namespaces)",
            namespaces.len()
        );
        label(admin, namespaces, shard).await?;
        return Ok(None);
    }
    let per_namespace = BEACONS + GATES + 2 * BEACONS * RELEASES;
    let total = per_namespace * namespaces.len();
    eprintln!(
        "[bench] seeding the fleet: {} namespaces, {} Gates, {} Beacons, {} Bundles, {} Passages…",
        namespaces.len(),
        namespaces.len() * GATES,
        namespaces.len() * BEACONS,
        namespaces.len() * BEACONS * RELEASES,
        namespaces.len() * BEACONS * RELEASES,
    );
    let written = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let progress = tokio::spawn({
        let written = written.clone();
        async move {
            loop {
                tokio::time::sleep(Duration::from_secs(10)).await;
                let done = written.load(Ordering::Relaxed);
                let rate = done as f64 / started.elapsed().as_secs_f64();
                eprintln!(
                    "[bench] seeded {done} of {total} objects ({rate:.0}/s, about {:.0} s to go)",
                    (total - done.min(total)) as f64 / rate.max(1.0)
                );
            }
        }
    });
    let result = async {
        label(admin, namespaces, shard).await?;
        for namespace in namespaces {
            seed_namespace(admin, namespace, &written).await?;
        }
        anyhow::Ok(())
    }
    .await;
    progress.abort();
    result?;
    let marker = ConfigMap {
        metadata: ObjectMeta {
            name: Some(COMPLETE.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(admin.clone(), first)
        .create(&PostParams::default(), &marker)
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "[bench] seeded {total} objects in {seconds:.0} s ({:.0}/s)",
        total as f64 / seconds
    );
    Ok(Some(Seeded {
        objects: total,
        seconds,
        per_second: total as f64 / seconds,
    }))
}

/// Creates the namespaces (if missing) with their shard label.
async fn label(
    admin: &kube::Client,
    namespaces: &[String],
    shard: &impl Fn(usize) -> String,
) -> anyhow::Result<()> {
    for (i, name) in namespaces.iter().enumerate() {
        let object = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some([(SHARD_LABEL.to_string(), shard(i))].into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(admin.clone())
            .patch(
                name,
                &PatchParams::apply("hecate-bench").force(),
                &Patch::Apply(&object),
            )
            .await?;
    }
    Ok(())
}

/// One namespace of the fleet: Beacons `app-0…9`, the pipeline `g0…g9` admitting them
/// all, and per Beacon fifty releases that crossed further the older they are, each
/// with a Passage at the deepest Gate it reached (every tenth of those failed one
/// Gate further instead).
async fn seed_namespace(
    admin: &kube::Client,
    namespace: &str,
    written: &AtomicUsize,
) -> anyhow::Result<()> {
    let now = jiff::Timestamp::now();
    let at = |minutes_ago: usize| {
        Time(now - jiff::SignedDuration::from_mins(i64::try_from(minutes_ago).unwrap_or(0)))
    };
    let depth = |r: usize| ((r * GATES) / RELEASES + 1).min(GATES);
    let mut beacons = Vec::new();
    let mut bundles = Vec::new();
    let mut passages = Vec::new();
    let mut names: Vec<Vec<String>> = Vec::new();
    for k in 0..BEACONS {
        let beacon = format!("app-{k}");
        beacons.push(Beacon::new(
            &beacon,
            BeaconSpec {
                watch: vec![WatchSource {
                    image: Some(ImageWatch {
                        repo: format!("ghcr.io/acme/{beacon}"),
                        ..ImageWatch::default()
                    }),
                    ..WatchSource::default()
                }],
                retain: Some(RETAIN),
                // Polling nothing: the fleet's releases are seeded.
                suspend: true,
                ..BeaconSpec::default()
            },
        ));
        let mut of_beacon = Vec::new();
        for r in 0..RELEASES {
            let artifacts = vec![Artifact::image(
                format!("ghcr.io/acme/{beacon}"),
                format!("1.{r}.0"),
                format!("sha256:{:064x}", k * 100_000 + r),
            )];
            let content = digest::content_digest(&artifacts);
            let name = digest::bundle_name(&beacon, &content);
            let mut bundle = Bundle::new(
                &name,
                BundleSpec {
                    beacon: beacon.clone(),
                    digest: content,
                    alias: String::new(),
                    artifacts,
                },
            );
            bundle
                .labels_mut()
                .insert(wellknown::LABEL_BEACON.into(), beacon.clone());
            let failed = r % 10 == 9 && depth(r) < GATES;
            bundle.status = Some(BundleStatus {
                cleared: (0..depth(r))
                    .map(|g| GateCrossing {
                        gate: format!("g{g}"),
                        passage: format!("g{g}-{beacon}-{r}"),
                        at: at(RELEASES - r),
                        actor: "controller".into(),
                        reason: String::new(),
                    })
                    .collect(),
                ..BundleStatus::default()
            });
            let g = if failed { depth(r) } else { depth(r) - 1 };
            let gate = format!("g{g}");
            let mut passage = Passage::new(
                &format!("{gate}-{beacon}-{r}"),
                PassageSpec {
                    gate: gate.clone(),
                    bundle: name.clone(),
                    steps: vec![Step {
                        uses: "http".into(),
                        with: Some(serde_json::json!({"url": "https://deploy.example/hook"})),
                        ..Step::default()
                    }],
                    actor: "controller".into(),
                    ..PassageSpec::default()
                },
            );
            passage
                .labels_mut()
                .insert(wellknown::LABEL_GATE.into(), gate.clone());
            passage
                .labels_mut()
                .insert(wellknown::LABEL_BUNDLE.into(), name.clone());
            passage.status = Some(PassageStatus {
                phase: Some(if failed {
                    PassagePhase::Failed
                } else {
                    PassagePhase::Succeeded
                }),
                message: if failed {
                    "step http: the hook answered 503".into()
                } else {
                    format!("crossed {gate}")
                },
                started_at: Some(at(RELEASES - r)),
                finished_at: Some(at(RELEASES - r)),
                ..PassageStatus::default()
            });
            bundles.push(bundle);
            passages.push(passage);
            of_beacon.push(name);
        }
        names.push(of_beacon);
    }
    let gates: Vec<Gate> = (0..GATES)
        .map(|g| {
            let mut gate = Gate::new(
                &format!("g{g}"),
                GateSpec {
                    admits: (0..BEACONS)
                        .map(|k| Admission {
                            from: BundleOrigin {
                                beacon: format!("app-{k}"),
                            },
                            after: if g == 0 {
                                vec![]
                            } else {
                                vec![format!("g{}", g - 1)]
                            },
                            require_approval: g == GATES - 1,
                            approvals: None,
                        })
                        .collect(),
                    passage: Some(PassageTemplate {
                        steps: vec![Step {
                            uses: "http".into(),
                            with: Some(serde_json::json!({"url": "https://deploy.example/hook"})),
                            ..Step::default()
                        }],
                    }),
                    auto: g == 0,
                    retain: Some(RETAIN),
                    ..GateSpec::default()
                },
            );
            // Its history: the newest releases that reached it, newest first.
            let history: Vec<GateOccupant> = (0..RELEASES)
                .rev()
                .filter(|r| depth(*r) > g)
                .flat_map(|r| (0..BEACONS).map(move |k| (r, k)))
                .take(10)
                .map(|(r, k)| GateOccupant {
                    bundle: names[k][r].clone(),
                    digest: String::new(),
                    passage: format!("g{g}-app-{k}-{r}"),
                    entered_at: at(RELEASES - r),
                    actor: "controller".into(),
                    verified: None,
                })
                .collect();
            gate.status = Some(GateStatus {
                current: history.first().cloned(),
                history,
                ..GateStatus::default()
            });
            gate
        })
        .collect();
    use super::seed::write_all;
    write_all(admin, namespace, beacons, written).await?;
    write_all(admin, namespace, gates, written).await?;
    write_all(admin, namespace, bundles, written).await?;
    write_all(admin, namespace, passages, written).await?;
    Ok(())
}
