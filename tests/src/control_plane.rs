//! Starting, reaching and stopping a control plane: etcd and kube-apiserver on
//! loopback, with RBAC, static-token identities and the Hecate CRDs installed.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde::{Deserialize, Serialize};

use crate::binaries::{Binaries, progress};
use crate::identity::{Identity, token_file_line};
use crate::pki::Pki;

/// How long the API server may take to become ready.
const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// How long CRDs may take to become Established.
const ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(30);
/// The field manager of everything the test environment applies.
pub(crate) const FIELD_MANAGER: &str = "hecate-testenv";
/// The file, in a control plane's directory, that describes it.
const STATE_FILE: &str = "control-plane.json";

/// How long a control plane lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifetime {
    /// It ends with this process, however this process ends: a watchdog holding a
    /// pipe from it kills etcd and kube-apiserver (and removes their directory) when
    /// the pipe closes — on a normal exit, a panic or a `SIGKILL` alike.
    ThisProcess,
    /// It outlives this process, in its own process group, until
    /// [`ControlPlane::stop_detached`] ends it.
    Detached,
}

/// Everything a client needs to reach a running control plane. Written next to it as
/// `control-plane.json`, so another process can find it again.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Endpoint {
    /// The API server's URL, `https://127.0.0.1:<port>`.
    pub server: String,
    /// The CA that signed the API server's certificate, PEM.
    pub ca_pem: String,
    /// Each identity's bearer token.
    pub tokens: BTreeMap<Identity, String>,
    /// The directory holding etcd's data, the keys and the logs.
    pub dir: PathBuf,
    /// The process ids of etcd, kube-apiserver and whatever else runs beside them.
    pub pids: Vec<u32>,
    /// What runs beside etcd and kube-apiserver.
    #[serde(default)]
    pub parts: Parts,
}

