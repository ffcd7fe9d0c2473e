//! The demo's pipeline, made by the controller on Flux's own controllers: an
//! application repository `shop` (its manifests under `deploy/`, a tag per release)
//! and a fleet repository with a branch per environment, both served over git's smart
//! HTTP; per environment a Flux `GitRepository` and `Kustomization` applying the fleet
//! into `demo-<env>`, where kwok runs the pods; a Beacon and three Gates — and
//! `hecate-controller` running as its own process, carrying six releases through dev
//! (by itself), staging (when bob promotes, then verified by a smoke test) and
//! production (once two release managers, carol and dave, approve: bob, who promoted
//! it, does not count). Each crossing renders shop's manifests at its release into the
//! fleet, pushes, asks Flux to reconcile, and waits for Flux to say it applied that
//! commit healthily.
//!
//! Production spans three clusters ([`world::DEMO_CLUSTERS`]), each a control plane of
//! its own with kwok and Flux, connected to the namespace as "connect cluster" does
//! and reached in waves: eu-1, the canary, which must stay healthy a while, then eu-2,
//! then us-1. Release 1.1.0's rollout halts on the canary at `flux-wait`: it asks for
//! 200 CPUs a pod, the scheduler cannot place production's eight, and the canary's
//! kustomize-controller gives up on them; the other clusters never see it, and bob
//! aborts it. Every other release rolls out wave by wave. Release 1.3.1 crosses staging and its smoke test says no: staging rolls
//! back to 1.3.0 by itself, and from then on asks every release to soak for 30 minutes.
//! It leaves the pipeline mid-story: the newest release soaking in staging, production
//! waiting for that soak to end and for a second approval of the release before it,
//! production frozen at weekends.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use hecate_ops::{Ops, Person};
use hecate_testenv::clusters::{self, Clusters};
use hecate_testenv::fleet::{self, FluxSettings, Release};
use hecate_testenv::git_http::GitHttp;
use hecate_testenv::world::{self, Repository};
use hecate_testenv::{Endpoint, Identity, apply_manifest};
use hecate_types::{
    Beacon, Bundle, Gate, Passage, RolloutPhase, TargetPhase, VerificationPhase, Window,
};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, Patch, PatchParams};
use tokio::process::{Child, Command};

use super::smoke::{self, Smoke};
use super::told::Receiver;

/// The environments this cluster's Flux applies; production is applied by each of
/// its clusters' own.
const ENVIRONMENTS: [&str; 2] = ["dev", "staging"];
/// The Gate that spans clusters.
const PRODUCTION: &str = "production";
/// The releases the story carries, oldest first.
pub(crate) const RELEASES: [&str; 6] = ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.3.1", "1.4.0"];
/// The release staging's smoke test says no to, and what is wrong with it: staging
/// rolls back by itself.
pub(crate) const FAILS_IN_STAGING: (&str, &str) =
    ("1.3.1", "its checkout answers 500 in 3 tries of 10");
/// The release production waits for a second release manager's approval of.
pub(crate) const AWAITS_APPROVAL: &str = "1.3.0";
/// How long staging asks a release to run healthy once 1.3.1 has shown why.
pub(crate) const SOAK: &str = "30m";
/// The release whose production crossing fails, and what is wrong with it.
pub(crate) const FAILS_IN_PRODUCTION: (&str, &str) = (
    "1.1.0",
    "its pods ask for 200 CPUs each where 200m was meant: dev's and staging's two fit \
     on the cluster, production's eight do not",
);
/// How many replicas production runs on each cluster (the others run the manifests'
/// two).
const PRODUCTION_REPLICAS: u32 = 8;
/// The step that crossing fails at, on the canary.
pub(crate) const FAILED_STEP: &str = "flux-wait";
/// The cluster it fails on: the canary.
pub(crate) const CANARY: &str = world::DEMO_CLUSTERS[0];
/// The label that makes the demo namespace the demo controller's shard, so it never
/// touches other namespaces of a shared control plane (the bench's, your own).
const SHARD: &str = "hecate.dev/demo";

