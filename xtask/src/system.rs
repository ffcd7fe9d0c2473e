//! Debian packages a task needs, installed when missing: with apt-get as root, or
//! through `sudo -n` otherwise; when neither is possible the error names the packages
//! to install. `cargo xtask test` and `cargo xtask images` both set up their machine
//! this way.

use std::path::Path;
use std::process::Command;

/// A Debian package a task needs: the command that proves it is installed (on `PATH`,
/// or at an absolute path for a program outside a user's `PATH`) and the package.
pub(crate) type Package = (&'static str, &'static str);

/// Makes sure every one of `packages` is installed; `task` names who needs them in
/// what is printed (`"test"`, `"images"`). With `dry_run`, only says what it would do.
pub(crate) fn ensure(task: &str, packages: &[Package], dry_run: bool) -> anyhow::Result<()> {
    let machine = Machine {
        root: is_root(),
        sudo: on_path("sudo"),
        apt: on_path("apt-get"),
    };
    match plan(packages, &on_path, machine) {
        Plan::Ready => eprintln!(
            "[{task}] system parts: all present ({})",
            packages
                .iter()
                .map(|(_, package)| *package)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Plan::Install { packages, commands } if dry_run => {
            eprintln!("[{task}] would install {}:", packages.join(", "));
            for command in commands {
                eprintln!("  {}", command.join(" "));
            }
        }
        Plan::Install { packages, commands } => {
            eprintln!("[{task}] installing {} …", packages.join(", "));
            for command in commands {
                let status = Command::new(&command[0])
                    .args(&command[1..])
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .status();
                anyhow::ensure!(
                    status.is_ok_and(|s| s.success()),
                    "{}",
                    cannot_install(task, &packages)
                );
            }
        }
        Plan::Impossible { packages } => anyhow::bail!("{}", cannot_install(task, &packages)),
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

/// Decides the set-up of `wanted` from what is `present` (a command on PATH) and the
/// `machine`.
fn plan(wanted: &[Package], present: &dyn Fn(&str) -> bool, machine: Machine) -> Plan {
    let packages: Vec<&'static str> = wanted
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

fn cannot_install(task: &str, packages: &[&str]) -> String {
    format!(
        "`cargo xtask {task}` needs these Debian packages and they could not be installed \
         here: {}\ninstall them (e.g. `sudo apt-get install -y {}`) and run again",
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

/// Whether `command` is on `PATH` (or, given as an absolute path, is a file there).
pub(crate) fn on_path(command: &str) -> bool {
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

    const WANTED: [Package; 3] = [
        ("chromium", "chromium"),
        ("docker-registry", "docker-registry"),
        ("/usr/sbin/sshd", "openssh-server"),
    ];

    #[test]
    fn nothing_to_do_when_everything_is_installed() {
        assert_eq!(plan(&WANTED, &|_| true, ROOT), Plan::Ready);
    }

    #[test]
    fn missing_packages_are_installed_with_apt_or_sudo() {
        let no_registry = |command: &str| command != "docker-registry";
        assert_eq!(
            plan(&WANTED, &no_registry, ROOT),
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
        let Plan::Install { commands, .. } = plan(&WANTED, &|_| false, user) else {
            panic!("installable with sudo");
        };
        assert_eq!(&commands[1][..3], ["sudo", "-n", "apt-get"]);
        assert!(commands[1].ends_with(&[
            "chromium".into(),
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
        let plan = plan(&WANTED, &|command| command == "chromium", no_sudo);
        assert_eq!(
            plan,
            Plan::Impossible {
                packages: vec!["docker-registry", "openssh-server"]
            }
        );
        let message = cannot_install("test", &["chromium", "docker-registry"]);
        assert!(message.contains("`cargo xtask test`"), "{message}");
        assert!(message.contains("chromium, docker-registry"), "{message}");
        assert!(
            message.contains("sudo apt-get install -y chromium docker-registry"),
            "{message}"
        );
    }
}
