//! The Gate controller, case by case (spec ops-and-rules.md §11.3–11.6, AC-025 – AC-072,
//! and AC-154), each a reconcile against a real API server.

use hecate_ops::rules::promotion::new_passage;
use hecate_types::{
    BundleApproval, BundleStatus, ConditionStatus, EvidenceRef, GateCrossing, GateOccupant,
    GateStatus, PassagePhase, PassageStatus, Time, Window, wellknown,
};
use jiff::Timestamp;
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;

use crate::harness::*;

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[tokio::test]
async fn ac025_ac060_an_auto_gate_starts_a_passage() {
    let h = Harness::new().await;
    let gate = auto_gate(&h, "dev", &[]).await;
    bundle(&h.env, "b1").await;
    h.reconcile("dev").await;

    let passage = h.the_passage().await;
    assert_eq!(
        (passage.spec.gate.as_str(), passage.spec.bundle.as_str()),
        ("dev", "b1")
    );
    assert_eq!(passage.spec.steps, steps());
    assert_eq!(passage.spec.actor, wellknown::ACTOR_CONTROLLER);
    assert_eq!(
        passage
            .labels()
            .get(wellknown::LABEL_GATE)
            .map(String::as_str),
        Some("dev")
    );
    assert_eq!(
        passage
            .labels()
            .get(wellknown::LABEL_BUNDLE)
            .map(String::as_str),
        Some("b1")
    );
    // Named as `hecate promote` names it, so the two can never both open a crossing.
    assert_eq!(passage.name_any(), "dev-1");
    assert!(
        passage.owner_references().is_empty(),
        "deleting a Gate must not take its record"
    );
    let status = h.gate("dev").await.status.unwrap();
    assert_eq!(status.active_passage, "dev-1");
    let ready = h.ready("dev").await;
    assert_eq!(
        (ready.status, ready.reason.as_str()),
        (ConditionStatus::True, "Crossing")
    );
    assert_eq!(ready.observed_generation, gate.metadata.generation.unwrap());

    // AC-060, AC-061: the Event names its action.
    let event = h.event("PassageStarted").await;
    assert_eq!(event.action.as_deref(), Some("Crossing"));
    assert_eq!(event.type_.as_deref(), Some("Normal"));
    assert_eq!(
        event.reporting_controller.as_deref(),
        Some("gate-controller")
    );
    assert!(
        h.events()
            .await
            .iter()
            .all(|e| e.action.as_deref().is_some_and(|a| !a.is_empty()))
    );
}

#[tokio::test]
async fn ac026_one_passage_at_a_time() {
    let h = Harness::new().await;
    auto_gate(&h, "dev", &[]).await;
    bundles_in_order(&h.env, &["b1", "b2"]).await;
    for _ in 0..3 {
        h.reconcile("dev").await;
    }
    let passage = h.the_passage().await;
    assert_eq!(
        passage.spec.bundle, "b2",
        "the newest eligible Bundle crosses"
    );
    assert_eq!(h.ready("dev").await.reason, "Crossing");
}

#[tokio::test]
async fn ac027_a_manual_gate_lists_but_does_not_cross() {
    let h = Harness::new().await;
    create_gate(&h, "production", gate_spec(false, &[], false)).await;
    bundle(&h.env, "b1").await;
    h.reconcile("production").await;
    assert!(h.passages().await.is_empty());
    assert_eq!(h.gate("production").await.status.unwrap().eligible, ["b1"]);
    let ready = h.ready("production").await;
    assert_eq!(ready.reason, "Idle");
    assert!(
        ready.message.contains("must be requested"),
        "{}",
        ready.message
    );
    assert!(
        ready
            .message
            .contains("hecate promote production --bundle b1"),
        "the message says how: {}",
        ready.message
    );
}

