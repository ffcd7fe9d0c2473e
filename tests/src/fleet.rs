//! An application and its fleet on Flux's own controllers: what the end-to-end tests,
//! the demo and the bench deploy when the control plane runs Flux
//! ([`crate::Parts::WITH_FLUX`]).
//!
//! - The **application repository** holds its own manifests under `deploy/` (a
//!   Deployment and a kustomization naming the image tag of the release), and each
//!   release is a tag, `v1.2.3`, as people release.
//! - The **fleet repository** has a branch per environment, `env/<name>`, holding
//!   `values.yaml` (the record Hecate edits) and `deploy/`, what Flux applies there.
//! - In the cluster, per environment: a `GitRepository` `fleet-<env>` following
//!   `env/<env>` over git's smart HTTP ([`crate::git_http`]) and a `Kustomization`
//!   `app-<env>` applying its `./deploy` into namespace `<namespace>-<env>` with
//!   health checks (`wait: true`), as a Flux user writes them.
//!
//! A release fails the way releases do: its manifests ask for what the cluster cannot
//! give — 2,000 CPUs a pod where 2 were meant, more than kwok's node (1,000 CPUs) has;
//! or 200 where 200m were meant, which two replicas fit and production's eight do not —
//! so the scheduler leaves pods Pending, the Deployment never becomes available, and
//! kustomize-controller's own health check reports it.

use anyhow::Context as _;
use kube::api::{Api, DynamicObject, Patch, PatchParams};

use crate::control_plane::FIELD_MANAGER;
use crate::flux::{GIT_REPOSITORY, KUSTOMIZATION, StandIn};

/// What one release of the application asks of the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release<'a> {
    /// Its version, `1.2.3` (tagged `v1.2.3`).
    pub version: &'a str,
    /// Each pod's CPU request, as the manifest writes it.
    pub cpu: &'a str,
}

impl Release<'_> {
    /// A release that runs: each pod asks for a tenth of a CPU.
    pub fn healthy(version: &str) -> Release<'_> {
        Release {
            version,
            cpu: "100m",
        }
    }

    /// A release that can never run: each pod asks for 2,000 CPUs ("2000" for
    /// "2000m"), more than any node has.
    pub fn unschedulable(version: &str) -> Release<'_> {
        Release {
            version,
            cpu: "2000",
        }
    }

    /// Its tag.
    pub fn tag(&self) -> String {
        format!("v{}", self.version)
    }
}

/// The application's files for `release`: `deploy/kustomization.yaml` (the image tag)
/// and `deploy/deployment.yaml` (two replicas, the CPU it asks for), and `VERSION`.
pub fn app_files(app: &str, release: Release<'_>) -> Vec<(String, String)> {
    let Release { version, cpu } = release;
    vec![
        ("VERSION".into(), format!("{version}\n")),
        (
            "deploy/kustomization.yaml".into(),
            format!(
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - deployment.yaml\nimages:\n  - name: {app}\n    newName: ghcr.io/acme/{app}\n    newTag: \"{version}\"\n"
            ),
        ),
        ("deploy/deployment.yaml".into(), deployment(app, app, cpu)),
    ]
}

/// The fleet's files, the same on every environment's branch before any crossing:
/// the record Hecate edits, and what Flux applies until the first crossing renders the
/// application's own manifests over it.
pub fn fleet_files(app: &str) -> Vec<(String, String)> {
    vec![
        (
            "values.yaml".into(),
            format!(
                "# {app}, as deployed in this environment\n{app}:\n  image: ghcr.io/acme/{app}\n  revision: none # set by Hecate on each crossing\n"
            ),
        ),
        (
            format!("deploy/{app}.yaml"),
            deployment(app, &format!("ghcr.io/acme/{app}:0.0.0"), "100m"),
        ),
    ]
}

/// Deployment `app` of two replicas running `image`, each asking for `cpu`.
pub fn deployment(app: &str, image: &str, cpu: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {app}
  labels: {{app: {app}}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: {app}}}
  template:
    metadata:
      labels: {{app: {app}}}
    spec:
      containers:
        - name: {app}
          image: {image}
          resources:
            requests: {{cpu: "{cpu}", memory: 64Mi}}
"#
    )
}

/// How Flux follows and applies the fleet, per environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FluxSettings<'a> {
    /// How often Flux looks at the branch and re-applies it by itself.
    pub interval: &'a str,
    /// How long kustomize-controller waits for what it applied to become healthy.
    pub timeout: &'a str,
    /// Environments that run more replicas than the application's manifests say,
    /// by a patch on their Kustomization, as Flux users scale production.
    pub replicas: &'a [(&'a str, u32)],
}

impl FluxSettings<'static> {
    /// Flux's interval long enough that only a request makes it look sooner, and a
    /// health check that gives up on a release within half a minute.
    pub const DEFAULT: FluxSettings<'static> = FluxSettings {
        interval: "1m",
        timeout: "30s",
        replicas: &[],
    };
}

/// The name of the namespace environment `environment` deploys into.
pub fn target_namespace(namespace: &str, environment: &str) -> String {
    format!("{namespace}-{environment}")
}

/// Creates (server-side apply, so repeating is harmless), in `namespace`, for each of
/// `environments`: namespace `<namespace>-<env>` to deploy into, `GitRepository`
/// `fleet-<env>` following branch `env/<env>` of `fleet_url`, and `Kustomization`
/// `app-<env>` applying its `./deploy` there with health checks.
pub async fn flux_objects(
    client: &kube::Client,
    namespace: &str,
    fleet_url: &str,
    environments: &[&str],
    timings: FluxSettings<'_>,
) -> anyhow::Result<()> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let sources = api(client, namespace, GIT_REPOSITORY);
    let kustomizations = api(client, namespace, KUSTOMIZATION);
    for environment in environments {
        let target = target_namespace(namespace, environment);
        let object = serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": target},
        });
        namespaces
            .patch(&target, &params, &Patch::Apply(&object))
            .await
            .with_context(|| format!("creating namespace {target}"))?;
        let source = format!("fleet-{environment}");
        let object = serde_json::json!({
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "GitRepository",
            "metadata": {"name": source, "namespace": namespace},
            "spec": {
                "interval": timings.interval,
                "url": fleet_url,
                "ref": {"branch": format!("env/{environment}")},
                "timeout": "20s",
            },
        });
        sources
            .patch(&source, &params, &Patch::Apply(&object))
            .await
            .with_context(|| format!("creating GitRepository {source}"))?;
        let name = format!("app-{environment}");
        let patches: Vec<serde_json::Value> = timings
            .replicas
            .iter()
            .filter(|(scaled, _)| scaled == environment)
            .map(|(_, replicas)| {
                serde_json::json!({
                    "target": {"kind": "Deployment"},
                    "patch": format!(
                        "- op: replace\n  path: /spec/replicas\n  value: {replicas}\n"
                    ),
                })
            })
            .collect();
        let object = serde_json::json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "interval": timings.interval,
                "retryInterval": timings.interval,
                "timeout": timings.timeout,
                "path": "./deploy",
                "prune": true,
                "wait": true,
                "targetNamespace": target,
                "sourceRef": {"kind": "GitRepository", "name": source},
                "patches": patches,
            },
        });
        kustomizations
            .patch(&name, &params, &Patch::Apply(&object))
            .await
            .with_context(|| format!("creating Kustomization {name}"))?;
    }
    Ok(())
}

fn api(client: &kube::Client, namespace: &str, kind: StandIn) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, &kind.api_resource())
}
