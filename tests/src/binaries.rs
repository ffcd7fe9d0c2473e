//! Finding — or, the first time, building — `etcd`, `kube-apiserver` and the two
//! controllers that make a cluster run workloads, `kube-controller-manager` and
//! `kube-scheduler` (from the same `k8s.io/kubernetes` module, in one build).
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

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::go::{build_once, cache_base, check_go, go_step, path_str};

/// The Kubernetes release the control plane runs (k8s-openapi 0.29 covers 1.33–1.37).
pub const KUBERNETES_VERSION: &str = "v1.36.3";
/// The etcd release the control plane runs (the 3.6 line Kubernetes 1.36 is tested with).
pub const ETCD_VERSION: &str = "v3.6.16";
/// What the progress lines of the build are tagged with.
const PART: &str = "control-plane";
/// The programs built from `k8s.io/kubernetes`, each `cmd/<name>`.
const COMPONENTS: [&str; 3] = [
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
];

/// Where the two binaries are.
#[derive(Clone, Debug)]
pub struct Binaries {
    /// The `etcd` executable.
    pub etcd: PathBuf,
    /// The `kube-apiserver` executable.
    pub kube_apiserver: PathBuf,
    /// The `kube-controller-manager` executable (Deployments, ReplicaSets, namespaces,
    /// garbage collection): absent from `KUBEBUILDER_ASSETS`, which envtest fills with
    /// etcd and kube-apiserver only.
    pub kube_controller_manager: PathBuf,
    /// The `kube-scheduler` executable.
    pub kube_scheduler: PathBuf,
}

impl Binaries {
    /// The binaries from `KUBEBUILDER_ASSETS`, or from the cache, building them first
    /// when they are not there yet. Progress goes to stderr.
    pub fn locate_or_build() -> anyhow::Result<Self> {
        if let Some(assets) = std::env::var_os("KUBEBUILDER_ASSETS") {
            let dir = PathBuf::from(assets);
            let mut binaries = Self::in_dir(&dir);
            for path in [&binaries.etcd, &binaries.kube_apiserver] {
                if !path.is_file() {
                    bail!(
                        "KUBEBUILDER_ASSETS is {} but {} is not there",
                        dir.display(),
                        path.display()
                    );
                }
            }
            // envtest's assets have no controller manager or scheduler: those come from
            // the cache (built there when a cluster that runs workloads is asked for).
            let cached = Self::in_dir(&cache_dir()?);
            binaries.kube_controller_manager = cached.kube_controller_manager;
            binaries.kube_scheduler = cached.kube_scheduler;
            return Ok(binaries);
        }
        let dir = cache_dir()?;
        let binaries = Self::in_dir(&dir);
        if binaries.exist() {
            return Ok(binaries);
        }
        build_once(PART, &dir, &|| binaries.exist(), &mut || {
            build(&dir, &binaries)
        })?;
        Ok(binaries)
    }

    fn in_dir(dir: &Path) -> Self {
        Self {
            etcd: dir.join("etcd"),
            kube_apiserver: dir.join("kube-apiserver"),
            kube_controller_manager: dir.join("kube-controller-manager"),
            kube_scheduler: dir.join("kube-scheduler"),
        }
    }

    fn exist(&self) -> bool {
        self.all().iter().all(|path| path.is_file())
    }

    fn all(&self) -> [&PathBuf; 4] {
        [
            &self.etcd,
            &self.kube_apiserver,
            &self.kube_controller_manager,
            &self.kube_scheduler,
        ]
    }

    /// Whether the controller manager and scheduler are there, so the control plane
    /// can run workloads. With the cache's binaries they always are; with
    /// `KUBEBUILDER_ASSETS` only once a cluster that runs workloads has been built.
    pub fn runs_workloads(&self) -> bool {
        self.kube_controller_manager.is_file() && self.kube_scheduler.is_file()
    }

    /// The same, with the controller manager and scheduler built into the cache first
    /// when they are missing (only ever the case with `KUBEBUILDER_ASSETS`).
    pub fn with_workloads(self) -> anyhow::Result<Self> {
        if self.runs_workloads() {
            return Ok(self);
        }
        let dir = cache_dir()?;
        let cached = Self::in_dir(&dir);
        build_once(PART, &dir, &|| cached.exist(), &mut || build(&dir, &cached))?;
        Ok(Self {
            kube_controller_manager: cached.kube_controller_manager,
            kube_scheduler: cached.kube_scheduler,
            ..self
        })
    }
}

