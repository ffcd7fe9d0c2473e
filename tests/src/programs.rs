//! The programs, beside the control plane, that make the local cluster a real one:
//! **kwok** (simulated nodes whose pods are reported running and ready) and **Flux's
//! own controllers** (`source-controller`, `kustomize-controller`). Each is pinned here,
//! in one place, with any `replace` its build needs and the reason for it, and built
//! once per machine from its published Go module into `<cache>/programs/<name>-<version>/`,
//! beside the files of the module a run needs (Flux's CRDs, kwok's stages).
//!
//! Building a published module as it is: the module's `go.mod` is its own, so its
//! source is copied out of the module cache and built in place. Flux's controllers
//! `replace` their `…/api` module with `./api`, a directory the published module does
//! not carry (it is a module of its own); the build points that `replace` at the `…/api`
//! release of the same version.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::go::{build_once, cache_base, check_go, go_step, path_str};

/// What the progress lines of a build are tagged with.
const PART: &str = "programs";

/// A `replace` a pinned module's build needs, beyond pointing `…/api` at its release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replace {
    /// The module replaced.
    pub module: &'static str,
    /// The version it is replaced with.
    pub version: &'static str,
    /// Why: which version the module asks for, and why that one cannot be had.
    pub why: &'static str,
}

/// A program built from a published Go module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// The executable's name.
    pub name: &'static str,
    /// The Go module.
    pub module: &'static str,
    /// The pinned release.
    pub version: &'static str,
    /// Why this release and not a newer one.
    pub pinned_because: &'static str,
    /// The `main` package, relative to the module's root.
    pub main: &'static str,
    /// Whether the module replaces `<module>/api` with `./api` (Flux's controllers).
    pub local_api: bool,
    /// Further replaces, each with its reason.
    pub replaces: &'static [Replace],
    /// Files of the module a run needs, relative to its root, kept beside the binary
    /// under the same relative paths.
    pub keep: &'static [&'static str],
}

/// kwok: pods scheduled onto its simulated nodes are reported Running and Ready.
pub const KWOK: Program = Program {
    name: "kwok",
    module: "sigs.k8s.io/kwok",
    version: "v0.8.0",
    pinned_because: "the newest release",
    main: "./cmd/kwok",
    local_api: false,
    replaces: &[],
    keep: &[
        "kustomize/stage/node/fast/node-initialize.yaml",
        "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
        "kustomize/stage/pod/fast/pod-ready.yaml",
        "kustomize/stage/pod/fast/pod-complete.yaml",
        "kustomize/stage/pod/fast/pod-delete.yaml",
    ],
};

/// Flux's source-controller: fetches GitRepositories and serves their artifacts.
pub const SOURCE_CONTROLLER: Program = Program {
    name: "source-controller",
    module: "github.com/fluxcd/source-controller",
    version: "v1.9.6",
    pinned_because: "v1.10.x needs Go 1.27 and fluxcd/pkg module versions the Go module proxy \
                     refuses here (e.g. github.com/fluxcd/pkg/apis/crypto v0.5.0)",
    main: ".",
    local_api: true,
    replaces: &[Replace {
        module: "github.com/fluxcd/pkg/artifact",
        version: "v0.18.0",
        why: "v1.9.6 asks for v0.18.3, which the Go module proxy refuses here; v0.18.0 \
              is API-compatible for what source-controller uses",
    }],
    keep: &[
        "config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml",
        "config/crd/bases/source.toolkit.fluxcd.io_ocirepositories.yaml",
        "config/crd/bases/source.toolkit.fluxcd.io_buckets.yaml",
        "config/crd/bases/source.toolkit.fluxcd.io_helmrepositories.yaml",
        "config/crd/bases/source.toolkit.fluxcd.io_helmcharts.yaml",
    ],
};

