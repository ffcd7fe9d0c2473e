//! Where a Gate stands, judged once (issue 51, DECISION 152): the Gate's `Ready`
//! condition, `hecate explain` and `hecate promote` give one answer for every
//! standing, and the controller's next move is ops' own.

use hecate_types::wellknown::gate_reason;
use hecate_types::{
    Admission, Artifact, Bundle, BundleOrigin, BundleSpec, Gate, GateSpec, Passage, PassagePhase,
    PassageTemplate, Step,
};
use jiff::Timestamp;
use kube::ResourceExt as _;

use crate::model::{BlockerKind, State};
use crate::rules::eligibility;
use crate::rules::explain::explain;
use crate::rules::fixtures::*;
use crate::rules::gate::{self as gate_rule, Obstacle};
use crate::rules::promotion::{self, CrossingKind};
use crate::rules::refusal::RefusalCode;
use crate::rules::rollback::Automatic;
use crate::rules::snapshot::NamespaceSnapshot;
use crate::rules::standing::*;

/// What each surface says of one Gate: the condition the controller writes (its
/// reason; `Open` when it would open a Passage), Explain's state and first blocker,
/// and promote's answer for the newest Bundle a person would be offered.
#[derive(Debug, PartialEq)]
struct Answers {
    ready: &'static str,
    explain: State,
    blocker: Option<BlockerKind>,
    promote: Result<(), RefusalCode>,
}

/// The answers for `gate` over `bundles` and `passages` at `now`; promote is asked
/// for `offered`.
fn answers(gate: &Gate, bundles: &[Bundle], passages: &[Passage], offered: &str) -> Answers {
    let now = t0();
    let snapshot =
        NamespaceSnapshot::new(NS, vec![gate.clone()], bundles.to_vec(), passages.to_vec());
    let explanation = explain(&snapshot, gate, now);
    let active = passages.iter().find(|p| !p.is_terminal());
    let candidates = eligibility::evaluate(gate, bundles, None, now);
    let obstacle = gate_rule::obstacle(gate);
    let ready = match obstacle {
        Some(Obstacle::Suspended) => gate_reason::SUSPENDED,
        Some(Obstacle::InvalidSteps(_)) => gate_reason::INVALID_STEPS,
        _ => match decide(gate, obstacle.as_ref(), active, &candidates, bundles, now) {
            Decision::Open(_) => "Open",
            Decision::RollBack { .. } => "RollBack",
            Decision::CatchUp { .. } => "CatchUp",
            Decision::Stand(standing) => ready(&standing, None).reason,
        },
    };
    let all: Vec<&Passage> = passages.iter().collect();
    let promote = bundles
        .iter()
        .find(|b| b.name_any() == offered)
        .map(|bundle| {
            promotion::judge(gate, bundle, &all, "bob", CrossingKind::Promotion, now)
                .map_err(|refusal| refusal.code)
        })
        .unwrap_or(Ok(()));
    Answers {
        ready,
        explain: explanation.state,
        blocker: explanation.blockers.first().map(|b| b.kind),
        promote,
    }
}

/// Whether the three answers agree: the one invariant every standing keeps.
fn agree(a: &Answers) -> bool {
    use BlockerKind as K;
    let refused = |code| a.promote == Err(code);
    match a.ready {
        gate_reason::SUSPENDED => {
            a.blocker == Some(K::Suspended) && refused(RefusalCode::Suspended)
        }
        gate_reason::CROSSING => {
            a.explain == State::Crossing && refused(RefusalCode::AlreadyCrossing)
        }
        gate_reason::WINDOW_CLOSED => {
            a.explain == State::Blocked
                && a.blocker == Some(K::WindowClosed)
                && refused(RefusalCode::WindowClosed)
        }
        gate_reason::PASSAGE_FAILED => {
            a.explain == State::Blocked
                && a.blocker == Some(K::NoPassage)
                && refused(RefusalCode::NoSteps)
        }
        // Stopped on a failure here: a person may still ask for it again.
        gate_reason::CROSSING_FAILED => {
            matches!(a.explain, State::Failed | State::Blocked)
                && matches!(a.blocker, Some(K::PassageFailed | K::VerificationFailed))
                && a.promote.is_ok()
        }
        "Open" => a.explain == State::Ready && a.promote.is_ok(),
        // Waiting for a request (Explain: ready, a person must ask), for people
        // (approval, rejection, upstream — promote refuses the same), or for nothing.
        gate_reason::IDLE => match a.explain {
            State::Ready => a.blocker == Some(K::Manual) && a.promote.is_ok(),
            State::Blocked => matches!(
                (a.blocker, &a.promote),
                (Some(K::NotApproved), Err(RefusalCode::AwaitingApproval))
                    | (Some(K::Rejected), Err(RefusalCode::Rejected))
                    | (Some(K::Upstream), Err(RefusalCode::UpstreamNotCleared))
            ),
            State::Idle => true,
            _ => false,
        },
        _ => false,
    }
}

