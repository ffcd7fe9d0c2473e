//! The `git` source (spec controller.md §1.3): a branch's head, or the newest tag a
//! selection picks, read from the remote's ref list without cloning (`git ls-remote`).
//!
//! Git runs as the git steps run it ([`hecate_sources::git`]): a child process with a clean
//! environment — no system or user configuration, `HOME` in a private directory, no
//! terminal prompts, no ssh-agent — so nothing on the host changes what a Beacon
//! resolves, and a remote that wants a password fails at once instead of waiting for
//! one. Credentials (§1.5: the git steps' §5.2 Secrets — a GitHub App, an SSH key, an
//! HTTPS password) are handed over the same way too, never through git's arguments.
//! A Beacon has no work directory, so each resolution gets a private temporary
//! directory (mode 0700) for git's `HOME` and the key files, removed when it ends. A
//! remote that does not answer is given up after a timeout; the child is killed with
//! it.
//!
//! An annotated tag resolves to its commit (the peeled `^{}` entry), not to the tag
//! object: a checkout never produces a tag object's SHA, so nothing downstream would
//! match it.
//!
//! With `paths`/`ignorePaths`, the answer is the newest commit (along first parents,
//! within [`HISTORY_LIMIT`]) that changed a watched file, read from a shallow bare
//! clone in the same temporary directory.
//!
//! When the Beacon emits a new Bundle, [`Git::history`] reads the same bounded history
//! once more for what the Bundle's commit brings (DECISION 140): its subject, author
//! and committer time, and the commits since the Beacon's previous Bundle's commit
//! (those that touched the watched paths, with filters), newest first — at most
//! [`MAX_BUNDLE_COMMITS`] listed, the rest counted. A previous commit the history does
//! not reach (further back than [`HISTORY_LIMIT`], or not an ancestor: a tag moved
//! back, a branch rewritten) leaves the list empty rather than guessed.
//!
//! What a commit says is text, never structure (issue 50, DECISION 145). The commits
//! are those `git rev-list` lists; what each says comes from `git log -z`, whose
//! NUL-ended fields are read as a stream and cut while they are read ([`LogReader`],
//! [`FIELD_KEEP`]), so neither a subject's separators nor its size decide which commits
//! a Bundle lists or how much memory the controller takes. Subjects and authors lose
//! their control characters and are cut to what a Bundle holds
//! ([`hecate_types::limits::clean`]).
//!
//! As for the git steps, the operator decides what a watch may reach (issue 30): a path
//! or `file://` on the controller's own disk only with `--allow-local-git`, a remote
//! helper never ([`hecate_sources::git::remote`]); the path filters' clone holds at most
//! `--max-checkout-size` bytes.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use hecate_sources::git::{AppTokens, GitCredentials, GitFailure, Limits, Scratch, apply};
use hecate_sources::output::Field;
use hecate_types::limits::{self, MAX_AUTHOR_BYTES, MAX_BUNDLE_COMMITS, MAX_SUBJECT_BYTES};
use hecate_types::{Artifact, CommitArtifact, CommitSummary, GitWatch, Time};

use super::select::Selection;
use super::source::ResolveError;

/// How long `git ls-remote` (or the history read of a path filter) may take before the
/// remote counts as unreachable.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How many commits a path filter looks back along first parents.
pub const HISTORY_LIMIT: usize = 200;

/// Resolves Beacons' git watches.
#[derive(Clone, Debug)]
pub struct Git {
    timeout: Duration,
    /// What the operator lets git do: the local disk, the path filters' clone size.
    limits: Limits,
}

/// One resolution's git: a private temporary directory (git's `HOME`, the credential
/// files, the path filters' clone), removed when this is dropped.
struct Session {
    dir: tempfile::TempDir,
    git: hecate_sources::git::Git,
    max_size: Option<u64>,
}

