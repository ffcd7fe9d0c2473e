//! The world outside the cluster: bare git repositories on disk, a process playing
//! Flux, the binaries, and people at the command line.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hecate_testenv::flux::{self, KUSTOMIZATION};
use hecate_testenv::{Identity, TestEnv};
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

/// Runs git in `dir`, which must succeed; its output, trimmed.
pub(crate) async fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env("GIT_AUTHOR_NAME", "Dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "Dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A bare repository `name.git` under `root`, seeded from a work tree with `files` on
/// each of `branches`; returns its `file://` URL.
pub(crate) async fn repository(
    root: &Path,
    name: &str,
    branches: &[&str],
    files: &[(&str, &str)],
) -> String {
    let bare = root.join(format!("{name}.git"));
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "--bare", "--initial-branch", branches[0]]).await;
    let work = root.join(format!("{name}-work"));
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "--initial-branch", branches[0]]).await;
    for (file, text) in files {
        std::fs::write(work.join(file), text).unwrap();
    }
    git(&work, &["add", "."]).await;
    git(&work, &["commit", "-m", &format!("{name}: first")]).await;
    let url = format!("file://{}", bare.display());
    git(&work, &["remote", "add", "origin", &url]).await;
    for branch in branches {
        git(
            &work,
            &["push", "origin", &format!("HEAD:refs/heads/{branch}")],
        )
        .await;
    }
    url
}

/// A new commit on `branch` of the repository seeded by [`repository`]; its SHA.
pub(crate) async fn commit(
    root: &Path,
    name: &str,
    branch: &str,
    file: &str,
    text: &str,
) -> String {
    let work = root.join(format!("{name}-work"));
    std::fs::write(work.join(file), text).unwrap();
    git(&work, &["add", "."]).await;
    git(&work, &["commit", "-m", &format!("{name}: {text}")]).await;
    git(
        &work,
        &["push", "origin", &format!("HEAD:refs/heads/{branch}")],
    )
    .await;
    git(&work, &["rev-parse", "HEAD"]).await
}

/// The head of `branch` in the repository at `url`.
pub(crate) async fn head(root: &Path, url: &str, branch: &str) -> String {
    let line = git(root, &["ls-remote", url, &format!("refs/heads/{branch}")]).await;
    line.split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Plays Flux for the Kustomizations `app-<env>` in `namespace`: whenever branch
/// `env/<env>` of the fleet moves, report it applied, as Flux's kustomize-controller
/// would after syncing. Runs until the test ends.
pub(crate) fn play_flux(
    env: &TestEnv,
    root: PathBuf,
    fleet: String,
    environments: &[&'static str],
) {
    let client = env.admin.clone();
    let namespace = env.namespace.clone();
    let environments = environments.to_vec();
    tokio::spawn(async move {
        let mut applied = vec![String::new(); environments.len()];
        loop {
            for (i, environment) in environments.iter().enumerate() {
                let branch = format!("env/{environment}");
                let sha = head(&root, &fleet, &branch).await;
                if !sha.is_empty() && sha != applied[i] {
                    let revision = format!("{branch}@sha1:{sha}");
                    let name = format!("app-{environment}");
                    if flux::report_applied(&client, KUSTOMIZATION, &namespace, &name, &revision)
                        .await
                        .is_ok()
                    {
                        applied[i] = sha;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
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
