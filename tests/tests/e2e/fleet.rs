//! The binaries, and people at the command line.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use hecate_testenv::Identity;
use tokio::process::Command;

/// The workspace's binary `name`, beside this test's executable.
pub(crate) fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built: run `cargo build -p hecate-cli -p hecate-controller` (or the whole \
         workspace's tests, which build it)",
        path.display()
    );
    path
}

/// `hecate` as `who`, in `namespace`: its exit code and output.
pub(crate) async fn hecate(kubeconfigs: &Path, who: Identity, args: &[&str]) -> (i32, String) {
    let output = Command::new(binary("hecate"))
        .args(args)
        .env(
            "KUBECONFIG",
            kubeconfigs.join(format!("kubeconfig-{}", who.username())),
        )
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

/// `hecate-controller` as its own process, as the controller's identity, on `env`'s
/// namespace alone (labelled `shard`, which only this test's controller selects), its
/// work under `root`, with `extra` flags. Killed when dropped.
pub(crate) async fn controller(
    env: &hecate_testenv::TestEnv,
    root: &Path,
    shard: &str,
    extra: &[&str],
) -> tokio::process::Child {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{Api, Patch, PatchParams};
    let ns = &env.namespace;
    let patch = serde_json::json!({"metadata": {"labels": {shard: ns}}});
    Api::<Namespace>::all(env.admin.clone())
        .patch(ns, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    let kubeconfig = root.join("controller.kubeconfig");
    std::fs::write(
        &kubeconfig,
        env.endpoint().kubeconfig_yaml(Identity::HecateController),
    )
    .unwrap();
    Command::new(binary("hecate-controller"))
        .args([
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
            "--log-format=text",
            &format!("--watch-label-selector={shard}={ns}"),
            &format!("--work-root={}", root.join("work").display()),
        ])
        .args(extra)
        .env("KUBECONFIG", kubeconfig)
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}
