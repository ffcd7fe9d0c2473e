//! `git-push` (spec §5.5): the checkout's HEAD to a branch of `origin`.
//!
//! The target is `hecate/<passage>` with `toNewBranch`, else the configured `branch`,
//! else the branch the checkout is on. The commit is pushed by its SHA
//! (`<sha>:refs/heads/<target>`, `+` in front with `force`), so what lands is exactly
//! what the output reports. A remote already at that commit is success with
//! `pushed: false` — what a re-run after a crash looks like.
//!
//! A plain push (neither `force` nor `toNewBranch`) refused because the branch moved —
//! another target of the crossing pushed first (DECISION 151) — fetches the branch,
//! puts the checkout's own commits on its new tip and pushes again, at most
//! [`ATTEMPTS`] pushes in all ([`super::rebase`]). The output's `sha` is then the
//! rebased commit, the one that landed, and `rebased` says how often that happened.
//! A forced push means to replace what is there; `hecate/<passage>` is the crossing's
//! own branch, and if it moved, someone else wrote to it: both are pushed once.
//!
//! Without a checkout (a restart lost the work directory) the step fails with
//! `WorkDirLost`, as spec §5.4–5.5 list it: pushing needs the commit, and only the
//! crossing's earlier steps can make it again, which a new Passage does.

use std::path::Path;

use futures::future::BoxFuture;
use hecate_sources::git::{AppTokens, Git, GitCredentials, GitFailure, Limits, Scratch, apply};
use serde_json::json;

use super::commit::lost;
use super::rebase::{self, ATTEMPTS, Remote};
use super::{checkout_dir, cli, current_branch, head, is_checkout, origin, short};
use crate::Tools;
use crate::config::git::GitPushConfig as Settings;
use crate::reason::Reason;
use crate::runner::{StepContext, StepError, StepKind, StepResult};

/// The `git-push` step.
pub struct GitPush {
    client: kube::Client,
    tokens: AppTokens,
    limits: Limits,
}

impl GitPush {
    /// Reads credentials Secrets through `client`, with a GitHub App token cache of
    /// its own.
    pub fn new(client: kube::Client) -> Self {
        Self::with_tokens(client, AppTokens::default())
    }

    /// Reads credentials Secrets through `client` and takes GitHub App tokens from
    /// `tokens` (shared with `git-clone`).
    pub fn with_tokens(client: kube::Client, tokens: AppTokens) -> Self {
        Self {
            client,
            tokens,
            limits: Limits::default(),
        }
    }

