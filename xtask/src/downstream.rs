//! `cargo xtask downstream`: a crate outside the workspace builds against the
//! *packages* of the crates others build on — what crates.io would serve, not the
//! workspace's sources. A file the package leaves out, a path dependency without a
//! version, or an API only the workspace can reach fails here, not for the first user.
//!
//! It packages [`PUBLISHED`] (`cargo package --no-verify`: the build below is the
//! verification) and unpacks them beside a small binary crate with a `[workspace]` of
//! its own, in the system's temporary directory: outside the repository, so none of
//! the workspace's settings or `.cargo/config.toml` apply. (The one variable that file
//! sets, `K8S_OPENAPI_ENABLED_VERSION`, is inherited; it names the version the
//! binary's own `v1_33` feature does, and keeps k8s-openapi's build the workspace's.)
//! The binary's `main.rs` is hecate-ops' `examples/explain_gate.rs`, taken from the
//! package. It depends on the unpacked hecate-ops and hecate-types by path, and
//! `[patch.crates-io]` points the packages' own `hecate-*` dependencies at the
//! unpacked copies, so nothing under those names comes from crates.io. It builds into
//! the workspace's `target/` with the workspace's `Cargo.lock` and profile, so what the
//! workspace has compiled alike is reused, and a run whose packages have not changed
//! builds nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context as _;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// The published crates, dependencies first; every other crate stays unpublished.
pub(crate) const PUBLISHED: [&str; 5] = [
    "hecate-expr",
    "hecate-types",
    "hecate-fides",
    "hecate-rules",
    "hecate-ops",
];

/// What the downstream binary takes from crates.io itself, besides our crates: with
/// hecate-ops' own requirements (read from the workspace), and the features a binary
/// adds — the Kubernetes version libraries leave to it, and tokio's `main`.
const OWN_DEPENDENCIES: [(&str, &str); 3] = [
    (
        "kube",
        r#"default-features = false, features = ["client", "rustls-tls", "ring"]"#,
    ),
    (
        "k8s-openapi",
        r#"default-features = false, features = ["v1_33"]"#,
    ),
    ("tokio", r#"features = ["macros", "rt-multi-thread"]"#),
];

pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let target = root.join("target");
    let packaged = target.join("downstream");
    let metadata = workspace_metadata(root)?;
    let version = version_of(&metadata, "hecate-ops")?;

    eprintln!("[downstream] packaging {}", PUBLISHED.join(", "));
    let mut package = crate::cargo();
    package
        .args(["package", "--no-verify", "--allow-dirty", "--target-dir"])
        .arg(&packaged)
        .current_dir(root);
    for name in PUBLISHED {
        package.args(["-p", name]);
    }
    run_ok(&mut package, "cargo package")?;
    let packaging = started.elapsed();

    let dir = scratch_dir(root);
    let crates = dir.join("crates");
    std::fs::create_dir_all(&crates).with_context(|| format!("creating {}", crates.display()))?;
    for name in PUBLISHED {
        unpack(
            &packaged.join("package"),
            &crates,
            &format!("{name}-{version}"),
        )?;
    }

    let manifest = manifest(&metadata, &version)?;
    write(&dir.join("Cargo.toml"), &manifest)?;
    let example = crates.join(format!("hecate-ops-{version}/examples/explain_gate.rs"));
    let main = std::fs::read_to_string(&example)
        .with_context(|| format!("reading {} from the package", example.display()))?;
    std::fs::create_dir_all(dir.join("src"))?;
    write(&dir.join("src/main.rs"), &main)?;
    // The versions the workspace builds and tests, so the check is the same every
    // run; cargo drops what the binary does not use.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).context("copying Cargo.lock")?;

    eprintln!(
        "[downstream] building {} outside the workspace",
        dir.display()
    );
    let building = Instant::now();
    let mut build = crate::cargo();
    build
        .args(["build", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&dir);
    run_ok(&mut build, "cargo build of the downstream crate")?;
    let built = building.elapsed();

    // It runs: without arguments it says how it is used, and exits 2.
    let binary = target.join("debug/hecate-downstream");
    let output = Command::new(&binary)
        .output()
        .with_context(|| format!("running {}", binary.display()))?;
    let usage = String::from_utf8_lossy(&output.stderr);
    anyhow::ensure!(
        output.status.code() == Some(2) && usage.contains("usage:"),
        "{} without arguments: {} ({usage})",
        binary.display(),
        output.status
    );

    println!(
        "downstream ok: a crate outside the workspace built against the packages of {} in \
         {:.1} s ({:.1} s packaging, {:.1} s building)",
        PUBLISHED.join(", "),
        started.elapsed().as_secs_f64(),
        packaging.as_secs_f64(),
        built.as_secs_f64(),
    );
    Ok(())
}

/// `cargo metadata` of the workspace, without its dependencies.
fn workspace_metadata(root: &Path) -> anyhow::Result<Value> {
    let output = crate::cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("running cargo metadata")?;
    anyhow::ensure!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(serde_json::from_slice(&output.stdout)?)
}

fn package<'a>(metadata: &'a Value, name: &str) -> anyhow::Result<&'a Value> {
    metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == name))
        .with_context(|| format!("{name} is not in the workspace"))
}

