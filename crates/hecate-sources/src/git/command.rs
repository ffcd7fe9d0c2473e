//! Running the `git` CLI: a clean environment, failures that say what happened without
//! leaking a secret, and their classification (spec §5.3: credentials refused,
//! unreachable, update rejected).
//!
//! Every invocation starts from nothing the host configured: no system or global git
//! configuration (`GIT_CONFIG_NOSYSTEM`, `HOME` in the caller's private area), no
//! prompts, no hooks, no ssh-agent, English messages (the classification reads them).
//! What a caller needs — credentials, `advice` switches — is handed to git as
//! configuration in the environment (`GIT_CONFIG_COUNT`), never on the command line,
//! where it would show in `ps` and in error text. With a time limit, a remote that does
//! not answer is given up on and the child killed.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;
use tokio::process::{ChildStdout, Command};

use super::Error;
use crate::output;

/// Variables a git child keeps from the controller's own environment: where programs
/// are (`ssh`, git's helpers) and the proxies and CA bundles the pod was given. Nothing
/// else that configures git or ssh is among them. (The render steps' programs keep the
/// same.)
pub const INHERITED: &[&str] = &[
    "PATH",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GIT_SSL_CAINFO",
];

/// Configuration every invocation carries: no hooks (a cloned repository brings
/// none, but a checkout reused from an earlier attempt could have gained some), no
/// background maintenance, no advice noise in the messages.
const BASE_CONFIG: &[(&str, &str)] = &[
    ("core.hooksPath", "/dev/null"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("advice.detachedHead", "false"),
    ("init.defaultBranch", "main"),
    // Forget any helper a checkout's own configuration names; credentials come from
    // the step's Secret or not at all.
    ("credential.helper", ""),
];

/// How many bytes of git's output a failure message keeps.
const DETAIL_LIMIT: usize = 1500;

/// The most [`Git::run`] takes of what git prints on stdout (16 MiB): what the
/// controller asks git for is a ref list, a SHA, a status — a ref list of 200,000 tags
/// fits. More fails the run and stops git (DECISION 145); a log of commits, whose size
/// the repository decides, is read with [`Git::run_fields`] instead.
pub const MAX_OUTPUT: usize = 16 << 20;

/// How much of git's stderr is kept (its end: the cause is usually last, and a
/// message keeps [`DETAIL_LIMIT`] of it).
const STDERR_KEPT: usize = 16 << 10;

/// The git CLI as one user runs it: a private `HOME`, and the credentials its Secret
/// gave (see [`super::credentials`]).
pub struct Git {
    /// The private area: `HOME`, credential files, anything that must not land in a
    /// checkout.
    private: PathBuf,
    /// `HOME` and `XDG_CONFIG_HOME`: empty, so no global configuration applies.
    home: PathBuf,
    /// Extra environment (the ssh command, the values a credential helper prints).
    env: Vec<(String, OsString)>,
    /// Extra configuration, after [`BASE_CONFIG`].
    config: Vec<(String, String)>,
    /// Values that must never appear in a message.
    secrets: Vec<String>,
    /// How long one invocation may take; `None`: as long as it takes.
    timeout: Option<Duration>,
    /// Whether git may use its `file` transport (`--allow-local-git`): see
    /// [`super::remote`].
    local: bool,
}

impl Git {
    /// Prepares the private area `private` (mode 0700) and a `HOME` in it.
    pub async fn new(private: &Path) -> Result<Self, Error> {
        let home = private.join("home");
        private_dir(&home).await?;
        Ok(Self {
            private: private.to_path_buf(),
            home,
            env: Vec::new(),
            config: Vec::new(),
            secrets: Vec::new(),
            timeout: None,
            local: false,
        })
    }

    /// Lets git reach repositories on the controller's own disk (local paths,
    /// `file://`) when `allowed` — the operator's `--allow-local-git`. Without it git
    /// refuses them itself, whatever URL it is handed.
    #[must_use]
    pub fn allowing_local(mut self, allowed: bool) -> Self {
        self.local = allowed;
        self
    }

    /// Gives every invocation at most `limit`: then the child is killed and the run
    /// fails as unreachable.
    #[must_use]
    pub fn with_timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The private area, for files that must not land in a checkout.
    pub fn private(&self) -> &Path {
        &self.private
    }

    /// Sets `key` in every child's environment.
    pub fn set_env(&mut self, key: &str, value: impl Into<OsString>) {
        self.env.push((key.to_string(), value.into()));
    }

    /// Adds `key = value` to every child's configuration.
    pub fn set_config(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.config.push((key.into(), value.into()));
    }

    /// Keeps `value` out of every message from now on.
    pub fn hide(&mut self, value: &str) {
        if !value.is_empty() {
            self.secrets.push(value.to_string());
        }
    }

    /// The value `key` was last given with [`Git::set_env`].
    #[cfg(test)]
    pub(crate) fn env_value(&self, key: &str) -> Option<String> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }

    /// `text` without the hidden values and without passwords written into URLs.
    pub fn redact(&self, text: &str) -> String {
        redact(text, &self.secrets)
    }

    /// `git <args>` in `dir`, with the clean environment.
    fn command(&self, dir: &Path, args: &[&OsStr]) -> Command {
        let mut command = Command::new("git");
        command
            .args(args)
            .current_dir(dir)
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for key in INHERITED {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        command
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            // Only network transports (and the local disk when the operator allows
            // it): never `ext::` (a command), `fd::` or another remote helper.
            .env("GIT_ALLOW_PROTOCOL", super::remote::protocols(self.local))
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C")
            // A remote that stops sending for a minute is given up on, rather than
            // holding the crossing forever.
            .env("GIT_HTTP_LOW_SPEED_LIMIT", "1000")
            .env("GIT_HTTP_LOW_SPEED_TIME", "60");
        let config = BASE_CONFIG
            .iter()
            .map(|(k, v)| (*k, *v))
            .chain(self.config.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let mut count = 0;
        for (i, (key, value)) in config.enumerate() {
            command
                .env(format!("GIT_CONFIG_KEY_{i}"), key)
                .env(format!("GIT_CONFIG_VALUE_{i}"), value);
            count = i + 1;
        }
        command.env("GIT_CONFIG_COUNT", count.to_string());
        for (key, value) in &self.env {
            command.env(key, value);
        }
        command
    }

    /// Runs `git <args>` in `dir` and returns what it printed on stdout.
    pub async fn run<S: AsRef<OsStr>>(&self, dir: &Path, args: &[S]) -> Result<String, GitFailure> {
        self.run_with(dir, args, &[], None).await
    }

    /// [`Git::run`] with extra environment and, when `input` is given, that text on
    /// stdin.
    pub async fn run_with<S: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
        env: &[(&str, &str)],
        input: Option<&[u8]>,
    ) -> Result<String, GitFailure> {
        self.run_watched(dir, args, env, input, None)
            .await
            .map_err(Bounded::into_failure)
    }

    /// [`Git::run`] that may fill `watched` (a clone's directory) only up to `limit`
    /// bytes: its size is measured while git runs, and once it is over, git and
    /// whatever it started (its transport helper, `index-pack`) are killed. Between
    /// two measurements git may write a little more than `limit`; the caller removes
    /// the directory.
    pub async fn run_bounded<S: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
        watched: &Path,
        limit: u64,
    ) -> Result<String, Bounded> {
        self.run_watched(dir, args, &[], None, Some((watched, limit)))
            .await
    }

    async fn run_watched<S: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
        env: &[(&str, &str)],
        input: Option<&[u8]>,
        watch: Option<(&Path, u64)>,
    ) -> Result<String, Bounded> {
        let mut ran = self
            .spawn(dir, args, env, input, watch, |stdout| {
                output::read_all(stdout, MAX_OUTPUT)
            })
            .await?;
        let stdout = String::from_utf8(std::mem::take(&mut ran.stdout))
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        if ran.status.success() {
            return Ok(stdout);
        }
        Err(Bounded::Failed(self.failed(ran, &stdout)))
    }

    /// Runs `git <args>` in `dir` and hands what it prints on stdout to `each` as
    /// fields ended by `separator`, each cut to `keep` bytes while it is read
    /// ([`output::read_fields`]): for output whose size the repository decides (a log
    /// of its commits), of which only the start of each field matters.
    pub async fn run_fields<S: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
        separator: u8,
        keep: usize,
        each: &mut (dyn FnMut(output::Field<'_>) + Send),
    ) -> Result<(), GitFailure> {
        let ran = self
            .spawn(dir, args, &[], None, None, |stdout| {
                output::read_fields(stdout, separator, keep, each)
            })
            .await
            .map_err(Bounded::into_failure)?;
        if ran.status.success() {
            return Ok(());
        }
        Err(self.failed(ran, ""))
    }

    /// The failure of `ran`, which exited unsuccessfully having printed `stdout`: what
    /// it said, redacted, with what ran and how it exited.
    fn failed<T>(&self, ran: Ran<T>, stdout: &str) -> GitFailure {
        GitFailure {
            detail: self.redact(&detail(&String::from_utf8_lossy(&ran.stderr), stdout)),
            what: ran.what,
            exit: ran.status.code(),
        }
    }

    /// Runs `git <args>`, its stdout read by `read` and its stderr's end kept, until it
    /// exits — or until its time is up, `watch`'s directory grows past its limit, or
    /// `read` gives up (more than it may hold): then git is killed (with what it
    /// started, when watched) and the run fails.
    async fn spawn<S, T, F, R>(
        &self,
        dir: &Path,
        args: &[S],
        env: &[(&str, &str)],
        input: Option<&[u8]>,
        watch: Option<(&Path, u64)>,
        read: F,
    ) -> Result<Ran<T>, Bounded>
    where
        S: AsRef<OsStr>,
        F: FnOnce(Option<ChildStdout>) -> R,
        R: Future<Output = std::io::Result<T>>,
    {
        let args: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
        let what = describe(&args);
        let cannot_run = |e: &std::io::Error| Bounded::Failed(GitFailure::cannot_run(&what, e));
        let mut command = self.command(dir, &args);
        for (key, value) in env {
            command.env(key, value);
        }
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        if watch.is_some() {
            // A group of its own, so that what git started is stopped with it.
            command.process_group(0);
        }
        // Dropped on every way out: that kills git (`kill_on_drop`).
        let mut child = command.spawn().map_err(|e| cannot_run(&e))?;
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(nix::unistd::Pid::from_raw)
            .filter(|_| watch.is_some());
        // The group's leader is not reaped yet when this runs (its wait is pending or
        // dropped), so its id names this group and no other.
        let stop_group = || {
            if let Some(group) = group {
                let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            }
        };
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            stdin.write_all(input).await.map_err(|e| cannot_run(&e))?;
            drop(stdin);
        }
        let timed = async {
            match self.timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let grown = async {
            match watch {
                Some((dir, limit)) => grows_past(dir, limit).await,
                None => std::future::pending().await,
            }
        };
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let finished = async {
            tokio::try_join!(
                read(stdout),
                output::read_tail(stderr, STDERR_KEPT),
                child.wait()
            )
        };
        let ended = tokio::select! {
            done = finished => Ended::Done(done),
            () = timed => Ended::TimedOut,
            size = grown => Ended::Grown(size),
        };
        match ended {
            Ended::Done(Ok((stdout, stderr, status))) => Ok(Ran {
                what,
                status,
                stdout,
                stderr,
            }),
            Ended::Done(Err(e)) if output::is_too_much(&e) => {
                stop_group();
                Err(Bounded::Failed(GitFailure {
                    detail: format!(
                        "it printed more than {}, the most it may",
                        size_text(MAX_OUTPUT as u64)
                    ),
                    what,
                    exit: None,
                }))
            }
            Ended::Done(Err(e)) => {
                stop_group();
                Err(cannot_run(&e))
            }
            Ended::TimedOut => {
                stop_group();
                Err(Bounded::Failed(GitFailure {
                    detail: format!(
                        "the remote did not answer within {} s",
                        self.timeout.unwrap_or_default().as_secs()
                    ),
                    what,
                    exit: None,
                }))
            }
            Ended::Grown(size) => {
                stop_group();
                Err(Bounded::TooLarge { what, size })
            }
        }
    }

    /// Runs `git <args>` in `dir` and reports only whether it exited 0: for the
    /// questions git answers with its exit code (`diff --quiet`, `config --get`).
    pub async fn succeeds<S: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
    ) -> Result<bool, GitFailure> {
        match self.run(dir, args).await {
            Ok(_) => Ok(true),
            Err(failure) if failure.exit == Some(1) => Ok(false),
            Err(failure) => Err(failure),
        }
    }
}

