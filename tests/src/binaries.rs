//! Finding — or, the first time, building — `etcd` and `kube-apiserver`.
//!
//! With `KUBEBUILDER_ASSETS` set (the envtest convention, so `setup-envtest` users are
//! served) the binaries come from there. Otherwise they are built once with the
//! machine's Go toolchain from the published Go modules, pinned below, into a cache
//! outside the repository (`$HECATE_CACHE_DIR`, else `$XDG_CACHE_HOME/hecate`, else
//! `~/.cache/hecate`), so every later run and every fresh clone on the machine reuses
//! them.
//!
//! `k8s.io/kubernetes` pins its staging modules (`k8s.io/api`, `k8s.io/apiserver`, …)
//! at `v0.0.0` and `replace`s them with directories that the published module does not
//! carry, so it cannot be built as a plain dependency. The build writes a throwaway
//! module that requires it and replaces each staging module with its matching
//! `v0.<minor>.<patch>` release — the list is read from the published `go.mod`, so it
//! stays right when the pin moves. etcd's `main` lives in a module that is not
//! published on its own, so a three-line wrapper around `etcdmain.Main` builds it.

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

/// The Kubernetes release the control plane runs (k8s-openapi 0.29 covers 1.33–1.37).
pub const KUBERNETES_VERSION: &str = "v1.36.3";
/// The etcd release the control plane runs (the 3.6 line Kubernetes 1.36 is tested with).
pub const ETCD_VERSION: &str = "v3.6.16";
/// The oldest Go that builds both.
const MINIMUM_GO: (u32, u32) = (1, 26);
/// A network or build step that takes longer than this has hung.
const STEP_TIMEOUT: Duration = Duration::from_secs(40 * 60);

/// Where the two binaries are.
#[derive(Clone, Debug)]
pub struct Binaries {
    /// The `etcd` executable.
    pub etcd: PathBuf,
    /// The `kube-apiserver` executable.
    pub kube_apiserver: PathBuf,
}

impl Binaries {
    /// The binaries from `KUBEBUILDER_ASSETS`, or from the cache, building them first
    /// when they are not there yet. Progress goes to stderr.
    pub fn locate_or_build() -> anyhow::Result<Self> {
        if let Some(assets) = std::env::var_os("KUBEBUILDER_ASSETS") {
            let dir = PathBuf::from(assets);
            let binaries = Self::in_dir(&dir);
            for path in [&binaries.etcd, &binaries.kube_apiserver] {
                if !path.is_file() {
                    bail!(
                        "KUBEBUILDER_ASSETS is {} but {} is not there",
                        dir.display(),
                        path.display()
                    );
                }
            }
            return Ok(binaries);
        }
        let dir = cache_dir()?;
        let binaries = Self::in_dir(&dir);
        if binaries.exist() {
            return Ok(binaries);
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        // Two processes may want the binaries at once (a test run and `cargo xtask`):
        // one builds, the other waits and then finds them.
        let lock_path = dir.join(".build.lock");
        let lock = std::fs::File::create(&lock_path)
            .with_context(|| format!("creating {}", lock_path.display()))?;
        if lock.try_lock().is_err() {
            progress(&format!(
                "waiting for another process building the control plane into {}",
                dir.display()
            ));
            lock.lock().context("waiting for the build lock")?;
        }
        if !binaries.exist() {
            build(&dir, &binaries)?;
        }
        Ok(binaries)
    }

    fn in_dir(dir: &Path) -> Self {
        Self {
            etcd: dir.join("etcd"),
            kube_apiserver: dir.join("kube-apiserver"),
        }
    }

    fn exist(&self) -> bool {
        self.etcd.is_file() && self.kube_apiserver.is_file()
    }
}

/// `<cache>/control-plane/<kubernetes>-etcd<etcd>`.
pub fn cache_dir() -> anyhow::Result<PathBuf> {
    let base = if let Some(dir) = std::env::var_os("HECATE_CACHE_DIR") {
        PathBuf::from(dir)
    } else if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        PathBuf::from(dir).join("hecate")
    } else if let Some(home) = std::env::var_os("HOME") {
        PathBuf::from(home).join(".cache/hecate")
    } else {
        bail!("no cache directory: set HECATE_CACHE_DIR (or HOME)");
    };
    Ok(base
        .join("control-plane")
        .join(format!("{KUBERNETES_VERSION}-etcd{ETCD_VERSION}")))
}

