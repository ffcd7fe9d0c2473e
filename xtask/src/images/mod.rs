//! `cargo xtask images`: the three images the Helm chart runs — hecate-api, hecate-mcp,
//! hecate-controller — built without Docker or a base image to pull. buildah assembles
//! each from nothing: the binary, the Debian packages its base stands for and the ones
//! it needs (unpacked as distroless images are made: files only, no maintainer
//! scripts), the CA bundle, and distroless's `nonroot` user (65532). The `Dockerfile`
//! describes the same images for users with Docker; [`describe`] is the one
//! description both follow, and its tests hold the Dockerfile and the chart to it.
//!
//! `--push REPOSITORY` pushes `REPOSITORY/<image>:<tag>`. `--check` (CI) builds in
//! storage of its own, pushes to a loopback registry, removes the local copies, pulls
//! each image back with podman and runs it (see [`check`]), then removes everything.

mod check;
mod debian;
mod describe;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context as _;

use describe::{BIN_DIR, HOME, IMAGES, Image, NONROOT};

/// `cargo xtask images`' options.
#[derive(clap::Args, Debug)]
pub(crate) struct Options {
    /// Push each image to REPOSITORY/<image>:<tag> (e.g. registry.example.com/hecate).
    #[arg(long, value_name = "REPOSITORY")]
    push: Option<String>,
    /// The images' tag (default: the workspace's version).
    #[arg(long)]
    tag: Option<String>,
    /// Assemble from the debug binaries `cargo build` makes instead of a release build:
    /// checks the assembly in seconds where the binaries are built already (CI's test
    /// run built them); not for images anyone runs.
    #[arg(long)]
    debug: bool,
    /// Push to a loopback registry, pull back with podman and run every image's
    /// programs (`--version`; hecate-api and hecate-controller ready on a local control
    /// plane), then remove them; builds in storage of its own.
    #[arg(long, conflicts_with = "push")]
    check: bool,
}

/// What the assembly needs from Debian; `--check` also runs the images and serves them.
const BUILD_PACKAGES: [crate::system::Package; 1] = [("buildah", "buildah")];
const CHECK_PACKAGES: [crate::system::Package; 3] = [
    ("podman", "podman"),
    ("runc", "runc"),
    ("docker-registry", "docker-registry"),
];

pub(crate) fn run(root: &Path, options: &Options) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut packages = BUILD_PACKAGES.to_vec();
    if options.check {
        packages.extend(CHECK_PACKAGES);
    }
    crate::system::ensure("images", &packages, false)?;
    let tag = options
        .tag
        .clone()
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string());
    let binaries = binaries(root, options.debug)?;
    let tools = hecate_testenv::Tool::ALL
        .iter()
        .map(|tool| tool.locate_or_build())
        .collect::<anyhow::Result<Vec<_>>>()?;
    let work = tempfile::Builder::new()
        .prefix("hecate-images-")
        .tempdir()?;
    let storage = if options.check {
        Storage::own(&work.path().join("containers"))?
    } else {
        Storage::Machine
    };
    let revision = revision(root);
    let mut built = Vec::new();
    for image in &IMAGES {
        let at = Instant::now();
        let name = format!("{}:{tag}", image.name);
        let rootfs = work.path().join(image.name);
        let packages = assemble(image, &binaries, &tools, &rootfs, &work.path().join("debs"))?;
        commit(&storage, image, &rootfs, &name, &tag, &revision, &packages)?;
        eprintln!(
            "[images] {name}: {} Debian packages, {:.0} MiB, in {:.0?}",
            packages.len(),
            size_mib(&rootfs),
            at.elapsed()
        );
        std::fs::remove_dir_all(&rootfs)?;
        built.push((image, name));
    }
    if let Some(repository) = &options.push {
        for (image, name) in &built {
            let target = format!("{}/{}:{tag}", repository.trim_end_matches('/'), image.name);
            push(&storage, name, &target, true)?;
            eprintln!("[images] pushed {target}");
        }
    }
    if options.check {
        check::run(&storage, &built, &tag)?;
    }
    eprintln!(
        "[images] done in {:.0?}: {}",
        started.elapsed(),
        built
            .iter()
            .map(|(_, name)| name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

/// Where buildah and podman keep images: the machine's own storage (where `podman
/// images` finds them), or storage of the check's own with the settings that let a
/// container run on a machine whose cgroups and limits are unusual (a CI sandbox).
pub(crate) enum Storage {
    Machine,
    Own {
        storage_conf: PathBuf,
        containers_conf: PathBuf,
    },
}

impl Storage {
    fn own(dir: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let storage_conf = dir.join("storage.conf");
        std::fs::write(
            &storage_conf,
            format!(
                "[storage]\ndriver = \"vfs\"\ngraphroot = \"{}\"\nrunroot = \"{}\"\n",
                dir.join("graph").display(),
                dir.join("run").display()
            ),
        )?;
        // runc with cgroupfs works where crun cannot manage hybrid cgroups; podman's
        // default open-files limit is above what a sandbox allows.
        let containers_conf = dir.join("containers.conf");
        std::fs::write(
            &containers_conf,
            "[containers]\ndefault_ulimits = [\"nofile=20000:20000\", \"nproc=1000:1000\"]\n\
             [engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n",
        )?;
        Ok(Storage::Own {
            storage_conf,
            containers_conf,
        })
    }

    /// `program` (buildah or podman), set to use this storage.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        if let Storage::Own {
            storage_conf,
            containers_conf,
        } = self
        {
            command
                .env("CONTAINERS_STORAGE_CONF", storage_conf)
                .env("CONTAINERS_CONF", containers_conf);
        }
        command
    }
}

