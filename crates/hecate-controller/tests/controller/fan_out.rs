//! A crossing of a Gate that spans targets (issue 52, DECISIONS 151 and 155), through
//! a real API server: one Passage, a record per target, the Gate's steps run once per
//! target with `${{ target.* }}`, in the waves ops' rule says, halting past a wave's
//! budget and going on within it. The steps call a loopback webhook (the one thing
//! here not a real part, as design.md allows for webhook services); the clusters and
//! Flux of each target are the e2e suite's.

use std::sync::Arc;
use std::time::Duration;

use hecate_controller::passage::PassageReconciler;
use hecate_ops::Ops;
use hecate_ops::rules::rollout::RollBack;
use hecate_types::{
    CountOrPercent, Passage, PassagePhase, Rollout, RolloutPhase, Step, Target, TargetPhase,
    Targets, Var, Wave, WaveTargets,
};
use jiff::SignedDuration;
use kube::ResourceExt as _;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::process::join_shard;

/// A webhook answering 200 to every target but `failing`'s, which get 500.
async fn webhook(failing: &[&str]) -> MockServer {
    let server = MockServer::start().await;
    for target in failing {
        Mock::given(method("POST"))
            .and(path(format!("/deploy/{target}")))
            .respond_with(ResponseTemplate::new(500))
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    server
}

/// The targets the webhook was called for, in order, with the values they sent.
async fn calls(server: &MockServer) -> Vec<(String, serde_json::Value)> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let target = r.url.path().trim_start_matches("/deploy/").to_string();
            (target, serde_json::from_slice(&r.body).unwrap())
        })
        .collect()
}

/// Manual Gate `production` over canary, eu-1, eu-2 and us-1 in three waves — the
/// canary alone, eu tolerating `eu_failures`, then the rest — each target's crossing
/// one `http` step posting its name and its values to `url`.
async fn fanned_out_gate(h: &Harness, url: &str, eu_failures: i64, soak: &str) {
    let mut spec = gate_spec(false, &[], false);
    spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "http".into(),
        with: Some(json!({
            "url": format!("{url}/deploy/${{{{ target.name }}}}"),
            "body": {"target": "${{ target.name }}", "region": "${{ vars.region }}"},
        })),
        ..Step::default()
    }];
    spec.vars = vec![Var {
        name: "region".into(),
        value: "none".into(),
    }];
    let target = |name: &str, region: &str| Target {
        name: name.into(),
        vars: vec![Var {
            name: "region".into(),
            value: region.into(),
        }],
        ..Target::default()
    };
    spec.targets = Some(Targets {
        list: vec![
            target("canary", "eu"),
            target("eu-1", "eu"),
            target("eu-2", "eu"),
            target("us-1", "us"),
        ],
        selector: None,
    });
    let names = |names: &[&str]| {
        Some(WaveTargets {
            names: names.iter().map(|n| n.to_string()).collect(),
            selector: None,
        })
    };
    spec.rollout = Some(Rollout {
        waves: vec![
            Wave {
                name: "canary".into(),
                targets: names(&["canary"]),
                min_success_time: soak.into(),
                ..Wave::default()
            },
            Wave {
                name: "eu".into(),
                targets: names(&["eu-1", "eu-2"]),
                max_failures: Some(CountOrPercent::Count(eu_failures)),
                ..Wave::default()
            },
        ],
    });
    create_gate(h, "production", spec).await;
}

/// The controller's Passage reconciler, as the controller's identity, on `h`'s clock.
async fn reconciler(h: &Harness) -> PassageReconciler {
    passage_reconciler(h, Arc::new(h.clock.clone()), "hecate-fan-out").await
}

/// A test's namespace in its shard, a webhook failing `failing`, the Gate of
/// [`fanned_out_gate`], Bundle b1, and the Passage reconciler.
async fn world(
    failing: &[&str],
    eu_failures: i64,
    soak: &str,
) -> (Harness, MockServer, PassageReconciler) {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    let hook = webhook(failing).await;
    fanned_out_gate(&h, &hook.uri(), eu_failures, soak).await;
    bundle(&h.env, "b1").await;
    let passages = reconciler(&h).await;
    (h, hook, passages)
}