/// Creates `dir` and its parents; `dir` itself gets mode 0700.
pub(crate) async fn private_dir(dir: &Path) -> Result<(), Error> {
    let mut builder = tokio::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    builder
        .create(dir)
        .await
        .map_err(|e| Error::local(format!("cannot prepare {}: {e}", dir.display())))
}

/// Why a [`Git::run_bounded`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bounded {
    /// git failed (or could not run, or timed out).
    Failed(GitFailure),
    /// The watched directory grew past its limit, and git was stopped.
    TooLarge {
        /// `git clone`, …
        what: String,
        /// How large it was when measured.
        size: u64,
    },
}

impl Bounded {
    /// The failure of a run without a watched directory.
    fn into_failure(self) -> GitFailure {
        match self {
            Self::Failed(failure) => failure,
            // Unreachable without a watch; said as git would have.
            Self::TooLarge { what, .. } => GitFailure {
                what,
                detail: "stopped".into(),
                exit: None,
            },
        }
    }
}

/// A run of git that ended by itself.
struct Ran<T> {
    /// `git clone`, …
    what: String,
    status: std::process::ExitStatus,
    /// What its stdout's reader made of it.
    stdout: T,
    /// The end of what it said on stderr.
    stderr: Vec<u8>,
}

/// How a run ended, before what it means is worked out.
enum Ended<T> {
    Done(std::io::Result<(T, Vec<u8>, std::process::ExitStatus)>),
    TimedOut,
    Grown(u64),
}

