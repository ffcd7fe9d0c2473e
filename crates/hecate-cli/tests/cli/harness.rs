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
        for who in [
            Identity::Alice,
            Identity::Bob,
            Identity::Carol,
            Identity::Dave,
        ] {
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

/// Decodes `-o json` output into its type and back: the round trip gives exactly the
/// JSON printed (no field lost, none unknown to the type).
pub(crate) fn decoded<T: serde::de::DeserializeOwned + serde::Serialize>(run: &Run) -> T {
    assert_eq!(run.code, 0, "{run:?}");
    let printed: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", run.stdout));
    let value: T = serde_json::from_value(printed.clone())
        .unwrap_or_else(|e| panic!("not a {} ({e}): {printed}", std::any::type_name::<T>()));
    assert_eq!(serde_json::to_value(&value).unwrap(), printed);
    value
}

/// What a write prints with `-o json`: `{"action": …}` and ops' answer, flattened.
pub(crate) fn written<T: serde::de::DeserializeOwned + serde::Serialize>(
    run: &Run,
    action: &str,
) -> T {
    let mut printed: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", run.stdout));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        printed.as_object_mut().unwrap().remove("action"),
        Some(serde_json::Value::from(action)),
        "{}",
        run.stdout
    );
    decoded(&Run {
        code: 0,
        stdout: printed.to_string(),
        stderr: String::new(),
    })
}
