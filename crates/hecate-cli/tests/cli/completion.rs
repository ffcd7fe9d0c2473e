//! Completion scripts, the completion backend, and the man page.

use std::path::Path;

use hecate_testenv::{Identity, TestEnv};
use hecate_types::PassagePhase;
use pretty_assertions::assert_eq;

use crate::harness::*;

fn hecate() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_hecate"))
}

async fn complete(words: &[&str]) -> Vec<String> {
    let run = output(
        binary(hecate())
            .arg("__complete")
            .args(words)
            .output()
            .await
            .unwrap(),
    );
    assert_eq!(run.code, 0, "completion always exits 0: {run:?}");
    assert_eq!(run.stderr, "", "completion never prints errors");
    run.stdout.lines().map(String::from).collect()
}

#[tokio::test]
async fn scripts_for_every_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let run = output(
            binary(hecate())
                .args(["completion", shell])
                .output()
                .await
                .unwrap(),
        );
        assert_eq!(run.code, 0);
        assert!(
            run.stdout.contains("hecate __complete"),
            "{shell}: {}",
            run.stdout
        );
    }
}

#[tokio::test]
async fn commands_flags_and_values_come_from_the_command_line_definition() {
    let all = complete(&[""]).await;
    for command in [
        "status",
        "explain",
        "promote",
        "approve",
        "abort",
        "poll",
        "audit",
        "diff",
        "completion",
        "man",
    ] {
        assert!(all.contains(&command.to_string()), "{command} in {all:?}");
    }
    assert!(
        !all.iter().any(|c| c.starts_with("__")),
        "the backend is never offered"
    );
    assert_eq!(complete(&["ex"]).await, ["explain"]);
    let promote_flags = complete(&["promote", "--"]).await;
    for flag in [
        "--bundle",
        "--watch",
        "--timeout",
        "--output",
        "--namespace",
        "--kubeconfig",
    ] {
        assert!(
            promote_flags.contains(&flag.to_string()),
            "{flag} in {promote_flags:?}"
        );
    }
    assert!(
        !complete(&["status", "--"])
            .await
            .contains(&"--bundle".to_string())
    );
    for flag in ["-o", "--output"] {
        assert_eq!(
            complete(&["status", flag, ""]).await,
            ["table", "wide", "json", "yaml", "name", "jsonpath="]
        );
    }
    // A report has no names to print.
    assert_eq!(
        complete(&["audit", "-o", ""]).await,
        ["table", "wide", "json", "yaml", "jsonpath="]
    );
    assert_eq!(complete(&["completion", ""]).await, ["bash", "zsh", "fish"]);
}