/// Waits until `dir` holds more than `limit` bytes, measuring it every 200 ms — less
/// often when measuring takes long (at most a tenth of the time is spent measuring,
/// and at least every two seconds); returns the size measured.
async fn grows_past(dir: &Path, limit: u64) -> u64 {
    let mut pause = Duration::from_millis(200);
    loop {
        tokio::time::sleep(pause).await;
        let started = std::time::Instant::now();
        let walked = dir.to_path_buf();
        let size = tokio::task::spawn_blocking(move || size_of(&walked))
            .await
            .unwrap_or(0);
        if size > limit {
            return size;
        }
        pause = (started.elapsed() * 10).clamp(Duration::from_millis(200), Duration::from_secs(2));
    }
}

/// The bytes of every file under `path` (links not followed; what cannot be read — a
/// file git renamed meanwhile — counts nothing).
pub fn size_of(path: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![path.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&next) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&next) {
                pending.extend(entries.filter_map(|entry| entry.ok().map(|e| e.path())));
            }
        } else if meta.is_file() {
            total += meta.len();
        }
    }
    total
}

/// `--max-checkout-size`'s default: 512 MiB a clone, for every clone the controller
/// makes (a step's checkout, a Beacon's path filters). Configuration repositories —
/// what crossings clone — are kilobytes to a few hundred megabytes; four crossings at
/// once (the Passage controller's concurrency) then stay within the 2 GiB a work volume
/// is commonly given (docs/DECISIONS.md 113).
pub const DEFAULT_MAX_CHECKOUT_SIZE: u64 = 512 << 20;