/// Writes a progress line straight to stderr: the test harness captures `eprintln!`,
/// and a ten-minute build should not look like a hang.
pub(crate) fn progress(line: &str) {
    let _ = writeln!(std::io::stderr(), "[control-plane] {line}");
}

fn build(dir: &Path, binaries: &Binaries) -> anyhow::Result<()> {
    let go = check_go()?;
    let started = Instant::now();
    progress(&format!(
        "building etcd {ETCD_VERSION} and kube-apiserver {KUBERNETES_VERSION} with {go} into {} \
         (first use only; about 10 minutes on two cores)",
        dir.display()
    ));
    let work = dir.join(".build");
    let _ = std::fs::remove_dir_all(&work);

    let etcd_module = work.join("etcd");
    std::fs::create_dir_all(&etcd_module)?;
    std::fs::write(
        etcd_module.join("go.mod"),
        format!(
            "module hecate.dev/build/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 {ETCD_VERSION}\n"
        ),
    )?;
    std::fs::write(
        etcd_module.join("main.go"),
        "package main\n\nimport (\n\t\"os\"\n\n\t\"go.etcd.io/etcd/server/v3/etcdmain\"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n",
    )?;
    go_step("resolving etcd's modules", &etcd_module, &["mod", "tidy"])?;
    go_step(
        "compiling etcd",
        &etcd_module,
        &[
            "build",
            "-trimpath",
            "-ldflags",
            "-s -w",
            "-o",
            &path_str(&work.join("etcd.bin"))?,
            ".",
        ],
    )?;

    let apiserver_module = work.join("kube-apiserver");
    std::fs::create_dir_all(&apiserver_module)?;
    std::fs::write(
        apiserver_module.join("go.mod"),
        "module hecate.dev/build/kube-apiserver\n\ngo 1.26.0\n",
    )?;
    let upstream_mod = go_step(
        "downloading k8s.io/kubernetes",
        &apiserver_module,
        &[
            "mod",
            "download",
            "-json",
            &format!("k8s.io/kubernetes@{KUBERNETES_VERSION}"),
        ],
    )?;
    let upstream_mod: serde_json::Value =
        serde_json::from_str(&upstream_mod).context("reading `go mod download -json`")?;
    let upstream_mod_path = upstream_mod["GoMod"]
        .as_str()
        .context("`go mod download -json` named no go.mod")?;
    let upstream = std::fs::read_to_string(upstream_mod_path)
        .with_context(|| format!("reading {upstream_mod_path}"))?;
    std::fs::write(apiserver_module.join("go.mod"), wrapper_go_mod(&upstream)?)?;
    std::fs::write(
        apiserver_module.join("tools.go"),
        "//go:build tools\n\npackage tools\n\nimport _ \"k8s.io/kubernetes/cmd/kube-apiserver\"\n",
    )?;
    go_step(
        "resolving kube-apiserver's modules",
        &apiserver_module,
        &["mod", "tidy"],
    )?;
    let minor = KUBERNETES_VERSION.split('.').nth(1).unwrap_or_default();
    let ldflags = format!(
        "-s -w -X k8s.io/component-base/version.gitVersion={KUBERNETES_VERSION} \
         -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor={minor} \
         -X k8s.io/component-base/version.gitTreeState=clean"
    );
    go_step(
        "compiling kube-apiserver (the long part)",
        &apiserver_module,
        &[
            "build",
            "-trimpath",
            "-ldflags",
            &ldflags,
            "-o",
            &path_str(&work.join("kube-apiserver.bin"))?,
            "k8s.io/kubernetes/cmd/kube-apiserver",
        ],
    )?;

    // Move into place only once both are built, so a half-finished build is never
    // mistaken for a finished one.
    std::fs::rename(work.join("etcd.bin"), &binaries.etcd)?;
    std::fs::rename(work.join("kube-apiserver.bin"), &binaries.kube_apiserver)?;
    let _ = std::fs::remove_dir_all(&work);
    progress(&format!(
        "built the control plane in {:.0?}",
        started.elapsed()
    ));
    Ok(())
}