/// The running pipeline: the controller and Flux keep going until it is dropped.
pub(crate) struct Pipeline {
    _controller: Child,
    _git: GitHttp,
    _smoke: Smoke,
    /// Production's clusters: they stop when the pipeline is dropped.
    pub(crate) clusters: Clusters,
    /// The Bundle of each release, in [`RELEASES`] order.
    pub(crate) bundles: Vec<String>,
    /// Where the demo's Notifier tells what happens.
    pub(crate) told: Receiver,
}

/// Builds the world under `dir`, starts `controller` over `namespace` and plays the
/// story; returns once the pipeline is in its final state.
pub(crate) async fn run(
    endpoint: &Endpoint,
    controller: &Path,
    kustomize: &Path,
    dir: &Path,
    namespace: &str,
    ui: &str,
) -> anyhow::Result<Pipeline> {
    let admin = endpoint.client(Identity::Admin).await?;
    let started = Instant::now();
    std::fs::create_dir_all(dir)?;
    // Production's clusters start while the rest is made.
    let clusters = tokio::task::spawn_blocking(|| Clusters::start(&world::DEMO_CLUSTERS));
    let first = release_of(RELEASES[0]);
    let shop = Repository::create(dir, "shop", &["main"], &fleet::app_files("shop", first)).await?;
    shop.tag(&first.tag()).await?;
    let branches: Vec<String> = ENVIRONMENTS
        .iter()
        .map(|env| format!("env/{env}"))
        .chain(
            world::DEMO_CLUSTERS
                .iter()
                .map(|cluster| format!("env/{PRODUCTION}-{cluster}")),
        )
        .collect();
    let branches: Vec<&str> = branches.iter().map(String::as_str).collect();
    let fleet = Repository::create(dir, "fleet", &branches, &fleet::fleet_files("shop")).await?;
    let git = GitHttp::start(dir).await?;
    let (shop_url, fleet_url) = (shop.served(&git), fleet.served(&git));

    let label = serde_json::json!({"metadata": {"labels": {SHARD: "true"}}});
    Api::<Namespace>::all(admin.clone())
        .patch(namespace, &PatchParams::default(), &Patch::Merge(&label))
        .await
        .context("labelling the demo namespace")?;
    fleet::flux_objects(
        &admin,
        namespace,
        &fleet_url,
        &ENVIRONMENTS,
        FluxSettings::DEFAULT,
    )
    .await
    .context("creating Flux's GitRepositories and Kustomizations")?;
    let clusters = clusters
        .await
        .context("starting production's clusters")?
        .context("starting production's clusters")?;
    connect_production(&admin, &clusters, namespace, &fleet_url).await?;
    apply_manifest(&admin, &manifest(namespace, &shop_url, &fleet_url), false)
        .await
        .context("applying the demo's Beacon and Gates")?;
    // Staging smoke-tests every release after it crosses, and rolls back by itself
    // when the test says no.
    let smoke = smoke::start(FAILS_IN_STAGING.0).await?;
    let verify = staging_verify(smoke.addr, &shop_url, false);
    let patch = serde_json::json!({"spec": {"verify": verify, "rollback": {"auto": true}}});
    Api::<Gate>::namespaced(admin.clone(), namespace)
        .patch("staging", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .context("giving staging its smoke test")?;

    // What people would be told, printed as it arrives (docs/NOTIFICATIONS.md).
    let told = Receiver::start().await?;
    tell(&admin, namespace, &told)
        .await
        .context("making the demo's Notifier")?;

    // The controller runs as the chart deploys it: its own identity, with the
    // ClusterRole `deploy/` ships and no more — what a user's installation has.
    hecate_testenv::rbac::install_controller_role(&admin)
        .await
        .context("installing the controller's ClusterRole")?;
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        endpoint.kubeconfig_yaml(Identity::HecateController),
    )?;
    let log = std::fs::File::create(dir.join("hecate-controller.log"))?;
    let child = Command::new(controller)
        .args([
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
            "--log-format=text",
            &format!("--watch-label-selector={SHARD}=true"),
            &format!("--work-root={}", dir.join("work").display()),
            &format!("--kustomize-path={}", kustomize.display()),
            // The smoke endpoint and the receiver of notices listen on loopback, as
            // everything here does.
            "--allow-local-http",
            &format!("--ui-url={ui}"),
        ])
        .env("KUBECONFIG", &kubeconfig)
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .context("starting hecate-controller")?;

    let story = Story {
        admin: admin.clone(),
        bob: Ops::new(endpoint.client(Identity::Bob).await?),
        carol: Ops::new(endpoint.client(Identity::Carol).await?),
        dave: Ops::new(endpoint.client(Identity::Dave).await?),
        namespace: namespace.to_string(),
    };
    let mut bundles: Vec<String> = Vec::new();
    for (i, release) in RELEASES.iter().enumerate() {
        if i > 0 {
            commit_release(&shop, release).await?;
        }
        let bundle = story.emitted(&bundles, release).await?;
        story.occupies("dev", &bundle).await?;
        eprintln!("[demo] shop {release} is {bundle}: crossed dev by itself");
        story
            .bob
            .promote(namespace, "staging", &bundle, "bob")
            .await?;
        if *release == FAILS_IN_STAGING.0 {
            let previous = bundles.last().context("a release before it")?;
            let rollback = story.rolled_back("staging", previous).await?;
            eprintln!(
                "[demo] bob promoted it through staging; staging's smoke test said no ({}), \
                 and staging rolled back to {} by itself as {rollback}",
                FAILS_IN_STAGING.1,
                RELEASES[i - 1]
            );
            let verify = staging_verify(smoke.addr, &shop_url, true);
            let patch = serde_json::json!({"spec": {"verify": verify}});
            Api::<Gate>::namespaced(admin.clone(), namespace)
                .patch("staging", &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .context("adding a soak to staging")?;
            eprintln!(
                "[demo] since then, staging asks every release to run {SOAK} healthy before it counts as verified"
            );
            bundles.push(bundle);
            continue;
        }
        if i == RELEASES.len() - 1 {
            story.occupies("staging", &bundle).await?;
            story.soaking("staging").await?;
            eprintln!(
                "[demo] bob promoted it through staging, where it soaks for {SOAK}: production waits until then"
            );
            bundles.push(bundle);
            continue;
        }
        story.cleared("staging", &bundle).await?;
        eprintln!("[demo] bob promoted it through staging");
        // Production asks two release managers, and bob — who promoted it through
        // staging — does not count: carol approves, then dave.
        story
            .carol
            .approve(namespace, &bundle, "production", person(Identity::Carol))
            .await?;
        if *release == AWAITS_APPROVAL {
            eprintln!(
                "[demo] carol approved it for production: 1 of the 2 release managers it asks"
            );
            bundles.push(bundle);
            continue;
        }
        story
            .dave
            .approve(namespace, &bundle, "production", person(Identity::Dave))
            .await?;
        if *release == FAILS_IN_PRODUCTION.0 {
            let passage = story.halted(PRODUCTION, &bundle).await?;
            story.bob.abort(namespace, &passage, "bob").await?;
            story.ended(&passage).await?;
            eprintln!(
                "[demo] carol and dave approved it; production's rollout {passage} halted on the canary, \
                 {CANARY}, at {FAILED_STEP}: {}, and Flux's health check there gave up on them; \
                 the other clusters never saw it, and bob aborted it",
                FAILS_IN_PRODUCTION.1
            );
        } else {
            story.cleared(PRODUCTION, &bundle).await?;
            eprintln!(
                "[demo] carol and dave approved it; production rolled it out by itself: {CANARY}, \
                 then eu, then us"
            );
        }
        bundles.push(bundle);
    }
    story.freeze_weekends().await?;
    eprintln!(
        "[demo] the story took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(Pipeline {
        _controller: child,
        _git: git,
        _smoke: smoke,
        clusters,
        bundles,
        told,
    })
}

