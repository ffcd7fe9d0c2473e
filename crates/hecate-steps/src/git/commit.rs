//! `git-commit` (spec §5.4): the checkout's changes as one commit whose every byte
//! derives from the Passage.
//!
//! Author and committer are the configured identity (default `Hecate
//! <hecate@users.noreply.github.com>`), both dates are the Passage's start, and the
//! message is kept verbatim (plus the `traceparent` trailer paragraph when the
//! crossing is traced, spec §3.10). The same tree on the same parent therefore always
//! gives the same SHA: a crossing run again from an empty work directory makes the
//! commit it made before, and pushing it again finds the remote already there.
//!
//! A re-run after the commit was made finds nothing to commit and answers
//! `committed: false` with HEAD — success, as spec §3.7 asks. With `allowEmpty`, a
//! HEAD that already is this step's commit (same identity, date and message) counts
//! as done too, so a re-run does not stack a second empty commit.
//!
//! `paths` (quirk Q15): the reference accepts the list and stages everything anyway.
//! We do what the setting says — only those paths are staged, deletions under them
//! included, and nothing else reaches the commit: a deliberate divergence from the
//! reference, for docs/DECISIONS.md's list of decided quirks.

use std::path::{Component, Path};

use futures::future::BoxFuture;
use hecate_sources::git::{Git, GitFailure};
use serde_json::json;

use super::{checkout_dir, cli, head, is_checkout, short};
use crate::Tools;
use crate::config::git::GitCommitConfig as Settings;
use crate::reason::Reason;
use crate::runner::{StepContext, StepError, StepKind, StepResult};

/// The `git-commit` step. It needs no cluster: everything happens in the checkout.
#[derive(Clone, Copy, Debug, Default)]
pub struct GitCommit;

impl GitCommit {
    /// The step.
    pub fn new() -> Self {
        Self
    }

    async fn commit(
        &self,
        ctx: &StepContext<'_>,
        settings: Settings,
    ) -> Result<StepResult, StepError> {
        let dir = checkout_dir(ctx, settings.checkout())?;
        let pathspecs = pathspecs(&settings)?;
        if !is_checkout(&dir).await {
            return Err(lost(settings.checkout()));
        }
        let git = cli(ctx.work_dir).await?;
        let parent = head(&git, &dir).await.map_err(GitFailure::local)?;
        stage(&git, &dir, &pathspecs, parent.is_some()).await?;
        let changed = !git
            .succeeds(&dir, &["diff", "--cached", "--quiet"])
            .await
            .map_err(GitFailure::local)?;

        let identity = Identity::new(&settings, ctx.started_at);
        let message = message(&settings.message, ctx.traceparent);
        let nothing_to_do = !changed
            && (!settings.allow_empty
                || (parent.is_some() && made_already(&git, &dir, &identity, &message).await?));
        if nothing_to_do {
            let sha = parent.unwrap_or_default();
            let story = if sha.is_empty() {
                "nothing to commit".to_string()
            } else {
                format!("nothing to commit; HEAD is {}", short(&sha))
            };
            return Ok(StepResult::done(
                story,
                json!({"sha": sha, "short": short(&sha), "committed": false}),
            ));
        }

        let mut args = vec![
            "commit",
            "--quiet",
            "--no-verify",
            "--no-gpg-sign",
            "--cleanup=verbatim",
            "--file=-",
        ];
        if settings.allow_empty {
            args.push("--allow-empty");
        }
        git.run_with(
            &dir,
            args.as_slice(),
            &identity.env(),
            Some(message.as_bytes()),
        )
        .await
        .map_err(GitFailure::local)?;
        let sha = head(&git, &dir)
            .await
            .map_err(GitFailure::local)?
            .unwrap_or_default();
        Ok(StepResult::done(
            format!("committed {}", short(&sha)),
            json!({"sha": sha, "short": short(&sha), "committed": true}),
        ))
    }
}

impl StepKind for GitCommit {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::GitCommit;
    type With = Settings;

    fn build(_: &Tools) -> Self {
        Self::new()
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        settings: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(self.commit(ctx, settings))
    }
}

/// `WorkDirLost`: the checkout a step needs is not there.
pub(super) fn lost(relative: &str) -> StepError {
    StepError::terminal(
        Reason::WorkDirLost,
        format!(
            "there is no checkout at {relative:?}: the work directory was lost (a controller \
             restart mid-crossing); a new Passage clones again"
        ),
    )
}

