//! Spec §11.9 – §11.12 (AC-093 – AC-107, AC-112 – AC-119) against the API server.

use hecate_ops::{Error, Kind, Ops, RefusalCode};
use hecate_testenv::TestEnv;
use hecate_types::{
    Beacon, BeaconSpec, Bundle, GateOccupant, GateSpec, GateStatus, ImageWatch, Passage,
    PassagePhase, WatchSource, Window,
};
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;

use crate::fixtures::*;

async fn passage_count(env: &TestEnv) -> usize {
    env.api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .len()
}

/// The refusal's code and whole message.
fn refusal(error: Error) -> (RefusalCode, String) {
    match &error {
        Error::Refused { code, .. } => (*code, error.to_string()),
        other => panic!("expected a refusal, got {other}"),
    }
}

#[tokio::test]
async fn ac093_promote_opens_a_passage() {
    let env = TestEnv::new().await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    bundles_in_order(&env, &["b1"]).await;
    let ops = Ops::new(env.admin.clone());
    let p = ops
        .promote(&env.namespace, "staging", "b1", "olaf@example.com")
        .await
        .unwrap();
    let promoted = hecate_ops::Promoted::from(&p);
    assert_eq!(
        (
            promoted.namespace.as_str(),
            promoted.gate.as_str(),
            promoted.bundle.as_str(),
            promoted.passage.as_str(),
            promoted.actor.as_str()
        ),
        (
            env.namespace.as_str(),
            "staging",
            "b1",
            "staging-1",
            "olaf@example.com"
        )
    );
    assert_eq!(
        (
            p.spec.gate.as_str(),
            p.spec.bundle.as_str(),
            p.spec.actor.as_str()
        ),
        ("staging", "b1", "olaf@example.com")
    );
    assert_eq!(
        p.labels().get("hecate.dev/gate").map(String::as_str),
        Some("staging")
    );
    assert_eq!(
        p.labels().get("hecate.dev/bundle").map(String::as_str),
        Some("b1")
    );
    let steps: Vec<&str> = p.spec.steps.iter().map(|s| s.uses.as_str()).collect();
    assert_eq!(steps, ["git-push", "flux-wait"], "the Gate's steps, copied");
    assert_eq!(p.name_any(), "staging-1");
    assert_eq!(passage_count(&env).await, 1);
}

#[tokio::test]
async fn ac094_to_ac100_promote_refuses_and_creates_nothing() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    let ops = Ops::new(env.admin.clone());
    gate(&env, "upstream", gate_spec(&["dev"], false)).await;
    gate(&env, "approval", gate_spec(&[], true)).await;
    gate(
        &env,
        "suspended",
        GateSpec {
            suspend: true,
            ..gate_spec(&[], false)
        },
    )
    .await;
    gate(
        &env,
        "no-steps",
        GateSpec {
            passage: None,
            ..gate_spec(&[], false)
        },
    )
    .await;
    let mut other_beacon = gate_spec(&[], false);
    other_beacon.admits[0].from.beacon = "other".into();
    gate(&env, "other", other_beacon).await;
    let windows = vec![Window {
        schedule: "0 6 * * 1-5".into(),
        duration: "1h".into(),
        ..Window::default()
    }];
    gate(
        &env,
        "windowed",
        GateSpec {
            windows,
            ..gate_spec(&[], false)
        },
    )
    .await;
    gate(&env, "busy", gate_spec(&[], false)).await;
    passage(&env, "busy-b0", "busy", "b0", PassagePhase::Running).await;
    // A verifier no one knows: refused before the release lands (DECISION 168).
    let mut unverifiable = gate_spec(&[], false);
    unverifiable.verify = vec![hecate_types::Verification {
        uses: "argo-rollouts".into(),
        with: None,
    }];
    gate(&env, "unverifiable", unverifiable).await;
    bundles_in_order(&env, &["b1"]).await;

    // A Tuesday noon, outside "06:00–07:00 on weekdays".
    let ops = ops.with_clock(|| "2026-08-11T12:00:00Z".parse().unwrap());
    let cases = [
        (
            "upstream",
            RefusalCode::UpstreamNotCleared,
            "promote refused: has not cleared dev",
        ),
        (
            "approval",
            RefusalCode::AwaitingApproval,
            "promote refused: awaiting approval",
        ),
        (
            "suspended",
            RefusalCode::Suspended,
            "promote refused: Gate suspended is suspended",
        ),
        (
            "no-steps",
            RefusalCode::NoSteps,
            "promote refused: Gate no-steps has no steps",
        ),
        (
            "other",
            RefusalCode::NotAdmitted,
            "promote refused: Gate other does not admit Bundles from Beacon app",
        ),
        (
            "windowed",
            RefusalCode::WindowClosed,
            "promote refused: outside every promotion window until 2026-08-12T06:00:00Z",
        ),
        (
            "busy",
            RefusalCode::AlreadyCrossing,
            "promote refused: Passage busy-b0 is already crossing b0",
        ),
        (
            "unverifiable",
            RefusalCode::InvalidSteps,
            "promote refused: Gate unverifiable names what cannot run: verify[0] (argo-rollouts): no verifier is called \"argo-rollouts\"; the verifiers are flagger, http, prometheus, soak",
        ),
    ];
    for (gate, code, message) in cases {
        let error = ops.promote(ns, gate, "b1", "olaf").await.unwrap_err();
        assert!(
            error.is_refused() && !error.is_not_found(),
            "{gate}: {error}"
        );
        assert_eq!(refusal(error), (code, message.to_string()), "{gate}");
    }
    assert_eq!(
        passage_count(&env).await,
        1,
        "only the fixture's Passage exists"
    );
}

