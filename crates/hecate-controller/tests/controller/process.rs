//! `hecate-controller` as users run it: its own process, its own identity with the
//! ClusterRole `deploy/` ships, its flags. Each test runs it sharded to its own
//! namespace (`--watch-label-selector`), so it never touches another test's Gates.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use hecate_testenv::{Identity, TestEnv};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams};
use tokio::process::{Child, Command};

/// The label a test puts on its namespace to be a shard of its own.
pub(crate) const SHARD_LABEL: &str = "hecate.dev/test-shard";

/// What the tests' world needs of an operator: its git repositories are bare
/// repositories on this disk, its servers (wiremock, git over HTTP, registries) listen
/// on loopback.
pub(crate) const TEST_WORLD: &[&str] = &["--allow-local-git", "--allow-local-http"];

/// The steps' tools for a reconciler run in the test's own process, with what
/// [`TEST_WORLD`] allows.
pub(crate) fn test_world_tools(client: kube::Client) -> hecate_steps::Tools {
    hecate_steps::Tools {
        git: hecate_sources::git::Limits::local(),
        reach: hecate_steps::reach::Reach {
            local: true,
            ..Default::default()
        },
        ..hecate_steps::Tools::new(client)
    }
}

/// A running `hecate-controller`, killed when dropped.
pub(crate) struct Controller {
    child: Child,
    pub(crate) metrics: SocketAddr,
    pub(crate) probes: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Controller {
    /// Starts the controller as `hecate-controller` (the deployed ClusterRole) over the
    /// namespaces labelled `SHARD_LABEL=<shard>`, and waits until it is ready. It may
    /// use what the tests' world is made of — repositories on this disk and servers on
    /// loopback ([`TEST_WORLD`]); [`Self::start_as_deployed`] starts it without.
    pub(crate) async fn start(env: &TestEnv, shard: &str, extra: &[&str]) -> Self {
        Self::start_with_env(env, shard, extra, &[]).await
    }

    /// [`Self::start`] with the flags' defaults, as the chart deploys it: no local git
    /// repositories, no `http` step to this host's addresses.
    pub(crate) async fn start_as_deployed(env: &TestEnv, shard: &str, extra: &[&str]) -> Self {
        Self::spawn(env, shard, extra, &[], false).await
    }

    /// [`Self::start`] with its metrics and probes served on every address of this
    /// host (`0.0.0.0`), as in a Pod: whatever local address a name resolves to
    /// reaches them.
    pub(crate) async fn start_serving_everywhere(env: &TestEnv, shard: &str) -> Self {
        let (command, dir) = Self::command(env, shard, &[], &[], true).await;
        Self::spawn_bound(command, dir, true).await
    }

    /// [`Self::start`] with these environment variables set too. Whatever `OTEL_*`
    /// variables the test run has are not passed on: tracing is on only when a test
    /// says so.
    pub(crate) async fn start_with_env(
        env: &TestEnv,
        shard: &str,
        extra: &[&str],
        vars: &[(&str, &str)],
    ) -> Self {
        Self::spawn(env, shard, extra, vars, true).await
    }

    /// [`Self::start`] as `user`, with only the rights RBAC gives that user (the
    /// administrator impersonating it, in the group the records policy trusts): what
    /// a shard needs, and no more.
    pub(crate) async fn start_as(env: &TestEnv, shard: &str, user: &str, extra: &[&str]) -> Self {
        let (command, dir) = Self::command(env, shard, extra, &[], true).await;
        let mut kubeconfig: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&env.endpoint().kubeconfig_yaml(Identity::Admin)).unwrap();
        for entry in kubeconfig["users"].as_sequence_mut().unwrap() {
            if entry["name"] == "admin" {
                entry["user"]["as"] = user.into();
                // It writes Hecate's records as the controller does (the records
                // policy trusts the group, as a chart's `trustedGroups` would).
                entry["user"]["as-groups"] = vec![hecate_testenv::rbac::RECORD_WRITER_GROUP].into();
            }
        }
        std::fs::write(
            dir.path().join("kubeconfig"),
            serde_yaml_ng::to_string(&kubeconfig).unwrap(),
        )
        .unwrap();
        Self::spawn_command(command, dir).await
    }

    async fn spawn(
        env: &TestEnv,
        shard: &str,
        extra: &[&str],
        vars: &[(&str, &str)],
        test_world: bool,
    ) -> Self {
        let (command, dir) = Self::command(env, shard, extra, vars, test_world).await;
        Self::spawn_command(command, dir).await
    }

