//! When approve, abort and poll are refused: pure judgements over what
//! [`crate::Ops`] fetched, each rule written once. (Promote's own judgements live in
//! [`super::promotion`], which shares the actor and admission rules from here.)

use hecate_types::{Beacon, Bundle, Gate, Passage, Rejection, limits};
use kube::ResourceExt as _;

use super::approval::{self, Asked};
use super::refusal::{Refusal, RefusalCode};
use crate::model::Person;

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

/// Whether `person`'s approval of `bundle` for `gate` would count under the admission's
/// policy: approve refuses one that would not, saying why, rather than record an
/// approval nobody counts.
pub fn judge_policy_approval(
    asked: Asked<'_>,
    gate: &str,
    bundle: &Bundle,
    person: &Person,
) -> Result<(), Refusal> {
    approval::may_count(asked, gate, bundle, person).map_err(|why| {
        Refusal::new(
            RefusalCode::NotAnApprover,
            format!(
                "{}'s approval would not count for {gate}: {}",
                person.name,
                why.words()
            ),
        )
    })
}

/// A rejection's reason, trimmed and cut to [`limits::MAX_REASON_CHARS`] characters:
/// refused when there is none, since a "no" must say why.
pub fn judge_reason(reason: &str) -> Result<String, Refusal> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(Refusal::new(
            RefusalCode::NoReason,
            "no reason: a rejection must say why",
        ));
    }
    Ok(reason.chars().take(limits::MAX_REASON_CHARS).collect())
}

/// Whether `person` may withdraw the rejection holding `bundle` from `gate`: the one
/// who gave it, or someone the admission's policy names.
pub fn judge_withdrawal(
    asked: Asked<'_>,
    gate: &Gate,
    bundle: &Bundle,
    person: &Person,
) -> Result<(), Refusal> {
    let gate_name = gate.name_any();
    if approval::may_withdraw(asked, &gate_name, bundle, person) {
        return Ok(());
    }
    Err(Refusal::new(
        RefusalCode::MayNotWithdraw,
        format!(
            "{} may not withdraw the rejection of {} for {gate_name}: only {} may",
            person.name,
            bundle.name_any(),
            approval::withdrawers(gate, bundle).join(" or ")
        ),
    ))
}

/// Leaves room for one more rejection within [`limits::MAX_APPROVALS`]: the oldest
/// withdrawn ones go first; standing ones are never dropped.
pub fn make_room(rejections: &mut Vec<Rejection>) {
    while rejections.len() >= limits::MAX_APPROVALS {
        match rejections.iter().position(|r| !r.stands()) {
            Some(oldest) => {
                rejections.remove(oldest);
            }
            None => return,
        }
    }
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
