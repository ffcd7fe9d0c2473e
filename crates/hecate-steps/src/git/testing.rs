//! What the git steps' tests share: a step context over a temporary work directory,
//! and (from [`hecate_sources::git::testing`]) real bare repositories seeded with commits and a
//! real smart-HTTP git server on a loopback port.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hecate_sources::git::testing::{git, path, write};
use hecate_types::{Bundle, BundleSpec};
use jiff::Timestamp;
use serde_json::Value;
use tempfile::TempDir;

use crate::runner::{StepContext, StepError, StepResult};

/// When the test Passage started.
pub(crate) const STARTED_AT: &str = "2026-12-01T02:00:00Z";

/// A temporary root for work directories and remotes, and what a context borrows.
pub(crate) struct Fixture {
    pub(crate) root: TempDir,
    bundle: Bundle,
    outputs: BTreeMap<String, Value>,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        Self {
            root: tempfile::tempdir().expect("a temporary directory"),
            bundle: Bundle::new("app-0123456789ab", BundleSpec::default()),
            outputs: BTreeMap::new(),
        }
    }

    /// `<root>/<name>`, created: a Passage's work directory (a new name = a restart
    /// with an empty one).
    pub(crate) fn work_dir(&self, name: &str) -> PathBuf {
        let dir = self.root.path().join(name);
        std::fs::create_dir_all(&dir).expect("a work directory");
        dir
    }

    /// The context of Passage `dev-7f3a` crossing Gate `dev`, with `config` as `with:`.
    pub(crate) fn ctx<'a>(&'a self, work_dir: &'a Path, config: Value) -> StepContext<'a> {
        StepContext {
            namespace: "hecate-test",
            gate: "dev",
            passage: "dev-7f3a",
            bundle: &self.bundle,
            actor: "controller",
            work_dir,
            config,
            outputs: &self.outputs,
            attempt: 0,
            failed: false,
            traceparent: "",
            started_at: STARTED_AT.parse::<Timestamp>().expect("a time"),
        }
    }

    /// A bare repository `<root>/<name>.git` whose `main` holds `README.md` and
    /// `app/values.yaml`, and whose `env/dev` branch adds `dev.yaml`.
    pub(crate) async fn remote(&self, name: &str) -> PathBuf {
        hecate_sources::git::testing::bare_repo(self.root.path(), name).await
    }

    /// Someone else's commit on `branch` of `bare`, made through a clone of their own.
    pub(crate) async fn commit_elsewhere(&self, bare: &Path, branch: &str, file: &str) -> String {
        let other = self.root.path().join(format!("elsewhere-{file}"));
        git(
            self.root.path(),
            &["clone", "-q", "-b", branch, &path(bare), &path(&other)],
        )
        .await;
        write(&other.join(file), "theirs\n").await;
        git(&other, &["add", "-A"]).await;
        git(&other, &["commit", "-q", "-m", "theirs"]).await;
        git(&other, &["push", "-q", "origin", branch]).await;
        git(&other, &["rev-parse", "HEAD"]).await.trim().to_string()
    }
}

/// A client for an API server that is not there: for runs whose configuration names
/// no Secret, so the client is never used.
pub(crate) fn no_cluster() -> kube::Client {
    let config = kube::Config::new("http://127.0.0.1:1".parse().expect("a URL"));
    kube::Client::try_from(config).expect("a client")
}

/// The output of a finished step.
pub(crate) fn output(result: &Result<StepResult, StepError>) -> &Value {
    match result {
        Ok(done) => done.output.as_ref().expect("an output"),
        Err(error) => panic!("the step failed: {} ({})", error.message, error.reason),
    }
}
