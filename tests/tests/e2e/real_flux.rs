//! Releases carried through Flux's own controllers (source-controller and
//! kustomize-controller, on a cluster whose workloads kwok runs), with
//! `hecate-controller` as its own process: every Flux status here is one Flux wrote.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hecate_testenv::fleet::{self, FluxSettings, Release};
use hecate_testenv::flux::{GIT_REPOSITORY, KUSTOMIZATION, StandIn as Kind};
use hecate_testenv::git_http::GitHttp;
use hecate_testenv::world::{self, Repository, Stage};
use hecate_testenv::{Identity, TestEnv, Tool, apply_manifest, rbac};
use hecate_types::{Beacon, Bundle, Gate, Health, Passage, PassagePhase};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::process::Child;

use crate::fleet::{controller, hecate};

const SHARD: &str = "hecate.dev/e2e-flux";

/// Polls `check` every 100 ms until it answers `Some`, for at most `limit`; on time
/// out, fails with `what` and whatever `explain` says then.
pub(crate) async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One test's world: the application and fleet repositories served over git's smart
/// HTTP, Flux's objects for each environment, the pipeline, and the controller.
struct World {
    env: TestEnv,
    root: PathBuf,
    app: Repository,
    fleet: Repository,
    _http: GitHttp,
    kubeconfigs: PathBuf,
    _controller: Child,
    _dir: tempfile::TempDir,
}