/// The throwaway module's `go.mod`: require `k8s.io/kubernetes` and replace every
/// staging module it declares (`k8s.io/x => ./staging/src/k8s.io/x`) with the
/// published `k8s.io/x v0.<minor>.<patch>`.
pub(crate) fn wrapper_go_mod(upstream_go_mod: &str) -> anyhow::Result<String> {
    let staging_version = KUBERNETES_VERSION.replacen("v1.", "v0.", 1);
    let mut out = format!(
        "module hecate.dev/build/kube-apiserver\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes {KUBERNETES_VERSION}\n\n"
    );
    let mut staging = 0;
    for line in upstream_go_mod.lines() {
        let line = line.trim().trim_start_matches("replace").trim();
        let Some((module, target)) = line.split_once("=>") else {
            continue;
        };
        if target.trim().starts_with("./staging/") {
            let module = module.trim();
            out.push_str(&format!("replace {module} => {module} {staging_version}\n"));
            staging += 1;
        }
    }
    if staging == 0 {
        bail!(
            "k8s.io/kubernetes {KUBERNETES_VERSION}'s go.mod declares no staging modules; the build recipe needs updating"
        );
    }
    Ok(out)
}

/// The Go toolchain's version, or a clear error when there is none or it is too old.
fn check_go() -> anyhow::Result<String> {
    let output = Command::new("go")
        .args(["env", "GOVERSION"])
        .env("GOTOOLCHAIN", "local")
        .output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        _ => bail!(
            "building the test control plane needs Go {}.{} or newer, and `go` is not on PATH. \
             Install Go, or set KUBEBUILDER_ASSETS to a directory holding etcd and kube-apiserver \
             (e.g. from `setup-envtest use {}`).",
            MINIMUM_GO.0,
            MINIMUM_GO.1,
            KUBERNETES_VERSION.trim_start_matches('v')
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
            "kube-apiserver {KUBERNETES_VERSION} needs Go {}.{} or newer; found {version}",
            MINIMUM_GO.0,
            MINIMUM_GO.1
        );
    }
    Ok(version)
}

fn go_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("go");
    command
        .args(args)
        .current_dir(dir)
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off")
        .env("GOFLAGS", "-mod=mod")
        .env("CGO_ENABLED", "0");
    command
}

/// Runs one `go` command and returns its stdout, printing a heartbeat while it works
/// and, when it fails, the end of what it said — naming the network when that is what
/// failed.
fn go_step(what: &str, dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    progress(&format!("{what}…"));
    let started = Instant::now();
    let mut child = go_command(dir, args)
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
            progress(&format!(
                "  still {}… ({:.0?} so far)",
                what.to_lowercase(),
                started.elapsed()
            ));
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

fn path_str(path: &Path) -> anyhow::Result<String> {
    path.to_str()
        .map(str::to_owned)
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrapper_replaces_every_staging_module_with_its_release() {
        let upstream = "module k8s.io/kubernetes\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/api v0.0.0\n)\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tk8s.io/client-go => ./staging/src/k8s.io/client-go\n)\n\nreplace example.com/other => example.com/fork v1.2.3\n";
        let minor = KUBERNETES_VERSION.replacen("v1.", "v0.", 1);
        let go_mod = wrapper_go_mod(upstream).unwrap();
        assert!(go_mod.contains(&format!("require k8s.io/kubernetes {KUBERNETES_VERSION}\n")));
        assert!(go_mod.contains(&format!("replace k8s.io/api => k8s.io/api {minor}\n")));
        assert!(go_mod.contains(&format!(
            "replace k8s.io/client-go => k8s.io/client-go {minor}\n"
        )));
        assert!(
            !go_mod.contains("example.com"),
            "only staging modules are replaced"
        );
    }

    #[test]
    fn a_go_mod_without_staging_modules_is_an_error() {
        let err = wrapper_go_mod("module k8s.io/kubernetes\n").unwrap_err();
        assert!(err.to_string().contains("no staging modules"), "{err}");
    }
}
