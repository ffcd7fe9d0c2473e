//! Spec §9 (AC-117 – AC-119, AC-158), and aborts.

use hecate_types::{
    BundleApproval, GateOccupant, GateStatus, PassagePhase::*, PassageStatus, StepPhase, Time,
};
use jiff::SignedDuration;
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;

use crate::model::AuditKind;
use crate::rules::audit::audit;
use crate::rules::fixtures::*;
use crate::rules::snapshot::NamespaceSnapshot;

fn occupant(bundle: &str, passage: &str, at: jiff::Timestamp) -> GateOccupant {
    GateOccupant {
        bundle: bundle.into(),
        digest: "sha256:abc".into(),
        passage: passage.into(),
        entered_at: Time(at),
        actor: "auto".into(),
        verified: None,
    }
}

fn with_history(name: &str, history: Vec<GateOccupant>) -> hecate_types::Gate {
    let mut g = gate(name);
    g.status = Some(GateStatus {
        history,
        ..GateStatus::default()
    });
    g
}

#[test]
fn ac117_what_was_refused_is_kept() {
    let mut p = with_steps(
        with_message(
            passage("production", "app-1", Some(Failed), 0),
            "a step failed",
        ),
        &[(
            "evidence-gate",
            StepPhase::Failed,
            "NotCompliant",
            "not compliant: segregation-of-duties",
        )],
    );
    p.metadata.name = Some("prod-abc".into());
    p.spec.actor = "someone@example.com".into();
    p.status
        .get_or_insert_with(PassageStatus::default)
        .finished_at = Some(minutes(t0(), 1));
    let entries = audit(&NamespaceSnapshot::new(
        NS,
        vec![gate("production")],
        vec![],
        vec![p],
    ));
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!(e.kind, AuditKind::Refused);
    assert_eq!(e.detail, "not compliant: segregation-of-duties");
    assert_eq!(e.actor, "someone@example.com");
    assert_eq!(e.at, minutes(t0(), 1));
}

#[test]
fn ac118_crossings_whose_detail_aged_out_are_kept() {
    let g = with_history("staging", vec![occupant("app-1", "staging-gone", t0())]);
    let entries = audit(&NamespaceSnapshot::new(NS, vec![g], vec![], vec![]));
    assert_eq!(entries.len(), 1);
    assert_eq!(
        (entries[0].kind, entries[0].digest.as_str()),
        (AuditKind::Crossed, "sha256:abc")
    );
    assert_eq!(entries[0].evidence, None);
}

#[test]
fn ac119_a_crossing_is_reported_once() {
    let g = with_history("staging", vec![occupant("app-1", "staging-1", t0())]);
    let mut p = with_evidence(
        passage("staging", "app-1", Some(Succeeded), 0),
        "approve",
        None,
        &[],
    );
    p.metadata.name = Some("staging-1".into());
    p.status.as_mut().unwrap().evidence.as_mut().unwrap().trail = "t-1".into();
    let entries = audit(&NamespaceSnapshot::new(NS, vec![g], vec![], vec![p]));
    assert_eq!(entries.len(), 1);
    assert_eq!(
        entries[0].evidence.as_ref().map(|e| e.trail.as_str()),
        Some("t-1")
    );
}

#[test]
fn ac158_equal_times_keep_history_before_approvals() {
    let g = with_history("production", vec![occupant("b1", "production-1", t0())]);
    let mut b = bundle("b1", 0);
    b.status
        .get_or_insert_with(Default::default)
        .approved_for
        .push(BundleApproval {
            gate: "production".into(),
            actor: "carol".into(),
            at: Time(t0()),
        });
    let entries = audit(&NamespaceSnapshot::new(NS, vec![g], vec![b], vec![]));
    let kinds: Vec<AuditKind> = entries.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [AuditKind::Crossed, AuditKind::Approved]);
}

