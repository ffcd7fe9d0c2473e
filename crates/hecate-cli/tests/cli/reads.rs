//! Reads: tables, structured output, empty results, missing objects, and the cluster
//! refusing or not answering.

use hecate_cli::exit;
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{GateOccupant, GateStatus, PassagePhase, Time};
use pretty_assertions::assert_eq;

use crate::harness::*;

#[tokio::test]
async fn status_explain_and_lists() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "dev", gate_spec(&[], false)).await;
    gate(&env, "production", gate_spec(&["dev"], true)).await;
    bundle(&env, "b1").await;
    passage(&env, "dev-1", "dev", "b1", PassagePhase::Running).await;

    let status = hecate.run(Identity::Alice, &["status"]).await;
    assert_eq!(status.code, 0, "{status:?}");
    let lines: Vec<&str> = status.stdout.lines().collect();
    assert!(
        lines[0].starts_with("GATE") && lines[0].contains("SUMMARY"),
        "{}",
        status.stdout
    );
    assert!(
        lines[1].starts_with("dev ") && lines[1].contains("Crossing"),
        "{}",
        status.stdout
    );
    assert!(
        lines[2].starts_with("production ") && lines[2].contains("has not cleared dev"),
        "{}",
        status.stdout
    );
    assert!(
        !status.stdout.contains('\x1b'),
        "no colour when not on a terminal"
    );

    // The reference's value: an array of Explanation, one per Gate, upstream first.
    let json = hecate.run(Identity::Alice, &["status", "-o", "json"]).await;
    let explanations: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(explanations[0]["gate"], "dev");
    assert_eq!(explanations[0]["state"], "Crossing");
    assert_eq!(explanations.as_array().map(Vec::len), Some(2));
    assert_eq!(explanations[1]["gate"], "production");
    assert_eq!(explanations[1]["blockers"][0]["kind"], "UpstreamNotCleared");

    let yaml = hecate.run(Identity::Alice, &["status", "-o", "yaml"]).await;
    let from_yaml: serde_json::Value = serde_yaml_ng::from_str(&yaml.stdout).unwrap();
    assert_eq!(
        from_yaml, explanations,
        "YAML and JSON carry the same value"
    );

    let explain = hecate
        .run(Identity::Alice, &["explain", "production"])
        .await;
    assert_eq!(explain.code, 0, "{explain:?}");
    assert!(
        explain.stdout.starts_with("production is Blocked\n"),
        "{}",
        explain.stdout
    );
    assert!(
        explain
            .stdout
            .contains("[UpstreamNotCleared] b1: has not cleared dev"),
        "{}",
        explain.stdout
    );
    assert!(explain.stdout.contains(&format!(
        "→ take it through the upstream Gate first: hecate promote dev --bundle b1 -n {}",
        env.namespace
    )));

    for (command, name) in [
        ("gates", "production"),
        ("bundles", "b1"),
        ("passages", "dev-1"),
    ] {
        let table = hecate.run(Identity::Alice, &[command]).await;
        assert_eq!(table.code, 0, "{table:?}");
        assert!(table.stdout.starts_with("NAME"), "{}", table.stdout);
        assert!(table.stdout.contains(name), "{}", table.stdout);
        let json = hecate.run(Identity::Alice, &[command, "-o", "json"]).await;
        let items: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
        assert!(
            items.iter().any(|i| i["metadata"]["name"] == name),
            "{command}"
        );
    }
    // The plain list stays by name and carries each Gate's stage (ops').
    let gates = hecate.run(Identity::Alice, &["gates", "-o", "json"]).await;
    let gates: Vec<serde_json::Value> = serde_json::from_str(&gates.stdout).unwrap();
    let staged: Vec<(&str, u64)> = gates
        .iter()
        .map(|g| {
            let name = g["metadata"]["name"].as_str().unwrap_or_default();
            (name, g["stage"]["index"].as_u64().unwrap_or(99))
        })
        .collect();
    assert_eq!(staged, [("dev", 0), ("production", 1)]);
    assert_eq!(gates[1]["stage"]["after"], serde_json::json!(["dev"]));
    let table = hecate.run(Identity::Alice, &["gates"]).await;
    assert!(
        table.stdout.starts_with("NAME")
            && table
                .stdout
                .lines()
                .next()
                .is_some_and(|l| l.contains("STAGE")),
        "{}",
        table.stdout
    );
    let filtered = hecate
        .run(
            Identity::Alice,
            &["passages", "--gate", "production", "-o", "json"],
        )
        .await;
    assert_eq!(filtered.stdout.trim(), "[]");
}

