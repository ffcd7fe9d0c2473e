//! The git steps (spec §5.3–5.5): `git-clone` fetches a repository into the Passage's
//! work directory, `git-commit` records the changes other steps made there as one
//! deterministic commit, `git-push` publishes it — onto what another crossing pushed
//! to the branch first, if need be ([`rebase`]).
//!
//! They drive the `git` CLI ([`hecate_sources::git`], the clean environment it runs in, shared
//! with Beacons) rather than a library: the CLI pushes over every transport and
//! authenticates with the same helpers people use, and `libgit2`/`gix` would add a C
//! build or a weaker push. Each step is re-entrant (spec §3.7): it aims at the end
//! state — the checkout present, the changes committed, the remote at the commit — and
//! a call that finds the work done succeeds without repeating it. A commit's content
//! derives only from the Passage (its start time, identity and message), so a crossing
//! that is run again from an empty work directory makes the same commit, with the same
//! SHA.
//!
//! Credentials ([`hecate_sources::git::credentials`], one reading and one hand-over for every git
//! user) are read from the Passage's namespace each time a step needs them; `git-push`
//! does not reuse `git-clone`'s. Their files, and git's `HOME`, live in the work
//! directory's private area (`.hecate`), removed with it.

mod clone;
mod commit;
mod push;
mod rebase;
#[cfg(test)]
mod testing;

use std::path::{Component, Path, PathBuf};

use hecate_sources::git::{Class, Git, GitFailure, Kind};
use serde_json::Value;

pub use clone::GitClone;
pub use commit::GitCommit;
pub use push::GitPush;

use super::reason::Reason;
use super::runner::{StepContext, StepError, stays_inside};

/// The work directory's private area: git's `HOME`, keys and askpass helpers, the
/// half-made clone. Checkouts may not be placed in it.
pub(crate) const PRIVATE: &str = ".hecate";

/// Each git failure as the step reason spec §5.3–5.5 gives it: credentials refused
/// are terminal (another try would be refused again), an unreachable remote, a refused
/// update or another remote failure may be forgiven; a bad Secret is `InvalidConfig`
/// and a failure on local files is a terminal `GitFailed`, since the same files would
/// fail the same way.
impl From<hecate_sources::git::Error> for StepError {
    fn from(error: hecate_sources::git::Error) -> Self {
        let message = error.message;
        match error.kind {
            Kind::Config => StepError::config(message),
            Kind::Local => StepError::terminal(Reason::GitFailed, message),
            Kind::Remote(Class::Auth) => StepError::terminal(Reason::GitAuthFailed, message),
            Kind::Remote(Class::Unreachable) => {
                StepError::retryable(Reason::GitUnreachable, message)
            }
            Kind::Remote(Class::Rejected) => StepError::retryable(Reason::GitRejected, message),
            Kind::Remote(Class::Other) => StepError::retryable(Reason::GitFailed, message),
        }
    }
}

/// The git CLI for a step of the Passage whose work directory is `work_dir`, with its
/// private area (mode 0700) prepared.
async fn cli(work_dir: &Path) -> Result<Git, StepError> {
    Ok(Git::new(&work_dir.join(PRIVATE)).await?)
}