impl Git {
    /// Git from `PATH`, giving up on a remote after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            limits: Limits::default(),
        }
    }

    /// Runs git within the operator's `limits`: a watch's `repo` a path or `file://`
    /// only when they allow the local disk, the path filters' clone stopped past
    /// their size.
    #[must_use]
    pub fn within(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Resolves `watch` to the commit it points at now, authenticating with
    /// `credentials` (GitHub App tokens from `apps`).
    pub async fn resolve(
        &self,
        watch: &GitWatch,
        credentials: &GitCredentials,
        apps: &AppTokens,
    ) -> Result<Artifact, ResolveError> {
        let repo = watch.repo.as_str();
        match (watch.branch.is_empty(), &watch.tags) {
            (true, None) => {
                return Err(ResolveError::failed(format!(
                    "git watch on {repo}: set branch or tags"
                )));
            }
            (false, Some(_)) => {
                return Err(ResolveError::failed(format!(
                    "git watch on {repo}: set branch or tags, not both"
                )));
            }
            _ => {}
        }
        if repo.is_empty() || repo.starts_with('-') {
            return Err(ResolveError::failed(format!(
                "{repo:?} is not a repository URL"
            )));
        }
        hecate_sources::git::remote::check(repo, self.limits.local)
            .map_err(ResolveError::failed)?;
        let session = self.session(repo, credentials, apps).await?;
        let mut commit = CommitArtifact {
            repo: repo.to_string(),
            ..CommitArtifact::default()
        };
        match &watch.tags {
            None => {
                let wanted = format!("refs/heads/{}", watch.branch);
                let refs = session.ls_remote(repo, &["--heads"], &[&wanted]).await?;
                commit.sha = branch_head(&refs, &watch.branch).ok_or_else(|| {
                    ResolveError::failed(format!("{repo} has no branch {:?}", watch.branch))
                })?;
                commit.branch = watch.branch.clone();
            }
            Some(tags) => {
                let refs = session.ls_remote(repo, &["--tags"], &[]).await?;
                let commits = tag_commits(&refs);
                if commits.is_empty() {
                    return Err(ResolveError::failed(format!("{repo} has no tags")));
                }
                let names: Vec<&str> = commits.keys().map(String::as_str).collect();
                let tag = Selection::from(tags).pick(&names)?;
                commit.sha = commits.get(&tag).cloned().unwrap_or_default();
                commit.tag = tag;
            }
        }
        if !watch.paths.is_empty() || !watch.ignore_paths.is_empty() {
            let reference = if commit.tag.is_empty() {
                &commit.branch
            } else {
                &commit.tag
            };
            let found = session
                .newest_touching(watch, reference, &commit.sha)
                .await?;
            commit.sha = found.sha;
            commit.message = found.subject;
            commit.author = found.author;
            commit.committed_at = found.committed_at;
        }
        Ok(Artifact {
            commit: Some(commit),
            ..Artifact::default()
        })
    }

    /// What `commit`, which `watch` resolved to, brings since the commit `since` (the
    /// Beacon's previous Bundle's, if it had one): read from the same bounded history
    /// as the path filters, along first parents, those filters applied.
    pub async fn history(
        &self,
        watch: &GitWatch,
        credentials: &GitCredentials,
        apps: &AppTokens,
        commit: &CommitArtifact,
        since: Option<&str>,
    ) -> Result<Chronicle, ResolveError> {
        let repo = watch.repo.as_str();
        if repo.is_empty() || repo.starts_with('-') {
            return Err(ResolveError::failed(format!(
                "{repo:?} is not a repository URL"
            )));
        }
        if commit.sha.is_empty() || commit.sha.starts_with('-') {
            return Err(ResolveError::failed(format!(
                "{:?} is not a commit",
                commit.sha
            )));
        }
        hecate_sources::git::remote::check(repo, self.limits.local)
            .map_err(ResolveError::failed)?;
        let reference = if commit.tag.is_empty() {
            &commit.branch
        } else {
            &commit.tag
        };
        let session = self.session(repo, credentials, apps).await?;
        let history = session
            .log(
                repo,
                reference,
                &commit.sha,
                &watch.paths,
                &watch.ignore_paths,
            )
            .await?;
        Ok(chronicle(&history, since))
    }

    /// A private directory and git in it, given `credentials` for `repo`.
    async fn session(
        &self,
        repo: &str,
        credentials: &GitCredentials,
        apps: &AppTokens,
    ) -> Result<Session, ResolveError> {
        let dir = tempfile::Builder::new()
            .prefix("hecate-beacon-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .map_err(|e| ResolveError::failed(format!("no private directory for git: {e}")))?;
        let failed = |e: hecate_sources::git::Error| {
            ResolveError::failed(format!("credentials for {repo}: {}", e.message))
        };
        let mut git = hecate_sources::git::Git::new(dir.path())
            .await
            .map_err(failed)?
            .with_timeout(self.timeout)
            .allowing_local(self.limits.local);
        // Inside the temporary directory: removed with it.
        let scratch = Scratch::new(&git, "beacon").await.map_err(failed)?;
        apply(credentials, repo, &mut git, &scratch, apps)
            .await
            .map_err(failed)?;
        Ok(Session {
            dir,
            git,
            max_size: self.limits.max_checkout_size,
        })
    }
}

impl Session {
    /// The newest commit, walking first parents back from `head` (at most
    /// [`HISTORY_LIMIT`]), that changed a file under `paths` and not under
    /// `ignorePaths`; with its subject and author. Walking back keeps the answer still while
    /// unrelated commits land, and lets a new Beacon resolve in a repository whose head
    /// is unrelated.
    async fn newest_touching(
        &self,
        watch: &GitWatch,
        reference: &str,
        head: &str,
    ) -> Result<Touching, ResolveError> {
        let repo = watch.repo.as_str();
        let history = self
            .log(repo, reference, head, &watch.paths, &watch.ignore_paths)
            .await?;
        first_touching(&history).ok_or_else(|| {
            ResolveError::no_match(format!(
                "no commit among the last {HISTORY_LIMIT} on {reference} of {repo} changed {}{}",
                if watch.paths.is_empty() {
                    "anything".to_string()
                } else {
                    watch.paths.join(", ")
                },
                if watch.ignore_paths.is_empty() {
                    String::new()
                } else {
                    format!(" outside {}", watch.ignore_paths.join(", "))
                }
            ))
        })
    }

    /// The history of `reference` (a branch or tag of `repo`) back from `head`: at
    /// most [`HISTORY_LIMIT`] commits along first parents, each with whether it
    /// changed a file under `paths` and not under `ignore` (read from a shallow bare
    /// clone in the session's directory), and the shallow boundary — the clone's
    /// oldest commits, which look parentless.
    ///
    /// The commits are those `git rev-list` names, in its order; what each says comes
    /// from `git log` ([`LOG_FORMAT`]), read as a stream and cut while it is read
    /// ([`LogReader`]), so a repository's text decides neither which commits there are
    /// nor how much memory they take (DECISION 145).
    async fn log(
        &self,
        repo: &str,
        reference: &str,
        head: &str,
        paths: &[String],
        ignore: &[String],
    ) -> Result<History, ResolveError> {
        let clone = self.dir.path().join("history.git");
        let depth = HISTORY_LIMIT.to_string();
        let mut args: Vec<&OsStr> = [
            "clone",
            "--quiet",
            "--bare",
            "--single-branch",
            "--depth",
            depth.as_str(),
            "--branch",
            reference,
        ]
        .iter()
        .map(|arg| OsStr::new(*arg))
        .collect();
        args.extend([OsStr::new("--"), OsStr::new(repo), clone.as_os_str()]);
        let history = |failure: GitFailure| {
            ResolveError::failed(format!("reading the history of {repo}: {}", said(&failure)))
        };
        match self.max_size {
            None => {
                self.git
                    .run(self.dir.path(), &args)
                    .await
                    .map_err(history)?;
            }
            Some(limit) => match self
                .git
                .run_bounded(self.dir.path(), &args, &clone, limit)
                .await
            {
                Ok(_) => {}
                Err(hecate_sources::git::Bounded::Failed(failure)) => return Err(history(failure)),
                Err(hecate_sources::git::Bounded::TooLarge { .. }) => {
                    return Err(ResolveError::failed(format!(
                        "reading the history of {repo}: its last {HISTORY_LIMIT} commits \
                         hold more than {}, the most a clone may (--max-checkout-size)",
                        hecate_sources::git::size_text(limit)
                    )));
                }
            },
        }
        let limit = format!("-{HISTORY_LIMIT}");
        let listed = [
            OsStr::new("--git-dir"),
            clone.as_os_str(),
            OsStr::new("rev-list"),
            OsStr::new("--first-parent"),
            OsStr::new(&limit),
            OsStr::new(head),
            OsStr::new("--"),
        ];
        let listed = self
            .git
            .run(self.dir.path(), &listed)
            .await
            .map_err(history)?;
        let commits = shas(&listed).ok_or_else(|| {
            ResolveError::failed(format!(
                "reading the history of {repo}: git rev-list printed something other than \
                 commits"
            ))
        })?;
        let log = [
            OsStr::new("--git-dir"),
            clone.as_os_str(),
            OsStr::new("-c"),
            OsStr::new("core.quotePath=false"),
            OsStr::new("log"),
            OsStr::new("-z"),
            OsStr::new("--first-parent"),
            OsStr::new("--no-renames"),
            OsStr::new("--name-only"),
            OsStr::new(LOG_FORMAT),
            OsStr::new(&limit),
            OsStr::new(head),
            OsStr::new("--"),
        ];
        let mut reader = LogReader::new(&commits, paths, ignore);
        self.git
            .run_fields(self.dir.path(), &log, 0, FIELD_KEEP, &mut |field| {
                reader.field(field);
            })
            .await
            .map_err(history)?;
        let records = reader.finish().map_err(|wrong| {
            ResolveError::failed(format!("reading the history of {repo}: {wrong}"))
        })?;
        // A shallow clone's oldest commits look parentless; what they changed is
        // unknowable, so a walk stops there rather than count their whole tree.
        let boundary: HashSet<String> = std::fs::read_to_string(clone.join("shallow"))
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().to_string())
            .collect();
        Ok(History {
            records,
            boundary,
            filtered: !paths.is_empty() || !ignore.is_empty(),
        })
    }

    /// `git ls-remote <flags> <repo> <patterns>`: `(sha, ref)` pairs.
    async fn ls_remote(
        &self,
        repo: &str,
        flags: &[&str],
        patterns: &[&str],
    ) -> Result<Vec<(String, String)>, ResolveError> {
        let mut args: Vec<&OsStr> = vec![OsStr::new("ls-remote")];
        args.extend(flags.iter().map(OsStr::new));
        args.push(OsStr::new(repo));
        args.extend(patterns.iter().map(OsStr::new));
        let output = self
            .git
            .run(self.dir.path(), &args)
            .await
            .map_err(|failure| {
                ResolveError::failed(format!("listing the refs of {repo}: {}", said(&failure)))
            })?;
        Ok(parse_ls_remote(&output))
    }
}