/// The configured `paths`, relative to the checkout, each checked to stay inside it.
fn pathspecs(settings: &Settings) -> Result<Vec<String>, StepError> {
    settings
        .paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let mut depth = 0usize;
            let mut inside = !Path::new(path).is_absolute() && !path.trim().is_empty();
            for part in Path::new(path).components() {
                match part {
                    Component::Normal(_) => depth += 1,
                    Component::ParentDir if depth == 0 => inside = false,
                    Component::ParentDir => depth -= 1,
                    _ => {}
                }
            }
            if inside {
                Ok(path.clone())
            } else {
                Err(StepError::config(format!(
                    "paths[{i}] {path:?} is not a path inside the checkout"
                )))
            }
        })
        .collect()
}

/// Stages the changes: all of them, or (quirk Q15) only those under `paths`. With
/// paths, the index first goes back to HEAD so nothing staged before reaches the
/// commit; the paths are literal (no globs, no pathspec magic).
async fn stage(git: &Git, dir: &Path, paths: &[String], has_head: bool) -> Result<(), StepError> {
    if paths.is_empty() {
        git.run(dir, &["add", "--all"])
            .await
            .map_err(GitFailure::local)?;
        return Ok(());
    }
    let reset: &[&str] = if has_head {
        &["reset", "--quiet"]
    } else {
        &["read-tree", "--empty"]
    };
    git.run(dir, reset).await.map_err(GitFailure::local)?;
    let mut args = vec!["--literal-pathspecs", "add", "--all", "--"];
    args.extend(paths.iter().map(String::as_str));
    git.run(dir, args.as_slice())
        .await
        .map_err(GitFailure::local)?;
    Ok(())
}

/// The message as configured; when the crossing is traced, its trailing line breaks
/// trimmed, a blank line, and the `traceparent` trailer.
fn message(text: &str, traceparent: &str) -> String {
    if traceparent.is_empty() {
        text.to_string()
    } else {
        format!(
            "{}\n\ntraceparent: {traceparent}\n",
            text.trim_end_matches(['\n', '\r'])
        )
    }
}

/// Who the commit is by and when: the configured identity at the Passage's start.
struct Identity {
    name: String,
    email: String,
    date: String,
}

impl Identity {
    fn new(settings: &Settings, started_at: jiff::Timestamp) -> Self {
        Self {
            name: settings.author.name().to_string(),
            email: settings.author.email().to_string(),
            // Git's own format, seconds since the epoch in UTC.
            date: format!("@{} +0000", started_at.as_second()),
        }
    }

    fn env(&self) -> [(&str, &str); 6] {
        [
            ("GIT_AUTHOR_NAME", self.name.as_str()),
            ("GIT_AUTHOR_EMAIL", self.email.as_str()),
            ("GIT_AUTHOR_DATE", self.date.as_str()),
            ("GIT_COMMITTER_NAME", self.name.as_str()),
            ("GIT_COMMITTER_EMAIL", self.email.as_str()),
            ("GIT_COMMITTER_DATE", self.date.as_str()),
        ]
    }
}

/// Whether HEAD is the commit this step would make now (its author, committer and
/// message): an `allowEmpty` commit from an earlier attempt.
async fn made_already(
    git: &Git,
    dir: &Path,
    identity: &Identity,
    message: &str,
) -> Result<bool, StepError> {
    let env = identity.env();
    // Git's own rendering of the identity, as it would write it into the commit.
    let author = git
        .run_with(dir, &["var", "GIT_AUTHOR_IDENT"], &env, None)
        .await
        .map_err(GitFailure::local)?;
    let committer = git
        .run_with(dir, &["var", "GIT_COMMITTER_IDENT"], &env, None)
        .await
        .map_err(GitFailure::local)?;
    let raw = git
        .run(dir, &["cat-file", "commit", "HEAD"])
        .await
        .map_err(GitFailure::local)?;
    let Some((headers, body)) = raw.split_once("\n\n") else {
        return Ok(false);
    };
    let has = |line: String| headers.lines().any(|l| l == line);
    Ok(has(format!("author {}", author.trim()))
        && has(format!("committer {}", committer.trim()))
        && body.trim_end_matches('\n') == message.trim_end_matches('\n'))
}

#[cfg(test)]
mod tests {
    use crate::runner::Runner as _;
    use hecate_sources::git::Limits;
    use hecate_sources::git::testing::{git, path, write};
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use crate::git::GitClone;
    use crate::git::testing::{Fixture, no_cluster, output};