#[tokio::test]
async fn ac028_ac029_a_succeeded_passage_is_recorded_once() {
    let h = Harness::new().await;
    auto_gate(&h, "staging", &[]).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    let passage = h.the_passage().await;
    h.finish(&passage, PassagePhase::Succeeded, "").await;
    for _ in 0..3 {
        h.reconcile("staging").await;
    }
    let status = h.gate("staging").await.status.unwrap();
    let current = status.current.clone().unwrap();
    assert_eq!(
        (current.bundle.as_str(), current.passage.as_str()),
        ("b1", "staging-1")
    );
    assert_eq!(current.actor, "controller");
    assert_eq!(status.history.len(), 1);
    assert_eq!(status.active_passage, "");
    let cleared = h.bundle("b1").await.status.unwrap().cleared;
    assert_eq!(cleared.len(), 1);
    assert_eq!(
        (cleared[0].gate.as_str(), cleared[0].passage.as_str()),
        ("staging", "staging-1")
    );
    assert_eq!(
        h.passages().await.len(),
        1,
        "a recorded Bundle is not crossed again"
    );
    let event = h.event("BundleCrossed").await;
    assert_eq!(event.action.as_deref(), Some("Crossing"));
    // Q2: emitted once, when the record is written, not on every reconcile.
    let crossed = h
        .events()
        .await
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("BundleCrossed"));
    assert_eq!(
        crossed
            .map(|e| e.deprecated_count.unwrap_or(1))
            .sum::<i32>(),
        1
    );
}

#[tokio::test]
async fn ac030_a_failed_passage_is_recorded_as_blocked_and_not_retried() {
    let h = Harness::new().await;
    auto_gate(&h, "production", &[]).await;
    bundle(&h.env, "b1").await;
    h.reconcile("production").await;
    let passage = h.the_passage().await;
    h.finish(&passage, PassagePhase::Failed, "flux never converged")
        .await;
    h.reconcile("production").await;
    h.reconcile("production").await;

    assert!(h.gate("production").await.status.unwrap().current.is_none());
    let status = h.bundle("b1").await.status.unwrap();
    assert!(status.cleared.is_empty());
    assert_eq!(status.blocked.len(), 1);
    assert_eq!(status.blocked[0].reason, "flux never converged");
    assert_eq!(status.blocked[0].passage, "production-1");
    assert_eq!(
        h.passages().await.len(),
        1,
        "automation never retries a failure"
    );
    let ready = h.ready("production").await;
    assert_eq!(ready.reason, "CrossingFailed");
    let event = h.event("CrossingFailed").await;
    assert_eq!(
        (event.action.as_deref(), event.type_.as_deref()),
        (Some("Crossing"), Some("Warning"))
    );
}

#[tokio::test]
async fn ac031_blocked_is_capped_and_newest_first() {
    let h = Harness::new().await;
    let gate = auto_gate(&h, "production", &[]).await;
    let mut b1 = bundle(&h.env, "b1").await;
    b1.status = Some(BundleStatus {
        blocked: (0..15)
            .map(|i| GateCrossing {
                gate: "production".into(),
                passage: format!("old-{i}"),
                at: Time(Timestamp::now()),
                actor: String::new(),
                reason: "an older failure".into(),
            })
            .collect(),
        ..BundleStatus::default()
    });
    let b1 = h.env.write_status(&b1).await;
    let passage = h
        .env
        .create(new_passage(
            &gate,
            &b1,
            "olaf@acme.example",
            "production-1",
            Timestamp::now(),
        ))
        .await;
    h.finish(&passage, PassagePhase::Failed, "the newest failure")
        .await;
    h.reconcile("production").await;
    let blocked = h.bundle("b1").await.status.unwrap().blocked;
    assert!(blocked.len() <= 10, "{} entries", blocked.len());
    assert_eq!(blocked[0].reason, "the newest failure");
    assert_eq!(blocked[0].actor, "olaf@acme.example");
}

