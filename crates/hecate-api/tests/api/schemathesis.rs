//! The API against its own description (issue 21, finding 7): schemathesis reads
//! `/api/openapi.json` from the real `hecate-api` binary, generates requests from it
//! — valid ones and invalid ones — and checks every answer against the document
//! (status codes, content types, headers, bodies' schemas, no 5xx, invalid data
//! rejected, valid data accepted, authentication honoured). It runs as a viewer
//! (alice) and as a promoter (bob) in a namespace holding a small pipeline, with a
//! bounded number of examples per operation so that it stays well under two minutes.
//! Any failure of any check, and any error, fails the test with schemathesis' report.
//!
//! schemathesis comes from `hecate_testenv::schemathesis`: installed from PyPI once
//! per machine (`cargo xtask test` does it first; a plain `cargo test` does it on
//! first use).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use hecate_testenv::fixtures::{bundle, bundle_status, gate, gate_spec, passage};
use hecate_testenv::rbac::grant_deployed_roles;
use hecate_testenv::{Identity, TestEnv};
use hecate_types::PassagePhase;
use serde_json::Value;

/// Test cases per operation and phase: enough to find what 73,171 cases found, few
/// enough for CI.
const MAX_EXAMPLES: &str = "25";
/// A fixed seed: a failure reproduces.
const SEED: &str = "21";

/// A free loopback port (bound, then released for the server to take).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The real binary on `port`, acting as the `hecate-api` identity (the deployed
/// ClusterRole) through `kubeconfig`; ready once `/readyz` says so.
async fn start_api(kubeconfig: &Path, port: u16) -> tokio::process::Child {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_hecate-api"))
        .args(["--addr", &format!("127.0.0.1:{port}")])
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let client = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let ready = client
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            return child;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "hecate-api was not ready within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What one run found, from schemathesis' JSON report.
#[derive(Debug, Default)]
struct Totals {
    /// Test cases generated and sent.
    cases: u64,
    /// Failures, as `<code> <title>: <count>`.
    failures: Vec<String>,
    /// Errors: an operation schemathesis could not test, a request that failed.
    errors: Vec<String>,
    /// Warnings (not failures: e.g. every generated name missing), by kind.
    warnings: Vec<String>,
}

fn totals(report: &Value) -> Totals {
    let listed = |key: &str, line: &dyn Fn(&Value) -> String| -> Vec<String> {
        report
            .get(key)
            .and_then(Value::as_array)
            .map(|items| items.iter().map(line).collect())
            .unwrap_or_default()
    };
    let text = |v: &Value, key: &str| v.get(key).map(ToString::to_string).unwrap_or_default();
    let warnings = report
        .get("warnings")
        .and_then(Value::as_object)
        .map(|kinds| {
            kinds
                .iter()
                .filter_map(|(kind, operations)| {
                    let n = operations.as_array().map_or(0, Vec::len);
                    (n > 0).then(|| format!("{kind}: {n} operations"))
                })
                .collect()
        })
        .unwrap_or_default();
    Totals {
        cases: report
            .pointer("/test_cases/generated")
            .and_then(Value::as_u64)
            .unwrap_or_default(),
        failures: listed("failures", &|f| {
            format!(
                "{} {}: {} ({})",
                text(f, "code"),
                text(f, "title"),
                text(f, "count"),
                text(f, "operations")
            )
        }),
        errors: listed("errors", &|e| e.to_string()),
        warnings,
    }
}

/// The configuration of a run: event streams read to their first event, and path
/// parameters drawn half the time from what the namespace holds (the rest generated),
/// so that requests reach real objects as well as missing ones.
fn config(namespace: &str) -> String {
    format!(
        r#"max-stream-events = 1

[dictionaries.namespaces]
values = ["{namespace}"]

[dictionaries.names]
values = ["dev", "staging", "production", "b1", "b2", "dev-1"]

[parameters]
"path.ns" = {{ dictionary = "namespaces", probability = 0.5 }}
"path.name" = {{ dictionary = "names", probability = 0.5 }}
"#
    )
}

/// schemathesis against the API at `base` as the holder of `token`, configured by
/// `config`: its totals, whether it exited successfully, and all it said.
async fn schemathesis(
    program: &Path,
    base: &str,
    token: &str,
    who: &str,
    dir: &Path,
) -> (Totals, bool, String) {
    let report = dir.join(format!("{who}.json"));
    let output = tokio::process::Command::new(program)
        .arg("--no-color")
        .arg("--config-file")
        .arg(dir.join("schemathesis.toml"))
        .arg("run")
        .arg(format!("{base}/api/openapi.json"))
        .args(["--url", base])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--checks", "all"])
        .args(["--max-examples", MAX_EXAMPLES])
        .args(["--seed", SEED])
        // One worker: hypothesis under Python 3.11 has crashed compiling in two threads.
        .args(["--workers", "1"])
        .args(["--request-timeout", "10"])
        .args(["--output-truncate", "false"])
        .args(["--report", "json"])
        .arg("--report-json-path")
        .arg(&report)
        .current_dir(dir)
        .env("SCHEMATHESIS_TELEMETRY", "false")
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = std::fs::read(&report)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null);
    let found = totals(&report);
    eprintln!("[schemathesis] as {who}: {found:#?}");
    (found, output.status.success(), said)
}

