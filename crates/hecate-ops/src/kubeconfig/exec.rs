//! An `exec` credential plugin run for a kubeconfig from a Secret (DECISION 160), only
//! where the operator allows it (`--insecure-kubeconfig-exec`, Flux's flag): the
//! default of EKS (`aws eks get-token`), GKE (`gke-gcloud-auth-plugin`) and AKS
//! (`kubelogin`) kubeconfigs.
//!
//! Whoever writes the Secret chooses the program, so it runs bounded, not as kube-rs
//! runs one: a cleared environment (the kubeconfig's own `env`, the process's `PATH`,
//! a `HOME` of its own for this run, `KUBERNETES_EXEC_INFO`), stdin closed, stderr
//! never read, stdout read up to [`MAX_OUTPUT`], killed after its time. What it prints
//! is never repeated: a failure is said in our words (an exit status, "no token").

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use jiff::Timestamp;
use kube::config::{ExecConfig, ExecInteractiveMode};
use serde::Deserialize;
use tokio::io::AsyncReadExt as _;
use tokio::process::Command;

/// How long a plugin may take before it is killed.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The most a plugin may print: an ExecCredential is a token and a time.
pub const MAX_OUTPUT: u64 = 64 * 1024;
/// The version of the exchange when the kubeconfig names none.
const DEFAULT_API_VERSION: &str = "client.authentication.k8s.io/v1";

/// What a plugin answered: a bearer token, and until when it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credential {
    /// The token.
    pub token: String,
    /// When it expires; `None`: it does not say, and is used until a request fails.
    pub expires_at: Option<Timestamp>,
}

/// The cluster the plugin is asked about, when the kubeconfig asks to tell it
/// (`provideClusterInfo`).
#[derive(Clone, Debug, Default)]
pub struct ClusterInfo {
    /// Its server URL.
    pub server: String,
    /// Its CA bundle, base64, as the kubeconfig holds it.
    pub certificate_authority_data: Option<String>,
}

