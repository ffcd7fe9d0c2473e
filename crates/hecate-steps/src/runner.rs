//! The contract every built-in step keeps (spec controller.md §3.7): the engine hands
//! a step its context and the interpolated `with:`; the step does its work and answers
//! promptly — finished, failed with a reason, or "still going, ask me again in a
//! while" (never by sleeping).
//!
//! Every step is re-entrant: it may run again after a crash between its side effect
//! and the status write, and after a restart with an empty work directory. Finding the
//! work already done counts as success; a step aims at the end state and never stacks
//! a second copy of an effect.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::future::BoxFuture;
use hecate_types::{Bundle, EvidenceRef, HealthCheck};
use jiff::Timestamp;
use serde_json::Value;

use crate::Tools;
use crate::config::{self, StepConfig};
use crate::reason::Reason;

/// What a step runs with.
pub struct StepContext<'a> {
    /// The Passage's namespace.
    pub namespace: &'a str,
    /// The Gate being crossed.
    pub gate: &'a str,
    /// The Passage's name.
    pub passage: &'a str,
    /// The Bundle crossing.
    pub bundle: &'a Bundle,
    /// Who asked for the crossing (`controller` for automatic ones).
    pub actor: &'a str,
    /// The Passage's scratch directory (`<work root>/<Passage UID>`); may be empty on
    /// any call, since a restart loses it.
    pub work_dir: &'a Path,
    /// The step's `with:`, expressions substituted.
    pub config: Value,
    /// Earlier steps' outputs, by their `as`.
    pub outputs: &'a BTreeMap<String, Value>,
    /// How many times this step was invoked before (0 on the first call).
    pub attempt: u32,
    /// Whether an earlier step already failed the Passage (this step runs because its
    /// `if:` asked to).
    pub failed: bool,
    /// The W3C traceparent of the crossing, or empty.
    pub traceparent: &'a str,
    /// When the Passage started: every timestamp a step writes into content (commit
    /// dates, archive times) derives from it, so a re-run is byte-identical.
    pub started_at: Timestamp,
}

impl StepContext<'_> {
    /// `relative` inside the work directory; a path that would leave it (absolute, or
    /// through `..`) is a terminal `InvalidConfig`.
    pub fn in_work_dir(&self, relative: &str) -> Result<PathBuf, StepError> {
        let path = Path::new(relative);
        let escapes = path.is_absolute()
            || path
                .components()
                .try_fold(0i32, |depth, part| match part {
                    std::path::Component::ParentDir if depth == 0 => None,
                    std::path::Component::ParentDir => Some(depth - 1),
                    std::path::Component::Normal(_) => Some(depth + 1),
                    _ => Some(depth),
                })
                .is_none();
        if escapes {
            return Err(StepError::config(format!(
                "path {relative:?} leaves the work directory"
            )));
        }
        Ok(self.work_dir.join(path))
    }
}

