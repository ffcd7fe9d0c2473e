//! Finding — or, the first time, installing — schemathesis, which tests the HTTP API
//! against its own OpenAPI document (property-based: generated requests, every
//! answer checked against the document).
//!
//! Pinned below and installed once per machine from PyPI with the machine's
//! `python3` into a virtualenv at `<cache>/schemathesis-<version>/venv`, beside the
//! control plane and the render steps' programs. A virtualenv cannot be moved (its
//! scripts name their interpreter by absolute path), so it is made in place and
//! counts as installed only once a marker is written after `pip` has finished; a
//! half-made one is removed and made again. Nothing on PATH is used: a test's answer
//! must not depend on which schemathesis the machine happens to have.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::go::{build_once, cache_base, progress};

/// The schemathesis release the API is checked with.
pub const SCHEMATHESIS_VERSION: &str = "4.32.5";
/// What the progress lines of an install are tagged with.
const PART: &str = "schemathesis";
/// Written into the virtualenv once `pip` has installed everything.
const MARKER: &str = ".hecate-installed";

/// Where the virtualenv lives: `<cache>/schemathesis-<version>/venv`.
fn venv() -> anyhow::Result<PathBuf> {
    Ok(cache_base()?
        .join(format!("schemathesis-{SCHEMATHESIS_VERSION}"))
        .join("venv"))
}

/// The `schemathesis` program, when it is installed.
pub fn locate() -> anyhow::Result<Option<PathBuf>> {
    let venv = venv()?;
    Ok(venv
        .join(MARKER)
        .is_file()
        .then(|| venv.join("bin").join("schemathesis")))
}

/// Where it is installed, or would be.
pub fn cached() -> anyhow::Result<PathBuf> {
    venv()
}

/// The `schemathesis` program, installing it first (once per machine, with a lock so
/// that two processes do not both install). Progress goes to stderr.
pub fn locate_or_install() -> anyhow::Result<PathBuf> {
    if let Some(found) = locate()? {
        return Ok(found);
    }
    let venv = venv()?;
    let dir = venv
        .parent()
        .context("the virtualenv has a directory")?
        .to_path_buf();
    build_once(PART, &dir, &|| venv.join(MARKER).is_file(), &mut || {
        install(&venv)
    })?;
    locate()?.context("schemathesis was installed, yet its marker is missing")
}

fn install(venv: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    progress(
        PART,
        &format!(
            "installing schemathesis {SCHEMATHESIS_VERSION} from PyPI into {} (first use only)",
            venv.display()
        ),
    );
    // A half-made virtualenv from an interrupted install is made again.
    let _ = std::fs::remove_dir_all(venv);
    run(
        Command::new("python3").arg("-m").arg("venv").arg(venv),
        "creating a virtualenv with `python3 -m venv` (on Debian: apt-get install python3-venv)",
    )?;
    run(
        Command::new(venv.join("bin").join("pip"))
            .args([
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--quiet",
            ])
            .arg(format!("schemathesis=={SCHEMATHESIS_VERSION}")),
        &format!("installing schemathesis {SCHEMATHESIS_VERSION} with pip"),
    )?;
    std::fs::write(venv.join(MARKER), SCHEMATHESIS_VERSION)
        .with_context(|| format!("marking {} installed", venv.display()))?;
    progress(
        PART,
        &format!(
            "installed schemathesis {SCHEMATHESIS_VERSION} in {:.0?}",
            started.elapsed()
        ),
    );
    Ok(())
}

/// Runs `command`, failing with `what` and its output when it does not succeed.
fn run(command: &mut Command, what: &str) -> anyhow::Result<()> {
    let output = command
        .output()
        .with_context(|| format!("{what}: could not start it"))?;
    if !output.status.success() {
        bail!(
            "{what} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}
