//! When approve, abort and poll are refused: pure judgements over what
//! [`crate::Ops`] fetched, each rule written once. (Promote's own judgements live in
//! [`super::promotion`], which shares the actor and admission rules from here.)

use hecate_types::{Beacon, Bundle, Gate, Passage};
use kube::ResourceExt as _;

use super::refusal::{Refusal, RefusalCode};

/// Every write records who asked for it (`what`: "a crossing", "an approval", …):
/// refused without an actor.
pub fn judge_actor(actor: &str, what: &str) -> Result<(), Refusal> {
    if actor.is_empty() {
        return Err(Refusal::new(
            RefusalCode::NoActor,
            format!("no actor: {what} must record who asked for it"),
        ));
    }
    Ok(())
}

/// Whether `bundle` may be approved for `gate`: only when the Gate admits Bundles of
/// its Beacon (an approval that could never be used is a mistake worth naming).
pub fn judge_approval(gate: &Gate, bundle: &Bundle) -> Result<(), Refusal> {
    if gate.admission_for(&bundle.spec.beacon).is_none() {
        return Err(not_admitted(gate, bundle));
    }
    Ok(())
}

/// `gate` admits no Bundles of `bundle`'s Beacon: the refusal approve and promote give.
pub(crate) fn not_admitted(gate: &Gate, bundle: &Bundle) -> Refusal {
    Refusal::new(
        RefusalCode::NotAdmitted,
        format!(
            "Gate {} does not admit Bundles from Beacon {}",
            gate.name_any(),
            bundle.spec.beacon
        ),
    )
}

/// Whether `passage` may be asked to stop: not once it has finished.
pub fn judge_abort(passage: &Passage) -> Result<(), Refusal> {
    let phase = passage.phase();
    if phase.is_terminal() {
        return Err(Refusal::new(
            RefusalCode::AlreadyFinished,
            format!(
                "Passage {} already finished ({})",
                passage.name_any(),
                phase.as_str()
            ),
        ));
    }
    Ok(())
}

/// Whether `beacon` may be asked to look now: a suspended Beacon would acknowledge the
/// request and look at nothing.
pub fn judge_poll(beacon: &Beacon) -> Result<(), Refusal> {
    if beacon.spec.suspend {
        return Err(Refusal::new(
            RefusalCode::Suspended,
            format!(
                "Beacon {} is suspended, so it would acknowledge this and look at nothing",
                beacon.name_any()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use hecate_types::{
        Admission, BeaconSpec, BundleOrigin, BundleSpec, GateSpec, PassagePhase, PassageSpec,
        PassageStatus,
    };

    use super::*;

    fn code(result: Result<(), Refusal>) -> Option<RefusalCode> {
        result.err().map(|refusal| refusal.code)
    }

    #[test]
    fn an_actor_is_required() {
        assert_eq!(
            code(judge_actor("", "an approval")),
            Some(RefusalCode::NoActor)
        );
        let refusal = judge_actor("", "an abort").err();
        assert_eq!(
            refusal.map(|r| r.reason),
            Some("no actor: an abort must record who asked for it".to_string())
        );
        assert_eq!(code(judge_actor("carol", "an approval")), None);
    }

    #[test]
    fn approvals_are_only_for_gates_that_admit_the_bundle() {
        let gate = Gate::new(
            "staging",
            GateSpec {
                admits: vec![Admission {
                    from: BundleOrigin {
                        beacon: "app".into(),
                    },
                    ..Admission::default()
                }],
                ..GateSpec::default()
            },
        );
        let bundle = |beacon: &str| {
            Bundle::new(
                "b1",
                BundleSpec {
                    beacon: beacon.into(),
                    ..BundleSpec::default()
                },
            )
        };
        assert_eq!(code(judge_approval(&gate, &bundle("app"))), None);
        let refused = judge_approval(&gate, &bundle("other")).err();
        assert_eq!(
            refused.as_ref().map(|r| r.code),
            Some(RefusalCode::NotAdmitted)
        );
        assert_eq!(
            refused.map(|r| r.reason),
            Some("Gate staging does not admit Bundles from Beacon other".to_string())
        );
    }

    #[test]
    fn only_an_unfinished_passage_can_be_aborted() {
        let passage = |phase: Option<PassagePhase>| {
            let mut passage = Passage::new("staging-1", PassageSpec::default());
            passage.status = phase.map(|phase| PassageStatus {
                phase: Some(phase),
                ..PassageStatus::default()
            });
            passage
        };
        assert_eq!(code(judge_abort(&passage(None))), None);
        assert_eq!(
            code(judge_abort(&passage(Some(PassagePhase::Running)))),
            None
        );
        for finished in [
            PassagePhase::Succeeded,
            PassagePhase::Failed,
            PassagePhase::Aborted,
        ] {
            assert_eq!(
                code(judge_abort(&passage(Some(finished)))),
                Some(RefusalCode::AlreadyFinished),
                "{finished:?}"
            );
        }
        assert_eq!(
            judge_abort(&passage(Some(PassagePhase::Succeeded)))
                .err()
                .map(|r| r.reason),
            Some("Passage staging-1 already finished (Succeeded)".to_string())
        );
    }

    #[test]
    fn a_suspended_beacon_is_not_polled() {
        let mut beacon = Beacon::new("app", BeaconSpec::default());
        assert_eq!(code(judge_poll(&beacon)), None);
        beacon.spec.suspend = true;
        assert_eq!(code(judge_poll(&beacon)), Some(RefusalCode::Suspended));
    }
}