/// One standing: what it is, the Gate, its Bundles and Passages, the Bundle promote
/// is asked for, and the answers every surface gives.
type Case = (
    &'static str,
    Gate,
    Vec<Bundle>,
    Vec<Passage>,
    &'static str,
    Answers,
);

fn manual() -> Gate {
    gate("prod")
}

fn automatic() -> Gate {
    let mut gate = gate("prod");
    gate.spec.auto = true;
    gate
}

fn frozen(mut gate: Gate) -> Gate {
    // A deny window all day, every day: t0 is inside it.
    gate.spec.windows = vec![hecate_types::Window {
        deny: true,
        time_zone: "UTC".into(),
        ..window("0 0 * * *", "24h")
    }];
    gate
}

fn stepless(mut gate: Gate) -> Gate {
    gate.spec.passage = None;
    gate
}

fn approval_wanted(mut gate: Gate) -> Gate {
    gate.spec.admits[0].require_approval = true;
    gate
}

fn unverified(mut bundle: Bundle, gate: &str) -> Bundle {
    bundle
        .status
        .get_or_insert_with(Default::default)
        .unverified
        .push(crossing(gate, "error ratio 0.4 is not below 0.01"));
    bundle
}

#[test]
fn the_condition_explain_and_promote_give_one_answer_for_every_standing() {
    let mut suspended = manual();
    suspended.spec.suspend = true;
    let running = passage("prod", "b2", Some(PassagePhase::Running), 1);
    let b1 = || bundle("b1", -10);
    let b2 = || bundle("b2", 0);
    // (what, Gate, Bundles, Passages, Bundle offered, the answers)
    let cases: Vec<Case> = vec![
        (
            "manual, eligible, open",
            manual(),
            vec![b1(), b2()],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::IDLE,
                explain: State::Ready,
                blocker: Some(BlockerKind::Manual),
                promote: Ok(()),
            },
        ),
        (
            // Before: Ready said "Idle: 1 Bundle is eligible; crossing must be
            // requested", while Explain and promote said WindowClosed.
            "manual, inside a deny window",
            frozen(manual()),
            vec![b2()],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::WINDOW_CLOSED,
                explain: State::Blocked,
                blocker: Some(BlockerKind::WindowClosed),
                promote: Err(RefusalCode::WindowClosed),
            },
        ),
        (
            // Before: Idle (DECISION 119's own example) while promote refused NoSteps.
            "manual, no steps",
            stepless(manual()),
            vec![b2()],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::PASSAGE_FAILED,
                explain: State::Blocked,
                blocker: Some(BlockerKind::NoPassage),
                promote: Err(RefusalCode::NoSteps),
            },
        ),
        (
            "manual, only an older Bundle to roll back to",
            with_current(manual(), "b2"),
            vec![b1(), b2()],
            vec![],
            "b1",
            Answers {
                ready: gate_reason::IDLE,
                explain: State::Idle,
                blocker: None,
                promote: Ok(()),
            },
        ),
        (
            // Before: "1 Bundle ready to cross" beside a primary Cross button.
            "manual, the newest said no here, rolled back",
            with_current(manual(), "b1"),
            vec![b1(), unverified(b2(), "prod")],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::CROSSING_FAILED,
                explain: State::Failed,
                blocker: Some(BlockerKind::VerificationFailed),
                promote: Ok(()),
            },
        ),
        (
            "manual, holding the newest cleared, a newer one awaiting approval",
            with_current(approval_wanted(manual()), "b1"),
            vec![
                approved(bundle("b0", -20), "prod", "carol"),
                approved(b1(), "prod", "carol"),
                b2(),
            ],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::IDLE,
                explain: State::Blocked,
                blocker: Some(BlockerKind::NotApproved),
                promote: Err(RefusalCode::AwaitingApproval),
            },
        ),
        (
            "manual, awaiting approval",
            approval_wanted(manual()),
            vec![b2()],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::IDLE,
                explain: State::Blocked,
                blocker: Some(BlockerKind::NotApproved),
                promote: Err(RefusalCode::AwaitingApproval),
            },
        ),
        (
            "automatic, eligible, open",
            automatic(),
            vec![b2()],
            vec![],
            "b2",
            Answers {
                ready: "Open",
                explain: State::Ready,
                blocker: None,
                promote: Ok(()),
            },
        ),
        (
            "automatic, inside a deny window",
            frozen(automatic()),
            vec![b2()],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::WINDOW_CLOSED,
                explain: State::Blocked,
                blocker: Some(BlockerKind::WindowClosed),
                promote: Err(RefusalCode::WindowClosed),
            },
        ),
        (
            // Before: WindowClosed, while Explain said it waits for an approval.
            "automatic, inside a deny window, awaiting approval",
            frozen(approval_wanted(automatic())),
            vec![b2()],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::IDLE,
                explain: State::Blocked,
                blocker: Some(BlockerKind::NotApproved),
                promote: Err(RefusalCode::AwaitingApproval),
            },
        ),
        (
            "automatic, the newest failed here",
            automatic(),
            vec![blocked(b2(), "prod", "aborted")],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::CROSSING_FAILED,
                explain: State::Failed,
                blocker: Some(BlockerKind::PassageFailed),
                promote: Ok(()),
            },
        ),
        (
            "automatic, nothing newer",
            with_current(automatic(), "b2"),
            vec![b1(), b2()],
            vec![],
            "b1",
            Answers {
                ready: gate_reason::IDLE,
                explain: State::Idle,
                blocker: None,
                promote: Ok(()),
            },
        ),
        (
            "crossing",
            manual(),
            vec![b1(), b2()],
            vec![running],
            "b1",
            Answers {
                ready: gate_reason::CROSSING,
                explain: State::Crossing,
                blocker: None,
                promote: Err(RefusalCode::AlreadyCrossing),
            },
        ),
        (
            "suspended",
            suspended,
            vec![b2()],
            vec![],
            "b2",
            Answers {
                ready: gate_reason::SUSPENDED,
                explain: State::Blocked,
                blocker: Some(BlockerKind::Suspended),
                promote: Err(RefusalCode::Suspended),
            },
        ),
    ];
    for (what, gate, bundles, passages, offered, want) in cases {
        let got = answers(&gate, &bundles, &passages, offered);
        assert_eq!(got, want, "{what}");
        assert!(agree(&got), "{what}: the answers disagree: {got:?}");
    }
}