/// The demo's Notifier: every notice of the namespace, signed, to `receiver`; its
/// address and key in a Secret that opts in to Hecate's use.
async fn tell(admin: &kube::Client, namespace: &str, receiver: &Receiver) -> anyhow::Result<()> {
    let apply = PatchParams::apply("hecate-demo").force();
    let secret = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "demo-notices", "labels": {"hecate.dev/usable": "true"}},
        "stringData": {"address": receiver.url(), "token": receiver.key},
    });
    Api::<Secret>::namespaced(admin.clone(), namespace)
        .patch("demo-notices", &apply, &Patch::Apply(&secret))
        .await?;
    let notifier = serde_json::json!({
        "apiVersion": "hecate.dev/v1alpha1", "kind": "Notifier",
        "metadata": {"name": "demo"},
        "spec": {"type": "generic-hmac", "secretRef": {"name": "demo-notices"}},
    });
    Api::<hecate_types::Notifier>::namespaced(admin.clone(), namespace)
        .patch("demo", &apply, &Patch::Apply(&notifier))
        .await?;
    Ok(())
}

/// Gives each of production's clusters, in a namespace of the Gate's name (where a
/// Gate's Flux objects are read, there as here), its Flux objects — GitRepository
/// `fleet-production-<cluster>` following branch `env/production-<cluster>`, and
/// Kustomization `app-production-<cluster>` applying it with
/// [`PRODUCTION_REPLICAS`] — and connects it to `namespace` as "connect cluster" does:
/// a Secret of its name holding an admin's kubeconfig, labelled by region (the first
/// the canary).
async fn connect_production(
    admin: &kube::Client,
    clusters: &Clusters,
    namespace: &str,
    fleet_url: &str,
) -> anyhow::Result<()> {
    let fan_out = world::DEMO_FAN_OUT;
    let apply = PatchParams::apply("hecate-demo").force();
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), namespace);
    for cluster in clusters.iter() {
        let name = cluster.name();
        let remote = cluster.endpoint().client(Identity::Admin).await?;
        let home = serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace},
        });
        Api::<Namespace>::all(remote.clone())
            .patch(namespace, &apply, &Patch::Apply(&home))
            .await
            .with_context(|| format!("creating namespace {namespace} on {name}"))?;
        let environment = format!("{PRODUCTION}-{name}");
        let replicas = [(environment.as_str(), PRODUCTION_REPLICAS)];
        let settings = FluxSettings {
            replicas: &replicas,
            ..FluxSettings::DEFAULT
        };
        fleet::flux_objects(&remote, namespace, fleet_url, &[&environment], settings)
            .await
            .with_context(|| format!("creating Flux's objects on {name}"))?;
        let labels = fan_out.labels(name);
        let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let secret = clusters::connection_secret(
            name,
            &cluster.kubeconfig(Identity::Admin),
            &labels,
            Identity::Admin.username(),
        );
        secrets
            .patch(name, &apply, &Patch::Apply(&secret))
            .await
            .with_context(|| format!("connecting cluster {name}"))?;
    }
    Ok(())
}