/// Flux's kustomize-controller: builds and applies a source's artifact, and checks
/// the health of what it applied.
pub const KUSTOMIZE_CONTROLLER: Program = Program {
    name: "kustomize-controller",
    module: "github.com/fluxcd/kustomize-controller",
    version: "v1.9.6",
    pinned_because: "v1.10.x needs Go 1.27 and fluxcd/pkg module versions the Go module proxy \
                     refuses here (e.g. github.com/fluxcd/pkg/spiffe v0.2.0)",
    main: ".",
    local_api: true,
    replaces: &[],
    keep: &["config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml"],
};

/// Every pinned program.
pub const ALL: [Program; 3] = [KWOK, SOURCE_CONTROLLER, KUSTOMIZE_CONTROLLER];

/// A built program: its executable, and the directory the kept files are under.
#[derive(Clone, Debug)]
pub struct Built {
    /// The executable.
    pub binary: PathBuf,
    /// `<cache>/programs/<name>-<version>`: the kept files under their module paths.
    pub dir: PathBuf,
}

impl Built {
    /// A kept file.
    pub fn file(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }
}

impl Program {
    /// `<cache>/programs/<name>-<version>`.
    pub fn cache_dir(&self) -> anyhow::Result<PathBuf> {
        Ok(cache_base()?
            .join("programs")
            .join(format!("{}-{}", self.name, self.version)))
    }

    /// The program from the cache, building it first when it is not there yet.
    pub fn locate_or_build(&self) -> anyhow::Result<Built> {
        let dir = self.cache_dir()?;
        let built = Built {
            binary: dir.join(self.name),
            dir: dir.clone(),
        };
        let ready = || built.binary.is_file() && self.keep.iter().all(|f| built.file(f).is_file());
        build_once(PART, &dir, &ready, &mut || self.build(&dir))?;
        Ok(built)
    }

    fn build(&self, dir: &Path) -> anyhow::Result<()> {
        let (name, version) = (self.name, self.version);
        let go = check_go(
            &format!("{name} {version}"),
            "use a machine with Go to build the local cluster's programs",
        )?;
        let started = Instant::now();
        crate::go::progress(
            PART,
            &format!(
                "building {name} {version} ({}) with {go} into {} (first use only)",
                self.module,
                dir.display()
            ),
        );
        let work = dir.join(".build");
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
        let downloaded = go_step(
            PART,
            &format!("downloading {} {version}", self.module),
            &work,
            &[
                "mod",
                "download",
                "-json",
                &format!("{}@{version}", self.module),
            ],
            &[],
        )?;
        let downloaded: serde_json::Value =
            serde_json::from_str(&downloaded).context("reading `go mod download -json`")?;
        if let Some(error) = downloaded["Error"].as_str() {
            bail!("{} {version} cannot be downloaded: {error}", self.module);
        }
        let module_dir = downloaded["Dir"]
            .as_str()
            .context("`go mod download -json` named no directory")?;
        let source = work.join("src");
        copy_tree(Path::new(module_dir), &source)?;

        let mut replaces: Vec<String> = self
            .replaces
            .iter()
            .map(|r| format!("-replace={}={}@{}", r.module, r.module, r.version))
            .collect();
        if self.local_api {
            replaces.push(format!(
                "-replace={m}/api={m}/api@{version}",
                m = self.module
            ));
        }
        if !replaces.is_empty() {
            let mut args = vec!["mod", "edit"];
            args.extend(replaces.iter().map(String::as_str));
            go_step(
                PART,
                &format!("pointing {name}'s replaces"),
                &source,
                &args,
                &[],
            )?;
        }
        let out = work.join(name);
        go_step(
            PART,
            &format!("compiling {name} {version}"),
            &source,
            &[
                "build",
                "-trimpath",
                "-ldflags",
                "-s -w",
                "-o",
                &path_str(&out)?,
                self.main,
            ],
            &[],
        )?;
        for file in self.keep {
            let target = dir.join(file);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::copy(source.join(file), &target).with_context(|| {
                format!(
                    "{} {version} has no {file}: the pin's kept files need updating",
                    self.module
                )
            })?;
        }
        // Moved into place last, so a half-finished build is never taken for a
        // finished one.
        std::fs::rename(&out, dir.join(name))?;
        let _ = std::fs::remove_dir_all(&work);
        crate::go::progress(
            PART,
            &format!("built {name} {version} in {:.0?}", started.elapsed()),
        );
        Ok(())
    }
}

