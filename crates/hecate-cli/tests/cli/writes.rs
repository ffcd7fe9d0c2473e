//! Writes: the actor is who the cluster says you are; refusals exit 5 with the reason.

use hecate_cli::exit;
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{
    Beacon, BeaconSpec, GateOccupant, GateStatus, ImageWatch, PassagePhase, WatchSource,
};
use pretty_assertions::assert_eq;

use crate::harness::*;

#[tokio::test]
async fn segregation_of_duties_end_to_end() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let ns = &env.namespace;
    gate(&env, "production", gate_spec(&[], true)).await;
    bundle(&env, "b1").await;

    let unapproved = hecate
        .run(Identity::Bob, &["promote", "production", "--bundle", "b1"])
        .await;
    assert_eq!(unapproved.code, i32::from(exit::REFUSED), "{unapproved:?}");
    assert_eq!(
        unapproved.stderr, "promote refused: awaiting approval\n",
        "refusals are answers, printed bare"
    );

    let approve = hecate
        .run(Identity::Carol, &["approve", "b1", "--gate", "production"])
        .await;
    assert_eq!(
        (approve.code, approve.stdout.as_str()),
        (0, "b1 approved for production by carol\n"),
        "{approve:?}"
    );
    let again = hecate
        .run(
            Identity::Alice,
            &["approve", "b1", "--gate", "production", "-o", "json"],
        )
        .await;
    let result: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(
        (result["approvedBy"].as_str(), result["recorded"].as_bool()),
        (Some("carol"), Some(false))
    );

    let own = hecate
        .run(
            Identity::Carol,
            &["promote", "production", "--bundle", "b1"],
        )
        .await;
    assert_eq!(own.code, i32::from(exit::REFUSED), "{own:?}");
    assert!(
        own.stderr
            .starts_with("promote refused: approved only by carol"),
        "{}",
        own.stderr
    );

    let promote = hecate
        .run(
            Identity::Bob,
            &["promote", "production", "--bundle", "b1", "-o", "json"],
        )
        .await;
    assert_eq!(promote.code, 0, "{promote:?}");
    let result: serde_json::Value = serde_json::from_str(&promote.stdout).unwrap();
    assert_eq!(result["action"], "promote");
    assert_eq!(result["actor"], "bob", "the actor is who the cluster says");
    assert_eq!(result["passage"], "production-1");
    assert_eq!(result["namespace"], ns.as_str());

    let busy = hecate
        .run(
            Identity::Alice,
            &["promote", "production", "--bundle", "b1"],
        )
        .await;
    assert_eq!(
        (busy.code, busy.stderr.as_str()),
        (
            i32::from(exit::REFUSED),
            "promote refused: Passage production-1 is already crossing b1\n"
        )
    );
}

#[tokio::test]
async fn missing_objects_refuse_writes() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let run = hecate
        .run(Identity::Bob, &["promote", "ghost", "--bundle", "b1"])
        .await;
    assert_eq!(
        (run.code, run.stderr.clone()),
        (
            i32::from(exit::REFUSED),
            format!("no Gate named ghost in {}\n", env.namespace)
        )
    );
    let run = hecate.run(Identity::Bob, &["abort", "ghost"]).await;
    assert_eq!(run.code, i32::from(exit::REFUSED));
}

#[tokio::test]
async fn abort_records_who_and_refuses_a_finished_passage() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    passage(&env, "dev-1", "dev", "b1", PassagePhase::Running).await;
    passage(&env, "dev-0", "dev", "b0", PassagePhase::Succeeded).await;
    let run = hecate.run(Identity::Alice, &["abort", "dev-1"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("asked dev-1 to stop"),
        "{}",
        run.stdout
    );
    let audit = hecate.run(Identity::Alice, &["audit", "-o", "json"]).await;
    let entries: Vec<serde_json::Value> = serde_json::from_str(&audit.stdout).unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e["kind"] == "aborted" && e["actor"] == "alice"),
        "{entries:?}"
    );
    let finished = hecate.run(Identity::Alice, &["abort", "dev-0"]).await;
    assert_eq!(
        (finished.code, finished.stderr.as_str()),
        (
            i32::from(exit::REFUSED),
            "abort refused: Passage dev-0 already finished (Succeeded)\n"
        )
    );
}

