//! Finding — or, the first time, building — the programs the controller's steps run:
//! `kustomize` (`render-kustomize`) and `helm` (`render-helm`). Tests run the real
//! programs, never a stand-in.
//!
//! Each is pinned below and built once per machine with the machine's Go toolchain
//! from its published Go module (`go install <package>@<version>`, which builds with
//! exactly the module's own `go.mod`), into `<cache>/tools/<name>-<version>/<name>`
//! beside the control plane; the container image builds the same versions
//! (`Dockerfile`). A program of the pinned version already on PATH is used instead,
//! and one of another version is not: a test's answer must not depend on what the
//! machine happens to have.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context as _;

use crate::go::{build_once, cache_base, check_go, go_step, path_str};

/// The kustomize release `render-kustomize` is tested with and the image carries (the
/// newest v5 whose module Go 1.26 builds).
pub const KUSTOMIZE_VERSION: &str = "v5.8.2";
/// The Helm release `render-helm` is tested with and the image carries.
pub const HELM_VERSION: &str = "v4.3.1";
/// What the progress lines of a build are tagged with.
const PART: &str = "tools";

/// A program a step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// `kustomize`, for `render-kustomize`.
    Kustomize,
    /// `helm`, for `render-helm`.
    Helm,
}

impl Tool {
    /// Every program the steps run.
    pub const ALL: [Tool; 2] = [Tool::Kustomize, Tool::Helm];

    /// The program's name (and the executable's).
    pub fn name(self) -> &'static str {
        match self {
            Tool::Kustomize => "kustomize",
            Tool::Helm => "helm",
        }
    }

    /// The pinned release.
    pub fn version(self) -> &'static str {
        match self {
            Tool::Kustomize => KUSTOMIZE_VERSION,
            Tool::Helm => HELM_VERSION,
        }
    }

    /// The Go package of its `main`.
    pub fn package(self) -> &'static str {
        match self {
            Tool::Kustomize => "sigs.k8s.io/kustomize/kustomize/v5",
            Tool::Helm => "helm.sh/helm/v4/cmd/helm",
        }
    }

    /// The linker flags of the build: stripped, and the version the program reports
    /// set as its own release process sets it.
    pub fn ldflags(self) -> String {
        let version = self.version();
        match self {
            Tool::Kustomize => {
                format!("-s -w -X sigs.k8s.io/kustomize/api/provenance.version={version}")
            }
            Tool::Helm => format!(
                "-s -w -X helm.sh/helm/v4/internal/version.version={version} \
                 -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
            ),
        }
    }

    /// The arguments that make it print its version first.
    fn version_args(self) -> &'static [&'static str] {
        match self {
            Tool::Kustomize => &["version"],
            Tool::Helm => &["version", "--short"],
        }
    }

    /// Where the build puts it: `<cache>/tools/<name>-<version>/<name>`.
    pub fn cached(self) -> anyhow::Result<PathBuf> {
        Ok(cache_base()?
            .join("tools")
            .join(format!("{}-{}", self.name(), self.version()))
            .join(self.name()))
    }

    /// The program, when it is there without a build: in the cache, or of the pinned
    /// version on PATH.
    pub fn locate(self) -> anyhow::Result<Option<PathBuf>> {
        let cached = self.cached()?;
        if cached.is_file() {
            return Ok(Some(cached));
        }
        Ok(self.on_path())
    }

    /// The program from the cache or PATH, building it first when it is in neither.
    /// Progress goes to stderr.
    pub fn locate_or_build(self) -> anyhow::Result<PathBuf> {
        if let Some(found) = self.locate()? {
            return Ok(found);
        }
        let cached = self.cached()?;
        let dir = cached
            .parent()
            .context("the cached program has a directory")?
            .to_path_buf();
        build_once(PART, &dir, &|| cached.is_file(), &mut || {
            self.build(&dir, &cached)
        })?;
        Ok(cached)
    }

    /// A program of this name on PATH that reports the pinned version.
    fn on_path(self) -> Option<PathBuf> {
        let path = std::env::var_os("PATH")?;
        let found = std::env::split_paths(&path)
            .map(|dir| dir.join(self.name()))
            .find(|candidate| candidate.is_file())?;
        let output = Command::new(&found)
            .args(self.version_args())
            .output()
            .ok()?;
        let said = String::from_utf8_lossy(&output.stdout);
        (output.status.success() && reports_version(&said, self.version())).then_some(found)
    }

    fn build(self, dir: &Path, into: &Path) -> anyhow::Result<()> {
        let (name, version) = (self.name(), self.version());
        let go = check_go(
            &format!("{name} {version}"),
            &format!("put {name} {version} on PATH"),
        )?;
        let started = Instant::now();
        crate::go::progress(
            PART,
            &format!(
                "building {name} {version} with {go} into {} (first use only)",
                dir.display()
            ),
        );
        let work = dir.join(".build");
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
        let bin = work.join("bin");
        go_step(
            PART,
            &format!("compiling {name} {version}"),
            &work,
            &[
                "install",
                "-trimpath",
                "-ldflags",
                &self.ldflags(),
                &format!("{}@{version}", self.package()),
            ],
            &[("GOBIN", OsStr::new(&path_str(&bin)?))],
        )?;
        // Moved into place only once built, so a half-finished build is never taken
        // for a finished one.
        std::fs::rename(bin.join(name), into)
            .with_context(|| format!("moving {name} into {}", dir.display()))?;
        let _ = std::fs::remove_dir_all(&work);
        crate::go::progress(
            PART,
            &format!("built {name} {version} in {:.0?}", started.elapsed()),
        );
        Ok(())
    }
}