/// Copies a directory tree (the module cache's copies are read-only; these are not).
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
            let mut permissions = std::fs::metadata(&target)?.permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            permissions.set_readonly(false);
            std::fs::set_permissions(&target, permissions)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pin_says_why_and_every_replace_its_reason() {
        for program in ALL {
            assert!(!program.pinned_because.is_empty(), "{}", program.name);
            for replace in program.replaces {
                assert!(
                    replace.why.len() > 20,
                    "{}: {}",
                    program.name,
                    replace.module
                );
            }
            assert!(
                program
                    .cache_dir()
                    .unwrap()
                    .ends_with(format!("programs/{}-{}", program.name, program.version))
            );
        }
    }
}

/// Files taken from a published Go module, with nothing built: CRDs of projects the
/// chart writes objects for, so the API server judges those objects by the real
/// schema.
#[derive(Clone, Copy, Debug)]
pub struct ModuleFiles {
    /// The Go module.
    pub module: &'static str,
    /// Its release.
    pub version: &'static str,
    /// The files, relative to the module's root.
    pub files: &'static [&'static str],
}

/// The Prometheus Operator's ServiceMonitor CRD, for the chart's ServiceMonitor.
pub const PROMETHEUS_OPERATOR_CRDS: ModuleFiles = ModuleFiles {
    module: "github.com/prometheus-operator/prometheus-operator",
    version: "v0.88.0",
    files: &["example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"],
};

impl ModuleFiles {
    /// `<cache>/modules/<last path element>-<version>/`, holding [`ModuleFiles::files`]
    /// under their module paths once downloaded.
    pub fn cache_dir(&self) -> anyhow::Result<PathBuf> {
        let name = self.module.rsplit('/').next().unwrap_or(self.module);
        Ok(cache_base()?
            .join("modules")
            .join(format!("{name}-{}", self.version)))
    }

    /// The files' paths in the cache, downloading the module first (once per machine).
    pub fn locate_or_download(&self) -> anyhow::Result<Vec<PathBuf>> {
        let dir = self.cache_dir()?;
        let paths: Vec<PathBuf> = self.files.iter().map(|f| dir.join(f)).collect();
        let ready = || paths.iter().all(|p| p.is_file());
        build_once(PART, &dir, &ready, &mut || {
            check_go(
                &format!("{} {}", self.module, self.version),
                "use a machine with Go to fetch the module",
            )?;
            let downloaded = go_step(
                PART,
                &format!("downloading {} {}", self.module, self.version),
                &dir,
                &[
                    "mod",
                    "download",
                    "-json",
                    &format!("{}@{}", self.module, self.version),
                ],
                &[],
            )?;
            let downloaded: serde_json::Value =
                serde_json::from_str(&downloaded).context("reading `go mod download -json`")?;
            if let Some(error) = downloaded["Error"].as_str() {
                bail!(
                    "{} {} cannot be downloaded: {error}",
                    self.module,
                    self.version
                );
            }
            let module_dir = Path::new(
                downloaded["Dir"]
                    .as_str()
                    .context("`go mod download -json` named no directory")?,
            );
            for file in self.files {
                let to = dir.join(file);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("creating {}", parent.display()))?;
                }
                std::fs::copy(module_dir.join(file), &to).with_context(|| {
                    format!("{file} is not in {} {}", self.module, self.version)
                })?;
            }
            Ok(())
        })?;
        Ok(paths)
    }
}