#[tokio::test]
async fn ac032_the_pipeline_order_is_enforced() {
    let h = Harness::new().await;
    auto_gate(&h, "staging", &[]).await;
    auto_gate(&h, "production", &["staging"]).await;
    bundle(&h.env, "b1").await;

    h.reconcile("production").await;
    assert!(h.passages().await.is_empty());
    let ready = h.ready("production").await;
    assert!(
        ready.message.contains("has not cleared staging"),
        "{}",
        ready.message
    );

    h.reconcile("staging").await;
    let staging = h.the_passage().await;
    h.finish(&staging, PassagePhase::Succeeded, "").await;
    h.reconcile("staging").await;

    h.reconcile("production").await;
    let production: Vec<_> = h
        .passages()
        .await
        .into_iter()
        .filter(|p| p.spec.gate == "production")
        .collect();
    assert_eq!(production.len(), 1);
}

#[tokio::test]
async fn ac033_an_approval_is_needed_then_crosses() {
    let h = Harness::new().await;
    create_gate(&h, "production", gate_spec(true, &[], true)).await;
    let b1 = bundle(&h.env, "b1").await;
    h.reconcile("production").await;
    assert!(h.passages().await.is_empty());
    assert!(
        h.ready("production")
            .await
            .message
            .contains("awaiting approval")
    );

    let mut b1 = b1;
    b1.status = Some(BundleStatus {
        approved_for: vec![BundleApproval {
            gate: "production".into(),
            actor: "olaf@acme.example".into(),
            at: Time(Timestamp::now()),
        }],
        ..BundleStatus::default()
    });
    h.env.write_status(&b1).await;
    h.reconcile("production").await;
    assert_eq!(h.the_passage().await.spec.bundle, "b1");
}

/// An automatic Gate under an approval policy (DECISION 137) opens nothing while the
/// policy does not hold — one release manager of two, or a rejection — and crosses
/// once it does, judged by the rule Explain and promote read.
#[tokio::test]
async fn an_approval_policy_holds_an_automatic_gate_until_it_is_met() {
    let h = Harness::new().await;
    let mut spec = gate_spec(true, &[], true);
    spec.admits[0].approvals = Some(hecate_types::ApprovalPolicy {
        required: vec![hecate_types::ApprovalRule {
            count: 2,
            groups: vec!["release-managers".into()],
            users: vec![],
        }],
        ..hecate_types::ApprovalPolicy::default()
    });
    create_gate(&h, "production", spec).await;
    let mut b1 = bundle(&h.env, "b1").await;
    let approval = |actor: &str| hecate_types::PolicyApproval {
        gate: "production".into(),
        actor: actor.into(),
        groups: vec!["release-managers".into()],
        at: Time(Timestamp::now()),
    };
    let rejection = hecate_types::Rejection {
        gate: "production".into(),
        actor: "erin".into(),
        at: Time(Timestamp::now()),
        reason: "not this week".into(),
        withdrawn_by: String::new(),
        withdrawn_at: None,
        withdrawn_groups: Vec::new(),
    };
    let steps: [(
        Vec<hecate_types::PolicyApproval>,
        Vec<hecate_types::Rejection>,
        &str,
    ); 2] = [
        (
            vec![approval("carol")],
            vec![],
            "1 of 2 from release-managers",
        ),
        (
            vec![approval("carol"), approval("dave")],
            vec![rejection],
            "rejected by erin: not this week",
        ),
    ];
    for (approvals, rejections, said) in steps {
        b1.status = Some(BundleStatus {
            approvals,
            rejections,
            ..BundleStatus::default()
        });
        b1 = h.env.write_status(&b1).await;
        h.reconcile("production").await;
        assert!(h.passages().await.is_empty(), "{said}");
        let ready = h.ready("production").await.message;
        assert!(ready.contains(said), "{ready}");
    }
    if let Some(status) = b1.status.as_mut() {
        status.rejections[0].withdrawn_by = "erin".into();
        status.rejections[0].withdrawn_at = Some(Time(Timestamp::now()));
    }
    h.env.write_status(&b1).await;
    h.reconcile("production").await;
    let passage = h.the_passage().await;
    assert_eq!(
        (passage.spec.bundle.as_str(), passage.spec.actor.as_str()),
        ("b1", "controller")
    );
}

