//! What turns a control plane into a cluster (see [`Parts`]): kube-controller-manager,
//! kube-scheduler and kwok, so workloads run without kubelets; and Flux's own
//! source-controller and kustomize-controller, with Flux's CRDs from their modules.
//! Each runs as a local process of the control plane's, as its admin, logging to
//! `<dir>/<name>.log`, and stops with it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};

use crate::binaries::Binaries;
use crate::control_plane::{ControlPlane, Parts, apply_crds, free_ports};
use crate::identity::Identity;
use crate::programs::{self, Built};

/// The simulated node's name.
pub const NODE: &str = "kwok-node-0";
/// The annotation that makes a node kwok's to manage.
const KWOK_NODE_ANNOTATION: (&str, &str) = ("kwok.x-k8s.io/node", "fake");
/// How long Flux's controllers may take to answer `/readyz`.
const FLUX_READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the node may take to be reported Ready.
const NODE_READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The programs `parts` need, found or built.
pub(crate) struct Programs {
    parts: Parts,
    binaries: Binaries,
    kwok: Option<Built>,
    flux: Option<(Built, Built)>,
    started: Vec<String>,
    took: Duration,
}

impl Programs {
    /// Finds — building them the first time — the programs `parts` need.
    pub(crate) fn locate_or_build(binaries: &Binaries, parts: Parts) -> anyhow::Result<Self> {
        let workloads = parts.workloads || parts.flux;
        let binaries = if workloads {
            binaries.clone().with_workloads()?
        } else {
            binaries.clone()
        };
        let kwok = workloads
            .then(|| programs::KWOK.locate_or_build())
            .transpose()?;
        let flux = if parts.flux {
            Some((
                programs::SOURCE_CONTROLLER.locate_or_build()?,
                programs::KUSTOMIZE_CONTROLLER.locate_or_build()?,
            ))
        } else {
            None
        };
        Ok(Self {
            parts,
            binaries,
            kwok,
            flux,
            started: Vec::new(),
            took: Duration::ZERO,
        })
    }

    /// Starts them beside `plane`'s ready API server, and waits until they work: the
    /// node Ready, Flux's CRDs Established and its controllers answering `/readyz`.
    pub(crate) fn start(&mut self, plane: &mut ControlPlane) -> anyhow::Result<()> {
        if self.kwok.is_none() && self.flux.is_none() {
            return Ok(());
        }
        let started = Instant::now();
        let dir = plane.endpoint().dir.clone();
        let kubeconfig = dir.join("admin.kubeconfig");
        std::fs::write(
            &kubeconfig,
            plane.endpoint().kubeconfig_yaml(Identity::Admin),
        )?;
        let endpoint = plane.endpoint().clone();
        if let Some(kwok) = &self.kwok {
            self.start_workloads(plane, &dir, &kubeconfig, kwok.clone())?;
            let endpoint = endpoint.clone();
            block_on(async move { register_node(endpoint.client(Identity::Admin).await?).await })??;
        }
        if let Some((source, kustomize)) = self.flux.clone() {
            let crds = flux_crds(&source, &kustomize)?;
            block_on(async move {
                let client = endpoint.client(Identity::Admin).await?;
                apply_crds(&client, &crds).await
            })??;
            let health = self.start_flux(plane, &dir, &kubeconfig, &source, &kustomize)?;
            block_on(wait_ready(health))??;
        }
        self.took = started.elapsed();
        Ok(())
    }

    fn start_workloads(
        &mut self,
        plane: &mut ControlPlane,
        dir: &Path,
        kubeconfig: &Path,
        kwok: Built,
    ) -> anyhow::Result<()> {
        let kubeconfig = format!("--kubeconfig={}", kubeconfig.display());
        let mut manager = Command::new(&self.binaries.kube_controller_manager);
        manager
            .arg(&kubeconfig)
            .arg(format!(
                "--service-account-private-key-file={}",
                dir.join("service-account.key").display()
            ))
            .arg(format!("--root-ca-file={}", dir.join("ca.crt").display()))
            .args([
                // No serving: nothing here asks it anything, and no port can clash.
                "--secure-port=0",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                // Fast enough that a test sees a rollout within a second or two.
                "--concurrent-deployment-syncs=5",
                "--v=1",
            ]);
        plane.spawn("kube-controller-manager", manager)?;

        let mut scheduler = Command::new(&self.binaries.kube_scheduler);
        scheduler
            .arg(&kubeconfig)
            .args(["--secure-port=0", "--leader-elect=false", "--v=1"]);
        plane.spawn("kube-scheduler", scheduler)?;

        let config = dir.join("kwok.yaml");
        std::fs::write(&config, kwok_stages(&kwok)?)?;
        let mut simulator = Command::new(&kwok.binary);
        simulator
            .arg(&kubeconfig)
            .arg(format!("--config={}", config.display()))
            .arg(format!(
                "--manage-nodes-with-annotation-selector={}={}",
                KWOK_NODE_ANNOTATION.0, KWOK_NODE_ANNOTATION.1
            ))
            .args([
                "--node-lease-duration-seconds=40",
                "--cidr=10.244.0.0/16",
                "--node-ip=127.0.0.1",
                "--server-address=",
            ]);
        plane.spawn("kwok", simulator)?;
        self.started
            .extend(["kube-controller-manager", "kube-scheduler", "kwok"].map(str::to_string));
        Ok(())
    }