fn version_of(metadata: &Value, name: &str) -> anyhow::Result<String> {
    package(metadata, name)?["version"]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("{name} has no version"))
}

/// The downstream crate's manifest: what a user of hecate-ops writes, and the
/// redirections to the unpacked packages.
fn manifest(metadata: &Value, version: &str) -> anyhow::Result<String> {
    let ops = package(metadata, "hecate-ops")?;
    let requirement = |name: &str| {
        ops["dependencies"]
            .as_array()
            .and_then(|deps| {
                deps.iter()
                    .find(|d| d["name"] == name && d["kind"].is_null())
            })
            .and_then(|d| d["req"].as_str())
            .with_context(|| format!("hecate-ops names no {name}"))
    };
    let mut text = String::from(
        "# Written by `cargo xtask downstream`: a user of hecate-ops, outside Hecate's workspace.\n\
         [package]\nname = \"hecate-downstream\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n",
    );
    for name in ["hecate-ops", "hecate-types"] {
        text.push_str(&format!(
            "{name} = {{ version = \"={version}\", path = \"crates/{name}-{version}\" }}\n"
        ));
    }
    for (name, rest) in OWN_DEPENDENCIES {
        text.push_str(&format!(
            "{name} = {{ version = \"{}\", {rest} }}\n",
            requirement(name)?
        ));
    }
    text.push_str(
        "\n# The packages name each other as crates.io dependencies: these are those.\n\
         [patch.crates-io]\n",
    );
    for name in PUBLISHED.iter().filter(|name| **name != "hecate-ops") {
        text.push_str(&format!(
            "{name} = {{ path = \"crates/{name}-{version}\" }}\n"
        ));
    }
    text.push_str(
        "\n# The workspace's profile, so what it has compiled alike is reused.\n\
         [profile.dev]\ndebug = \"line-tables-only\"\n\n\
         [profile.dev.package.\"*\"]\ndebug = false\n\n\
         [workspace]\n",
    );
    Ok(text)
}

/// Where the downstream crate lives: the same directory every run for this checkout
/// (so its build is reused, not repeated), outside the repository.
fn scratch_dir(root: &Path) -> PathBuf {
    let checkout = hex::encode(Sha256::digest(root.as_os_str().as_encoded_bytes()));
    std::env::temp_dir().join(format!("hecate-downstream-{}", &checkout[..12]))
}

/// Unpacks `<from>/<stem>.crate` into `<into>/<stem>/` unless the same package is
/// unpacked there already. Its files get the current time: cargo writes one fixed
/// time into every package, which would hide a changed source from the next build.
fn unpack(from: &Path, into: &Path, stem: &str) -> anyhow::Result<()> {
    let archive = from.join(format!("{stem}.crate"));
    let kept = into.join(format!("{stem}.crate"));
    let bytes =
        std::fs::read(&archive).with_context(|| format!("reading {}", archive.display()))?;
    let dir = into.join(stem);
    if dir.is_dir() && std::fs::read(&kept).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    let mut tar = Command::new("tar");
    tar.arg("-xzmf").arg(&archive).arg("-C").arg(into);
    run_ok(&mut tar, &format!("unpacking {}", archive.display()))?;
    std::fs::write(&kept, &bytes).with_context(|| format!("writing {}", kept.display()))
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    // Unchanged files keep their times, so an unchanged crate is not rebuilt.
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

fn run_ok(command: &mut Command, what: &str) -> anyhow::Result<()> {
    let status = command
        .status()
        .with_context(|| format!("starting {what}"))?;
    anyhow::ensure!(status.success(), "{what} failed ({status})");
    Ok(())
}
