//! `cargo xtask`: the project's automation, in Rust so it runs wherever cargo does.
//!
//! | command | what it does |
//! |---|---|
//! | `test` | the README's test command: installs what the tests need when missing, then `cargo test --workspace` (arguments pass through) |
//! | `demo` | a local control plane with a realistic pipeline, hecate-api and the UI (the README's main job); `--check` for CI |
//! | `bench` | measures Hecate at scale on the local control plane |
//! | `crds` | writes the generated CRDs into the chart (`charts/hecate/files/crds/`) and `deploy/crds/` |
//! | `manifests` | writes `deploy/` from the Helm chart (`charts/hecate`, default values) |
//! | `check-layers` | fails when a dependency points the wrong way between our crates |
//! | `images` | builds the images the chart runs with buildah, from the binaries and Debian's packages; `--push REPO`; `--check` runs them (CI) |
//! | `downstream` | packages the published crates and builds a crate outside the workspace against them |
//! | `control-plane build` | finds or builds etcd and kube-apiserver |
//! | `control-plane start` | runs a local control plane in the background, with kubeconfigs in `target/hecate-dev/` |
//! | `control-plane stop` | stops it |
//! | `control-plane status` | says whether one is running, and where |

mod api_server;
mod bench;
mod control_plane;
mod crds;
mod demo;
mod downstream;
mod images;
mod layers;
mod manifests;
mod system;
mod test;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Hecate's project automation")]
struct Cli {
    #[command(subcommand)]
    command: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Write the generated CRDs into the chart (charts/hecate/files/crds/) and deploy/crds/.
    Crds,
    /// Refresh compat/crds/, the reference implementation's CRDs (their schemas only)
    /// that the compatibility tests compare with, from a copy of them.
    ReferenceCrds {
        /// Where the reference's `hecate.dev_*.yaml` CRDs are.
        #[arg(long, default_value = "../shared/compat/crds")]
        from: PathBuf,
    },
    /// Write deploy/ from the Helm chart: its default values rendered by helm, split by
    /// component.
    Manifests,
    /// Check that crate dependencies follow the layering rules.
    CheckLayers,
    /// Package the published crates (hecate-ops and what it needs) and build a crate
    /// outside the workspace against the packages.
    Downstream,
    /// Measure Hecate on the local control plane at scale (see docs/BENCHMARKS.md).
    Bench {
        /// How big a namespace to measure.
        #[arg(long, value_enum, default_value = "large")]
        scale: bench::Scale,
        /// Measure one part only, print it and leave docs/BENCHMARKS.md alone (e.g.
        /// `--only explain`: seed, then `hecate explain`, `Ops::explain` and
        /// `why_stuck` over stdio and HTTP, in seconds rather than minutes).
        #[arg(long, value_enum)]
        only: Option<bench::Part>,
        /// How many crossings run at once in "crossings end to end" (default: 5 at
        /// `small` scale, 50 at `large`); with `--only fan-out`, how many targets the
        /// Gate spans (default 100).
        #[arg(long)]
        crossings: Option<usize>,
        /// How many releases "releases through Flux" carries through each variant
        /// (default: 2 at `small` scale, 10 at `large`).
        #[arg(long)]
        releases: Option<usize>,
    },
    /// Build the images the Helm chart runs (hecate-api, hecate-mcp, hecate-controller)
    /// with buildah, from the release binaries and Debian's packages; no Docker needed.
    Images(images::Options),
    /// Start a local control plane with a realistic pipeline, hecate-api and the web UI
    /// to explore (Ctrl-C stops it).
    Demo(demo::Options),
    /// Set up what the tests need (Debian packages, the control plane), then run
    /// `cargo test --workspace`; arguments pass through to cargo test.
    Test {
        /// Say what the set-up would install, and stop.
        #[arg(long)]
        dry_run: bool,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Manage the local development control plane (etcd + kube-apiserver).
    ControlPlane {
        #[command(subcommand)]
        action: control_plane::Action,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = workspace_root();
    let result = match cli.command {
        Task::Crds => crds::write(&root),
        Task::ReferenceCrds { from } => crds::vendor_reference(&root, &root.join(from)),
        Task::Manifests => manifests::write(&root),
        Task::CheckLayers => check_layers(&root),
        Task::Downstream => downstream::run(&root),
        Task::Demo(options) => demo::run(&root, &options),
        Task::Images(options) => images::run(&root, &options),
        Task::Test { args, dry_run } => test::run(&root, &args, dry_run),
        Task::Bench {
            scale,
            only,
            crossings,
            releases,
        } => bench::run(&root, scale, only, crossings, releases),
        Task::ControlPlane { action } => control_plane::run(&root, action),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The `cargo` running xtask, without the variables `cargo run` set for xtask itself:
/// ring's build script reruns when `CARGO_MANIFEST_DIR` changes, so a build started
/// from here with xtask's value rebuilt half the tree — and the next `cargo xtask`
/// rebuilt it back (about 25 s each way).
pub(crate) fn cargo() -> std::process::Command {
    let mut command =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let set_for_xtask = key.starts_with("CARGO_PKG_")
            || matches!(
                key,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
            );
        if set_for_xtask {
            command.env_remove(key);
        }
    }
    command
}

/// Builds `packages`' binaries (`release` or the dev profile) quietly, from the
/// committed `Cargo.lock` (as the Dockerfile does); returns the directory they are in (`target/release` or
/// `target/debug`). The demo, the bench and the images run what it built.
pub(crate) fn build(
    root: &std::path::Path,
    packages: &[&str],
    release: bool,
) -> anyhow::Result<PathBuf> {
    let mut build = cargo();
    build.args(["build", "--quiet", "--locked"]);
    if release {
        build.arg("--release");
    }
    let status = build
        .args(packages.iter().flat_map(|package| ["--package", package]))
        .current_dir(root)
        .status()
        .map_err(|error| anyhow::anyhow!("running cargo build: {error}"))?;
    anyhow::ensure!(
        status.success(),
        "building {} failed ({status})",
        packages.join(", ")
    );
    Ok(root
        .join("target")
        .join(if release { "release" } else { "debug" }))
}

fn check_layers(root: &std::path::Path) -> anyhow::Result<()> {
    let output = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()?;
    anyhow::ensure!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let mut violations = layers::check_metadata(&metadata);
    violations.extend(layers::check_sources(root)?);
    violations.extend(layers::check_pure_sources(root)?);
    if violations.is_empty() {
        println!("layers ok: every dependency points the right way");
        return Ok(());
    }
    for violation in &violations {
        eprintln!("{violation}");
    }
    anyhow::bail!("{} layering violation(s)", violations.len())
}

/// The workspace root: xtask lives one level below it.
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}
