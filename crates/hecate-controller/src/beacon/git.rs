//! The `git` source (spec controller.md §1.3): a branch's head, or the newest tag a
//! selection picks, read from the remote's ref list without cloning (`git ls-remote`).
//!
//! Git runs as a child process with a clean environment — no system or user
//! configuration, `HOME` in an empty directory of its own, no terminal prompts — so
//! nothing on the host changes what a Beacon resolves, and a remote that wants a
//! password fails at once instead of waiting for one. Credentials reach git through
//! `GIT_CONFIG_*` environment variables (an `Authorization` header), never through
//! its arguments, which any process on the host can read. A remote that does not
//! answer is given up after a timeout; the child is killed with it.
//!
//! An annotated tag resolves to its commit (the peeled `^{}` entry), not to the tag
//! object: a checkout never produces a tag object's SHA, so nothing downstream would
//! match it.
//!
//! With `paths`/`ignorePaths`, the answer is the newest commit (along first parents,
//! within [`HISTORY_LIMIT`]) that changed a watched file, read from a shallow bare
//! clone in a scratch directory that is removed afterwards.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use hecate_types::{Artifact, CommitArtifact, GitWatch};
use tokio::process::Command;

use super::credentials::GitAuth;
use super::select::Selection;
use super::source::ResolveError;

/// How long `git ls-remote` (or the history read of a path filter) may take before the
/// remote counts as unreachable.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How many commits a path filter looks back along first parents.
pub const HISTORY_LIMIT: usize = 200;

/// Environment variables passed through to git: where to find programs, the proxies
/// and CA bundles an operator configured for the controller. Nothing else.
const PASSED_THROUGH: &[&str] = &[
    "PATH",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GIT_SSL_CAINFO",
];

/// Runs `git ls-remote` for Beacons.
#[derive(Clone)]
pub struct Git {
    program: PathBuf,
    timeout: Duration,
    /// An empty directory git sees as `HOME`, alive as long as any clone of this.
    home: Arc<tempfile::TempDir>,
    passed: Vec<(String, std::ffi::OsString)>,
}

impl Git {
    /// Git from `PATH`, giving up on a remote after `timeout`.
    pub fn new(timeout: Duration) -> std::io::Result<Self> {
        let home = tempfile::Builder::new()
            .prefix("hecate-git-home-")
            .tempdir()?;
        let passed = PASSED_THROUGH
            .iter()
            .filter_map(|key| std::env::var_os(key).map(|value| (key.to_string(), value)))
            .collect();
        Ok(Self {
            program: PathBuf::from("git"),
            timeout,
            home: Arc::new(home),
            passed,
        })
    }

