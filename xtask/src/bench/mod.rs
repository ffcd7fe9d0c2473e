//! `cargo xtask bench`: how fast Hecate answers, and what it costs the API server, on
//! the local control plane at a realistic scale.
//!
//! The seed (`--scale large`: 50 Gates in 5 pipelines of 10, 5,000 Bundles, 10,000
//! Passages with statuses; `small`: a tenth) lives in namespace `bench-<scale>` and is
//! reused when it is already there. Each measurement is the median of several runs
//! after a warm-up. Numbers go to stdout and `target/bench/results.json`.

mod load;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::{StreamExt as _, TryStreamExt as _};
use hecate_ops::{Ops, Scope};
use hecate_testenv::{Endpoint, Identity};
use hecate_types::{
    Admission, Artifact, Bundle, BundleOrigin, BundleSpec, BundleStatus, Gate, GateCrossing,
    GateOccupant, GateSpec, GateStatus, Health, HealthReport, Passage, PassagePhase, PassageSpec,
    PassageStatus, PassageTemplate, Step, Time, digest, wellknown,
};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::core::object::HasStatus;
use kube::{Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;

const FIELD_MANAGER: &str = "hecate-bench";
const PIPELINES: usize = 5;
const GATES_PER_PIPELINE: usize = 10;
const RUNS: usize = 7;
const CONCURRENCY: usize = 48;

/// How big a namespace to measure.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum Scale {
    /// 50 Gates, 500 Bundles, 1,000 Passages.
    Small,
    /// 50 Gates, 5,000 Bundles, 10,000 Passages.
    Large,
}

impl Scale {
    fn bundles(self) -> usize {
        match self {
            Self::Small => 500,
            Self::Large => 5_000,
        }
    }

    fn passages(self) -> usize {
        self.bundles() * 2
    }

    fn namespace(self) -> String {
        format!("bench-{}", format!("{self:?}").to_lowercase())
    }
}

pub(crate) fn run(root: &Path, scale: Scale) -> anyhow::Result<()> {
    // Numbers from a debug build measure the debug build. Measure an optimised one.
    if cfg!(debug_assertions) {
        eprintln!("[bench] building xtask with optimisations…");
        let status =
            std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args([
                    "run",
                    "--quiet",
                    "--release",
                    "--package",
                    "xtask",
                    "--",
                    "bench",
                    "--scale",
                ])
                .arg(format!("{scale:?}").to_lowercase())
                .current_dir(root)
                .status()?;
        anyhow::ensure!(status.success(), "the optimised bench failed ({status})");
        return Ok(());
    }
    let endpoint = crate::control_plane::start(&crate::control_plane::dev_dir(root))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let status =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args([
                "build",
                "--quiet",
                "--release",
                "--package",
                "hecate-api",
                "--package",
                "hecate-cli",
            ])
            .current_dir(root)
            .status()?;
    anyhow::ensure!(status.success(), "building hecate-api and hecate failed");
    let results = runtime.block_on(measure(root, &endpoint, scale))?;
    let dir = root.join("target/bench");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("results.json");
    std::fs::write(&path, serde_json::to_string_pretty(&results)?)?;
    println!("\nwrote {}", path.display());
    Ok(())
}

#[derive(Serialize)]
struct Results {
    scale: String,
    gates: usize,
    bundles: usize,
    passages: usize,
    measurements: Vec<Measurement>,
    api: load::ApiResults,
}

#[derive(Serialize)]
struct Measurement {
    name: String,
    median_ms: f64,
    min_ms: f64,
    max_ms: f64,
    api_requests: usize,
}

