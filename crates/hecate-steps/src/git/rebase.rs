//! How `git-push` gets past a branch that moved (DECISION 151, "several targets, one
//! branch"): the targets of one crossing each commit their own change and push to the
//! same branch, so all but the first find it moved. The push step then fetches the
//! branch, puts the checkout's own commits on its new tip and pushes again.
//!
//! - **Our commits** are those HEAD holds and no ref of `origin` does: what this
//!   checkout made since it was cloned (the `git-commit` steps'). They are put on the
//!   new tip only when the branch moved *forward* from where they started — their
//!   parent is in the new tip's history. A branch rewritten meanwhile, or one that
//!   never held that start, is refused as before: replaying onto it would carry
//!   history nobody asked for onto it, or drop history somebody rewrote away.
//! - **Already there** is judged by ancestry: HEAD in the new tip's history. A
//!   re-run in the same work directory pushes the very SHA that landed (the rebase
//!   rewrote HEAD in place before the push), and a crossing started again from an
//!   empty work directory clones a tip that holds the change, so `git-commit` makes
//!   no commit. A patch-id search would only add a way to call someone else's
//!   identical change ours. One change the new tip already holds is git's to see:
//!   a commit that becomes empty on the tip is dropped (`--empty=drop`), HEAD is
//!   then the tip, and the next push finds the branch up to date.
//! - **The rebased commits stay the Passage's**: they keep their author, and take
//!   HEAD's committer and date (the `git-commit` step's: the Passage's start), so a
//!   rebased SHA derives only from the tip it lands on. It also means git needs no
//!   identity of the controller's own, which its clean environment does not have.
//! - **A conflict** fails this crossing alone (`GitConflict`, terminal: the same
//!   commit conflicts with the same tip every time), naming the files, with the
//!   checkout as it was before (`git rebase --abort`). Starting the crossing again
//!   clones the new tip and makes the change on top of it.

use std::path::Path;
use std::time::Duration;

use hecate_sources::git::{Git, GitFailure};

use super::ask;
use crate::reason::Reason;
use crate::runner::StepError;

/// The most pushes one run of `git-push` makes to a branch that keeps moving; then it
/// fails `GitRejected`, as a refused push always did.
pub(super) const ATTEMPTS: u32 = 5;

/// The most commits of our own that are put on a moved tip. A crossing makes one
/// commit per `git-commit` step; a checkout with more of its own was not made by a
/// clone of this remote, and what is "ours" in it is anybody's guess.
const MAX_OWN: usize = 20;

/// The most conflicting files a failure names.
const MAX_NAMED: usize = 10;

/// Where the remote branch stands, once fetched, against the checkout's HEAD.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Remote {
    /// Its history holds HEAD: our change is there already.
    Holds,
    /// It is in HEAD's history: it did not move, so the push was refused for
    /// another reason.
    Unmoved,
    /// It moved somewhere our commits cannot be put on top of, for this reason.
    Elsewhere(String),
    /// It moved forward: our commits, on top of `base`, go on `tip`.
    Moved { tip: String, base: String },
}

/// Waits before the fetch that follows the `refusals`-th refused push: 100 ms times
/// `refusals`, plus as much again at most, at random. Two targets refused together
/// then fetch at different moments, and the later one finds the earlier one's push.
pub(super) async fn pause(refusals: u32) {
    let step = 100 * u64::from(refusals);
    // `RandomState` is seeded at random per process and per thread: enough to spread
    // pushers apart, without a dependency on a random number generator.
    let jitter = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), refusals);
    tokio::time::sleep(Duration::from_millis(step + jitter % step.max(1))).await;
}

/// Fetches `branch` of `origin` into `refs/remotes/origin/<branch>` and judges where
/// it stands against `head`.
pub(super) async fn look(
    git: &Git,
    dir: &Path,
    branch: &str,
    head: &str,
) -> Result<Remote, StepError> {
    let tracking = format!("refs/remotes/origin/{branch}");
    let refspec = format!("+refs/heads/{branch}:{tracking}");
    git.run(
        dir,
        &[
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-recurse-submodules",
            "origin",
            refspec.as_str(),
        ],
    )
    .await
    .map_err(GitFailure::remote)?;
    let tip = ask(
        git,
        dir,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("{tracking}^{{commit}}"),
        ],
    )
    .await
    .map_err(GitFailure::local)?
    .ok_or_else(|| {
        StepError::retryable(
            Reason::GitFailed,
            format!("{branch} was fetched, but not found"),
        )
    })?;
    if is_ancestor(git, dir, head, &tip).await? {
        return Ok(Remote::Holds);
    }
    if is_ancestor(git, dir, &tip, head).await? {
        return Ok(Remote::Unmoved);
    }
    let base = match own_base(git, dir).await? {
        Ok(base) => base,
        Err(why) => return Ok(Remote::Elsewhere(why)),
    };
    if !is_ancestor(git, dir, &base, &tip).await? {
        return Ok(Remote::Elsewhere(format!(
            "{branch} no longer holds {}, where this checkout's commits start \
             (it was rewritten, or never held it)",
            super::short(&base)
        )));
    }
    Ok(Remote::Moved { tip, base })
}

/// Whether `ancestor` is in `commit`'s history (or is it).
async fn is_ancestor(
    git: &Git,
    dir: &Path,
    ancestor: &str,
    commit: &str,
) -> Result<bool, StepError> {
    Ok(git
        .succeeds(dir, &["merge-base", "--is-ancestor", ancestor, commit])
        .await
        .map_err(GitFailure::local)?)
}

