//! Beacons polling a registry, as users run them: `hecate-controller` as its own
//! process, a real registry on loopback (CNCF Distribution, the test environment's)
//! with repositories of 500 tags each, ten Beacons on each repository polling every
//! 20 s. Measured, with the registry's own access log counting what the controller
//! asked of it:
//!
//! - the first poll of every Beacon after the controller starts (nothing remembered);
//! - every Beacon asked to poll again with nothing changed (`hecate poll`'s annotation,
//!   written through hecate-ops; a requested poll looks digests up afresh): the poll
//!   cycle's time and its requests per poll;
//! - a new tag in every repository, then every Beacon asked again: each must emit a new
//!   Bundle;
//! - the Beacons polling on their own for a while, nothing changing: requests per poll
//!   (the polls counted by each Beacon's `status.lastPolled`) and per minute;
//! - the controller's memory.
//!
//! Each run uses a new registry and a new namespace, and removes both afterwards.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use futures::{StreamExt as _, TryStreamExt as _};
use hecate_ops::Ops;
use hecate_testenv::Endpoint;
use hecate_testenv::registry::Distribution;
use hecate_types::{Beacon, BeaconSpec, ImageWatch, WatchSource};
use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde::Serialize;

use super::Scale;
use super::controller::Process;

/// The label that makes a run's namespace the benched controller's shard.
const SHARD_LABEL: &str = "hecate.dev/bench-beacons";
/// Tags in each repository.
const TAGS: usize = 500;
/// Beacons watching each repository.
const BEACONS_PER_REPOSITORY: usize = 10;
/// Every Beacon's `spec.interval`; the cycles asked for all end within it, so no
/// Beacon's own poll falls among them.
const INTERVAL: &str = "20s";
/// The registry's requests the controller sent carry this `User-Agent`.
const AGENT: &str = "hecate-controller/";

/// What one run measured.
#[derive(Serialize)]
pub(crate) struct BeaconResults {
    pub(crate) beacons: usize,
    pub(crate) repositories: usize,
    pub(crate) tags_per_repository: usize,
    pub(crate) interval: &'static str,
    /// The controller started → every Beacon polled once, and the registry requests per
    /// poll meanwhile.
    pub(crate) first_cycle_ms: f64,
    pub(crate) first_requests_per_poll: f64,
    /// Every Beacon asked to poll, nothing changed → every Beacon answered.
    pub(crate) requested_cycle_ms: f64,
    pub(crate) requested_requests_per_poll: f64,
    /// A new tag in every repository, every Beacon asked → every Beacon answered.
    pub(crate) new_tag_cycle_ms: f64,
    pub(crate) new_tag_requests_per_poll: f64,
    /// Beacons that emitted a Bundle of the new tag in that cycle.
    pub(crate) new_tag_emitted: usize,
    /// The Beacons polling on their own, nothing changing: over how long, how many
    /// polls, registry requests per poll and per minute.
    pub(crate) routine_window_s: f64,
    pub(crate) routine_polls: usize,
    pub(crate) routine_requests_per_poll: f64,
    pub(crate) routine_requests_per_minute: f64,
    /// Resident memory at the end, and its peak.
    pub(crate) rss_mib: f64,
    pub(crate) peak_rss_mib: f64,
}

impl Scale {
    fn beacons(self) -> usize {
        match self {
            Self::Small => 20,
            Self::Large | Self::Fleet => 200,
        }
    }

    /// How long the Beacons are watched polling on their own, from the end of a cycle:
    /// one interval and a half (one round of polls), or two and a half (two), so the
    /// window ends between rounds and cuts none in two.
    fn beacon_idle_window(self) -> Duration {
        match self {
            Self::Small => Duration::from_secs(30),
            Self::Large | Self::Fleet => Duration::from_secs(50),
        }
    }
}