/// Promotes b1 through production and reconciles its Passage once; answers it.
async fn promote(h: &Harness, passages: &PassageReconciler) -> (String, Passage) {
    let promoted = Ops::new(h.env.admin.clone())
        .promote(&h.env.namespace, "production", "b1", "alice")
        .await
        .unwrap();
    let name = promoted.name_any();
    let outcome = passages
        .reconcile_named(&h.env.namespace, &name)
        .await
        .unwrap();
    let passage = h.env.api::<Passage>().get(&name).await.unwrap();
    assert_eq!(
        outcome.requeue_after.is_some(),
        !passage.is_terminal() && rollout(&passage).phase != RolloutPhase::Halted,
        "{outcome:?}"
    );
    (name, passage)
}

fn rollout(passage: &Passage) -> hecate_types::RolloutStatus {
    passage
        .status
        .as_ref()
        .and_then(|s| s.rollout.clone())
        .unwrap()
}

/// Each target's phase and reason, in the record's order.
fn phases(passage: &Passage) -> Vec<(String, TargetPhase, String)> {
    rollout(passage)
        .targets
        .into_iter()
        .map(|t| (t.name, t.phase, t.reason))
        .collect()
}

fn phase(name: &str, phase: TargetPhase, reason: &str) -> (String, TargetPhase, String) {
    (name.to_string(), phase, reason.to_string())
}

/// The canary fails: nothing else is touched, the rollout halts and names it, and
/// the Passage waits for a person (it neither fails nor looks again by itself).
#[tokio::test]
async fn a_failing_canary_halts_the_rollout_and_nothing_else_is_touched() {
    let (h, hook, passages) = world(&["canary"], 0, "").await;

    let (_, passage) = promote(&h, &passages).await;

    assert_eq!(passage.phase(), PassagePhase::Running);
    let record = rollout(&passage);
    assert_eq!(record.phase, RolloutPhase::Halted);
    assert_eq!(
        record.message,
        "halted: canary failed at step 1 (HTTPFailed); wave 1 (canary) tolerates none"
    );
    assert_eq!(
        phases(&passage),
        [
            phase("canary", TargetPhase::Failed, "HTTPFailed"),
            phase("eu-1", TargetPhase::Pending, ""),
            phase("eu-2", TargetPhase::Pending, ""),
            phase("us-1", TargetPhase::Pending, ""),
        ]
    );
    let calls = calls(&hook).await;
    assert_eq!(
        calls,
        [(
            "canary".to_string(),
            json!({"target": "canary", "region": "eu"})
        )]
    );
    // Its steps' records went with its crossing; the step and the line stay.
    let canary = &record.targets[0];
    assert!(canary.steps.is_empty(), "{canary:?}");
    assert!(canary.message.contains("500"), "{}", canary.message);
    assert_eq!(canary.attempt, 1);
}

/// Within its budget a failure lets the rollout go on: the canary, then eu (eu-2
/// failing, one failure allowed), then us — after the canary stayed healthy for its
/// `minSuccessTime` — and the Bundle crosses, the record saying which target failed.
#[tokio::test]
async fn waves_go_in_order_and_a_failure_within_the_budget_lets_the_rollout_go_on() {
    let (h, hook, passages) = world(&["eu-2"], 1, "10m").await;
    let ns = h.env.namespace.clone();

    // The canary crosses, then stays healthy for ten minutes before eu starts.
    let (name, passage) = promote(&h, &passages).await;
    let record = rollout(&passage);
    assert_eq!(record.phase, RolloutPhase::Progressing);
    assert!(
        record
            .message
            .starts_with("wave 1 (canary) stays healthy until "),
        "{}",
        record.message
    );
    assert_eq!(calls(&hook).await.len(), 1);
    let outcome = passages.reconcile_named(&ns, &name).await.unwrap();
    let wait = outcome.requeue_after.unwrap();
    assert!(
        wait > Duration::from_secs(590) && wait <= Duration::from_secs(600),
        "{wait:?}"
    );
    assert_eq!(calls(&hook).await.len(), 1, "nothing starts while it soaks");

    h.clock.advance(SignedDuration::from_mins(10));
    passages.reconcile_named(&ns, &name).await.unwrap();
    let passage = h.env.api::<Passage>().get(&name).await.unwrap();
    assert_eq!(
        passage.phase(),
        PassagePhase::Succeeded,
        "{:?}",
        passage.status
    );
    assert_eq!(
        phases(&passage),
        [
            phase("canary", TargetPhase::Succeeded, ""),
            phase("eu-1", TargetPhase::Succeeded, ""),
            phase("eu-2", TargetPhase::Failed, "HTTPFailed"),
            phase("us-1", TargetPhase::Succeeded, ""),
        ]
    );
    let record = rollout(&passage);
    assert_eq!(record.phase, RolloutPhase::Completed);
    assert_eq!(
        record.message,
        "rolled out to 3 of 4 targets; eu-2 failed, within budget"
    );
    assert_eq!(
        passage.status.as_ref().unwrap().message,
        "crossed production: rolled out to 3 of 4 targets; eu-2 failed, within budget"
    );
    // Each target once, wave by wave, each with its own values.
    let calls = calls(&hook).await;
    let order: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(order[0], "canary");
    let mut eu = order[1..3].to_vec();
    eu.sort_unstable();
    assert_eq!(eu, ["eu-1", "eu-2"]);
    assert_eq!(order[3], "us-1");
    assert_eq!(calls[3].1, json!({"target": "us-1", "region": "us"}));
    assert_eq!(calls.len(), 4);
    // The record of who went in which wave.
    let waves: Vec<i32> = record.targets.iter().map(|t| t.wave).collect();
    assert_eq!(waves, [0, 1, 1, 2]);
    // Prometheus series by target: each crossing counted once, as it ended.
    let exported = passages.metrics.encode();
    for (target, outcome) in [
        ("canary", "Succeeded"),
        ("eu-1", "Succeeded"),
        ("eu-2", "Failed"),
        ("us-1", "Succeeded"),
    ] {
        let series = format!(
            "hecate_target_crossings_total{{namespace=\"{ns}\",gate=\"production\",target=\"{target}\",outcome=\"{outcome}\"}} 1\n"
        );
        assert!(exported.contains(&series), "{series}\n{exported}");
    }
    assert_eq!(
        exported
            .matches("hecate_target_crossing_duration_seconds_count{")
            .count(),
        4
    );
}