    async fn spawn_command(command: Command, dir: tempfile::TempDir) -> Self {
        Self::spawn_bound(command, dir, false).await
    }

    /// Spawns `command` serving on loopback, or on every address when `everywhere`.
    async fn spawn_bound(mut command: Command, dir: tempfile::TempDir, everywhere: bool) -> Self {
        let (metrics, probes) = (free_port(), free_port());
        let bound = |addr: SocketAddr| {
            if everywhere {
                format!("0.0.0.0:{}", addr.port())
            } else {
                addr.to_string()
            }
        };
        let child = command
            .arg(format!("--metrics-bind-address={}", bound(metrics)))
            .arg(format!("--health-probe-bind-address={}", bound(probes)))
            .spawn()
            .unwrap();
        let controller = Self {
            child,
            metrics,
            probes,
            _dir: dir,
        };
        controller.wait_ready().await;
        controller
    }

    /// Runs the controller with `vars` until it exits by itself (within 30 s): its exit
    /// status and what it wrote to stderr.
    pub(crate) async fn run_to_exit(
        env: &TestEnv,
        vars: &[(&str, &str)],
    ) -> (std::process::ExitStatus, String) {
        let (mut command, _dir) = Self::command(env, "none", &[], vars, true).await;
        let child = command
            .args(["--metrics-bind-address=0", "--health-probe-bind-address=0"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
            .await
            .expect("it exits within 30 s")
            .unwrap();
        (
            output.status,
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// The command that runs the controller as `hecate-controller` over shard `shard`
    /// (with [`TEST_WORLD`] when `test_world`), and the directory its kubeconfig and
    /// work root are in.
    async fn command(
        env: &TestEnv,
        shard: &str,
        extra: &[&str],
        vars: &[(&str, &str)],
        test_world: bool,
    ) -> (Command, tempfile::TempDir) {
        hecate_testenv::rbac::install_controller_role(&env.admin)
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig: PathBuf = dir.path().join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            env.endpoint().kubeconfig_yaml(Identity::HecateController),
        )
        .unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_hecate-controller"));
        command
            .arg(format!("--watch-label-selector={SHARD_LABEL}={shard}"))
            .arg(format!("--work-root={}", dir.path().join("work").display()))
            .arg("--log-format=text")
            .args(if test_world { TEST_WORLD } else { &[] })
            .args(extra)
            .env("KUBECONFIG", &kubeconfig)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("OTEL_") {
                command.env_remove(name);
            }
        }
        command.envs(vars.iter().copied());
        (command, dir)
    }

    async fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = format!("http://{}/readyz", self.probes);
        while Instant::now() < deadline {
            if let Ok(response) = reqwest::get(&url).await
                && response.status().is_success()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("hecate-controller was not ready within 30 s");
    }

    /// The metrics, as scraped.
    pub(crate) async fn scrape(&self) -> String {
        reqwest::get(format!("http://{}/metrics", self.metrics))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    /// The sum of `hecate_controller_kube_requests_total` over its series.
    pub(crate) async fn requests_sent(&self) -> f64 {
        self.scrape()
            .await
            .lines()
            .filter(|l| l.starts_with("hecate_controller_kube_requests_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// Its process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id().expect("still running")
    }

    /// Sends it `signal` (`SIGSTOP` to freeze it, `SIGCONT` to let it go on).
    pub(crate) fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = i32::try_from(self.pid()).unwrap();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).unwrap();
    }

    /// Waits for it to exit by itself, for at most `limit`.
    pub(crate) async fn exits_within(mut self, limit: Duration) -> std::process::ExitStatus {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("it did not exit within {limit:?}"))
            .unwrap()
    }

    /// Kills it outright (SIGKILL): no clean-up, no hand-over.
    pub(crate) async fn kill(mut self) {
        self.child.kill().await.unwrap();
    }

    /// Asks it to stop as a kubelet does (SIGTERM) and waits for it to exit.
    pub(crate) async fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().expect("still running");
        let _ = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status();
        tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("it stops within 20 s")
            .unwrap()
    }
}

fn free_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// Labels `namespace` as shard `shard`.
pub(crate) async fn join_shard(env: &TestEnv, namespace: &str, shard: &str) {
    let patch = serde_json::json!({"metadata": {"labels": {SHARD_LABEL: shard}}});
    Api::<Namespace>::all(env.admin.clone())
        .patch(namespace, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

/// Polls `check` every 50 ms until it answers `Some`, for at most `limit`.
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
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