/// What the operator lets the controller's git do, from its flags: reach repositories
/// on its own disk (`--allow-local-git`) and how large a clone may grow
/// (`--max-checkout-size`). One value for every git the controller runs — the
/// `git-clone` and `git-push` steps and the Beacons —, built once from the flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A path or `file://` may be cloned and pushed to.
    pub local: bool,
    /// The most one clone may hold, in bytes; `None`: no limit.
    pub max_checkout_size: Option<u64>,
}

impl Default for Limits {
    /// The flags' defaults: the network only, clones of at most
    /// [`DEFAULT_MAX_CHECKOUT_SIZE`].
    fn default() -> Self {
        Self {
            local: false,
            max_checkout_size: Some(DEFAULT_MAX_CHECKOUT_SIZE),
        }
    }
}

impl Limits {
    /// The defaults, with the controller's own disk allowed (`--allow-local-git`).
    pub fn local() -> Self {
        Self {
            local: true,
            ..Self::default()
        }
    }
}

/// `bytes` as people read a size: `512 MiB`, `1.5 GiB`, `300 KiB`, `12 B`.
pub fn size_text(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {}", UNITS[unit])
}

/// The command as a message names it: `git` and its subcommand.
fn describe(args: &[&OsStr]) -> String {
    let sub = args
        .iter()
        .map(|a| a.to_string_lossy())
        .find(|a| !a.starts_with('-'));
    match sub {
        Some(sub) => format!("git {sub}"),
        None => "git".to_string(),
    }
}