pub(crate) async fn run(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    scale: Scale,
) -> anyhow::Result<BeaconResults> {
    let beacons = scale.beacons();
    let repositories = beacons.div_ceil(BEACONS_PER_REPOSITORY);
    let registry = Distribution::start(false).await;
    let paths: Vec<String> = (0..repositories)
        .map(|r| format!("bench/app-{r}"))
        .collect();
    let tags: Vec<String> = (0..TAGS)
        .map(|i| format!("1.{}.{}", i / 50, i % 50))
        .collect();
    let seeding = Instant::now();
    futures::stream::iter(paths.iter())
        .for_each_concurrent(4, |path| {
            let (registry, tags) = (&registry, &tags);
            async move {
                registry.tag_all(path, tags).await;
            }
        })
        .await;
    eprintln!(
        "[bench] {repositories} repositories of {TAGS} tags pushed in {:.1} s",
        seeding.elapsed().as_secs_f64()
    );

    let namespace = format!(
        "bench-beacons-{}-{}",
        scale.name(),
        jiff::Timestamp::now().as_second()
    );
    super::shard_namespace(admin, &namespace, SHARD_LABEL).await?;
    let result = measure(root, endpoint, admin, &namespace, &registry, &paths, scale).await;
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
    registry: &Distribution,
    paths: &[String],
    scale: Scale,
) -> anyhow::Result<BeaconResults> {
    let count = scale.beacons();
    let api = Api::<Beacon>::namespaced(admin.clone(), namespace);
    let names: Vec<String> = (0..count).map(|i| format!("b{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        let watch = WatchSource {
            image: Some(ImageWatch {
                repo: registry.repo(&paths[i % paths.len()]),
                ..ImageWatch::default()
            }),
            ..WatchSource::default()
        };
        let spec = BeaconSpec {
            watch: vec![watch],
            interval: Some(INTERVAL.into()),
            ..BeaconSpec::default()
        };
        api.create(&PostParams::default(), &Beacon::new(name, spec))
            .await?;
    }
    let asked = || registry.requests(AGENT).len() as f64;

    // The first poll of every Beacon: nothing remembered yet.
    let started = Instant::now();
    let process = Process::start(
        root,
        endpoint,
        "bench-beacons",
        &format!("{SHARD_LABEL}=true"),
    )?;
    process.serving().await?;
    loop {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(300),
            "{count} Beacons did not all poll within 5 minutes (the controller's log: {})",
            process.log.display()
        );
        let polled = api
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|b| b.status.as_ref().is_some_and(|s| s.last_polled.is_some()))
            .count();
        if polled == count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let first_cycle = started.elapsed();
    let first_requests = asked();
    let latest = latest_bundles(&api).await?;
    anyhow::ensure!(
        latest.values().all(|bundle| !bundle.is_empty()),
        "not every Beacon emitted a Bundle on its first poll: {latest:?} (the controller's \
         log: {})",
        process.log.display()
    );

    // Nothing changed: every Beacon asked to look again.
    let ops = Ops::new(admin.clone());
    let before = asked();
    let requested_cycle = poll_all(&ops, &api, namespace, &names).await?;
    let requested_requests = asked() - before;

    // A new tag in every repository: every Beacon must see it.
    for path in paths {
        registry.image(path, "1.10.0", "new").await;
    }
    let before = asked();
    let new_tag_cycle = poll_all(&ops, &api, namespace, &names).await?;
    let new_tag_requests = asked() - before;
    let now = latest_bundles(&api).await?;
    let new_tag_emitted = now
        .iter()
        .filter(|(name, bundle)| latest.get(*name) != Some(bundle))
        .count();

    // Routine: the Beacons poll every INTERVAL on their own; nothing changes.
    let window = scale.beacon_idle_window();
    let before = asked();
    let routine_polls = count_polls(&api, window).await?;
    let routine = asked() - before;
    let (rss_mib, peak_rss_mib) = process.memory();

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let per_poll = |requests: f64| requests / count as f64;
    Ok(BeaconResults {
        beacons: count,
        repositories: paths.len(),
        tags_per_repository: TAGS,
        interval: INTERVAL,
        first_cycle_ms: ms(first_cycle),
        first_requests_per_poll: per_poll(first_requests),
        requested_cycle_ms: ms(requested_cycle),
        requested_requests_per_poll: per_poll(requested_requests),
        new_tag_cycle_ms: ms(new_tag_cycle),
        new_tag_requests_per_poll: per_poll(new_tag_requests),
        new_tag_emitted,
        routine_window_s: window.as_secs_f64(),
        routine_polls,
        routine_requests_per_poll: routine / routine_polls.max(1) as f64,
        routine_requests_per_minute: routine * 60.0 / window.as_secs_f64(),
        rss_mib,
        peak_rss_mib,
    })
}

/// Asks every Beacon of `names` to poll, as `hecate poll` does, and waits until each has
/// answered its own request: the time from the first request to the last answer.
async fn poll_all(
    ops: &Ops,
    api: &Api<Beacon>,
    namespace: &str,
    names: &[String],
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let tokens: BTreeMap<String, String> = futures::stream::iter(names.iter())
        .map(|name| async move {
            let polled = ops.poll(namespace, name).await?;
            anyhow::Ok((name.clone(), polled.requested_at))
        })
        .buffer_unordered(16)
        .try_collect()
        .await?;
    loop {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(300),
            "{} Beacons did not all answer a poll within 5 minutes",
            names.len()
        );
        let answered = api
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|b| {
                let handled = b
                    .status
                    .as_ref()
                    .map(|s| s.last_handled_reconcile_at.as_str());
                handled.is_some() && tokens.get(&b.name_any()).map(String::as_str) == handled
            })
            .count();
        if answered == names.len() {
            return Ok(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How many polls the Beacons of `api` make in `window`: changes of their
/// `status.lastPolled`, looked at every 250 ms (a Beacon polls at most once a second
/// here, so none is missed).
async fn count_polls(api: &Api<Beacon>, window: Duration) -> anyhow::Result<usize> {
    let polled = || async {
        anyhow::Ok(
            api.list(&ListParams::default())
                .await?
                .items
                .into_iter()
                .map(|b| {
                    let name = b.name_any();
                    (name, b.status.and_then(|s| s.last_polled))
                })
                .collect::<BTreeMap<_, _>>(),
        )
    };
    let started = Instant::now();
    let mut last = polled().await?;
    let mut polls = 0;
    while started.elapsed() < window {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = polled().await?;
        polls += now
            .iter()
            .filter(|(name, at)| last.get(*name) != Some(*at))
            .count();
        last = now;
    }
    Ok(polls)
}

/// Each Beacon's `status.latestBundle`, by name.
async fn latest_bundles(api: &Api<Beacon>) -> anyhow::Result<BTreeMap<String, String>> {
    Ok(api
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .map(|b| {
            let name = b.name_any();
            (name, b.status.map(|s| s.latest_bundle).unwrap_or_default())
        })
        .collect())
}