/// Staging's verifications: the smoke test of the release that crossed, asked every
/// five seconds — the shortest a verification may ask for — (two answers in a row
/// decide), and — once `soak` — 30 minutes healthy.
fn staging_verify(smoke: std::net::SocketAddr, shop: &str, soak: bool) -> serde_json::Value {
    let mut verify = vec![serde_json::json!({
        "uses": "http",
        "with": {
            "url": format!("http://{smoke}/smoke/${{{{ bundle.commit('{shop}').tag }}}}"),
            "interval": "5s",
            "successes": 2,
            "failures": 2,
            "timeout": "2m",
        },
    })];
    if soak {
        verify.push(serde_json::json!({"uses": "soak", "with": {"duration": SOAK}}));
    }
    serde_json::Value::Array(verify)
}

/// What release `version` of shop asks of the cluster.
fn release_of(version: &str) -> Release<'_> {
    if version == FAILS_IN_PRODUCTION.0 {
        Release {
            version,
            cpu: "200",
        }
    } else {
        Release::healthy(version)
    }
}

/// Commits shop `version`'s manifests to `main` and tags the commit `v<version>`.
async fn commit_release(shop: &Repository, version: &str) -> anyhow::Result<String> {
    let release = release_of(version);
    let sha = shop
        .commit_files(
            "main",
            &fleet::app_files("shop", release),
            &format!("shop {version}"),
        )
        .await?;
    shop.tag(&release.tag()).await?;
    Ok(sha)
}