/// What people do about a halted rollout (DECISION 157): bob's retry crosses the
/// failed canary again (the webhook still says no, so it halts again, attempt 2); an
/// acceptance without a reason is refused before anything is written; carol's
/// acceptance, with a reason, lets the rollout go on and is kept on the record — and
/// neither request is a changed crossing.
#[tokio::test]
async fn a_retry_crosses_the_failed_target_again_and_an_acceptance_lets_the_rollout_go_on() {
    let (h, hook, passages) = world(&["canary"], 0, "").await;
    let ns = h.env.namespace.clone();
    let (name, halted) = promote(&h, &passages).await;
    assert_eq!(rollout(&halted).phase, RolloutPhase::Halted);
    let ops = Ops::new(h.env.admin.clone());

    // Nothing to accept without a reason; nothing is written.
    let refused = ops
        .accept_failures(&ns, &name, "carol", " ")
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("say why"), "{refused}");
    let unchanged = h.env.api::<Passage>().get(&name).await.unwrap();
    assert_eq!(unchanged.spec.rollout, None);

    let asked = ops.retry(&ns, &name, "bob").await.unwrap();
    assert_eq!((asked.asked.as_str(), asked.by.as_str()), ("retry", "bob"));
    passages.reconcile_named(&ns, &name).await.unwrap();
    let again = h.env.api::<Passage>().get(&name).await.unwrap();
    let record = rollout(&again);
    assert_eq!(again.phase(), PassagePhase::Running, "{:?}", again.status);
    assert_eq!(record.phase, RolloutPhase::Halted);
    assert_eq!(record.retries_done, 1);
    assert_eq!(record.targets[0].attempt, 2);
    assert!(
        record
            .message
            .starts_with("halted: canary failed at step 1"),
        "{}",
        record.message
    );
    assert_eq!(calls(&hook).await.len(), 2, "the canary, twice");
    // Looked at again, the request is not carried out twice.
    passages.reconcile_named(&ns, &name).await.unwrap();
    assert_eq!(calls(&hook).await.len(), 2);

    ops.accept_failures(
        &ns,
        &name,
        "carol",
        "the canary's webhook is being replaced",
    )
    .await
    .unwrap();
    passages.reconcile_named(&ns, &name).await.unwrap();
    let accepted = h.env.api::<Passage>().get(&name).await.unwrap();
    assert_eq!(
        accepted.phase(),
        PassagePhase::Succeeded,
        "{:?}",
        accepted.status
    );
    let record = rollout(&accepted);
    assert_eq!(record.phase, RolloutPhase::Accepted);
    assert_eq!(record.accepted.len(), 1);
    assert_eq!(record.accepted[0].by, "carol");
    assert_eq!(record.accepted[0].targets, ["canary"]);
    assert_eq!(
        record.message,
        "rolled out to 3 of 4 targets; canary failed, accepted"
    );
    assert_eq!(calls(&hook).await.len(), 5, "eu-1, eu-2 and us-1 once each");

    // A finished rollout takes no more requests.
    let late = ops.retry(&ns, &name, "bob").await.unwrap_err();
    assert!(late.to_string().contains("already finished"), "{late}");
}

