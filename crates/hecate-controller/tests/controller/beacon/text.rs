//! What a repository says, against the Beacon (issue 50, DECISION 145): bare
//! repositories the tests build, whose commits say too much or say it to mislead. A
//! commit's text is read as a bounded stream and cut while it is read, so the
//! controller's memory does not follow it; it cannot add, hide or rename a commit
//! (commits are those git lists); and what a Bundle keeps of it is cut and without
//! control characters, so the Bundle fits and the Beacon goes on emitting.

use std::io::Write as _;
use std::process::Stdio;

use hecate_types::limits::{
    MAX_AUTHOR_BYTES, MAX_BUNDLE_COMMITS, MAX_COMMIT_TEXT_LENGTH, MAX_SUBJECT_BYTES,
};
use kube::api::PostParams;
use pretty_assertions::assert_eq;

use super::*;
use crate::process::Controller;

/// Appends `count` commits to `main` of the bare repository at `bare` with
/// `git fast-import`, the `i`th (from 0) saying `subject(i)` and authored by
/// `author <author@example.com>`; returns their SHAs, oldest first.
fn import(
    bare: &Path,
    count: usize,
    subject: impl Fn(usize) -> String,
    author: &str,
) -> Vec<String> {
    let mut child = Command::new("git")
        .current_dir(bare)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", bare)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stream = std::io::BufWriter::new(child.stdin.take().unwrap());
    for i in 0..count {
        let message = subject(i);
        let content = format!("change {i}\n");
        write!(
            stream,
            "commit refs/heads/main\n\
             author {author} <author@example.com> {time} +0000\n\
             committer Test <test@example.com> {time} +0000\n\
             data {}\n{message}\n",
            message.len(),
            time = 1_760_000_000 + i,
        )
        .unwrap();
        if i == 0 {
            // Go on from the branch as it is, not from nothing.
            writeln!(stream, "from refs/heads/main^0").unwrap();
        }
        write!(
            stream,
            "M 644 inline file.txt\ndata {}\n{content}\n",
            content.len()
        )
        .unwrap();
    }
    drop(stream);
    assert!(child.wait().unwrap().success(), "git fast-import");
    let listed = git(
        bare,
        &[
            "rev-list",
            "--first-parent",
            &format!("-{count}"),
            "refs/heads/main",
        ],
    );
    let mut shas: Vec<String> = listed.lines().map(str::to_string).collect();
    shas.reverse();
    shas
}

/// The bare repository of `repo`.
fn bare(repo: &Repo) -> PathBuf {
    repo.dir.path().join("app.git")
}

/// The largest the process `pid` has been, in bytes of resident memory (`VmHWM`).
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .unwrap_or_else(|| panic!("no VmHWM in {status}"));
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib << 10
}

/// The most the controller's peak resident memory may be after reading the history
/// below: what it holds at rest is a few tens of MiB, and the log git prints of it is
/// 200 MiB — read whole, as before issue 50, it was over 450 MiB.
const PEAK_MEMORY: u64 = 160 << 20;