/// What git said when it failed: stderr without hints, then stdout (where `push
/// --porcelain` reports a refused ref), one line after another; the end kept when it
/// is long (the cause is usually last).
fn detail(stderr: &str, stdout: &str) -> String {
    let said: Vec<String> = stderr
        .lines()
        .chain(stdout.lines())
        .map(|l| l.replace('\t', " ").trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
        .collect();
    let text = said.join("; ");
    if text.len() <= DETAIL_LIMIT {
        return text;
    }
    let mut start = text.len() - DETAIL_LIMIT;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

/// A git invocation that failed, its message already redacted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitFailure {
    /// `git clone`, `git push`, …
    pub what: String,
    /// What git said.
    pub detail: String,
    /// The exit code; `None` when git could not be run, was killed or timed out.
    pub exit: Option<i32>,
}

/// What kind of failure a remote operation met (spec §5.3's classification).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The host refused the credentials (or wanted some).
    Auth,
    /// The host, or the repository on it, could not be reached.
    Unreachable,
    /// The remote refused the update.
    Rejected,
    /// Anything else.
    Other,
}

impl GitFailure {
    fn cannot_run(what: &str, error: &std::io::Error) -> Self {
        Self {
            what: what.to_string(),
            detail: format!("cannot run git: {error}"),
            exit: None,
        }
    }

    /// Sorts the failure by git's words, the first match winning: credentials, then
    /// reachability, then a refused update.
    pub fn class(&self) -> Class {
        const AUTH: &[&str] = &[
            "authentication failed",
            "authentication required",
            "authorization failed",
            "permission denied",
            "could not read username",
            "could not read password",
            "invalid username or password",
            "invalid credentials",
            "access denied",
            "returned error: 401",
            "returned error: 403",
            "host key verification failed",
            "bad passphrase",
            "incorrect passphrase",
        ];
        const UNREACHABLE: &[&str] = &[
            "could not resolve host",
            "could not resolve hostname",
            "name or service not known",
            "temporary failure in name resolution",
            "no such host",
            "connection refused",
            "connection timed out",
            "operation timed out",
            "no route to host",
            "network is unreachable",
            "failed to connect",
            "connection reset",
            "could not read from remote repository",
            "does not appear to be a git repository",
            "does not exist",
            "not found",
            "unable to access",
            "dial tcp",
            "the remote end hung up",
            "did not answer within",
        ];
        const REJECTED: &[&str] = &["non-fast-forward", "[rejected]", "rejected", "fetch first"];
        let text = self.detail.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
        if has(AUTH) {
            Class::Auth
        } else if has(REJECTED) {
            // Before reachability: a refused push also says the remote "hung up" at
            // times, and the refusal is the news.
            Class::Rejected
        } else if text.contains("remote branch") {
            // `clone --branch` of a branch the remote lacks ("Remote branch x not found
            // in upstream origin"): the remote answered, so this is no network problem
            // (the reference: `GitFailed`).
            Class::Other
        } else if has(UNREACHABLE) {
            Class::Unreachable
        } else {
            Class::Other
        }
    }

    /// The error of a failed talk with the remote, in its [`Class`].
    pub fn remote(self) -> Error {
        Error::remote(self.class(), self.to_string())
    }

    /// The error of a failure on local files (a checkout): whatever git said, the
    /// same files would fail the same way.
    pub fn local(self) -> Error {
        Error::local(self.to_string())
    }
}

impl std::fmt::Display for GitFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.detail.is_empty() {
            match self.exit {
                Some(code) => write!(f, "{} failed with exit code {code}", self.what),
                None => write!(f, "{} was stopped", self.what),
            }
        } else {
            write!(f, "{} failed: {}", self.what, self.detail)
        }
    }
}

/// `text` with every `secret` replaced by `***`, and the password part of any
/// `scheme://user:password@host` URL too.
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_string();
    // Longest first, so a secret that contains another is hidden whole.
    let mut secrets: Vec<&String> = secrets.iter().filter(|s| !s.is_empty()).collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in secrets {
        text = text.replace(secret.as_str(), "***");
    }
    redact_urls(&text)
}

/// Hides the user information of URLs in `text` (`https://user:pw@host` →
/// `https://***@host`): a password written into a repository URL must not reach a
/// Passage's status.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let authority_end = after
            .find(|c: char| c == '/' || c == '\'' || c == '"' || c.is_whitespace())
            .unwrap_or(after.len());
        let authority = &after[..authority_end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[authority_end..];
    }
    out.push_str(rest);
    out
}