    const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-a3ce929d0e0e4736-01";

    /// Clones `remote` into a new work directory `name`, edits the values file, and
    /// commits with `config`; returns the work directory and the step's output.
    async fn clone_edit_commit(
        fx: &Fixture,
        remote: &str,
        name: &str,
        config: Value,
        traceparent: &str,
    ) -> (std::path::PathBuf, Value) {
        let work = fx.work_dir(name);
        output(
            &GitClone::new(no_cluster())
                .within(Limits::local())
                .run(&fx.ctx(&work, json!({"repo": remote})))
                .await,
        );
        write(&work.join("repo/app/values.yaml"), "image: app:2.0.0\n").await;
        let mut ctx = fx.ctx(&work, config);
        ctx.traceparent = traceparent;
        let result = GitCommit::new().run(&ctx).await;
        let out = output(&result).clone();
        (work, out)
    }

    #[tokio::test]
    async fn the_same_passage_makes_the_same_commit_from_an_empty_work_directory() {
        let fx = Fixture::new();
        let remote = path(&fx.remote("fleet").await);
        let config = json!({"message": "dev: app 2.0.0"});
        let (first, one) =
            clone_edit_commit(&fx, &remote, "run1", config.clone(), TRACEPARENT).await;
        let (_, two) = clone_edit_commit(&fx, &remote, "run2", config, TRACEPARENT).await;
        assert_eq!(one["committed"], json!(true));
        assert_eq!(
            one, two,
            "a restart with an empty work directory gives the same SHA"
        );
        let sha = one["sha"].as_str().expect("a SHA");
        assert_eq!(one["short"], json!(&sha[..8]));

        let raw = git(&first.join("repo"), &["cat-file", "commit", "HEAD"]).await;
        let started = crate::git::testing::STARTED_AT
            .parse::<jiff::Timestamp>()
            .expect("a time")
            .as_second();
        assert!(
            raw.contains(&format!(
                "\nauthor Hecate <hecate@users.noreply.github.com> {started} +0000\n"
            )),
            "{raw}"
        );
        assert!(
            raw.contains(&format!(
                "\ncommitter Hecate <hecate@users.noreply.github.com> {started} +0000\n"
            )),
            "{raw}"
        );
        assert!(
            raw.ends_with(&format!(
                "\n\ndev: app 2.0.0\n\ntraceparent: {TRACEPARENT}\n"
            )),
            "{raw:?}"
        );

        // Another identity or trace gives another commit.
        let (_, other) = clone_edit_commit(
            &fx,
            &remote,
            "run3",
            json!({"message": "dev: app 2.0.0", "author": {"name": "Bot", "email": "bot@example.com"}}),
            "",
        )
        .await;
        assert_ne!(other["sha"], one["sha"]);
        let raw = git(
            &fx.root.path().join("run3/repo"),
            &["cat-file", "commit", "HEAD"],
        )
        .await;
        assert!(raw.contains("\nauthor Bot <bot@example.com> "), "{raw}");
        assert!(
            raw.ends_with("\n\ndev: app 2.0.0"),
            "verbatim, no trailer: {raw:?}"
        );
    }

    #[tokio::test]
    async fn nothing_to_commit_is_success_with_head() {
        let fx = Fixture::new();
        let remote = path(&fx.remote("fleet").await);
        let config = json!({"message": "promote"});
        let (work, made) = clone_edit_commit(&fx, &remote, "w", config.clone(), "").await;
        // The re-run after a crash: the commit is there, the tree is clean.
        let result = GitCommit::new().run(&fx.ctx(&work, config)).await;
        let again = output(&result);
        assert_eq!(
            again,
            &json!({"sha": made["sha"], "short": made["short"], "committed": false})
        );
        let count = git(&work.join("repo"), &["rev-list", "--count", "HEAD"]).await;
        assert_eq!(count.trim(), "2");
    }

    #[tokio::test]
    async fn allow_empty_commits_once() {
        let fx = Fixture::new();
        let remote = path(&fx.remote("fleet").await);
        let work = fx.work_dir("w");
        output(
            &GitClone::new(no_cluster())
                .within(Limits::local())
                .run(&fx.ctx(&work, json!({"repo": remote})))
                .await,
        );
        let ctx = fx.ctx(&work, json!({"message": "marker", "allowEmpty": true}));
        let first = GitCommit::new().run(&ctx).await;
        assert_eq!(output(&first)["committed"], json!(true));
        let second = GitCommit::new().run(&ctx).await;
        assert_eq!(output(&second)["committed"], json!(false));
        assert_eq!(output(&second)["sha"], output(&first)["sha"]);
        let count = git(&work.join("repo"), &["rev-list", "--count", "HEAD"]).await;
        assert_eq!(count.trim(), "2");
    }