#[test]
fn older_bundles_are_offered_to_roll_back_to_never_as_ready_to_cross() {
    let gate = with_current(manual(), "b3");
    let bundles = vec![bundle("b1", -20), bundle("b2", -10), bundle("b3", 0)];
    let candidates = eligibility::evaluate(&gate, &bundles, None, t0());
    assert_eq!(
        decide(&gate, None, None, &candidates, &bundles, t0()),
        Decision::Stand(Standing::Idle(
            "nothing newer than the current Bundle; 2 older Bundles could be rolled back to by hand"
                .into()
        ))
    );
    let snapshot = NamespaceSnapshot::new(NS, vec![gate.clone()], bundles, vec![]);
    let x = explain(&snapshot, &gate, t0());
    assert_eq!(x.state, State::Idle);
    assert_eq!(
        x.summary,
        "nothing newer than the current Bundle; 2 older Bundles could be rolled back to by hand"
    );
}

#[test]
fn a_bundle_whose_verification_said_no_here_is_said_so_in_the_condition() {
    let gate = with_current(manual(), "b1");
    let bundles = vec![bundle("b1", -10), unverified(bundle("b2", 0), "prod")];
    let candidates = eligibility::evaluate(&gate, &bundles, None, t0());
    assert_eq!(
        decide(&gate, None, None, &candidates, &bundles, t0()),
        Decision::Stand(Standing::CrossingFailed(
            "b2 crossed here and verification said no: error ratio 0.4 is not below 0.01; \
             crossing it again must be requested, e.g. hecate promote prod --bundle b2 -n acme"
                .into()
        ))
    );
}

