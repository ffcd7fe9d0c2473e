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
