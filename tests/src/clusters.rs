//! Clusters beyond the one Hecate runs in, for what spans clusters (fan-out, remote
//! Flux objects, drift): each a control plane of its own — etcd, kube-apiserver,
//! workloads on kwok, and Flux's own source-controller and kustomize-controller
//! ([`Parts::REMOTE`]) — connected to a namespace of Hecate's control plane as a
//! user connects one with Settings' "connect cluster" ([`Cluster::connect`]).
//!
//! - [`Clusters::shared`]: the test binary's clusters [`SHARED`] (`eu-1`, `eu-2`,
//!   `us-1`), started all at once on first use and stopped when the binary exits; a
//!   test takes a fresh namespace on each ([`Cluster::env`]). A test never stops one
//!   of these: the others use them too.
//! - [`Clusters::own`]: clusters of one test's own, for the test that stops, pauses or
//!   restarts one ([`Cluster::stop_api_server`], [`Cluster::pause_api_server`]): a
//!   cluster that cannot be reached, while the others still answer.
//! - [`follow`] and [`wait_applied`]: a cluster's Flux following a branch of a
//!   repository that [`crate::git_http`] serves. Flux's controllers run on this
//!   machine, so they reach the server's loopback address as the tests do.
//!
//! A cluster here has none of Hecate's kinds: they live where Hecate runs. Each costs
//! about what [`crate::TestEnv::with_flux`]'s does (seven processes); starting is
//! CPU-bound, so on two cores three at once took 11–17 s where one alone takes 6–8 s
//! (three in turn: about 20). Nothing starts until a test asks.
//!
//! The connection's shape — [`KUBECONFIG_KEY`], [`MANAGED_BY`], [`CREATED_BY`] and
//! `hecate.dev/cluster` — is Settings' (`hecate_ops::Ops::connect_cluster`), which
//! this crate cannot name (hecate-ops tests with it); a test of hecate-ops' holds the
//! two equal.
//!
//! ```no_run
//! # async fn example() {
//! use hecate_testenv::clusters::Clusters;
//! use hecate_testenv::{Identity, TestEnv};
//! let (home, clusters) = tokio::join!(TestEnv::new(), Clusters::shared());
//! let eu1 = clusters.get("eu-1");
//! let remote = eu1.env().await; // a namespace of this test's own there
//! eu1.connect(&home, "eu-1", &[("region", "eu")], Identity::Admin).await;
//! # }
//! ```

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ObjectMeta, Patch, PatchParams};
use serde_json::json;

use crate::binaries::{Binaries, progress};
use crate::control_plane::{ControlPlane, Endpoint, FIELD_MANAGER, Lifetime, Parts};
use crate::env::{TestEnv, off_runtime};
use crate::flux::{GIT_REPOSITORY, KUSTOMIZATION};
use crate::identity::Identity;

/// The names of the clusters [`Clusters::shared`] starts.
pub const SHARED: [&str; 3] = ["eu-1", "eu-2", "us-1"];

/// The key a connected cluster's Secret holds its kubeconfig under: Flux's
/// (`kubeConfig.secretRef`'s default), as `hecate_ops::rules::settings::KUBECONFIG_KEY`.
pub const KUBECONFIG_KEY: &str = "value";
/// The label on what Settings' writes create, as `hecate_ops::rules::settings::MANAGED_BY`.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "hecate");
/// The annotation naming who connected a cluster, as
/// `hecate_ops::rules::settings::CREATED_BY`.
pub const CREATED_BY: &str = "hecate.dev/created-by";

/// How long a restarted kube-apiserver may take to be ready again.
const RESTART_TIMEOUT: Duration = Duration::from_secs(60);

/// The binary's shared clusters, started on first use.
static SHARED_CLUSTERS: OnceLock<Result<Clusters, String>> = OnceLock::new();

/// Several clusters, each a control plane of its own with Flux, by name.
pub struct Clusters {
    members: Vec<Cluster>,
}

/// One of [`Clusters`]: a control plane of its own with workloads and Flux.
pub struct Cluster {
    name: String,
    endpoint: &'static Endpoint,
    plane: Mutex<ControlPlane>,
    /// One of [`Clusters::shared`]: never stopped by a test.
    shared: bool,
}

impl Clusters {
    /// Starts a cluster per name (distinct), all at once — a thread each — and returns
    /// when every one is ready: its API server, its node, Flux's CRDs and both of
    /// Flux's controllers. They stop with this process, or sooner when dropped. Blocks;
    /// builds what is missing first (see [`crate::Binaries`]).
    pub fn start(names: &[&str]) -> anyhow::Result<Self> {
        Self::start_as(names, false)
    }

