//! Running the built binary as an identity, and the objects the tests start from.

use std::path::{Path, PathBuf};
use std::process::Stdio;

pub(crate) use hecate_testenv::fixtures::*;
use hecate_testenv::{Identity, TestEnv};

/// What a run of `hecate` printed and how it exited.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// `hecate`, pointed at the test's namespace, as any identity.
pub(crate) struct Hecate {
    pub(crate) namespace: String,
    kubeconfigs: tempfile::TempDir,
}

impl Hecate {
    /// Kubeconfigs for every identity. Non-admin identities get full use of the
    /// Hecate kinds in the test's namespace (and nothing else).
    pub(crate) async fn new(env: &TestEnv) -> Self {
        let kubeconfigs = tempfile::tempdir().unwrap();
        env.endpoint()
            .write_kubeconfigs(kubeconfigs.path())
            .unwrap();
        for who in [Identity::Alice, Identity::Bob, Identity::Carol] {
            env.grant(
                who,
                &["get", "list", "watch", "create", "update", "patch"],
                &["gates", "bundles", "bundles/status", "passages", "beacons"],
            )
            .await;
        }
        Self {
            namespace: env.namespace.clone(),
            kubeconfigs,
        }
    }

    pub(crate) fn kubeconfig(&self, who: Identity) -> PathBuf {
        self.kubeconfigs
            .path()
            .join(format!("kubeconfig-{}", who.username()))
    }

    /// Runs `hecate <args> --kubeconfig <who's> -n <namespace>` to completion.
    pub(crate) async fn run(&self, who: Identity, args: &[&str]) -> Run {
        self.command(who, args).output().await.map(output).unwrap()
    }

    pub(crate) fn command(&self, who: Identity, args: &[&str]) -> tokio::process::Command {
        let mut command = binary(Path::new(env!("CARGO_BIN_EXE_hecate")));
        command
            .args(args)
            .arg("--kubeconfig")
            .arg(self.kubeconfig(who))
            .args(["-n", &self.namespace]);
        command
    }
}

/// The binary with a clean environment: no colour, no ambient kubeconfig.
pub(crate) fn binary(path: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(path);
    command
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

pub(crate) fn output(out: std::process::Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
