//! An image's Debian packages, as distroless images are made: the packages and what
//! they depend on, downloaded with apt and unpacked into a root file system. No
//! maintainer script runs, so the packages that exist only for those scripts
//! (dpkg, debconf and the like) are left out with everything only they need.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;

/// Packages only maintainer scripts use. An image runs no maintainer scripts.
const MAINTAINER_TOOLS: [&str; 6] = [
    "adduser",
    "cdebconf",
    "debconf",
    "dpkg",
    "install-info",
    "passwd",
];

/// `packages` and everything they depend on (`Depends` and `Pre-Depends`; of
/// alternatives, the first; of a virtual package, its first provider), without the
/// [`MAINTAINER_TOOLS`]. One `apt-cache depends` per level of the graph.
pub(crate) fn closure(packages: &[&str]) -> anyhow::Result<BTreeSet<String>> {
    let mut all: BTreeSet<String> = BTreeSet::new();
    let mut next: Vec<String> = packages.iter().map(|p| p.to_string()).collect();
    while !next.is_empty() {
        next.retain(|package| !MAINTAINER_TOOLS.contains(&package.as_str()));
        all.extend(next.iter().cloned());
        if next.is_empty() {
            break;
        }
        let output = Command::new("apt-cache")
            .args([
                "depends",
                "--no-recommends",
                "--no-suggests",
                "--no-conflicts",
                "--no-breaks",
                "--no-replaces",
                "--no-enhances",
            ])
            .args(&next)
            .output()
            .context("running apt-cache (the images are made of Debian's packages)")?;
        anyhow::ensure!(
            output.status.success(),
            "apt-cache depends {}: {}",
            next.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
        next = dependencies(&String::from_utf8_lossy(&output.stdout))
            .into_iter()
            .filter(|package| !all.contains(package))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
    }
    Ok(all)
}

/// The packages `apt-cache depends` output says its packages need: of each group of
/// alternatives (` |Depends: a` then `  Depends: b`) the first; of a virtual package
/// (`Depends: <name>`, its providers indented below it) the first provider.
fn dependencies(output: &str) -> Vec<String> {
    let mut chosen = Vec::new();
    // Inside a group of alternatives that already has its choice.
    let mut in_group = false;
    // A virtual package was just named: its first provider is the choice.
    let mut want_provider = false;
    for line in output.lines() {
        if let Some(provider) = line.strip_prefix("    ") {
            if want_provider {
                chosen.push(provider.trim().to_string());
                want_provider = false;
            }
            continue;
        }
        want_provider = false;
        let (alternative, relation) = if let Some(relation) = line.strip_prefix(" |") {
            (true, relation)
        } else if let Some(relation) = line.strip_prefix("  ") {
            (false, relation)
        } else {
            in_group = false;
            continue;
        };
        let Some((kind, name)) = relation.split_once(": ") else {
            continue;
        };
        if !matches!(kind, "Depends" | "PreDepends") {
            continue;
        }
        let continues_group = in_group;
        // `|` marks a line whose next line is another alternative of the same group.
        in_group = alternative;
        if continues_group {
            continue;
        }
        match name.strip_prefix('<').and_then(|n| n.strip_suffix('>')) {
            Some(_virtual) => want_provider = true,
            None => chosen.push(name.trim().to_string()),
        }
    }
    chosen
}

/// Downloads `packages` with `apt-get download` into `dir` (updating apt's lists once
/// when they lack one); returns the `.deb` files.
pub(crate) fn download(packages: &BTreeSet<String>, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let fetch = || {
        Command::new("apt-get")
            .args(["download", "-qq"])
            .args(packages)
            .current_dir(dir)
            .output()
    };
    let mut output = fetch().context("running apt-get download")?;
    if !output.status.success() {
        // A fresh machine's lists may be empty or stale.
        let _ = Command::new("apt-get").args(["update", "-qq"]).status();
        output = fetch().context("running apt-get download")?;
    }
    anyhow::ensure!(
        output.status.success(),
        "apt-get download: {}",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    let mut debs: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "deb"))
        .collect();
    debs.sort();
    anyhow::ensure!(
        debs.len() == packages.len(),
        "apt-get downloaded {} packages of {}",
        debs.len(),
        packages.len()
    );
    Ok(debs)
}

/// Unpacks every one of `debs` into `root` (`dpkg-deb -x`: their files, no scripts).
pub(crate) fn unpack(debs: &[PathBuf], root: &Path) -> anyhow::Result<()> {
    for deb in debs {
        let status = Command::new("dpkg-deb")
            .arg("-x")
            .arg(deb)
            .arg(root)
            .status()
            .context("running dpkg-deb")?;
        anyhow::ensure!(status.success(), "dpkg-deb -x {}", deb.display());
    }
    Ok(())
}

/// The CA bundle `update-ca-certificates` would write from the `ca-certificates`
/// package's certificates (all of them, as its default configuration selects), at
/// `/etc/ssl/certs/ca-certificates.crt` where rustls, git and ssh look for it.
pub(crate) fn write_ca_bundle(root: &Path) -> anyhow::Result<()> {
    let dir = root.join("usr/share/ca-certificates/mozilla");
    let mut certificates: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "crt"))
        .collect();
    certificates.sort();
    anyhow::ensure!(
        !certificates.is_empty(),
        "no certificates in {}",
        dir.display()
    );
    let mut bundle = String::new();
    for certificate in &certificates {
        let pem = std::fs::read_to_string(certificate)?;
        bundle.push_str(pem.trim_end());
        bundle.push('\n');
    }
    let certs = root.join("etc/ssl/certs");
    std::fs::create_dir_all(&certs)?;
    std::fs::write(certs.join("ca-certificates.crt"), bundle)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_alternative_and_the_first_provider_are_chosen() {
        let output = "\
git
  Depends: libc6
  Depends: libcurl3-gnutls
 |Depends: perl
  Depends: perl-base
  Depends: <perlapi-5.36.0>
    perl-base
    perl-other
  PreDepends: zlib1g
  Recommends: less
  Suggests: gitk
ca-certificates
 |Depends: debconf
  Depends: <debconf-2.0>
    cdebconf
    debconf
  Depends: openssl
";
        assert_eq!(
            dependencies(output),
            [
                "libc6",
                "libcurl3-gnutls",
                "perl",
                "perl-base",
                "zlib1g",
                "debconf",
                "openssl"
            ]
        );
    }
}