impl World {
    async fn start(stages: &[Stage<'_>], first: Release<'_>, reconcile: bool) -> Self {
        Self::start_with(stages, first, reconcile, FluxSettings::DEFAULT).await
    }

    /// [`Self::start`] with Flux's objects set as `flux` says.
    async fn start_with(
        stages: &[Stage<'_>],
        first: Release<'_>,
        reconcile: bool,
        flux: FluxSettings<'_>,
    ) -> Self {
        let env = TestEnv::with_flux().await;
        let ns = env.namespace.clone();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let environments: Vec<&str> = stages.iter().map(|s| s.name).collect();
        let app_files = fleet::app_files("app", first);
        let app = Repository::create(&root, "app", &["main"], &app_files)
            .await
            .unwrap();
        app.tag(&first.tag()).await.unwrap();
        let fleet_files = fleet::fleet_files("app");
        let branches = branches(&environments);
        let branches: Vec<&str> = branches.iter().map(String::as_str).collect();
        let fleet = Repository::create(&root, "fleet", &branches, &fleet_files)
            .await
            .unwrap();
        let http = GitHttp::start(&root).await.unwrap();
        let (app_url, fleet_url) = (app.served(&http), fleet.served(&http));

        fleet::flux_objects(&env.admin, &ns, &fleet_url, &environments, flux)
            .await
            .unwrap();
        rbac::grant_deployed_roles(&env).await;
        let kubeconfigs = root.join("kubeconfigs");
        env.endpoint().write_kubeconfigs(&kubeconfigs).unwrap();
        let manifest = world::Pipeline {
            namespace: &ns,
            beacon: "app",
            app: &app_url,
            fleet: &fleet_url,
            hook: None,
            stages,
            flux: world::Flux::Real { reconcile },
        }
        .manifest();
        apply_manifest(&env.admin, &manifest, false).await.unwrap();

        let kustomize = Tool::Kustomize.locate_or_build().unwrap();
        let kustomize = format!("--kustomize-path={}", kustomize.display());
        let controller = controller(&env, &root, SHARD, &[&kustomize]).await;
        Self {
            env,
            root,
            app,
            fleet,
            _http: http,
            kubeconfigs,
            _controller: controller,
            _dir: dir,
        }
    }

    fn ns(&self) -> &str {
        &self.env.namespace
    }

    /// Commits and tags `release`, asks the Beacon to look, and waits for its Bundle.
    async fn release(&self, release: Release<'_>) -> String {
        let files = fleet::app_files("app", release);
        let sha = self
            .app
            .commit_files("main", &files, &format!("app {}", release.version))
            .await
            .unwrap();
        self.app.tag(&release.tag()).await.unwrap();
        self.poll_for(&sha).await
    }

    async fn poll_for(&self, sha: &str) -> String {
        let beacons: Api<Beacon> = self.env.api();
        let bundles: Api<Bundle> = self.env.api();
        let poke = json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": sha}}});
        beacons
            .patch("app", &PatchParams::default(), &Patch::Merge(&poke))
            .await
            .unwrap();
        eventually(
            Duration::from_secs(30),
            "the Beacon emits the release's Bundle",
            || async {
                let latest = beacons.get("app").await.ok()?.status?.latest_bundle;
                let bundle = bundles.get(&latest).await.ok()?;
                let commit = bundle.spec.artifacts.first()?.commit.clone()?;
                (commit.sha == sha).then_some(latest)
            },
        )
        .await
    }

    /// Waits until `bundle` has cleared `gate`; the Passage that carried it.
    async fn cleared(&self, gate: &str, bundle: &str) -> Passage {
        let bundles: Api<Bundle> = self.env.api();
        let passages: Api<Passage> = self.env.api();
        eventually(
            Duration::from_secs(90),
            &format!("{bundle} clearing {gate}"),
            || async {
                bundles
                    .get(bundle)
                    .await
                    .ok()?
                    .has_cleared(gate)
                    .then_some(())
            },
        )
        .await;
        let list = passages.list(&Default::default()).await.unwrap().items;
        list.into_iter()
            .find(|p| {
                p.spec.gate == gate
                    && p.spec.bundle == bundle
                    && p.phase() == PassagePhase::Succeeded
            })
            .unwrap()
    }

    /// The Kustomization `app-<environment>` as Flux wrote it.
    async fn kustomization(&self, environment: &str) -> Value {
        let api = flux_api(&self.env, KUSTOMIZATION);
        let object = api.get(&format!("app-{environment}")).await.unwrap();
        serde_json::to_value(object).unwrap()
    }

    /// The Deployment `app` in `environment`'s namespace.
    async fn deployment(&self, environment: &str) -> Option<Deployment> {
        let target = fleet::target_namespace(self.ns(), environment);
        Api::<Deployment>::namespaced(self.env.admin.clone(), &target)
            .get_opt("app")
            .await
            .unwrap()
    }

    /// Waits until `environment` runs `version` on every replica.
    async fn runs(&self, environment: &str, version: &str) {
        let image = format!("ghcr.io/acme/app:{version}");
        eventually(
            Duration::from_secs(30),
            &format!("{environment} runs {image}"),
            || async {
                let deployment = self.deployment(environment).await?;
                let spec_image = deployment
                    .spec
                    .as_ref()?
                    .template
                    .spec
                    .as_ref()?
                    .containers
                    .first()?
                    .image
                    .clone()?;
                let status = deployment.status?;
                (spec_image == image
                    && status.updated_replicas == Some(2)
                    && status.available_replicas == Some(2)
                    && status.replicas == Some(2))
                .then_some(())
            },
        )
        .await;
    }
}

fn branches(environments: &[&str]) -> Vec<String> {
    environments.iter().map(|e| format!("env/{e}")).collect()
}

fn flux_api(env: &TestEnv, kind: Kind) -> Api<DynamicObject> {
    Api::namespaced_with(env.admin.clone(), &env.namespace, &kind.api_resource())
}

fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

#[tokio::test]
async fn a_release_crosses_dev_staging_and_production_on_flux() {
    let world = World::start(
        &world::DEV_STAGING_PRODUCTION,
        Release::healthy("0.1.0"),
        true,
    )
    .await;
    let ns = world.ns().to_string();
    let started = Instant::now();
    let bundle = world.poll_for(&world.app.head("main").await.unwrap()).await;

    // dev crosses by itself: the application's manifests at v0.1.0 rendered into the
    // fleet, pushed, reconciled by Flux at once, healthy by Flux's own check.
    let dev = world.cleared("dev", &bundle).await;
    eprintln!("dev crossed {:?} after the Bundle", started.elapsed());
    let status = dev.status.as_ref().unwrap();
    let commit = status
        .steps
        .iter()
        .find(|s| s.uses == "git-commit")
        .unwrap();
    let sha = commit.output.as_ref().unwrap()["sha"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(world.fleet.head("env/dev").await.unwrap(), sha);
    let kustomization = world.kustomization("dev").await;
    assert_eq!(
        kustomization["status"]["lastAppliedRevision"],
        json!(format!("env/dev@sha1:{sha}")),
        "Flux applied the commit the crossing pushed: {kustomization:#}"
    );
    world.runs("dev", "0.1.0").await;
    let rendered = world.fleet.show("env/dev:deploy/app.yaml").await.unwrap();
    assert!(
        rendered.contains("image: ghcr.io/acme/app:0.1.0"),
        "{rendered}"
    );

    // The Gate follows the real Kustomization: healthy.
    let gates: Api<Gate> = world.env.api();
    eventually(Duration::from_secs(20), "dev is healthy", || async {
        let status = gates.get("dev").await.ok()?.status?;
        (status.health?.status == Health::Healthy).then_some(())
    })
    .await;

    // staging when bob promotes; production once carol approves.
    let t = Instant::now();
    let (code, out) = hecate(
        &world.kubeconfigs,
        Identity::Bob,
        &["promote", "staging", "--bundle", &bundle, "-n", &ns],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    world.cleared("staging", &bundle).await;
    world.runs("staging", "0.1.0").await;
    eprintln!("staging crossed {:?} after bob promoted", t.elapsed());
    let t = Instant::now();
    let (code, out) = hecate(
        &world.kubeconfigs,
        Identity::Carol,
        &["approve", &bundle, "--gate", "production", "-n", &ns],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    let production = world.cleared("production", &bundle).await;
    world.runs("production", "0.1.0").await;
    eprintln!("production crossed {:?} after carol approved", t.elapsed());
    assert_eq!(production.spec.actor, "controller");

    // flux-reconcile's request was honoured by kustomize-controller itself.
    let kustomization = world.kustomization("production").await;
    let requested =
        kustomization["metadata"]["annotations"]["reconcile.fluxcd.io/requestedAt"].clone();
    assert!(requested.is_string(), "{kustomization:#}");
    assert_eq!(kustomization["status"]["lastHandledReconcileAt"], requested);
}

/// Issue 53: on real Flux a soak never finished — kustomize-controller re-applies
/// what it applied on its interval, saying `Ready=Unknown` for a moment each time, and
/// every such moment restarted the soak. Here Flux reconciles every 2 s through a 12 s
/// soak; the crossing is verified once the soak is up, and the Gate stayed Healthy
/// from before the soak began.
#[tokio::test]
async fn a_soak_finishes_while_flux_reconciles_on_its_interval() {
    let dev = [Stage {
        name: "dev",
        after: None,
        auto: true,
        approval: world::Approval::No,
        fan_out: None,
    }];
    let flux = FluxSettings {
        interval: "2s",
        ..FluxSettings::DEFAULT
    };
    let world = World::start_with(&dev, Release::healthy("0.1.0"), true, flux).await;
    let gates: Api<Gate> = world.env.api();
    let soak = json!({"spec": {"verify": [{"uses": "soak", "with": {"duration": "12s"}}]}});
    gates
        .patch("dev", &PatchParams::default(), &Patch::Merge(&soak))
        .await
        .unwrap();
    let bundle = world.poll_for(&world.app.head("main").await.unwrap()).await;
    let passages: Api<Passage> = world.env.api();
    let crossed = eventually(Duration::from_secs(90), "dev crossed", || async {
        let passage = passages
            .list(&Default::default())
            .await
            .ok()?
            .items
            .into_iter()
            .find(|p| p.spec.bundle == bundle && p.phase() == PassagePhase::Succeeded)?;
        Some(passage)
    })
    .await;
    let name = kube::ResourceExt::name_any(&crossed);
    let reconciled = |k: &Value| k["status"]["history"][0]["totalReconciliations"].as_u64();
    let before = reconciled(&world.kustomization("dev").await).unwrap_or_default();
    let healthy_since = eventually(Duration::from_secs(30), "dev healthy", || async {
        let health = gates.get("dev").await.ok()?.status?.health?;
        (health.status == Health::Healthy).then_some(health.since?)
    })
    .await;
    // One of Flux's routine reconciles, made to last: `Ready=Unknown` (`Progressing`)
    // at the revision it applied, as kustomize-controller writes it when a reconcile
    // starts — written again every 200 ms for three seconds, over the controller's own
    // writes, so the Gate's health watch surely sees it (a real one lasts under a
    // second and may fall between two looks). It is not an interruption.
    let kustomizations = flux_api(&world.env, KUSTOMIZATION);
    let reconciling = |type_: &str, status: &str| {
        json!({"type": type_, "status": status, "reason": "Progressing",
               "message": "Reconciliation in progress",
               "lastTransitionTime": jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()})
    };
    let blip = json!({"status": {"conditions": [
        reconciling("Ready", "Unknown"),
        reconciling("Reconciling", "True"),
    ]}});
    let held = Instant::now();
    while held.elapsed() < Duration::from_secs(3) {
        kustomizations
            .patch_status("app-dev", &PatchParams::default(), &Patch::Merge(&blip))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let verified = eventually(Duration::from_secs(45), "the soak to pass", || async {
        let verification = passages.get(&name).await.ok()?.status?.verification?;
        (verification.phase == hecate_types::VerificationPhase::Verified).then_some(verification)
    })
    .await;
    let after = reconciled(&world.kustomization("dev").await).unwrap_or_default();
    assert!(
        after >= before + 3,
        "Flux reconciled during the soak ({before} → {after} reconciliations)"
    );
    let health = gates
        .get("dev")
        .await
        .unwrap()
        .status
        .unwrap()
        .health
        .unwrap();
    assert_eq!(
        (health.status, health.since),
        (Health::Healthy, Some(healthy_since)),
        "Flux's routine reconciles never interrupted the Gate's health"
    );
    assert!(
        world
            .env
            .api::<Bundle>()
            .get(&bundle)
            .await
            .unwrap()
            .has_cleared("dev")
    );
    eprintln!("verified: {}", verified.message);
}

#[tokio::test]
async fn a_failed_health_check_fails_the_crossing_and_the_next_release_repairs_it() {
    let only_dev = [world::DEV_STAGING_PRODUCTION[0]];
    let world = World::start(&only_dev, Release::healthy("0.1.0"), true).await;
    let first = world.poll_for(&world.app.head("main").await.unwrap()).await;
    world.cleared("dev", &first).await;
    world.runs("dev", "0.1.0").await;

    // 0.2.0 asks for 2,000 CPUs a pod: the scheduler cannot place it, the Deployment
    // never becomes available, and kustomize-controller's health check says so.
    let broken = world.release(Release::unschedulable("0.2.0")).await;
    let passages: Api<Passage> = world.env.api();
    let failed = eventually(
        Duration::from_secs(120),
        "the broken release's crossing fails",
        || async {
            let list = passages.list(&Default::default()).await.ok()?.items;
            list.into_iter()
                .find(|p| p.spec.bundle == broken && p.phase() == PassagePhase::Failed)
        },
    )
    .await;
    let status = failed.status.clone().unwrap();
    let step = status.steps.iter().find(|s| s.uses == "flux-wait").unwrap();
    assert_eq!(step.reason, "FluxDegraded", "{status:#?}");
    let kustomization = world.kustomization("dev").await;
    let ready = condition(&kustomization, "Ready").unwrap();
    assert_eq!(ready["status"], "False", "{kustomization:#}");
    assert_eq!(ready["reason"], "HealthCheckFailed", "{kustomization:#}");
    eprintln!(
        "Flux said: {}; the step said: {}",
        ready["message"], step.message
    );
    // The old pods still serve: the rollout never finished.
    let deployment = world.deployment("dev").await.unwrap();
    assert_eq!(deployment.status.unwrap().available_replicas, Some(2));

    // The next release repairs the environment: its crossing succeeds.
    let fixed = world.release(Release::healthy("0.3.0")).await;
    world.cleared("dev", &fixed).await;
    world.runs("dev", "0.3.0").await;
    let kustomization = world.kustomization("dev").await;
    assert_eq!(
        condition(&kustomization, "Ready").unwrap()["status"],
        "True",
        "{kustomization:#}"
    );
}

#[tokio::test]
async fn hecate_flux_suspends_resumes_and_reconciles_the_real_kustomization() {
    let only_dev = [world::DEV_STAGING_PRODUCTION[0]];
    let world = World::start(&only_dev, Release::healthy("0.1.0"), true).await;
    let ns = world.ns().to_string();
    let first = world.poll_for(&world.app.head("main").await.unwrap()).await;
    world.cleared("dev", &first).await;
    let gates: Api<Gate> = world.env.api();
    let health = |wanted: Health| {
        let gates = gates.clone();
        async move {
            // A change of what the Gate watches wakes it (Flux's health check takes 30 s
            // to give up).
            eventually(
                Duration::from_secs(60),
                &format!("dev's health is {wanted:?}"),
                || async {
                    let health = gates.get("dev").await.ok()?.status?.health?;
                    (health.status == wanted).then_some(health)
                },
            )
            .await
        }
    };
    health(Health::Healthy).await;

    // bob may operate the Gate's Flux objects, as the chart's role allows.
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "bob-flux", "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "hecate-flux-operator"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}],
    });
    let bindings: Api<k8s_openapi::api::rbac::v1::RoleBinding> = world.env.api();
    bindings
        .create(
            &Default::default(),
            &serde_json::from_value(binding).unwrap(),
        )
        .await
        .unwrap();
    let bob = |args: &'static [&'static str]| {
        let ns = ns.clone();
        let kubeconfigs = world.kubeconfigs.clone();
        async move {
            let mut all: Vec<&str> = args.to_vec();
            all.extend(["-n", &ns]);
            let (code, out) = hecate(&kubeconfigs, Identity::Bob, &all).await;
            assert_eq!(code, 0, "hecate {args:?}: {out}");
            out
        }
    };

    // Suspended: Flux says nothing new, the Gate says it cannot judge.
    bob(&["flux", "suspend", "dev", "Kustomization/app-dev"]).await;
    assert_eq!(
        world.kustomization("dev").await["spec"]["suspend"],
        json!(true)
    );
    let suspended = health(Health::Unknown).await;
    assert!(
        suspended.issues.iter().any(|i| i.contains("suspended")),
        "{suspended:?}"
    );
    let listed = bob(&["flux", "dev", "-o", "json"]).await;
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert!(listed.to_string().contains("suspended"), "{listed:#}");

    // Resumed: Flux reconciles again, and the Gate is healthy again.
    bob(&["flux", "resume", "dev", "Kustomization/app-dev"]).await;
    assert_eq!(
        world.kustomization("dev").await["spec"]["suspend"],
        json!(false)
    );
    health(Health::Healthy).await;

    // Reconcile now: kustomize-controller itself says it handled the request.
    bob(&["flux", "reconcile", "dev", "Kustomization/app-dev"]).await;
    let requested = world.kustomization("dev").await["metadata"]["annotations"]
        ["reconcile.fluxcd.io/requestedAt"]
        .clone();
    assert!(requested.is_string());
    let api = flux_api(&world.env, KUSTOMIZATION);
    eventually(
        Duration::from_secs(30),
        "kustomize-controller handles the reconcile request",
        || async {
            let object = serde_json::to_value(api.get("app-dev").await.ok()?).ok()?;
            (object["status"]["lastHandledReconcileAt"] == requested).then_some(())
        },
    )
    .await;

    // A Gate's health follows what Flux reports: a broken apply of the environment's
    // branch, made outside Hecate, turns it Degraded by Flux's own health check.
    let broken = fleet::app_files("app", Release::unschedulable("9.9.9"));
    let deployment = broken
        .iter()
        .find(|(file, _)| file == "deploy/deployment.yaml")
        .map(|(_, text)| text.replace("image: app", "image: ghcr.io/acme/app:9.9.9"))
        .unwrap();
    let hand = world.root.join("hand-edit");
    let bare = world.fleet.bare.display().to_string();
    let root = world.root.clone();
    world::git(
        &root,
        &[
            "clone",
            "--quiet",
            "--branch",
            "env/dev",
            &bare,
            "hand-edit",
        ],
    )
    .await
    .unwrap();
    std::fs::write(hand.join("deploy/app.yaml"), deployment).unwrap();
    world::git(&hand, &["commit", "--quiet", "-am", "a hand edit"])
        .await
        .unwrap();
    world::git(&hand, &["push", "--quiet", "origin", "HEAD:env/dev"])
        .await
        .unwrap();
    // Flux notices the edit (as at its next interval; the Gate does not watch the
    // source, so it is not Hecate's to reconcile).
    let sources = flux_api(&world.env, GIT_REPOSITORY);
    let poke =
        json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": "hand-edit"}}});
    sources
        .patch("fleet-dev", &PatchParams::default(), &Patch::Merge(&poke))
        .await
        .unwrap();
    let degraded = health(Health::Degraded).await;
    assert!(
        degraded
            .issues
            .iter()
            .any(|i| i.contains("health check failed")),
        "{degraded:?}"
    );
}
