//! Crossings end to end, as users run them: `hecate-controller` as its own process,
//! a Beacon on a local application repository, Gates of the spec's §10.1 shape (clone
//! the fleet, edit `values.yaml`, commit, push, wait for the stand-in Flux, call a
//! loopback receiver) and a loop playing Flux. Measured: one crossing alone, from the
//! commit being visible to the Beacon to the Passage succeeded, with what it cost in
//! requests; twenty releases one after another, with what retention leaves after them
//! checked against what the Gate and the Beacon declare (DECISION 132); then many at
//! once — one Bundle, that many automatic Gates — and the controller's memory while
//! they run.
//!
//! Each run uses a new namespace and removes it afterwards.

use std::path::Path;
use std::time::{Duration, Instant};

use hecate_testenv::world::{self, FluxPlayer, Pipeline, Repository, Stage};
use hecate_testenv::{Endpoint, apply_manifest};
use hecate_types::{Beacon, Bundle, Passage, PassagePhase, wellknown};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde::Serialize;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::Scale;
use super::controller::{Breakdown, Process};

/// The label that makes a run's namespace the benched controller's shard.
const SHARD_LABEL: &str = "hecate.dev/bench-crossings";

/// What one run measured.
#[derive(Serialize)]
pub(crate) struct CrossingResults {
    /// The Gate applied over a new commit → its Bundle exists.
    pub(crate) one_bundle_ms: f64,
    /// → the Passage exists.
    pub(crate) one_passage_ms: f64,
    /// → the Passage succeeded (six steps, Flux played every 200 ms).
    pub(crate) one_succeeded_ms: f64,
    /// Requests the controller sent for it, by its own count (Beacon, Gate, Passage).
    pub(crate) one_requests: f64,
    /// Those by verb and resource.
    pub(crate) one_breakdown: Breakdown,
    /// Releases carried through the whole loop, one after another.
    pub(crate) releases: usize,
    /// A commit pushed and the Beacon asked to look → its Bundle exists (the Beacon's
    /// share), p50 / p99.
    pub(crate) loop_beacon_p50_ms: f64,
    pub(crate) loop_beacon_p99_ms: f64,
    /// Bundle exists → the Gate's Passage exists (the Gate's share).
    pub(crate) loop_gate_p50_ms: f64,
    pub(crate) loop_gate_p99_ms: f64,
    /// Passage exists → succeeded (the steps' share).
    pub(crate) loop_steps_p50_ms: f64,
    pub(crate) loop_steps_p99_ms: f64,
    /// The whole loop: commit seen → dev crossed.
    pub(crate) loop_total_p50_ms: f64,
    pub(crate) loop_total_p99_ms: f64,
    /// Requests the controller sent per release.
    pub(crate) loop_requests_per_release: f64,
    /// Requests the controller sent in 10 s of idling afterwards.
    pub(crate) loop_idle_requests: f64,
    /// After the releases: `solo`'s Passages and Beacon `app`'s Bundles left, with what
    /// the retention declares (DECISION 132).
    pub(crate) retained: Retained,
    /// How many crossings ran at once.
    pub(crate) concurrent: usize,
    /// Their Gates applied → every Passage succeeded.
    pub(crate) concurrent_all_ms: f64,
    /// Crossings finished per second over that time.
    pub(crate) concurrent_per_second: f64,
    /// Requests the controller sent per crossing among them.
    pub(crate) concurrent_requests_per_crossing: f64,
    /// Those by verb and resource, per crossing.
    pub(crate) concurrent_breakdown: Breakdown,
    /// Resident memory at the end, and its peak.
    pub(crate) rss_mib: f64,
    pub(crate) peak_rss_mib: f64,
}

/// What retention left after the releases, beside what it declares.
#[derive(Serialize)]
pub(crate) struct Retained {
    /// `solo`'s finished Passages left, and its `spec.retain` (Passages it no longer
    /// names), and how many of them it names (its occupant's and its history's).
    pub(crate) passages: usize,
    pub(crate) gate_retain: usize,
    pub(crate) named: usize,
    /// Beacon `app`'s Bundles left, and its `spec.retain` (Bundles nothing refers to).
    pub(crate) bundles: usize,
    pub(crate) beacon_retain: usize,
    /// Of those Bundles, how many something refers to: a Passage left, or `solo`'s
    /// current occupant or history.
    pub(crate) referenced: usize,
}

/// What the loop's Gate and Beacon keep: small, so that twenty releases collect.
const GATE_RETAIN: usize = 5;
const BEACON_RETAIN: usize = 3;