    /// Resolves `watch` to the commit it points at now.
    pub async fn resolve(
        &self,
        watch: &GitWatch,
        auth: &GitAuth,
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
        let mut commit = CommitArtifact {
            repo: repo.to_string(),
            ..CommitArtifact::default()
        };
        match &watch.tags {
            None => {
                let wanted = format!("refs/heads/{}", watch.branch);
                let refs = self.ls_remote(repo, auth, &["--heads"], &[&wanted]).await?;
                commit.sha = branch_head(&refs, &watch.branch).ok_or_else(|| {
                    ResolveError::failed(format!("{repo} has no branch {:?}", watch.branch))
                })?;
                commit.branch = watch.branch.clone();
            }
            Some(tags) => {
                let refs = self.ls_remote(repo, auth, &["--tags"], &[]).await?;
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
            let (sha, subject) = self
                .newest_touching(watch, auth, reference, &commit.sha)
                .await?;
            commit.sha = sha;
            commit.message = subject;
        }
        Ok(Artifact {
            commit: Some(commit),
            ..Artifact::default()
        })
    }

    /// The newest commit, walking first parents back from `head` (at most
    /// [`HISTORY_LIMIT`]), that changed a file under `paths` and not under
    /// `ignorePaths`; and its subject. Walking back keeps the answer still while
    /// unrelated commits land, and lets a new Beacon resolve in a repository whose head
    /// is unrelated.
    async fn newest_touching(
        &self,
        watch: &GitWatch,
        auth: &GitAuth,
        reference: &str,
        head: &str,
    ) -> Result<(String, String), ResolveError> {
        let repo = watch.repo.as_str();
        let scratch = tempfile::Builder::new()
            .prefix("hecate-beacon-")
            .tempdir()
            .map_err(|e| ResolveError::failed(format!("no scratch directory: {e}")))?;
        let clone = scratch.path().join("history.git");
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
        self.run(repo, auth, &args)
            .await
            .map_err(|e| ResolveError::failed(format!("reading the history of {repo}: {e}")))?;
        let limit = format!("-{HISTORY_LIMIT}");
        let git_dir = clone.as_os_str();
        let log = [
            OsStr::new("--git-dir"),
            git_dir,
            OsStr::new("-c"),
            OsStr::new("core.quotePath=false"),
            OsStr::new("log"),
            OsStr::new("--first-parent"),
            OsStr::new("--no-renames"),
            OsStr::new("--name-only"),
            OsStr::new("--format=%x1e%H%x1f%s"),
            OsStr::new(&limit),
            OsStr::new(head),
            OsStr::new("--"),
        ];
        let output = self
            .run(repo, &GitAuth::Anonymous, &log)
            .await
            .map_err(|e| ResolveError::failed(format!("reading the history of {repo}: {e}")))?;
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
        auth: &GitAuth,
        flags: &[&str],
        patterns: &[&str],
    ) -> Result<Vec<(String, String)>, ResolveError> {
        let mut args: Vec<&OsStr> = vec![OsStr::new("ls-remote")];
        args.extend(flags.iter().map(OsStr::new));
        args.push(OsStr::new(repo));
        args.extend(patterns.iter().map(OsStr::new));
        let output = self
            .run(repo, auth, &args)
            .await
            .map_err(|e| ResolveError::failed(format!("listing the refs of {repo}: {e}")))?;
        Ok(parse_ls_remote(&output))
    }

    /// Runs git with `args` in the clean environment, authenticating to `repo`'s
    /// origin with `auth`; its standard output, or why it failed.
    async fn run(&self, repo: &str, auth: &GitAuth, args: &[&OsStr]) -> Result<String, String> {
        let mut command = Command::new(&self.program);
        command
            .env_clear()
            .envs(self.passed.iter().map(|(k, v)| (k, v)))
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
            .env("LC_ALL", "C")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let GitAuth::Basic { username, password } = auth {
            let Some(origin) = http_origin(repo) else {
                return Err("a username and password only work with an http(s) URL".into());
            };
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
            // Scoped to the remote's origin: a redirect elsewhere does not carry it.
            command
                .env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", format!("http.{origin}/.extraHeader"))
                .env(
                    "GIT_CONFIG_VALUE_0",
                    format!("Authorization: Basic {token}"),
                );
        }
        let child = command
            .spawn()
            .map_err(|e| format!("cannot run git: {e}"))?;
        let output = match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => return Err(format!("running git: {e}")),
            Err(_) => {
                return Err(format!(
                    "{repo} did not answer within {} s",
                    self.timeout.as_secs()
                ));
            }
        };
        if !output.status.success() {
            return Err(last_lines(&String::from_utf8_lossy(&output.stderr)));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
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
) -> Option<(String, String)> {
    for record in log.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
        let mut lines = record.lines();
        let header = lines.next()?;
        let (sha, subject) = header.split_once('\u{1f}').unwrap_or((header, ""));
        if boundary.contains(sha) {
            return None;
        }
        let touched = lines
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .any(|file| (paths.is_empty() || under(file, paths)) && !under(file, ignore));
        if touched {
            return Some((sha.to_string(), subject.trim().to_string()));
        }
    }
    None
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

/// `scheme://host[:port]` of an HTTP(S) URL, without user information; `None` for
/// other transports.
fn http_origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "https" && scheme != "http" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    (!host.is_empty()).then(|| format!("{scheme}://{host}"))
}

/// The meaningful end of git's complaint: its last non-empty lines, at most 500 bytes.
fn last_lines(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let text = lines[lines.len().saturating_sub(2)..].join("; ");
    if text.is_empty() {
        return "git failed without saying why".into();
    }
    crate::condition::truncate(&text, 500).to_string()
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

    #[test]
    fn credentials_are_scoped_to_the_remotes_origin() {
        assert_eq!(
            http_origin("https://bot@git.example.com:8443/acme/app.git").as_deref(),
            Some("https://git.example.com:8443")
        );
        assert_eq!(
            http_origin("HTTP://127.0.0.1:9/app").as_deref(),
            Some("http://127.0.0.1:9")
        );
        assert_eq!(http_origin("file:///srv/app.git"), None);
        assert_eq!(http_origin("git@github.com:acme/app.git"), None);
        assert_eq!(http_origin("https:///nohost"), None);
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
        let log = "\u{1e}ccc\u{1f}docs only\n\nREADME.md\n\
                   \u{1e}bbb\u{1f}touch the app\n\napps/web/x.go\napps/web/README.md\n\
                   \u{1e}aaa\u{1f}root\n\napps/web/main.go\nREADME.md\n";
        let none = HashSet::new();
        let web = strings(&["apps/web"]);
        assert_eq!(
            first_touching(log, &none, &web, &[]),
            Some(("bbb".into(), "touch the app".into()))
        );
        // Everything but READMEs: the newest commit with another file.
        let readme = strings(&["README.md", "apps/web/README.md"]);
        assert_eq!(
            first_touching(log, &none, &[], &readme).map(|(sha, _)| sha),
            Some("bbb".into())
        );
        // Only READMEs changed in bbb once x.go is carved out too: the root.
        let carved = strings(&["apps/web/x.go", "apps/web/README.md"]);
        assert_eq!(
            first_touching(log, &none, &web, &carved).map(|(sha, _)| sha),
            Some("aaa".into())
        );
        // Nothing under the path.
        assert_eq!(first_touching(log, &none, &strings(&["charts"]), &[]), None);
        // The shallow boundary is not evidence.
        let boundary = HashSet::from(["bbb".to_string()]);
        assert_eq!(first_touching(log, &boundary, &web, &[]), None);
    }

    #[test]
    fn git_complaints_are_short() {
        assert_eq!(
            last_lines("\nremote: nope\nfatal: repository 'x' not found\n\n"),
            "remote: nope; fatal: repository 'x' not found"
        );
        assert_eq!(last_lines(""), "git failed without saying why");
        assert!(last_lines(&"e".repeat(2000)).len() <= 500);
    }
}