    /// [`Clusters::start`] from async code: clusters of one test's own, which it may
    /// stop, pause and restart. Panics with the reason when they cannot be started: a
    /// test that cannot reach its clusters must fail, not pass.
    pub async fn own(names: &[&str]) -> Self {
        let names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
        off_runtime(move || {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            Self::start_as(&names, false)
        })
        .await
        .unwrap_or_else(|error| panic!("clusters of the test's own: {error:#}"))
    }

    /// The test binary's clusters [`SHARED`], started on first use (without blocking
    /// the caller's runtime, so `tokio::join!` with [`TestEnv::new`] starts both at
    /// once) and stopped when the binary exits. Panics as [`Clusters::own`] does.
    pub async fn shared() -> &'static Self {
        let shared = off_runtime(|| {
            SHARED_CLUSTERS
                .get_or_init(|| Self::start_as(&SHARED, true).map_err(|e| format!("{e:#}")))
        })
        .await;
        match shared {
            Ok(clusters) => clusters,
            Err(error) => panic!("no shared clusters: {error}"),
        }
    }

    fn start_as(names: &[&str], shared: bool) -> anyhow::Result<Self> {
        for (i, name) in names.iter().enumerate() {
            anyhow::ensure!(!names[..i].contains(name), "two clusters are named {name}");
        }
        let started = Instant::now();
        let binaries = Binaries::locate_or_build()?;
        // Built (or found) once, here, rather than by each thread waiting on the
        // build lock in turn.
        crate::cluster::Programs::locate_or_build(&binaries, Parts::REMOTE)?;
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let starting: Vec<_> = names
            .iter()
            .map(|name| {
                let dir = std::env::temp_dir().join(format!(
                    "hecate-{name}-{}-{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed)
                ));
                let binaries = binaries.clone();
                let thread = std::thread::spawn(move || {
                    ControlPlane::start_parts(&binaries, &dir, Lifetime::ThisProcess, Parts::REMOTE)
                });
                (name.to_string(), thread)
            })
            .collect();
        let mut members = Vec::new();
        let mut failures = Vec::new();
        for (name, thread) in starting {
            match thread.join() {
                Ok(Ok(plane)) => members.push(Cluster {
                    endpoint: Box::leak(Box::new(plane.endpoint().clone())),
                    name,
                    plane: Mutex::new(plane),
                    shared,
                }),
                Ok(Err(error)) => failures.push(format!("{name}: {error:#}")),
                Err(_) => failures.push(format!("{name}: starting it panicked")),
            }
        }
        if !failures.is_empty() {
            // Those that started stop as they are dropped.
            anyhow::bail!("{}", failures.join("\n"));
        }
        progress(&format!(
            "{} with Flux ({}) ready in {:.1?}",
            match names.len() {
                1 => "1 cluster".to_string(),
                n => format!("{n} clusters"),
            },
            names.join(", "),
            started.elapsed()
        ));
        Ok(Self { members })
    }

    /// The cluster named `name`. Panics when there is none: a test names its own.
    pub fn get(&self, name: &str) -> &Cluster {
        self.members
            .iter()
            .find(|cluster| cluster.name == name)
            .unwrap_or_else(|| panic!("no cluster {name}: there are {:?}", self.names()))
    }

    /// Every cluster, in the order they were named.
    pub fn iter(&self) -> impl Iterator<Item = &Cluster> {
        self.members.iter()
    }

    /// Their names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.members.iter().map(|c| c.name.as_str()).collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.plane().stop();
    }
}

