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
//! As for the git steps, the operator decides what a watch may reach (issue 30): a path
//! or `file://` on the controller's own disk only with `--allow-local-git`, a remote
//! helper never ([`hecate_sources::git::remote`]); the path filters' clone holds at most
//! `--max-checkout-size` bytes.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use hecate_sources::git::{AppTokens, GitCredentials, GitFailure, Limits, Scratch, apply};
use hecate_types::{Artifact, CommitArtifact, GitWatch};

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
        }
        Ok(Artifact {
            commit: Some(commit),
            ..Artifact::default()
        })
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
        let log = [
            OsStr::new("--git-dir"),
            clone.as_os_str(),
            OsStr::new("-c"),
            OsStr::new("core.quotePath=false"),
            OsStr::new("log"),
            OsStr::new("--first-parent"),
            OsStr::new("--no-renames"),
            OsStr::new("--name-only"),
            OsStr::new("--format=%x1e%H%x1f%s%x1f%an <%ae>"),
            OsStr::new(&limit),
            OsStr::new(head),
            OsStr::new("--"),
        ];
        let output = self.git.run(self.dir.path(), &log).await.map_err(history)?;
        // A shallow clone's oldest commits look parentless; what they changed is
        // unknowable, so the walk stops there rather than count their whole tree.
        let boundary: HashSet<String> = std::fs::read_to_string(clone.join("shallow"))
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().to_string())
            .collect();
        first_touching(&output, &boundary, &watch.paths, &watch.ignore_paths).ok_or_else(|| {
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

/// The first commit in `log` (`git log --name-only --format=%x1e%H%x1f%s` output, newest
/// first) that changed a file under `paths` (or anything, when empty) and not under
/// `ignore`; stops at the shallow `boundary`.
pub fn first_touching(
    log: &str,
    boundary: &HashSet<String>,
    paths: &[String],
    ignore: &[String],
) -> Option<Touching> {
    for record in log.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
        let mut lines = record.lines();
        let header = lines.next()?;
        let mut fields = header.split('\u{1f}');
        let sha = fields.next().unwrap_or_default();
        let subject = fields.next().unwrap_or_default();
        let author = fields.next().unwrap_or_default();
        if boundary.contains(sha) {
            return None;
        }
        let touched = lines
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .any(|file| (paths.is_empty() || under(file, paths)) && !under(file, ignore));
        if touched {
            return Some(Touching {
                sha: sha.to_string(),
                subject: subject.trim().to_string(),
                // `%an <%ae>` of a commit without either is " <>": nobody.
                author: Some(author.trim())
                    .filter(|a| !a.is_empty() && *a != "<>")
                    .unwrap_or_default()
                    .to_string(),
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

    #[test]
    fn the_walk_finds_the_newest_commit_touching_the_paths() {
        let log = "\u{1e}ccc\u{1f}docs only\u{1f}Ann <ann@acme.example>\n\nREADME.md\n\
                   \u{1e}bbb\u{1f}touch the app\u{1f}Bo <bo@acme.example>\n\napps/web/x.go\napps/web/README.md\n\
                   \u{1e}aaa\u{1f}root\u{1f} <>\n\napps/web/main.go\nREADME.md\n";
        let none = HashSet::new();
        let web = strings(&["apps/web"]);
        assert_eq!(
            first_touching(log, &none, &web, &[]),
            Some(Touching {
                sha: "bbb".into(),
                subject: "touch the app".into(),
                author: "Bo <bo@acme.example>".into(),
            })
        );
        // Everything but READMEs: the newest commit with another file.
        let readme = strings(&["README.md", "apps/web/README.md"]);
        assert_eq!(
            first_touching(log, &none, &[], &readme).map(|t| t.sha),
            Some("bbb".into())
        );
        // Only READMEs changed in bbb once x.go is carved out too: the root.
        let carved = strings(&["apps/web/x.go", "apps/web/README.md"]);
        assert_eq!(
            first_touching(log, &none, &web, &carved).map(|t| (t.sha, t.author)),
            Some(("aaa".into(), String::new()))
        );
        // Nothing under the path.
        assert_eq!(first_touching(log, &none, &strings(&["charts"]), &[]), None);
        // The shallow boundary is not evidence.
        let boundary = HashSet::from(["bbb".to_string()]);
        assert_eq!(first_touching(log, &boundary, &web, &[]), None);
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