/// Verification per target (DECISION 162): once its steps succeed a target is
/// `Verifying`, the Gate's `http` verification asked about it by name; it counts as
/// `Succeeded` only once verified. eu-2's answer is no: it fails `VerificationFailed`,
/// within eu's budget, and the rollout goes on; the Passage's verification then says
/// each target was verified, so the Gate verifies nothing more.
#[tokio::test]
async fn each_target_is_verified_before_it_counts_and_a_no_is_a_failure_within_the_budget() {
    let (h, hook, passages) = world(&[], 1, "").await;
    let ns = h.env.namespace.clone();
    Mock::given(method("GET"))
        .and(path("/healthy/eu-2"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&hook)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&hook)
        .await;
    let verify = json!({"spec": {"verify": [{"uses": "http", "with": {
        "url": format!("{}/healthy/${{{{ target.name }}}}", hook.uri()),
        "interval": "5s",
        "successes": 1,
        "failures": 1,
    }}]}});
    h.env
        .api::<hecate_types::Gate>()
        .patch(
            "production",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&verify),
        )
        .await
        .unwrap();

    let (name, passage) = promote(&h, &passages).await;
    // The first reconcile crossed the canary and verified it at once (one pass
    // decides), then went on wave by wave, each target verified after its steps.
    let mut passage = passage;
    for _ in 0..5 {
        if passage.is_terminal() {
            break;
        }
        passages.reconcile_named(&ns, &name).await.unwrap();
        passage = h.env.api::<Passage>().get(&name).await.unwrap();
    }
    assert_eq!(
        passage.phase(),
        PassagePhase::Succeeded,
        "{:#?}",
        passage.status
    );
    assert_eq!(
        phases(&passage),
        [
            phase("canary", TargetPhase::Succeeded, ""),
            phase("eu-1", TargetPhase::Succeeded, ""),
            phase("eu-2", TargetPhase::Failed, "VerificationFailed"),
            phase("us-1", TargetPhase::Succeeded, ""),
        ]
    );
    let record = rollout(&passage);
    let verification: Vec<(&str, Option<hecate_types::VerificationPhase>)> = record
        .targets
        .iter()
        .map(|t| (t.name.as_str(), t.verification))
        .collect();
    use hecate_types::VerificationPhase::{Failed, Verified};
    assert_eq!(
        verification,
        [
            ("canary", Some(Verified)),
            ("eu-1", Some(Verified)),
            ("eu-2", Some(Failed)),
            ("us-1", Some(Verified)),
        ]
    );
    let eu_2 = &record.targets[2];
    assert!(
        eu_2.message.starts_with("verification said no: ") && eu_2.message.contains("503"),
        "{eu_2:#?}"
    );
    assert!(
        record.targets.iter().all(|t| t.verifying.is_none()),
        "a finished target keeps no verification record"
    );
    assert_eq!(
        record.message,
        "rolled out to 3 of 4 targets; eu-2 failed, within budget"
    );
    // Each target's verifier was asked about it by name, once.
    let mut asked: Vec<String> = hook
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() == "GET")
        .map(|r| r.url.path().trim_start_matches("/healthy/").to_string())
        .collect();
    asked.sort();
    assert_eq!(asked, ["canary", "eu-1", "eu-2", "us-1"]);
    let summary = passage.status.unwrap().verification.unwrap();
    assert_eq!(summary.phase, Verified);
    assert_eq!(
        summary.message,
        "verified on each target before it counted (3 verified)"
    );
}

/// Passage `name` reconciled once by `passages`, as stored then.
async fn reconciled(h: &Harness, passages: &PassageReconciler, name: &str) -> Passage {
    passages
        .reconcile_named(&h.env.namespace, name)
        .await
        .unwrap();
    h.env.api::<Passage>().get(name).await.unwrap()
}

/// Crosses `bundle` through production by promote, its Passage reconciled until it
/// finished and the Gate recording it; answers the Passage's name.
async fn crossed(h: &Harness, passages: &PassageReconciler, bundle: &str) -> String {
    let ns = h.env.namespace.clone();
    let promoted = Ops::new(h.env.admin.clone())
        .promote(&ns, "production", bundle, "alice")
        .await
        .unwrap();
    let name = promoted.name_any();
    let passage = reconciled(h, passages, &name).await;
    assert_eq!(
        passage.phase(),
        PassagePhase::Succeeded,
        "{:?}",
        passage.status
    );
    h.reconcile("production").await;
    name
}