#[tokio::test]
async fn names_come_from_the_cluster() {
    let env = TestEnv::new().await;
    let h = Hecate::new(&env).await;
    gate(&env, "dev", gate_spec(&[], false)).await;
    gate(&env, "production", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    passage(&env, "dev-1", "dev", "b1", PassagePhase::Running).await;
    passage(&env, "dev-0", "dev", "b1", PassagePhase::Succeeded).await;
    let kubeconfig = h.kubeconfig(Identity::Alice);
    let kubeconfig = kubeconfig.to_str().unwrap();
    let ns = env.namespace.as_str();
    assert_eq!(
        complete(&["explain", "--kubeconfig", kubeconfig, "-n", ns, ""]).await,
        ["dev", "production"]
    );
    assert_eq!(
        complete(&[
            "explain",
            "--kubeconfig",
            kubeconfig,
            &format!("--namespace={ns}"),
            "pro"
        ])
        .await,
        ["production"]
    );
    assert_eq!(
        complete(&[
            "promote",
            "dev",
            "--kubeconfig",
            kubeconfig,
            "-n",
            ns,
            "--bundle",
            ""
        ])
        .await,
        ["b1"]
    );
    assert_eq!(
        complete(&["abort", "--kubeconfig", kubeconfig, "-n", ns, ""]).await,
        ["dev-1"],
        "only running Passages"
    );
    // `diff` takes a Bundle, and compares it against a Gate or a Bundle.
    assert_eq!(
        complete(&["diff", "--kubeconfig", kubeconfig, "-n", ns, ""]).await,
        ["b1"]
    );
    assert_eq!(
        complete(&[
            "diff",
            "b1",
            "--kubeconfig",
            kubeconfig,
            "-n",
            ns,
            "--against",
            ""
        ])
        .await,
        ["b1", "dev", "production"]
    );
}

#[tokio::test]
async fn an_unreachable_cluster_offers_nothing() {
    assert_eq!(
        complete(&["explain", "--kubeconfig", "/nonexistent/kubeconfig", ""]).await,
        Vec::<String>::new()
    );
}

/// `hecate` installed under `name` (a plugin is the same binary, renamed).
fn installed_as(dir: &tempfile::TempDir, name: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    // A hard link, not a copy: a copy holds the new file open for writing, and a child
    // another test forks meanwhile inherits that descriptor, so executing the copy can
    // fail with "Text file busy". A copy only where linking cannot (another filesystem).
    if std::fs::hard_link(hecate(), &path).is_err() {
        std::fs::copy(hecate(), &path).unwrap();
    }
    path
}

/// CLI #9: the man page is ASCII roff with the sections a man page has, in order; its
/// COMMANDS give each command's synopsis and what it does, its EXAMPLES whole command
/// lines (one with an em dash, escaped), its EXIT STATUS every code. As a plugin the
/// command lines name the plugin; the NAME stays `hecate`.
#[tokio::test]
async fn cli09_the_man_page_has_its_sections_and_examples() {
    let dir = tempfile::tempdir().unwrap();
    for (name, invoked) in [
        ("hecate", "hecate"),
        ("kubectl-hecate", "kubectl hecate"),
        ("flux-hecate", "flux hecate"),
    ] {
        let run = output(
            binary(&installed_as(&dir, name))
                .arg("man")
                .output()
                .await
                .unwrap(),
        );
        assert_eq!(run.code, 0, "{run:?}");
        let man = run.stdout;
        assert!(man.is_ascii(), "roff must be ASCII");
        assert!(!man.contains('\u{2014}'));
        assert_eq!(
            man.lines().next(),
            Some(concat!(
                ".TH HECATE 1 \"\" \"hecate ",
                env!("CARGO_PKG_VERSION"),
                "\" \"User Commands\""
            ))
        );
        let sections: Vec<&str> = man.lines().filter(|l| l.starts_with(".SH ")).collect();
        assert_eq!(
            sections,
            [
                ".SH NAME",
                ".SH SYNOPSIS",
                ".SH DESCRIPTION",
                ".SH OPTIONS",
                ".SH COMMANDS",
                ".SH EXAMPLES",
                ".SH \"EXIT STATUS\"",
                ".SH \"SEE ALSO\"",
            ],
            "{name}"
        );
        let section = |title: &str| {
            let start = man.find(&format!(".SH {title}\n")).unwrap();
            let rest = &man[start + 1..];
            rest[..rest.find("\n.SH ").unwrap_or(rest.len())].to_string()
        };
        assert_eq!(
            section("NAME"),
            "SH NAME\nhecate \\- release promotion on Kubernetes"
        );

        let commands = section("COMMANDS");
        let entries: Vec<&str> = commands.lines().filter(|l| l.starts_with("\\fB")).collect();
        assert_eq!(
            entries.len(),
            30,
            "every command but the hidden one, and each of flux's actions: {commands}"
        );
        for entry in [
            format!("\\fB{invoked} preflight [OPTIONS] <GATE>\\fR"),
            format!("\\fB{invoked} flux [OPTIONS] <GATE>\\fR"),
            format!("\\fB{invoked} flux suspend [OPTIONS] <GATE> <KIND/NAME>\\fR"),
            format!("\\fB{invoked} status [OPTIONS]\\fR"),
            format!("\\fB{invoked} promote [OPTIONS] \\-\\-bundle <BUNDLE> <GATE>\\fR"),
            format!("\\fB{invoked} rollback [OPTIONS] <GATE>\\fR"),
            format!("\\fB{invoked} targets [OPTIONS] <GATE>\\fR"),
            format!("\\fB{invoked} retry [OPTIONS] <PASSAGE>\\fR"),
            format!("\\fB{invoked} accept\\-failures [OPTIONS] \\-\\-reason <TEXT> <PASSAGE>\\fR"),
            format!("\\fB{invoked} approve [OPTIONS] \\-\\-gate <GATE> <BUNDLE>\\fR"),
            format!("\\fB{invoked} verify [OPTIONS] [BUNDLE]\\fR"),
            format!("\\fB{invoked} approvals [OPTIONS]\\fR"),
            format!("\\fB{invoked} reject [OPTIONS] \\-\\-gate <GATE> <BUNDLE>\\fR"),
            format!("\\fB{invoked} diff [OPTIONS] <BUNDLE>\\fR"),
        ] {
            assert!(entries.contains(&entry.as_str()), "{entry}: {commands}");
        }
        assert!(
            commands.contains(
                "\nCheck the tamper\\-evident chains of a Bundle's recorded crossings in Fides\n"
            ),
            "{commands}"
        );
        assert!(!man.contains("__complete"));

        let examples = section("EXAMPLES");
        for line in [
            format!("\n{invoked} explain production \\-n shop\n"),
            format!("\n{invoked} rollback production \\-n shop\n"),
            format!(
                "\n{invoked} promote production \\-\\-bundle app\\-7f3c2a \\-\\-watch \\-\\-timeout 30m \\-n shop\n"
            ),
            format!(
                "\n{invoked} verify app\\-7f3c2a \\-o json \\-\\-server https://fides.example.com\n"
            ),
        ] {
            assert!(examples.contains(&line), "{line:?}: {examples}");
        }
        assert!(
            examples.contains("follow the crossing \\(em exit 0 when it lands"),
            "{examples}"
        );
        assert_eq!(examples.matches(".nf\n").count(), 11, "{examples}");

        let exits = section("\"EXIT STATUS\"");
        let codes: Vec<&str> = exits.lines().filter(|l| l.starts_with(".B ")).collect();
        assert_eq!(
            codes,
            [".B 0", ".B 1", ".B 2", ".B 3", ".B 4", ".B 5", ".B 6"]
        );
        assert!(
            exits.contains("\npromote \\-\\-watch: the crossing failed or was aborted"),
            "{exits}"
        );
    }
}

/// CLI #11: installed as a kubectl or Flux plugin, help names the plugin in its usage
/// lines, but its title still starts with `hecate ` (surfaces §1.8).
#[tokio::test]
async fn cli11_the_title_is_not_rewritten_in_plugin_mode() {
    let dir = tempfile::tempdir().unwrap();
    for (name, invoked) in [
        ("hecate", "hecate"),
        ("kubectl-hecate", "kubectl hecate"),
        ("flux-hecate", "flux hecate"),
    ] {
        let path = installed_as(&dir, name);
        for flag in ["--help", "-h"] {
            let run = output(binary(&path).arg(flag).output().await.unwrap());
            assert_eq!(run.code, 0, "{run:?}");
            assert!(
                run.stdout
                    .starts_with("hecate \u{2014} release promotion on Kubernetes\n"),
                "{name} {flag}: {}",
                run.stdout
            );
            assert!(
                run.stdout
                    .contains(&format!("\nUsage: {invoked} [OPTIONS] <COMMAND>\n")),
                "{name} {flag}: {}",
                run.stdout
            );
            if name != "hecate" {
                assert!(
                    !run.stdout.contains("Usage: hecate"),
                    "{name} {flag}: {}",
                    run.stdout
                );
            }
        }
    }
}