#[tokio::test]
async fn ac034_a_closed_window_queues_rather_than_fails() {
    let h = Harness::new().await;
    let mut spec = gate_spec(true, &[], false);
    spec.windows = vec![Window {
        schedule: "0 9 * * 1-5".into(),
        duration: "1h".into(),
        ..Window::default()
    }];
    create_gate(&h, "production", spec).await;
    bundle(&h.env, "b1").await;
    // Monday noon: the window was 09:00–10:00.
    h.clock.set(at("2026-08-10T12:00:00Z"));
    let outcome = h.reconcile("production").await;
    assert!(h.passages().await.is_empty());
    assert_eq!(h.ready("production").await.reason, "WindowClosed");
    assert_eq!(h.gate("production").await.status.unwrap().eligible, ["b1"]);
    assert!(outcome.requeue_after.is_some());

    // Tuesday 09:30: open, and it crosses.
    h.clock.set(at("2026-08-11T09:30:00Z"));
    h.reconcile("production").await;
    assert_eq!(h.the_passage().await.spec.bundle, "b1");
}

#[tokio::test]
async fn ac035_suspension_stops_everything() {
    let h = Harness::new().await;
    let mut spec = gate_spec(true, &[], false);
    spec.suspend = true;
    create_gate(&h, "dev", spec).await;
    bundle(&h.env, "b1").await;
    let outcome = h.reconcile("dev").await;
    assert!(h.passages().await.is_empty());
    assert_eq!(outcome.requeue_after, None);
    let ready = h.ready("dev").await;
    assert_eq!(
        (ready.status, ready.reason.as_str()),
        (ConditionStatus::False, "Suspended")
    );
    assert!(h.gate("dev").await.status.unwrap().eligible.is_empty());
}

#[tokio::test]
async fn ac036_history_is_capped() {
    let h = Harness::new().await;
    let mut gate = auto_gate(&h, "dev", &[]).await;
    let occupant = |bundle: &str, passage: &str| GateOccupant {
        bundle: bundle.into(),
        digest: String::new(),
        passage: passage.into(),
        entered_at: Time(Timestamp::now()),
        actor: String::new(),
        verified: None,
    };
    gate.status = Some(GateStatus {
        current: Some(occupant("seed", "seed-passage")),
        history: (0..15)
            .map(|i| occupant("old", &format!("old-{i}")))
            .collect(),
        ..GateStatus::default()
    });
    h.env.write_status(&gate).await;
    bundle(&h.env, "b1").await;
    h.reconcile("dev").await;
    let passage = h.the_passage().await;
    h.finish(&passage, PassagePhase::Succeeded, "").await;
    h.reconcile("dev").await;
    let status = h.gate("dev").await.status.unwrap();
    assert_eq!(status.history.len(), 10);
    assert_eq!(status.history[0].bundle, "b1");
}

#[tokio::test]
async fn ac037_a_gate_without_steps_reports_instead_of_panicking() {
    let h = Harness::new().await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage = None;
    create_gate(&h, "dev", spec).await;
    bundle(&h.env, "b1").await;
    h.reconcile("dev").await;
    let ready = h.ready("dev").await;
    assert_eq!(ready.reason, "PassageFailed");
    assert!(
        ready.message.contains("no passage steps"),
        "{}",
        ready.message
    );
    assert!(h.passages().await.is_empty());
}

#[tokio::test]
async fn ac038_a_missing_gate_is_not_an_error() {
    let h = Harness::new().await;
    assert_eq!(h.reconcile("gone").await.requeue_after, None);
}

#[tokio::test]
async fn ac039_health_is_not_applicable_without_checks() {
    let h = Harness::new().await;
    create_gate(&h, "dev", gate_spec(false, &[], false)).await;
    h.reconcile("dev").await;
    let health = h.gate("dev").await.status.unwrap().health.unwrap();
    assert_eq!(health.status, hecate_types::Health::NotApplicable);
    assert!(h.metrics.encode().contains(&format!(
        "hecate_gate_health{{namespace=\"{}\",gate=\"dev\",status=\"NotApplicable\"}} 1",
        h.env.namespace
    )));
}