impl Cluster {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How to reach its API server (its URL, CA and tokens). The same after a restart.
    pub fn endpoint(&self) -> &'static Endpoint {
        self.endpoint
    }

    /// A new namespace on this cluster, with an admin client there ([`TestEnv::on`]).
    pub async fn env(&self) -> TestEnv {
        TestEnv::on(self.endpoint).await
    }

    /// A kubeconfig for this cluster with `who`'s credentials alone, its cluster, user
    /// and context named after it: what a user pastes into "connect cluster". It
    /// reaches the cluster from this machine, where Hecate's controller runs in tests.
    pub fn kubeconfig(&self, who: Identity) -> String {
        self.endpoint.kubeconfig_of(who, &self.name)
    }

    /// Connects this cluster to `home`'s namespace as Settings' "connect cluster"
    /// does (`hecate_ops::Ops::connect_cluster`): an Opaque Secret `secret` labelled
    /// `hecate.dev/cluster: "true"` (which opts it in as a kubeconfig, DECISION 147)
    /// and [`MANAGED_BY`], annotated [`CREATED_BY`] `admin`, holding
    /// [`Cluster::kubeconfig`] for `who` under [`KUBECONFIG_KEY`] — with `labels`
    /// beside (`region=eu`, `tier=canary`) for Gates' selectors. Returns it as stored.
    pub async fn connect(
        &self,
        home: &TestEnv,
        secret: &str,
        labels: &[(&str, &str)],
        who: Identity,
    ) -> Secret {
        home.create(connection_secret(
            secret,
            &self.kubeconfig(who),
            labels,
            Identity::Admin.username(),
        ))
        .await
    }

    /// Kills its kube-apiserver (`SIGKILL`): clients are refused a connection, and
    /// Flux and the rest there keep running, until [`Cluster::start_api_server`].
    /// Panics for a shared cluster, or one already stopped.
    pub fn stop_api_server(&self) {
        self.own_plane()
            .stop_api_server()
            .unwrap_or_else(|error| panic!("stopping {}'s kube-apiserver: {error:#}", self.name));
    }

    /// Starts its kube-apiserver again — the same address, CA and tokens, so every
    /// kubeconfig of it works again — and waits until it is ready. Panics for a shared
    /// cluster, one running, or one not ready within a minute.
    pub async fn start_api_server(&self) {
        self.own_plane()
            .start_api_server()
            .unwrap_or_else(|error| panic!("starting {}'s kube-apiserver: {error:#}", self.name));
        self.endpoint
            .wait_ready(RESTART_TIMEOUT)
            .await
            .unwrap_or_else(|error| panic!("{}'s kube-apiserver again: {error:#}", self.name));
    }

    /// Suspends its kube-apiserver (`SIGSTOP`): connections are accepted and never
    /// answered, as behind a network that drops packets, until
    /// [`Cluster::resume_api_server`]. Panics as [`Cluster::stop_api_server`] does.
    pub fn pause_api_server(&self) {
        self.own_plane()
            .pause_api_server()
            .unwrap_or_else(|error| panic!("pausing {}'s kube-apiserver: {error:#}", self.name));
    }

    /// Resumes its kube-apiserver after [`Cluster::pause_api_server`].
    pub fn resume_api_server(&self) {
        self.own_plane()
            .resume_api_server()
            .unwrap_or_else(|error| panic!("resuming {}'s kube-apiserver: {error:#}", self.name));
    }

    fn plane(&self) -> MutexGuard<'_, ControlPlane> {
        self.plane.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn own_plane(&self) -> MutexGuard<'_, ControlPlane> {
        assert!(
            !self.shared,
            "cluster {} is shared by this binary's tests: stop, pause or restart only \
             clusters of the test's own (Clusters::own)",
            self.name
        );
        self.plane()
    }
}

/// The Secret that connects a cluster ([`Cluster::connect`]), not yet stored: named
/// `name`, holding `kubeconfig` under [`KUBECONFIG_KEY`], labelled
/// `hecate.dev/cluster: "true"`, [`MANAGED_BY`] and `labels`, annotated [`CREATED_BY`]
/// `actor`.
pub fn connection_secret(
    name: &str,
    kubeconfig: &str,
    labels: &[(&str, &str)],
    actor: &str,
) -> Secret {
    let mut all: std::collections::BTreeMap<String, String> = labels
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect();
    all.insert(MANAGED_BY.0.into(), MANAGED_BY.1.into());
    all.insert(hecate_types::wellknown::LABEL_CLUSTER.into(), "true".into());
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(all),
            annotations: Some([(CREATED_BY.into(), actor.into())].into()),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".into()),
        data: Some(
            [(
                KUBECONFIG_KEY.into(),
                ByteString(kubeconfig.as_bytes().to_vec()),
            )]
            .into(),
        ),
        ..Secret::default()
    }
}

/// Has Flux on the cluster `client` reaches apply `path` of `branch` of `url` (a
/// repository [`crate::git_http`] serves): GitRepository `name` and Kustomization
/// `name` in `namespace`, the Kustomization applying into `namespace`, pruning, with
/// health checks. Server-side apply, so repeating is harmless. Flux looks every
/// minute by itself; [`reconcile_now`] asks sooner.
pub async fn follow(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    url: &str,
    branch: &str,
    path: &str,
) -> anyhow::Result<()> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let source = json!({
        "apiVersion": GIT_REPOSITORY.api_version(),
        "kind": GIT_REPOSITORY.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"interval": "1m", "url": url, "ref": {"branch": branch}, "timeout": "20s"},
    });
    flux_api(client, namespace, GIT_REPOSITORY)
        .patch(name, &params, &Patch::Apply(&source))
        .await
        .with_context(|| format!("creating GitRepository {namespace}/{name}"))?;
    let kustomization = json!({
        "apiVersion": KUSTOMIZATION.api_version(),
        "kind": KUSTOMIZATION.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "interval": "1m",
            "retryInterval": "10s",
            "timeout": "30s",
            "path": path,
            "prune": true,
            "wait": true,
            "targetNamespace": namespace,
            "sourceRef": {"kind": GIT_REPOSITORY.kind, "name": name},
        },
    });
    flux_api(client, namespace, KUSTOMIZATION)
        .patch(name, &params, &Patch::Apply(&kustomization))
        .await
        .with_context(|| format!("creating Kustomization {namespace}/{name}"))?;
    Ok(())
}

