//! Crossings through Flux's own controllers: releases of an application carried
//! dev (by itself) → staging (promoted) → production (approved), each crossing
//! rendering the release's manifests into the fleet, pushing, and waiting for
//! kustomize-controller to apply that commit and find it healthy on the simulated
//! node — once with `flux-reconcile` after the push, once leaving it to Flux's own
//! interval. Measured per stage: where the time goes (Beacon, Gate, steps, Flux) and
//! the whole, p50 and p99.

use std::path::Path;
use std::time::{Duration, Instant};

use hecate_ops::Ops;
use hecate_testenv::fleet::{self, FluxSettings, Release};
use hecate_testenv::git_http::GitHttp;
use hecate_testenv::world::{self, Repository};
use hecate_testenv::{Endpoint, Tool, apply_manifest};
use hecate_types::{Beacon, Bundle, Passage, PassagePhase, StepPhase, wellknown};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use serde::Serialize;

use super::Scale;
use super::controller::Process;

/// The label that makes a run's namespace the benched controller's shard.
const SHARD_LABEL: &str = "hecate.dev/bench-flux";
const ENVIRONMENTS: [&str; 3] = ["dev", "staging", "production"];
/// Flux's interval when nothing asks it to reconcile: how often source-controller looks
/// at the fleet's branches (Flux's own default is a minute or more).
const INTERVAL_WITHOUT_RECONCILE: &str = "10s";

/// Where one stage's time went, p50 / p99 in milliseconds over the releases.
#[derive(Serialize, Default)]
pub(crate) struct StageTimes {
    /// What started it (the release committed and the Beacon asked, a promotion, an
    /// approval) → its Passage exists: the Gate's share, and for dev the Beacon's too
    /// (`beacon_*` of it).
    pub(crate) gate_p50_ms: f64,
    pub(crate) gate_p99_ms: f64,
    /// Passage exists → `flux-wait` starts: the steps that clone, render, edit,
    /// commit, push (and ask Flux to reconcile).
    pub(crate) steps_p50_ms: f64,
    pub(crate) steps_p99_ms: f64,
    /// `flux-wait` starts → the Passage succeeded: Flux fetching, applying and
    /// health-checking, and Hecate noticing.
    pub(crate) flux_p50_ms: f64,
    pub(crate) flux_p99_ms: f64,
    /// The whole stage.
    pub(crate) total_p50_ms: f64,
    pub(crate) total_p99_ms: f64,
}

/// One variant's results.
#[derive(Serialize, Default)]
pub(crate) struct Variant {
    /// The commit pushed and tagged, the Beacon asked to look → its Bundle, p50 / p99.
    pub(crate) beacon_p50_ms: f64,
    pub(crate) beacon_p99_ms: f64,
    pub(crate) dev: StageTimes,
    pub(crate) staging: StageTimes,
    pub(crate) production: StageTimes,
}

/// What the run measured.
#[derive(Serialize)]
pub(crate) struct FluxResults {
    /// Releases carried through all three stages, per variant.
    pub(crate) releases: usize,
    /// `flux-reconcile` after each push.
    pub(crate) with_reconcile: Variant,
    /// Flux's own interval (`INTERVAL_WITHOUT_RECONCILE`).
    pub(crate) without_reconcile: Variant,
    pub(crate) interval_without_reconcile: &'static str,
}

impl Scale {
    fn flux_releases(self) -> usize {
        match self {
            Self::Small => 2,
            Self::Large | Self::Fleet => 10,
        }
    }
}

/// Runs both variants.
pub(crate) async fn run(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    scale: Scale,
    releases: Option<usize>,
) -> anyhow::Result<FluxResults> {
    anyhow::ensure!(
        endpoint.parts.flux,
        "the control plane runs no Flux: stop it (`cargo xtask control-plane stop`) and run the bench again"
    );
    let releases = releases.unwrap_or_else(|| scale.flux_releases());
    let with_reconcile = variant(root, endpoint, admin, releases, true).await?;
    let without_reconcile = variant(root, endpoint, admin, releases, false).await?;
    Ok(FluxResults {
        releases,
        with_reconcile,
        without_reconcile,
        interval_without_reconcile: INTERVAL_WITHOUT_RECONCILE,
    })
}

/// Samples of one stage, one per release.
#[derive(Default)]
struct Samples {
    gate: Vec<Duration>,
    steps: Vec<Duration>,
    flux: Vec<Duration>,
    total: Vec<Duration>,
}