async fn held(h: &Harness, verdict: &str, risk: i32, blockers: &[&str]) {
    let passage = h.the_passage().await;
    let mut passage = passage.clone();
    passage.status = Some(PassageStatus {
        phase: Some(PassagePhase::Running),
        evidence: Some(EvidenceRef {
            verdict: verdict.into(),
            risk: Some(risk),
            blockers: blockers.iter().map(|b| b.to_string()).collect(),
            ..EvidenceRef::default()
        }),
        ..PassageStatus::default()
    });
    h.env.write_status(&passage).await;
}

#[tokio::test]
async fn ac046_ac047_a_held_change_gate_shows_on_the_gate_until_the_crossing_ends() {
    let h = Harness::new().await;
    auto_gate(&h, "staging", &[]).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    held(&h, "hold", 62, &["no approver recorded"]).await;
    h.reconcile("staging").await;
    let evidence = h.gate("staging").await.status.unwrap().evidence.unwrap();
    assert_eq!(
        (evidence.verdict.as_str(), evidence.risk),
        ("hold", Some(62))
    );
    let message = h.ready("staging").await.message;
    for part in ["held by the change gate", "62", "no approver recorded"] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    let passage = h.the_passage().await;
    h.finish(&passage, PassagePhase::Succeeded, "").await;
    h.reconcile("staging").await;
    assert!(h.gate("staging").await.status.unwrap().evidence.is_none());
}

#[tokio::test]
async fn ac048_an_approving_verdict_does_not_read_as_held() {
    let h = Harness::new().await;
    auto_gate(&h, "staging", &[]).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    held(&h, "approve", 5, &[]).await;
    h.reconcile("staging").await;
    let message = h.ready("staging").await.message;
    assert!(
        !message.contains("held") && message.contains("in progress"),
        "{message}"
    );
}

#[tokio::test]
async fn ac049_a_gate_says_when_it_stopped_because_a_crossing_failed() {
    let h = Harness::new().await;
    auto_gate(&h, "staging", &[]).await;
    let mut b1 = bundle(&h.env, "b1").await;
    b1.status = Some(BundleStatus {
        blocked: vec![GateCrossing {
            gate: "staging".into(),
            passage: "staging-abc".into(),
            at: Time(Timestamp::now()),
            actor: String::new(),
            reason: "http: no such host".into(),
        }],
        ..BundleStatus::default()
    });
    h.env.write_status(&b1).await;
    h.reconcile("staging").await;
    assert!(h.passages().await.is_empty());
    let ready = h.ready("staging").await;
    assert_eq!(ready.reason, "CrossingFailed");
    for part in ["no such host", "hecate promote staging --bundle b1"] {
        assert!(
            ready.message.contains(part),
            "{part:?} in {}",
            ready.message
        );
    }
}

#[tokio::test]
async fn ac055_ac056_ac059_a_gate_with_bad_steps_refuses_until_they_are_fixed() {
    let h = Harness::new().await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = vec![hecate_types::Step {
        uses: "git-commit".into(),
        with: Some(serde_json::json!({"mesage": "promote"})),
        ..hecate_types::Step::default()
    }];
    let gate = create_gate(&h, "staging", spec).await;
    bundle(&h.env, "b1").await;
    let outcome = h.reconcile("staging").await;
    assert_eq!(outcome.requeue_after, None);
    let ready = h.ready("staging").await;
    assert_eq!(
        (ready.status, ready.reason.as_str()),
        (ConditionStatus::False, "InvalidSteps")
    );
    for part in ["steps[0]", "git-commit", "mesage"] {
        assert!(
            ready.message.contains(part),
            "{part:?} in {}",
            ready.message
        );
    }
    assert!(h.gate("staging").await.status.unwrap().eligible.is_empty());
    assert!(h.passages().await.is_empty());
    let event = h.event("InvalidSteps").await;
    assert_eq!(
        (event.action.as_deref(), event.type_.as_deref()),
        (Some("Validating"), Some("Warning"))
    );

    // AC-056: fixed, the refusal goes (the controller never reads back its own report).
    let mut fixed = h.gate("staging").await;
    fixed.spec.passage.as_mut().unwrap().steps[0].with = Some(serde_json::json!({"message": "x"}));
    h.env
        .api::<hecate_types::Gate>()
        .replace("staging", &Default::default(), &fixed)
        .await
        .unwrap();
    h.reconcile("staging").await;
    assert_ne!(h.ready("staging").await.reason, "InvalidSteps");
    drop(gate);
}