/// How the history is read (`git log -z`): each commit an empty field, then its SHA,
/// subject, author (`Name <email>`) and committer time (strict ISO 8601), then the
/// files it changed (the first after a line break), every field ended by a NUL. Git's
/// placeholders never print a NUL and no file name holds one, so each field is where
/// git put it, whatever a commit's text says (DECISION 145).
pub const LOG_FORMAT: &str = "--format=%x00%H%x00%s%x00%an <%ae>%x00%cI";

/// How much of one field of the log is kept: far more of a subject or author than a
/// Bundle records, and more of a path than a file system allows.
const FIELD_KEEP: usize = 4096;

/// The commits `git rev-list` printed, one full SHA a line, in its order; `None` when
/// a line is anything else.
fn shas(listed: &str) -> Option<Vec<String>> {
    listed
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| {
            let hex = matches!(line.len(), 40 | 64)
                && line.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            hex.then(|| line.to_string())
        })
        .collect()
}

/// One commit of the history, as the Beacon keeps it: what it says (cut and without
/// control characters), and whether it changed a watched file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Its SHA, subject, author and committer time.
    pub commit: CommitSummary,
    /// Whether it changed a file under the watch's `paths` (anything, without) and not
    /// under its `ignorePaths`.
    pub touches: bool,
}

/// A watch's history, newest first along first parents, as [`Session::log`] read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// The commits, in `git rev-list`'s order.
    pub records: Vec<Record>,
    /// The shallow clone's boundary: commits whose changes are unknowable.
    pub boundary: HashSet<String>,
    /// Whether the watch has path filters (`touches` then decides what a Bundle lists).
    pub filtered: bool,
}