#[tokio::test]
async fn impersonation_records_the_impersonated_user() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "dev", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    // admin may impersonate; alice may not.
    let denied = hecate
        .run(
            Identity::Alice,
            &["promote", "dev", "--bundle", "b1", "--as", "bob"],
        )
        .await;
    assert_eq!(denied.code, i32::from(exit::COULD_NOT_TELL), "{denied:?}");
    assert!(denied.stderr.contains("impersonate"), "{}", denied.stderr);
    let run = hecate
        .run(
            Identity::Admin,
            &[
                "promote", "dev", "--bundle", "b1", "--as", "bob", "-o", "json",
            ],
        )
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let result: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(result["actor"], "bob");
}

/// kubectl's `--as-group`: the groups reach the cluster with the impersonated user,
/// and need one; `--request-timeout` takes kubectl's durations.
#[tokio::test]
async fn impersonated_groups_and_the_request_timeout() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "dev", gate_spec(&[], false)).await;
    // A user no binding names may read nothing…
    let nobody = hecate
        .run(Identity::Admin, &["gates", "--as", "nobody", "-o", "json"])
        .await;
    assert_ne!(nobody.code, 0, "{nobody:?}");
    // …unless impersonated in a group that may.
    let in_group = hecate
        .run(
            Identity::Admin,
            &[
                "gates",
                "--as",
                "nobody",
                "--as-group",
                "system:masters",
                "--request-timeout=30s",
                "-o",
                "json",
            ],
        )
        .await;
    assert_eq!(in_group.code, 0, "{in_group:?}");
    assert!(in_group.stdout.contains("\"dev\""), "{}", in_group.stdout);

    let groups_alone = hecate
        .run(Identity::Admin, &["gates", "--as-group", "system:masters"])
        .await;
    assert_eq!(
        groups_alone.code,
        i32::from(exit::USAGE),
        "{groups_alone:?}"
    );
    assert!(
        groups_alone.stderr.contains("--as-group needs --as"),
        "{}",
        groups_alone.stderr
    );
    let not_a_duration = hecate
        .run(Identity::Admin, &["gates", "--request-timeout", "soon"])
        .await;
    assert_eq!(
        not_a_duration.code,
        i32::from(exit::USAGE),
        "{not_a_duration:?}"
    );
    assert!(
        not_a_duration.stderr.contains("not a duration like 5s"),
        "{}",
        not_a_duration.stderr
    );
}