/// Whether a program's version output names `version` exactly: its first word is the
/// version, perhaps with build metadata (`v4.3.1+g1234abc`), not a longer one
/// (`v4.3.10`).
fn reports_version(output: &str, version: &str) -> bool {
    let first = output.split_whitespace().next().unwrap_or_default();
    first
        .strip_prefix(version)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_on_path_counts_only_at_the_pinned_version() {
        assert!(reports_version("v5.8.2\n", "v5.8.2"));
        assert!(reports_version("v4.3.1+g0123abc\n", "v4.3.1"));
        assert!(!reports_version("v4.3.10\n", "v4.3.1"));
        assert!(!reports_version("v3.22.0+gabc\n", "v4.3.1"));
        assert!(!reports_version("", "v4.3.1"));
        assert!(!reports_version("version v4.3.1", "v4.3.1"));
    }

    #[test]
    fn the_image_builds_the_same_releases_the_same_way() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Dockerfile");
        let dockerfile = std::fs::read_to_string(&path).unwrap();
        for tool in Tool::ALL {
            let variable = format!("{}_VERSION", tool.name().to_uppercase());
            let pinned = format!("ARG {variable}={}\n", tool.version());
            assert!(
                dockerfile.contains(&pinned),
                "the Dockerfile lacks {pinned:?}"
            );
            let ldflags = tool
                .ldflags()
                .replace(tool.version(), &format!("${{{variable}}}"));
            assert!(
                dockerfile.contains(&format!("-ldflags \"{ldflags}\"")),
                "the Dockerfile builds {} without {ldflags:?}",
                tool.name()
            );
            let module = format!("\"{}@${{{variable}}}\"", tool.package());
            assert!(
                dockerfile.contains(&module),
                "the Dockerfile lacks {module}"
            );
        }
    }

    #[test]
    fn each_program_has_its_own_cache_directory() {
        let kustomize = Tool::Kustomize.cached().unwrap();
        let helm = Tool::Helm.cached().unwrap();
        assert!(kustomize.ends_with(format!("tools/kustomize-{KUSTOMIZE_VERSION}/kustomize")));
        assert!(helm.ends_with(format!("tools/helm-{HELM_VERSION}/helm")));
        assert!(Tool::Helm.ldflags().contains(HELM_VERSION));
        assert!(Tool::Kustomize.ldflags().contains(KUSTOMIZE_VERSION));
    }
}
