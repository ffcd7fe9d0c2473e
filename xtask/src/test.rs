//! `cargo xtask test`: the README's test command. It makes sure the machine has what
//! the tests use — Debian packages when missing (headless Chromium and its driver for
//! the UI, git for the controller's steps and Beacons, `docker-registry` for the image
//! Beacons' loopback registry), the control plane built once into the shared cache —
//! then runs `cargo test --workspace` with any arguments passed through
//! (`cargo xtask test -p hecate-ops`, `cargo xtask test -- name_filter`).
//!
//! A part that comes from Go modules is built once per machine, outside the repository,
//! like the control plane; Debian packages are installed with `sudo` when not root, and
//! when that is impossible the error names the packages to install.

use std::path::Path;
use std::process::Command;

/// What the tests need from Debian: (command that proves it is there, package).
const PACKAGES: [(&str, &str); 4] = [
    ("chromium", "chromium"),
    ("chromedriver", "chromium-driver"),
    ("git", "git"),
    ("docker-registry", "docker-registry"),
];

pub(crate) fn run(root: &Path, args: &[String]) -> anyhow::Result<()> {
    let missing: Vec<&str> = PACKAGES
        .iter()
        .filter(|(command, _)| !on_path(command))
        .map(|(_, package)| *package)
        .collect();
    if missing.is_empty() {
        eprintln!("[test] system parts: all present ({})", names());
    } else {
        eprintln!("[test] installing {} …", missing.join(", "));
        install(&missing)?;
    }
    eprintln!("[test] the control plane (built once per machine, then cached)…");
    let binaries = hecate_testenv::Binaries::locate_or_build()?;
    eprintln!(
        "[test] kube-apiserver: {}",
        binaries.kube_apiserver.display()
    );

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

fn names() -> String {
    PACKAGES
        .iter()
        .map(|(_, p)| *p)
        .collect::<Vec<_>>()
        .join(", ")
}

fn on_path(command: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
}

/// `apt-get install` as root, or through sudo; otherwise an error naming the packages.
fn install(packages: &[&str]) -> anyhow::Result<()> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let apt = |args: &[&str]| -> anyhow::Result<bool> {
        let mut command = if root {
            Command::new("apt-get")
        } else {
            let mut sudo = Command::new("sudo");
            sudo.args(["-n", "apt-get"]);
            sudo
        };
        let status = command
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(args)
            .status();
        Ok(status.is_ok_and(|s| s.success()))
    };
    let installed = on_path("apt-get")
        && apt(&["update", "-qq"])?
        && apt(&[&["install", "-y", "-qq"][..], packages].concat())?;
    anyhow::ensure!(
        installed,
        "the tests need these Debian packages and they could not be installed here: {}\n\
         install them (e.g. `sudo apt-get install -y {}`) and run again",
        packages.join(", "),
        packages.join(" ")
    );
    Ok(())
}
