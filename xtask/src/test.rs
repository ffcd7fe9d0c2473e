//! `cargo xtask test`: the README's test command. It makes sure the machine has what
//! the tests use — Debian packages when missing (headless Chromium and its driver for
//! the UI, git for the controller's steps and Beacons, `docker-registry` for the image
//! Beacons' loopback registry, `openssh-server` for git over SSH), the control plane, `kustomize` and `helm` (the render
//! steps' programs) built once into the shared cache, schemathesis (which checks the
//! API against its OpenAPI document) installed once from PyPI into a virtualenv
//! there — then runs `cargo test
//! --workspace` with any arguments passed through (`cargo xtask test -p hecate-ops`,
//! `cargo xtask test -- name_filter`).
//!
//! A part that comes from Go modules is built once per machine, outside the repository,
//! by the same `hecate-testenv` code the tests use when they start; Debian packages are installed with `sudo` when not root, and
//! when that is impossible the error names the packages to install.

use std::path::Path;
use std::process::Command;

/// What the tests need from Debian: (command that proves it is there — on `PATH`, or at
/// an absolute path for a program outside a user's `PATH` —, package).
const PACKAGES: [(&str, &str); 5] = [
    ("chromium", "chromium"),
    ("chromedriver", "chromium-driver"),
    ("git", "git"),
    ("docker-registry", "docker-registry"),
    ("/usr/sbin/sshd", "openssh-server"),
];

pub(crate) fn run(root: &Path, args: &[String], dry_run: bool) -> anyhow::Result<()> {
    let machine = Machine {
        root: is_root(),
        sudo: on_path("sudo"),
        apt: on_path("apt-get"),
    };
    match plan(&on_path, machine) {
        Plan::Ready => eprintln!("[test] system parts: all present ({})", names()),
        Plan::Install { packages, commands } if dry_run => {
            eprintln!("[test] would install {}:", packages.join(", "));
            for command in commands {
                eprintln!("  {}", command.join(" "));
            }
        }
        Plan::Install { packages, commands } => {
            eprintln!("[test] installing {} …", packages.join(", "));
            for command in commands {
                let status = Command::new(&command[0])
                    .args(&command[1..])
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .status();
                anyhow::ensure!(
                    status.is_ok_and(|s| s.success()),
                    "{}",
                    cannot_install(&packages)
                );
            }
        }
        Plan::Impossible { packages } => anyhow::bail!("{}", cannot_install(&packages)),
    }
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

/// What the machine offers for installing packages.
#[derive(Clone, Copy, Debug)]
struct Machine {
    root: bool,
    sudo: bool,
    apt: bool,
}

/// What the set-up will do.
#[derive(Debug, PartialEq, Eq)]
enum Plan {
    /// Everything is there.
    Ready,
    /// Install `packages` by running `commands`.
    Install {
        packages: Vec<&'static str>,
        commands: Vec<Vec<String>>,
    },
    /// `packages` are missing and this machine cannot install them.
    Impossible { packages: Vec<&'static str> },
}

/// Decides the set-up from what is `present` (a command on PATH) and the `machine`.
fn plan(present: &dyn Fn(&str) -> bool, machine: Machine) -> Plan {
    let packages: Vec<&'static str> = PACKAGES
        .iter()
        .filter(|(command, _)| !present(command))
        .map(|(_, package)| *package)
        .collect();
    if packages.is_empty() {
        return Plan::Ready;
    }
    if !machine.apt || !(machine.root || machine.sudo) {
        return Plan::Impossible { packages };
    }
    let apt = |args: &[&str]| -> Vec<String> {
        let mut command: Vec<String> = if machine.root {
            vec!["apt-get".into()]
        } else {
            vec!["sudo".into(), "-n".into(), "apt-get".into()]
        };
        command.extend(args.iter().map(|a| a.to_string()));
        command
    };
    let mut install = vec!["install", "-y", "-qq"];
    install.extend(&packages);
    Plan::Install {
        commands: vec![apt(&["update", "-qq"]), apt(&install)],
        packages,
    }
}

fn cannot_install(packages: &[&str]) -> String {
    format!(
        "the tests need these Debian packages and they could not be installed here: {}\n\
         install them (e.g. `sudo apt-get install -y {}`) and run again",
        packages.join(", "),
        packages.join(" ")
    )
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn names() -> String {
    PACKAGES
        .iter()
        .map(|(_, p)| *p)
        .collect::<Vec<_>>()
        .join(", ")
}

fn on_path(command: &str) -> bool {
    if command.starts_with('/') {
        return Path::new(command).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: Machine = Machine {
        root: true,
        sudo: false,
        apt: true,
    };

    #[test]
    fn nothing_to_do_when_everything_is_installed() {
        assert_eq!(plan(&|_| true, ROOT), Plan::Ready);
    }

    #[test]
    fn missing_packages_are_installed_with_apt_or_sudo() {
        let no_registry = |command: &str| command != "docker-registry";
        assert_eq!(
            plan(&no_registry, ROOT),
            Plan::Install {
                packages: vec!["docker-registry"],
                commands: vec![
                    vec!["apt-get".into(), "update".into(), "-qq".into()],
                    ["apt-get", "install", "-y", "-qq", "docker-registry"]
                        .map(String::from)
                        .to_vec(),
                ],
            }
        );
        let user = Machine {
            root: false,
            sudo: true,
            apt: true,
        };
        let Plan::Install { commands, .. } = plan(&|_| false, user) else {
            panic!("installable with sudo");
        };
        assert_eq!(&commands[1][..3], ["sudo", "-n", "apt-get"]);
        assert!(commands[1].ends_with(&[
            "chromium".into(),
            "chromium-driver".into(),
            "git".into(),
            "docker-registry".into(),
            "openssh-server".into()
        ]));
    }

    #[test]
    fn a_program_outside_path_is_looked_for_where_it_is() {
        assert!(on_path("/bin/sh"));
        assert!(!on_path("/nowhere/sshd"));
    }

    #[test]
    fn a_machine_that_cannot_install_says_which_packages() {
        let no_sudo = Machine {
            root: false,
            sudo: false,
            apt: true,
        };
        let plan = plan(&|command| command == "git", no_sudo);
        assert_eq!(
            plan,
            Plan::Impossible {
                packages: vec![
                    "chromium",
                    "chromium-driver",
                    "docker-registry",
                    "openssh-server"
                ]
            }
        );
        let message = cannot_install(&["chromium", "docker-registry"]);
        assert!(message.contains("chromium, docker-registry"), "{message}");
        assert!(
            message.contains("sudo apt-get install -y chromium docker-registry"),
            "{message}"
        );
    }
}