impl Samples {
    fn push(&mut self, started: Instant, crossing: Crossing) {
        self.gate.push(crossing.created - started);
        self.steps.push(crossing.waiting - crossing.created);
        self.flux.push(crossing.done - crossing.waiting);
        self.total.push(crossing.done - started);
    }

    fn times(mut self) -> StageTimes {
        let q = |samples: &mut Vec<Duration>| {
            samples.sort();
            (
                super::percentile_ms(samples, 0.5),
                super::percentile_ms(samples, 0.99),
            )
        };
        let (gate_p50_ms, gate_p99_ms) = q(&mut self.gate);
        let (steps_p50_ms, steps_p99_ms) = q(&mut self.steps);
        let (flux_p50_ms, flux_p99_ms) = q(&mut self.flux);
        let (total_p50_ms, total_p99_ms) = q(&mut self.total);
        StageTimes {
            gate_p50_ms,
            gate_p99_ms,
            steps_p50_ms,
            steps_p99_ms,
            flux_p50_ms,
            flux_p99_ms,
            total_p50_ms,
            total_p99_ms,
        }
    }
}

/// When one crossing's Passage was first seen, when its `flux-wait` started, and
/// when it succeeded.
struct Crossing {
    created: Instant,
    waiting: Instant,
    done: Instant,
}

