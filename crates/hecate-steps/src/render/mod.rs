//! `render-kustomize` and `render-helm` (spec §5.10, §5.11): manifests rendered from
//! the checkout into one file, as Argo CD's repo server renders them — by running the
//! real `kustomize build` and `helm template`, never a re-implementation, so what a
//! Passage commits is what those programs make of the same sources.
//!
//! Both steps share what is here: the program runs with `tokio::process` (never
//! blocking the runtime), in the work directory, with a time limit ([`RUN_LIMIT`]), a
//! bounded output ([`OUTPUT_LIMIT`], read as every child's output is:
//! [`hecate_sources::output`]), the end of its stderr kept for the message, in a
//! process group of its own that is killed whole when it exits, times out, writes too
//! much or the step is dropped — so no plugin or wrapper's child outlives a render.
//! Its environment is not the controller's: only where programs are
//! and the proxies and CA bundle the pod was given (as for git, decision 54), with
//! `HOME`, the XDG directories, Helm's homes and `TMPDIR` in a scratch area of the
//! work directory (`.hecate/render`) made afresh for every run, so neither program
//! reads or writes the controller's home or its kubeconfig, and neither is given a
//! cluster to talk to.
//!
//! The result is written only when its bytes differ from the file there (so a re-run
//! answers `changed: false` and a later `git-commit` finds a clean tree), through a
//! sibling renamed into place. Every path a step reads is resolved inside the work
//! directory, symbolic links followed; failures name paths relative to it, never the
//! controller's own directories. Every failure is terminal: the same sources render
//! the same way on a second try.

mod helm;
mod kustomize;

use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hecate_sources::output;
use tokio::process::Command;

pub use helm::RenderHelm;
pub use kustomize::{ALLOW_LOAD_RESTRICTIONS_NONE, RenderKustomize};

use super::runner::{StepContext, StepError};
use crate::reason::Reason;

/// How long one run may take: Argo CD's default for the same programs
/// (`ARGOCD_EXEC_TIMEOUT`, 90 s). A render that takes longer is broken, not busy.
pub const RUN_LIMIT: Duration = Duration::from_secs(90);
/// The most output a render may produce (64 MiB); more is a failure, not a file.
pub const OUTPUT_LIMIT: usize = 64 << 20;
/// How much of a program's stderr is kept (its end: the cause is usually last).
const STDERR_LIMIT: usize = 16 << 10;
/// How many characters of what a program said a failure message keeps.
const DETAIL_LIMIT: usize = 1500;
/// The scratch area of a render, under the work directory's private area (`.hecate`,
/// where the git steps keep their `HOME`).
const SCRATCH: &str = ".hecate/render";

/// A program a render step runs, and how its path is set.
#[derive(Clone, Copy, Debug)]
struct Program<'a> {
    /// `kustomize`, `helm`.
    name: &'static str,
    /// The controller flag that sets its path.
    flag: &'static str,
    /// The path it is run as (a bare name is looked up on PATH).
    path: &'a Path,
}

/// One render in one work directory: where it may read and write, and the scratch
/// area its program runs with.
struct Render {
    /// The work directory as the step was given it.
    root: PathBuf,
    /// The same, symbolic links resolved: every path read must stay under it.
    real_root: PathBuf,
    /// `<work dir>/.hecate/render`, made afresh.
    scratch: PathBuf,
    /// Text replaced in what a program says, longest first: the scratch files by what
    /// they stand for, then the work directory by nothing.
    aliases: Vec<(String, String)>,
}

impl Render {
    /// Prepares an empty scratch area in `ctx`'s work directory (the directory itself
    /// is made when a restart lost it).
    async fn new(ctx: &StepContext<'_>) -> Result<Self, StepError> {
        let root = ctx.work_dir.to_path_buf();
        let failed = |e: std::io::Error| {
            StepError::terminal(
                Reason::RenderFailed,
                format!("cannot prepare the work directory: {e}"),
            )
        };
        tokio::fs::create_dir_all(&root).await.map_err(failed)?;
        let real_root = tokio::fs::canonicalize(&root).await.map_err(failed)?;
        let scratch = real_root.join(SCRATCH);
        match tokio::fs::remove_dir_all(&scratch).await {
            Err(e) if e.kind() != ErrorKind::NotFound => return Err(failed(e)),
            _ => {}
        }
        for dir in ["home", "tmp"] {
            let mut builder = tokio::fs::DirBuilder::new();
            builder.recursive(true).mode(0o700);
            builder.create(scratch.join(dir)).await.map_err(failed)?;
        }
        let mut aliases = Vec::new();
        for dir in [&root, &real_root] {
            let dir = dir.to_string_lossy().trim_end_matches('/').to_string();
            aliases.push((format!("{dir}/"), String::new()));
            aliases.push((dir, ".".to_string()));
        }
        Ok(Self {
            root,
            real_root,
            scratch,
            aliases,
        })
    }