#[tokio::test]
async fn ac101_actions_require_an_actor() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    gate(&env, "staging", gate_spec(&[], false)).await;
    bundles_in_order(&env, &["b1"]).await;
    passage(&env, "staging-b1", "staging", "b1", PassagePhase::Running).await;
    let ops = Ops::new(env.admin.clone());
    assert_eq!(
        refusal(ops.promote(ns, "staging", "b1", "").await.unwrap_err()).0,
        RefusalCode::NoActor
    );
    assert_eq!(
        refusal(ops.approve(ns, "b1", "staging", "").await.unwrap_err()).0,
        RefusalCode::NoActor
    );
    assert_eq!(
        refusal(ops.abort(ns, "staging-b1", "").await.unwrap_err()).0,
        RefusalCode::NoActor
    );
    assert!(!ops.passage(ns, "staging-b1").await.unwrap().spec.abort);
}

#[tokio::test]
async fn missing_objects_are_not_found() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    gate(&env, "staging", gate_spec(&[], false)).await;
    let ops = Ops::new(env.admin.clone());
    assert!(
        ops.promote(ns, "ghost", "b1", "olaf")
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        ops.promote(ns, "staging", "ghost", "olaf")
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert_eq!(
        not_found(
            ops.approve(ns, "ghost", "staging", "olaf")
                .await
                .unwrap_err()
        ),
        (Kind::Bundle, ns.clone(), "ghost".to_string())
    );
    assert!(
        ops.abort(ns, "ghost", "olaf")
            .await
            .unwrap_err()
            .is_not_found()
    );
    // AC-115
    assert!(ops.poll(ns, "ghost").await.unwrap_err().is_not_found());
}

/// The NotFound's kind, namespace and name.
fn not_found(error: Error) -> (Kind, String, String) {
    match error {
        Error::NotFound {
            kind,
            namespace,
            name,
        } => (kind, namespace, name),
        other => panic!("expected NotFound, got {other}"),
    }
}

/// AC-103: approving for a Gate that does not exist is NotFound (the typed error,
/// naming the Gate), whether or not the Bundle exists: the Gate is looked up first.
/// Nothing is recorded on the Bundle.
#[tokio::test]
async fn ac103_approving_on_a_missing_gate_is_not_found() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    bundles_in_order(&env, &["b1"]).await;
    let ops = Ops::new(env.admin.clone());
    let gate_missing = (Kind::Gate, ns.clone(), "ghost".to_string());
    assert_eq!(
        not_found(ops.approve(ns, "b1", "ghost", "olaf").await.unwrap_err()),
        gate_missing
    );
    assert_eq!(
        not_found(
            ops.approve(ns, "nobody", "ghost", "olaf")
                .await
                .unwrap_err()
        ),
        gate_missing
    );
    let b1: Bundle = ops.bundle(ns, "b1").await.unwrap();
    assert!(
        b1.status.unwrap_or_default().approved_for.is_empty(),
        "nothing recorded"
    );
}

