//! Several targets, one branch: checkouts of one bare repository, served by the real
//! `git http-backend`, each committing through `git-commit` and pushing through
//! `git-push` — the requests each push made counted on the wire.

use std::path::{Path, PathBuf};

use hecate_sources::git::testing::{git, path, write};
use hecate_testenv::git_http::GitHttp;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::git::testing::{Fixture, STARTED_AT, no_cluster, output};
use crate::git::{GitClone, GitCommit, GitPush};
use crate::runner::{Runner as _, StepResult};

/// A bare repository (`main` holds `README.md` and `app/values.yaml`) served over HTTP.
struct Served {
    fx: Fixture,
    bare: PathBuf,
    server: GitHttp,
}

impl Served {
    async fn new() -> Self {
        let fx = Fixture::new();
        let bare = fx.remote("fleet").await;
        let server = GitHttp::start(fx.root.path())
            .await
            .expect("the git server");
        Self { fx, bare, server }
    }

    /// A target's checkout: `git-clone` into work directory `name`, with `with`.
    async fn checkout(&self, name: &str, with: Value) -> PathBuf {
        let work = self.fx.work_dir(name);
        let mut with = with;
        with["repo"] = json!(self.server.url("fleet.git"));
        output(
            &GitClone::new(no_cluster())
                .run(&self.fx.ctx(&work, with))
                .await,
        );
        work
    }

    /// `file` written with `text` and committed by `git-commit`; the commit.
    async fn commit(&self, work: &Path, file: &str, text: &str) -> String {
        write(&work.join("repo").join(file), text).await;
        let committed = GitCommit::new()
            .run(&self.fx.ctx(work, json!({"message": "promote"})))
            .await;
        assert_eq!(output(&committed)["committed"], json!(true));
        output(&committed)["sha"]
            .as_str()
            .expect("a sha")
            .to_string()
    }

    async fn push(&self, work: &Path, with: Value) -> Result<StepResult, StepError> {
        GitPush::new(no_cluster())
            .run(&self.fx.ctx(work, with))
            .await
    }

    /// The commit `branch` of the bare repository is at.
    async fn tip(&self, branch: &str) -> String {
        git(&self.bare, &["rev-parse", branch])
            .await
            .trim()
            .to_string()
    }

    /// How many requests since the `since`-th were `method`s naming `service`.
    fn requests(&self, since: usize, method: &str, service: &str) -> usize {
        self.server.served()[since..]
            .iter()
            .filter(|e| e.method == method && e.target.contains(service))
            .count()
    }
}

/// The commit HEAD of `work`'s checkout names.
async fn head_of(work: &Path) -> String {
    git(&work.join("repo"), &["rev-parse", "HEAD"])
        .await
        .trim()
        .to_string()
}

/// That `work`'s checkout is clean: on `main`, no rebase in progress, nothing changed.
async fn clean(work: &Path) {
    let repo = work.join("repo");
    assert_eq!(
        git(&repo, &["symbolic-ref", "--short", "HEAD"])
            .await
            .trim(),
        "main"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]).await, "");
    for state in ["rebase-merge", "rebase-apply"] {
        assert!(!repo.join(".git").join(state).exists(), "{state} is left");
    }
}

/// The step's failure, or a panic naming its success.
fn failed(result: Result<StepResult, StepError>) -> StepError {
    match result {
        Ok(done) => panic!("the step succeeded: {}", done.message),
        Err(error) => error,
    }
}