/// `<cache>/control-plane/<kubernetes>-etcd<etcd>`.
pub fn cache_dir() -> anyhow::Result<PathBuf> {
    Ok(cache_base()?
        .join("control-plane")
        .join(format!("{KUBERNETES_VERSION}-etcd{ETCD_VERSION}")))
}

/// A progress line of the control plane's, straight to stderr.
pub(crate) fn progress(line: &str) {
    crate::go::progress(PART, line);
}

fn build(dir: &Path, binaries: &Binaries) -> anyhow::Result<()> {
    let go = check_go(
        "the test control plane",
        &format!(
            "set KUBEBUILDER_ASSETS to a directory holding etcd and kube-apiserver \
             (e.g. from `setup-envtest use {}`)",
            KUBERNETES_VERSION.trim_start_matches('v')
        ),
    )?;
    let started = Instant::now();
    progress(&format!(
        "building etcd {ETCD_VERSION} and kube-apiserver, kube-controller-manager and \
         kube-scheduler {KUBERNETES_VERSION} with {go} into {} (first use only; about 6 \
         minutes on two idle cores)",
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
    go_step(
        PART,
        "resolving etcd's modules",
        &etcd_module,
        &["mod", "tidy"],
        &[],
    )?;
    go_step(
        PART,
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
        &[],
    )?;

    let apiserver_module = work.join("kube-apiserver");
    std::fs::create_dir_all(&apiserver_module)?;
    std::fs::write(
        apiserver_module.join("go.mod"),
        "module hecate.dev/build/kube-apiserver\n\ngo 1.26.0\n",
    )?;
    let upstream_mod = go_step(
        PART,
        "downloading k8s.io/kubernetes",
        &apiserver_module,
        &[
            "mod",
            "download",
            "-json",
            &format!("k8s.io/kubernetes@{KUBERNETES_VERSION}"),
        ],
        &[],
    )?;
    let upstream_mod: serde_json::Value =
        serde_json::from_str(&upstream_mod).context("reading `go mod download -json`")?;
    let upstream_mod_path = upstream_mod["GoMod"]
        .as_str()
        .context("`go mod download -json` named no go.mod")?;
    let upstream = std::fs::read_to_string(upstream_mod_path)
        .with_context(|| format!("reading {upstream_mod_path}"))?;
    std::fs::write(apiserver_module.join("go.mod"), wrapper_go_mod(&upstream)?)?;
    let tools: String = COMPONENTS
        .iter()
        .map(|component| format!("import _ \"k8s.io/kubernetes/cmd/{component}\"\n"))
        .collect();
    std::fs::write(
        apiserver_module.join("tools.go"),
        format!("//go:build tools\n\npackage tools\n\n{tools}"),
    )?;
    go_step(
        PART,
        "resolving kube-apiserver's modules",
        &apiserver_module,
        &["mod", "tidy"],
        &[],
    )?;
    let minor = KUBERNETES_VERSION.split('.').nth(1).unwrap_or_default();
    let ldflags = format!(
        "-s -w -X k8s.io/component-base/version.gitVersion={KUBERNETES_VERSION} \
         -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor={minor} \
         -X k8s.io/component-base/version.gitTreeState=clean"
    );
    // One `go build` of all three: they share most of their packages, so building them
    // together compiles each package once.
    let out = work.join("bin");
    std::fs::create_dir_all(&out)?;
    let out_dir = format!("{}/", path_str(&out)?);
    let mut args = vec!["build", "-trimpath", "-ldflags", &ldflags, "-o", &out_dir];
    let packages: Vec<String> = COMPONENTS
        .iter()
        .map(|component| format!("k8s.io/kubernetes/cmd/{component}"))
        .collect();
    args.extend(packages.iter().map(String::as_str));
    go_step(
        PART,
        "compiling kube-apiserver, kube-controller-manager and kube-scheduler (the long part)",
        &apiserver_module,
        &args,
        &[],
    )?;

    // Move into place only once all are built, so a half-finished build is never
    // mistaken for a finished one.
    std::fs::rename(work.join("etcd.bin"), &binaries.etcd)?;
    for (component, target) in COMPONENTS.iter().zip([
        &binaries.kube_apiserver,
        &binaries.kube_controller_manager,
        &binaries.kube_scheduler,
    ]) {
        std::fs::rename(out.join(component), target)?;
    }
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
