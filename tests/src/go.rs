//! Building programs from published Go modules, once per machine: the cache they go
//! to, the lock that lets one process build while another waits, and `go` commands
//! that print a heartbeat and say what failed. The control plane ([`crate::Binaries`])
//! and the programs the steps run ([`crate::Tool`]) share it.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

/// The oldest Go that builds everything here.
const MINIMUM_GO: (u32, u32) = (1, 26);
/// A network or build step that takes longer than this has hung.
const STEP_TIMEOUT: Duration = Duration::from_secs(40 * 60);

/// The machine's cache for what is built here: `$HECATE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/hecate`, else `~/.cache/hecate` — outside the repository, so every
/// later run and every fresh clone reuses it.
pub(crate) fn cache_base() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("HECATE_CACHE_DIR") {
        Ok(PathBuf::from(dir))
    } else if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        Ok(PathBuf::from(dir).join("hecate"))
    } else if let Some(home) = std::env::var_os("HOME") {
        Ok(PathBuf::from(home).join(".cache/hecate"))
    } else {
        bail!("no cache directory: set HECATE_CACHE_DIR (or HOME)");
    }
}

/// Runs `build` unless `ready` already holds, with `dir`'s build lock held: two
/// processes may want the same thing at once (a test run and `cargo xtask`), so one
/// builds and the other waits and then finds it built.
pub(crate) fn build_once(
    part: &str,
    dir: &Path,
    ready: &dyn Fn() -> bool,
    build: &mut dyn FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if ready() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let lock_path = dir.join(".build.lock");
    let lock = std::fs::File::create(&lock_path)
        .with_context(|| format!("creating {}", lock_path.display()))?;
    if lock.try_lock().is_err() {
        progress(
            part,
            &format!(
                "waiting for another process building into {}",
                dir.display()
            ),
        );
        lock.lock().context("waiting for the build lock")?;
    }
    if !ready() {
        build()?;
    }
    Ok(())
}

/// Writes a progress line straight to stderr: the test harness captures `eprintln!`,
/// and a ten-minute build should not look like a hang.
pub(crate) fn progress(part: &str, line: &str) {
    let _ = writeln!(std::io::stderr(), "[{part}] {line}");
}

/// The Go toolchain's version, or a clear error when there is none or it is too old.
/// `building` names what needs it; `otherwise` says how to do without Go.
pub(crate) fn check_go(building: &str, otherwise: &str) -> anyhow::Result<String> {
    let output = Command::new("go")
        .args(["env", "GOVERSION"])
        .env("GOTOOLCHAIN", "local")
        .output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        _ => bail!(
            "building {building} needs Go {}.{} or newer, and `go` is not on PATH. \
             Install Go, or {otherwise}.",
            MINIMUM_GO.0,
            MINIMUM_GO.1,
        ),
    };
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let mut numbers = version
        .trim_start_matches("go")
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let found = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    if found < MINIMUM_GO {
        bail!(
            "building {building} needs Go {}.{} or newer; found {version}",
            MINIMUM_GO.0,
            MINIMUM_GO.1
        );
    }
    Ok(version)
}

fn go_command(dir: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> Command {
    let mut command = Command::new("go");
    command
        .args(args)
        .current_dir(dir)
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off")
        .env("GOFLAGS", "-mod=mod")
        .env("CGO_ENABLED", "0");
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

/// Runs one `go` command in `dir` (with `env` added) and returns its stdout, printing a
/// heartbeat under `part` while it works and, when it fails, the end of what it said —
/// naming the network when that is what failed.
pub(crate) fn go_step(
    part: &str,
    what: &str,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &OsStr)],
) -> anyhow::Result<String> {
    progress(part, &format!("{what}…"));
    let started = Instant::now();
    let mut child = go_command(dir, args, env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting go {}", args.join(" ")))?;
    let mut stdout = child.stdout.take().context("go's stdout")?;
    let stdout = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
        out
    });
    let stderr = child.stderr.take().context("go's stderr")?;
    let (lines_tx, lines_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut tail: Vec<String> = Vec::new();
    let mut last_heartbeat = Instant::now();
    let status = loop {
        while let Ok(line) = lines_rx.try_recv() {
            tail.push(line);
            if tail.len() > 40 {
                tail.remove(0);
            }
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > STEP_TIMEOUT {
            let _ = child.kill();
            bail!(
                "go {} did not finish within {STEP_TIMEOUT:?}; giving up",
                args.join(" ")
            );
        }
        if last_heartbeat.elapsed() > Duration::from_secs(30) {
            progress(
                part,
                &format!(
                    "  still {}… ({:.0?} so far)",
                    what.to_lowercase(),
                    started.elapsed()
                ),
            );
            last_heartbeat = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    tail.extend(lines_rx.try_iter());
    if !status.success() {
        let said = tail.join("\n");
        let hint = if [
            "dial tcp",
            "no such host",
            "proxyconnect",
            "i/o timeout",
            "connection refused",
        ]
        .iter()
        .any(|s| said.contains(s))
        {
            "\nThe Go module proxy could not be reached: the first build needs network access (GOPROXY)."
        } else {
            ""
        };
        bail!("go {} failed ({status}):\n{said}{hint}", args.join(" "));
    }
    stdout
        .join()
        .map_err(|_| anyhow::anyhow!("reading go's output failed"))
}

pub(crate) fn path_str(path: &Path) -> anyhow::Result<String> {
    path.to_str()
        .map(str::to_owned)
        .with_context(|| format!("{} is not UTF-8", path.display()))
}