#[tokio::test]
async fn ac102_ac107_approval_is_per_gate_and_idempotent() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    gate(&env, "staging", gate_spec(&[], false)).await;
    gate(&env, "production", gate_spec(&[], false)).await;
    bundles_in_order(&env, &["b1"]).await;
    let t0: jiff::Timestamp = "2026-08-11T12:00:00Z".parse().unwrap();
    let ops = Ops::new(env.admin.clone()).with_clock(move || t0);

    let first = ops
        .approve(ns, "b1", "staging", "olaf@acme.example")
        .await
        .unwrap();
    assert!(first.recorded);
    let b1: Bundle = ops.bundle(ns, "b1").await.unwrap();
    let approval = b1.approval_for("staging").unwrap();
    assert_eq!(
        (approval.actor.as_str(), approval.at.0),
        ("olaf@acme.example", t0)
    );
    assert!(
        b1.approval_for("production").is_none(),
        "an approval for staging is not one for production"
    );

    let again = ops
        .approve(ns, "b1", "staging", "olaf@acme.example")
        .await
        .unwrap();
    assert!(!again.recorded);
    let by_someone_else = ops.approve(ns, "b1", "staging", "carol").await.unwrap();
    assert!(!by_someone_else.recorded);
    assert_eq!(
        by_someone_else.approved_by, "olaf@acme.example",
        "the first approval stands"
    );
    assert_eq!(
        (
            by_someone_else.bundle.as_str(),
            by_someone_else.gate.as_str()
        ),
        ("b1", "staging")
    );
    assert_eq!(
        ops.bundle(ns, "b1")
            .await
            .unwrap()
            .status
            .unwrap()
            .approved_for
            .len(),
        1
    );
}

#[tokio::test]
async fn approval_refuses_a_bundle_the_gate_does_not_admit() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    let mut spec = gate_spec(&[], false);
    spec.admits[0].from.beacon = "other".into();
    gate(&env, "staging", spec).await;
    bundles_in_order(&env, &["b1"]).await;
    let ops = Ops::new(env.admin.clone());
    let (code, message) = refusal(ops.approve(ns, "b1", "staging", "olaf").await.unwrap_err());
    assert_eq!(code, RefusalCode::NotAdmitted);
    assert!(message.contains("does not admit"), "{message}");
    assert!(
        ops.bundle(ns, "b1").await.unwrap().status.is_none(),
        "nothing recorded"
    );
}

#[tokio::test]
async fn ac104_approval_unblocks_a_promotion_by_someone_else() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    gate(&env, "production", gate_spec(&[], true)).await;
    bundles_in_order(&env, &["b1"]).await;
    let ops = Ops::new(env.admin.clone());
    assert_eq!(
        refusal(
            ops.promote(ns, "production", "b1", "carol")
                .await
                .unwrap_err()
        )
        .0,
        RefusalCode::AwaitingApproval
    );
    ops.approve(ns, "b1", "production", "carol").await.unwrap();
    // The approver cannot be the promoter…
    let (code, message) = refusal(
        ops.promote(ns, "production", "b1", "carol")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, RefusalCode::SelfApproved);
    assert!(message.contains("carol"), "{message}");
    assert_eq!(passage_count(&env).await, 0);
    // …someone else can.
    let p = ops.promote(ns, "production", "b1", "bob").await.unwrap();
    assert_eq!(hecate_ops::Promoted::from(&p).actor, "bob");
    assert_eq!(p.spec.actor, "bob");
}

