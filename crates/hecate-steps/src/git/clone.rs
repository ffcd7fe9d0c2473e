//! `git-clone` (spec §5.3): a checkout of `repo` in the work directory.
//!
//! A checkout an earlier attempt left is reused as it is — no fetch, so edits a later
//! step made before a crash survive — when its `origin` is `repo` exactly and, if a
//! `branch` is configured, it is on that branch. The reference looks at the remote
//! only; checking the branch too means a checkout left by a different configuration
//! is replaced instead of being taken for this one. Anything else git left there is
//! removed and cloned afresh.
//!
//! A clone is made in the private area and renamed into place when complete, so a
//! crash mid-clone never leaves a half-checked-out tree that the next attempt would
//! reuse (and `git-commit` would then record as mass deletions).
//!
//! What the operator decides (issue 30): `repo` must be a remote on the network — a
//! local path or `file://` only with `--allow-local-git`, a remote helper (`ext::`,
//! `fd::`) never ([`hecate_sources::git::remote`]) — and a clone may hold at most
//! `--max-checkout-size` bytes: its directory is measured while git runs, and git is
//! stopped once it is over.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use hecate_sources::git::command::{redact_urls, size_of};
use hecate_sources::git::{
    AppTokens, Bounded, Git, GitCredentials, GitFailure, Limits, Scratch, apply,
};
use serde_json::json;

use super::{checkout_dir, cli, current_branch, display, head, is_checkout, origin, short};
use crate::Tools;
use crate::config::git::GitCloneConfig as Settings;
use crate::reason::Reason;
use crate::runner::{StepContext, StepError, StepKind, StepResult};

/// The `git-clone` step.
pub struct GitClone {
    client: kube::Client,
    tokens: AppTokens,
    limits: Limits,
}

impl GitClone {
    /// Reads credentials Secrets through `client`, with a GitHub App token cache of
    /// its own.
    pub fn new(client: kube::Client) -> Self {
        Self::with_tokens(client, AppTokens::default())
    }

    /// Reads credentials Secrets through `client` and takes GitHub App tokens from
    /// `tokens` (shared with `git-push`).
    pub fn with_tokens(client: kube::Client, tokens: AppTokens) -> Self {
        Self {
            client,
            tokens,
            limits: Limits::default(),
        }
    }

    /// Clones within the operator's `limits`: `repo` a path or `file://` only when they
    /// allow the local disk (refused otherwise, before git runs and by git itself), and
    /// a clone stopped once its directory grows past their size.
    #[must_use]
    pub fn within(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    async fn clone_repo(
        &self,
        ctx: &StepContext<'_>,
        settings: Settings,
    ) -> Result<StepResult, StepError> {
        // Before anything is read or reused: the operator's rule holds for a checkout
        // an earlier attempt left too.
        hecate_sources::git::remote::check(&settings.repo, self.limits.local)
            .map_err(|why| StepError::terminal(Reason::NotAllowed, format!("repo: {why}")))?;
        let dest = checkout_dir(ctx, settings.checkout())?;
        let mut git = cli(ctx.work_dir).await?.allowing_local(self.limits.local);
        if reusable(&git, &dest, &settings).await? {
            return finish(&git, &dest, &settings, true).await;
        }
        clear(&dest, settings.checkout()).await?;
        let credentials = GitCredentials::read(
            &self.client,
            ctx.namespace,
            settings.credentials_ref.as_ref().map(|r| r.name.as_str()),
        )
        .await?;
        let scratch = Scratch::new(&git, Self::USES).await?;
        let fetched = match apply(
            &credentials,
            &settings.repo,
            &mut git,
            &scratch,
            &self.tokens,
        )
        .await
        {
            Ok(()) => fetch(&git, &dest, &settings, self.limits.max_checkout_size).await,
            Err(error) => Err(error.into()),
        };
        scratch.remove().await;
        fetched?;
        finish(&git, &dest, &settings, false).await
    }
}

impl StepKind for GitClone {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::GitClone;
    type With = Settings;