#[tokio::test]
async fn the_second_target_rebases_onto_the_first_and_lands() {
    let remote = Served::new().await;
    let first = remote.checkout("first", json!({})).await;
    // Shallow, as a large configuration repository is cloned.
    let second = remote.checkout("second", json!({"depth": 1})).await;
    let ours = remote
        .commit(&first, "app/eu-1.yaml", "image: app:2.0.0\n")
        .await;
    let theirs = remote
        .commit(&second, "app/eu-2.yaml", "image: app:2.0.0\n")
        .await;

    let pushed = remote.push(&first, json!({})).await;
    assert_eq!(
        output(&pushed),
        &json!({"branch": "main", "sha": ours, "pushed": true, "rebased": 0})
    );
    let before = remote.server.requests();
    let pushed = remote.push(&second, json!({})).await;
    let tip = remote.tip("main").await;
    assert_eq!(
        output(&pushed),
        &json!({"branch": "main", "sha": tip, "pushed": true, "rebased": 1})
    );
    assert!(
        pushed
            .as_ref()
            .is_ok_and(|done| done.message.contains("rebased once")),
        "{:?}",
        pushed.map(|done| done.message)
    );
    // Both changes are on the branch, the second on top of the first.
    for file in ["app/eu-1.yaml", "app/eu-2.yaml"] {
        let shown = git(&remote.bare, &["show", &format!("main:{file}")]).await;
        assert_eq!(shown, "image: app:2.0.0\n", "{file}");
    }
    assert_eq!(remote.tip("main~1").await, ours);
    assert_ne!(tip, theirs, "rebased, so another commit");
    // The checkout is at what landed, for the steps after (commit-status reads HEAD).
    assert_eq!(head_of(&second).await, tip);
    clean(&second).await;
    // Still the Passage's commit: its author, committer and dates, and its message.
    let made = git(
        &remote.bare,
        &[
            "show",
            "-s",
            "--format=%an <%ae> %at|%cn <%ce> %ct|%s",
            "main",
        ],
    )
    .await;
    let at = STARTED_AT
        .parse::<jiff::Timestamp>()
        .expect("a time")
        .as_second();
    let by = "Hecate <hecate@users.noreply.github.com>";
    assert_eq!(made.trim(), format!("{by} {at}|{by} {at}|promote"));
    // On the wire: two pushes (each begins with the remote's advertisement of its refs),
    // the refused one and the one that landed, and one fetch between them.
    assert_eq!(
        remote.requests(before, "GET", "service=git-receive-pack"),
        2
    );
    assert_eq!(remote.requests(before, "GET", "service=git-upload-pack"), 1);
}

#[tokio::test]
async fn a_conflict_fails_this_target_alone_and_leaves_its_checkout_clean() {
    let remote = Served::new().await;
    let first = remote.checkout("first", json!({})).await;
    let second = remote.checkout("second", json!({})).await;
    let ours = remote
        .commit(&first, "app/values.yaml", "image: app:2.0.0\n")
        .await;
    let theirs = remote
        .commit(&second, "app/values.yaml", "image: app:3.0.0\n")
        .await;
    output(&remote.push(&first, json!({})).await);

    let error = failed(remote.push(&second, json!({})).await);
    assert_eq!(
        (error.reason, error.terminal),
        (Reason::GitConflict, true),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("in app/values.yaml;"),
        "{}",
        error.message
    );
    assert_eq!(
        error.output,
        Some(json!({"branch": "main", "sha": theirs, "pushed": false, "rebased": 0}))
    );
    assert_eq!(head_of(&second).await, theirs, "the rebase was undone");
    clean(&second).await;
    assert_eq!(remote.tip("main").await, ours);
}

#[tokio::test]
async fn a_change_the_branch_already_holds_is_not_pushed_again() {
    let remote = Served::new().await;
    let first = remote.checkout("first", json!({})).await;
    let second = remote.checkout("second", json!({})).await;
    // The first target's commit makes the second's change too, and more.
    write(&first.join("repo/app/eu-1.yaml"), "x: 1\n").await;
    let ours = remote
        .commit(&first, "app/values.yaml", "image: app:2.0.0\n")
        .await;
    remote
        .commit(&second, "app/values.yaml", "image: app:2.0.0\n")
        .await;
    output(&remote.push(&first, json!({})).await);

    let again = remote.push(&second, json!({})).await;
    assert_eq!(
        output(&again),
        &json!({"branch": "main", "sha": ours, "pushed": false, "rebased": 1})
    );
    assert_eq!(remote.tip("main").await, ours);
    assert_eq!(
        head_of(&second).await,
        ours,
        "the emptied commit was dropped"
    );
    clean(&second).await;
}