#[tokio::test]
async fn ac105_ac106_abort() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    passage(&env, "staging-b1", "staging", "b1", PassagePhase::Running).await;
    passage(&env, "staging-b0", "staging", "b0", PassagePhase::Succeeded).await;
    let ops = Ops::new(env.admin.clone()).with_clock(|| "2026-08-11T12:00:00Z".parse().unwrap());

    let answer = ops.abort(ns, "staging-b1", "olaf").await.unwrap();
    assert_eq!(
        answer,
        hecate_ops::Aborted {
            namespace: ns.clone(),
            passage: "staging-b1".into(),
            gate: "staging".into(),
            bundle: "b1".into(),
            aborted: true,
            aborted_by: Some("olaf".into()),
        }
    );
    let aborted = ops.passage(ns, "staging-b1").await.unwrap();
    assert!(aborted.spec.abort);
    assert_eq!(
        aborted.phase(),
        PassagePhase::Running,
        "amended, not replaced"
    );
    assert_eq!(
        aborted
            .annotations()
            .get("hecate.dev/aborted-by")
            .map(String::as_str),
        Some("olaf")
    );
    assert_eq!(
        aborted
            .annotations()
            .get("hecate.dev/aborted-at")
            .map(String::as_str),
        Some("2026-08-11T12:00:00Z")
    );
    // Again: nothing changes, the first aborter stays on record — and is the one
    // reported, not the caller.
    let repeated = ops.abort(ns, "staging-b1", "carol").await.unwrap();
    assert_eq!(repeated.aborted_by.as_deref(), Some("olaf"));
    let again = ops.passage(ns, "staging-b1").await.unwrap();
    assert_eq!(
        again
            .annotations()
            .get("hecate.dev/aborted-by")
            .map(String::as_str),
        Some("olaf")
    );
    assert_eq!(again.resource_version(), aborted.resource_version());

    let (code, message) = refusal(ops.abort(ns, "staging-b0", "olaf").await.unwrap_err());
    assert_eq!(
        (code, message.as_str()),
        (
            RefusalCode::AlreadyFinished,
            "abort refused: Passage staging-b0 already finished (Succeeded)"
        )
    );
}

fn beacon(suspend: bool) -> Beacon {
    let mut beacon = Beacon::new(
        "app",
        BeaconSpec {
            watch: vec![WatchSource {
                image: Some(ImageWatch {
                    repo: "ghcr.io/acme/app".into(),
                    ..ImageWatch::default()
                }),
                ..WatchSource::default()
            }],
            suspend,
            ..BeaconSpec::default()
        },
    );
    beacon
        .annotations_mut()
        .insert("acme.example/owner".into(), "platform".into());
    beacon
}

#[tokio::test]
async fn ac112_ac113_ac116_poll() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    env.create(beacon(false)).await;
    let ops = Ops::new(env.admin.clone());
    let first = ops.poll(ns, "app").await.unwrap();
    let stored = ops.beacon(ns, "app").await.unwrap();
    assert_eq!(
        stored.annotations().get("reconcile.fluxcd.io/requestedAt"),
        Some(&first.requested_at)
    );
    assert_eq!(
        (first.namespace.as_str(), first.beacon.as_str()),
        (ns.as_str(), "app")
    );
    assert_eq!(
        stored
            .annotations()
            .get("acme.example/owner")
            .map(String::as_str),
        Some("platform")
    );
    let second = ops.poll(ns, "app").await.unwrap();
    assert_ne!(first.requested_at, second.requested_at);
    assert!(
        first.requested_at.parse::<i128>().is_ok(),
        "Unix nanoseconds: {}",
        first.requested_at
    );
}

#[tokio::test]
async fn ac114_polling_a_suspended_beacon_is_refused() {
    let env = TestEnv::new().await;
    env.create(beacon(true)).await;
    let ops = Ops::new(env.admin.clone());
    assert_eq!(
        refusal(ops.poll(&env.namespace, "app").await.unwrap_err()).0,
        RefusalCode::Suspended
    );
    let stored = ops.beacon(&env.namespace, "app").await.unwrap();
    assert!(
        !stored
            .annotations()
            .contains_key("reconcile.fluxcd.io/requestedAt")
    );
}

