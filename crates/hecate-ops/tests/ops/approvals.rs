//! Approval policies against the API server (DECISION 137): approvals recorded with
//! the approver's groups, distinct people, the promoter and upstream promoters left
//! out, expiry at the instant of ops' clock, rejection and its withdrawal, and two
//! approvals at once recorded as two people.

use hecate_ops::{Error, Ops, Person, RefusalCode, Uncounted};
use hecate_testenv::TestEnv;
use hecate_types::Bundle;
use jiff::{SignedDuration, Timestamp};
use pretty_assertions::assert_eq;

use crate::fixtures::*;

const RM: &str = hecate_testenv::RELEASE_MANAGERS;

fn t0() -> Timestamp {
    "2026-08-11T12:00:00Z".parse().unwrap()
}

fn release_manager(name: &str) -> Person {
    Person {
        name: name.into(),
        groups: vec![RM.into()],
    }
}

/// Production after staging asking two release managers, approvals lasting a day,
/// never whoever promoted the Bundle through staging; b1 cleared there by bob.
async fn world(env: &TestEnv) {
    gate(env, "production", release_managers_spec("24h")).await;
    cleared_by(env, "b1", &["staging"], "bob").await;
}

fn refusal(error: Error) -> (RefusalCode, String) {
    match &error {
        Error::Refused { code, .. } => (*code, error.to_string()),
        other => panic!("expected a refusal, got {other}"),
    }
}

#[tokio::test]
async fn two_release_managers_let_it_cross_and_nobody_else_counts() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    world(&env).await;
    let ops = Ops::new(env.admin.clone()).with_clock(t0);

    // bob promoted it through staging: refused, and nothing recorded.
    let (code, message) = refusal(
        ops.approve(ns, "b1", "production", release_manager("bob"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, RefusalCode::NotAnApprover);
    assert!(
        message.contains(Uncounted::UpstreamPromoter.words()),
        "{message}"
    );
    // alice is in no group the policy names.
    let (code, _) = refusal(
        ops.approve(ns, "b1", "production", "alice")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, RefusalCode::NotAnApprover);
    let b1: Bundle = ops.bundle(ns, "b1").await.unwrap();
    assert!(b1.status.as_ref().unwrap().approvals.is_empty());

    let first = ops
        .approve(ns, "b1", "production", release_manager("carol"))
        .await
        .unwrap();
    assert!(first.recorded);
    assert_eq!(
        first.progress.as_ref().unwrap().summary,
        "1 of 2 from release-managers; carol approved"
    );
    // The same person twice counts once, and says so.
    let again = ops
        .approve(ns, "b1", "production", release_manager("carol"))
        .await
        .unwrap();
    assert!(!again.recorded);
    let (code, message) = refusal(
        ops.promote(ns, "production", "b1", "erin")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, RefusalCode::AwaitingApproval);
    assert!(
        message.contains("1 of 2 from release-managers"),
        "{message}"
    );
    let b1: Bundle = ops.bundle(ns, "b1").await.unwrap();
    let status = b1.status.as_ref().unwrap();
    assert_eq!(status.approvals.len(), 1);
    assert_eq!(status.approvals[0].groups, [RM]);
    assert!(
        status.approved_for.is_empty(),
        "the reference's record waits for the policy to hold"
    );

    let second = ops
        .approve(ns, "b1", "production", release_manager("dave"))
        .await
        .unwrap();
    assert_eq!(
        second.progress.as_ref().unwrap().summary,
        "approved; carol, dave approved"
    );
    let b1: Bundle = ops.bundle(ns, "b1").await.unwrap();
    let completed = b1.approval_for("production").unwrap();
    assert_eq!(completed.actor, "dave", "the approval that completed it");

    // Neither approver may promote it: without their own, it is 1 of 2.
    let (code, message) = refusal(
        ops.promote(ns, "production", "b1", "carol")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, RefusalCode::SelfApproved);
    assert!(
        message.contains("carol approved it and cannot also promote it"),
        "{message}"
    );
    let passage = ops.promote(ns, "production", "b1", "erin").await.unwrap();
    assert_eq!(passage.spec.actor, "erin");
}

#[tokio::test]
async fn an_approval_stops_counting_at_the_instant_it_expires() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    world(&env).await;
    let at = |t: Timestamp| Ops::new(env.admin.clone()).with_clock(move || t);
    at(t0())
        .approve(ns, "b1", "production", release_manager("carol"))
        .await
        .unwrap();
    let later = t0() + SignedDuration::from_hours(1);
    at(later)
        .approve(ns, "b1", "production", release_manager("dave"))
        .await
        .unwrap();
    let expiry = t0() + SignedDuration::from_hours(24);
    let explained = |t| async move { at(t).explain(ns, "production").await.unwrap() };
    let before = explained(expiry - SignedDuration::from_nanos(1)).await;
    assert_eq!(before.eligible, ["b1"]);
    let after = explained(expiry).await;
    assert!(after.eligible.is_empty());
    let waiting = &after.waiting[0];
    assert_eq!(
        waiting.approvals.as_ref().unwrap().summary,
        "1 of 2 from release-managers; dave approved; carol's approval does not count (it expired)"
    );
    // carol approves afresh: her expired approval is replaced, not added to.
    at(expiry)
        .approve(ns, "b1", "production", release_manager("carol"))
        .await
        .unwrap();
    let b1: Bundle = at(expiry).bundle(ns, "b1").await.unwrap();
    assert_eq!(b1.status.as_ref().unwrap().approvals.len(), 2);
    assert_eq!(explained(expiry).await.eligible, ["b1"]);
}