#[tokio::test]
async fn poll_and_wait() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let spec = BeaconSpec {
        watch: vec![WatchSource {
            image: Some(ImageWatch {
                repo: "ghcr.io/acme/app".into(),
                ..ImageWatch::default()
            }),
            ..WatchSource::default()
        }],
        ..BeaconSpec::default()
    };
    env.create(Beacon::new("app", spec)).await;
    let run = hecate
        .run(Identity::Alice, &["poll", "app", "-o", "json"])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let result: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let token = result["requestedAt"].as_str().unwrap().to_string();
    let stored: Beacon = env.api::<Beacon>().get("app").await.unwrap();
    assert_eq!(
        stored.metadata.annotations.unwrap()["reconcile.fluxcd.io/requestedAt"],
        token
    );

    // Nothing echoes the token here (no controller), so waiting times out: exit 2.
    let waited = hecate
        .run(
            Identity::Alice,
            &["poll", "app", "--wait", "--timeout", "1s"],
        )
        .await;
    assert_eq!(waited.code, i32::from(exit::COULD_NOT_TELL), "{waited:?}");
    assert!(
        waited.stderr.contains("had not looked after 1s"),
        "{}",
        waited.stderr
    );

    // A controller that echoes it ends the wait.
    let child = hecate
        .command(
            Identity::Alice,
            &["poll", "app", "--wait", "--timeout", "30s", "-o", "json"],
        )
        .spawn()
        .unwrap();
    let echoed = async {
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            let mut beacon: Beacon = env.api::<Beacon>().get("app").await.unwrap();
            let token =
                beacon.metadata.annotations.as_ref().unwrap()["reconcile.fluxcd.io/requestedAt"]
                    .clone();
            if token != result["requestedAt"].as_str().unwrap() {
                beacon.status = Some(hecate_types::BeaconStatus {
                    last_handled_reconcile_at: token,
                    latest_bundle: "app-123".into(),
                    ..Default::default()
                });
                env.write_status(&beacon).await;
                break;
            }
        }
    };
    let (out, ()) = tokio::join!(child.wait_with_output(), echoed);
    let run = output(out.unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("app has looked; latest Bundle: app-123"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn as_a_kubectl_plugin() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("kubectl-hecate");
    std::fs::copy(env!("CARGO_BIN_EXE_hecate"), &plugin).unwrap();
    let help = output(binary(&plugin).arg("--help").output().await.unwrap());
    assert!(
        help.stdout.contains("Usage: kubectl hecate"),
        "{}",
        help.stdout
    );
    let explain = output(
        binary(&plugin)
            .args(["explain", "staging", "-n", &env.namespace, "--kubeconfig"])
            .arg(hecate.kubeconfig(Identity::Alice))
            .output()
            .await
            .unwrap(),
    );
    assert!(
        explain
            .stdout
            .contains("→ kubectl hecate promote staging --bundle b1"),
        "{}",
        explain.stdout
    );
}

/// CLI #16: every command's `-o json` decodes back into the type it is made from, and
/// what a write prints names what a script needs next: the Gate an approval is for, the
/// Passage a promote opened and an abort stopped, the actor.
#[tokio::test]
async fn cli16_every_json_output_decodes_into_its_type() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let ns = env.namespace.clone();
    gate(&env, "staging", gate_spec(&[], true)).await;
    bundle(&env, "b1").await;
    let spec = BeaconSpec {
        watch: vec![WatchSource {
            image: Some(ImageWatch {
                repo: "ghcr.io/acme/app".into(),
                ..ImageWatch::default()
            }),
            ..WatchSource::default()
        }],
        ..BeaconSpec::default()
    };
    env.create(Beacon::new("app", spec)).await;
    let json = |who: Identity, args: &'static [&'static str]| {
        let hecate = &hecate;
        async move {
            let mut args = args.to_vec();
            args.extend(["-o", "json"]);
            hecate.run(who, &args).await
        }
    };

    let approved: hecate_ops::Approved = written(
        &json(Identity::Carol, &["approve", "b1", "--gate", "staging"]).await,
        "approve",
    );
    assert_eq!(
        approved,
        hecate_ops::Approved {
            namespace: ns.clone(),
            bundle: "b1".into(),
            gate: "staging".into(),
            approved_by: "carol".into(),
            recorded: true,
            progress: None,
        }
    );
    let promoted: hecate_ops::Promoted = written(
        &json(Identity::Bob, &["promote", "staging", "--bundle", "b1"]).await,
        "promote",
    );
    assert_eq!(
        promoted,
        hecate_ops::Promoted {
            namespace: ns.clone(),
            gate: "staging".into(),
            bundle: "b1".into(),
            passage: "staging-1".into(),
            actor: "bob".into(),
        }
    );
    let aborted: hecate_ops::Aborted = written(
        &json(Identity::Alice, &["abort", "staging-1"]).await,
        "abort",
    );
    assert_eq!(
        aborted,
        hecate_ops::Aborted {
            namespace: ns.clone(),
            passage: "staging-1".into(),
            gate: "staging".into(),
            bundle: "b1".into(),
            aborted: true,
            aborted_by: Some("alice".into()),
        }
    );
    let polled: hecate_ops::Polled =
        written(&json(Identity::Alice, &["poll", "app"]).await, "poll");
    assert_eq!(
        (polled.namespace.as_str(), polled.beacon.as_str()),
        (ns.as_str(), "app")
    );
    assert!(!polled.requested_at.is_empty());

    // The reads print the values they are made from.
    let statuses: Vec<hecate_ops::Explanation> = decoded(&json(Identity::Alice, &["status"]).await);
    assert_eq!(statuses.len(), 1);
    let explanation: hecate_ops::Explanation =
        decoded(&json(Identity::Alice, &["explain", "staging"]).await);
    assert_eq!(explanation.gate, "staging");
    // The Gate with its stage beside it (DECISION 83).
    let gates: Vec<hecate_ops::StagedGate> = decoded(&json(Identity::Alice, &["gates"]).await);
    assert_eq!(gates[0].stage.index, 0, "{gates:?}");
    let bundles: Vec<hecate_types::Bundle> = decoded(&json(Identity::Alice, &["bundles"]).await);
    let passages: Vec<hecate_types::Passage> = decoded(&json(Identity::Alice, &["passages"]).await);
    let beacons: Vec<hecate_types::Beacon> = decoded(&json(Identity::Alice, &["beacons"]).await);
    assert_eq!(
        (gates.len(), bundles.len(), passages.len(), beacons.len()),
        (1, 1, 1, 1)
    );
    let audit: Vec<hecate_ops::AuditEntry> = decoded(&json(Identity::Alice, &["audit"]).await);
    assert!(audit.len() >= 2, "{audit:?}");
    let _: hecate_ops::Evidence = decoded(&json(Identity::Alice, &["evidence", "b1"]).await);
}