impl Endpoint {
    /// A kubeconfig with a context (and user) per identity, named after it, whose
    /// current context is `current`.
    pub fn kubeconfig_yaml(&self, current: Identity) -> String {
        use base64::Engine as _;
        let ca = base64::engine::general_purpose::STANDARD.encode(&self.ca_pem);
        let contexts: Vec<_> = Identity::ALL
            .iter()
            .map(|who| serde_json::json!({"name": who.username(), "context": {"cluster": "hecate-dev", "user": who.username(), "namespace": "default"}}))
            .collect();
        let users: Vec<_> = Identity::ALL
            .iter()
            .map(|who| serde_json::json!({"name": who.username(), "user": {"token": self.tokens.get(who).cloned().unwrap_or_default()}}))
            .collect();
        let kubeconfig = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "hecate-dev", "cluster": {"server": self.server, "certificate-authority-data": ca}}],
            "contexts": contexts,
            "users": users,
            "current-context": current.username(),
        });
        serde_yaml_ng::to_string(&kubeconfig).unwrap_or_default()
    }

    /// A kubeconfig with `who`'s credentials alone — one cluster, one user, one
    /// context, all named `name` — as a user hands over to connect a cluster: nobody
    /// else's token rides along.
    pub fn kubeconfig_of(&self, who: Identity, name: &str) -> String {
        use base64::Engine as _;
        let ca = base64::engine::general_purpose::STANDARD.encode(&self.ca_pem);
        let token = self.tokens.get(&who).cloned().unwrap_or_default();
        let kubeconfig = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": self.server, "certificate-authority-data": ca}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}],
            "users": [{"name": name, "user": {"token": token}}],
            "current-context": name,
        });
        serde_yaml_ng::to_string(&kubeconfig).unwrap_or_default()
    }

    /// Waits until the API server answers `/readyz` with `ok`, for at most `limit`.
    pub async fn wait_ready(&self, limit: Duration) -> anyhow::Result<()> {
        let client = self.client(Identity::Admin).await?;
        let deadline = Instant::now() + limit;
        loop {
            let request = http::Request::get("/readyz").body(Vec::new())?;
            if client
                .request_text(request)
                .await
                .is_ok_and(|body| body.trim() == "ok")
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "kube-apiserver at {} was not ready after {limit:?}:\n{}",
                    self.server,
                    tail(&self.dir.join("kube-apiserver.log"), 30)
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A client that authenticates as `who`.
    pub async fn client(&self, who: Identity) -> anyhow::Result<kube::Client> {
        let kubeconfig = Kubeconfig::from_yaml(&self.kubeconfig_yaml(who))?;
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
        Ok(kube::Client::try_from(config)?)
    }

    /// A client that authenticates as `who` and records every request it sends
    /// (`"GET /apis/…?…"`), for tests that bound how many requests an operation costs.
    pub async fn recording_client(
        &self,
        who: Identity,
    ) -> anyhow::Result<(kube::Client, RequestLog)> {
        let kubeconfig = Kubeconfig::from_yaml(&self.kubeconfig_yaml(who))?;
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
        let log = RequestLog::default();
        let recorder = log.clone();
        let layer =
            tower::util::MapRequestLayer::new(move |request: http::Request<kube::client::Body>| {
                recorder.record(&request);
                request
            });
        let client = kube::client::ClientBuilder::try_from(config)?
            .with_layer(&layer)
            .build();
        Ok((client, log))
    }

    /// Writes `kubeconfig` (all identities, admin current) and `kubeconfig-<name>` (one
    /// per identity, that identity current) into `dir`; returns the paths.
    pub fn write_kubeconfigs(&self, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = vec![dir.join("kubeconfig")];
        write_private(&written[0], &self.kubeconfig_yaml(Identity::Admin))?;
        for who in Identity::ALL {
            let path = dir.join(format!("kubeconfig-{}", who.username()));
            write_private(&path, &self.kubeconfig_yaml(who))?;
            written.push(path);
        }
        Ok(written)
    }
}

/// The requests a [`Endpoint::recording_client`] has sent, in order.
#[derive(Clone, Debug, Default)]
pub struct RequestLog(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl RequestLog {
    fn record<B>(&self, request: &http::Request<B>) {
        let line = format!("{} {}", request.method(), request.uri());
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(line);
    }

    /// Every request so far, as `"METHOD path?query"`.
    pub fn requests(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Forgets the requests so far.
    pub fn clear(&self) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

/// A running control plane. Dropping it does not stop it: with
/// [`Lifetime::ThisProcess`] it stops when the process ends; call
/// [`ControlPlane::stop`] to stop it sooner.
pub struct ControlPlane {
    endpoint: Endpoint,
    children: Vec<Child>,
    /// The watchdog: closing its stdin (explicitly, or by this process ending) makes it
    /// stop the control plane.
    watchdog: Option<Watchdog>,
    lifetime: Lifetime,
    /// How kube-apiserver was started, to start it again after
    /// [`ControlPlane::stop_api_server`].
    api_server: Option<ApiServer>,
}

/// kube-apiserver's command line, and which of the children it is.
struct ApiServer {
    program: PathBuf,
    args: Vec<std::ffi::OsString>,
    /// Its index in `children`.
    index: usize,
    /// Whether it runs: not after [`ControlPlane::stop_api_server`].
    running: bool,
}

/// What a control plane runs beside etcd and kube-apiserver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parts {
    /// A cluster that runs workloads without kubelets: kube-controller-manager,
    /// kube-scheduler, and kwok with one simulated node. A Deployment gets its
    /// ReplicaSet, its pods scheduled, and its pods reported Running and Ready.
    pub workloads: bool,
    /// Flux's own source-controller and kustomize-controller, with Flux's CRDs
    /// (needs `workloads`: what Flux applies must be able to become healthy).
    pub flux: bool,
    /// The Hecate CRDs, Established before the control plane counts as ready. Off for
    /// the test that installs them as a user does, with the Helm chart. A state file
    /// written before this part existed had them.
    #[serde(default = "installed_before")]
    pub hecate_crds: bool,
}

fn installed_before() -> bool {
    true
}

/// What a state file written before parts existed ran: the API server alone.
impl Default for Parts {
    fn default() -> Self {
        Parts::API_ONLY
    }
}

impl Parts {
    /// etcd and kube-apiserver alone: what most tests need, and the fastest.
    pub const API_ONLY: Parts = Parts {
        workloads: false,
        flux: false,
        hecate_crds: true,
    };
    /// Everything: a cluster that runs workloads, and Flux on it.
    pub const WITH_FLUX: Parts = Parts {
        workloads: true,
        flux: true,
        hecate_crds: true,
    };
    /// A cluster Hecate reaches from where it runs (see [`crate::clusters`]): workloads
    /// and Flux, nothing of Hecate's: its kinds live where Hecate runs, not where it
    /// deploys.
    pub const REMOTE: Parts = Parts {
        workloads: true,
        flux: true,
        hecate_crds: false,
    };
    /// A cluster that runs workloads, with nothing of Hecate's or Flux's installed:
    /// where the Helm chart is installed for real.
    pub const BARE_WORKLOADS: Parts = Parts {
        workloads: true,
        flux: false,
        hecate_crds: false,
    };
}

impl ControlPlane {
    /// Starts a control plane in `dir` (created; with [`Lifetime::ThisProcess`] it is
    /// removed when the control plane stops), waits until it is ready and has the
    /// Hecate CRDs Established. Blocks; safe to call from async code, which it does
    /// not run on.
    pub fn start(binaries: &Binaries, dir: &Path, lifetime: Lifetime) -> anyhow::Result<Self> {
        Self::start_with(binaries, dir, lifetime, &[])
    }

    /// The same, with `extra` flags for kube-apiserver (an OIDC issuer it trusts, say):
    /// for the test that needs them, on a control plane of its own.
    pub fn start_with(
        binaries: &Binaries,
        dir: &Path,
        lifetime: Lifetime,
        extra: &[String],
    ) -> anyhow::Result<Self> {
        Self::launch(binaries, dir, lifetime, extra, Parts::API_ONLY)
    }

    /// A control plane with `parts` beside it (see [`Parts`]); the programs they need
    /// are built first when they are not in the cache yet.
    pub fn start_parts(
        binaries: &Binaries,
        dir: &Path,
        lifetime: Lifetime,
        parts: Parts,
    ) -> anyhow::Result<Self> {
        Self::launch(binaries, dir, lifetime, &[], parts)
    }

    fn launch(
        binaries: &Binaries,
        dir: &Path,
        lifetime: Lifetime,
        extra: &[String],
        parts: Parts,
    ) -> anyhow::Result<Self> {
        // Everything is built before anything starts: a build takes minutes, and a
        // control plane should not sit waiting for it.
        let mut cluster = crate::cluster::Programs::locate_or_build(binaries, parts)?;
        let started = Instant::now();
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let pki = Pki::generate().context("generating the control plane's keys")?;
        write_private(&dir.join("ca.crt"), &pki.ca_cert)?;
        write_private(&dir.join("apiserver.crt"), &pki.serving_cert)?;
        write_private(&dir.join("apiserver.key"), &pki.serving_key)?;
        write_private(&dir.join("service-account.key"), &pki.service_account_key)?;
        write_private(
            &dir.join("service-account.pub"),
            &pki.service_account_public_key,
        )?;
        let tokens: BTreeMap<Identity, String> = Identity::ALL
            .iter()
            .map(|who| Ok((*who, random_token()?)))
            .collect::<anyhow::Result<_>>()?;
        let token_file: String = tokens
            .iter()
            .map(|(who, token)| token_file_line(*who, token) + "\n")
            .collect();
        write_private(&dir.join("tokens.csv"), &token_file)?;

        let watchdog = match lifetime {
            Lifetime::ThisProcess => Some(Watchdog::spawn(dir)?),
            Lifetime::Detached => None,
        };
        let [etcd_client, etcd_peer, apiserver] = free_ports()?;
        let mut plane = Self {
            endpoint: Endpoint {
                server: format!("https://127.0.0.1:{apiserver}"),
                ca_pem: pki.ca_cert,
                tokens,
                dir: dir.to_path_buf(),
                pids: Vec::new(),
                parts,
            },
            children: Vec::new(),
            watchdog,
            lifetime,
            api_server: None,
        };

        let etcd_data = dir.join("etcd");
        let mut etcd = Command::new(&binaries.etcd);
        etcd.args([
            "--name",
            "default",
            "--log-level",
            "warn",
            "--unsafe-no-fsync",
        ])
        .arg(format!("--data-dir={}", etcd_data.display()))
        .arg(format!(
            "--listen-client-urls=http://127.0.0.1:{etcd_client}"
        ))
        .arg(format!(
            "--advertise-client-urls=http://127.0.0.1:{etcd_client}"
        ))
        .arg(format!("--listen-peer-urls=http://127.0.0.1:{etcd_peer}"))
        .arg(format!(
            "--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer}"
        ))
        .arg(format!(
            "--initial-cluster=default=http://127.0.0.1:{etcd_peer}"
        ));
        plane.spawn("etcd", etcd)?;

        let mut kube_apiserver = Command::new(&binaries.kube_apiserver);
        let file = |name: &str| dir.join(name).display().to_string();
        kube_apiserver
            .arg(format!("--etcd-servers=http://127.0.0.1:{etcd_client}"))
            .arg(format!("--secure-port={apiserver}"))
            .args(["--bind-address=127.0.0.1", "--advertise-address=127.0.0.1"])
            .arg(format!("--cert-dir={}", file("certs")))
            .arg(format!("--tls-cert-file={}", file("apiserver.crt")))
            .arg(format!("--tls-private-key-file={}", file("apiserver.key")))
            .arg(format!("--token-auth-file={}", file("tokens.csv")))
            .arg(format!(
                "--service-account-key-file={}",
                file("service-account.pub")
            ))
            .arg(format!(
                "--service-account-signing-key-file={}",
                file("service-account.key")
            ))
            .args([
                "--service-account-issuer=https://kubernetes.default.svc",
                "--api-audiences=https://kubernetes.default.svc,hecate",
                "--authorization-mode=RBAC",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--disable-admission-plugins=ServiceAccount",
                "--enable-priority-and-fairness=false",
                "--profiling=false",
                "--v=1",
            ])
            .args(extra);
        plane.api_server = Some(ApiServer {
            program: kube_apiserver.get_program().into(),
            args: kube_apiserver.get_args().map(Into::into).collect(),
            index: plane.children.len(),
            running: true,
        });
        plane.spawn("kube-apiserver", kube_apiserver)?;

        // Readiness and CRD installation are async (kube); run them on a runtime of
        // their own, on a thread of their own, so callers may be async themselves.
        let endpoint = plane.endpoint.clone();
        let mut children = std::mem::take(&mut plane.children);
        let crds = parts.hecate_crds;
        let (children, ready) = std::thread::spawn(move || {
            let ready = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting a runtime")
                .and_then(|runtime| runtime.block_on(become_ready(&endpoint, &mut children, crds)));
            (children, ready)
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the readiness check panicked"))?;
        plane.children = children;
        if let Err(error) = ready {
            plane.stop();
            return Err(error);
        }
        if let Err(error) = cluster.start(&mut plane) {
            plane.stop();
            return Err(error);
        }
        if lifetime == Lifetime::Detached {
            let state = serde_json::to_string_pretty(&plane.endpoint)?;
            write_private(&dir.join(STATE_FILE), &state)?;
        }
        progress(&format!(
            "ready at {} in {:.1?}{}",
            plane.endpoint.server,
            started.elapsed(),
            cluster.summary()
        ));
        Ok(plane)
    }

    /// How to reach it.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Stops etcd and kube-apiserver now and waits for them to exit.
    pub fn stop(&mut self) {
        // The last started first: Flux and the controllers before the API server.
        for child in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.children.clear();
        // Closing the pipe lets the watchdog remove the directory and exit.
        self.watchdog = None;
    }

    /// Kills kube-apiserver (`SIGKILL`, as a crash or a lost machine ends it) and waits
    /// for it to exit; etcd and everything beside it keep running, and clients get
    /// "connection refused" until [`ControlPlane::start_api_server`]. Fails when it is
    /// not running.
    pub fn stop_api_server(&mut self) -> anyhow::Result<()> {
        let api_server = self.running_api_server()?;
        let index = api_server.index;
        api_server.running = false;
        let child = &mut self.children[index];
        child.kill().context("killing kube-apiserver")?;
        child.wait().context("waiting for kube-apiserver to exit")?;
        Ok(())
    }

    /// Starts kube-apiserver again after [`ControlPlane::stop_api_server`], with the
    /// same flags — the same port, certificate, tokens and etcd, so every
    /// [`Endpoint`] and kubeconfig of it works again — its log appended to the first
    /// one's. Returns once it runs, not once it is ready: see [`Endpoint::wait_ready`].
    /// Fails when it is running.
    pub fn start_api_server(&mut self) -> anyhow::Result<()> {
        let api_server = self
            .api_server
            .as_ref()
            .context("this control plane has no kube-apiserver")?;
        anyhow::ensure!(!api_server.running, "kube-apiserver is already running");
        let index = api_server.index;
        let mut command = Command::new(&api_server.program);
        command.args(&api_server.args);
        let child = self.spawn_logged("kube-apiserver", command, true)?;
        // In the place of the one stopped, so `stop` still ends it before etcd.
        let old = self.children[index].id();
        for pid in self.endpoint.pids.iter_mut().filter(|pid| **pid == old) {
            *pid = child.id();
        }
        self.children[index] = child;
        if let Some(api_server) = self.api_server.as_mut() {
            api_server.running = true;
        }
        if self.lifetime == Lifetime::Detached {
            let state = serde_json::to_string_pretty(&self.endpoint)?;
            write_private(&self.endpoint.dir.join(STATE_FILE), &state)?;
        }
        Ok(())
    }

    /// Suspends kube-apiserver (`SIGSTOP`): its port still accepts connections and
    /// nothing is answered — a cluster behind a network that drops packets, whose
    /// clients wait for their own timeouts — until [`ControlPlane::resume_api_server`].
    pub fn pause_api_server(&mut self) -> anyhow::Result<()> {
        self.signal_api_server("STOP")
    }

    /// Resumes kube-apiserver after [`ControlPlane::pause_api_server`] (`SIGCONT`).
    pub fn resume_api_server(&mut self) -> anyhow::Result<()> {
        self.signal_api_server("CONT")
    }

    fn signal_api_server(&mut self, name: &str) -> anyhow::Result<()> {
        let index = self.running_api_server()?.index;
        let pid = self.children[index].id();
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(pid.to_string())
            .status()
            .context("running kill")?;
        anyhow::ensure!(status.success(), "kill -{name} {pid}: {status}");
        // A signal is delivered, not obeyed, when `kill` returns: wait until every
        // thread is stopped (or none is), so no answer slips out after a pause.
        let stopped = name == "STOP";
        let deadline = Instant::now() + Duration::from_secs(5);
        while threads_stopped(pid) != Some(stopped) {
            anyhow::ensure!(
                Instant::now() < deadline,
                "kube-apiserver ({pid}) did not obey SIG{name} within 5 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    fn running_api_server(&mut self) -> anyhow::Result<&mut ApiServer> {
        let api_server = self
            .api_server
            .as_mut()
            .context("this control plane has no kube-apiserver")?;
        anyhow::ensure!(api_server.running, "kube-apiserver is stopped");
        Ok(api_server)
    }

    /// The detached control plane described in `dir`, if one is running there.
    pub fn find_detached(dir: &Path) -> Option<Endpoint> {
        let state = std::fs::read_to_string(dir.join(STATE_FILE)).ok()?;
        let endpoint: Endpoint = serde_json::from_str(&state).ok()?;
        endpoint
            .pids
            .iter()
            .all(|pid| is_ours(*pid, dir))
            .then_some(endpoint)
    }

    /// Stops the detached control plane described in `dir`: SIGTERM, then SIGKILL for
    /// whatever is still running after five seconds. Returns whether one was running.
    pub fn stop_detached(dir: &Path) -> anyhow::Result<bool> {
        let path = dir.join(STATE_FILE);
        let Ok(state) = std::fs::read_to_string(&path) else {
            return Ok(false);
        };
        let endpoint: Endpoint =
            serde_json::from_str(&state).with_context(|| format!("reading {}", path.display()))?;
        let running: Vec<u32> = endpoint
            .pids
            .iter()
            .copied()
            .filter(|pid| is_ours(*pid, dir))
            .collect();
        signal(&running, "TERM");
        let deadline = Instant::now() + Duration::from_secs(5);
        while running.iter().any(|pid| is_ours(*pid, dir)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        signal(&running, "KILL");
        std::fs::remove_file(&path)?;
        let _ = std::fs::remove_dir_all(dir.join("etcd"));
        Ok(!running.is_empty())
    }

    /// Starts `command` as one of the control plane's processes, logging to
    /// `<dir>/<name>.log`: stopped with it, and counted among its pids.
    pub(crate) fn spawn(&mut self, name: &str, command: Command) -> anyhow::Result<()> {
        let child = self.spawn_logged(name, command, false)?;
        self.endpoint.pids.push(child.id());
        self.children.push(child);
        Ok(())
    }

    /// Starts `command` logging to `<dir>/<name>.log` (appended to with `append`: a
    /// restart), watched by the watchdog; the caller keeps the child.
    fn spawn_logged(
        &mut self,
        name: &str,
        mut command: Command,
        append: bool,
    ) -> anyhow::Result<Child> {
        let log_path = self.endpoint.dir.join(format!("{name}.log"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&log_path)
            .with_context(|| format!("creating {}", log_path.display()))?;
        command
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        if self.lifetime == Lifetime::Detached {
            // Its own process group: Ctrl-C in the terminal that started it must not
            // end a control plane meant to outlive that command.
            command.process_group(0);
        }
        let child = command
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        if let Some(watchdog) = self.watchdog.as_mut() {
            watchdog.watch(child.id())?;
        }
        Ok(child)
    }
}

/// A `sh` process that reads process ids from its stdin until end-of-file, then stops
/// them and removes the control plane's directory. End-of-file comes when the process
/// holding the other end exits, however it exits.
struct Watchdog {
    stdin: ChildStdin,
}

impl Watchdog {
    const SCRIPT: &str = r#"
trap '' INT TERM HUP
pids=""
while read -r pid; do pids="$pids $pid"; done
if [ -n "$pids" ]; then
  kill -TERM $pids 2>/dev/null
  i=0
  while [ $i -lt 50 ] && kill -0 $pids 2>/dev/null; do sleep 0.1; i=$((i+1)); done
  kill -KILL $pids 2>/dev/null
fi
rm -rf "$1"
"#;

    fn spawn(dir: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new("sh")
            .args(["-c", Self::SCRIPT, "hecate-control-plane-watchdog"])
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting the control plane's watchdog (sh)")?;
        let stdin = child.stdin.take().context("the watchdog's stdin")?;
        Ok(Self { stdin })
    }

    fn watch(&mut self, pid: u32) -> anyhow::Result<()> {
        writeln!(self.stdin, "{pid}")?;
        self.stdin.flush()?;
        Ok(())
    }
}

/// Waits for `/readyz`, then (with `crds`) installs the CRDs and waits for them to be
/// Established.
async fn become_ready(
    endpoint: &Endpoint,
    children: &mut [Child],
    crds: bool,
) -> anyhow::Result<()> {
    let client = endpoint.client(Identity::Admin).await?;
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        for (child, name) in children.iter_mut().zip(["etcd", "kube-apiserver"]) {
            if let Some(status) = child.try_wait()? {
                let log = endpoint.dir.join(format!("{name}.log"));
                bail!(
                    "{name} exited ({status}) before the control plane was ready:\n{}",
                    tail(&log, 30)
                );
            }
        }
        let request = http::Request::get("/readyz").body(Vec::new())?;
        if client
            .request_text(request)
            .await
            .is_ok_and(|body| body.trim() == "ok")
        {
            break;
        }
        if Instant::now() > deadline {
            let log = endpoint.dir.join("kube-apiserver.log");
            bail!(
                "kube-apiserver was not ready after {READY_TIMEOUT:?}:\n{}",
                tail(&log, 30)
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if crds {
        install_crds(&client).await?;
        crate::rbac::install_records_policy(&client)
            .await
            .context("installing the records policy")?;
    }
    Ok(())
}

/// Applies the Hecate CRDs (server-side) and waits until the API server serves them.
pub async fn install_crds(client: &kube::Client) -> anyhow::Result<()> {
    apply_crds(client, &hecate_types::crd::all()).await
}

/// Applies the CRDs in `files` (YAML, one per file) as [`apply_crds`] does: another
/// project's, such as the Prometheus Operator's ServiceMonitor.
pub async fn install_crd_files(client: &kube::Client, files: &[PathBuf]) -> anyhow::Result<()> {
    let crds = files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading {}", file.display()))?;
            serde_yaml_ng::from_str(&text).with_context(|| format!("reading {}", file.display()))
        })
        .collect::<anyhow::Result<Vec<CustomResourceDefinition>>>()?;
    apply_crds(client, &crds).await
}

/// Applies `crds` (server-side, so repeating is harmless) and waits until each is
/// Established.
pub(crate) async fn apply_crds(
    client: &kube::Client,
    crds: &[CustomResourceDefinition],
) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for crd in crds {
        let name = crd.metadata.name.as_deref().unwrap_or_default();
        api.patch(name, &params, &Patch::Apply(crd))
            .await
            .with_context(|| format!("installing CRD {name}"))?;
    }
    let deadline = Instant::now() + ESTABLISHED_TIMEOUT;
    for crd in crds {
        let name = crd.metadata.name.as_deref().unwrap_or_default();
        loop {
            let current = api.get(name).await?;
            let established = current
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            if established {
                break;
            }
            if Instant::now() > deadline {
                bail!("CRD {name} was not Established after {ESTABLISHED_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(())
}

/// Three distinct loopback ports that were free a moment ago, and never handed out
/// before by this process: planes started at once (`clusters`) must not be given the
/// same port between its release here and its program binding it.
pub(crate) fn free_ports() -> anyhow::Result<[u16; 3]> {
    static HANDED_OUT: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut handed_out = HANDED_OUT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Hold every listener until three new ports are found, so the three differ.
    let mut held = Vec::new();
    let mut ports = Vec::new();
    while ports.len() < 3 {
        anyhow::ensure!(held.len() < 1000, "no three free loopback ports");
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        if handed_out.insert(port) {
            ports.push(port);
        }
        held.push(listener);
    }
    Ok([ports[0], ports[1], ports[2]])
}

fn random_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for a token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes a file only its owner can read: it may hold keys or tokens.
fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(contents.as_bytes())?;
    Ok(())
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Whether `pid` is still one of the control plane's processes in `dir` (and not a
/// stranger that inherited a recycled pid): each names `dir` on its command line, or
/// in its environment (Flux's controllers take their kubeconfig from `KUBECONFIG`).
fn is_ours(pid: u32, dir: &Path) -> bool {
    let dir = dir.as_os_str().as_encoded_bytes();
    let names_dir = |file: &str| {
        std::fs::read(format!("/proc/{pid}/{file}"))
            .is_ok_and(|text| !dir.is_empty() && text.windows(dir.len()).any(|w| w == dir))
    };
    names_dir("cmdline") || names_dir("environ")
}

/// Whether every thread of `pid` is stopped (`T`), none is, or (`None`) some are and
/// some are not yet, or it cannot be told.
fn threads_stopped(pid: u32) -> Option<bool> {
    let mut states = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("stat")).ok()?;
        let state = stat.rsplit(')').next()?.trim_start().chars().next()?;
        states.push(state == 'T');
    }
    match (states.iter().all(|s| *s), states.iter().any(|s| *s)) {
        (true, _) if !states.is_empty() => Some(true),
        (_, false) => Some(false),
        _ => None,
    }
}

fn signal(pids: &[u32], signal: &str) {
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .args(pids.iter().map(u32::to_string))
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::Parts;

    #[test]
    fn a_state_file_from_before_the_crds_were_a_part_still_reads() {
        let parts: Parts = serde_json::from_str(r#"{"workloads":true,"flux":true}"#).unwrap();
        assert_eq!(parts, Parts::WITH_FLUX);
        let bare: Parts =
            serde_json::from_str(&serde_json::to_string(&Parts::BARE_WORKLOADS).unwrap()).unwrap();
        assert_eq!(bare, Parts::BARE_WORKLOADS);
    }
}