/// Makes [`Record`]s of a [`LOG_FORMAT`] log, one field at a time as git prints it
/// (each at most [`FIELD_KEEP`] bytes): only commits `git rev-list` named, in its
/// order, and nothing of a commit's files kept but whether one is watched — whatever
/// the repository holds, the reader holds [`HISTORY_LIMIT`] short records.
pub struct LogReader<'a> {
    /// The commits git listed, in order: each record must be the next of them.
    expected: &'a [String],
    paths: &'a [String],
    ignore: &'a [String],
    records: Vec<Record>,
    /// Which field of a record comes next: 0 the empty one a record starts with, 1 its
    /// SHA, 2 subject, 3 author, 4 time, 5 its first file, 6 the others (or the next
    /// record's start).
    next: u8,
    /// What was wrong with the log, once something was: the rest is not read.
    wrong: Option<String>,
}

impl<'a> LogReader<'a> {
    /// A reader of the log of `expected` (`git rev-list`'s commits), judging files by
    /// `paths` and `ignore`.
    pub fn new(expected: &'a [String], paths: &'a [String], ignore: &'a [String]) -> Self {
        Self {
            expected,
            paths,
            ignore,
            records: Vec::new(),
            next: 0,
            wrong: None,
        }
    }

    /// Takes the next field git printed.
    pub fn field(&mut self, field: Field<'_>) {
        if self.wrong.is_some() {
            return;
        }
        let text = String::from_utf8_lossy(field.bytes);
        let empty = field.bytes.is_empty() && !field.cut;
        match (self.next, self.records.last_mut()) {
            (0, _) if empty => self.next = 1,
            (0, _) => self.wrong = Some("git log printed no commit where one starts".into()),
            (1, _) => match self.expected.get(self.records.len()) {
                Some(sha) if *sha == text => {
                    self.records.push(Record {
                        commit: CommitSummary {
                            sha: sha.clone(),
                            ..CommitSummary::default()
                        },
                        touches: false,
                    });
                    self.next = 2;
                }
                _ => {
                    self.wrong = Some(format!(
                        "git log named a commit git rev-list did not list at place {}",
                        self.records.len() + 1
                    ));
                }
            },
            (2, Some(record)) => {
                record.commit.subject = limits::clean(&text, MAX_SUBJECT_BYTES);
                self.next = 3;
            }
            (3, Some(record)) => {
                // `%an <%ae>` of a commit without either is "<>": nobody.
                let author = limits::clean(&text, MAX_AUTHOR_BYTES);
                record.commit.author = if author == "<>" {
                    String::new()
                } else {
                    author
                };
                self.next = 4;
            }
            (4, Some(record)) => {
                // An offset git wrote is read as the instant it names; anything else
                // is no time.
                record.commit.committed_at = text.parse::<jiff::Timestamp>().ok().map(Time);
                self.next = 5;
            }
            (5.., _) if empty => self.next = 1,
            (first @ 5.., Some(record)) => {
                // The first file comes after the line break that ends the commit's
                // part; a later name may begin with one of its own.
                let file = if first == 5 {
                    text.strip_prefix('\n').unwrap_or(&text)
                } else {
                    &text
                };
                if !record.touches {
                    record.touches = (self.paths.is_empty() || under(file, self.paths))
                        && !under(file, self.ignore);
                }
                self.next = 6;
            }
            (_, None) => self.wrong = Some("git log printed a field outside a commit".into()),
        }
    }

    /// The records read, when the log was whole: every commit `git rev-list` listed,
    /// each with all its fields.
    pub fn finish(self) -> Result<Vec<Record>, String> {
        if let Some(wrong) = self.wrong {
            return Err(wrong);
        }
        if (1..5).contains(&self.next) {
            return Err("git log ended inside a commit".into());
        }
        if self.records.len() != self.expected.len() {
            return Err(format!(
                "git log printed {} commits where git rev-list listed {}",
                self.records.len(),
                self.expected.len()
            ));
        }
        Ok(self.records)
    }
}

/// The first commit of `history` (newest first) that changed a watched file; stops at
/// the shallow boundary.
pub fn first_touching(history: &History) -> Option<Touching> {
    for record in &history.records {
        if history.boundary.contains(&record.commit.sha) {
            return None;
        }
        if record.touches {
            let CommitSummary {
                sha,
                subject,
                author,
                committed_at,
            } = record.commit.clone();
            return Some(Touching {
                sha,
                subject,
                author,
                committed_at,
            });
        }
    }
    None
}

/// The newest commit a path-filtered git watch takes: its SHA, subject and author
/// (`Name <email>`, empty when git had none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Touching {
    /// The full SHA.
    pub sha: String,
    /// The subject line.
    pub subject: String,
    /// The author.
    pub author: String,
    /// The committer time.
    pub committed_at: Option<Time>,
}

/// What a Bundle's commit brings, read from its history ([`chronicle`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chronicle {
    /// The commit itself, as the history says it: subject, author, time.
    pub head: Option<CommitSummary>,
    /// The commits since the previous one, newest first, at most
    /// [`MAX_BUNDLE_COMMITS`]; empty when that one was not reached.
    pub commits: Vec<CommitSummary>,
    /// How many more there are than `commits` lists.
    pub more: u32,
    /// The previous commit, when the history reached it: `commits` count from it.
    pub since: Option<String>,
}

impl Chronicle {
    /// Writes what it read onto `commit` (the one it was read for): what the watch
    /// left empty of its subject and author, its time, and the commits it brings.
    pub fn apply(self, commit: &mut CommitArtifact) {
        if let Some(head) = self.head.filter(|h| h.sha == commit.sha) {
            if commit.message.is_empty() {
                commit.message = head.subject;
            }
            if commit.author.is_empty() {
                commit.author = head.author;
            }
            commit.committed_at = head.committed_at;
        }
        commit.commits = self.commits;
        commit.more_commits = self.more;
        commit.commits_since = self.since.unwrap_or_default();
    }
}