/// An approval policy as people meet it at the command line: the groups that count are
/// the ones the cluster's SelfSubjectReview reports (carol and dave are release
/// managers; bob is not, and promoted the Bundle through staging).
#[tokio::test]
async fn an_approval_policy_at_the_command_line() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "production", release_managers_spec("")).await;
    cleared_by(&env, "b1", &["staging"], "bob").await;

    let refused = hecate
        .run(Identity::Bob, &["approve", "b1", "--gate", "production"])
        .await;
    assert_eq!(
        (refused.code, refused.stderr.as_str()),
        (
            i32::from(exit::REFUSED),
            "approve refused: bob's approval would not count for production: they promoted it through an earlier Gate\n"
        )
    );
    let carol = hecate
        .run(Identity::Carol, &["approve", "b1", "--gate", "production"])
        .await;
    assert_eq!(
        (carol.code, carol.stdout.as_str()),
        (
            0,
            "b1 approved for production by carol (1 of 2 from release-managers; carol approved)\n"
        ),
        "{carol:?}"
    );
    let queue = hecate.run(Identity::Bob, &["approvals"]).await;
    assert_eq!(queue.code, 0, "{queue:?}");
    assert!(
        queue
            .stdout
            .contains("1 of 2 from release-managers; carol approved")
            && queue
                .stdout
                .contains("would not count: you promoted it through an earlier Gate"),
        "{}",
        queue.stdout
    );
    let dave = hecate.run(Identity::Dave, &["approvals"]).await;
    assert!(
        dave.stdout.contains("your approval counts"),
        "{}",
        dave.stdout
    );

    let rejected = hecate
        .run(
            Identity::Dave,
            &[
                "reject",
                "b1",
                "--gate",
                "production",
                "--reason",
                "not this week",
            ],
        )
        .await;
    assert_eq!(
        (rejected.code, rejected.stdout.as_str()),
        (
            0,
            "dave rejected b1 for production: not this week; it is held there until withdrawn\n"
        ),
        "{rejected:?}"
    );
    let reasonless = hecate
        .run(Identity::Dave, &["reject", "b1", "--gate", "production"])
        .await;
    assert_eq!(reasonless.code, i32::from(exit::USAGE), "{reasonless:?}");
    let withdrawn = hecate
        .run(
            Identity::Carol,
            &["reject", "b1", "--gate", "production", "--withdraw"],
        )
        .await;
    assert_eq!(
        (withdrawn.code, withdrawn.stdout.as_str()),
        (
            0,
            "carol withdrew the rejection of b1 for production by dave\n"
        ),
        "{withdrawn:?}"
    );
}