#[test]
fn a_conflict_names_ten_files_at_most() {
    let files: Vec<String> = (1..=12).map(|i| format!("app/{i}.yaml")).collect();
    let error = conflict("main", &files);
    assert!(
        error
            .message
            .contains("in app/1.yaml, app/2.yaml, app/3.yaml, app/4.yaml, app/5.yaml, app/6.yaml, app/7.yaml, app/8.yaml, app/9.yaml, app/10.yaml and 2 more;"),
        "{}",
        error.message
    );
}

/// A pre-receive hook that plays a crossing winning every race: before each push is
/// applied, it moves `main` on by a commit of its own (outside the quarantine the
/// pushed objects wait in, as a concurrent push would have), so the push finds the
/// branch no longer where it was.
const ALWAYS_FIRST: &str = r#"#!/bin/sh
unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
moves=$(( $(cat moves 2>/dev/null || echo 0) + 1 ))
echo "$moves" > moves
tip=$(git rev-parse refs/heads/main)
export GIT_AUTHOR_NAME=other GIT_AUTHOR_EMAIL=other@example.com
export GIT_COMMITTER_NAME=other GIT_COMMITTER_EMAIL=other@example.com
next=$(echo "move $moves" | git commit-tree "$tip^{tree}" -p "$tip")
git update-ref refs/heads/main "$next" "$tip"
"#;

#[tokio::test]
async fn a_branch_that_keeps_moving_is_given_up_on_after_five_pushes() {
    use std::os::unix::fs::PermissionsExt as _;

    let remote = Served::new().await;
    let work = remote.checkout("w", json!({})).await;
    remote.commit(&work, "app/eu-1.yaml", "x: 1\n").await;
    let hook = remote.bare.join("hooks/pre-receive");
    std::fs::write(&hook, ALWAYS_FIRST).expect("the hook");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("mode");
    let before = remote.server.requests();

    let error = failed(remote.push(&work, json!({})).await);
    assert_eq!(
        (error.reason, error.terminal),
        (Reason::GitRejected, false),
        "{}",
        error.message
    );
    assert!(
        error
            .message
            .contains("before each of 5 pushes (rebased 4 times"),
        "{}",
        error.message
    );
    let output = error.output.expect("an output");
    assert_eq!(
        (&output["pushed"], &output["rebased"]),
        (&json!(false), &json!(4))
    );
    assert_eq!(output["sha"], json!(head_of(&work).await));
    assert_eq!(remote.requests(before, "POST", "git-receive-pack"), 5);
    let moves = std::fs::read_to_string(remote.bare.join("moves")).expect("the hook ran");
    assert_eq!(moves.trim(), "5");
    let log = git(&remote.bare, &["log", "--format=%s", "main"]).await;
    assert_eq!(log, "move 5\nmove 4\nmove 3\nmove 2\nmove 1\nseed\n");
    clean(&work).await;
}

#[tokio::test]
async fn a_push_that_landed_is_done_when_run_again() {
    let remote = Served::new().await;
    let first = remote.checkout("first", json!({})).await;
    let second = remote.checkout("second", json!({})).await;
    remote.commit(&first, "app/eu-1.yaml", "x: 1\n").await;
    remote.commit(&second, "app/eu-2.yaml", "x: 2\n").await;
    output(&remote.push(&first, json!({})).await);
    let landed = output(&remote.push(&second, json!({})).await)["sha"].clone();

    // A crash after the push landed, before it was recorded: the same checkout again.
    let again = remote.push(&second, json!({})).await;
    assert_eq!(
        output(&again),
        &json!({"branch": "main", "sha": landed, "pushed": false, "rebased": 0})
    );
    // Later still, once others pushed on top: the branch holds it.
    let others = remote
        .fx
        .commit_elsewhere(&remote.bare, "main", "later.txt")
        .await;
    let before = remote.server.requests();
    let again = remote.push(&second, json!({})).await;
    assert_eq!(
        output(&again),
        &json!({"branch": "main", "sha": landed, "pushed": false, "rebased": 0})
    );
    assert_eq!(remote.tip("main").await, others, "nothing was pushed");
    assert_eq!(remote.requests(before, "POST", "git-receive-pack"), 0);
    clean(&second).await;
}