    fn build(tools: &Tools) -> Self {
        Self::with_tokens(tools.client.clone(), tools.app_tokens.clone()).within(tools.git)
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        settings: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(self.clone_repo(ctx, settings))
    }
}

/// Whether `dest` already is the checkout this step would make.
async fn reusable(git: &Git, dest: &Path, settings: &Settings) -> Result<bool, StepError> {
    if !is_checkout(dest).await {
        return Ok(false);
    }
    if origin(git, dest)
        .await
        .map_err(GitFailure::local)?
        .as_deref()
        != Some(&settings.repo)
    {
        return Ok(false);
    }
    let wanted = settings.branch.trim();
    if wanted.is_empty() {
        return Ok(true);
    }
    let branch = current_branch(git, dest).await.map_err(GitFailure::local)?;
    Ok(branch.as_deref() == Some(wanted))
}

/// Makes room for a clone at `dest`: an old checkout or an empty directory is removed;
/// anything else there is someone else's and a configuration mistake.
async fn clear(dest: &Path, relative: &str) -> Result<(), StepError> {
    let meta = match tokio::fs::symlink_metadata(dest).await {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(local(format!("cannot inspect {}: {error}", dest.display()))),
    };
    let replaceable = meta.is_dir() && (is_checkout(dest).await || is_empty(dest).await);
    if !replaceable {
        return Err(StepError::config(format!(
            "path {relative:?} already holds something that is not a git checkout"
        )));
    }
    tokio::fs::remove_dir_all(dest).await.map_err(|e| {
        local(format!(
            "cannot remove the old checkout {}: {e}",
            dest.display()
        ))
    })
}

async fn is_empty(dir: &Path) -> bool {
    match tokio::fs::read_dir(dir).await {
        Ok(mut entries) => matches!(entries.next_entry().await, Ok(None)),
        Err(_) => false,
    }
}

/// Clones into the private area — at most `limit` bytes of it —, then moves the
/// finished checkout to `dest`.
async fn fetch(
    git: &Git,
    dest: &Path,
    settings: &Settings,
    limit: Option<u64>,
) -> Result<(), StepError> {
    let staging: PathBuf = git.private().join("clone");
    clear_staging(&staging).await?;
    let mut args = vec!["clone".to_string(), "--quiet".to_string()];
    let branch = settings.branch.trim();
    if !branch.is_empty() {
        args.push(format!("--branch={branch}"));
        args.push("--single-branch".into());
    }
    if settings.depth > 0 {
        args.push(format!("--depth={}", settings.depth));
    }
    args.push("--".into());
    args.push(settings.repo.clone());
    args.push(staging.to_string_lossy().into_owned());
    match limit {
        None => {
            git.run(git.private(), args.as_slice())
                .await
                .map_err(GitFailure::remote)?;
        }
        Some(limit) => {
            let cloned = git
                .run_bounded(git.private(), args.as_slice(), &staging, limit)
                .await;
            let size = match cloned {
                Ok(_) => {
                    // The last files may have landed after the last measurement.
                    let measured = staging.clone();
                    tokio::task::spawn_blocking(move || size_of(&measured))
                        .await
                        .unwrap_or(0)
                }
                Err(Bounded::TooLarge { size, .. }) => size,
                Err(Bounded::Failed(failure)) => return Err(GitFailure::remote(failure).into()),
            };
            if size > limit {
                // Best effort: the next attempt clears it before cloning.
                let _ = clear_staging(&staging).await;
                return Err(too_large(settings, limit));
            }
        }
    }
    if let Some(parent) = dest.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| local(format!("cannot create {}: {e}", parent.display())))?;
    }
    tokio::fs::rename(&staging, dest)
        .await
        .map_err(|e| local(format!("cannot move the clone to {}: {e}", dest.display())))
}

/// The outputs: the checkout's absolute path, HEAD, the branch (`HEAD` when detached,
/// as on a tag) and whether it was reused.
async fn finish(
    git: &Git,
    dest: &Path,
    settings: &Settings,
    reused: bool,
) -> Result<StepResult, StepError> {
    let sha = head(git, dest)
        .await
        .map_err(GitFailure::local)?
        .unwrap_or_default();
    let branch = current_branch(git, dest)
        .await
        .map_err(GitFailure::local)?
        .unwrap_or_else(|| "HEAD".to_string());
    let path = std::path::absolute(dest).unwrap_or_else(|_| dest.to_path_buf());
    let at = if sha.is_empty() {
        "no commit yet"
    } else {
        short(&sha)
    };
    let message = if reused {
        format!("reused the checkout of {branch} at {at}")
    } else {
        format!("cloned {} ({branch} at {at})", redact_urls(&settings.repo))
    };
    Ok(StepResult::done(
        message,
        json!({"path": display(&path), "sha": sha, "branch": branch, "reused": reused}),
    ))
}