/// The checkout directory `relative` names. Besides leaving the work directory (spec
/// §3.7 rule 4) — by its text or through a symbolic link an earlier checkout brought —
/// a checkout may not be the work directory itself or sit in the private area, where
/// keys are kept.
fn checkout_dir(ctx: &StepContext<'_>, relative: &str) -> Result<PathBuf, StepError> {
    ctx.in_work_dir(relative)?;
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for part in Path::new(relative).components() {
        match part {
            Component::Normal(name) => parts.push(name),
            Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    match parts.first() {
        None => Err(StepError::config(format!(
            "path {relative:?} is the work directory itself; name a directory in it"
        ))),
        Some(first) if *first == PRIVATE => Err(StepError::config(format!(
            "path {relative:?} is in {PRIVATE}, which the git steps keep for themselves"
        ))),
        Some(_) => {
            let dir = parts
                .iter()
                .fold(ctx.work_dir.to_path_buf(), |p, n| p.join(n));
            match stays_inside(ctx.work_dir, &dir) {
                Ok(true) => Ok(dir),
                Ok(false) => Err(StepError::config(format!(
                    "path {relative:?} leads out of the work directory through a symbolic link"
                ))),
                Err(e) => Err(StepError::terminal(
                    Reason::GitFailed,
                    format!("cannot resolve path {relative:?}: {e}"),
                )),
            }
        }
    }
}

/// Whether `dir` is the top of a git checkout (holds `.git`). A directory inside some
/// other checkout is not: git would otherwise work on the enclosing one.
async fn is_checkout(dir: &Path) -> bool {
    tokio::fs::symlink_metadata(dir.join(".git")).await.is_ok()
}

/// What git printed, or `None` when it answered "no" with exit code 1 (`rev-parse
/// --verify -q`, `symbolic-ref -q`, `config --get`).
async fn ask(git: &Git, dir: &Path, args: &[&str]) -> Result<Option<String>, GitFailure> {
    match git.run(dir, args).await {
        Ok(out) => Ok(Some(out.trim().to_string())),
        Err(failure) if failure.exit == Some(1) => Ok(None),
        Err(failure) => Err(failure),
    }
}

/// The commit HEAD names; `None` on a branch with no commit yet.
async fn head(git: &Git, dir: &Path) -> Result<Option<String>, GitFailure> {
    ask(git, dir, &["rev-parse", "--verify", "-q", "HEAD^{commit}"]).await
}

/// The branch HEAD is on; `None` when HEAD is detached.
async fn current_branch(git: &Git, dir: &Path) -> Result<Option<String>, GitFailure> {
    ask(git, dir, &["symbolic-ref", "--short", "-q", "HEAD"]).await
}

/// The URL of the checkout's `origin` remote, if it has one.
async fn origin(git: &Git, dir: &Path) -> Result<Option<String>, GitFailure> {
    ask(git, dir, &["config", "--get", "remote.origin.url"]).await
}

/// What the forge steps (`git-pull-request`, `commit-status`) read from a checkout to
/// fill in what their configuration leaves out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CheckoutFacts {
    /// The `origin` remote's URL.
    pub(crate) origin: Option<String>,
    /// The branch HEAD is on (`None` when detached).
    pub(crate) branch: Option<String>,
    /// The commit HEAD names (`None` on a branch with no commit yet).
    pub(crate) head: Option<String>,
}

/// [`CheckoutFacts`] of the checkout at `relative`: no checkout there is a terminal
/// `WorkDirLost`, git failing on it a terminal `GitFailed`.
pub(crate) async fn checkout_facts(
    ctx: &StepContext<'_>,
    relative: &str,
) -> Result<CheckoutFacts, StepError> {
    let dir = checkout_dir(ctx, relative)?;
    if !is_checkout(&dir).await {
        return Err(commit::lost(relative));
    }
    let git = cli(ctx.work_dir).await?;
    Ok(CheckoutFacts {
        origin: origin(&git, &dir).await.map_err(GitFailure::local)?,
        branch: current_branch(&git, &dir)
            .await
            .map_err(GitFailure::local)?,
        head: head(&git, &dir).await.map_err(GitFailure::local)?,
    })
}

/// The first eight characters of a SHA (the `short` output).
fn short(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}

/// `path` as text for an output.
fn display(path: &Path) -> Value {
    Value::String(path.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use hecate_ops::catalogue::Step;
    use hecate_sources::git::Limits;
    use hecate_sources::git::testing::failure;
    use serde_json::json;

    use super::*;
    use crate::runner::Runner;

    #[test]
    fn reasons_follow_the_class() {
        let step = |error: hecate_sources::git::Error| {
            let error = StepError::from(error);
            (error.reason, error.terminal)
        };
        let cases = [
            (
                failure("Authentication failed").remote(),
                Reason::GitAuthFailed,
                true,
            ),
            (
                failure("Connection refused").remote(),
                Reason::GitUnreachable,
                false,
            ),
            (
                failure("[rejected] (fetch first)").remote(),
                Reason::GitRejected,
                false,
            ),
            (failure("something odd").remote(), Reason::GitFailed, false),
            (failure("something odd").local(), Reason::GitFailed, true),
            (
                hecate_sources::git::Error::config("no usable credentials"),
                Reason::InvalidConfig,
                true,
            ),
        ];
        for (error, reason, terminal) in cases {
            let shown = error.message.clone();
            assert_eq!(step(error), (reason, terminal), "{shown}");
        }
        let local = StepError::from(failure("something odd").local());
        assert_eq!(local.message, "git push failed: something odd");
    }

    /// Issue 30: a checkout may hold a symbolic link to anywhere. A git step's `path`
    /// through it would have put a checkout outside the work directory — replacing
    /// what was there — and had commit and push work on someone else's repository.
    #[cfg(unix)]
    #[tokio::test]
    async fn no_git_step_follows_a_link_out_of_the_work_directory() {
        use hecate_sources::git::testing::{git, path, write};
        use testing::{Fixture, no_cluster, output};

        let fx = Fixture::new();
        let remote = path(&fx.remote("fleet").await);
        let work = fx.work_dir("w");
        let outside = tempfile::tempdir().expect("a temporary directory");
        // Outside: an old checkout of the same remote, and a file of the controller's.
        git(
            outside.path(),
            &["clone", "-q", &remote, &path(&outside.path().join("x"))],
        )
        .await;
        write(&outside.path().join("x/README.md"), "theirs\n").await;
        write(&outside.path().join("token"), "s3cret\n").await;

        let clone = GitClone::new(no_cluster()).within(Limits::local());
        output(&clone.run(&fx.ctx(&work, json!({"repo": remote}))).await);
        // What the checkout brought: a link out, and a dangling one.
        std::os::unix::fs::symlink(outside.path(), work.join("repo/link")).expect("a link");
        std::os::unix::fs::symlink(outside.path().join("gone"), work.join("repo/dangling"))
            .expect("a link");
        let before = listing(outside.path());

        let refused = |error: StepError, config: &Value| {
            assert_eq!(
                (error.reason, error.terminal),
                (Reason::InvalidConfig, true),
                "{config}: {}",
                error.message
            );
            assert!(
                error.message.contains("symbolic link"),
                "{config}: {}",
                error.message
            );
            assert!(
                !error.message.contains(&path(outside.path())),
                "{config}: {}",
                error.message
            );
        };
        for checkout in [
            "repo/link/x",
            "repo/link/new",
            "repo/link/a/b",
            "repo/dangling/x",
        ] {
            let config = json!({"repo": remote, "path": checkout});
            let error = clone
                .run(&fx.ctx(&work, config.clone()))
                .await
                .expect_err("refused");
            refused(error, &config);
        }
        let commit = GitCommit::new();
        let push = GitPush::new(no_cluster()).within(Limits::local());
        for checkout in ["repo/link/x", "repo/dangling"] {
            let config = json!({"path": checkout, "message": "promote"});
            let error = commit
                .run(&fx.ctx(&work, config.clone()))
                .await
                .expect_err("refused");
            refused(error, &config);
            let config = json!({"path": checkout});
            let error = push
                .run(&fx.ctx(&work, config.clone()))
                .await
                .expect_err("refused");
            refused(error, &config);
            let error = checkout_facts(&fx.ctx(&work, Value::Null), checkout)
                .await
                .expect_err("refused");
            refused(error, &json!(checkout));
        }
        assert_eq!(listing(outside.path()), before, "nothing changed outside");
        let kept = tokio::fs::read_to_string(outside.path().join("x/README.md"))
            .await
            .expect("still there");
        assert_eq!(kept, "theirs\n");

        // A link that stays inside the work directory is no escape.
        std::os::unix::fs::symlink(work.join("repo/app"), work.join("repo/inside"))
            .expect("a link");
        let result = clone
            .run(&fx.ctx(&work, json!({"repo": remote, "path": "repo/inside/nested"})))
            .await;
        assert_eq!(output(&result)["reused"], json!(false));
        assert!(work.join("repo/app/nested/README.md").exists());
    }

    /// Every path under `dir`, links not followed, with each file's bytes.
    fn listing(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut found = Vec::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(next) = pending.pop() {
            for entry in std::fs::read_dir(&next).expect("a directory") {
                let entry = entry.expect("an entry");
                let kind = entry.file_type().expect("a type");
                if kind.is_dir() {
                    pending.push(entry.path());
                }
                let bytes = if kind.is_file() {
                    std::fs::read(entry.path()).expect("readable")
                } else {
                    Vec::new()
                };
                found.push((entry.path(), bytes));
            }
        }
        found.sort();
        found
    }

    #[tokio::test]
    async fn the_runners_carry_their_registered_names() {
        let client = testing::no_cluster();
        let runners: [Box<dyn Runner>; 3] = [
            Box::new(GitClone::new(client.clone())),
            Box::new(GitCommit::new()),
            Box::new(GitPush::new(client)),
        ];
        let names = runners.map(|runner| runner.name());
        assert_eq!(names, ["git-clone", "git-commit", "git-push"]);
        for name in names {
            assert!(Step::named(name).is_some(), "{name} is not a built-in step");
        }
    }
}
