//! What a Gate rolls back to, and when it does so by itself (DECISION 139).

use hecate_types::{
    GateOccupant, PassagePhase, RollbackPolicy, Time, VerificationPhase, VerificationStatus,
    wellknown,
};
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;

use crate::rules::fixtures::*;
use crate::rules::rollback::{Automatic, NoTarget, automatic, target};

fn occupant(bundle: &str, passage: &str, verified: Option<bool>) -> GateOccupant {
    GateOccupant {
        bundle: bundle.into(),
        digest: String::new(),
        passage: passage.into(),
        entered_at: Time(t0()),
        actor: "bob".into(),
        verified,
    }
}

/// Staging, which verifies, holding `current` after `history` (newest first).
fn staging(history: Vec<GateOccupant>) -> hecate_types::Gate {
    let mut gate = gate("staging");
    gate.spec.verify = vec![hecate_types::Verification {
        uses: "soak".into(),
        with: None,
    }];
    gate.spec.rollback = Some(RollbackPolicy { auto: true });
    let status = gate.status.get_or_insert_with(Default::default);
    status.current = history.first().cloned();
    status.history = history;
    gate
}

#[test]
fn the_target_is_the_newest_verified_occupant_that_is_not_undone() {
    let bundles = [bundle("b1", 0), bundle("b2", 1), bundle("b3", 2)];
    let gate = staging(vec![
        occupant("b3", "staging-3", Some(false)),
        occupant("b2", "staging-2", None),
        occupant("b1", "staging-1", Some(true)),
    ]);
    // b2 was never verified: a Gate that verifies goes back to a verified Bundle only.
    assert_eq!(
        target(&gate, &bundles, "b3").map(|b| b.metadata.name.clone()),
        Ok(Some("b1".into()))
    );

    // Steps that failed leave the verified occupant current: it is crossed again.
    let gate = staging(vec![occupant("b1", "staging-1", Some(true))]);
    assert_eq!(
        target(&gate, &bundles, "b2").map(|b| b.metadata.name.clone()),
        Ok(Some("b1".into()))
    );

    assert_eq!(
        target(&gate, &bundles, "b1"),
        Err(NoTarget::NothingEarlier {
            gate: "staging".into()
        })
    );
    assert_eq!(
        target(&gate, &[], "b2"),
        Err(NoTarget::Gone {
            gate: "staging".into(),
            bundle: "b1".into()
        })
    );
}

#[test]
fn a_gate_that_verifies_nothing_goes_back_to_what_crossed() {
    let mut gate = gate("dev");
    let status = gate.status.get_or_insert_with(Default::default);
    status.current = Some(occupant("b2", "dev-2", None));
    status.history = vec![occupant("b2", "dev-2", None), occupant("b1", "dev-1", None)];
    let bundles = [bundle("b1", 0), bundle("b2", 1)];
    assert_eq!(
        target(&gate, &bundles, "b2").map(|b| b.metadata.name.clone()),
        Ok(Some("b1".into()))
    );
}

fn unverified(name: &str, bundle: &str) -> hecate_types::Passage {
    let mut passage = passage("staging", bundle, Some(PassagePhase::Succeeded), 0);
    passage.metadata.name = Some(name.into());
    passage
        .status
        .get_or_insert_with(Default::default)
        .verification = Some(VerificationStatus {
        phase: VerificationPhase::Failed,
        started_at: None,
        finished_at: None,
        message: "soak verification said no".into(),
        verifiers: vec![],
    });
    passage
}

#[test]
fn a_failure_or_a_no_rolls_back_once_and_a_failed_rollback_stops() {
    let bundles = [bundle("b1", 0), bundle("b2", 1)];
    let gate = staging(vec![
        occupant("b2", "staging-2", Some(false)),
        occupant("b1", "staging-1", Some(true)),
    ]);
    let no = unverified("staging-2", "b2");
    match automatic(&gate, &no, std::slice::from_ref(&no), &bundles) {
        Some(Automatic::Open {
            target,
            undoing,
            why,
        }) => {
            assert_eq!(target.metadata.name.as_deref(), Some("b1"));
            assert_eq!(undoing, "staging-2");
            assert_eq!(why, "b2 was not verified (staging-2): rolling back to b1");
        }
        other => panic!("{other:?}"),
    }

    // Opened already: nothing more.
    let mut rollback = passage("staging", "b1", None, 1);
    rollback.metadata.name = Some("staging-3".into());
    rollback
        .annotations_mut()
        .insert(wellknown::ANNOTATION_ROLLBACK_OF.into(), "staging-2".into());
    assert_eq!(
        automatic(&gate, &no, &[no.clone(), rollback.clone()], &bundles),
        None
    );

    // The rollback itself failed: it stops, and says so.
    rollback.status.get_or_insert_with(Default::default).phase = Some(PassagePhase::Failed);
    match automatic(&gate, &rollback, &[no.clone(), rollback.clone()], &bundles) {
        Some(Automatic::Stopped(why)) => {
            assert!(why.contains("itself a rollback (of staging-2)"), "{why}");
        }
        other => panic!("{other:?}"),
    }

    // Off unless asked for; an abort is a person's decision.
    let mut manual = gate.clone();
    manual.spec.rollback = None;
    assert_eq!(
        automatic(&manual, &no, std::slice::from_ref(&no), &bundles),
        None
    );
    let aborted = passage("staging", "b2", Some(PassagePhase::Aborted), 0);
    assert_eq!(
        automatic(&gate, &aborted, std::slice::from_ref(&aborted), &bundles),
        None
    );
}
