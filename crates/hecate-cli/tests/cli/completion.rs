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
            ["table", "json", "yaml"]
        );
    }
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
}

#[tokio::test]
async fn an_unreachable_cluster_offers_nothing() {
    assert_eq!(
        complete(&["explain", "--kubeconfig", "/nonexistent/kubeconfig", ""]).await,
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn the_man_page_is_ascii_roff() {
    let run = output(binary(hecate()).arg("man").output().await.unwrap());
    assert_eq!(run.code, 0);
    assert!(run.stdout.is_ascii(), "roff must be ASCII");
    for part in [
        ".TH hecate 1",
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH \"EXIT STATUS\"",
        "promote",
        "explain",
    ] {
        assert!(run.stdout.contains(part), "{part}");
    }
}