    /// Pushes within the operator's `limits`: `origin` a path or `file://` only when
    /// they allow the local disk, as for `git-clone`'s `repo`.
    #[must_use]
    pub fn within(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    async fn push(
        &self,
        ctx: &StepContext<'_>,
        settings: Settings,
    ) -> Result<StepResult, StepError> {
        let dir = checkout_dir(ctx, settings.checkout())?;
        if !is_checkout(&dir).await {
            return Err(lost(settings.checkout()));
        }
        let mut git = cli(ctx.work_dir).await?.allowing_local(self.limits.local);
        // A rebase a crash interrupted left HEAD detached, off the branch to push.
        rebase::abort(&git, &dir).await?;
        let sha = head(&git, &dir)
            .await
            .map_err(GitFailure::local)?
            .ok_or_else(|| StepError::terminal(Reason::GitFailed, "HEAD has no commit to push"))?;
        let branch = target(&git, &dir, &settings, ctx.passage).await?;
        let remote = origin(&git, &dir)
            .await
            .map_err(GitFailure::local)?
            .ok_or_else(|| {
                StepError::terminal(Reason::GitFailed, "the checkout has no origin remote")
            })?;
        // The checkout's own configuration names the remote: judged as git-clone's
        // `repo` is (git refuses it too).
        hecate_sources::git::remote::check(&remote, self.limits.local)
            .map_err(|why| StepError::terminal(Reason::NotAllowed, format!("origin: {why}")))?;

        let credentials = GitCredentials::read(
            &self.client,
            ctx.namespace,
            settings.credentials_ref.as_ref().map(|r| r.name.as_str()),
        )
        .await?;
        let scratch = Scratch::new(&git, Self::USES).await?;
        let mut landing = Landing { sha, rebased: 0 };
        let pushed = match apply(&credentials, &remote, &mut git, &scratch, &self.tokens).await {
            Ok(()) => land(&git, &dir, &branch, &settings, &mut landing).await,
            Err(error) => Err(error.into()),
        };
        scratch.remove().await;
        let Landing { sha, rebased } = landing;
        let output = |pushed: bool| json!({"branch": branch, "sha": sha, "pushed": pushed, "rebased": rebased});
        match pushed {
            Ok(true) if rebased > 0 => Ok(StepResult::done(
                format!(
                    "pushed {} to {branch}, rebased {} onto what landed there meanwhile",
                    short(&sha),
                    times(rebased)
                ),
                output(true),
            )),
            Ok(true) => Ok(StepResult::done(
                format!("pushed {} to {branch}", short(&sha)),
                output(true),
            )),
            Ok(false) => Ok(StepResult::done(
                format!("{branch} already holds {}", short(&sha)),
                output(false),
            )),
            Err(error) => Err(error.with_output(output(false))),
        }
    }
}

/// The commit being pushed, and how often it was rebased to get there.
struct Landing {
    sha: String,
    rebased: u32,
}

/// Pushes `landing.sha` to `branch`; `Ok(false)` when the branch already holds it. A
/// plain push refused because the branch moved is rebased and pushed again, at most
/// [`ATTEMPTS`] pushes in all, `landing` following the commit.
async fn land(
    git: &Git,
    dir: &Path,
    branch: &str,
    settings: &Settings,
    landing: &mut Landing,
) -> Result<bool, StepError> {
    if settings.force || settings.to_new_branch {
        return send(git, dir, &landing.sha, branch, settings.force).await;
    }
    let mut refusals = 0;
    loop {
        let refused = match send(git, dir, &landing.sha, branch, false).await {
            Err(error) if error.reason == Reason::GitRejected => error,
            sent => return sent,
        };
        refusals += 1;
        if refusals < ATTEMPTS {
            rebase::pause(refusals).await;
        }
        // After the last push too: the branch may hold our commit, or have refused it
        // for another reason, and then the refusal is the news.
        let (tip, base) = match rebase::look(git, dir, branch, &landing.sha).await? {
            Remote::Holds => return Ok(false),
            Remote::Unmoved => return Err(refused),
            Remote::Elsewhere(why) => {
                return Err(StepError::retryable(
                    Reason::GitRejected,
                    format!("{}; not rebased: {why}", refused.message),
                ));
            }
            Remote::Moved { tip, base } => (tip, base),
        };
        if refusals >= ATTEMPTS {
            return Err(StepError::retryable(
                Reason::GitRejected,
                format!(
                    "{branch} moved again before each of {ATTEMPTS} pushes (rebased {} onto \
                     it): too many crossings pushing to it at once; the last refusal: {}",
                    times(landing.rebased),
                    refused.message
                ),
            ));
        }
        landing.sha = rebase::replay(git, dir, branch, &tip, &base).await?;
        landing.rebased += 1;
    }
}

/// `n` times, in words: "once", "twice", "3 times".
fn times(n: u32) -> String {
    match n {
        1 => "once".into(),
        2 => "twice".into(),
        n => format!("{n} times"),
    }
}

impl StepKind for GitPush {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::GitPush;
    type With = Settings;

    fn build(tools: &Tools) -> Self {
        Self::with_tokens(tools.client.clone(), tools.app_tokens.clone()).within(tools.git)
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        settings: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(self.push(ctx, settings))
    }
}

/// The branch to push to, checked to be a valid branch name.
async fn target(
    git: &Git,
    dir: &Path,
    settings: &Settings,
    passage: &str,
) -> Result<String, StepError> {
    let branch = if settings.to_new_branch {
        format!("hecate/{passage}")
    } else if !settings.branch.trim().is_empty() {
        settings.branch.trim().to_string()
    } else {
        current_branch(git, dir)
            .await
            .map_err(GitFailure::local)?
            .ok_or_else(|| {
                StepError::config("the checkout's HEAD is on no branch; set branch to push to")
            })?
    };
    let reference = format!("refs/heads/{branch}");
    let valid = git
        .succeeds(dir, &["check-ref-format", reference.as_str()])
        .await
        .map_err(GitFailure::local)?;
    if valid && !branch.starts_with('-') {
        Ok(branch)
    } else {
        Err(StepError::config(format!(
            "{branch:?} is not a valid branch name"
        )))
    }
}

/// Pushes `sha` to `branch` of `origin`; `Ok(false)` when the remote was already there.
async fn send(
    git: &Git,
    dir: &Path,
    sha: &str,
    branch: &str,
    force: bool,
) -> Result<bool, StepError> {
    let destination = format!("refs/heads/{branch}");
    let refspec = format!("{}{sha}:{destination}", if force { "+" } else { "" });
    let report = git
        .run(dir, &["push", "--porcelain", "origin", refspec.as_str()])
        .await
        .map_err(GitFailure::remote)?;
    // `--porcelain` reports each ref as `<flag>\t<from>:<to>\t<summary>`; `=` is "up to
    // date". A report without our ref (it cannot happen) counts as pushed.
    let flag = report.lines().find_map(|line| {
        let mut fields = line.split('\t');
        let flag = fields.next()?;
        let refs = fields.next()?;
        (flag.len() == 1 && refs.ends_with(&format!(":{destination}"))).then_some(flag)
    });
    Ok(flag != Some("="))
}

#[cfg(test)]
mod tests {
    use crate::runner::Runner as _;
    use hecate_sources::git::testing::{git, http_git, path, write};
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use crate::git::testing::{Fixture, no_cluster, output};
    use crate::git::{GitClone, GitCommit};