#[tokio::test]
async fn i21_the_api_answers_as_its_openapi_document_says() {
    let program = tokio::task::spawn_blocking(hecate_testenv::schemathesis::locate_or_install)
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("schemathesis is needed: {e:#}"));
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    // Something to read: dev → staging → production, two Bundles, a Passage.
    let mut dev = gate_spec(&[], false);
    dev.auto = true;
    gate(&env, "dev", dev).await;
    gate(&env, "staging", gate_spec(&["dev"], false)).await;
    gate(&env, "production", gate_spec(&["staging"], true)).await;
    let b1 = bundle(&env, "b1").await;
    bundle_status(&env, b1, &["dev", "staging"], &[]).await;
    passage(&env, "dev-1", "dev", "b1", PassagePhase::Succeeded).await;
    let b2 = bundle(&env, "b2").await;
    bundle_status(&env, b2, &["dev"], &[]).await;

    // Kubeconfigs and reports; the namespace is this test's own.
    let dir = std::env::temp_dir().join(format!("hecate-{}-schemathesis", env.namespace));
    env.endpoint().write_kubeconfigs(&dir).unwrap();
    let port = free_port();
    let _api = start_api(&dir.join("kubeconfig-hecate-api"), port).await;
    let base = format!("http://127.0.0.1:{port}");

    std::fs::write(dir.join("schemathesis.toml"), config(&env.namespace)).unwrap();

    // A viewer, then a promoter; every run reported before any verdict.
    let started = Instant::now();
    let mut runs = Vec::new();
    for who in [Identity::Alice, Identity::Bob] {
        let token = env.endpoint().tokens[&who].clone();
        let (found, succeeded, said) =
            schemathesis(&program, &base, &token, who.username(), &dir).await;
        runs.push((who, found, succeeded, said));
    }
    let cases: u64 = runs.iter().map(|(_, found, _, _)| found.cases).sum();
    for (who, found, _, _) in &runs {
        // Not failures: where generated requests mostly met 401/403 or 404.
        eprintln!("[schemathesis] warnings as {who}: {:?}", found.warnings);
    }
    eprintln!(
        "[schemathesis] {cases} test cases in {:.0?}",
        started.elapsed()
    );
    let failed: Vec<String> = runs
        .iter()
        .filter(|(_, found, succeeded, _)| {
            !succeeded || !found.failures.is_empty() || !found.errors.is_empty() || found.cases == 0
        })
        .map(|(who, found, _, said)| format!("schemathesis as {who}: {found:#?}\n{said}"))
        .collect();
    // How long it took is printed above, not asserted: on a loaded machine a time
    // limit fails a run whose every answer was right.
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