impl Scale {
    fn concurrent_crossings(self) -> usize {
        match self {
            Self::Small => 5,
            Self::Large | Self::Fleet => 50,
        }
    }
}

/// Runs the crossings with the scale's number at once, or `concurrent` if given.
pub(crate) async fn run(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    scale: Scale,
    concurrent: Option<usize>,
) -> anyhow::Result<CrossingResults> {
    let namespace = format!(
        "bench-crossings-{}-{}",
        scale.name(),
        jiff::Timestamp::now().as_second()
    );
    let many = concurrent.unwrap_or_else(|| scale.concurrent_crossings());
    let gates: Vec<String> = std::iter::once("solo".to_string())
        .chain((0..many).map(|i| format!("g{i}")))
        .collect();
    let environments: Vec<&str> = gates.iter().map(String::as_str).collect();

    let dir = endpoint.dir.join("bench-crossings");
    std::fs::create_dir_all(&dir)?;
    let app = Repository::create(&dir, "app", &["main"], &[("VERSION", "1.0.0\n")]).await?;
    let branches: Vec<String> = gates.iter().map(|g| format!("env/{g}")).collect();
    let branches: Vec<&str> = branches.iter().map(String::as_str).collect();
    let fleet = Repository::create(
        &dir,
        "fleet",
        &branches,
        &[(
            "values.yaml",
            "# app, as deployed\napp:\n  image: ghcr.io/acme/app\n  revision: none\nreplicas: 2\n",
        )],
    )
    .await?;

    super::shard_namespace(admin, &namespace, SHARD_LABEL).await?;
    let result = measure(
        root,
        endpoint,
        admin,
        &namespace,
        &app,
        fleet,
        &environments,
    )
    .await;
    Api::<Namespace>::all(admin.clone())
        .delete(&namespace, &DeleteParams::background())
        .await?;
    result
}