    /// A clone of `remote` in work directory `name` with one commit on top.
    async fn committed(fx: &Fixture, remote: &str, name: &str, clone: Value) -> std::path::PathBuf {
        let work = fx.work_dir(name);
        let mut clone = clone;
        clone["repo"] = json!(remote);
        output(
            &GitClone::new(no_cluster())
                .within(Limits::local())
                .run(&fx.ctx(&work, clone))
                .await,
        );
        write(&work.join("repo/app/values.yaml"), "image: app:2.0.0\n").await;
        output(
            &GitCommit::new()
                .run(&fx.ctx(&work, json!({"message": "promote"})))
                .await,
        );
        work
    }

    #[tokio::test]
    async fn push_then_push_again() {
        let fx = Fixture::new();
        let bare = fx.remote("fleet").await;
        let work = committed(&fx, &path(&bare), "w", json!({})).await;
        let sha = git(&work.join("repo"), &["rev-parse", "HEAD"])
            .await
            .trim()
            .to_string();
        let step = GitPush::new(no_cluster()).within(Limits::local());
        let ctx = fx.ctx(&work, json!({}));

        let first = step.run(&ctx).await;
        assert_eq!(
            output(&first),
            &json!({"branch": "main", "sha": sha, "pushed": true, "rebased": 0})
        );
        assert_eq!(git(&bare, &["rev-parse", "main"]).await.trim(), sha);

        let again = step.run(&ctx).await;
        assert_eq!(
            output(&again),
            &json!({"branch": "main", "sha": sha, "pushed": false, "rebased": 0})
        );

        // A restart: fresh clone (now at our commit), nothing to commit, nothing to push.
        let work = fx.work_dir("w2");
        output(
            &GitClone::new(no_cluster())
                .within(Limits::local())
                .run(&fx.ctx(&work, json!({"repo": path(&bare)})))
                .await,
        );
        let commit = GitCommit::new()
            .run(&fx.ctx(&work, json!({"message": "promote"})))
            .await;
        assert_eq!(output(&commit)["committed"], json!(false));
        let again = step.run(&fx.ctx(&work, json!({}))).await;
        assert_eq!(output(&again)["pushed"], json!(false));
    }

    /// A branch that moved is rebased onto (the rebase module's tests); forced, it is
    /// overwritten instead.
    #[tokio::test]
    async fn a_forced_push_overwrites_a_moved_branch() {
        let fx = Fixture::new();
        let bare = fx.remote("fleet").await;
        let work = committed(&fx, &path(&bare), "w", json!({"branch": "env/dev"})).await;
        let theirs = fx.commit_elsewhere(&bare, "env/dev", "theirs.txt").await;
        let step = GitPush::new(no_cluster()).within(Limits::local());

        let forced = step.run(&fx.ctx(&work, json!({"force": true}))).await;
        assert_eq!(
            (&output(&forced)["pushed"], &output(&forced)["rebased"]),
            (&json!(true), &json!(0))
        );
        let ours = git(&work.join("repo"), &["rev-parse", "HEAD"]).await;
        assert_eq!(git(&bare, &["rev-parse", "env/dev"]).await, ours);
        let log = git(&bare, &["log", "--format=%H", "env/dev"]).await;
        assert!(!log.contains(&theirs), "theirs is gone: {log}");
    }