/// The parent of the oldest of our commits (those HEAD holds and no ref of `origin`
/// does), or why there is none to rebase: no commit of our own, a merge among them,
/// more than [`MAX_OWN`], or a history of our own from its root.
async fn own_base(git: &Git, dir: &Path) -> Result<Result<String, String>, StepError> {
    let limit = format!("--max-count={}", MAX_OWN + 1);
    let listed = git
        .run(
            dir,
            &[
                "rev-list",
                "--parents",
                limit.as_str(),
                "HEAD",
                "--not",
                "--remotes=origin",
            ],
        )
        .await
        .map_err(GitFailure::local)?;
    // Newest first, each line a commit and its parents.
    let own: Vec<Vec<&str>> = listed
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    let Some(oldest) = own.last() else {
        return Ok(Err("HEAD holds no commit of its own".into()));
    };
    if own.len() > MAX_OWN {
        return Ok(Err(format!(
            "HEAD holds more than {MAX_OWN} commits origin does not"
        )));
    }
    if own.iter().any(|commit| commit.len() > 2) {
        return Ok(Err("a merge is among the commits to rebase".into()));
    }
    match oldest.get(1) {
        Some(parent) => Ok(Ok((*parent).to_string())),
        None => Ok(Err("the checkout's history is all its own".into())),
    }
}

/// Puts the commits after `base` on `tip` and answers the new HEAD. A conflict is a
/// terminal `GitConflict` naming the files; on any failure the rebase is undone.
pub(super) async fn replay(
    git: &Git,
    dir: &Path,
    branch: &str,
    tip: &str,
    base: &str,
) -> Result<String, StepError> {
    let committer = committer(git, dir).await?;
    let env = committer.env();
    let rebased = git
        .run_with(
            dir,
            &[
                "rebase",
                "--quiet",
                "--no-autostash",
                "--no-gpg-sign",
                // A commit whose change the tip already holds goes: see the module doc.
                "--empty=drop",
                "--onto",
                tip,
                base,
            ],
            &env,
            None,
        )
        .await;
    if let Err(failure) = rebased {
        let conflicted = conflicted(git, dir).await;
        abort(git, dir).await?;
        return Err(match conflicted {
            Ok(files) if !files.is_empty() => conflict(branch, &files),
            _ => StepError::terminal(
                Reason::GitFailed,
                format!(
                    "{branch} moved meanwhile, and the checkout could not be rebased onto it: {failure}"
                ),
            ),
        });
    }
    super::head(git, dir)
        .await
        .map_err(GitFailure::local)?
        .ok_or_else(|| {
            StepError::terminal(Reason::GitFailed, "HEAD has no commit after the rebase")
        })
}

/// Who committed HEAD, and when: what its rebased commits keep.
struct Committer {
    name: String,
    email: String,
    date: String,
}

impl Committer {
    fn env(&self) -> [(&str, &str); 3] {
        [
            ("GIT_COMMITTER_NAME", self.name.as_str()),
            ("GIT_COMMITTER_EMAIL", self.email.as_str()),
            ("GIT_COMMITTER_DATE", self.date.as_str()),
        ]
    }
}

async fn committer(git: &Git, dir: &Path) -> Result<Committer, StepError> {
    let said = git
        .run(
            dir,
            &[
                "show",
                "-s",
                "--date=raw",
                "--format=%cn%x00%ce%x00%cd",
                "HEAD",
            ],
        )
        .await
        .map_err(GitFailure::local)?;
    let mut fields = said.trim_end_matches('\n').split('\0');
    match (fields.next(), fields.next(), fields.next()) {
        (Some(name), Some(email), Some(date)) => Ok(Committer {
            name: name.to_string(),
            email: email.to_string(),
            // `raw` is `<seconds> <zone>`; `@` tells git they are seconds.
            date: format!("@{date}"),
        }),
        _ => Err(StepError::terminal(
            Reason::GitFailed,
            format!("cannot read HEAD's committer: {said:?}"),
        )),
    }
}

/// The files a stopped rebase left unmerged.
async fn conflicted(git: &Git, dir: &Path) -> Result<Vec<String>, GitFailure> {
    let listed = git
        .run(dir, &["diff", "--name-only", "--diff-filter=U"])
        .await?;
    Ok(listed.lines().map(str::to_string).collect())
}

/// The failure of a rebase that conflicted in `files`: at most [`MAX_NAMED`] named.
fn conflict(branch: &str, files: &[String]) -> StepError {
    let mut named = files
        .iter()
        .take(MAX_NAMED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > MAX_NAMED {
        named.push_str(&format!(" and {} more", files.len() - MAX_NAMED));
    }
    StepError::terminal(
        Reason::GitConflict,
        format!(
            "{branch} moved meanwhile, and this crossing's commit conflicts with what landed \
             there, in {named}; nothing was pushed: cross again to make the change on top of it"
        ),
    )
}

/// Undoes a rebase the checkout is in the middle of — one that stopped, or one a
/// crash interrupted (HEAD is then detached, and the step would not know its
/// branch) —, and does nothing otherwise.
pub(super) async fn abort(git: &Git, dir: &Path) -> Result<(), StepError> {
    let states = git
        .run(
            dir,
            &[
                "rev-parse",
                "--git-path",
                "rebase-merge",
                "--git-path",
                "rebase-apply",
            ],
        )
        .await
        .map_err(GitFailure::local)?;
    let mut rebasing = false;
    for state in states.lines() {
        rebasing |= tokio::fs::symlink_metadata(dir.join(state)).await.is_ok();
    }
    if rebasing {
        git.run(dir, &["rebase", "--abort"])
            .await
            .map_err(GitFailure::local)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