#[derive(Deserialize)]
struct ExecCredential {
    status: Option<ExecCredentialStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialStatus {
    token: Option<String>,
    expiration_timestamp: Option<String>,
}

/// Runs `exec`'s plugin (for `cluster`) and reads its credential, within `limit`.
/// `Err` says what went wrong in our words: never the plugin's output, its arguments
/// or its environment.
pub async fn credential(
    exec: &ExecConfig,
    cluster: &ClusterInfo,
    limit: Duration,
) -> Result<Credential, String> {
    let command = exec
        .command
        .as_deref()
        .filter(|c| !c.is_empty())
        .ok_or("its exec plugin names no command")?;
    if matches!(exec.interactive_mode, Some(ExecInteractiveMode::Always)) {
        return Err("its exec plugin asks to be interactive; it must run unattended".into());
    }
    let api_version = exec.api_version.as_deref().unwrap_or(DEFAULT_API_VERSION);
    let home = tempfile::tempdir().map_err(|_| "no HOME could be made for its exec plugin")?;
    let mut info = serde_json::json!({
        "apiVersion": api_version,
        "kind": "ExecCredential",
        "spec": {"interactive": false},
    });
    if exec.provide_cluster_info {
        info["spec"]["cluster"] = serde_json::json!({
            "server": cluster.server,
            "certificate-authority-data": cluster.certificate_authority_data,
        });
    }
    let mut child = Command::new(command);
    child
        .args(exec.args.iter().flatten())
        .env_clear()
        .envs(variables(exec))
        .env("HOME", home.path())
        .env("KUBERNETES_EXEC_INFO", info.to_string())
        .current_dir(home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    if let Some(path) = std::env::var_os("PATH") {
        child.env("PATH", path);
    }
    let mut child = child.spawn().map_err(
        |_| "its exec plugin cannot be started (is it installed where the controller runs?)",
    )?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or("its exec plugin's output cannot be read")?;
    let run = async {
        let mut printed = Vec::new();
        (&mut stdout)
            .take(MAX_OUTPUT + 1)
            .read_to_end(&mut printed)
            .await
            .map_err(|_| "its exec plugin's output cannot be read".to_string())?;
        if printed.len() as u64 > MAX_OUTPUT {
            return Err(format!(
                "its exec plugin printed more than {} KiB",
                MAX_OUTPUT / 1024
            ));
        }
        let status = child
            .wait()
            .await
            .map_err(|_| "its exec plugin could not be waited for".to_string())?;
        if !status.success() {
            return Err(match status.code() {
                Some(code) => format!("its exec plugin failed (exit status {code})"),
                None => "its exec plugin was killed by a signal".to_string(),
            });
        }
        Ok(printed)
    };
    // Dropping the child on a timeout kills it (`kill_on_drop`).
    let printed = tokio::time::timeout(limit, run).await.map_err(|_| {
        format!(
            "its exec plugin did not answer within {}s",
            limit.as_secs_f32()
        )
    })??;
    read(&printed)
}

/// The kubeconfig's `env` for the plugin: each `{name, value}`; entries without a
/// name are left out.
fn variables(exec: &ExecConfig) -> HashMap<String, String> {
    exec.env
        .iter()
        .flatten()
        .filter_map(|entry| {
            let name = entry.get("name").filter(|n| !n.is_empty())?;
            Some((
                name.clone(),
                entry.get("value").cloned().unwrap_or_default(),
            ))
        })
        .collect()
}

/// The credential in what a plugin printed.
fn read(printed: &[u8]) -> Result<Credential, String> {
    let answer: ExecCredential = serde_json::from_slice(printed)
        .map_err(|_| "its exec plugin printed no ExecCredential (JSON)".to_string())?;
    let status = answer
        .status
        .ok_or("its exec plugin's ExecCredential has no status")?;
    let token = status
        .token
        .filter(|t| !t.is_empty())
        .ok_or("its exec plugin's ExecCredential holds no token (client certificates from a plugin are not supported)")?;
    let expires_at = match status.expiration_timestamp {
        None => None,
        Some(at) => Some(at.parse::<Timestamp>().map_err(|_| {
            "its exec plugin's expirationTimestamp is not an RFC 3339 time".to_string()
        })?),
    };
    Ok(Credential { token, expires_at })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::{Path, PathBuf};

    use super::*;

    /// A plugin: a shell script in `dir` with `body`.
    fn plugin(dir: &Path, body: &str) -> PathBuf {
        let path = dir.join("plugin.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn exec(command: &Path, env: &[(&str, &str)]) -> ExecConfig {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": command,
            "args": ["--cluster", "eu-1"],
            "env": env.iter().map(|(n, v)| serde_json::json!({"name": n, "value": v})).collect::<Vec<_>>(),
            "provideClusterInfo": true,
        }))
        .unwrap()
    }

    const ANSWER: &str = r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t0k3n","expirationTimestamp":"2026-12-07T12:00:00Z"}}"#;