/// Rolling back some targets (DECISION 163): after b2's rollout (eu-2 failing within
/// budget), eu-1 and us-1 alone go back to b1 in a Passage of their own, naming the
/// rollout it undoes; the Gate still holds b2, and its targets view shows the
/// rollback beside the rollout. A rollback of the failed eu-2 that fails again halts,
/// as any rollout, and stopped, is that Passage's alone: b1 is not marked as having
/// failed at production.
#[tokio::test]
async fn a_rollback_of_some_targets_crosses_them_alone_and_leaves_the_gate_as_it_is() {
    let (h, hook, passages) = world(&["eu-2"], 1, "").await;
    let ns = h.env.namespace.clone();
    let ops = Ops::new(h.env.admin.clone());
    crossed(&h, &passages, "b1").await;
    bundle(&h.env, "b2").await;
    let b2_rollout = crossed(&h, &passages, "b2").await;
    assert_eq!(h.gate("production").await.current_bundle(), Some("b2"));
    let before = calls(&hook).await.len();
    assert_eq!(before, 8, "two rollouts of four targets");
    // What ops offers now: eu-2 failed within budget, and b1 is there to go back to.
    let offered = |targets: hecate_ops::GateTargets| -> Vec<hecate_ops::model::Remedy> {
        targets.fixes.into_iter().map(|f| f.action).collect()
    };
    let eu_2_back = vec![hecate_ops::model::Remedy::RollbackFailedTargets {
        gate: "production".into(),
        targets: vec!["eu-2".into()],
    }];
    assert_eq!(
        offered(ops.targets(&ns, "production").await.unwrap()),
        eu_2_back
    );

    // A name the rollout did not reach is refused before anything is written.
    let refused = ops
        .rollback_targets(&ns, "production", &RollBack::parse("eu-1,ap-1"), "bob")
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("did not reach ap-1"),
        "{refused}"
    );

    let back = ops
        .rollback_targets(&ns, "production", &RollBack::parse("us-1, eu-1"), "bob")
        .await
        .unwrap();
    assert_eq!(back.spec.bundle, "b1");
    assert_eq!(
        back.spec.targets,
        ["eu-1", "us-1"],
        "in the rollout's order"
    );
    assert_eq!(
        hecate_ops::rules::rollback::rollback_of(&back),
        Some(b2_rollout.as_str())
    );
    let name = back.name_any();
    let back = reconciled(&h, &passages, &name).await;
    assert_eq!(back.phase(), PassagePhase::Succeeded, "{:?}", back.status);
    assert_eq!(
        phases(&back),
        [
            phase("eu-1", TargetPhase::Succeeded, ""),
            phase("us-1", TargetPhase::Succeeded, ""),
        ]
    );
    let called: Vec<String> = calls(&hook).await[before..]
        .iter()
        .map(|(t, _)| t.clone())
        .collect();
    assert_eq!(called, ["eu-1", "us-1"], "those two alone, in their waves");

    h.reconcile("production").await;
    let gate = h.gate("production").await;
    assert_eq!(
        gate.current_bundle(),
        Some("b2"),
        "the Gate holds what it held"
    );
    assert_eq!(
        gate.status.as_ref().unwrap().history.len(),
        2,
        "and its history is b2's and b1's crossings"
    );
    let targets = ops.targets(&ns, "production").await.unwrap();
    let shown = targets.rollout.expect("the rollout is shown");
    assert_eq!(shown.passage, b2_rollout, "the rollout stays the one shown");
    let since: Vec<(&str, Option<&str>)> = shown
        .since
        .iter()
        .map(|s| (s.passage.as_str(), s.rollback_of.as_deref()))
        .collect();
    assert_eq!(since, [(name.as_str(), Some(b2_rollout.as_str()))]);
    assert_eq!(
        offered(ops.targets(&ns, "production").await.unwrap()),
        eu_2_back,
        "eu-2 is still to be rolled back"
    );

    // The failed eu-2 back to b1: its webhook still says no.
    let failed = ops
        .rollback_targets(&ns, "production", &RollBack::Failed, "bob")
        .await
        .unwrap();
    assert_eq!(failed.spec.targets, ["eu-2"]);
    let failed_name = failed.name_any();
    let failed = reconciled(&h, &passages, &failed_name).await;
    // Every target of it was asked for: one failure halts it, for a person to retry
    // or stop, as any rollout.
    assert_eq!(rollout(&failed).phase, RolloutPhase::Halted);
    assert_eq!(
        rollout(&failed).message,
        "halted: eu-2 failed at step 1 (HTTPFailed); wave 2 (eu) tolerates none"
    );
    ops.abort(&ns, &failed_name, "bob").await.unwrap();
    let failed = reconciled(&h, &passages, &failed_name).await;
    assert_eq!(failed.phase(), PassagePhase::Aborted, "{:?}", failed.status);
    h.reconcile("production").await;
    assert_eq!(h.gate("production").await.current_bundle(), Some("b2"));
    assert_eq!(
        offered(ops.targets(&ns, "production").await.unwrap()),
        [],
        "eu-2's rollback was asked for: what came of it is a person's"
    );
    let b1 = h.bundle("b1").await;
    assert!(
        b1.status.as_ref().is_none_or(|s| s.blocked.is_empty()),
        "a rollback of some targets is not the Gate's record: {:?}",
        b1.status
    );
}