async fn measure(root: &Path, endpoint: &Endpoint, scale: Scale) -> anyhow::Result<Results> {
    let admin = endpoint.client(Identity::Admin).await?;
    let namespace = scale.namespace();
    seed(&admin, &namespace, scale).await?;

    let (client, log) = endpoint.recording_client(Identity::Admin).await?;
    let ops = Ops::new(client);
    let scope = Scope::Namespaces(vec![namespace.clone()]);
    let gate = "app-0-g9";
    let mut measurements = Vec::new();
    measurements.push(
        time(&format!("Ops::overview ({namespace})"), &log, || {
            ops.overview(&scope)
        })
        .await?,
    );
    measurements.push(
        time(&format!("Ops::explain {gate}"), &log, || {
            ops.explain(&namespace, gate)
        })
        .await?,
    );
    measurements.push(time("Ops::namespaces", &log, || ops.namespaces()).await?);

    println!(
        "\n{:<34} {:>10} {:>10} {:>10} {:>9}",
        "measurement", "median ms", "min ms", "max ms", "requests"
    );
    for m in &measurements {
        println!(
            "{:<34} {:>10.1} {:>10.1} {:>10.1} {:>9}",
            m.name, m.median_ms, m.min_ms, m.max_ms, m.api_requests
        );
    }
    let routes = [
        format!("/api/v1alpha1/namespaces/{namespace}/gates/{gate}/explain"),
        "/api/v1alpha1/overview".to_string(),
    ];
    let api = load::run(root, endpoint, &namespace, &routes).await?;
    println!(
        "\n{:<72} {:>5} {:>8} {:>8} {:>8}",
        "hecate-api route (as alice)", "conc", "req/s", "p50 ms", "p99 ms"
    );
    for l in &api.levels {
        println!(
            "{:<72} {:>5} {:>8.1} {:>8.1} {:>8.1}",
            l.route, l.concurrency, l.requests_per_second, l.p50_ms, l.p99_ms
        );
    }
    println!(
        "TokenReviews per 1,000 requests: {:.2}; SubjectAccessReviews per 1,000: {:.2}; peak RSS {:.0} MiB",
        api.token_reviews_per_1000, api.access_reviews_per_1000, api.peak_rss_mib
    );
    Ok(Results {
        scale: format!("{scale:?}").to_lowercase(),
        gates: PIPELINES * GATES_PER_PIPELINE,
        bundles: scale.bundles(),
        passages: scale.passages(),
        measurements,
        api,
    })
}

/// The median of `RUNS` runs after one warm-up, and the requests one run sends.
async fn time<T, E, F, Fut>(
    name: &str,
    log: &hecate_testenv::RequestLog,
    mut call: F,
) -> anyhow::Result<Measurement>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    call().await?;
    let mut samples = Vec::with_capacity(RUNS);
    let mut requests = 0;
    for _ in 0..RUNS {
        log.clear();
        let started = Instant::now();
        call().await?;
        samples.push(started.elapsed());
        requests = log.requests().len();
    }
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    Ok(Measurement {
        name: name.into(),
        median_ms: ms(samples[RUNS / 2]),
        min_ms: ms(samples[0]),
        max_ms: ms(samples[RUNS - 1]),
        api_requests: requests,
    })
}