fn local(message: String) -> StepError {
    StepError::terminal(Reason::GitFailed, message)
}

/// Removes what an earlier clone left in the private area. git's helpers may still be
/// finishing a write when a stopped clone is cleared, so a failure is tried again once.
async fn clear_staging(staging: &Path) -> Result<(), StepError> {
    let mut tried = false;
    loop {
        match tokio::fs::remove_dir_all(staging).await {
            Ok(()) => return Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(_) if !tried => {
                tried = true;
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            Err(error) => {
                return Err(local(format!(
                    "cannot clear {}: {error}",
                    staging.display()
                )));
            }
        }
    }
}

/// The terminal failure of a clone over `limit`: the same repository would be as large
/// on the next attempt.
fn too_large(settings: &Settings, limit: u64) -> StepError {
    let hint = if settings.depth == 1 {
        ""
    } else {
        " (a shallow clone, depth: 1, may fit)"
    };
    StepError::terminal(
        Reason::CheckoutTooLarge,
        format!(
            "the clone of {} grew past {}, the most a checkout may hold \
             (--max-checkout-size): it was stopped and removed{hint}",
            redact_urls(&settings.repo),
            hecate_sources::git::size_text(limit)
        ),
    )
}

#[cfg(test)]
mod tests {
    use crate::runner::Runner as _;
    use hecate_sources::git::testing::{git, http_git, path, write};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::git::testing::{Fixture, no_cluster, output};

    #[tokio::test]
    async fn a_fresh_clone_then_a_reuse() {
        let fx = Fixture::new();
        let remote = path(&fx.remote("fleet").await);
        let work = fx.work_dir("w1");
        let step = GitClone::new(no_cluster()).within(Limits::local());
        let ctx = fx.ctx(&work, json!({"repo": remote}));

        let first = step.run(&ctx).await;
        let out = output(&first).clone();
        let main = git(&work.join("repo"), &["rev-parse", "HEAD"]).await;
        assert_eq!(
            out,
            json!({"path": path(&work.join("repo")), "sha": main.trim(), "branch": "main", "reused": false})
        );
        assert!(
            tokio::fs::try_exists(work.join("repo/app/values.yaml"))
                .await
                .expect("stat")
        );

        // An edit made by a later step before a crash survives the re-run.
        write(&work.join("repo/app/values.yaml"), "image: app:2.0.0\n").await;
        let again = step.run(&ctx).await;
        let out = output(&again);
        assert_eq!(out["reused"], json!(true));
        assert_eq!(out["sha"], json!(main.trim()));
        let kept = tokio::fs::read_to_string(work.join("repo/app/values.yaml"))
            .await
            .expect("read");
        assert_eq!(kept, "image: app:2.0.0\n");
    }

    #[tokio::test]
    async fn a_branch_and_a_path_and_a_depth() {
        let fx = Fixture::new();
        let remote = format!("file://{}", path(&fx.remote("fleet").await));
        let work = fx.work_dir("w");
        let step = GitClone::new(no_cluster()).within(Limits::local());
        let ctx = fx.ctx(
            &work,
            json!({"repo": remote, "branch": "env/dev", "path": "checkouts/fleet", "depth": 1}),
        );
        let result = step.run(&ctx).await;
        let out = output(&result);
        assert_eq!(out["branch"], json!("env/dev"));
        assert_eq!(out["path"], json!(path(&work.join("checkouts/fleet"))));
        let checkout = work.join("checkouts/fleet");
        assert!(
            tokio::fs::try_exists(checkout.join("dev.yaml"))
                .await
                .expect("stat")
        );
        // Depth 1, one branch.
        assert_eq!(
            git(&checkout, &["rev-list", "--count", "HEAD"])
                .await
                .trim(),
            "1"
        );
        assert_eq!(
            git(&checkout, &["branch", "-r"]).await.trim(),
            "origin/env/dev"
        );
    }

    #[tokio::test]
    async fn a_checkout_of_another_remote_or_branch_is_replaced() {
        let fx = Fixture::new();
        let fleet = path(&fx.remote("fleet").await);
        let other = path(&fx.remote("other").await);
        let work = fx.work_dir("w");
        let step = GitClone::new(no_cluster()).within(Limits::local());

        output(&step.run(&fx.ctx(&work, json!({"repo": other}))).await);
        let result = step.run(&fx.ctx(&work, json!({"repo": fleet}))).await;
        assert_eq!(output(&result)["reused"], json!(false));
        let origin = git(
            &work.join("repo"),
            &["config", "--get", "remote.origin.url"],
        )
        .await;
        assert_eq!(origin.trim(), fleet);

        let result = step
            .run(&fx.ctx(&work, json!({"repo": fleet, "branch": "env/dev"})))
            .await;
        let out = output(&result);
        assert_eq!(
            (out["reused"].clone(), out["branch"].clone()),
            (json!(false), json!("env/dev"))
        );
        let result = step
            .run(&fx.ctx(&work, json!({"repo": fleet, "branch": "env/dev"})))
            .await;
        assert_eq!(output(&result)["reused"], json!(true));
    }

    #[tokio::test]
    async fn foreign_content_at_the_path_is_not_deleted() {
        let fx = Fixture::new();
        let fleet = path(&fx.remote("fleet").await);
        let work = fx.work_dir("w");
        write(&work.join("repo/notes.txt"), "mine\n").await;
        let error = GitClone::new(no_cluster())
            .within(Limits::local())
            .run(&fx.ctx(&work, json!({"repo": fleet})))
            .await
            .expect_err("refused");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::InvalidConfig, true)
        );
        assert!(
            tokio::fs::try_exists(work.join("repo/notes.txt"))
                .await
                .expect("stat")
        );
    }

    #[tokio::test]
    async fn configuration_mistakes_are_invalid_config() {
        let fx = Fixture::new();
        let work = fx.work_dir("w");
        let step = GitClone::new(no_cluster()).within(Limits::local());
        let cases = [
            (json!({"repo": "/srv/x.git", "path": "../outside"}), "path"),
            (
                json!({"repo": "/srv/x.git", "path": "/etc"}),
                "leaves the work directory",
            ),
            (
                json!({"repo": "/srv/x.git", "path": "."}),
                "work directory itself",
            ),
            (
                json!({"repo": "/srv/x.git", "path": ".hecate/x"}),
                ".hecate",
            ),
            (
                json!({"repo": "/srv/x.git", "brnach": "main"}),
                "unknown field `brnach`",
            ),
            (json!({}), "missing field `repo`"),
            (json!("repo"), "with must be a mapping"),
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
    }

    #[tokio::test]
    async fn an_unreachable_remote_is_retryable() {
        let fx = Fixture::new();
        let work = fx.work_dir("w");
        let step = GitClone::new(no_cluster()).within(Limits::local());
        let missing = path(&fx.root.path().join("missing.git"));
        for repo in [missing, "http://127.0.0.1:1/fleet.git".to_string()] {
            let error = step
                .run(&fx.ctx(&work, json!({"repo": repo})))
                .await
                .expect_err("unreachable");
            assert_eq!(
                (error.reason, error.terminal),
                (Reason::GitUnreachable, false),
                "{repo}: {}",
                error.message
            );
        }
        assert!(
            !tokio::fs::try_exists(work.join("repo"))
                .await
                .expect("stat")
        );
    }

    #[tokio::test]
    async fn a_branch_the_remote_lacks_and_a_path_that_cannot_be_made_are_git_failures() {
        let fx = Fixture::new();
        let repo = path(&fx.remote("fleet").await);
        let step = GitClone::new(no_cluster()).within(Limits::local());

        // The remote answered, and said no: another crossing may find the branch.
        let work = fx.work_dir("w");
        let error = step
            .run(&fx.ctx(&work, json!({"repo": repo, "branch": "env/nope"})))
            .await
            .expect_err("no such branch");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::GitFailed, false),
            "{}",
            error.message
        );
        assert!(error.message.contains("env/nope"), "{}", error.message);

        // The work directory itself is in the way: terminal, it would be again.
        write(&work.join("taken"), "a file, not a directory\n").await;
        let error = step
            .run(&fx.ctx(&work, json!({"repo": repo, "path": "taken/repo"})))
            .await
            .expect_err("cannot make the path");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::GitFailed, true),
            "{}",
            error.message
        );
    }

    #[tokio::test]
    async fn https_credentials_are_given_by_the_helper_and_never_shown() {
        let fx = Fixture::new();
        fx.remote("fleet").await;
        let base = http_git(fx.root.path(), "bot", "p@ss w0rd\\'\"$x").await;
        let repo = format!("{base}/fleet.git");
        let work = fx.work_dir("w");
        let mut git = cli(&work).await.expect("a private area");
        let scratch = Scratch::new(&git, "git-clone").await.expect("scratch");
        let good = GitCredentials::from_secret(
            &[
                (
                    "username".to_string(),
                    k8s_openapi::ByteString(b"bot".to_vec()),
                ),
                (
                    "password".to_string(),
                    k8s_openapi::ByteString(b"p@ss w0rd\\'\"$x".to_vec()),
                ),
            ]
            .into(),
        )
        .expect("credentials");
        apply(&good, &repo, &mut git, &scratch, &AppTokens::default())
            .await
            .expect("applied");
        let settings: Settings = serde_json::from_value(json!({"repo": repo})).expect("settings");
        let dest = work.join("repo");
        fetch(&git, &dest, &settings, None)
            .await
            .expect("cloned over HTTP with the password");
        assert!(
            tokio::fs::try_exists(dest.join("README.md"))
                .await
                .expect("stat")
        );

        // A wrong password is refused, terminally, and the message does not hold it.
        let mut git = cli(&work).await.expect("a private area");
        let wrong = GitCredentials::Https(hecate_sources::git::Basic {
            username: "bot".into(),
            password: "not-the-password".into(),
        });
        apply(&wrong, &repo, &mut git, &scratch, &AppTokens::default())
            .await
            .expect("applied");
        let error = fetch(&git, &work.join("again"), &settings, None)
            .await
            .expect_err("refused");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::GitAuthFailed, true),
            "{}",
            error.message
        );
        assert!(
            !error.message.contains("not-the-password"),
            "{}",
            error.message
        );

        // No credentials at all: git may not prompt, and says it needed some.
        let step = GitClone::new(no_cluster()).within(Limits::local());
        let error = step
            .run(&fx.ctx(&fx.work_dir("w2"), json!({"repo": repo})))
            .await
            .expect_err("refused");
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::GitAuthFailed, true),
            "{}",
            error.message
        );

        // A password written into the URL is used by git but hidden from the story.
        let with_password = repo.replacen("http://", "http://bot:p%40ss%20w0rd%5C%27%22%24x@", 1);
        let result = step
            .run(&fx.ctx(&fx.work_dir("w3"), json!({"repo": with_password})))
            .await;
        let done = result.expect("cloned with the URL's password");
        assert!(
            done.message.contains("http://***@127.0.0.1"),
            "{}",
            done.message
        );
        assert!(!done.message.contains("w0rd"), "{}", done.message);
    }

    /// Issue 30: a `repo` on the controller's own disk — a path, `file://` — was
    /// cloned; a remote helper would have run a command. Refused unless the operator
    /// allows local repositories, and helpers always; git refuses them by itself too.
    #[tokio::test]
    async fn local_repositories_need_the_operators_flag_and_helpers_are_refused() {
        let fx = Fixture::new();
        let bare = path(&fx.remote("fleet").await);
        let strict = GitClone::new(no_cluster());
        let marker = fx.root.path().join("ran");
        let helper = format!("ext::sh -c touch% {}", path(&marker));
        for repo in [bare.clone(), format!("file://{bare}"), helper.clone()] {
            let work = fx.work_dir("strict");
            let error = strict
                .run(&fx.ctx(&work, json!({"repo": repo})))
                .await
                .expect_err("refused");
            assert_eq!(
                (error.reason, error.terminal),
                (Reason::NotAllowed, true),
                "{repo}: {}",
                error.message
            );
            assert!(error.message.starts_with("repo: "), "{}", error.message);
            if repo == helper {
                assert!(error.message.contains("remote helper"), "{}", error.message);
            } else {
                assert!(
                    error.message.contains("--allow-local-git"),
                    "{}",
                    error.message
                );
            }
            assert!(!work.join("repo").exists(), "{repo}: nothing was cloned");
        }
        // With the flag a local repository is cloned; a helper is still refused.
        let allowed = GitClone::new(no_cluster()).within(Limits::local());
        let work = fx.work_dir("allowed");
        let result = allowed
            .run(&fx.ctx(&work, json!({"repo": format!("file://{bare}")})))
            .await;
        assert_eq!(output(&result)["reused"], json!(false));
        let error = allowed
            .run(&fx.ctx(&fx.work_dir("helper"), json!({"repo": helper})))
            .await
            .expect_err("refused");
        assert_eq!(error.reason, Reason::NotAllowed);

        // git itself refuses what the step's check did not see (GIT_ALLOW_PROTOCOL).
        let work = fx.work_dir("direct");
        let git = cli(&work).await.expect("a private area");
        for repo in [bare.as_str(), helper.as_str()] {
            let failure = git
                .run(&work, &["clone", "-q", "--", repo, "x"])
                .await
                .expect_err("git refuses");
            assert!(
                failure.detail.contains("not allowed"),
                "{repo}: {}",
                failure.detail
            );
        }
        assert!(!marker.exists(), "the ext:: command never ran");
        let git = cli(&work)
            .await
            .expect("a private area")
            .allowing_local(true);
        git.run(&work, &["clone", "-q", "--", bare.as_str(), "x"])
            .await
            .expect("allowed");
    }

    /// Issue 30: a clone had no size cap (a 200 MB file went through). A clone that
    /// grows past `--max-checkout-size` fails `CheckoutTooLarge`, and nothing of it is
    /// left.
    #[tokio::test]
    async fn a_clone_larger_than_the_limit_is_stopped_and_removed() {
        let fx = Fixture::new();
        let bare = fx.remote("big").await;
        // 3 MiB that do not compress, committed through someone else's clone.
        let seed = fx.root.path().join("big-seed");
        let mut noise = Vec::with_capacity(3 << 20);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        while noise.len() < 3 << 20 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            noise.extend_from_slice(&x.to_le_bytes());
        }
        git(&seed, &["checkout", "-q", "main"]).await;
        tokio::fs::write(seed.join("blob.bin"), &noise)
            .await
            .expect("written");
        git(&seed, &["add", "-A"]).await;
        git(&seed, &["commit", "-q", "-m", "big"]).await;
        git(&seed, &["push", "-q", "origin", "main"]).await;
        let repo = path(&bare);

        let capped = GitClone::new(no_cluster()).within(Limits {
            max_checkout_size: Some(1 << 20),
            ..Limits::local()
        });
        let work = fx.work_dir("capped");
        let started = std::time::Instant::now();
        let error = capped
            .run(&fx.ctx(&work, json!({"repo": repo, "branch": "main"})))
            .await
            .expect_err("too large");
        eprintln!(
            "a 3 MiB clone against a 1 MiB cap failed in {:?}",
            started.elapsed()
        );
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::CheckoutTooLarge, true),
            "{}",
            error.message
        );
        assert!(
            error.message.contains("1 MiB") && error.message.contains("--max-checkout-size"),
            "{}",
            error.message
        );
        assert!(!work.join("repo").exists());
        assert!(!work.join(super::super::PRIVATE).join("clone").exists());

        // Under a limit it fits, it is cloned as before.
        let roomy = GitClone::new(no_cluster()).within(Limits {
            max_checkout_size: Some(64 << 20),
            ..Limits::local()
        });
        let result = roomy
            .run(&fx.ctx(&work, json!({"repo": repo, "branch": "main"})))
            .await;
        assert_eq!(output(&result)["reused"], json!(false));
        assert!(work.join("repo/blob.bin").exists());
    }
}