/// Asks Flux to look now at GitRepository and Kustomization `name` in `namespace`
/// (Flux's `reconcile.fluxcd.io/requestedAt`, as `flux reconcile` does), rather than
/// at its interval: after a push.
pub async fn reconcile_now(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> anyhow::Result<()> {
    let token = format!(
        "{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    );
    let poke = json!({"metadata": {"annotations": {
        hecate_types::wellknown::ANNOTATION_RECONCILE_REQUESTED_AT: token,
    }}});
    for kind in [GIT_REPOSITORY, KUSTOMIZATION] {
        flux_api(client, namespace, kind)
            .patch(name, &PatchParams::default(), &Patch::Merge(&poke))
            .await
            .with_context(|| format!("asking {} {namespace}/{name} to reconcile", kind.kind))?;
    }
    Ok(())
}

/// Waits until Kustomization `name` in `namespace` reports `Ready=True` for its
/// current generation, having applied `commit` (a SHA); returns the revision it
/// reports (`main@sha1:<commit>`). Fails after `limit` with what it last said.
pub async fn wait_applied(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    commit: &str,
    limit: Duration,
) -> anyhow::Result<String> {
    let api = flux_api(client, namespace, KUSTOMIZATION);
    let deadline = Instant::now() + limit;
    loop {
        let last = api.get_opt(name).await.ok().flatten();
        if let Some(revision) = last.as_ref().and_then(|k| applied(k, commit)) {
            return Ok(revision);
        }
        if Instant::now() > deadline {
            let status = last.map(|k| k.data["status"].clone()).unwrap_or_default();
            anyhow::bail!(
                "Kustomization {namespace}/{name} did not apply {commit} within {limit:?}; \
                 its status: {status}"
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The revision `kustomization` applied, when it is `Ready=True` for its current
/// generation and that revision is `commit`.
fn applied(kustomization: &DynamicObject, commit: &str) -> Option<String> {
    let status = &kustomization.data["status"];
    let generation = kustomization.metadata.generation?;
    let ready = status["conditions"].as_array()?.iter().any(|c| {
        c["type"] == "Ready"
            && c["status"] == "True"
            && c["observedGeneration"].as_i64() == Some(generation)
    });
    let revision = status["lastAppliedRevision"].as_str()?;
    (ready && revision.ends_with(&format!(":{commit}"))).then(|| revision.to_string())
}

fn flux_api(
    client: &kube::Client,
    namespace: &str,
    kind: crate::flux::StandIn,
) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, &kind.api_resource())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_is_labelled_as_settings_labels_one_and_keeps_the_tests_labels() {
        let secret = connection_secret("eu-1", "apiVersion: v1\n", &[("region", "eu")], "admin");
        let labels = secret.metadata.labels.unwrap();
        assert_eq!(labels["hecate.dev/cluster"], "true");
        assert_eq!(labels["app.kubernetes.io/managed-by"], "hecate");
        assert_eq!(labels["region"], "eu");
        assert_eq!(
            secret.metadata.annotations.unwrap()["hecate.dev/created-by"],
            "admin"
        );
        assert_eq!(secret.data.unwrap()["value"].0, b"apiVersion: v1\n");
    }

    #[test]
    fn applied_needs_ready_for_this_generation_and_this_commit() {
        let object = |generation: i64, observed: i64, ready: &str, revision: &str| {
            serde_json::from_value::<DynamicObject>(json!({
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
                "kind": "Kustomization",
                "metadata": {"name": "app", "generation": generation},
                "status": {
                    "conditions": [{"type": "Ready", "status": ready, "observedGeneration": observed}],
                    "lastAppliedRevision": revision,
                },
            }))
            .unwrap()
        };
        assert_eq!(
            applied(&object(2, 2, "True", "main@sha1:abc"), "abc").as_deref(),
            Some("main@sha1:abc")
        );
        assert_eq!(applied(&object(2, 1, "True", "main@sha1:abc"), "abc"), None);
        assert_eq!(
            applied(&object(2, 2, "False", "main@sha1:abc"), "abc"),
            None
        );
        assert_eq!(applied(&object(2, 2, "True", "main@sha1:abd"), "abc"), None);
    }
}