#[tokio::test]
async fn empty_results_are_clear_in_every_format() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let ns = &env.namespace;
    let status = hecate.run(Identity::Alice, &["status"]).await;
    assert_eq!(
        (status.code, status.stdout.clone()),
        (0, format!("no Gates in {ns}\n"))
    );
    for command in ["gates", "bundles", "passages", "beacons", "audit"] {
        let json = hecate.run(Identity::Alice, &[command, "-o", "json"]).await;
        assert_eq!((json.code, json.stdout.trim()), (0, "[]"), "{command}");
        let table = hecate.run(Identity::Alice, &[command]).await;
        assert!(
            table.stdout.starts_with("no ") || table.stdout.starts_with("nothing "),
            "{command}: {}",
            table.stdout
        );
    }
}

#[tokio::test]
async fn a_missing_gate_is_a_usage_error() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let run = hecate.run(Identity::Alice, &["explain", "ghost"]).await;
    assert_eq!(run.code, i32::from(exit::USAGE));
    assert_eq!(
        run.stderr,
        format!("hecate: no Gate named ghost in {}\n", env.namespace)
    );
    assert_eq!(run.stdout, "");
}

#[tokio::test]
async fn a_user_without_rights_is_told_so() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let run = hecate.run(Identity::CiBot, &["status"]).await;
    assert_eq!(run.code, i32::from(exit::COULD_NOT_TELL), "{run:?}");
    // Gates, Bundles and Passages are listed together: whichever refusal comes back
    // first is the one reported.
    assert!(
        ["Gates", "Bundles", "Passages"].iter().any(|kind| run
            .stderr
            .starts_with(&format!("hecate: not allowed while listing {kind}"))),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("ci-bot"), "{}", run.stderr);
    // The permission the command needs, from ops' catalogue.
    assert!(
        run.stderr.ends_with(&format!(
            " — ask for a Role that grants at least list gates in {}\n",
            env.namespace
        )),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr.lines().count(),
        1,
        "one sentence, not a stack: {}",
        run.stderr
    );
}

#[tokio::test]
async fn an_unreachable_cluster_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
    )
    .unwrap();
    let out = binary(std::path::Path::new(env!("CARGO_BIN_EXE_hecate")))
        .args(["status", "--kubeconfig"])
        .arg(&kubeconfig)
        .output()
        .await
        .unwrap();
    let run = output(out);
    assert_eq!(run.code, i32::from(exit::COULD_NOT_TELL), "{run:?}");
    assert!(
        run.stderr
            .starts_with("hecate: cannot reach the cluster at https://127.0.0.1:1/"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);

    let missing = output(
        binary(std::path::Path::new(env!("CARGO_BIN_EXE_hecate")))
            .args(["status", "--kubeconfig", "/nonexistent/k"])
            .output()
            .await
            .unwrap(),
    );
    assert_eq!(missing.code, i32::from(exit::COULD_NOT_TELL));
    assert!(
        missing
            .stderr
            .contains("no usable Kubernetes configuration"),
        "{}",
        missing.stderr
    );
}

#[tokio::test]
async fn usage_errors_exit_1() {
    let hecate = std::path::Path::new(env!("CARGO_BIN_EXE_hecate"));
    for args in [
        vec![],
        vec!["frobnicate"],
        vec!["explain"],
        vec!["promote", "staging"],
        vec!["approve", "b1"],
        vec!["status", "-o", "toml"],
        vec!["completion", "powershell"],
    ] {
        let run = output(binary(hecate).args(&args).output().await.unwrap());
        assert_eq!(run.code, i32::from(exit::USAGE), "{args:?}: {run:?}");
    }
    let help = output(binary(hecate).arg("--help").output().await.unwrap());
    assert_eq!(help.code, 0);
    assert!(
        help.stdout.contains("Exit status:") && help.stdout.contains("6  promote --watch"),
        "{}",
        help.stdout
    );
    let version = output(binary(hecate).arg("--version").output().await.unwrap());
    assert_eq!(
        (version.code, version.stdout.trim()),
        (0, concat!("hecate ", env!("CARGO_PKG_VERSION")))
    );
}