/// Runs `command`; its stdout, trimmed, or an error with its stderr.
pub(crate) fn output(command: &mut Command) -> anyhow::Result<String> {
    let output = command
        .output()
        .with_context(|| format!("running {command:?}"))?;
    anyhow::ensure!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Builds the three binaries (release unless `debug`); returns their directory.
fn binaries(root: &Path, debug: bool) -> anyhow::Result<PathBuf> {
    let profile = if debug { "debug" } else { "release" };
    eprintln!(
        "[images] building the {profile} binaries{} …",
        if debug {
            ""
        } else {
            " (a release build takes minutes the first time)"
        }
    );
    crate::build(root, &IMAGES.map(|image| image.name), !debug)
}

/// Lays out `image`'s root file system in `rootfs`; returns the Debian packages in it.
fn assemble(
    image: &Image,
    binaries: &Path,
    tools: &[PathBuf],
    rootfs: &Path,
    debs: &Path,
) -> anyhow::Result<Vec<String>> {
    let packages = debian::closure(&image.all_packages())?;
    let debs = debs.join(image.name);
    let files = debian::download(&packages, &debs)?;
    debian::unpack(&files, rootfs)?;
    debian::write_ca_bundle(rootfs)?;
    let etc = rootfs.join("etc");
    std::fs::write(
        etc.join("passwd"),
        format!(
            "root:x:0:0:root:/root:/sbin/nologin\n\
             nonroot:x:{NONROOT}:{NONROOT}:nonroot:{HOME}:/sbin/nologin\n"
        ),
    )?;
    std::fs::write(
        etc.join("group"),
        format!("root:x:0:\nnonroot:x:{NONROOT}:\n"),
    )?;
    let tmp = rootfs.join("tmp");
    std::fs::create_dir_all(&tmp)?;
    set_mode(&tmp, 0o1777)?;
    let bin = rootfs.join(BIN_DIR.trim_start_matches('/'));
    std::fs::create_dir_all(&bin)?;
    let mut programs = vec![binaries.join(image.name)];
    if image.tools {
        programs.extend(tools.iter().cloned());
    }
    for program in programs {
        let name = program.file_name().context("a program has a name")?;
        std::fs::copy(&program, bin.join(name))
            .with_context(|| format!("copying {}", program.display()))?;
        set_mode(&bin.join(name), 0o755)?;
    }
    Ok(packages.into_iter().collect())
}

fn set_mode(path: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

/// Makes `name` from `rootfs` with buildah: from scratch, the files owned by root and
/// the home by `nonroot`, the entrypoint, user, ports and OCI labels.
fn commit(
    storage: &Storage,
    image: &Image,
    rootfs: &Path,
    name: &str,
    tag: &str,
    revision: &str,
    packages: &[String],
) -> anyhow::Result<()> {
    let container = output(storage.command("buildah").args(["from", "scratch"]))?;
    let result = (|| {
        output(
            storage
                .command("buildah")
                .args(["copy", "--quiet", "--chown", "0:0", &container])
                .arg(rootfs)
                .arg("/"),
        )?;
        let home = rootfs.with_extension("home");
        std::fs::create_dir_all(&home)?;
        output(
            storage
                .command("buildah")
                .args(["copy", "--quiet", "--chown"])
                .arg(format!("{NONROOT}:{NONROOT}"))
                .arg(&container)
                .arg(&home)
                .arg(HOME),
        )?;
        let mut config = storage.command("buildah");
        config
            .args(["config", "--entrypoint"])
            .arg(format!("[\"{}\"]", image.entrypoint()))
            .args(["--cmd", ""])
            .arg("--user")
            .arg(format!("{NONROOT}:{NONROOT}"))
            .args(["--workingdir", HOME])
            .args(["--env", &format!("PATH={BIN_DIR}:/usr/bin:/bin")])
            .args(["--env", &format!("HOME={HOME}")]);
        for port in image.ports {
            config.args(["--port", &port.to_string()]);
        }
        for (key, value) in [
            ("org.opencontainers.image.title", image.name),
            ("org.opencontainers.image.version", tag),
            ("org.opencontainers.image.revision", revision),
            (
                "org.opencontainers.image.source",
                "https://github.com/hecate-dev/hecate",
            ),
            ("org.opencontainers.image.licenses", "Apache-2.0"),
            ("dev.hecate.debian-packages", &packages.join(",")),
        ] {
            config.args(["--label", &format!("{key}={value}")]);
        }
        output(config.arg(&container))?;
        output(
            storage
                .command("buildah")
                .args(["commit", "--quiet", "--rm", &container, name]),
        )?;
        Ok(())
    })();
    if result.is_err() {
        let _ = output(storage.command("buildah").args(["rm", &container]));
    }
    result
}

/// Pushes local image `name` to `target` (a registry reference).
pub(crate) fn push(storage: &Storage, name: &str, target: &str, tls: bool) -> anyhow::Result<()> {
    output(
        storage
            .command("buildah")
            .args(["push", "--quiet"])
            .arg(format!("--tls-verify={tls}"))
            .arg(name)
            .arg(format!("docker://{target}")),
    )?;
    Ok(())
}

/// The commit the images are built from, for their labels.
fn revision(root: &Path) -> String {
    Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// How big a directory's files are, in MiB.
fn size_mib(dir: &Path) -> f64 {
    fn bytes(path: &Path) -> u64 {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return 0;
        };
        if meta.is_dir() {
            std::fs::read_dir(path)
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .map(|entry| bytes(&entry.path()))
                .sum()
        } else {
            meta.len()
        }
    }
    bytes(dir) as f64 / (1024.0 * 1024.0)
}