    #[tokio::test]
    async fn to_a_new_branch_or_a_named_one() {
        let fx = Fixture::new();
        let bare = fx.remote("fleet").await;
        let work = committed(&fx, &path(&bare), "w", json!({})).await;
        let sha = git(&work.join("repo"), &["rev-parse", "HEAD"]).await;
        let step = GitPush::new(no_cluster()).within(Limits::local());

        let new = step
            .run(&fx.ctx(&work, json!({"toNewBranch": true, "branch": "ignored"})))
            .await;
        assert_eq!(output(&new)["branch"], json!("hecate/dev-7f3a"));
        assert_eq!(git(&bare, &["rev-parse", "hecate/dev-7f3a"]).await, sha);

        let named = step.run(&fx.ctx(&work, json!({"branch": "release"}))).await;
        assert_eq!(output(&named)["branch"], json!("release"));
        assert_eq!(git(&bare, &["rev-parse", "release"]).await, sha);
        // main was not touched.
        assert_ne!(git(&bare, &["rev-parse", "main"]).await, sha);
    }

    #[tokio::test]
    async fn an_empty_work_directory_is_a_lost_one() {
        let fx = Fixture::new();
        let work = fx.work_dir("restarted");
        let error = GitPush::new(no_cluster())
            .within(Limits::local())
            .run(&fx.ctx(&work, json!({})))
            .await
            .expect_err("nothing to push");
        assert_eq!((error.reason, error.terminal), (Reason::WorkDirLost, true));
    }

    #[tokio::test]
    async fn configuration_mistakes_are_invalid_config() {
        let fx = Fixture::new();
        let bare = fx.remote("fleet").await;
        let work = committed(&fx, &path(&bare), "w", json!({})).await;
        let step = GitPush::new(no_cluster()).within(Limits::local());
        let cases = [
            (json!({"path": "../../elsewhere"}), "path"),
            (json!({"forse": true}), "unknown field `forse`"),
            (json!({"branch": "bad..name"}), "not a valid branch name"),
            (json!({"branch": "-f"}), "not a valid branch name"),
            (
                json!({"credentialsRef": {"name": ""}}),
                "credentialsRef.name",
            ),
        ];
        for (config, words) in cases {
            let error = step
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
        // A detached HEAD needs a branch named.
        git(&work.join("repo"), &["checkout", "-q", "--detach"]).await;
        let error = step
            .run(&fx.ctx(&work, json!({})))
            .await
            .expect_err("no branch");
        assert_eq!(error.reason, Reason::InvalidConfig);
        assert!(error.message.contains("set branch"), "{}", error.message);
    }

    #[tokio::test]
    async fn a_refused_an_unreachable_and_a_remoteless_push_have_their_reasons() {
        let fx = Fixture::new();
        let bare = fx.remote("fleet").await;
        let work = committed(&fx, &path(&bare), "w", json!({})).await;
        let checkout = work.join("repo");
        let step = GitPush::new(no_cluster()).within(Limits::local());
        let push = || async { step.run(&fx.ctx(&work, json!({}))).await };

        // A host that wants credentials the step was not given: terminal.
        let base = http_git(fx.root.path(), "bot", "secret").await;
        let guarded = format!("{base}/fleet.git");
        git(&checkout, &["remote", "set-url", "origin", &guarded]).await;
        let error = push().await.expect_err("refused");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::GitAuthFailed, true),
            "{}",
            error.message
        );
        assert_eq!(
            error.output.as_ref().map(|o| o["pushed"].clone()),
            Some(json!(false))
        );

        // Nobody there: may be forgiven.
        let nowhere = "http://127.0.0.1:1/fleet.git";
        git(&checkout, &["remote", "set-url", "origin", nowhere]).await;
        let error = push().await.expect_err("unreachable");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::GitUnreachable, false),
            "{}",
            error.message
        );

        // No origin at all: a local failure, terminal.
        git(&checkout, &["remote", "remove", "origin"]).await;
        let error = push().await.expect_err("no remote");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::GitFailed, true),
            "{}",
            error.message
        );
        assert!(error.message.contains("no origin"), "{}", error.message);

        // A checkout without a commit has nothing to push: terminal too.
        let empty = fx.work_dir("empty");
        git(&empty, &["init", "-q", "repo"]).await;
        let error = step
            .run(&fx.ctx(&empty, json!({})))
            .await
            .expect_err("no commit");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::GitFailed, true),
            "{}",
            error.message
        );
        assert_eq!(
            git(&bare, &["rev-parse", "main"]).await.len(),
            41,
            "untouched"
        );
    }
}