/// `hecate status` orders Gates as the pipeline runs, not by name: on a three-stage
/// pipeline and on a diamond, in the table and in JSON.
#[tokio::test]
async fn status_orders_gates_upstream_first() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "production", gate_spec(&["staging"], false)).await;
    gate(&env, "dev", gate_spec(&[], false)).await;
    gate(&env, "staging", gate_spec(&["dev"], false)).await;

    let first_column = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .skip(1)
            .filter_map(|line| line.split_whitespace().next().map(str::to_string))
            .collect()
    };
    let table = hecate.run(Identity::Alice, &["status"]).await;
    assert_eq!(table.code, 0, "{table:?}");
    assert_eq!(
        first_column(&table.stdout),
        ["dev", "staging", "production"]
    );
}

#[tokio::test]
async fn status_orders_a_diamond_by_its_longest_path() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    // dev → {qa, perf} → production; "a-canary" after perf only.
    gate(&env, "production", gate_spec(&["qa", "perf"], false)).await;
    gate(&env, "qa", gate_spec(&["dev"], false)).await;
    gate(&env, "perf", gate_spec(&["dev"], false)).await;
    gate(&env, "a-canary", gate_spec(&["perf"], false)).await;
    gate(&env, "dev", gate_spec(&[], false)).await;

    let json = hecate.run(Identity::Alice, &["status", "-o", "json"]).await;
    assert_eq!(json.code, 0, "{json:?}");
    let explanations: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    let order: Vec<&str> = explanations
        .iter()
        .filter_map(|x| x["gate"].as_str())
        .collect();
    assert_eq!(order, ["dev", "perf", "qa", "a-canary", "production"]);
    let table = hecate.run(Identity::Alice, &["status"]).await;
    let names: Vec<&str> = table
        .stdout
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(names, order);
}

/// `hecate diff` (DECISION 140): a Bundle against its Beacon's previous one, against
/// what a Gate runs, or against a Bundle named; the commits between them from what the
/// Beacon recorded; a name that is neither is said as a missing Bundle.
#[tokio::test]
async fn diff_against_the_previous_bundle_a_gate_or_a_bundle() {
    use hecate_testenv::fixtures::{release_at, sha_of};
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    release_at(&env, "shop-1", 0, 'a', "v1.0.0", "", &[]).await;
    release_at(&env, "shop-2", 10, 'b', "v1.1.0", &sha_of('a'), &["cart"]).await;
    release_at(
        &env,
        "shop-3",
        20,
        'c',
        "v1.2.0",
        &sha_of('b'),
        &["checkout", "search"],
    )
    .await;
    let mut production = gate(&env, "production", gate_spec(&[], false)).await;
    production.status = Some(GateStatus {
        current: Some(GateOccupant {
            bundle: "shop-1".into(),
            digest: String::new(),
            passage: "production-1".into(),
            entered_at: Time(jiff::Timestamp::now()),
            actor: "bob".into(),
            verified: None,
        }),
        ..GateStatus::default()
    });
    env.write_status(&production).await;

    // Against the previous Bundle, by default.
    let json = hecate
        .run(Identity::Alice, &["diff", "shop-3", "-o", "json"])
        .await;
    assert_eq!(json.code, 0, "{json:?}");
    let diff: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        diff["from"],
        serde_json::json!({"name": "shop-2", "version": "v1.1.0"})
    );
    assert_eq!(
        diff["to"],
        serde_json::json!({"name": "shop-3", "version": "v1.2.0"})
    );
    assert_eq!(diff["direction"], "forward");
    assert_eq!(diff["commits"].as_array().map(Vec::len), Some(2));
    assert_eq!(diff["artifacts"][0]["changed"], true);

    // Against what production runs: every commit since.
    let table = hecate
        .run(
            Identity::Alice,
            &["diff", "shop-3", "--against", "production"],
        )
        .await;
    assert_eq!(table.code, 0, "{table:?}");
    assert!(
        table
            .stdout
            .starts_with("v1.2.0 (shop-3)\nnewer than v1.0.0 (shop-1), what production runs\n"),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains("3 commits:"), "{}", table.stdout);

    // Against a Bundle named: going back, the commits undone.
    let back = hecate
        .run(
            Identity::Alice,
            &["diff", "shop-1", "--against", "shop-3", "-o", "json"],
        )
        .await;
    let back: serde_json::Value = serde_json::from_str(&back.stdout).unwrap();
    assert_eq!(back["direction"], "back");
    assert_eq!(back["commits"].as_array().map(Vec::len), Some(3));

    // Neither a Gate nor a Bundle.
    let missing = hecate
        .run(Identity::Alice, &["diff", "shop-3", "--against", "qa"])
        .await;
    assert_eq!(missing.code, i32::from(exit::USAGE), "{missing:?}");
    assert_eq!(
        missing.stderr,
        format!("hecate: no Bundle named qa in {}\n", env.namespace)
    );
}