/// Who acts in the story.
struct Story {
    admin: kube::Client,
    bob: Ops,
    carol: Ops,
    dave: Ops,
    namespace: String,
}

/// `who` as the cluster knows them (the test PKI's groups): whom an approval policy
/// counts.
fn person(who: Identity) -> Person {
    Person {
        name: who.username().into(),
        groups: who.groups().iter().map(|g| g.to_string()).collect(),
    }
}

impl Story {
    /// Asks Beacon `shop` to look now, and waits for the Bundle of `release`.
    async fn emitted(&self, earlier: &[String], release: &str) -> anyhow::Result<String> {
        let beacons: Api<Beacon> = Api::namespaced(self.admin.clone(), &self.namespace);
        let poke = serde_json::json!({"metadata": {"annotations": {
            "reconcile.fluxcd.io/requestedAt": format!("demo-{release}")
        }}});
        beacons
            .patch("shop", &PatchParams::default(), &Patch::Merge(&poke))
            .await?;
        until(&format!("a Bundle of shop {release}"), || async {
            let latest = beacons.get("shop").await.ok()?.status?.latest_bundle;
            (!latest.is_empty() && !earlier.contains(&latest)).then_some(latest)
        })
        .await
    }

    /// Waits until `bundle` is Gate `gate`'s occupant; if it never is, says what the
    /// Gate and its crossings say.
    async fn occupies(&self, gate: &str, bundle: &str) -> anyhow::Result<()> {
        let gates: Api<Gate> = Api::namespaced(self.admin.clone(), &self.namespace);
        let waited = until(&format!("{bundle} in {gate}"), || async {
            let current = gates.get(gate).await.ok()?.status?.current?;
            (current.bundle == bundle).then_some(())
        })
        .await;
        match waited {
            Ok(()) => Ok(()),
            Err(error) => Err(error.context(self.describe(gate).await)),
        }
    }

    /// Gate `gate`'s Ready condition and its Passages, one line each.
    async fn describe(&self, gate: &str) -> String {
        let gates: Api<Gate> = Api::namespaced(self.admin.clone(), &self.namespace);
        let passages: Api<Passage> = Api::namespaced(self.admin.clone(), &self.namespace);
        let mut lines = Vec::new();
        if let Ok(object) = gates.get(gate).await {
            for condition in object.status.map(|s| s.conditions).unwrap_or_default() {
                lines.push(format!(
                    "Gate {gate} {}={:?} {}: {}",
                    condition.type_, condition.status, condition.reason, condition.message
                ));
            }
        }
        if let Ok(list) = passages.list(&Default::default()).await {
            for passage in list.items.iter().filter(|p| p.spec.gate == gate) {
                let status = passage.status.clone().unwrap_or_default();
                lines.push(format!(
                    "Passage {} of {}: {:?} {}",
                    passage.metadata.name.as_deref().unwrap_or_default(),
                    passage.spec.bundle,
                    passage.phase(),
                    status.message
                ));
            }
        }
        lines.join("\n")
    }