    /// Says `alias` wherever a program names `path` (a scratch file standing for a
    /// part of the configuration).
    fn alias(&mut self, path: &Path, alias: &str) {
        self.aliases
            .push((path.to_string_lossy().into_owned(), alias.to_string()));
    }

    /// `text` with the work directory's prefix stripped and scratch files named by
    /// what they stand for.
    fn strip(&self, text: &str) -> String {
        strip(text, &self.aliases)
    }

    /// An existing path `relative` names (the `field` of the configuration), symbolic
    /// links followed: missing is `FileNotFound`, outside the work directory
    /// `InvalidConfig`.
    async fn existing(
        &self,
        ctx: &StepContext<'_>,
        field: &str,
        relative: &str,
    ) -> Result<PathBuf, StepError> {
        let path = ctx.in_work_dir(relative)?;
        let real = match tokio::fs::canonicalize(&path).await {
            Ok(real) => real,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                return Err(StepError::terminal(
                    Reason::FileNotFound,
                    format!("{field}: {relative} does not exist in the work directory"),
                ));
            }
            Err(e) => {
                return Err(StepError::terminal(
                    Reason::RenderFailed,
                    format!(
                        "{field}: cannot open {relative}: {}",
                        self.strip(&e.to_string())
                    ),
                ));
            }
        };
        if !real.starts_with(&self.real_root) {
            return Err(StepError::config(format!(
                "{field}: {relative:?} leads out of the work directory through a symbolic link"
            )));
        }
        Ok(real)
    }

    /// Refuses a directory `relative` names (the `field` of the configuration) when a
    /// symbolic link under it leads out of the work directory: Helm follows links when
    /// it loads a chart, and a chart must not carry the controller's files into a
    /// rendering.
    async fn no_link_out(&self, field: &str, relative: &str, dir: &Path) -> Result<(), StepError> {
        let (dir, root) = (dir.to_path_buf(), self.real_root.clone());
        let found = tokio::task::spawn_blocking(move || link_out_of(&dir, &root))
            .await
            .map_err(|e| StepError::terminal(Reason::RenderFailed, format!("{field}: {e}")))?;
        match found {
            Ok(None) => Ok(()),
            Ok(Some(link)) => Err(StepError::config(format!(
                "{field}: {} in {relative} leads out of the work directory",
                self.strip(&link.to_string_lossy())
            ))),
            Err(e) => Err(StepError::terminal(
                Reason::RenderFailed,
                format!(
                    "{field}: cannot read {relative}: {}",
                    self.strip(&e.to_string())
                ),
            )),
        }
    }

    /// Runs `program` with `args` in the work directory and returns what it wrote on
    /// stdout; a failure says what it said on stderr, paths stripped. The program, and
    /// whatever it started, is killed once `limit` has passed.
    async fn run(
        &self,
        program: Program<'_>,
        args: &[OsString],
        limit: Duration,
    ) -> Result<Vec<u8>, StepError> {
        let what = format!(
            "{} {}",
            program.name,
            args.first()
                .map(|a| a.to_string_lossy())
                .unwrap_or_default()
        );
        let mut command = Command::new(program.path);
        command
            .args(args)
            .current_dir(&self.real_root)
            .env_clear()
            .envs(environment(&self.scratch, |key| std::env::var_os(key)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A group of its own: whatever it starts (plugins, a wrapper's children) is
            // killed with it.
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| StepError::terminal(Reason::RenderFailed, cannot_start(program, &e)))?;
        // Declared after `child`, so dropped before it: the group is killed while its
        // leader is not yet reaped, and its id cannot have been taken by another.
        let mut group = Group::of(child.id());
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let finished = async {
            let exited = async {
                let status = child.wait().await?;
                // The program is done; what it left running is not (and would hold its
                // pipes open until the time limit).
                group.kill();
                Ok(status)
            };
            tokio::try_join!(
                output::read_all(stdout, OUTPUT_LIMIT),
                output::read_tail(stderr, STDERR_LIMIT),
                exited,
            )
        };
        let outcome = tokio::time::timeout(limit, finished).await;
        group.kill();
        let (stdout, stderr, status) = match outcome {
            Ok(Ok(done)) => done,
            Ok(Err(e)) => {
                let _ = child.kill().await;
                let why = if output::is_too_much(&e) {
                    format!("wrote more than {} MiB", OUTPUT_LIMIT >> 20)
                } else {
                    format!("could not be read: {e}")
                };
                return Err(StepError::terminal(
                    Reason::RenderFailed,
                    format!("{what} {why}"),
                ));
            }
            Err(_) => {
                let _ = child.kill().await;
                return Err(StepError::terminal(
                    Reason::RenderFailed,
                    format!("{what} did not finish within {limit:?}"),
                ));
            }
        };
        if status.success() {
            return Ok(stdout);
        }
        let said = self.strip(&detail(&String::from_utf8_lossy(&stderr)));
        let message = match (said.is_empty(), status.code()) {
            (false, _) => format!("{what} failed: {said}"),
            (true, Some(code)) => format!("{what} failed with exit code {code}"),
            (true, None) => format!("{what} was stopped by a signal"),
        };
        Err(StepError::terminal(Reason::RenderFailed, message))
    }

    /// Writes `bytes` to `out` unless the file already holds them, making its parent
    /// directory; `true` when written.
    async fn write(
        &self,
        ctx: &StepContext<'_>,
        out: &str,
        bytes: &[u8],
    ) -> Result<bool, StepError> {
        let path = ctx.in_work_dir(out)?;
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            return Err(StepError::config(format!("out: {out:?} names no file")));
        };
        let failed = |e: std::io::Error| {
            StepError::terminal(
                Reason::RenderFailed,
                format!("cannot write {out}: {}", self.strip(&e.to_string())),
            )
        };
        let parent = path.parent().unwrap_or(&self.root);
        tokio::fs::create_dir_all(parent).await.map_err(failed)?;
        let parent = tokio::fs::canonicalize(parent).await.map_err(failed)?;
        if !parent.starts_with(&self.real_root) {
            return Err(StepError::config(format!(
                "out: {out:?} leads out of the work directory through a symbolic link"
            )));
        }
        let target = parent.join(&name);
        let permissions = match tokio::fs::metadata(&target).await {
            Ok(meta) if meta.is_dir() => {
                return Err(StepError::config(format!("out: {out} is a directory")));
            }
            Ok(meta) => {
                if tokio::fs::read(&target).await.map_err(failed)? == bytes {
                    return Ok(false);
                }
                Some(meta.permissions())
            }
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(failed(e)),
        };
        let sibling = parent.join(format!(".{name}.hecate-render"));
        let written = async {
            tokio::fs::write(&sibling, bytes).await?;
            if let Some(permissions) = permissions {
                tokio::fs::set_permissions(&sibling, permissions).await?;
            }
            tokio::fs::rename(&sibling, &target).await
        }
        .await;
        if let Err(e) = written {
            // Best effort: the sibling is scratch, and the step fails either way.
            let _ = tokio::fs::remove_file(&sibling).await;
            return Err(failed(e));
        }
        Ok(true)
    }

    /// Removes the scratch area (best effort: the next run starts by removing it).
    async fn finish(self) {
        let _ = tokio::fs::remove_dir_all(&self.scratch).await;
    }
}