#[tokio::test]
async fn a_rejection_holds_until_someone_who_may_withdraws_it() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    world(&env).await;
    let ops = Ops::new(env.admin.clone()).with_clock(t0);
    for who in ["carol", "dave"] {
        ops.approve(ns, "b1", "production", release_manager(who))
            .await
            .unwrap();
    }
    let (code, _) = refusal(
        ops.reject(ns, "b1", "production", "alice", "  ")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, RefusalCode::NoReason);
    let rejected = ops
        .reject(
            ns,
            "b1",
            "production",
            "alice",
            "the migration is not reversible",
        )
        .await
        .unwrap();
    assert!(rejected.recorded);
    let (code, message) = refusal(
        ops.promote(ns, "production", "b1", "erin")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, RefusalCode::Rejected);
    assert!(
        message.contains("rejected by alice: the migration is not reversible"),
        "{message}"
    );
    let explained = ops.explain(ns, "production").await.unwrap();
    assert_eq!(
        explained.blockers[0].kind,
        hecate_ops::BlockerKind::Rejected
    );

    // bob is neither the one who rejected it nor named by the policy.
    let (code, _) = refusal(
        ops.withdraw_rejection(ns, "b1", "production", "bob")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, RefusalCode::MayNotWithdraw);
    // A release manager may lift anyone's.
    let withdrawn = ops
        .withdraw_rejection(ns, "b1", "production", release_manager("dave"))
        .await
        .unwrap();
    assert_eq!(withdrawn.rejections_of, ["alice"]);
    assert_eq!(
        ops.explain(ns, "production").await.unwrap().eligible,
        ["b1"]
    );
    // Nothing stands now: withdrawing again changes nothing.
    let again = ops
        .withdraw_rejection(ns, "b1", "production", "alice")
        .await
        .unwrap();
    assert!(again.rejections_of.is_empty());

    // The audit trail keeps all of it.
    let kinds: Vec<(hecate_ops::AuditKind, String)> = ops
        .audit(ns)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.kind, e.actor))
        .collect();
    for expected in [
        (hecate_ops::AuditKind::Approved, "carol".to_string()),
        (hecate_ops::AuditKind::Approved, "dave".to_string()),
        (hecate_ops::AuditKind::Rejected, "alice".to_string()),
        (hecate_ops::AuditKind::Withdrawn, "dave".to_string()),
    ] {
        assert!(kinds.contains(&expected), "{expected:?} in {kinds:?}");
    }
}

#[tokio::test]
async fn two_approvals_at_once_count_as_two_people() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    world(&env).await;
    let ops = Ops::new(env.admin.clone()).with_clock(t0);
    let (carol, dave) = futures::join!(
        ops.approve(ns, "b1", "production", release_manager("carol")),
        ops.approve(ns, "b1", "production", release_manager("dave")),
    );
    assert!(carol.unwrap().recorded && dave.unwrap().recorded);
    let b1: Bundle = ops.bundle(ns, "b1").await.unwrap();
    let mut approvers: Vec<&str> = b1
        .status
        .as_ref()
        .unwrap()
        .approvals
        .iter()
        .map(|a| a.actor.as_str())
        .collect();
    approvers.sort_unstable();
    assert_eq!(approvers, ["carol", "dave"]);
    assert_eq!(
        ops.explain(ns, "production").await.unwrap().eligible,
        ["b1"]
    );
    let queue = ops
        .approval_queue(ns, &release_manager("carol"))
        .await
        .unwrap();
    assert!(
        queue.is_empty(),
        "nothing waits once the policy holds: {queue:?}"
    );
}