#[tokio::test]
async fn audit_reads_history_passages_approvals_and_aborts() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    let mut staging = gate(&env, "staging", gate_spec(&[], false)).await;
    bundles_in_order(&env, &["b1"]).await;
    // History names a Passage that retention has already collected.
    staging.status = Some(GateStatus {
        history: vec![GateOccupant {
            bundle: "b0".into(),
            digest: "sha256:0".into(),
            passage: "staging-collected".into(),
            entered_at: hecate_types::Time("2026-08-01T00:00:00Z".parse().unwrap()),
            actor: "controller".into(),
            verified: None,
        }],
        ..GateStatus::default()
    });
    env.write_status(&staging).await;
    passage(
        &env,
        "staging-failed",
        "staging",
        "b1",
        PassagePhase::Failed,
    )
    .await;
    let ops = Ops::new(env.admin.clone());
    ops.approve(ns, "b1", "staging", "carol").await.unwrap();
    let promoted = ops.promote(ns, "staging", "b1", "bob").await.unwrap();
    ops.abort(ns, &promoted.name_any(), "alice").await.unwrap();

    let entries = ops.audit(ns).await.unwrap();
    let kinds: Vec<(String, String)> = entries
        .iter()
        .map(|e| (format!("{:?}", e.kind), e.actor.clone()))
        .collect();
    assert_eq!(entries.len(), 5, "{kinds:?}");
    let has = |kind: hecate_ops::AuditKind, actor: &str| {
        entries.iter().any(|e| e.kind == kind && e.actor == actor)
    };
    assert!(
        has(hecate_ops::AuditKind::Crossed, "controller"),
        "{kinds:?}"
    );
    assert!(has(hecate_ops::AuditKind::Refused, ""), "{kinds:?}");
    assert!(has(hecate_ops::AuditKind::Approved, "carol"), "{kinds:?}");
    assert!(has(hecate_ops::AuditKind::Running, "bob"), "{kinds:?}");
    assert!(has(hecate_ops::AuditKind::Aborted, "alice"), "{kinds:?}");
    assert_eq!(
        entries.last().map(|e| e.passage.as_str()),
        Some("staging-collected"),
        "oldest last"
    );
}

/// AC-157 end to end: a person may roll back and retry. staging holds b2; b1 is older
/// and a crossing of it failed here before (`status.blocked`), so an automatic Gate
/// would never cross it again — but a person may: promote opens a Passage for b1,
/// stored in the API server with the Gate's steps and the person as its actor.
#[tokio::test]
async fn ac157_a_person_may_roll_back_to_a_bundle_that_failed_here() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    let mut staging = gate(&env, "staging", gate_spec(&[], false)).await;
    let created = bundles_in_order(&env, &["b1", "b2"]).await;
    let mut b1 = created[0].clone();
    b1.status = Some(hecate_types::BundleStatus {
        blocked: vec![hecate_types::GateCrossing {
            gate: "staging".into(),
            passage: "staging-1".into(),
            at: now(),
            actor: String::new(),
            reason: "flux-wait: the cluster said no".into(),
        }],
        ..Default::default()
    });
    env.write_status(&b1).await;
    passage(&env, "staging-1", "staging", "b1", PassagePhase::Failed).await;
    passage(&env, "staging-2", "staging", "b2", PassagePhase::Succeeded).await;
    let occupant = GateOccupant {
        bundle: "b2".into(),
        digest: String::new(),
        passage: "staging-2".into(),
        entered_at: now(),
        actor: String::new(),
        verified: None,
    };
    staging.status = Some(GateStatus {
        current: Some(occupant.clone()),
        history: vec![occupant],
        ..GateStatus::default()
    });
    env.write_status(&staging).await;

    let ops = Ops::new(env.admin.clone());
    let opened = ops.promote(ns, "staging", "b1", "olaf").await.unwrap();
    let stored = ops.passage(ns, &opened.name_any()).await.unwrap();
    assert_eq!(
        (
            stored.spec.gate.as_str(),
            stored.spec.bundle.as_str(),
            stored.spec.actor.as_str()
        ),
        ("staging", "b1", "olaf")
    );
    let steps: Vec<&str> = stored.spec.steps.iter().map(|s| s.uses.as_str()).collect();
    assert_eq!(steps, ["git-push", "flux-wait"]);
    assert_eq!(
        passage_count(&env).await,
        3,
        "a new Passage, nothing replaced"
    );
    assert_eq!(
        ops.gate(ns, "staging").await.unwrap().current_bundle(),
        Some("b2"),
        "b2 holds the Gate until the crossing lands"
    );
}