/// What the commit at the head of `history` brings since the commit `since`: the
/// commits after it (with path filters, those that changed a watched file), newest
/// first, at most [`MAX_BUNDLE_COMMITS`] and the rest counted. `since` is matched
/// against the commits git listed, never against what a commit says. A `since` the
/// history does not reach before the shallow boundary — beyond the history read, or
/// not an ancestor — and no `since` at all leave the list empty: nothing is guessed.
pub fn chronicle(history: &History, since: Option<&str>) -> Chronicle {
    let head = history.records.first().map(|r| r.commit.clone());
    let mut found = Vec::new();
    let mut reached = false;
    if let Some(since) = since.filter(|s| !s.is_empty()) {
        for record in &history.records {
            if record.commit.sha == since {
                reached = true;
                break;
            }
            if history.boundary.contains(&record.commit.sha) {
                break;
            }
            if !history.filtered || record.touches {
                found.push(record.commit.clone());
            }
        }
    }
    if !reached {
        return Chronicle {
            head,
            ..Chronicle::default()
        };
    }
    let more = u32::try_from(found.len().saturating_sub(MAX_BUNDLE_COMMITS)).unwrap_or(u32::MAX);
    found.truncate(MAX_BUNDLE_COMMITS);
    Chronicle {
        head,
        commits: found,
        more,
        since: since.map(str::to_string),
    }
}

/// Whether `file` is one of `paths` or inside one (a directory prefix: `app` covers
/// `app` and `app/x`, never `app-other`); trailing `/` and empty entries ignored.
pub fn under(file: &str, paths: &[String]) -> bool {
    paths
        .iter()
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !p.is_empty())
        .any(|p| {
            file == p
                || file
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
}

/// The meaningful end of what git said when it failed (its last two lines, at most 500
/// bytes, without the advice git appends to every failed connection), already without
/// secrets: a condition message stays short and keeps the cause (`Permission denied`,
/// `Host key verification failed`).
fn said(failure: &GitFailure) -> String {
    const ADVICE: [&str; 2] = [
        "Please make sure you have the correct access rights",
        "and the repository exists.",
    ];
    let lines: Vec<&str> = failure
        .detail
        .split("; ")
        .map(str::trim)
        .filter(|l| !l.is_empty() && !ADVICE.contains(l))
        .collect();
    let text = lines[lines.len().saturating_sub(2)..].join("; ");
    if text.is_empty() {
        return failure.to_string();
    }
    hecate_types::limits::truncate(&text, 500).to_string()
}

/// `<sha>\t<ref>` lines into pairs.
pub fn parse_ls_remote(output: &str) -> Vec<(String, String)> {
    output
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(sha, name)| (sha.trim().to_string(), name.trim().to_string()))
        .collect()
}

/// The commit `refs/heads/<branch>` points at.
pub fn branch_head(refs: &[(String, String)], branch: &str) -> Option<String> {
    let wanted = format!("refs/heads/{branch}");
    refs.iter()
        .find(|(_, name)| *name == wanted)
        .map(|(sha, _)| sha.clone())
}