    fn start_flux(
        &mut self,
        plane: &mut ControlPlane,
        dir: &Path,
        kubeconfig: &Path,
        source: &Built,
        kustomize: &Built,
    ) -> anyhow::Result<Vec<(String, String)>> {
        // controller-runtime takes its kubeconfig from the environment, not a flag.
        let storage = dir.join("flux-storage");
        std::fs::create_dir_all(&storage)?;
        // Held all at once, so the three differ.
        let [storage_port, source_health, kustomize_health] = free_ports()?;
        let common = [
            "--watch-all-namespaces=true",
            "--enable-leader-election=false",
            "--metrics-addr=0",
            "--log-encoding=console",
            "--log-level=info",
        ];
        // Flux's own sharding flag: objects the fast tests and the bench play Flux for
        // (labelled so) are left to them.
        let not_played = format!("--watch-label-selector=!{}", crate::flux::STAND_IN_LABEL);

        let mut sc = Command::new(&source.binary);
        sc.env("KUBECONFIG", kubeconfig)
            .args(common)
            .arg(&not_played)
            .arg(format!("--health-addr=127.0.0.1:{source_health}"))
            .arg(format!("--storage-path={}", storage.display()))
            .arg(format!("--storage-addr=127.0.0.1:{storage_port}"))
            .arg(format!("--storage-adv-addr=127.0.0.1:{storage_port}"))
            .env("RUNTIME_NAMESPACE", "flux-system")
            .env("TMPDIR", tmp_dir(dir, "source-controller")?);
        plane.spawn("source-controller", sc)?;

        let mut kc = Command::new(&kustomize.binary);
        kc.env("KUBECONFIG", kubeconfig)
            .args(common)
            .arg(&not_played)
            .arg(format!("--health-addr=127.0.0.1:{kustomize_health}"))
            .env("RUNTIME_NAMESPACE", "flux-system")
            .env("TMPDIR", tmp_dir(dir, "kustomize-controller")?);
        plane.spawn("kustomize-controller", kc)?;
        self.started
            .extend(["source-controller", "kustomize-controller"].map(str::to_string));
        Ok(vec![
            (
                "source-controller".into(),
                format!("http://127.0.0.1:{source_health}/readyz"),
            ),
            (
                "kustomize-controller".into(),
                format!("http://127.0.0.1:{kustomize_health}/readyz"),
            ),
        ])
    }

    /// What was started, for the control plane's "ready" line.
    pub(crate) fn summary(&self) -> String {
        if self.started.is_empty() {
            return String::new();
        }
        let mut summary = format!("; {} started in {:.1?}", self.started.join(", "), self.took);
        if self.parts.flux {
            summary.push_str(&format!(
                " (Flux: source-controller {}, kustomize-controller {})",
                programs::SOURCE_CONTROLLER.version,
                programs::KUSTOMIZE_CONTROLLER.version
            ));
        }
        summary
    }
}

/// kwok's configuration: the stages its module ships for nodes (initialised, kept
/// alive by a lease) and pods (ready once scheduled, completed, deleted), read from
/// the copies kept beside the binary.
fn kwok_stages(kwok: &Built) -> anyhow::Result<String> {
    let mut config = String::new();
    for file in programs::KWOK.keep {
        let path = kwok.file(file);
        let stage = std::fs::read_to_string(&path)
            .with_context(|| format!("reading kwok's stage {}", path.display()))?;
        config.push_str("---\n");
        config.push_str(&stage);
        if !stage.ends_with('\n') {
            config.push('\n');
        }
    }
    Ok(config)
}

/// Flux's CRDs, as its modules ship them.
fn flux_crds(source: &Built, kustomize: &Built) -> anyhow::Result<Vec<CustomResourceDefinition>> {
    let mut crds = Vec::new();
    for (built, program) in [
        (source, programs::SOURCE_CONTROLLER),
        (kustomize, programs::KUSTOMIZE_CONTROLLER),
    ] {
        for file in program.keep {
            let path = built.file(file);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let crd: CustomResourceDefinition = serde_yaml_ng::from_str(&text)
                .with_context(|| format!("parsing {}", path.display()))?;
            crds.push(crd);
        }
    }
    Ok(crds)
}

/// Registers the simulated node (kwok reports it Ready) and waits until it is.
async fn register_node(client: kube::Client) -> anyhow::Result<()> {
    let nodes: Api<Node> = Api::all(client);
    let node: Node = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": NODE,
            "annotations": {KWOK_NODE_ANNOTATION.0: KWOK_NODE_ANNOTATION.1},
            "labels": {
                "kubernetes.io/hostname": NODE,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
            },
        },
    }))?;
    match nodes.create(&PostParams::default(), &node).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(error) => return Err(error).context("registering the simulated node"),
    }
    let deadline = Instant::now() + NODE_READY_TIMEOUT;
    loop {
        let ready = nodes
            .get(NODE)
            .await?
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        if ready {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "kwok did not report node {NODE} Ready within {NODE_READY_TIMEOUT:?}: see kwok.log"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until each of `health` (name, `/readyz` URL) answers 200.
async fn wait_ready(health: Vec<(String, String)>) -> anyhow::Result<()> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()?;
    let deadline = Instant::now() + FLUX_READY_TIMEOUT;
    for (name, url) in health {
        loop {
            let ok = client
                .get(&url)
                .send()
                .await
                .is_ok_and(|answer| answer.status().is_success());
            if ok {
                break;
            }
            if Instant::now() > deadline {
                bail!("{name} was not ready within {FLUX_READY_TIMEOUT:?}: see {name}.log");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

/// A temporary directory of `name`'s own under the control plane's, removed with it.
fn tmp_dir(dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let tmp = dir.join("tmp").join(name);
    std::fs::create_dir_all(&tmp)?;
    Ok(tmp)
}

/// Runs `future` on a runtime of its own, on a thread of its own, so callers may be
/// async themselves.
fn block_on<F>(future: F) -> anyhow::Result<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map(|runtime| runtime.block_on(future))
    })
    .join()
    .map_err(|_| anyhow::anyhow!("a start-up task panicked"))?
    .context("starting a runtime")
}