async fn variant(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    releases: usize,
    reconcile: bool,
) -> anyhow::Result<Variant> {
    let namespace = format!(
        "bench-flux-{}-{}",
        if reconcile { "reconcile" } else { "interval" },
        jiff::Timestamp::now().as_second()
    );
    let dir = endpoint.dir.join(&namespace);
    std::fs::create_dir_all(&dir)?;
    let first = Release::healthy("0.1.0");
    let app = Repository::create(&dir, "app", &["main"], &fleet::app_files("app", first)).await?;
    app.tag(&first.tag()).await?;
    let branches: Vec<String> = ENVIRONMENTS.iter().map(|e| format!("env/{e}")).collect();
    let branches: Vec<&str> = branches.iter().map(String::as_str).collect();
    let fleet_repo =
        Repository::create(&dir, "fleet", &branches, &fleet::fleet_files("app")).await?;
    let git = GitHttp::start(&dir).await?;
    let (app_url, fleet_url) = (app.served(&git), fleet_repo.served(&git));

    let namespaces: Api<Namespace> = Api::all(admin.clone());
    namespaces
        .create(
            &PostParams::default(),
            &Namespace {
                metadata: ObjectMeta {
                    name: Some(namespace.clone()),
                    labels: Some([(SHARD_LABEL.to_string(), "true".to_string())].into()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            },
        )
        .await?;
    let timings = FluxSettings {
        interval: if reconcile {
            FluxSettings::DEFAULT.interval
        } else {
            INTERVAL_WITHOUT_RECONCILE
        },
        ..FluxSettings::DEFAULT
    };
    fleet::flux_objects(admin, &namespace, &fleet_url, &ENVIRONMENTS, timings).await?;
    let manifest = world::Pipeline {
        namespace: &namespace,
        beacon: "app",
        app: &app_url,
        fleet: &fleet_url,
        hook: None,
        stages: &world::DEV_STAGING_PRODUCTION,
        flux: world::Flux::Real { reconcile },
    }
    .manifest();
    apply_manifest(admin, &manifest, false).await?;
    let kustomize = Tool::Kustomize.locate_or_build()?;
    let process = Process::start_with(
        root,
        endpoint,
        &namespace,
        &format!("{SHARD_LABEL}=true"),
        &[format!("--kustomize-path={}", kustomize.display())],
    )?;
    process.serving().await?;

    let ops = Ops::new(admin.clone());
    let (mut beacon, mut dev, mut staging, mut production) = (
        Vec::new(),
        Samples::default(),
        Samples::default(),
        Samples::default(),
    );
    for i in 0..releases {
        let version = format!("0.{}.0", i + 1);
        let release = Release::healthy(&version);
        let started = Instant::now();
        let sha = if i == 0 {
            app.head("main").await?
        } else {
            let sha = app
                .commit_files("main", &fleet::app_files("app", release), &version)
                .await?;
            app.tag(&release.tag()).await?;
            sha
        };
        let bundle = emitted(admin, &namespace, &sha).await?;
        beacon.push(started.elapsed());
        dev.push(started, crossed(admin, &namespace, "dev", &bundle).await?);
        let started = Instant::now();
        ops.promote(&namespace, "staging", &bundle, "bench-promoter")
            .await?;
        staging.push(
            started,
            crossed(admin, &namespace, "staging", &bundle).await?,
        );
        let started = Instant::now();
        ops.approve(&namespace, &bundle, "production", "bench-approver")
            .await?;
        production.push(
            started,
            crossed(admin, &namespace, "production", &bundle).await?,
        );
        eprintln!(
            "[bench] {} release {version}: through production",
            if reconcile {
                "flux-reconcile"
            } else {
                "Flux's interval"
            }
        );
    }
    drop(process);
    drop(git);
    let _ = namespaces
        .delete(&namespace, &DeleteParams::default())
        .await;
    for environment in ENVIRONMENTS {
        let target = fleet::target_namespace(&namespace, environment);
        let _ = namespaces.delete(&target, &DeleteParams::default()).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
    beacon.sort();
    Ok(Variant {
        beacon_p50_ms: super::percentile_ms(&beacon, 0.5),
        beacon_p99_ms: super::percentile_ms(&beacon, 0.99),
        dev: dev.times(),
        staging: staging.times(),
        production: production.times(),
    })
}

/// Asks Beacon `app` to look, and waits for the Bundle of `sha`.
async fn emitted(admin: &kube::Client, namespace: &str, sha: &str) -> anyhow::Result<String> {
    let beacons: Api<Beacon> = Api::namespaced(admin.clone(), namespace);
    let bundles: Api<Bundle> = Api::namespaced(admin.clone(), namespace);
    let poke =
        serde_json::json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": sha}}});
    beacons
        .patch("app", &PatchParams::default(), &Patch::Merge(&poke))
        .await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(latest) = beacons.get("app").await?.status.map(|s| s.latest_bundle)
            && let Some(bundle) = bundles.get_opt(&latest).await?
            && bundle
                .spec
                .artifacts
                .first()
                .and_then(|a| a.commit.as_ref())
                .is_some_and(|c| c.sha == sha)
        {
            return Ok(latest);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "no Bundle of {sha} within a minute"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Follows `bundle`'s crossing of `gate` until it succeeded and the Gate recorded it.
async fn crossed(
    admin: &kube::Client,
    namespace: &str,
    gate: &str,
    bundle: &str,
) -> anyhow::Result<Crossing> {
    let passages: Api<Passage> = Api::namespaced(admin.clone(), namespace);
    let bundles: Api<Bundle> = Api::namespaced(admin.clone(), namespace);
    let deadline = Instant::now() + Duration::from_secs(180);
    let (mut created, mut waiting) = (None, None);
    let selector = kube::api::ListParams::default().labels(&format!(
        "{}={gate},{}={bundle}",
        wellknown::LABEL_GATE,
        wellknown::LABEL_BUNDLE
    ));
    loop {
        let now = Instant::now();
        // Only this crossing's Passage, by the labels promote and the Gate give it: the
        // poll must not load the API server it measures with every Passage there is.
        let list = passages.list(&selector).await?.items;
        if let Some(passage) = list
            .iter()
            .find(|p| p.spec.gate == gate && p.spec.bundle == bundle)
        {
            let created = *created.get_or_insert(now);
            let flux_wait = passage
                .status
                .as_ref()
                .and_then(|s| s.steps.iter().find(|step| step.uses == "flux-wait"));
            if flux_wait.is_some_and(|step| step.phase != StepPhase::Pending) {
                waiting.get_or_insert(now);
            }
            match passage.phase() {
                // Crossed once the Gate has recorded it on the Bundle: what the next
                // stage's promote and the next Gate's eligibility read.
                PassagePhase::Succeeded if bundles.get(bundle).await?.has_cleared(gate) => {
                    return Ok(Crossing {
                        created,
                        waiting: waiting.unwrap_or(now),
                        done: now,
                    });
                }
                PassagePhase::Failed | PassagePhase::Aborted => anyhow::bail!(
                    "{gate}'s crossing of {bundle} ended {:?}: {}",
                    passage.phase(),
                    passage
                        .status
                        .as_ref()
                        .map(|s| s.message.as_str())
                        .unwrap_or_default()
                ),
                _ => {}
            }
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "{gate}'s crossing of {bundle} did not succeed within three minutes"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