/// Writes the seed unless a complete one is there already.
async fn seed(client: &kube::Client, namespace: &str, scale: Scale) -> anyhow::Result<()> {
    let bundles: Api<Bundle> = Api::namespaced(client.clone(), namespace);
    let passages: Api<Passage> = Api::namespaced(client.clone(), namespace);
    let params = ListParams::default();
    let have_bundles = bundles
        .list_metadata(&params)
        .await
        .map(|l| l.items.len())
        .unwrap_or(0);
    let have_passages = passages
        .list_metadata(&params)
        .await
        .map(|l| l.items.len())
        .unwrap_or(0);
    if have_bundles == scale.bundles() && have_passages == scale.passages() {
        eprintln!("[bench] reusing the seed in namespace {namespace}");
        return Ok(());
    }
    let started = Instant::now();
    eprintln!(
        "[bench] seeding namespace {namespace}: 50 Gates, {} Bundles, {} Passages…",
        scale.bundles(),
        scale.passages()
    );
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let object = Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    namespaces
        .patch(
            namespace,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&object),
        )
        .await?;

    let now = jiff::Timestamp::now();
    let at = |minutes_ago: i64| Time(now - jiff::SignedDuration::from_mins(minutes_ago));
    let per_pipeline = scale.bundles() / PIPELINES;

    let mut gates = Vec::new();
    let mut all_bundles = Vec::new();
    let mut all_passages = Vec::new();
    for p in 0..PIPELINES {
        let beacon = format!("app-{p}");
        // Release r has crossed the first `depth(r)` Gates: old releases went far, new
        // ones are still early in the pipeline.
        let depth =
            |r: usize| ((r * GATES_PER_PIPELINE) / per_pipeline + 1).min(GATES_PER_PIPELINE);
        let names: Vec<String> = (0..per_pipeline)
            .map(|r| {
                let artifacts = vec![Artifact::image(
                    format!("ghcr.io/acme/{beacon}"),
                    format!("1.{r}.0"),
                    format!("sha256:{:064x}", p * 100_000 + r),
                )];
                digest::bundle_name(&beacon, &digest::content_digest(&artifacts))
            })
            .collect();
        for (r, name) in names.iter().enumerate() {
            let artifacts = vec![Artifact::image(
                format!("ghcr.io/acme/{beacon}"),
                format!("1.{r}.0"),
                format!("sha256:{:064x}", p * 100_000 + r),
            )];
            let mut bundle = Bundle::new(
                name,
                BundleSpec {
                    beacon: beacon.clone(),
                    digest: digest::content_digest(&artifacts),
                    alias: String::new(),
                    artifacts,
                },
            );
            bundle
                .labels_mut()
                .insert(wellknown::LABEL_BEACON.into(), beacon.clone());
            let cleared = (0..depth(r))
                .map(|g| GateCrossing {
                    gate: format!("{beacon}-g{g}"),
                    passage: format!("{beacon}-g{g}-{r}"),
                    at: at((per_pipeline - r) as i64),
                    actor: "controller".into(),
                    reason: String::new(),
                })
                .collect();
            bundle.status = Some(BundleStatus {
                cleared,
                ..BundleStatus::default()
            });
            all_bundles.push(bundle);
            // Two Passages per release: a success at its deepest Gate and, every
            // tenth release, a failure one Gate further.
            for (k, phase) in [PassagePhase::Succeeded, PassagePhase::Failed]
                .into_iter()
                .enumerate()
            {
                let g = (depth(r) - 1 + k).min(GATES_PER_PIPELINE - 1);
                let phase = if k == 1 && r % 10 != 0 {
                    PassagePhase::Succeeded
                } else {
                    phase
                };
                let gate = format!("{beacon}-g{g}");
                let mut passage = Passage::new(
                    &format!("{gate}-{r}-{k}"),
                    PassageSpec {
                        gate: gate.clone(),
                        bundle: name.clone(),
                        steps: vec![Step {
                            uses: "flux-wait".into(),
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
                    phase: Some(phase),
                    message: if phase == PassagePhase::Failed {
                        "step flux-wait: health check failed".into()
                    } else {
                        format!("crossed {gate}")
                    },
                    started_at: Some(at((per_pipeline - r) as i64)),
                    finished_at: Some(at((per_pipeline - r) as i64 - 1)),
                    ..PassageStatus::default()
                });
                all_passages.push(passage);
            }
        }
        for g in 0..GATES_PER_PIPELINE {
            let mut gate = Gate::new(
                &format!("{beacon}-g{g}"),
                GateSpec {
                    admits: vec![Admission {
                        from: BundleOrigin {
                            beacon: beacon.clone(),
                        },
                        after: if g == 0 {
                            vec![]
                        } else {
                            vec![format!("{beacon}-g{}", g - 1)]
                        },
                        require_approval: g == GATES_PER_PIPELINE - 1,
                    }],
                    passage: Some(PassageTemplate {
                        steps: vec![Step {
                            uses: "flux-wait".into(),
                            ..Step::default()
                        }],
                    }),
                    auto: g == 0,
                    ..GateSpec::default()
                },
            );
            let occupants: Vec<usize> = (0..per_pipeline)
                .rev()
                .filter(|r| depth(*r) > g)
                .take(10)
                .collect();
            let history: Vec<GateOccupant> = occupants
                .iter()
                .map(|r| GateOccupant {
                    bundle: names[*r].clone(),
                    digest: String::new(),
                    passage: format!("{beacon}-g{g}-{r}-0"),
                    entered_at: at((per_pipeline - r) as i64),
                    actor: "controller".into(),
                    verified: None,
                })
                .collect();
            gate.status = Some(GateStatus {
                current: history.first().cloned(),
                history,
                health: Some(HealthReport {
                    status: if g % 7 == 3 {
                        Health::Degraded
                    } else {
                        Health::Healthy
                    },
                    issues: vec![],
                    details: None,
                    observed_at: Some(at(0)),
                    since: Some(at(60)),
                }),
                ..GateStatus::default()
            });
            gates.push(gate);
        }
    }
    write_all(client, namespace, gates)
        .await
        .context("seeding Gates")?;
    write_all(client, namespace, all_bundles)
        .await
        .context("seeding Bundles")?;
    write_all(client, namespace, all_passages)
        .await
        .context("seeding Passages")?;
    eprintln!("[bench] seeded in {:.0?}", started.elapsed());
    Ok(())
}

/// Creates each object (or leaves an existing one) and writes its status, many at once.
async fn write_all<K>(client: &kube::Client, namespace: &str, objects: Vec<K>) -> anyhow::Result<()>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + HasStatus
        + Clone
        + std::fmt::Debug
        + Serialize
        + DeserializeOwned,
    K::Status: Serialize,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    futures::stream::iter(objects)
        .map(|object| {
            let api = api.clone();
            async move {
                match api.create(&PostParams::default(), &object).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 409 => {}
                    Err(error) => return Err(error),
                }
                let status = serde_json::json!({"status": object.status()});
                api.patch_status(
                    &object.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&status),
                )
                .await
                .map(|_| ())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<()>()
        .await?;
    Ok(())
}