/// Every tag and the commit it names: an annotated tag's peeled entry (`<tag>^{}`)
/// wins over the tag object.
pub fn tag_commits(refs: &[(String, String)]) -> BTreeMap<String, String> {
    let mut commits = BTreeMap::new();
    for (sha, name) in refs {
        let Some(tag) = name.strip_prefix("refs/tags/") else {
            continue;
        };
        match tag.strip_suffix("^{}") {
            Some(peeled) => {
                commits.insert(peeled.to_string(), sha.clone());
            }
            None => {
                commits
                    .entry(tag.to_string())
                    .or_insert_with(|| sha.clone());
            }
        }
    }
    commits
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "\
1111111111111111111111111111111111111111\tHEAD
2222222222222222222222222222222222222222\trefs/heads/main
3333333333333333333333333333333333333333\trefs/heads/main-old
4444444444444444444444444444444444444444\trefs/tags/v1.0.0
5555555555555555555555555555555555555555\trefs/tags/v1.1.0
6666666666666666666666666666666666666666\trefs/tags/v1.1.0^{}
7777777777777777777777777777777777777777\trefs/pull/1/head
";

    #[test]
    fn branches_by_exact_name() {
        let refs = parse_ls_remote(LISTING);
        assert_eq!(
            branch_head(&refs, "main").as_deref(),
            Some("2222222222222222222222222222222222222222")
        );
        assert_eq!(branch_head(&refs, "mai"), None);
        assert_eq!(branch_head(&refs, "develop"), None);
    }

    #[test]
    fn annotated_tags_resolve_to_their_commit() {
        let commits = tag_commits(&parse_ls_remote(LISTING));
        assert_eq!(
            commits.into_iter().collect::<Vec<_>>(),
            [
                (
                    "v1.0.0".to_string(),
                    "4444444444444444444444444444444444444444".to_string()
                ),
                (
                    "v1.1.0".to_string(),
                    "6666666666666666666666666666666666666666".to_string()
                ),
            ]
        );
        // The peeled entry wins whichever order the remote lists them in.
        let reversed = "6\trefs/tags/t^{}\n5\trefs/tags/t\n";
        assert_eq!(tag_commits(&parse_ls_remote(reversed))["t"], "6");
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn paths_are_directory_prefixes() {
        let paths = strings(&["apps/checkout", "charts/", ""]);
        assert!(under("apps/checkout", &paths));
        assert!(under("apps/checkout/main.go", &paths));
        assert!(under("charts/api/values.yaml", &paths));
        assert!(!under("apps/checkout-v2/main.go", &paths));
        assert!(!under("apps", &paths));
        assert!(!under("README.md", &strings(&["", "/"])));
    }

    /// One commit of a test log: SHA, subject, author, time, files.
    type Entry<'a> = (&'a str, &'a str, &'a str, &'a str, &'a [&'a str]);

    /// `entries` as `git log -z` prints them in [`LOG_FORMAT`].
    fn log_of(entries: &[Entry<'_>]) -> Vec<u8> {
        let mut log = Vec::new();
        for (sha, subject, author, time, files) in entries {
            log.extend(format!("\0{sha}\0{subject}\0{author}\0{time}\0").bytes());
            for (i, file) in files.iter().enumerate() {
                if i == 0 {
                    log.push(b'\n');
                }
                log.extend(file.bytes());
                log.push(0);
            }
        }
        log
    }

    /// `log` read as [`Session::log`] reads git's stream — fields cut to
    /// [`FIELD_KEEP`] — for the commits `expected`.
    fn read(
        log: &[u8],
        expected: &[String],
        paths: &[String],
        ignore: &[String],
        boundary: &[&str],
    ) -> Result<History, String> {
        let mut reader = LogReader::new(expected, paths, ignore);
        let mut pieces: Vec<&[u8]> = log.split(|b| *b == 0).collect();
        if pieces.last().is_some_and(|p| p.is_empty()) {
            pieces.pop();
        }
        for piece in pieces {
            reader.field(Field {
                bytes: &piece[..piece.len().min(FIELD_KEEP)],
                cut: piece.len() > FIELD_KEEP,
            });
        }
        Ok(History {
            records: reader.finish()?,
            boundary: boundary.iter().map(|s| s.to_string()).collect(),
            filtered: !paths.is_empty() || !ignore.is_empty(),
        })
    }

    fn listed(entries: &[Entry<'_>]) -> Vec<String> {
        entries.iter().map(|e| e.0.to_string()).collect()
    }

    const WALK: &[Entry<'static>] = &[
        (
            "ccc",
            "docs only",
            "Ann <ann@acme.example>",
            "2026-03-01T12:00:00+01:00",
            &["README.md"],
        ),
        (
            "bbb",
            "touch the app",
            "Bo <bo@acme.example>",
            "2026-03-01T10:30:00+01:00",
            &["apps/web/x.go", "apps/web/README.md"],
        ),
        (
            "aaa",
            "root",
            "<>",
            "not a time",
            &["apps/web/main.go", "README.md"],
        ),
    ];

    #[test]
    fn the_walk_finds_the_newest_commit_touching_the_paths() {
        let expected = listed(WALK);
        let log = log_of(WALK);
        let walk = |paths: &[String], ignore: &[String], boundary: &[&str]| {
            first_touching(&read(&log, &expected, paths, ignore, boundary).expect("read"))
        };
        let web = strings(&["apps/web"]);
        assert_eq!(
            walk(&web, &[], &[]),
            Some(Touching {
                sha: "bbb".into(),
                subject: "touch the app".into(),
                author: "Bo <bo@acme.example>".into(),
                // The committer's offset is kept as the instant it names.
                committed_at: Some(Time("2026-03-01T09:30:00Z".parse().unwrap())),
            })
        );
        // Everything but READMEs: the newest commit with another file.
        let readme = strings(&["README.md", "apps/web/README.md"]);
        assert_eq!(walk(&[], &readme, &[]).map(|t| t.sha), Some("bbb".into()));
        // Only READMEs changed in bbb once x.go is carved out too: the root.
        let carved = strings(&["apps/web/x.go", "apps/web/README.md"]);
        assert_eq!(
            walk(&web, &carved, &[]).map(|t| (t.sha, t.author)),
            Some(("aaa".into(), String::new()))
        );
        // Nothing under the path.
        assert_eq!(walk(&strings(&["charts"]), &[], &[]), None);
        // The shallow boundary is not evidence.
        assert_eq!(walk(&web, &[], &["bbb"]), None);
        // A time git did not write as one is no time.
        assert_eq!(walk(&web, &carved, &[]).and_then(|t| t.committed_at), None);
    }

    /// Issue 50: what a commit says cannot make another commit, hide one, or carry
    /// control characters into a Bundle.
    #[test]
    fn a_log_holds_only_the_commits_git_listed() {
        // The old separators in a subject are text now.
        let forged = "fix\u{1e}ddddddd\u{1f}Forged: approved\u{1f}carol <carol@example.com>\u{1f}";
        let entries: &[Entry<'_>] = &[
            ("c2", forged, "Eve <eve@example.com>", "", &["a"]),
            ("c1", "one", "Ann <a@b>", "", &["b"]),
            ("c0", "zero", "Ann <a@b>", "", &[]),
        ];
        let history = read(&log_of(entries), &listed(entries), &[], &[], &[]).expect("read");
        let seen: Vec<&str> = history
            .records
            .iter()
            .map(|r| r.commit.sha.as_str())
            .collect();
        assert_eq!(seen, ["c2", "c1", "c0"]);
        assert_eq!(
            history.records[0].commit.subject,
            "fixdddddddForged: approvedcarol <carol@example.com>"
        );
        // A subject naming the previous commit does not stop the list: only git's
        // SHAs are matched.
        let chronicle = chronicle(&history, Some("c0"));
        assert_eq!(chronicle.commits.len(), 2);
        // A log whose records are not git's list is refused, not guessed from.
        let other = vec!["c2".to_string(), "c9".to_string(), "c0".to_string()];
        assert!(read(&log_of(entries), &other, &[], &[], &[]).is_err());
        assert!(read(&log_of(entries), &other[..1], &[], &[], &[]).is_err());
        assert!(read(b"c2\0x\0", &other, &[], &[], &[]).is_err());
        // Only full SHAs are commits.
        let full = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(shas(&format!("{full}\n")), Some(vec![full.to_string()]));
        assert_eq!(shas(&format!("{full}\nddddddd\n")), None);
        assert_eq!(shas(&full.to_uppercase()), None);
    }

    #[test]
    fn long_text_is_cut_and_controls_go() {
        let subject = format!("\u{1b}[2J\u{202e}{}", "é".repeat(1_000_000));
        let author = format!("{} <a@b>", "a".repeat(100 << 10));
        let entries: &[Entry<'_>] = &[("x", &subject, &author, "", &["f"])];
        let head = read(&log_of(entries), &listed(entries), &[], &[], &[])
            .expect("read")
            .records
            .remove(0)
            .commit;
        assert_eq!(head.subject, format!("[2J{}", "é".repeat(98)));
        assert_eq!(head.author, "a".repeat(MAX_AUTHOR_BYTES));
        assert_eq!(head.committed_at, None);
    }

    /// A log of `n` commits `c<n-1>` (newest) … `c0`, each changing `app/<i>` or, every
    /// third, `docs/<i>`, read with `paths` and `ignore`.
    fn history(n: usize, paths: &[&str], ignore: &[&str]) -> History {
        let files: Vec<[String; 1]> = (0..n)
            .map(|i| [format!("{}/{i}", if i % 3 == 0 { "docs" } else { "app" })])
            .collect();
        let names: Vec<(String, String, String)> = (0..n)
            .map(|i| {
                (
                    format!("c{i}"),
                    format!("change {i}"),
                    format!("2026-03-01T10:{:02}:00Z", i % 60),
                )
            })
            .collect();
        let file_refs: Vec<Vec<&str>> = files
            .iter()
            .map(|f| f.iter().map(String::as_str).collect())
            .collect();
        let entries: Vec<Entry<'_>> = (0..n)
            .rev()
            .map(|i| {
                (
                    names[i].0.as_str(),
                    names[i].1.as_str(),
                    "Ann <ann@example.com>",
                    names[i].2.as_str(),
                    file_refs[i].as_slice(),
                )
            })
            .collect();
        read(
            &log_of(&entries),
            &listed(&entries),
            &strings(paths),
            &strings(ignore),
            &[],
        )
        .expect("read")
    }

    fn shas_of(chronicle: &Chronicle) -> Vec<&str> {
        chronicle.commits.iter().map(|c| c.sha.as_str()).collect()
    }

    #[test]
    fn a_chronicle_lists_what_came_since_the_previous_commit() {
        let log = history(10, &[], &[]);
        // Everything after c6, newest first, with the head's own words and time.
        let all = chronicle(&log, Some("c6"));
        assert_eq!(shas_of(&all), ["c9", "c8", "c7"]);
        assert_eq!((all.more, all.since.as_deref()), (0, Some("c6")));
        let head = all.head.clone().expect("the head");
        assert_eq!(
            (
                head.sha.as_str(),
                head.subject.as_str(),
                head.author.as_str()
            ),
            ("c9", "change 9", "Ann <ann@example.com>")
        );
        assert_eq!(
            head.committed_at,
            Some(Time("2026-03-01T10:09:00Z".parse().unwrap()))
        );
        // With path filters, only the commits that touched them.
        assert_eq!(
            shas_of(&chronicle(&history(10, &["app"], &[]), Some("c2"))),
            ["c8", "c7", "c5", "c4"]
        );
        assert_eq!(
            shas_of(&chronicle(&history(10, &[], &["docs"]), Some("c6"))),
            ["c8", "c7"]
        );
        // The same commit again brings nothing, and says so.
        let again = chronicle(&log, Some("c9"));
        assert_eq!(
            (shas_of(&again), again.since.as_deref()),
            (vec![], Some("c9"))
        );
    }

    #[test]
    fn a_chronicle_is_bounded_and_never_guessed() {
        let log = history(60, &[], &[]);
        let bounded = chronicle(&log, Some("c0"));
        assert_eq!(bounded.commits.len(), MAX_BUNDLE_COMMITS);
        assert_eq!(bounded.commits[0].sha, "c59");
        assert_eq!(bounded.more, 59 - 20);
        // A previous commit the history does not reach — further back, or not an
        // ancestor — and none at all: nothing listed, the head still read.
        for since in [Some("elsewhere"), None, Some("")] {
            let unknown = chronicle(&log, since);
            assert_eq!(
                (unknown.commits.len(), unknown.more, unknown.since),
                (0, 0, None),
                "{since:?}"
            );
            assert_eq!(unknown.head.map(|h| h.sha), Some("c59".into()));
        }
        // Nor past the shallow boundary.
        let bounded = History {
            boundary: HashSet::from(["c5".to_string()]),
            ..log
        };
        assert_eq!(chronicle(&bounded, Some("c2")).since, None);
        // The boundary itself may be the previous commit.
        assert_eq!(
            chronicle(&bounded, Some("c5")).commits.len(),
            MAX_BUNDLE_COMMITS
        );
    }

    #[test]
    fn a_chronicle_fills_what_the_watch_left_empty() {
        let mut commit = CommitArtifact {
            repo: "r".into(),
            sha: "c9".into(),
            tag: "v9".into(),
            ..CommitArtifact::default()
        };
        chronicle(&history(10, &[], &[]), Some("c7")).apply(&mut commit);
        assert_eq!(commit.message, "change 9");
        assert_eq!(commit.author, "Ann <ann@example.com>");
        assert!(commit.committed_at.is_some());
        assert_eq!(
            (
                commit.commits.len(),
                commit.more_commits,
                commit.commits_since.as_str()
            ),
            (2, 0, "c7")
        );
        // A subject the watch read already stays; a head of another commit (a race
        // with a push) gives no words.
        let mut other = CommitArtifact {
            sha: "c8".into(),
            message: "ours".into(),
            ..CommitArtifact::default()
        };
        chronicle(&history(10, &[], &[]), None).apply(&mut other);
        assert_eq!((other.message.as_str(), other.committed_at), ("ours", None));
        assert_eq!(other.commits_since, "");
    }

    /// The history as a real git writes it: a bare repository, commits pushed to it
    /// one by one, read back through the Beacon's own session.
    #[tokio::test]
    async fn a_chronicle_from_a_real_repository() {
        use hecate_sources::git::testing::{bare_repo, git, path, write};
        let root = tempfile::tempdir().expect("a directory");
        let bare = bare_repo(root.path(), "shop").await;
        let work = root.path().join("work");
        git(root.path(), &["clone", "-q", &path(&bare), &path(&work)]).await;
        let mut shas = Vec::new();
        for (i, file) in ["app/a", "docs/b", "app/c", "app/d"].iter().enumerate() {
            write(&work.join(file), &format!("{i}\n")).await;
            git(&work, &["add", "-A"]).await;
            git(&work, &["commit", "-q", "-m", &format!("change {i}")]).await;
            shas.push(git(&work, &["rev-parse", "HEAD"]).await.trim().to_string());
        }
        git(&work, &["tag", "v1.0.0"]).await;
        git(&work, &["push", "-q", "origin", "main", "v1.0.0"]).await;
        let beacon = Git::new(DEFAULT_TIMEOUT).within(Limits {
            local: true,
            ..Limits::default()
        });
        let mut watch = GitWatch {
            repo: path(&bare),
            tags: Some(hecate_types::TagWatch::default()),
            ..GitWatch::default()
        };
        let commit = CommitArtifact {
            repo: watch.repo.clone(),
            sha: shas[3].clone(),
            tag: "v1.0.0".into(),
            ..CommitArtifact::default()
        };
        let none = GitCredentials::Anonymous;
        let apps = AppTokens::default();
        let read = beacon
            .history(&watch, &none, &apps, &commit, Some(&shas[0]))
            .await
            .expect("the history");
        let subjects: Vec<&str> = read.commits.iter().map(|c| c.subject.as_str()).collect();
        assert_eq!(subjects, ["change 3", "change 2", "change 1"]);
        assert_eq!(read.since.as_deref(), Some(shas[0].as_str()));
        let head = read.head.expect("the head");
        assert_eq!(head.author, "Someone <someone@example.com>");
        assert!(head.committed_at.is_some());
        // The watch's path filters apply.
        watch.paths = vec!["app".into()];
        let read = beacon
            .history(&watch, &none, &apps, &commit, Some(&shas[0]))
            .await
            .expect("the history");
        assert_eq!(read.commits.len(), 2);
        // A branch reads the same way.
        let on_main = CommitArtifact {
            tag: String::new(),
            branch: "main".into(),
            ..commit.clone()
        };
        watch.paths.clear();
        let read = beacon
            .history(&watch, &none, &apps, &on_main, Some(&shas[2]))
            .await
            .expect("the history");
        assert_eq!(read.commits.len(), 1);
    }

    #[tokio::test]
    async fn a_resolution_keeps_its_keys_in_a_private_directory_removed_afterwards() {
        let credentials = GitCredentials::Ssh(hecate_sources::git::SshKey {
            identity: "KEY".into(),
            passphrase: None,
            known_hosts: Some("example.com ssh-ed25519 AAAA".into()),
            user: "git".into(),
        });
        let session = Git::new(DEFAULT_TIMEOUT)
            .session(
                "ssh://example.com/r.git",
                &credentials,
                &AppTokens::default(),
            )
            .await
            .expect("a session");
        let dir = session.dir.path().to_path_buf();
        let mode = |path: &std::path::Path| {
            std::fs::metadata(path)
                .expect("it exists")
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode(&dir), 0o700);
        let keys = dir.join("credentials/beacon");
        assert_eq!(mode(&keys.join("identity")), 0o600);
        assert_eq!(mode(&keys.join("known_hosts")), 0o600);
        drop(session);
        assert!(!dir.exists(), "{} is left", dir.display());
    }

    #[test]
    fn git_complaints_are_short() {
        let failure = |detail: &str| GitFailure {
            what: "git ls-remote".into(),
            detail: detail.into(),
            exit: Some(128),
        };
        assert_eq!(
            said(&failure(
                "warning: x; remote: nope; fatal: repository 'x' not found"
            )),
            "remote: nope; fatal: repository 'x' not found"
        );
        assert_eq!(
            said(&failure(
                "git@host: Permission denied (publickey).; fatal: Could not read from remote \
                 repository.; ; Please make sure you have the correct access rights; and the \
                 repository exists."
            )),
            "git@host: Permission denied (publickey).; fatal: Could not read from remote \
             repository."
        );
        let silent = GitFailure {
            detail: String::new(),
            ..failure("")
        };
        assert_eq!(said(&silent), "git ls-remote failed with exit code 128");
        assert!(said(&failure(&"e".repeat(2000))).len() <= 500);
    }
}