#[test]
fn newest_first_with_every_kind() {
    let hour = |h: i64| t0() + SignedDuration::from_hours(h);
    let g = with_history("staging", vec![occupant("b2", "staging-2", hour(-1))]);
    let mut running = passage("staging", "b3", Some(Running), 0);
    running.status.as_mut().unwrap().started_at = Some(Time(hour(2)));
    let mut aborted = with_message(passage("production", "b2", Some(Aborted), 0), "aborted");
    aborted.status.as_mut().unwrap().finished_at = Some(Time(hour(1)));
    aborted
        .annotations_mut()
        .insert("hecate.dev/aborted-by".into(), "bob".into());
    aborted.annotations_mut().insert(
        "hecate.dev/aborted-at".into(),
        "2026-08-11T12:30:00Z".into(),
    );
    let mut b = bundle("b2", 0);
    b.status
        .get_or_insert_with(Default::default)
        .approved_for
        .push(BundleApproval {
            gate: "production".into(),
            actor: "carol".into(),
            at: Time(hour(-3)),
        });
    let entries = audit(&NamespaceSnapshot::new(
        NS,
        vec![g],
        vec![b],
        vec![running, aborted],
    ));
    let got: Vec<(AuditKind, &str, &str)> = entries
        .iter()
        .map(|e| (e.kind, e.gate.as_str(), e.actor.as_str()))
        .collect();
    // An abort is one entry, naming who asked (before: also a "refused" entry for
    // the crossing it ended, #53).
    assert_eq!(
        got,
        [
            (AuditKind::Running, "staging", ""),
            (AuditKind::Aborted, "production", "bob"),
            (AuditKind::Crossed, "staging", "auto"),
            (AuditKind::Approved, "production", "carol"),
        ]
    );
    assert_eq!(entries[1].passage, "production-b2");
    assert_eq!(entries[3].bundle, "b2");
    let json = serde_json::to_value(&entries[3]).unwrap();
    assert_eq!(json["kind"], "approved");
    // One vocabulary: a crossing's entry says how it ended as Passages and Bundles do.
    let outcomes: Vec<Option<&str>> = entries
        .iter()
        .map(|e| e.outcome.map(|o| o.as_str()))
        .collect();
    assert_eq!(outcomes, [Some("running"), None, Some("crossed"), None]);
}

#[test]
fn a_rollback_says_what_it_undid_and_why() {
    use hecate_types::{VerificationPhase, VerificationStatus, wellknown};
    let g = with_history(
        "staging",
        vec![
            occupant("b1", "staging-3", t0() + SignedDuration::from_mins(20)),
            occupant("b2", "staging-2", t0() + SignedDuration::from_mins(10)),
        ],
    );
    let mut said_no = passage(
        "staging",
        "b2",
        Some(hecate_types::PassagePhase::Succeeded),
        5,
    );
    said_no.metadata.name = Some("staging-2".into());
    said_no.status.as_mut().unwrap().verification = Some(VerificationStatus {
        phase: VerificationPhase::Failed,
        started_at: None,
        finished_at: None,
        message: "http verification said no: 503".into(),
        verifiers: vec![],
    });
    let mut rollback = passage(
        "staging",
        "b1",
        Some(hecate_types::PassagePhase::Succeeded),
        15,
    );
    rollback.metadata.name = Some("staging-3".into());
    rollback.spec.actor = wellknown::ACTOR_CONTROLLER.into();
    rollback
        .annotations_mut()
        .insert(wellknown::ANNOTATION_ROLLBACK_OF.into(), "staging-2".into());
    let entries = audit(&NamespaceSnapshot::new(
        NS,
        vec![g],
        vec![],
        vec![said_no, rollback],
    ));
    let undid = entries[0].rollback_of.clone().expect("labelled");
    assert_eq!(entries[0].passage, "staging-3");
    assert_eq!(
        undid,
        crate::model::RollbackOf {
            passage: "staging-2".into(),
            bundle: "b2".into(),
            why: "its verification said no: http verification said no: 503".into(),
            automatic: true,
        }
    );
    assert_eq!(
        undid.words(),
        "rollback of staging-2 (b2): its verification said no: http verification said no: 503"
    );
    assert_eq!(
        entries[1].rollback_of, None,
        "the crossing undone is no rollback"
    );
}