/// `value` quoted for a POSIX shell (`GIT_SSH_COMMAND` is run by one).
pub(crate) fn shell_quote(value: &OsStr) -> String {
    let value = value.to_string_lossy();
    format!("'{}'", value.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::testing::failure;

    #[test]
    fn failures_are_sorted_by_what_git_said() {
        let cases = [
            (
                "remote: Invalid username or password.; fatal: Authentication failed for 'https://github.com/o/r.git/'",
                Class::Auth,
            ),
            (
                "fatal: could not read Username for 'https://example.com': terminal prompts disabled",
                Class::Auth,
            ),
            (
                "git@github.com: Permission denied (publickey).; fatal: Could not read from remote repository.",
                Class::Auth,
            ),
            (
                "fatal: unable to access 'https://nowhere.invalid/r.git/': Could not resolve host: nowhere.invalid",
                Class::Unreachable,
            ),
            (
                "fatal: unable to access 'http://127.0.0.1:1/r.git/': Failed to connect to 127.0.0.1 port 1: Connection refused",
                Class::Unreachable,
            ),
            (
                "fatal: repository 'https://example.com/r/' not found",
                Class::Unreachable,
            ),
            (
                "fatal: repository '/srv/none.git' does not exist",
                Class::Unreachable,
            ),
            (
                "fatal: '/srv/none.git' does not appear to be a git repository",
                Class::Unreachable,
            ),
            (
                "To /srv/r.git; ! [rejected]        main -> main (non-fast-forward); error: failed to push some refs to '/srv/r.git'",
                Class::Rejected,
            ),
            (
                "! [remote rejected] main -> main (pre-receive hook declined)",
                Class::Rejected,
            ),
            ("fatal: bad object HEAD", Class::Other),
            (
                "warning: Could not find remote branch env/x to clone.; fatal: Remote branch env/x not found in upstream origin",
                Class::Other,
            ),
        ];
        for (detail, class) in cases {
            assert_eq!(failure(detail).class(), class, "{detail}");
        }
    }

    #[test]
    fn errors_carry_the_class() {
        use super::super::Kind;
        let kinds = [
            ("Authentication failed", Class::Auth),
            ("Connection refused", Class::Unreachable),
            ("the remote did not answer within 60 s", Class::Unreachable),
            ("[rejected] (fetch first)", Class::Rejected),
            ("something odd", Class::Other),
        ];
        for (detail, class) in kinds {
            assert_eq!(
                failure(detail).remote().kind,
                Kind::Remote(class),
                "{detail}"
            );
        }
        let local = failure("Authentication failed").local();
        assert_eq!(
            local,
            Error::local("git push failed: Authentication failed")
        );
    }

    #[tokio::test]
    async fn a_run_over_its_time_limit_is_killed_and_unreachable() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut git = Git::new(dir.path())
            .await
            .expect("a private area")
            .with_timeout(Duration::from_secs(1));
        // An ssh "transport" that never answers.
        git.set_env("GIT_SSH_COMMAND", "sleep 5 #");
        let started = std::time::Instant::now();
        let failure = git
            .run(dir.path(), &["ls-remote", "ssh://example.invalid/r.git"])
            .await
            .expect_err("no answer");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            failure.to_string(),
            "git ls-remote failed: the remote did not answer within 1 s"
        );
        assert_eq!(failure.class(), Class::Unreachable);
    }

    /// Output past what a run may hold stops git while it prints (issue 50): it is
    /// never collected whole. A log read as fields keeps each field's start only.
    #[tokio::test]
    async fn output_is_read_as_a_bounded_stream() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut git = Git::new(&dir.path().join("private"))
            .await
            .expect("a private area");
        git.set_config("alias.flood", "!yes");
        git.set_config(
            "alias.fields",
            "!printf 'abcdef\\0gh\\0'; yes | head -c 1000000",
        );
        let failure = git.run(dir.path(), &["flood"]).await.expect_err("too much");
        assert_eq!(
            failure.to_string(),
            "git flood failed: it printed more than 16 MiB, the most it may"
        );
        let mut fields = Vec::new();
        git.run_fields(dir.path(), &["fields"], 0, 3, &mut |f: output::Field<
            '_,
        >| {
            fields.push((String::from_utf8_lossy(f.bytes).into_owned(), f.cut));
        })
        .await
        .expect("read");
        assert_eq!(
            fields,
            [
                ("abc".to_string(), true),
                ("gh".to_string(), false),
                ("y\ny".to_string(), true)
            ]
        );
    }

    /// A bounded run whose directory grows past its limit is stopped while it runs —
    /// git and what it started, whose later writes never happen.
    #[tokio::test]
    async fn a_run_that_fills_its_directory_past_the_limit_is_stopped() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut git = Git::new(&dir.path().join("private"))
            .await
            .expect("a private area");
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).expect("a directory");
        // An alias runs a shell, as a transport helper runs beside git: it writes 4
        // MiB, then would write a marker two seconds later.
        git.set_config(
            "alias.fill",
            "!head -c 4194304 /dev/zero > out/big && sleep 2 && touch out/later",
        );
        let started = std::time::Instant::now();
        let stopped = git
            .run_bounded(dir.path(), &["fill"], &out, 1 << 20)
            .await
            .expect_err("too large");
        let took = started.elapsed();
        eprintln!("stopped after {took:?}: {stopped:?}");
        assert!(
            matches!(&stopped, Bounded::TooLarge { what, size } if what == "git fill" && *size > 1 << 20),
            "{stopped:?}"
        );
        assert!(took < Duration::from_secs(2), "{took:?}");
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!out.join("later").exists(), "what git started was stopped");
        // Within its limit, a bounded run is a run.
        let said = git
            .run_bounded(dir.path(), &["--version"], &out, 64 << 20)
            .await
            .expect("within the limit");
        assert!(said.starts_with("git version"), "{said}");
    }

    #[test]
    fn sizes_count_files_not_links() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir_all(dir.path().join("a/b")).expect("directories");
        std::fs::write(dir.path().join("a/one"), [0_u8; 1000]).expect("written");
        std::fs::write(dir.path().join("a/b/two"), [0_u8; 24]).expect("written");
        std::os::unix::fs::symlink("/", dir.path().join("a/root")).expect("a link");
        assert_eq!(size_of(dir.path()), 1024);
        assert_eq!(size_of(&dir.path().join("missing")), 0);
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        for (bytes, text) in [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1 KiB"),
            (1536, "1.5 KiB"),
            (300 << 10, "300 KiB"),
            (DEFAULT_MAX_CHECKOUT_SIZE, "512 MiB"),
            (3 << 29, "1.5 GiB"),
            (5 << 50, "5120 TiB"),
        ] {
            assert_eq!(size_text(bytes), text, "{bytes}");
        }
    }

    #[test]
    fn secrets_and_url_passwords_are_hidden() {
        let secrets = vec!["s3cret".to_string(), "s3cret-and-more".to_string()];
        assert_eq!(
            redact(
                "fatal: unable to access 'https://bot:s3cret-and-more@git.example.com/r.git/': 403",
                &secrets
            ),
            "fatal: unable to access 'https://***@git.example.com/r.git/': 403"
        );
        assert_eq!(
            redact("token s3cret refused; see http://host/x", &secrets),
            "token *** refused; see http://host/x"
        );
        assert_eq!(
            redact_urls("ssh://git@host:22/r and https://u:p@h and file:///srv/r.git"),
            "ssh://***@host:22/r and https://***@h and file:///srv/r.git"
        );
    }

    #[test]
    fn long_output_keeps_its_end_and_drops_hints() {
        let stderr = format!("{}\nhint: do this\nfatal: the cause", "x".repeat(3000));
        let kept = detail(&stderr, "");
        assert!(
            kept.starts_with('…') && kept.ends_with("; fatal: the cause"),
            "{kept}"
        );
        assert!(kept.len() <= DETAIL_LIMIT + '…'.len_utf8());
        assert!(!kept.contains("hint"));
        assert_eq!(detail("", " only stdout \n"), "only stdout");
        assert_eq!(
            detail(
                "error: failed to push\n",
                "To /r.git\n!\tHEAD:refs/heads/main\t[rejected] (fetch first)\n"
            ),
            "error: failed to push; To /r.git; ! HEAD:refs/heads/main [rejected] (fetch first)"
        );
    }

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        assert_eq!(shell_quote(OsStr::new("/w/a b/it's")), r"'/w/a b/it'\''s'");
    }
}
