//! `cargo xtask test`: the README's test command. It makes sure the machine has what
//! the tests use — Debian packages when missing (headless Chromium and its driver for
//! the UI, git for the controller's steps and Beacons, `docker-registry` for the image
//! Beacons' loopback registry, `openssh-server` for git over SSH, `prometheus` for the
//! `prometheus` verifier's queries; see [`crate::system`]),
//! the control plane, `kustomize` and `helm` (the render steps' programs) built once
//! into the shared cache, schemathesis (which checks the API against its OpenAPI
//! document) installed once from PyPI into a virtualenv there — then runs `cargo test
//! --workspace` with any arguments passed through (`cargo xtask test -p hecate-ops`,
//! `cargo xtask test -- name_filter`).
//!
//! A part that comes from Go modules is built once per machine, outside the
//! repository, by the same `hecate-testenv` code the tests use when they start.

use std::path::Path;

use crate::system::Package;

/// What the tests need from Debian.
const PACKAGES: [Package; 6] = [
    ("chromium", "chromium"),
    ("chromedriver", "chromium-driver"),
    ("git", "git"),
    ("docker-registry", "docker-registry"),
    ("/usr/sbin/sshd", "openssh-server"),
    ("prometheus", "prometheus"),
];

pub(crate) fn run(root: &Path, args: &[String], dry_run: bool) -> anyhow::Result<()> {
    crate::system::ensure("test", &PACKAGES, dry_run)?;
    if dry_run {
        tools(true)?;
        return schemathesis(true);
    }
    eprintln!("[test] the local cluster (built once per machine, then cached)…");
    let binaries = hecate_testenv::Binaries::locate_or_build()?.with_workloads()?;
    eprintln!(
        "[test] kube-apiserver: {}",
        binaries.kube_apiserver.display()
    );
    for program in hecate_testenv::programs::ALL {
        let built = program.locate_or_build()?;
        eprintln!(
            "[test] {} {}: {}",
            program.name,
            program.version,
            built.binary.display()
        );
    }
    tools(false)?;
    schemathesis(false)?;

    // `-p …` selects packages; without one, the whole workspace.
    let selects = args
        .iter()
        .any(|a| a == "-p" || a == "--package" || a.starts_with("--package="));
    let mut test = crate::cargo();
    test.arg("test");
    if !selects {
        test.arg("--workspace");
    }
    let status = test.args(args).current_dir(root).status()?;
    anyhow::ensure!(status.success(), "the tests failed ({status})");
    Ok(())
}

/// The programs the render steps run, found or built (once per machine) as the tests
/// find them; with `dry_run`, only says which would be built.
fn tools(dry_run: bool) -> anyhow::Result<()> {
    use hecate_testenv::Tool;
    if !dry_run {
        eprintln!("[test] kustomize and helm (built once per machine, then cached)…");
    }
    for tool in Tool::ALL {
        let (name, version) = (tool.name(), tool.version());
        let found = if dry_run {
            tool.locate()?
        } else {
            Some(tool.locate_or_build()?)
        };
        match found {
            Some(path) => eprintln!("[test] {name} {version}: {}", path.display()),
            None => eprintln!(
                "[test] would build {name} {version} from {} into {}",
                tool.package(),
                tool.cached()?.display()
            ),
        }
    }
    Ok(())
}

/// schemathesis, found or installed (once per machine, from PyPI) as the API's test
/// finds it; with `dry_run`, only says whether it would be installed.
fn schemathesis(dry_run: bool) -> anyhow::Result<()> {
    use hecate_testenv::schemathesis;
    let version = schemathesis::SCHEMATHESIS_VERSION;
    let found = if dry_run {
        schemathesis::locate()?
    } else {
        eprintln!("[test] schemathesis (installed once per machine, then cached)…");
        Some(schemathesis::locate_or_install()?)
    };
    match found {
        Some(path) => eprintln!("[test] schemathesis {version}: {}", path.display()),
        None => eprintln!(
            "[test] would install schemathesis {version} from PyPI into {}",
            schemathesis::cached()?.display()
        ),
    }
    Ok(())
}