    async fn run(body: &str, limit: Duration) -> Result<Credential, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = plugin(dir.path(), body);
        credential(
            &exec(&path, &[("REGION", "eu")]),
            &ClusterInfo::default(),
            limit,
        )
        .await
    }

    #[tokio::test]
    async fn a_plugins_token_and_its_expiry_are_read() {
        let answer = run(&format!("echo '{ANSWER}'"), TIMEOUT).await.unwrap();
        assert_eq!(
            answer,
            Credential {
                token: "t0k3n".into(),
                expires_at: Some("2026-12-07T12:00:00Z".parse().unwrap()),
            }
        );
    }

    /// The plugin sees the kubeconfig's env, PATH, a HOME of its own and the exec
    /// info — nothing else of the controller's environment.
    #[tokio::test]
    async fn the_plugin_runs_in_a_cleared_environment() {
        // The test runs with more than the plugin may see (cargo's CARGO_*, at least).
        assert!(std::env::vars().any(|(name, _)| name.starts_with("CARGO")));
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("seen");
        let body = format!(
            "env | cut -d= -f1 | sort > {seen}\necho \"$KUBERNETES_EXEC_INFO\" >> {seen}\npwd >> {seen}\necho \"$@\" >> {seen}\necho '{ANSWER}'",
            seen = seen.display()
        );
        let path = plugin(dir.path(), &body);
        let cluster = ClusterInfo {
            server: "https://eu-1.example:6443".into(),
            certificate_authority_data: Some("Q0E=".into()),
        };
        credential(&exec(&path, &[("REGION", "eu")]), &cluster, TIMEOUT)
            .await
            .unwrap();
        let seen = std::fs::read_to_string(seen).unwrap();
        let lines: Vec<&str> = seen.lines().collect();
        let names: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
            .collect();
        // `sh` adds PWD (and SHLVL, `_` in some shells) of its own.
        for name in &names {
            assert!(
                [
                    "HOME",
                    "KUBERNETES_EXEC_INFO",
                    "PATH",
                    "REGION",
                    "PWD",
                    "SHLVL",
                    "_"
                ]
                .contains(name),
                "the plugin saw {name}: {seen}"
            );
        }
        for name in ["HOME", "KUBERNETES_EXEC_INFO", "PATH", "REGION"] {
            assert!(names.contains(&name), "{name} missing: {seen}");
        }
        let info: serde_json::Value = serde_json::from_str(
            lines
                .iter()
                .find(|l| l.starts_with('{'))
                .expect("the exec info"),
        )
        .unwrap();
        assert_eq!(info["kind"], "ExecCredential");
        assert_eq!(info["spec"]["interactive"], false);
        assert_eq!(
            info["spec"]["cluster"]["server"],
            "https://eu-1.example:6443"
        );
        // Its working directory is its own HOME, gone after the run.
        let home = lines.iter().find(|l| l.starts_with('/')).unwrap();
        assert!(!Path::new(home).exists(), "{home} was left behind");
        assert_eq!(lines.last(), Some(&"--cluster eu-1"));
    }

    #[tokio::test]
    async fn a_plugin_that_hangs_is_killed_at_its_time() {
        let started = std::time::Instant::now();
        let why = run(
            &format!("sleep 30\necho '{ANSWER}'"),
            Duration::from_millis(300),
        )
        .await
        .unwrap_err();
        assert_eq!(why, "its exec plugin did not answer within 0.3s");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// What a plugin prints, on failure or not, never reaches what is said.
    #[tokio::test]
    async fn failures_are_said_without_the_plugins_words() {
        let cases = [
            (
                "echo SECRET-TOKEN; exit 3",
                "its exec plugin failed (exit status 3)",
            ),
            (
                "echo SECRET-TOKEN",
                "its exec plugin printed no ExecCredential (JSON)",
            ),
            (
                r#"echo '{"status":{"token":""}}'"#,
                "its exec plugin's ExecCredential holds no token (client certificates from a plugin are not supported)",
            ),
            (
                r#"echo '{"status":{"token":"SECRET-TOKEN","expirationTimestamp":"SECRET-TIME"}}'"#,
                "its exec plugin's expirationTimestamp is not an RFC 3339 time",
            ),
            (
                "head -c 70000 /dev/zero | tr '\\0' 'x'",
                "its exec plugin printed more than 64 KiB",
            ),
        ];
        for (body, said) in cases {
            assert_eq!(run(body, TIMEOUT).await.unwrap_err(), said, "{body}");
        }
        let missing = ExecConfig {
            command: Some("/nonexistent/SECRET-plugin".into()),
            ..serde_json::from_value(serde_json::json!({})).unwrap()
        };
        let why = credential(&missing, &ClusterInfo::default(), TIMEOUT)
            .await
            .unwrap_err();
        assert_eq!(
            why,
            "its exec plugin cannot be started (is it installed where the controller runs?)"
        );
    }
}