fn bare_gate(auto: bool, steps: &[&str]) -> Gate {
    let mut gate = Gate::new(
        "dev",
        GateSpec {
            admits: vec![Admission {
                from: BundleOrigin {
                    beacon: "app".into(),
                },
                ..Admission::default()
            }],
            passage: (!steps.is_empty()).then(|| PassageTemplate {
                steps: steps
                    .iter()
                    .map(|uses| Step {
                        uses: (*uses).into(),
                        ..Step::default()
                    })
                    .collect(),
            }),
            auto,
            ..GateSpec::default()
        },
    );
    gate.metadata.namespace = Some("shop".into());
    gate
}

fn plain_bundle(name: &str) -> Bundle {
    let mut bundle = Bundle::new(
        name,
        BundleSpec {
            beacon: "app".into(),
            artifacts: vec![Artifact::default()],
            ..BundleSpec::default()
        },
    );
    bundle.metadata.namespace = Some("shop".into());
    bundle
}

#[test]
fn ac037_an_automatic_gate_without_steps_opens_nothing_and_says_why() {
    let now: Timestamp = "2026-08-10T12:00:00Z".parse().expect("a time");
    let bundles = [plain_bundle("b1")];
    let bare = bare_gate(true, &[]);
    let candidates = eligibility::evaluate(&bare, &bundles, None, now);
    assert_eq!(
        decide(
            &bare,
            Some(&Obstacle::NoSteps),
            None,
            &candidates,
            &bundles,
            now
        ),
        Decision::Stand(Standing::CannotOpen(
            "cannot cross b1: the Gate has no passage steps; add spec.passage.steps".into()
        ))
    );
    let stepped = bare_gate(true, &["git-clone"]);
    let candidates = eligibility::evaluate(&stepped, &bundles, None, now);
    assert_eq!(
        decide(&stepped, None, None, &candidates, &bundles, now),
        Decision::Open(&bundles[0]),
        "the same Gate with steps opens it"
    );
}

#[test]
fn a_due_rollback_comes_first_and_one_that_stopped_holds_nothing_back() {
    let now: Timestamp = "2026-08-10T12:00:00Z".parse().expect("a time");
    let bundles = [plain_bundle("b1"), plain_bundle("b2")];
    let stepped = bare_gate(true, &["git-clone"]);
    let candidates = eligibility::evaluate(&stepped, &bundles, None, now);
    let open = || Due {
        rollback: Some(Automatic::Open {
            target: &bundles[0],
            undoing: "dev-2".into(),
            why: "b2 was not verified (dev-2): rolling back to b1".into(),
        }),
        catch_up: None,
    };
    assert_eq!(
        next_move(&stepped, None, None, &candidates, &bundles, open(), now),
        Decision::RollBack {
            bundle: &bundles[0],
            undoing: "dev-2".into(),
            why: "b2 was not verified (dev-2): rolling back to b1".into(),
        }
    );
    // A rollback meets the windows a crossing meets.
    let mut frozen = stepped.clone();
    frozen.spec.windows = vec![hecate_types::Window {
        schedule: "0 0 * * *".into(),
        duration: "24h".into(),
        time_zone: "UTC".into(),
        deny: true,
    }];
    assert!(matches!(
        next_move(&frozen, None, None, &candidates, &bundles, open(), now),
        Decision::Stand(Standing::WindowClosed { message, .. }) if message.starts_with("b2 was not verified")
    ));
    // One that stopped: the newest Bundle still crosses an automatic Gate.
    let stopped = Due {
        rollback: Some(Automatic::Stopped("it was itself a rollback".into())),
        catch_up: None,
    };
    assert_eq!(
        next_move(&stepped, None, None, &candidates, &bundles, stopped, now),
        decide(&stepped, None, None, &candidates, &bundles, now)
    );
    // And is said when nothing else moves.
    let manual = bare_gate(false, &["git-clone"]);
    let stopped = Due {
        rollback: Some(Automatic::Stopped("it was itself a rollback".into())),
        catch_up: None,
    };
    assert_eq!(
        next_move(&manual, None, None, &[], &bundles, stopped, now),
        Decision::Stand(Standing::CrossingFailed("it was itself a rollback".into()))
    );
}