/// `rollback`: back to the Bundle the Gate held before, saying what it undoes; a Bundle
/// the Gate never verified is refused, exit 5, nothing created.
#[tokio::test]
async fn rollback_goes_back_and_says_what_it_undoes() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let ns = env.namespace.clone();
    let mut staging = gate(&env, "staging", gate_spec(&[], false)).await;
    bundles_in_order(&env, &["b1", "b2"]).await;
    passage(&env, "staging-1", "staging", "b1", PassagePhase::Succeeded).await;
    passage(&env, "staging-2", "staging", "b2", PassagePhase::Succeeded).await;
    let occupant = |bundle: &str, passage: &str| GateOccupant {
        bundle: bundle.into(),
        digest: String::new(),
        passage: passage.into(),
        entered_at: now(),
        actor: "bob".into(),
        verified: None,
    };
    staging.status = Some(GateStatus {
        current: Some(occupant("b2", "staging-2")),
        history: vec![occupant("b2", "staging-2"), occupant("b1", "staging-1")],
        ..GateStatus::default()
    });
    env.write_status(&staging).await;

    let never = hecate
        .run(Identity::Bob, &["rollback", "staging", "--to", "b9"])
        .await;
    assert_eq!(
        (never.code, never.stderr.as_str()),
        (
            i32::from(exit::REFUSED),
            "rollback refused: Gate staging never held b9: a rollback goes back only to a Bundle the Gate verified before\n"
        )
    );

    let run = hecate
        .run(Identity::Bob, &["rollback", "staging", "-o", "json"])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let rolled: hecate_ops::RolledBack = written(&run, "rollback");
    assert_eq!(
        rolled,
        hecate_ops::RolledBack {
            namespace: ns,
            gate: "staging".into(),
            bundle: "b1".into(),
            passage: "staging-3".into(),
            actor: "bob".into(),
            rollback_of: "staging-2".into(),
            targets: Vec::new(),
        }
    );
    let busy = hecate
        .run(Identity::Bob, &["rollback", "staging", "--to", "b2"])
        .await;
    assert_eq!(
        (busy.code, busy.stderr.as_str()),
        (
            i32::from(exit::REFUSED),
            "rollback refused: Passage staging-3 is already crossing b1\n"
        )
    );
}

/// A rollout halted across production's targets: `hecate targets` reads it target by
/// target, `hecate explain` offers its three ways out, and `retry` and
/// `accept-failures` are requests in the asker's name on the Passage — refused with
/// the reason when there is nothing to act on, and without a reason to accept.
#[tokio::test]
async fn a_halted_rollout_at_the_command_line() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "production", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    halted(&env, "production-7", "production", "b1").await;
    passage(
        &env,
        "production-6",
        "production",
        "b1",
        PassagePhase::Succeeded,
    )
    .await;

    let targets = hecate.run(Identity::Bob, &["targets", "production"]).await;
    assert_eq!(targets.code, 0, "{targets:?}");
    let lines: Vec<&str> = targets.stdout.lines().collect();
    assert!(lines[0].starts_with("production: "), "{}", targets.stdout);
    assert!(
        lines[0].ends_with("by production-7, Halted"),
        "{}",
        targets.stdout
    );
    assert_eq!(lines[2], format!("halted: {}", HALT));
    let rows: Vec<Vec<&str>> = lines[4..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0][..5], ["WAVE", "TARGET", "PHASE", "ATTEMPT", "STEP"]);
    assert_eq!(
        rows[1][..6],
        ["1", "canary", "Failed", "1", "2", "(GitRejected)"]
    );
    assert_eq!(rows[2][..5], ["2", "eu-1", "Pending", "-", "-"]);
    let typed: hecate_ops::GateTargets = decoded(
        &hecate
            .run(Identity::Bob, &["targets", "production", "-o", "json"])
            .await,
    );
    assert_eq!(
        typed.rollout.map(|r| r.passage),
        Some("production-7".into())
    );

    let explained = hecate.run(Identity::Bob, &["explain", "production"]).await;
    for said in [
        "[RolloutHalted] canary failed at step 2",
        "→ cross the failed targets again: hecate retry production-7",
        "→ or accept the failures and go on: hecate accept-failures production-7 --reason <why>",
        "→ or stop the rollout: hecate abort production-7",
    ] {
        assert!(
            explained.stdout.contains(said),
            "{said}\n{}",
            explained.stdout
        );
    }

    let retried = hecate.run(Identity::Bob, &["retry", "production-7"]).await;
    assert_eq!(retried.code, 0, "{retried:?}");
    assert!(
        retried
            .stdout
            .starts_with("asked production-7 to cross its failed targets again")
    );
    let no_reason = hecate
        .run(
            Identity::Carol,
            &["accept-failures", "production-7", "--reason", " "],
        )
        .await;
    assert_eq!(no_reason.code, i32::from(exit::REFUSED), "{no_reason:?}");
    let accepted: hecate_ops::RolloutAsked = written(
        &hecate
            .run(
                Identity::Carol,
                &[
                    "accept-failures",
                    "production-7",
                    "--reason",
                    "the canary is rebuilt",
                    "-o",
                    "json",
                ],
            )
            .await,
        "accept-failures",
    );
    assert_eq!(
        (accepted.asked.as_str(), accepted.by.as_str()),
        ("accept", "carol")
    );
    let asked = env
        .api::<hecate_types::Passage>()
        .get("production-7")
        .await
        .unwrap()
        .spec
        .rollout
        .unwrap_or_default();
    assert_eq!(
        (
            asked.retries[0].by.as_str(),
            asked.acceptances[0].by.as_str()
        ),
        ("bob", "carol")
    );
    assert_eq!(asked.acceptances[0].reason, "the canary is rebuilt");

    let one_place = hecate.run(Identity::Bob, &["retry", "production-6"]).await;
    assert_eq!(one_place.code, i32::from(exit::REFUSED), "{one_place:?}");
    assert!(
        one_place.stderr.starts_with("retry refused: "),
        "{}",
        one_place.stderr
    );
}