/// Rollback by hand (DECISION 139): staging holds b2 (staging-2), having held b1.
/// Without a target it goes back to b1 through a new Passage that names the crossing it
/// undoes; one crossing at a time still holds; a Gate that holds nothing, or a Bundle
/// it never verified, is refused with its own code and nothing is created.
#[tokio::test]
async fn a_rollback_by_hand_crosses_the_earlier_bundle_again() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    let mut staging = gate(&env, "staging", gate_spec(&[], false)).await;
    gate(&env, "empty", gate_spec(&[], false)).await;
    bundles_in_order(&env, &["b1", "b2"]).await;
    passage(&env, "staging-1", "staging", "b1", PassagePhase::Succeeded).await;
    passage(&env, "staging-2", "staging", "b2", PassagePhase::Succeeded).await;
    let occupant = |bundle: &str, passage: &str| GateOccupant {
        bundle: bundle.into(),
        digest: String::new(),
        passage: passage.into(),
        entered_at: now(),
        actor: "olaf".into(),
        verified: None,
    };
    staging.status = Some(GateStatus {
        current: Some(occupant("b2", "staging-2")),
        history: vec![occupant("b2", "staging-2"), occupant("b1", "staging-1")],
        ..GateStatus::default()
    });
    env.write_status(&staging).await;
    let ops = Ops::new(env.admin.clone());

    let refused = [
        (
            ops.rollback(ns, "empty", None, "olaf").await.unwrap_err(),
            RefusalCode::NothingToRollBackTo,
            "rollback refused: Gate empty holds no Bundle yet, so there is nothing to roll back",
        ),
        (
            ops.rollback(ns, "staging", Some("b9"), "olaf")
                .await
                .unwrap_err(),
            RefusalCode::NotVerifiedHere,
            "rollback refused: Gate staging never held b9: a rollback goes back only to a Bundle the Gate verified before",
        ),
        (
            ops.rollback(ns, "staging", None, "").await.unwrap_err(),
            RefusalCode::NoActor,
            "rollback refused: no actor: a rollback must record who asked for it",
        ),
    ];
    for (error, code, message) in refused {
        assert_eq!(refusal(error), (code, message.to_string()));
    }
    assert!(
        ops.rollback(ns, "ghost", None, "olaf")
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert_eq!(passage_count(&env).await, 2, "refusals create nothing");

    let opened = ops.rollback(ns, "staging", None, "olaf").await.unwrap();
    let rolled = hecate_ops::RolledBack::from(&opened);
    assert_eq!(
        (
            rolled.gate.as_str(),
            rolled.bundle.as_str(),
            rolled.passage.as_str(),
            rolled.actor.as_str(),
            rolled.rollback_of.as_str()
        ),
        ("staging", "b1", "staging-3", "olaf", "staging-2")
    );
    let stored = ops.passage(ns, "staging-3").await.unwrap();
    assert_eq!(
        stored
            .annotations()
            .get("hecate.dev/rollback-of")
            .map(String::as_str),
        Some("staging-2")
    );
    let steps: Vec<&str> = stored.spec.steps.iter().map(|s| s.uses.as_str()).collect();
    assert_eq!(steps, ["git-push", "flux-wait"], "the Gate's steps, copied");

    // The rollback is crossing: a second one waits, as a promotion would.
    let again = ops
        .rollback(ns, "staging", Some("b2"), "olaf")
        .await
        .unwrap_err();
    assert_eq!(
        refusal(again),
        (
            RefusalCode::AlreadyCrossing,
            "rollback refused: Passage staging-3 is already crossing b1".to_string()
        )
    );
}