/// `hecate notifications`: who is told and what was sent, read from the Notifiers'
/// status (DECISION 166); `--gate` narrows to what concerns one Gate.
#[tokio::test]
async fn notifications_read_who_is_told_and_what_was_sent() {
    use hecate_types::{
        NoticeKind, NoticeOutcome, NoticeRecord, Notifier, NotifierSpec, NotifierStatus,
        NotifierType,
    };
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    env.grant(Identity::Alice, &["get", "list"], &["notifiers", "gates"])
        .await;
    let empty = hecate.run(Identity::Alice, &["notifications"]).await;
    assert_eq!(empty.code, 0, "{empty:?}");
    assert!(
        empty.stdout.starts_with("No Notifiers in "),
        "{}",
        empty.stdout
    );

    let mut notifier = env
        .create(Notifier::new(
            "releases",
            NotifierSpec {
                type_: NotifierType::Slack,
                gates: vec!["production".into()],
                ..NotifierSpec::default()
            },
        ))
        .await;
    let record = |gate: &str, kind: NoticeKind| NoticeRecord {
        key: format!("{}/{gate}/b1/{}", env.namespace, kind.as_str()),
        kind,
        namespace: env.namespace.clone(),
        gate: gate.into(),
        passage: String::new(),
        summary: format!("{gate}: said"),
        at: Time(jiff::Timestamp::now()),
        outcome: NoticeOutcome::Sent,
        attempts: 1,
        last_attempt: Some(Time(jiff::Timestamp::now())),
        next_attempt: None,
        error: String::new(),
    };
    notifier.status = Some(NotifierStatus {
        deliveries: vec![record("production", NoticeKind::ApprovalWanted)],
        ..NotifierStatus::default()
    });
    env.write_status(&notifier).await;

    let table = hecate.run(Identity::Alice, &["notifications"]).await;
    assert_eq!(table.code, 0, "{table:?}");
    assert!(
        table.stdout.contains("releases  slack") && table.stdout.contains("Gates production"),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains("ApprovalWanted  production  Sent"),
        "{}",
        table.stdout
    );
    let json = hecate
        .run(Identity::Alice, &["notifications", "-o", "json"])
        .await;
    let told: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(told["sent"][0]["kind"], "ApprovalWanted");
    assert_eq!(
        told["notifiers"][0]["hears"],
        "Gates production; every kind"
    );
    // A Gate that does not exist is not found, as kubectl says.
    let ghost = hecate
        .run(Identity::Alice, &["notifications", "--gate", "ghost"])
        .await;
    assert_eq!(ghost.code, i32::from(exit::USAGE), "{ghost:?}");
    assert_eq!(
        ghost.stderr,
        format!("hecate: no Gate named ghost in {}\n", env.namespace)
    );
    // A Gate the Notifier does not hear: nobody is told about it.
    hecate_testenv::fixtures::gate(&env, "dev", hecate_testenv::fixtures::gate_spec(&[], false))
        .await;
    let dev = hecate
        .run(Identity::Alice, &["notifications", "--gate", "dev"])
        .await;
    assert!(
        dev.stdout
            .ends_with(": nobody is told about dev's releases (docs/NOTIFICATIONS.md)\n"),
        "{}",
        dev.stdout
    );

    let refused = hecate.run(Identity::CiBot, &["notifications"]).await;
    assert_eq!(refused.code, i32::from(exit::COULD_NOT_TELL), "{refused:?}");
    assert!(
        refused.stderr.ends_with(&format!(
            " — ask for a Role that grants at least list notifiers in {}\n",
            env.namespace
        )),
        "{}",
        refused.stderr
    );
}