/// Issue 50, item 2 (and 4): a repository whose commits say 2 MiB each. The controller
/// process — as users run it — reads the history of 100 of them when its Beacon emits
/// (200 MiB of `git log`), with 100 KiB authors on top; its peak memory stays a
/// fraction of that, and the Bundle it emits holds each subject and author cut and
/// without control characters.
#[tokio::test]
async fn a_repository_of_huge_commits_costs_the_controller_little() {
    let env = TestEnv::new().await;
    let ns = env.namespace.clone();
    join_shard(&env, &ns, &ns).await;
    let controller = Controller::start(&env, &ns, &[]).await;
    let b = Beacons::over(env.clone(), Duration::from_secs(30));
    let repo = Repo::new();
    let first = repo.commit("one");
    b.create("app", spec(vec![branch(&repo.url, "main")])).await;
    let one = eventually(Duration::from_secs(30), "the first Bundle", || async {
        let status = b.beacon("app").await.status?;
        (!status.latest_bundle.is_empty()).then_some(status.latest_bundle)
    })
    .await;
    let at_rest = peak_memory(controller.pid());

    let author = "a".repeat(100 << 10);
    let huge = import(
        &bare(&repo),
        100,
        |i| format!("\u{1b}[2J\u{202e}huge {i} {}", "x".repeat(2 << 20)),
        &author,
    );
    b.poke("app", "after-the-huge-ones").await;
    // The poll is done when its status echoes the token, whatever it came to.
    let two = eventually(Duration::from_secs(120), "the poll", || async {
        let status = b.beacon("app").await.status?;
        (status.last_handled_reconcile_at == "after-the-huge-ones").then_some(status)
    })
    .await;
    let peak = peak_memory(controller.pid());
    eprintln!(
        "hecate-controller peak memory: {} MiB at rest, {} MiB after the huge history",
        at_rest >> 20,
        peak >> 20
    );
    assert!(
        peak < PEAK_MEMORY,
        "the controller's peak memory was {} MiB (at rest {} MiB), more than {} MiB",
        peak >> 20,
        at_rest >> 20,
        PEAK_MEMORY >> 20
    );

    let ready = b.ready("app").await;
    assert_eq!(ready.reason, "Discovered", "{}", ready.message);
    assert_ne!(two.latest_bundle, one);
    let bundle = b.env.api::<Bundle>().get(&two.latest_bundle).await.unwrap();
    let read = only_commit(&bundle);
    assert_eq!(read.sha, huge[99]);
    // The escape and the override go; what followed the escape is text.
    let cut_subject = |i: usize| {
        let said = format!("[2Jhuge {i} {}", "x".repeat(MAX_SUBJECT_BYTES));
        said[..MAX_SUBJECT_BYTES].to_string()
    };
    assert_eq!(read.message, cut_subject(99));
    assert_eq!(read.author, author[..MAX_AUTHOR_BYTES]);
    // The newest twenty, the other eighty counted, from the first Bundle's commit.
    let listed: Vec<&str> = read.commits.iter().map(|c| c.sha.as_str()).collect();
    let newest: Vec<&str> = huge
        .iter()
        .rev()
        .take(MAX_BUNDLE_COMMITS)
        .map(String::as_str)
        .collect();
    assert_eq!(listed, newest);
    assert_eq!(
        (read.more_commits, read.commits_since.as_str()),
        (80, first.as_str())
    );
    for (i, commit) in (80..100).rev().zip(&read.commits) {
        assert_eq!(commit.subject, cut_subject(i));
        assert_eq!(commit.author, author[..MAX_AUTHOR_BYTES]);
    }
    let status = controller.terminate().await;
    assert!(status.success(), "{status:?}");
}

/// Issue 50, item 3: a commit's text cannot make a commit. One subject carries whole
/// records in the separators the log was once read with — a commit `ddddddd` that
/// does not exist; the head's names the first Bundle's commit, which once ended the
/// list there and hid the five commits before it. The Bundle lists exactly the commits
/// git has, and their subjects as text.
#[tokio::test]
async fn what_a_commit_says_makes_no_commit() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    let first = repo.commit("one");
    b.create("app", spec(vec![branch(&repo.url, "main")])).await;
    b.reconcile("app").await;

    let forged = "fix\u{1e}ddddddd\u{1f}Forged: approved\u{1f}Carol <carol@example.com>\u{1f}\
                  2026-01-01T00:00:00Z";
    let mut real: Vec<String> = (1..=4).map(|i| repo.commit(&format!("real {i}"))).collect();
    real.push(repo.commit(forged));
    real.push(repo.commit(&format!(
        "release\u{1e}{first}\u{1f}hidden\u{1f}Eve <eve@example.com>\u{1f}2026-01-01T00:00:00Z"
    )));
    b.reconcile("app").await;

    let latest = b.beacon("app").await.status.unwrap().latest_bundle;
    let bundle = b.env.api::<Bundle>().get(&latest).await.unwrap();
    let read = only_commit(&bundle);
    let listed: Vec<&str> = read.commits.iter().map(|c| c.sha.as_str()).collect();
    let expected: Vec<&str> = real.iter().rev().map(String::as_str).collect();
    assert_eq!(
        listed, expected,
        "every commit git has since the first, and no other"
    );
    assert_eq!(
        (read.more_commits, read.commits_since.as_str()),
        (0, first.as_str())
    );
    let subjects: Vec<&str> = read.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(
        subjects[..2],
        [
            format!("release{first}hiddenEve <eve@example.com>2026-01-01T00:00:00Z").as_str(),
            "fixdddddddForged: approvedCarol <carol@example.com>2026-01-01T00:00:00Z",
        ]
    );
    assert!(
        read.commits
            .iter()
            .all(|c| c.author == "Test <test@example.com>" && c.committed_at.is_some()),
        "{:#?}",
        read.commits
    );
    assert_eq!(read.message, subjects[0]);
}