/// Whether `path` — inside `work_dir` by its text ([`StepContext::in_work_dir`]) — is
/// inside it also once symbolic links are followed, so a link a checkout brought can
/// never carry a write (or a read the step hands on) elsewhere. Judged on the deepest
/// part of `path` that exists, resolved as the system would resolve it; a link that
/// leads to nothing is not inside, since writing through it would make its target.
/// Nothing can lead out of a work directory that does not exist yet. Every step that
/// writes or hands on a path of the checkout asks this (docs/DECISIONS.md 100).
pub fn stays_inside(work_dir: &Path, path: &Path) -> std::io::Result<bool> {
    let root = match std::fs::canonicalize(work_dir) {
        Ok(root) => root,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    let mut existing = path;
    while std::fs::symlink_metadata(existing).is_err() {
        match existing.parent() {
            Some(parent) => existing = parent,
            None => return Ok(true),
        }
    }
    match std::fs::canonicalize(existing) {
        Ok(real) => Ok(real.starts_with(&root)),
        // It is there (a link), and what it names is not.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// How a step's call ended, when it did not fail with an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Progress {
    /// Done.
    #[default]
    Succeeded,
    /// Done, and it did not go well (no error: e.g. a check that said no).
    Failed,
    /// Not done: call again after `retry_after`.
    Running,
}

/// What a step's call produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepResult {
    /// Done, failed, or still going.
    pub progress: Progress,
    /// What happened, in words.
    pub message: String,
    /// The step's outputs (a JSON object), kept even when it fails.
    pub output: Option<Value>,
    /// Health checks to hand to the Gate once the crossing succeeds.
    pub watch: Vec<HealthCheck>,
    /// A change-gate verdict to put on the Passage.
    pub evidence: Option<EvidenceRef>,
    /// When `Running`: how long until the next call (default 15 s).
    pub retry_after: Option<Duration>,
}

impl StepResult {
    /// Finished, with `message` and `output`.
    pub fn done(message: impl Into<String>, output: Value) -> Self {
        Self {
            message: message.into(),
            output: Some(output),
            ..Self::default()
        }
    }

    /// Still going: ask again after `retry_after`.
    pub fn waiting(message: impl Into<String>, retry_after: Duration) -> Self {
        Self {
            progress: Progress::Running,
            message: message.into(),
            retry_after: Some(retry_after),
            ..Self::default()
        }
    }
}

/// Why a step failed: a stable reason code, the story, and whether even
/// `continueOnError` may not forgive it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StepError {
    /// The stable code (alerts and people match on it).
    pub reason: Reason,
    /// What went wrong.
    pub message: String,
    /// A configuration mistake and the like: fails the Passage whatever
    /// `continueOnError` says.
    pub terminal: bool,
    /// Outputs gathered before the failure, kept on the step.
    pub output: Option<Value>,
    /// A change-gate verdict to put on the Passage even though the step failed
    /// (`evidence-gate` refusing a verdict it read). Boxed: errors stay small.
    pub evidence: Option<Box<EvidenceRef>>,
}

impl StepError {
    /// A failure `continueOnError` may forgive.
    pub fn retryable(reason: Reason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
            terminal: false,
            output: None,
            evidence: None,
        }
    }

    /// A failure nothing forgives.
    pub fn terminal(reason: Reason, message: impl Into<String>) -> Self {
        Self {
            terminal: true,
            ..Self::retryable(reason, message)
        }
    }

    /// `InvalidConfig` (terminal): a bad `with:`, a missing Secret, a path that leaves
    /// the work directory.
    pub fn config(message: impl Into<String>) -> Self {
        Self::terminal(Reason::InvalidConfig, message)
    }

    /// The same failure, with the outputs gathered so far.
    #[must_use]
    pub fn with_output(mut self, output: Value) -> Self {
        self.output = Some(output);
        self
    }

    /// The same failure, with the verdict it was judged on.
    #[must_use]
    pub fn with_evidence(mut self, evidence: EvidenceRef) -> Self {
        self.evidence = Some(Box::new(evidence));
        self
    }
}

/// A step the engine runs, by name: what the engine holds of every step. Each built-in
/// step is one through [`StepKind`]; the engine's own tests script others.
pub trait Runner: Send + Sync {
    /// Its `uses:` name.
    fn name(&self) -> &'static str;

    /// Runs it once. Must return promptly; to wait, answer [`StepResult::waiting`].
    fn run<'a>(&'a self, ctx: &'a StepContext<'a>) -> BoxFuture<'a, Result<StepResult, StepError>>;

    /// Whether its `with` takes a `clusterRef`: a crossing of a Gate's target gives it
    /// the target's cluster when it names none.
    fn reaches_clusters(&self) -> bool {
        false
    }
}

