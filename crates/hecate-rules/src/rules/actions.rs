//! When approve, abort and poll are refused: pure judgements over what
//! `hecate_ops::Ops` fetched, each rule written once. (Promote's own judgements live in
//! [`super::promotion`], which shares the actor and admission rules from here.)

use hecate_types::{Beacon, Bundle, Gate, Passage, Rejection, limits};
use kube::ResourceExt as _;

use super::approval::{self, Asked};
use super::refusal::{Refusal, RefusalCode};
use super::{rollback, rollout};
use crate::model::{Person, Remedy};

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
/// withdrawn by the one who gave it go first; no other is ever dropped — the records
/// policy refuses anything else from a person (DECISION 148).
pub fn make_room(rejections: &mut Vec<Rejection>) {
    while rejections.len() >= limits::MAX_APPROVALS {
        match rejections
            .iter()
            .position(|r| r.is_withdrawn() && r.withdrawn_by == r.actor)
        {
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

/// What a person may ask of a rollout under way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RolloutAsk {
    /// Cross its failed targets again.
    Retry,
    /// Accept the failures that halted it.
    Accept,
}

/// Whether `passage` may be asked `ask` (with `reason`, for an acceptance): a
/// rollout under way whose record shows a failed target (a retry) or a halt (an
/// acceptance), with room for another request. The controller carries it out by
/// `rules::rollout::carry_out`, judging the record as it is then.
pub fn judge_rollout_ask(passage: &Passage, ask: RolloutAsk, reason: &str) -> Result<(), Refusal> {
    use hecate_types::limits::{MAX_REASON_CHARS, MAX_ROLLOUT_REQUESTS};
    judge_abort(passage)?;
    let name = passage.name_any();
    let Some(record) = passage.status.as_ref().and_then(|s| s.rollout.as_ref()) else {
        return Err(Refusal::new(
            RefusalCode::NotHalted,
            format!(
                "Passage {name} crosses one place, not a Gate's targets: there is no rollout to {}",
                match ask {
                    RolloutAsk::Retry => "retry",
                    RolloutAsk::Accept => "accept failures of",
                }
            ),
        ));
    };
    let asked = passage.spec.rollout.clone().unwrap_or_default();
    let (count, what) = match ask {
        RolloutAsk::Retry => (asked.retries.len(), "retries"),
        RolloutAsk::Accept => (asked.acceptances.len(), "acceptances"),
    };
    if count >= MAX_ROLLOUT_REQUESTS {
        return Err(Refusal::new(
            RefusalCode::TooLarge,
            format!(
                "Passage {name} holds {count} {what}, the most it keeps; cross the Gate again instead"
            ),
        ));
    }
    match ask {
        RolloutAsk::Retry => {
            let failed = record.targets.iter().any(|t| {
                t.departed_at.is_none()
                    && matches!(
                        t.phase,
                        hecate_types::TargetPhase::Failed | hecate_types::TargetPhase::Aborted
                    )
            });
            if !failed {
                return Err(Refusal::new(
                    RefusalCode::NothingFailed,
                    format!("no target of Passage {name}'s rollout has failed: nothing to retry"),
                ));
            }
        }
        RolloutAsk::Accept => {
            if record.phase != hecate_types::RolloutPhase::Halted {
                return Err(Refusal::new(
                    RefusalCode::NotHalted,
                    format!(
                        "Passage {name}'s rollout is {}, not halted: there are no failures to accept",
                        record.phase.as_str()
                    ),
                ));
            }
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(Refusal::new(
                    RefusalCode::NoReason,
                    "say why the failures are accepted: the reason is kept on the record",
                ));
            }
            let chars = reason.chars().count();
            if chars > MAX_REASON_CHARS {
                return Err(Refusal::new(
                    RefusalCode::NoReason,
                    format!(
                        "the reason is {chars} characters; the record keeps at most {MAX_REASON_CHARS}"
                    ),
                ));
            }
        }
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

/// What a rollback of a Gate by hand would do, once judged: cross `bundle` again,
/// undoing the crossing recorded by the Passage `undoing`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RollbackPlan {
    /// The Bundle to cross again.
    pub bundle: String,
    /// The Passage whose crossing it undoes: the Gate's current occupant's, or — for
    /// a rollback of some targets — the rollout's that reached them.
    pub undoing: String,
    /// The targets it crosses back, when not the whole Gate (DECISION 163).
    pub targets: Vec<String>,
}

/// Where a rollback of `gate` by hand goes: `to`, when named — a Bundle the Gate held
/// before (its current occupant or its history) whose verification there did not say
/// no — or else the newest verified earlier occupant ([`rollback::target`], among
/// `bundles`, which only that case reads). Refused when the Gate holds nothing (there
/// is no crossing to undo) or has nothing to go back to.
pub fn judge_rollback(
    gate: &Gate,
    bundles: &[Bundle],
    to: Option<&str>,
) -> Result<RollbackPlan, Refusal> {
    let gate_name = gate.name_any();
    let Some(undone) = rollback::undone_by_hand(gate) else {
        return Err(Refusal::new(
            RefusalCode::NothingToRollBackTo,
            format!("Gate {gate_name} holds no Bundle yet, so there is nothing to roll back"),
        ));
    };
    let plan = |bundle: String| RollbackPlan {
        bundle,
        undoing: undone.passage.clone(),
        targets: Vec::new(),
    };
    let Some(to) = to else {
        return rollback::target(gate, bundles, &undone.bundle)
            .map(|target| plan(target.name_any()))
            .map_err(|no| Refusal::new(RefusalCode::NothingToRollBackTo, no.to_string()));
    };
    let held: Vec<_> = gate
        .status
        .iter()
        .flat_map(|s| s.current.iter().chain(&s.history))
        .filter(|o| o.bundle == to)
        .collect();
    if held.is_empty() {
        return Err(Refusal::new(
            RefusalCode::NotVerifiedHere,
            format!(
                "Gate {gate_name} never held {to}: a rollback goes back only to a Bundle the Gate verified before"
            ),
        ));
    }
    if !held.iter().any(|o| rollback::may_return_to(gate, o)) {
        let why = if held.iter().all(|o| o.verified == Some(false)) {
            "failed its verification in"
        } else {
            "was never verified in"
        };
        return Err(Refusal::new(
            RefusalCode::NotVerifiedHere,
            format!(
                "{to} {why} {gate_name}: a rollback goes back only to a Bundle the Gate verified before"
            ),
        ));
    }
    Ok(plan(to.to_string()))
}

/// Where a rollback of some of `gate`'s targets goes (DECISION 163): those `asked`
/// of its newest rollout (from `passages`, the Gate's, newest first), finished, back
/// to what they ran before it — the Gate's newest verified occupant other than the
/// rollout's Bundle ([`rollback::target`], among `bundles`). Refused while the rollout
/// is under way (halted included: stop it first), when the Gate has not rolled out to
/// targets, when the targets asked were not reached, and when there is nothing to go
/// back to.
pub fn judge_rollback_targets<'a>(
    gate: &Gate,
    passages: impl IntoIterator<Item = &'a Passage>,
    bundles: impl IntoIterator<Item = &'a Bundle>,
    asked: &rollout::RollBack,
) -> Result<RollbackPlan, Refusal> {
    let gate_name = gate.name_any();
    let namespace = gate.namespace().unwrap_or_default();
    let found = rollout::view::latest(passages);
    let Some((passage, record)) =
        found.and_then(|p| p.status.as_ref()?.rollout.as_ref().map(|r| (p, r)))
    else {
        return Err(Refusal::new(
            RefusalCode::InvalidTargets,
            format!(
                "Gate {gate_name} has not rolled out to targets, so there are none to roll back; {}",
                Remedy::Rollback {
                    gate: gate_name.clone()
                }
                .fix(&namespace)
            ),
        ));
    };
    let name = passage.name_any();
    if !passage.is_terminal() {
        return Err(Refusal::new(
            RefusalCode::AlreadyCrossing,
            format!(
                "{name}'s rollout is under way; stop it first ({}), then roll its targets back",
                Remedy::Abort {
                    passage: name.clone()
                }
                .fix(&namespace)
            ),
        ));
    }
    let targets = rollout::rollback_targets(record, asked).map_err(|refusal| {
        let code = match refusal {
            rollout::ActionRefusal::NothingFailed { .. } => RefusalCode::NothingFailed,
            rollout::ActionRefusal::NotReached { .. }
            | rollout::ActionRefusal::TooManyNames { .. } => RefusalCode::InvalidTargets,
            _ => RefusalCode::NothingToRollBackTo,
        };
        Refusal::new(code, format!("{name}: {refusal}"))
    })?;
    let bundle = rollback::target(gate, bundles, &passage.spec.bundle)
        .map_err(|no| Refusal::new(RefusalCode::NothingToRollBackTo, no.to_string()))?;
    Ok(RollbackPlan {
        bundle: bundle.name_any(),
        undoing: name,
        targets,
    })
}

#[cfg(test)]
mod tests {
    use hecate_types::{
        Admission, BeaconSpec, BundleOrigin, BundleSpec, GateOccupant, GateSpec, GateStatus,
        PassagePhase, PassageSpec, PassageStatus, Time,
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

    fn occupant(bundle: &str, passage: &str, verified: Option<bool>) -> GateOccupant {
        GateOccupant {
            bundle: bundle.into(),
            digest: String::new(),
            passage: passage.into(),
            entered_at: Time("2026-08-01T00:00:00Z".parse().expect("a time")),
            actor: "olaf".into(),
            verified,
        }
    }

    /// staging, holding b3 (staging-3), having held b3, b2 (verified), b1 (not).
    fn rolled_gate() -> Gate {
        let mut gate = Gate::new("staging", GateSpec::default());
        gate.status = Some(GateStatus {
            current: Some(occupant("b3", "staging-3", None)),
            history: vec![
                occupant("b3", "staging-3", None),
                occupant("b2", "staging-2", Some(true)),
                occupant("b1", "staging-1", Some(false)),
            ],
            ..GateStatus::default()
        });
        gate
    }

    fn bundles(names: &[&str]) -> Vec<Bundle> {
        names
            .iter()
            .map(|name| Bundle::new(name, BundleSpec::default()))
            .collect()
    }

    #[test]
    fn a_rollback_goes_back_to_the_newest_earlier_good_bundle() {
        let plan = judge_rollback(&rolled_gate(), &bundles(&["b1", "b2", "b3"]), None);
        assert_eq!(
            plan,
            Ok(RollbackPlan {
                bundle: "b2".into(),
                undoing: "staging-3".into(),
                targets: Vec::new(),
            })
        );
    }

    /// staging-3's rollout of b3 across eu-1 (crossed) and eu-2 (failed), in `phase`,
    /// while the Gate still holds b2.
    fn rollout_of_b3(phase: PassagePhase) -> (Gate, Passage) {
        let mut gate = Gate::new("staging", GateSpec::default());
        gate.metadata.namespace = Some("shop".into());
        gate.status = Some(GateStatus {
            current: Some(occupant("b2", "staging-2", None)),
            history: vec![occupant("b2", "staging-2", None)],
            ..GateStatus::default()
        });
        let target = |name: &str, phase| hecate_types::TargetStatus {
            name: name.into(),
            phase,
            ..hecate_types::TargetStatus::default()
        };
        let mut passage = Passage::new(
            "staging-3",
            PassageSpec {
                gate: "staging".into(),
                bundle: "b3".into(),
                ..PassageSpec::default()
            },
        );
        passage.status = Some(PassageStatus {
            phase: Some(phase),
            rollout: Some(hecate_types::RolloutStatus {
                targets: vec![
                    target("eu-1", hecate_types::TargetPhase::Succeeded),
                    target("eu-2", hecate_types::TargetPhase::Failed),
                ],
                ..hecate_types::RolloutStatus::default()
            }),
            ..PassageStatus::default()
        });
        (gate, passage)
    }

    #[test]
    fn a_rollback_of_some_targets_takes_them_back_to_what_they_ran_before_the_rollout() {
        use rollout::RollBack;
        let (gate, aborted) = rollout_of_b3(PassagePhase::Aborted);
        let all = bundles(&["b2", "b3"]);
        let plan = |targets: &[&str]| RollbackPlan {
            bundle: "b2".into(),
            undoing: "staging-3".into(),
            targets: targets.iter().map(|t| t.to_string()).collect(),
        };
        let judge = |passages: &[Passage], asked: &RollBack| {
            judge_rollback_targets(&gate, passages, &all, asked).map_err(|r| r.code)
        };
        let only_aborted = [aborted.clone()];
        assert_eq!(judge(&only_aborted, &RollBack::Failed), Ok(plan(&["eu-2"])));
        assert_eq!(
            judge(&only_aborted, &RollBack::All),
            Ok(plan(&["eu-1", "eu-2"]))
        );
        assert_eq!(
            judge(&only_aborted, &RollBack::parse("eu-1")),
            Ok(plan(&["eu-1"]))
        );
        assert_eq!(
            judge(&only_aborted, &RollBack::parse("eu-1,ap-1")),
            Err(RefusalCode::InvalidTargets)
        );

        // A crossing of some targets since is not the rollout: the rollout stays the
        // one rolled back.
        let mut since = aborted.clone();
        since.metadata.name = Some("staging-4".into());
        since.spec.targets = vec!["eu-2".into()];
        since.spec.bundle = "b2".into();
        assert_eq!(
            judge(&[since, aborted.clone()], &RollBack::Failed),
            Ok(plan(&["eu-2"]))
        );

        // Under way, halted or not: stop it first, and say how.
        let (_, running) = rollout_of_b3(PassagePhase::Running);
        let refusal = judge_rollback_targets(&gate, &[running], &all, &RollBack::Failed)
            .expect_err("refused");
        assert_eq!(refusal.code, RefusalCode::AlreadyCrossing);
        assert!(
            refusal.reason.contains("hecate abort staging-3 -n shop"),
            "{}",
            refusal.reason
        );
        // A Gate that never rolled out to targets.
        assert_eq!(
            judge(&[], &RollBack::Failed),
            Err(RefusalCode::InvalidTargets)
        );
        // Nothing failed to roll back.
        let mut crossed = aborted.clone();
        if let Some(record) = crossed.status.as_mut().and_then(|s| s.rollout.as_mut()) {
            record.targets.truncate(1);
        }
        assert_eq!(
            judge(&[crossed], &RollBack::Failed),
            Err(RefusalCode::NothingFailed)
        );
        // Nothing earlier to go back to.
        let lonely =
            judge_rollback_targets(&gate, &only_aborted, &bundles(&["b3"]), &RollBack::All);
        assert_eq!(
            lonely.map_err(|r| r.code),
            Err(RefusalCode::NothingToRollBackTo)
        );
    }

    #[test]
    fn a_rollback_named_goes_where_it_is_told_if_the_gate_verified_it() {
        let gate = rolled_gate();
        for to in ["b2", "b3"] {
            assert_eq!(
                judge_rollback(&gate, &[], Some(to)).map(|p| (p.bundle, p.undoing)),
                Ok((to.to_string(), "staging-3".to_string())),
                "{to}"
            );
        }
        let failed = judge_rollback(&gate, &[], Some("b1")).err();
        assert_eq!(
            failed,
            Some(Refusal::new(
                RefusalCode::NotVerifiedHere,
                "b1 failed its verification in staging: a rollback goes back only to a Bundle the Gate verified before"
            ))
        );
        let never = judge_rollback(&gate, &[], Some("b9")).err();
        assert_eq!(
            never,
            Some(Refusal::new(
                RefusalCode::NotVerifiedHere,
                "Gate staging never held b9: a rollback goes back only to a Bundle the Gate verified before"
            ))
        );
        // On a Gate that verifies, a Bundle held but never verified is no place to go
        // back to: the same test as the target chosen (rules::rollback::may_return_to).
        let mut verifying = gate;
        verifying.spec.verify = vec![hecate_types::Verification {
            uses: "soak".into(),
            with: None,
        }];
        assert_eq!(
            judge_rollback(&verifying, &[], Some("b3")).err(),
            Some(Refusal::new(
                RefusalCode::NotVerifiedHere,
                "b3 was never verified in staging: a rollback goes back only to a Bundle the Gate verified before"
            ))
        );
        assert!(judge_rollback(&verifying, &[], Some("b2")).is_ok());
    }

    #[test]
    fn a_rollback_needs_something_to_undo_and_somewhere_to_go() {
        let empty = Gate::new("staging", GateSpec::default());
        assert_eq!(
            judge_rollback(&empty, &[], None).err(),
            Some(Refusal::new(
                RefusalCode::NothingToRollBackTo,
                "Gate staging holds no Bundle yet, so there is nothing to roll back"
            ))
        );
        assert_eq!(
            code(judge_rollback(&empty, &[], Some("b2")).map(|_| ())),
            Some(RefusalCode::NothingToRollBackTo)
        );
        let mut first = rolled_gate();
        if let Some(status) = first.status.as_mut() {
            status.history.truncate(1);
        }
        assert_eq!(
            judge_rollback(&first, &bundles(&["b3"]), None).err(),
            Some(Refusal::new(
                RefusalCode::NothingToRollBackTo,
                "staging has no earlier verified Bundle to roll back to"
            ))
        );
        assert_eq!(
            judge_rollback(&rolled_gate(), &bundles(&["b3"]), None).err(),
            Some(Refusal::new(
                RefusalCode::NothingToRollBackTo,
                "staging would roll back to b2, which no longer exists"
            ))
        );
    }
}