#[test]
fn a_catch_up_opens_when_nothing_else_would_and_meets_the_windows() {
    use crate::rules::rollout::view::CatchUp;
    let now: Timestamp = "2026-08-10T12:00:00Z".parse().expect("a time");
    let bundles = [plain_bundle("b1"), plain_bundle("b2")];
    let due = || Due {
        rollback: None,
        catch_up: Some((
            &bundles[0],
            CatchUp {
                bundle: "b1".into(),
                rollout: "dev-1".into(),
                targets: vec!["us-2".into()],
            },
        )),
    };
    // A manual Gate with nothing asked of it brings the new target to what it holds.
    let manual = bare_gate(false, &["git-clone"]);
    assert_eq!(
        next_move(&manual, None, None, &[], &bundles, due(), now),
        Decision::CatchUp {
            bundle: &bundles[0],
            rollout: "dev-1".into(),
            targets: vec!["us-2".into()],
            why: "us-2 joined after dev's rollout of b1: bringing it to it".into(),
        }
    );
    // An automatic Gate crossing a newer Bundle reaches us-2 in that rollout.
    let auto = bare_gate(true, &["git-clone"]);
    let candidates = eligibility::evaluate(&auto, &bundles, None, now);
    assert!(matches!(
        next_move(&auto, None, None, &candidates, &bundles, due(), now),
        Decision::Open(_)
    ));
    // Windows and steps hold it as any crossing.
    let mut frozen = manual.clone();
    frozen.spec.windows = vec![hecate_types::Window {
        schedule: "0 0 * * *".into(),
        duration: "24h".into(),
        time_zone: "UTC".into(),
        deny: true,
    }];
    assert!(matches!(
        next_move(&frozen, None, None, &[], &bundles, due(), now),
        Decision::Stand(Standing::WindowClosed { message, .. }) if message.starts_with("us-2 joined after dev's rollout")
    ));
    assert!(matches!(
        next_move(
            &manual,
            Some(&Obstacle::NoSteps),
            None,
            &[],
            &bundles,
            due(),
            now
        ),
        Decision::Stand(Standing::CannotOpen(_))
    ));
}

#[test]
fn every_standing_has_its_reason_and_an_unverified_crossing_comes_first() {
    let reopens: Timestamp = "2026-08-10T18:00:00Z".parse().expect("a time");
    let cases = [
        (
            Standing::Crossing {
                passage: "dev-3".into(),
                message: "dev-3 is in progress".into(),
            },
            gate_reason::CROSSING,
            "dev-3 is in progress",
        ),
        (
            Standing::CannotOpen("could not create Passage dev-3: denied".into()),
            gate_reason::PASSAGE_FAILED,
            "could not create Passage dev-3: denied",
        ),
        (
            Standing::Idle("nothing newer than the current Bundle".into()),
            gate_reason::IDLE,
            "nothing newer than the current Bundle",
        ),
        (
            Standing::WindowClosed {
                message: "outside every window until 18:00".into(),
                reopens: Some(reopens),
            },
            gate_reason::WINDOW_CLOSED,
            "outside every window until 18:00",
        ),
        (
            Standing::CrossingFailed("the crossing of b1 failed: boom".into()),
            gate_reason::CROSSING_FAILED,
            "the crossing of b1 failed: boom",
        ),
    ];
    for (standing, reason, message) in cases {
        assert_eq!(
            ready(&standing, None),
            Ready::new(true, reason, message),
            "{standing:?}"
        );
        // Ready=True whatever the standing — CrossingFailed and PassageFailed too,
        // as the reference has it — until the newest crossing is verified.
        assert_eq!(
            ready(
                &standing,
                Some(&Unverified::Verifying {
                    message: "the canary has not finished".into(),
                    next_look: None,
                })
            ),
            Ready::new(false, gate_reason::VERIFYING, "the canary has not finished"),
            "{standing:?}"
        );
        assert_eq!(
            ready(
                &standing,
                Some(&Unverified::Failed("the canary failed".into()))
            ),
            Ready::new(false, gate_reason::VERIFICATION_FAILED, "the canary failed"),
            "{standing:?}"
        );
    }
}