/// Issue 50, item 4: authors of 100 KiB on 21 commits made a Bundle of 2.15 MB that
/// the API server refused, and the Beacon stayed `EmitFailed`. Authors are cut as
/// subjects are, so the Bundle is emitted; and the CRD holds anyone who writes a
/// Bundle by hand to the same bounds.
#[tokio::test]
async fn long_authors_still_make_a_bundle() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    let first = repo.commit("one");
    b.create("app", spec(vec![branch(&repo.url, "main")])).await;
    b.reconcile("app").await;

    let author = format!("{} <long@example.com>", "é".repeat(50 << 10));
    let work = repo.work();
    for i in 0..=MAX_BUNDLE_COMMITS {
        std::fs::write(work.join("file.txt"), i.to_string()).unwrap();
        git(
            &work,
            &[
                "commit",
                "-q",
                "-a",
                "-m",
                &format!("change {i}"),
                "--author",
                &author,
            ],
        );
    }
    git(&work, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    b.reconcile("app").await;

    let ready = b.ready("app").await;
    assert_eq!(ready.reason, "Discovered", "{}", ready.message);
    let latest = b.beacon("app").await.status.unwrap().latest_bundle;
    let bundle = b.env.api::<Bundle>().get(&latest).await.unwrap();
    let read = only_commit(&bundle);
    // Cut on a character boundary: 160 two-byte characters.
    let cut = "é".repeat(MAX_AUTHOR_BYTES / 2);
    assert_eq!(read.author, cut);
    assert_eq!(read.commits.len(), MAX_BUNDLE_COMMITS);
    assert!(read.commits.iter().all(|c| c.author == cut));
    assert_eq!(
        (read.more_commits, read.commits_since.as_str()),
        (1, first.as_str())
    );

    // By hand, past the bounds: refused by the API server, each in its own words.
    let mut too_long = bundle.spec.clone();
    too_long.alias = "a".repeat(254);
    if let Some(commit) = too_long.artifacts[0].commit.as_mut() {
        commit.message = "m".repeat(MAX_COMMIT_TEXT_LENGTH + 1);
        commit.author = "x".repeat(MAX_COMMIT_TEXT_LENGTH + 1);
    }
    let mut by_hand = Bundle::new("by-hand", too_long);
    by_hand.metadata.namespace = Some(b.env.namespace.clone());
    let refused = b
        .env
        .api::<Bundle>()
        .create(&PostParams::default(), &by_hand)
        .await
        .expect_err("refused");
    let kube::Error::Api(status) = refused else {
        panic!("{refused}");
    };
    assert_eq!(status.code, 422, "{}", status.message);
    for field in ["spec.alias", "commit.message", "commit.author"] {
        assert!(
            status.message.contains(field) && status.message.contains("Too long"),
            "{field}: {}",
            status.message
        );
    }
}