#[tokio::test]
async fn a_rebase_a_crash_interrupted_is_undone_first() {
    let remote = Served::new().await;
    let first = remote.checkout("first", json!({})).await;
    let second = remote.checkout("second", json!({})).await;
    remote.commit(&first, "app/eu-1.yaml", "x: 1\n").await;
    let theirs = remote.commit(&second, "app/eu-2.yaml", "x: 2\n").await;
    output(&remote.push(&first, json!({})).await);
    // A rebase stopped half-way, as a controller killed mid-rebase leaves it: HEAD
    // detached, the rebase's state on disk.
    let repo = second.join("repo");
    git(&repo, &["fetch", "-q", "origin"]).await;
    let stopped = tokio::process::Command::new("git")
        .args(["rebase", "--exec", "false", "origin/main"])
        .current_dir(&repo)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_COMMITTER_NAME", "Someone")
        .env("GIT_COMMITTER_EMAIL", "someone@example.com")
        .output()
        .await
        .expect("git runs");
    assert!(!stopped.status.success(), "the rebase stopped");
    assert!(repo.join(".git/rebase-merge").exists());

    let pushed = remote.push(&second, json!({})).await;
    let tip = remote.tip("main").await;
    assert_eq!(
        output(&pushed),
        &json!({"branch": "main", "sha": tip, "pushed": true, "rebased": 1})
    );
    assert_eq!(remote.tip("main~1").await, head_of(&first).await);
    assert_ne!(tip, theirs);
    clean(&second).await;
}

#[tokio::test]
async fn only_a_plain_push_to_a_branch_is_rebased() {
    let remote = Served::new().await;
    let first = remote.checkout("first", json!({})).await;
    let second = remote.checkout("second", json!({})).await;
    let ours = remote.commit(&first, "app/eu-1.yaml", "x: 1\n").await;
    let theirs = remote.commit(&second, "app/eu-2.yaml", "x: 2\n").await;

    // The crossing's own branch: whoever moved it, it is not rebased onto.
    let new_branch = json!({"toNewBranch": true});
    output(&remote.push(&first, new_branch.clone()).await);
    let error = failed(remote.push(&second, new_branch).await);
    assert_eq!((error.reason, error.terminal), (Reason::GitRejected, false));
    assert_eq!(error.output.map(|o| o["rebased"].clone()), Some(json!(0)));
    assert_eq!(remote.tip("hecate/dev-7f3a").await, ours);
    assert_eq!(head_of(&second).await, theirs);

    // Forced: what is there goes.
    output(&remote.push(&first, json!({})).await);
    let forced = remote.push(&second, json!({"force": true})).await;
    assert_eq!(
        output(&forced),
        &json!({"branch": "main", "sha": theirs, "pushed": true, "rebased": 0})
    );
    assert_eq!(remote.tip("main").await, theirs);
}

#[tokio::test]
async fn a_rewritten_branch_is_not_rebased_onto() {
    let remote = Served::new().await;
    let work = remote.checkout("w", json!({})).await;
    let ours = remote.commit(&work, "app/eu-1.yaml", "x: 1\n").await;
    // Someone replaces main with a history of its own.
    let other = remote.fx.root.path().join("rewriter");
    git(
        remote.fx.root.path(),
        &["clone", "-q", &path(&remote.bare), &path(&other)],
    )
    .await;
    git(&other, &["checkout", "-q", "--orphan", "fresh"]).await;
    write(&other.join("README.md"), "rewritten\n").await;
    git(&other, &["add", "-A"]).await;
    git(&other, &["commit", "-q", "-m", "rewritten"]).await;
    git(&other, &["push", "-q", "-f", "origin", "fresh:main"]).await;
    let rewritten = remote.tip("main").await;

    let error = failed(remote.push(&work, json!({})).await);
    assert_eq!(
        (error.reason, error.terminal),
        (Reason::GitRejected, false),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("not rebased: main no longer holds"),
        "{}",
        error.message
    );
    assert_eq!(remote.tip("main").await, rewritten);
    assert_eq!(head_of(&work).await, ours);
    clean(&work).await;
}