    #[tokio::test]
    async fn paths_stage_only_what_they_name_deletions_included() {
        let fx = Fixture::new();
        let remote = path(&fx.remote("fleet").await);
        let work = fx.work_dir("w");
        output(
            &GitClone::new(no_cluster())
                .within(Limits::local())
                .run(&fx.ctx(&work, json!({"repo": remote})))
                .await,
        );
        let repo = work.join("repo");
        write(&repo.join("app/values.yaml"), "image: app:2.0.0\n").await;
        write(&repo.join("app/new.yaml"), "new: true\n").await;
        write(&repo.join("README.md"), "changed but not named\n").await;
        write(&repo.join("scratch.txt"), "not named\n").await;
        // Staged by someone else before: must not reach the commit either.
        git(&repo, &["add", "scratch.txt"]).await;
        tokio::fs::remove_file(repo.join("app/values.yaml"))
            .await
            .expect("deleted");

        let result = GitCommit::new()
            .run(&fx.ctx(&work, json!({"message": "app only", "paths": ["app"]})))
            .await;
        assert_eq!(output(&result)["committed"], json!(true));
        let changed = git(
            &repo,
            &["diff-tree", "--no-commit-id", "--name-status", "-r", "HEAD"],
        )
        .await;
        assert_eq!(changed, "A\tapp/new.yaml\nD\tapp/values.yaml\n");
        let left = git(&repo, &["status", "--porcelain"]).await;
        assert_eq!(left, " M README.md\n?? scratch.txt\n");
    }

    #[tokio::test]
    async fn a_lost_work_directory_is_reported() {
        let fx = Fixture::new();
        let work = fx.work_dir("empty");
        let error = GitCommit::new()
            .run(&fx.ctx(&work, json!({"message": "promote"})))
            .await
            .expect_err("no checkout");
        assert_eq!((error.reason, error.terminal), (Reason::WorkDirLost, true));
    }

    #[tokio::test]
    async fn a_checkout_git_cannot_work_in_is_a_terminal_git_failure() {
        let fx = Fixture::new();
        let remote = path(&fx.remote("fleet").await);
        let work = fx.work_dir("w");
        output(
            &GitClone::new(no_cluster())
                .within(Limits::local())
                .run(&fx.ctx(&work, json!({"repo": remote})))
                .await,
        );
        write(&work.join("repo/app/values.yaml"), "image: app:2.0.0\n").await;
        // Another git (a crashed one) holds the index: staging fails, and would again.
        write(&work.join("repo/.git/index.lock"), "").await;
        let error = GitCommit::new()
            .run(&fx.ctx(&work, json!({"message": "promote"})))
            .await
            .expect_err("the index is locked");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::GitFailed, true),
            "{}",
            error.message
        );
        assert!(error.message.contains("index.lock"), "{}", error.message);
    }

    #[tokio::test]
    async fn configuration_mistakes_are_invalid_config() {
        let fx = Fixture::new();
        let work = fx.work_dir("w");
        let cases = [
            (json!({"message": "m", "path": "../x"}), "path"),
            (json!({"message": "m", "paths": ["../../etc"]}), "paths[0]"),
            (
                json!({"message": "m", "paths": ["ok", "../sibling"]}),
                "paths[1]",
            ),
            (
                json!({"message": "m", "paths": ["/etc/passwd"]}),
                "paths[0]",
            ),
            (json!({"mesage": "m"}), "unknown field `mesage`"),
            (json!({"message": "  "}), "message must not be blank"),
        ];
        for (config, words) in cases {
            let error = GitCommit::new()
                .run(&fx.ctx(&work, config.clone()))
                .await
                .expect_err("refused");
            assert_eq!(
                (error.reason, error.terminal),
                (Reason::InvalidConfig, true),
                "{config}"
            );
            assert!(error.message.contains(words), "{config}: {}", error.message);
        }
    }

    #[test]
    fn the_trailer_follows_a_blank_line() {
        assert_eq!(message("promote\n\n", ""), "promote\n\n");
        assert_eq!(
            message("promote\n\n", TRACEPARENT),
            format!("promote\n\ntraceparent: {TRACEPARENT}\n")
        );
    }
}