/// A kind of built-in step: its `uses:` name, its configuration, how the process builds
/// it, and what it does with one decoded configuration. A kind is a [`Runner`] by the
/// one decode below, and becomes built in by its arm in [`crate::builtin::of`]; the
/// catalogue's step judges a Gate's list with the same configuration type.
pub trait StepKind: Send + Sync + Sized + 'static {
    /// The step of the catalogue it runs.
    const STEP: hecate_ops::catalogue::Step;

    /// Its `uses:` name (the catalogue's).
    const USES: &'static str = Self::STEP.name();

    /// Its `with:`, decoded strictly by [`config::decode`].
    type With: StepConfig + Send + 'static;

    /// Whether its `with` takes a `clusterRef` ([`Runner::reaches_clusters`]).
    const REACHES_CLUSTERS: bool = false;

    /// The step as this process runs it, from what the process gives steps.
    fn build(tools: &Tools) -> Self;

    /// Runs it once with its `with:` decoded (`ctx.config` holds it as interpolated).
    /// Must return promptly; to wait, answer [`StepResult::waiting`].
    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        with: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>>;
}

/// Every kind of step runs the same way: its interpolated `with:` decoded by the same
/// strict decoder and checks the Gate validated it with — so a step never reads its
/// configuration differently mid-crossing —, a problem a terminal `InvalidConfig`.
impl<S: StepKind> Runner for S {
    fn name(&self) -> &'static str {
        S::USES
    }

    fn reaches_clusters(&self) -> bool {
        S::REACHES_CLUSTERS
    }

    fn run<'a>(&'a self, ctx: &'a StepContext<'a>) -> BoxFuture<'a, Result<StepResult, StepError>> {
        let with = (!ctx.config.is_null()).then_some(&ctx.config);
        match config::decode::<S::With>(with) {
            Ok(with) => self.run_with(ctx, with),
            Err(why) => Box::pin(std::future::ready(Err(StepError::config(why)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_work_directory() {
        let bundle = Bundle::new("b", hecate_types::BundleSpec::default());
        let outputs = BTreeMap::new();
        let ctx = StepContext {
            namespace: "ns",
            gate: "dev",
            passage: "dev-1",
            bundle: &bundle,
            actor: "controller",
            work_dir: Path::new("/work/uid"),
            config: Value::Null,
            outputs: &outputs,
            attempt: 0,
            failed: false,
            traceparent: "",
            started_at: Timestamp::UNIX_EPOCH,
        };
        assert_eq!(
            ctx.in_work_dir("repo/values.yaml").expect("inside"),
            Path::new("/work/uid/repo/values.yaml")
        );
        assert_eq!(
            ctx.in_work_dir("repo/../x").expect("inside"),
            Path::new("/work/uid/repo/../x")
        );
        for outside in ["../x", "/etc/passwd", "repo/../../x"] {
            let error = ctx.in_work_dir(outside).expect_err(outside);
            assert!(
                error.terminal && error.reason == Reason::InvalidConfig,
                "{outside}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn paths_stay_inside_once_links_are_followed() {
        let work = tempfile::tempdir().expect("a temporary directory");
        let elsewhere = tempfile::tempdir().expect("a temporary directory");
        let w = work.path();
        std::fs::create_dir_all(w.join("repo/app")).expect("mkdir");
        std::fs::write(w.join("repo/file"), "x").expect("write");
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, w.join(name)).expect("a link");
        };
        link(elsewhere.path(), "repo/away");
        link(&elsewhere.path().join("gone"), "repo/nowhere");
        link(&w.join("repo/app"), "repo/near");
        link(Path::new("../../.."), "repo/app/up");
        let cases = [
            ("repo", true),
            ("repo/app/not/yet", true),
            ("repo/near/x", true),
            ("repo/file/x", true),
            ("not/yet/there", true),
            ("repo/away", false),
            ("repo/away/x/y", false),
            ("repo/nowhere", false),
            ("repo/nowhere/x", false),
            ("repo/app/up/x", false),
            ("repo/away/..", false),
        ];
        for (relative, inside) in cases {
            let got = stays_inside(w, &w.join(relative)).expect("judged");
            assert_eq!(got, inside, "{relative}");
        }
        assert!(
            stays_inside(&w.join("lost"), &w.join("lost/repo/x")).expect("judged"),
            "a work directory a restart lost holds no links"
        );
    }
}