/// The process group a program runs in (it leads it: `process_group(0)`), killed whole
/// once — when the program has exited, when its time is up or its output too large, or
/// when the step is dropped (an abort, a shutdown) — so that nothing it started outlives
/// the render. A process that left the group (`setsid`) is beyond reach.
struct Group(Option<nix::unistd::Pid>);

impl Group {
    /// The group led by the process `id` (none when it has already been reaped).
    fn of(id: Option<u32>) -> Self {
        Self(
            id.and_then(|id| i32::try_from(id).ok())
                .map(nix::unistd::Pid::from_raw),
        )
    }

    /// Sends SIGKILL to every process in the group, once; a group already gone is no
    /// failure.
    fn kill(&mut self) {
        if let Some(group) = self.0.take() {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A program's whole environment: of the controller's own (`inherited`), only what git
/// keeps too (where programs are, proxies, the CA bundle); every home it could read or
/// write in `scratch`.
fn environment(
    scratch: &Path,
    inherited: impl Fn(&str) -> Option<OsString>,
) -> Vec<(String, OsString)> {
    let home = scratch.join("home");
    let mut env: Vec<(String, OsString)> = hecate_sources::git::INHERITED
        .iter()
        .filter_map(|key| inherited(key).map(|value| (key.to_string(), value)))
        .collect();
    let private = [
        ("HOME", home.clone()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("HELM_CONFIG_HOME", home.join(".config/helm")),
        ("HELM_CACHE_HOME", home.join(".cache/helm")),
        ("HELM_DATA_HOME", home.join(".local/share/helm")),
        // A file that is not there: no cluster is ever in reach.
        ("KUBECONFIG", home.join("no-kubeconfig")),
        ("TMPDIR", scratch.join("tmp")),
    ];
    env.extend(private.map(|(key, path)| (key.to_string(), path.into_os_string())));
    // kustomize clones remote bases with git: no prompts, no system configuration.
    env.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    env.push(("GIT_CONFIG_NOSYSTEM".into(), "1".into()));
    env
}

/// The first symbolic link under `dir` — linked directories inside `root` followed,
/// each once — that leads out of `root`; a dangling link is left to the program.
fn link_out_of(dir: &Path, root: &Path) -> std::io::Result<Option<PathBuf>> {
    let mut pending = vec![dir.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    while let Some(dir) = pending.pop() {
        if !seen.insert(std::fs::canonicalize(&dir)?) {
            continue;
        }
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_symlink() {
                match std::fs::canonicalize(entry.path()) {
                    Ok(target) if !target.starts_with(root) => return Ok(Some(entry.path())),
                    Ok(target) if target.is_dir() => pending.push(target),
                    _ => {}
                }
            } else if kind.is_dir() {
                pending.push(entry.path());
            }
        }
    }
    Ok(None)
}

/// The failure to start `program`, naming the flag that sets its path when it is not
/// there.
fn cannot_start(program: Program<'_>, error: &std::io::Error) -> String {
    let (name, flag, path) = (program.name, program.flag, program.path.display());
    let bare = program.path.components().count() == 1;
    match error.kind() {
        ErrorKind::NotFound if bare => format!(
            "{name} is not installed: no {path:?} on the controller's PATH; install it, or set \
             its path with {flag}"
        ),
        ErrorKind::NotFound => {
            format!(
                "{name} is not installed at {path} (set by {flag}); install it there, or fix {flag}"
            )
        }
        _ => format!("cannot run {name} at {path} (set by {flag}): {error}"),
    }
}

/// What a program said on stderr, as one line: each line trimmed, blank ones and
/// Helm's `--debug` advice (no one can pass it) dropped, `Error: ` prefixes removed;
/// the end kept when it is long.
fn detail(stderr: &str) -> String {
    let mut text = String::new();
    for line in stderr.lines() {
        let line = line.trim();
        let line = line.strip_prefix("Error: ").unwrap_or(line);
        if line.is_empty() || line.contains("--debug") {
            continue;
        }
        if !text.is_empty() {
            text.push_str(if text.ends_with(':') { " " } else { "; " });
        }
        text.push_str(line);
    }
    let chars = text.chars().count();
    if chars <= DETAIL_LIMIT {
        return text;
    }
    let kept: String = text.chars().skip(chars - DETAIL_LIMIT).collect();
    format!("…{kept}")
}

/// `text` with each `(from, to)` of `aliases` replaced, the longest `from` first (so
/// a scratch file inside the work directory keeps its alias). A `from` that does not
/// end with `/` is replaced only where a name ends (`/w/uid` is not a prefix of
/// `/w/uidx`).
fn strip(text: &str, aliases: &[(String, String)]) -> String {
    let mut aliases: Vec<&(String, String)> = aliases
        .iter()
        .filter(|(from, _)| !from.is_empty())
        .collect();
    aliases.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    let name_goes_on = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while let Some(c) = rest.chars().next() {
        for (from, to) in &aliases {
            if let Some(after) = rest.strip_prefix(from.as_str())
                && (from.ends_with('/') || !after.starts_with(name_goes_on))
            {
                out.push_str(to);
                rest = after;
                continue 'scan;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `bytes`, ending with a newline.
fn with_newline(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.last().is_some_and(|b| *b != b'\n') {
        bytes.push(b'\n');
    }
    bytes
}

/// Whether a rendering holds nothing but whitespace.
fn is_empty(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn messages_name_paths_inside_the_work_directory() {
        let aliases = vec![
            ("/w/uid/".to_string(), String::new()),
            ("/w/uid".to_string(), ".".to_string()),
            (
                "/w/uid/.hecate/render/values.json".to_string(),
                "values".to_string(),
            ),
        ];
        let cases = [
            (
                "evalsymlink failure on '/w/uid/repo/missing.yaml' : lstat /w/uid/repo/missing.yaml",
                "evalsymlink failure on 'repo/missing.yaml' : lstat repo/missing.yaml",
            ),
            ("in directory '/w/uid'", "in directory '.'"),
            (
                "failed to parse /w/uid/.hecate/render/values.json: bad",
                "failed to parse values: bad",
            ),
            ("/w/uidx and /w/uid-2 stay", "/w/uidx and /w/uid-2 stay"),
        ];
        for (said, want) in cases {
            assert_eq!(strip(said, &aliases), want, "{said}");
        }
    }

    #[test]
    fn programs_see_none_of_the_controllers_homes() {
        let controller = |key: &str| match key {
            "PATH" => Some(OsString::from("/usr/bin")),
            "HTTPS_PROXY" => Some(OsString::from("http://proxy:3128")),
            // Never handed on, whatever the controller has.
            "HOME" | "KUBECONFIG" | "KUBERNETES_SERVICE_HOST" | "HELM_NAMESPACE" => {
                Some(OsString::from("/controller"))
            }
            _ => None,
        };
        let scratch = Path::new("/w/uid/.hecate/render");
        let env: BTreeMap<String, OsString> =
            environment(scratch, controller).into_iter().collect();
        assert_eq!(env["PATH"], "/usr/bin");
        assert_eq!(env["HTTPS_PROXY"], "http://proxy:3128");
        for key in [
            "HOME",
            "XDG_CONFIG_HOME",
            "XDG_CACHE_HOME",
            "XDG_DATA_HOME",
            "HELM_CONFIG_HOME",
            "HELM_CACHE_HOME",
            "HELM_DATA_HOME",
            "KUBECONFIG",
            "TMPDIR",
        ] {
            assert!(
                Path::new(&env[key]).starts_with(scratch),
                "{key}: {:?}",
                env[key]
            );
        }
        assert!(!env.contains_key("KUBERNETES_SERVICE_HOST"));
        assert!(!env.contains_key("HELM_NAMESPACE"));
        assert_eq!(env.len(), 13, "{env:?}");
    }

    #[test]
    fn of_the_controllers_environment_only_the_network_settings_reach_a_program() {
        // A controller whose environment holds every variable there is: its cluster,
        // cloud and forge credentials, Helm's and kubectl's settings, an agent.
        let scratch = Path::new("/w/uid/.hecate/render");
        let env = environment(scratch, |key| {
            Some(OsString::from(format!("controller:{key}")))
        });
        for (key, value) in &env {
            let value = value.to_string_lossy();
            if value.starts_with("controller:") {
                assert!(
                    hecate_sources::git::INHERITED.contains(&key.as_str()),
                    "{key} was handed on"
                );
            }
        }
        let env: BTreeMap<String, OsString> = env.into_iter().collect();
        for key in [
            "KUBECONFIG",
            "KUBERNETES_SERVICE_HOST",
            "KUBERNETES_SERVICE_PORT",
            "HELM_KUBETOKEN",
            "HELM_KUBEAPISERVER",
            "AWS_ACCESS_KEY_ID",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AZURE_FEDERATED_TOKEN_FILE",
            "GITHUB_TOKEN",
            "SSH_AUTH_SOCK",
            "GIT_ASKPASS",
            "FIDES_SERVER_URL",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ] {
            let value = env.get(key).map(|v| v.to_string_lossy().into_owned());
            assert!(
                value
                    .as_ref()
                    .is_none_or(|v| v.starts_with("/w/uid/.hecate/render/")),
                "{key}: {value:?}"
            );
        }
        // No cluster: the kubeconfig a program is pointed at is not there.
        assert_eq!(
            env["KUBECONFIG"],
            *"/w/uid/.hecate/render/home/no-kubeconfig"
        );
    }

    #[test]
    fn what_a_program_said_becomes_one_line() {
        let helm = "Error: app/templates/broken.yaml:1:10\n  executing \"app/templates/broken.yaml\" at <.Values.nope.x>:\n    nil pointer evaluating interface {}.x\n\nUse --debug flag to render out invalid YAML\n";
        assert_eq!(
            detail(helm),
            "app/templates/broken.yaml:1:10; executing \"app/templates/broken.yaml\" at <.Values.nope.x>: nil pointer evaluating interface {}.x"
        );
        assert_eq!(
            detail("Error: must build at directory: not a valid directory\n"),
            "must build at directory: not a valid directory"
        );
        let long = format!("{}\nError: the cause", "x".repeat(4000));
        let kept = detail(&long);
        assert!(
            kept.starts_with('…') && kept.ends_with("; the cause"),
            "{kept}"
        );
        assert_eq!(kept.chars().count(), DETAIL_LIMIT + 1);
    }

    #[test]
    fn a_missing_program_names_the_flag_that_sets_its_path() {
        let gone = std::io::Error::from(ErrorKind::NotFound);
        let bare = Program {
            name: "helm",
            flag: "--helm-path",
            path: Path::new("helm"),
        };
        let message = cannot_start(bare, &gone);
        assert!(
            message.starts_with("helm is not installed") && message.contains("--helm-path"),
            "{message}"
        );
        let placed = Program {
            path: Path::new("/opt/bin/helm"),
            ..bare
        };
        let message = cannot_start(placed, &gone);
        assert!(
            message.contains("/opt/bin/helm") && message.contains("--helm-path"),
            "{message}"
        );
    }

    #[test]
    fn a_rendering_ends_with_a_newline() {
        assert_eq!(with_newline(b"a: 1".to_vec()), b"a: 1\n");
        assert_eq!(with_newline(b"a: 1\n".to_vec()), b"a: 1\n");
        assert_eq!(with_newline(Vec::new()), b"");
        assert!(is_empty(b" \n\t\n") && is_empty(b"") && !is_empty(b"---\na: 1\n"));
    }

    #[tokio::test]
    async fn a_program_past_its_time_is_killed_and_fails_the_step() {
        let work = crate::yaml::test_support::Work::new(Vec::new());
        let ctx = work.ctx(serde_json::Value::Null);
        let render = Render::new(&ctx).await.expect("a scratch area");
        let shell = Program {
            name: "sh",
            flag: "--sh-path",
            path: Path::new("/bin/sh"),
        };
        let started = std::time::Instant::now();
        let args = ["-c", "echo started >&2; exec sleep 30"].map(OsString::from);
        let error = render
            .run(shell, &args, Duration::from_millis(300))
            .await
            .expect_err("too slow");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!((error.reason, error.terminal), (Reason::RenderFailed, true));
        assert_eq!(error.message, "sh -c did not finish within 300ms");

        let args = ["-c", "echo out; echo \"Error: in $PWD/x\" >&2; exit 3"].map(OsString::from);
        let error = render
            .run(shell, &args, Duration::from_secs(10))
            .await
            .expect_err("exit 3");
        assert_eq!(error.message, "sh -c failed: in x");
        let args = ["-c", "exit 4"].map(OsString::from);
        let error = render
            .run(shell, &args, RUN_LIMIT)
            .await
            .expect_err("exit 4");
        assert_eq!(error.message, "sh -c failed with exit code 4");
        let args = ["-c", "printf 'a: 1'"].map(OsString::from);
        assert_eq!(
            render.run(shell, &args, RUN_LIMIT).await.expect("runs"),
            b"a: 1"
        );
        render.finish().await;
        assert!(!work.path().join(SCRATCH).exists());
    }
}