/// A target that joins after a rollout finished is caught up (DECISION 164): the Gate
/// opens a crossing of what it holds to that target alone, says why, and asks nothing
/// more once it has crossed — nor of a target already reached.
#[tokio::test]
async fn a_target_that_joins_after_the_rollout_is_caught_up_alone() {
    let (h, hook, passages) = world(&[], 0, "").await;
    let ns = h.env.namespace.clone();
    let b1_rollout = crossed(&h, &passages, "b1").await;
    assert_eq!(calls(&hook).await.len(), 4);
    h.reconcile("production").await;
    assert_eq!(
        h.passages().await.len(),
        1,
        "every target reached: nothing is due"
    );

    // us-2 joins.
    let gates = h.env.api::<hecate_types::Gate>();
    let mut gate = gates.get("production").await.unwrap();
    gate.spec.targets.as_mut().unwrap().list.push(Target {
        name: "us-2".into(),
        vars: vec![Var {
            name: "region".into(),
            value: "us".into(),
        }],
        ..Target::default()
    });
    gates
        .replace("production", &Default::default(), &gate)
        .await
        .unwrap();
    h.reconcile("production").await;

    let all = h.passages().await;
    assert_eq!(all.len(), 2, "one catch-up");
    let catch_up = all.iter().find(|p| p.name_any() != b1_rollout).unwrap();
    assert_eq!(
        (
            catch_up.spec.bundle.as_str(),
            catch_up.spec.targets.as_slice(),
            catch_up.spec.actor.as_str()
        ),
        ("b1", ["us-2".to_string()].as_slice(), "controller")
    );
    assert_eq!(hecate_ops::rules::rollback::rollback_of(catch_up), None);
    let started = h.event("PassageStarted").await;
    assert!(
        started
            .note
            .as_deref()
            .is_some_and(|n| n.contains("us-2 joined after production's rollout of b1")),
        "{started:?}"
    );
    let name = catch_up.name_any();
    let caught = reconciled(&h, &passages, &name).await;
    assert_eq!(
        caught.phase(),
        PassagePhase::Succeeded,
        "{:?}",
        caught.status
    );
    assert_eq!(phases(&caught), [phase("us-2", TargetPhase::Succeeded, "")]);
    let calls = calls(&hook).await;
    assert_eq!(calls.len(), 5);
    assert_eq!(
        calls[4],
        (
            "us-2".to_string(),
            json!({"target": "us-2", "region": "us"})
        )
    );

    // Caught up: the Gate holds what it held, by the same crossing, and opens nothing.
    h.reconcile("production").await;
    h.reconcile("production").await;
    assert_eq!(h.passages().await.len(), 2);
    let gate = h.gate("production").await;
    let current = gate.status.as_ref().unwrap().current.as_ref().unwrap();
    assert_eq!(
        (current.bundle.as_str(), current.passage.as_str()),
        ("b1", b1_rollout.as_str())
    );
    // The targets view shows the rollout, and the catch-up under it.
    let shown = Ops::new(h.env.admin.clone())
        .targets(&ns, "production")
        .await
        .unwrap()
        .rollout
        .unwrap();
    assert_eq!(shown.passage, b1_rollout);
    let since: Vec<(&str, Option<&str>)> = shown
        .since
        .iter()
        .map(|s| (s.passage.as_str(), s.rollback_of.as_deref()))
        .collect();
    assert_eq!(since, [(name.as_str(), None)]);
}