    /// Waits until `gate` has rolled back to `bundle` by itself and verified it again;
    /// answers the rollback's Passage.
    async fn rolled_back(&self, gate: &str, bundle: &str) -> anyhow::Result<String> {
        let gates: Api<Gate> = Api::namespaced(self.admin.clone(), &self.namespace);
        let passages: Api<Passage> = Api::namespaced(self.admin.clone(), &self.namespace);
        let waited = until(&format!("{gate} rolling back to {bundle}"), || async {
            let current = gates.get(gate).await.ok()?.status?.current?;
            if current.bundle != bundle || current.verified != Some(true) {
                return None;
            }
            let rollback = passages.get(&current.passage).await.ok()?;
            rollback
                .metadata
                .annotations
                .as_ref()?
                .contains_key(hecate_types::wellknown::ANNOTATION_ROLLBACK_OF)
                .then_some(current.passage)
        })
        .await;
        match waited {
            Ok(name) => Ok(name),
            Err(error) => Err(error.context(self.describe(gate).await)),
        }
    }

    /// Waits until the crossing of `gate`'s occupant has passed every verification
    /// but its soak, which is under way.
    async fn soaking(&self, gate: &str) -> anyhow::Result<()> {
        let gates: Api<Gate> = Api::namespaced(self.admin.clone(), &self.namespace);
        let passages: Api<Passage> = Api::namespaced(self.admin.clone(), &self.namespace);
        let waited = until(&format!("{gate}'s soak to begin"), || async {
            let current = gates.get(gate).await.ok()?.status?.current?;
            let verification = passages
                .get(&current.passage)
                .await
                .ok()?
                .status?
                .verification?;
            verification
                .verifiers
                .iter()
                .all(|v| {
                    // A soak under way looks next when it ends, not in a minute.
                    let soaks = v.next_look_at.as_ref().is_some_and(|at| {
                        at.0 > jiff::Timestamp::now() + jiff::SignedDuration::from_mins(5)
                    });
                    v.phase == VerificationPhase::Verified || (v.uses == "soak" && soaks)
                })
                .then_some(())
        })
        .await;
        match waited {
            Ok(()) => Ok(()),
            Err(error) => Err(error.context(self.describe(gate).await)),
        }
    }

    /// Waits until `bundle` has cleared `gate`.
    async fn cleared(&self, gate: &str, bundle: &str) -> anyhow::Result<()> {
        let bundles: Api<Bundle> = Api::namespaced(self.admin.clone(), &self.namespace);
        until(&format!("{bundle} clearing {gate}"), || async {
            bundles
                .get(bundle)
                .await
                .ok()?
                .has_cleared(gate)
                .then_some(())
        })
        .await
    }

    /// Waits until the rollout of `bundle` through `gate` has halted, its canary
    /// failed; answers its Passage.
    async fn halted(&self, gate: &str, bundle: &str) -> anyhow::Result<String> {
        let passages: Api<Passage> = Api::namespaced(self.admin.clone(), &self.namespace);
        let waited = until(
            &format!("{bundle}'s rollout through {gate} halting on {CANARY}"),
            || async {
                let list = passages.list(&Default::default()).await.ok()?;
                list.items.into_iter().find_map(|passage| {
                    let rollout = passage.status.as_ref()?.rollout.as_ref()?;
                    let canary_failed = rollout
                        .targets
                        .iter()
                        .any(|t| t.name == CANARY && t.phase == TargetPhase::Failed);
                    (passage.spec.gate == gate
                        && passage.spec.bundle == bundle
                        && rollout.phase == RolloutPhase::Halted
                        && canary_failed)
                        .then(|| passage.metadata.name.clone().unwrap_or_default())
                })
            },
        )
        .await;
        match waited {
            Ok(name) => Ok(name),
            Err(error) => Err(error.context(self.describe(gate).await)),
        }
    }