async fn measure(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    namespace: &str,
    app: &Repository,
    fleet: Repository,
    environments: &[&str],
) -> anyhow::Result<CrossingResults> {
    world::kustomizations(admin, namespace, environments).await?;
    let fleet_url = fleet.url.clone();
    let _flux = FluxPlayer::start(admin.clone(), namespace, fleet, environments);
    let hook = receiver().await?;
    let process = Process::start(
        root,
        endpoint,
        "bench-crossings",
        &format!("{SHARD_LABEL}=true"),
    )?;
    process.serving().await?;
    // Let the controller's start-up (its first lists, the shard's namespace) settle.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pipeline = |stages| Pipeline {
        namespace,
        beacon: "app",
        app: &app.url,
        fleet: &fleet_url,
        hook: Some(&hook),
        stages,
        flux: world::Flux::StandIn,
    };
    let passages = Api::<Passage>::namespaced(admin.clone(), namespace);
    let bundles = Api::<Bundle>::namespaced(admin.clone(), namespace);

    // One crossing alone: the Beacon finds the commit, the Gate opens a Passage, the
    // steps run.
    let before = process.requests_by_kind().await?;
    let started = Instant::now();
    let solo = [Stage {
        name: "solo",
        after: None,
        auto: true,
        approval: world::Approval::No,
        fan_out: None,
    }];
    apply_manifest(admin, &pipeline(&solo).manifest(), false).await?;
    let mut bundle_at = None;
    let mut passage_at = None;
    loop {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(120),
            "the crossing of solo did not finish within 2 minutes (the controller's log: {})",
            process.log.display()
        );
        if bundle_at.is_none() && !bundles.list(&ListParams::default()).await?.items.is_empty() {
            bundle_at = Some(started.elapsed());
        }
        if let Some(passage) = passages.get_opt("solo-1").await? {
            passage_at.get_or_insert(started.elapsed());
            match passage.phase() {
                PassagePhase::Succeeded => break,
                PassagePhase::Failed | PassagePhase::Aborted => {
                    anyhow::bail!("the crossing of solo failed: {:?}", passage.status)
                }
                _ => {}
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let one = started.elapsed();
    let one_breakdown = process.requests_by_kind().await?.since(&before, 1.0);
    let one_requests = one_breakdown.0.values().sum();

    // The whole loop, release after release: a commit, the Beacon asked to look (so
    // its poll interval is not measured), then Bundle, Passage, crossed. The Gate and
    // the Beacon keep little, so the releases also measure collecting what is old.
    let retain = |n: usize| serde_json::json!({"spec": {"retain": n}});
    Api::<hecate_types::Gate>::namespaced(admin.clone(), namespace)
        .patch(
            "solo",
            &PatchParams::default(),
            &Patch::Merge(&retain(GATE_RETAIN)),
        )
        .await?;
    Api::<Beacon>::namespaced(admin.clone(), namespace)
        .patch(
            "app",
            &PatchParams::default(),
            &Patch::Merge(&retain(BEACON_RETAIN)),
        )
        .await?;
    let before = process.requests().await?;
    let mut shares: [Vec<Duration>; 4] = Default::default();
    for release in 1..=RELEASES {
        let version = format!("1.{release}.0");
        app.commit("main", "VERSION", &format!("{version}\n"), &version)
            .await?;
        let sample = release_loop(admin, namespace, &passages, &bundles, release + 1).await?;
        for (share, value) in shares.iter_mut().zip(sample) {
            share.push(value);
        }
    }
    let loop_requests = process.requests().await? - before;
    let before = process.requests().await?;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let loop_idle_requests = process.requests().await? - before;
    // A Beacon collects when it looks: ask it once more (as `hecate poll` does), now
    // that the Gate has let go of its old Passages (and so of their Bundles).
    let asked = hecate_ops::Ops::new(admin.clone())
        .poll(namespace, "app")
        .await?
        .requested_at;
    let beacons = Api::<Beacon>::namespaced(admin.clone(), namespace);
    let looked = Instant::now();
    while beacons
        .get("app")
        .await?
        .status
        .is_none_or(|status| status.last_handled_reconcile_at != asked)
    {
        anyhow::ensure!(
            looked.elapsed() < Duration::from_secs(30),
            "Beacon app did not look again within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let retained = retained(admin, namespace).await?;
    anyhow::ensure!(
        retained.passages <= retained.gate_retain + retained.named
            && retained.bundles <= retained.beacon_retain + retained.referenced,
        "after {RELEASES} releases, retention left too much: {} Passages of solo ({} named, \
         retain {}), {} Bundles of app ({} referenced, retain {})",
        retained.passages,
        retained.named,
        retained.gate_retain,
        retained.bundles,
        retained.referenced,
        retained.beacon_retain
    );
    let [beacon, gate, steps, total] = shares.map(|mut samples| {
        samples.sort();
        (
            super::percentile_ms(&samples, 0.5),
            super::percentile_ms(&samples, 0.99),
        )
    });

    // Many at once: the Bundle exists, so every Gate opens its Passage on arrival.
    let stages: Vec<Stage<'_>> = environments[1..]
        .iter()
        .map(|name| Stage {
            name,
            after: None,
            auto: true,
            approval: world::Approval::No,
            fan_out: None,
        })
        .collect();
    let before = process.requests_by_kind().await?;
    let started = Instant::now();
    apply_manifest(admin, &pipeline(&stages).manifest(), false).await?;
    loop {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "{} crossings did not finish within 10 minutes (the controller's log: {})",
            stages.len(),
            process.log.display()
        );
        // The solo Gate's crossings are done; count the others.
        let all: Vec<Passage> = passages
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|p| p.spec.gate != "solo")
            .collect();
        if let Some(failed) = all
            .iter()
            .find(|p| matches!(p.phase(), PassagePhase::Failed | PassagePhase::Aborted))
        {
            anyhow::bail!("a crossing failed: {:?}", failed.status);
        }
        let done = all
            .iter()
            .filter(|p| p.phase() == PassagePhase::Succeeded)
            .count();
        if done == stages.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let concurrent = started.elapsed();
    let concurrent_breakdown = process
        .requests_by_kind()
        .await?
        .since(&before, stages.len() as f64);
    let concurrent_requests_per_crossing = concurrent_breakdown.0.values().sum();
    let (rss_mib, peak_rss_mib) = process.memory();

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    Ok(CrossingResults {
        one_bundle_ms: bundle_at.map_or(0.0, ms),
        one_passage_ms: passage_at.map_or(0.0, ms),
        one_succeeded_ms: ms(one),
        one_requests,
        one_breakdown,
        releases: RELEASES,
        loop_beacon_p50_ms: beacon.0,
        loop_beacon_p99_ms: beacon.1,
        loop_gate_p50_ms: gate.0,
        loop_gate_p99_ms: gate.1,
        loop_steps_p50_ms: steps.0,
        loop_steps_p99_ms: steps.1,
        loop_total_p50_ms: total.0,
        loop_total_p99_ms: total.1,
        loop_requests_per_release: loop_requests / RELEASES as f64,
        loop_idle_requests,
        retained,
        concurrent: stages.len(),
        concurrent_all_ms: ms(concurrent),
        concurrent_per_second: stages.len() as f64 / concurrent.as_secs_f64(),
        concurrent_requests_per_crossing,
        concurrent_breakdown,
        rss_mib,
        peak_rss_mib,
    })
}

/// Releases carried through the whole loop.
const RELEASES: usize = 20;

/// What is left of `solo`'s Passages and Beacon `app`'s Bundles.
async fn retained(admin: &kube::Client, namespace: &str) -> anyhow::Result<Retained> {
    use std::collections::BTreeSet;
    let passages: Vec<Passage> = Api::<Passage>::namespaced(admin.clone(), namespace)
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|p| p.spec.gate == "solo")
        .collect();
    let bundles = Api::<Bundle>::namespaced(admin.clone(), namespace)
        .list(&ListParams::default().labels(&format!("{}=app", wellknown::LABEL_BEACON)))
        .await?
        .items;
    let solo = Api::<hecate_types::Gate>::namespaced(admin.clone(), namespace)
        .get("solo")
        .await?;
    let mut referenced: BTreeSet<&str> = passages.iter().map(|p| p.spec.bundle.as_str()).collect();
    let mut named: BTreeSet<&str> = BTreeSet::new();
    if let Some(status) = &solo.status {
        for occupant in status.current.iter().chain(&status.history) {
            referenced.insert(occupant.bundle.as_str());
            named.insert(occupant.passage.as_str());
        }
    }
    let finished: Vec<&Passage> = passages.iter().filter(|p| p.is_terminal()).collect();
    let named = finished
        .iter()
        .filter(|p| named.contains(p.metadata.name.as_deref().unwrap_or_default()))
        .count();
    let referenced = bundles
        .iter()
        .filter(|b| referenced.contains(b.metadata.name.as_deref().unwrap_or_default()))
        .count();
    Ok(Retained {
        passages: finished.len(),
        gate_retain: GATE_RETAIN,
        named,
        bundles: bundles.len(),
        beacon_retain: BEACON_RETAIN,
        referenced,
    })
}

/// Asks Beacon `app` to look now, then times the release to its `n`th Passage of
/// `solo`: (Beacon, Gate, steps, total).
async fn release_loop(
    admin: &kube::Client,
    namespace: &str,
    passages: &Api<Passage>,
    bundles: &Api<Bundle>,
    n: usize,
) -> anyhow::Result<[Duration; 4]> {
    let known = bundles.list(&ListParams::default()).await?.items.len();
    let poke = serde_json::json!({"metadata": {"annotations": {
        wellknown::ANNOTATION_RECONCILE_REQUESTED_AT: jiff::Timestamp::now().to_string(),
    }}});
    let started = Instant::now();
    Api::<Beacon>::namespaced(admin.clone(), namespace)
        .patch("app", &PatchParams::default(), &Patch::Merge(&poke))
        .await?;
    let name = format!("solo-{n}");
    let (mut bundle_at, mut passage_at) = (None, None);
    loop {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(60),
            "release {n} did not cross solo within a minute"
        );
        if bundle_at.is_none() && bundles.list(&ListParams::default()).await?.items.len() > known {
            bundle_at = Some(started.elapsed());
        }
        if let Some(passage) = passages.get_opt(&name).await? {
            passage_at.get_or_insert(started.elapsed());
            match passage.phase() {
                PassagePhase::Succeeded => break,
                PassagePhase::Failed | PassagePhase::Aborted => {
                    anyhow::bail!("release {n} failed to cross: {:?}", passage.status)
                }
                _ => {}
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let total = started.elapsed();
    let bundle_at = bundle_at.unwrap_or(total);
    let passage_at = passage_at.unwrap_or(total).max(bundle_at);
    Ok([bundle_at, passage_at - bundle_at, total - passage_at, total])
}

/// A loopback receiver answering every request `200 ok`: the `http` step's end. Its
/// URL; it runs until the runtime stops.
async fn receiver() -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                // Read the request (headers and a small body) before answering.
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while !complete(&request) {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    )
                    .await;
            });
        }
    });
    Ok(url)
}

/// Whether `request` holds its headers and the body they announce.
fn complete(request: &[u8]) -> bool {
    let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let headers = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
    let length = headers
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    request.len() >= end + 4 + length
}