#[tokio::test]
async fn ac058_suspension_is_reported_before_step_problems() {
    let h = Harness::new().await;
    let mut spec = gate_spec(true, &[], false);
    spec.suspend = true;
    spec.passage.as_mut().unwrap().steps[0].uses = "nonexistent".into();
    create_gate(&h, "staging", spec).await;
    h.reconcile("staging").await;
    assert_eq!(h.ready("staging").await.reason, "Suspended");
}

#[tokio::test]
async fn ac072_a_reconcile_collects_old_passages() {
    let h = Harness::new().await;
    let mut spec = gate_spec(true, &[], false);
    spec.retain = Some(2);
    create_gate(&h, "staging", spec).await;
    for i in 0..9 {
        let passage = hecate_testenv::fixtures::passage(
            &h.env,
            &format!("old-{i}"),
            "staging",
            "app-1",
            PassagePhase::Succeeded,
        )
        .await;
        let mut labelled = passage.clone();
        labelled
            .labels_mut()
            .insert(wellknown::LABEL_GATE.into(), "staging".into());
        h.env
            .api::<hecate_types::Passage>()
            .replace(&labelled.name_any(), &Default::default(), &labelled)
            .await
            .unwrap();
    }
    h.reconcile("staging").await;
    let terminal = h
        .passages()
        .await
        .into_iter()
        .filter(|p| p.is_terminal())
        .count();
    assert!(terminal <= 2, "{terminal} finished Passages remain");
}

#[tokio::test]
async fn ac154_an_idle_gate_says_what_most_bundles_wait_for() {
    let h = Harness::new().await;
    create_gate(&h, "production", gate_spec(false, &["dev"], true)).await;
    for (name, cleared) in [("a", true), ("b", false), ("c", true)] {
        let mut b = bundle(&h.env, name).await;
        if cleared {
            b.status = Some(BundleStatus {
                cleared: vec![GateCrossing {
                    gate: "dev".into(),
                    passage: "dev-1".into(),
                    at: Time(Timestamp::now()),
                    actor: String::new(),
                    reason: String::new(),
                }],
                ..BundleStatus::default()
            });
            h.env.write_status(&b).await;
        }
    }
    h.reconcile("production").await;
    let ready = h.ready("production").await;
    assert_eq!(
        (ready.reason.as_str(), ready.message.as_str()),
        ("Idle", "awaiting approval (2 of 3 Bundles)")
    );
}

#[tokio::test]
async fn a_person_promoting_while_the_gate_crosses_by_itself_yields_one_passage() {
    let h = Harness::new().await;
    let ops = hecate_ops::Ops::new(h.env.admin.clone());
    for round in 0..20 {
        let gate = format!("race-{round}");
        auto_gate(&h, &gate, &[]).await;
        if round == 0 {
            bundle(&h.env, "b1").await;
        }
        let (reconciled, promoted) = tokio::join!(
            h.reconciler.reconcile_named(&h.env.namespace, &gate),
            ops.promote(&h.env.namespace, &gate, "b1", "bob@acme.example"),
        );
        // Whichever lost may have been refused or may have found the crossing open;
        // neither may have opened a second one.
        reconciled.unwrap();
        drop(promoted);
        let passages: Vec<_> = h
            .passages()
            .await
            .into_iter()
            .filter(|p| p.spec.gate == gate)
            .collect();
        assert_eq!(passages.len(), 1, "round {round}: {passages:#?}");
        h.reconcile(&gate).await;
        assert_eq!(
            h.gate(&gate).await.status.unwrap().active_passage,
            passages[0].name_any()
        );
    }
}