    /// Waits until Passage `name` has finished.
    async fn ended(&self, name: &str) -> anyhow::Result<()> {
        let passages: Api<Passage> = Api::namespaced(self.admin.clone(), &self.namespace);
        until(&format!("{name} ending"), || async {
            passages.get(name).await.ok()?.is_terminal().then_some(())
        })
        .await
    }

    /// Production: no crossing starts at weekends.
    async fn freeze_weekends(&self) -> anyhow::Result<()> {
        let gates: Api<Gate> = Api::namespaced(self.admin.clone(), &self.namespace);
        let windows = vec![Window {
            schedule: "0 0 * * 6".into(),
            duration: "48h".into(),
            time_zone: "Europe/London".into(),
            deny: true,
        }];
        let patch = serde_json::json!({"spec": {"windows": windows}});
        gates
            .patch("production", &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }
}

/// Polls `check` until it answers, for up to three minutes (a rollout of production
/// over its clusters, wave by wave, takes about one).
async fn until<T, F, Fut>(what: &str, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Some(value) = check().await {
            return Ok(value);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the demo waited three minutes for {what}; see target/hecate-dev/demo-world/hecate-controller.log"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The Beacon and the Gates, as a person would write them.
fn manifest(namespace: &str, shop: &str, fleet: &str) -> String {
    world::Pipeline {
        namespace,
        beacon: "shop",
        app: shop,
        fleet,
        hook: None,
        stages: &world::DEMO_STAGES,
        flux: world::Flux::Real { reconcile: true },
    }
    .manifest()
}

/// `cargo xtask demo release`: commits the next minor version of shop to the running
/// demo's repository and asks Beacon `shop` to look now.
pub(crate) async fn release(dev_dir: &Path, namespace: &str) -> anyhow::Result<()> {
    let dir = dir(dev_dir);
    let shop = Repository {
        bare: dir.join("shop.git"),
        work: dir.join("shop-work"),
        url: format!("file://{}", dir.join("shop.git").display()),
    };
    let current = std::fs::read_to_string(shop.work.join("VERSION")).context(
        "no demo repository here: start `cargo xtask demo` first, then run this beside it",
    )?;
    let next = next_minor(current.trim())
        .with_context(|| format!("VERSION holds {current:?}, not a version"))?;
    let sha = commit_release(&shop, &next).await?;
    let kubeconfig = kube::config::Kubeconfig::read_from(dev_dir.join("kubeconfig"))
        .context("the demo's kubeconfig")?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    let client = kube::Client::try_from(config)?;
    let poke = serde_json::json!({"metadata": {"annotations": {
        "reconcile.fluxcd.io/requestedAt": format!("release-{next}")
    }}});
    Api::<Beacon>::namespaced(client, namespace)
        .patch("shop", &PatchParams::default(), &Patch::Merge(&poke))
        .await
        .context("asking Beacon shop to look (is the demo running?)")?;
    println!(
        "committed and tagged shop {next} (v{next}, {}) and asked Beacon shop to look.",
        &sha[..sha.len().min(8)]
    );
    println!("watch dev take it by itself:  hecate status -n {namespace} --watch");
    Ok(())
}

/// `1.3.0` → `1.4.0`.
fn next_minor(version: &str) -> Option<String> {
    let mut parts = version.split('.');
    let major: u64 = parts.next()?.parse().ok()?;
    let minor: u64 = parts.next()?.parse().ok()?;
    Some(format!("{major}.{}.0", minor + 1))
}

/// Where the demo keeps its repositories, work directories and the controller's log.
pub(crate) fn dir(dev_dir: &Path) -> PathBuf {
    dev_dir.join("demo-world")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_release_is_the_next_minor_version() {
        assert_eq!(super::next_minor("1.3.0").as_deref(), Some("1.4.0"));
        assert_eq!(super::next_minor("2.9").as_deref(), Some("2.10.0"));
        assert_eq!(super::next_minor("main"), None);
    }
}