/// `promote --dry-run` (issue 55): what promote would do, creating nothing — the steps
/// with their `with:` resolved against the Bundle and the Gate's vars, promote's
/// refusal with its exit code, and the cluster's own judgement of the right to create
/// the Passage (the API server's dry run).
#[tokio::test]
async fn a_dry_run_says_what_promote_would_do_and_creates_nothing() {
    use hecate_types::{Passage, Step, Var};
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let mut staging = gate_spec(&[], false);
    staging.vars = vec![Var {
        name: "fleet".into(),
        value: "https://git.example/fleet.git".into(),
    }];
    if let Some(passage) = staging.passage.as_mut() {
        passage.steps.insert(
            0,
            Step {
                uses: "git-clone".into(),
                alias: "repo".into(),
                with: Some(serde_json::json!({
                    "repo": "${{ vars.fleet }}",
                    "branch": "env/${{ gate }}-${{ bundle.image('ghcr.io/acme/app').tag }}",
                })),
                ..Step::default()
            },
        );
    }
    gate(&env, "staging", staging).await;
    gate(&env, "production", gate_spec(&[], true)).await;
    bundle(&env, "b1").await;

    let dry = hecate
        .run(
            Identity::Bob,
            &["promote", "staging", "--bundle", "b1", "--dry-run"],
        )
        .await;
    assert_eq!(dry.code, 0, "{dry:?}");
    assert!(
        dry.stdout.starts_with(
            "would cross 1.0.0 (b1) through staging as bob; nothing was created (a dry run)\n\n\
             1. git-clone (repo) — works in the crossing's own directory\n   \
             branch: env/staging-1.0.0\n   repo: https://git.example/fleet.git\n\n\
             2. git-push — pushes to a remote\n"
        ),
        "{}",
        dry.stdout
    );
    let json = hecate
        .run(
            Identity::Bob,
            &[
                "promote",
                "staging",
                "--bundle",
                "b1",
                "--dry-run",
                "-o",
                "json",
            ],
        )
        .await;
    let preview: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(preview["action"], "preview");
    assert_eq!(preview["steps"][0]["effect"], "WorkDir");
    assert_eq!(preview["steps"][1]["effect"], "Pushes");

    // Refused as promote refuses it, with promote's exit code; the steps still shown.
    let refused = hecate
        .run(
            Identity::Bob,
            &["promote", "production", "--bundle", "b1", "--dry-run"],
        )
        .await;
    assert_eq!(refused.code, i32::from(exit::REFUSED), "{refused:?}");
    assert!(
        refused
            .stdout
            .starts_with("would be refused: 1.0.0 (b1) through production: awaiting approval (AwaitingApproval)\n"),
        "{}",
        refused.stdout
    );
    // ci-bot may read, not create: the API server's dry run of the create says no.
    env.grant(
        Identity::CiBot,
        &["get", "list", "watch"],
        &["gates", "bundles", "passages"],
    )
    .await;
    let reader = hecate
        .run(
            Identity::CiBot,
            &["promote", "staging", "--bundle", "b1", "--dry-run"],
        )
        .await;
    assert_ne!(reader.code, 0, "{reader:?}");
    assert!(reader.stdout.is_empty(), "{reader:?}");
    assert!(
        reader.stderr.contains("create"),
        "says what was not allowed: {reader:?}"
    );

    let passages = env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(passages.items.len(), 0, "a dry run creates nothing");
}
