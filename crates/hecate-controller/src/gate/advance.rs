//! What a Gate does next, once its crossings are recorded: keep watching a crossing
//! under way, open a new one, or say what it is waiting for (spec controller.md §2.7).
//!
//! Pure: the eligibility judgement, the windows and the auto-crossing rule all come
//! from `hecate_ops::rules`, the same code `hecate explain` and `hecate promote` use;
//! this module only puts them in the controller's order and words.

use hecate_ops::model::Remedy;
use hecate_ops::rules::change;
use hecate_ops::rules::eligibility::{self, AutoNext, Candidate};
use hecate_ops::rules::gate::Obstacle;
use hecate_ops::rules::rollback::Automatic;
use hecate_ops::rules::window;
use hecate_types::{Bundle, Gate, Health, Passage};
use jiff::Timestamp;
use kube::ResourceExt as _;

/// The Gate's next move.
#[derive(Debug, PartialEq)]
pub enum Decision<'a> {
    /// Open a Passage for this Bundle.
    Open(&'a Bundle),
    /// Open a rollback crossing this Bundle again, undoing the Passage `undoing`
    /// (ops' [`rollback::automatic`]).
    RollBack {
        /// The Bundle to go back to.
        bundle: &'a Bundle,
        /// The Passage whose crossing it undoes.
        undoing: String,
        /// Why, in words.
        why: String,
    },
    /// Nothing to open: where the Gate stands.
    Stand(Standing),
}

/// Where a Gate stands once it has done what it decided — what its `Ready` condition
/// reports ([`super::ready::ready`]). Opening a Passage ends in [`Standing::Crossing`]
/// or [`Standing::CannotOpen`].
#[derive(Debug, PartialEq)]
pub enum Standing {
    /// A Passage is under way: watch it.
    Crossing {
        /// The Passage.
        passage: String,
        /// What it is doing, for the Ready message.
        message: String,
    },
    /// An automatic Gate could not open the Passage it meant to: it has no steps
    /// (ops' [`Obstacle::NoSteps`]), or the API server refused the Passage. Why.
    CannotOpen(String),
    /// Nothing to do now, or nothing without a person asking.
    Idle(String),
    /// An automatic Gate outside its windows; eligible Bundles wait.
    WindowClosed {
        /// Why, and until when if known.
        message: String,
        /// When the windows next change, if known.
        reopens: Option<Timestamp>,
    },
    /// An automatic Gate that stopped because its newest eligible Bundle already
    /// failed here (automation never retries a failure).
    CrossingFailed(String),
}

/// Whether a Gate is at rest (DECISION 131): it stands idle, behind a closed window or
/// after a failed crossing, nothing waits for its verification, and its health —
/// Healthy, or NotApplicable with nothing to check — comes from checks a watch
/// `followed`. Then nothing about it changes but by an event that wakes it: a failing
/// object would turn Degraded by time alone, a crossing moves, a verifier polls.
pub fn at_rest(
    standing: &Standing,
    verifying: bool,
    health: Option<Health>,
    followed: bool,
) -> bool {
    followed
        && !verifying
        && matches!(
            standing,
            Standing::Idle(_) | Standing::WindowClosed { .. } | Standing::CrossingFailed(_)
        )
        && health.is_none_or(|health| matches!(health, Health::Healthy | Health::NotApplicable))
}

/// Decides the Gate's next move. `obstacle` is what ops'
/// [`obstacle_given`](hecate_ops::rules::gate::obstacle_given) found
/// (only [`Obstacle::NoSteps`] lets a reconcile get this far: a Gate without steps
/// still records, assesses and publishes its queue, but opens nothing), `active` its
/// running Passage, `candidates` every admitted Bundle judged by
/// [`eligibility::evaluate`], `bundles` the namespace's Bundles (to find the current
/// occupant; a deleted one counts as none).
pub fn decide<'a>(
    gate: &Gate,
    obstacle: Option<&Obstacle>,
    active: Option<&Passage>,
    candidates: &[Candidate<'a>],
    bundles: &'a [Bundle],
    now: Timestamp,
) -> Decision<'a> {
    let name = gate.name_any();
    let namespace = gate.namespace().unwrap_or_default();
    if let Some(active) = active {
        return Decision::Stand(Standing::Crossing {
            passage: active.name_any(),
            message: crossing_message(active),
        });
    }
    let eligible = eligibility::eligible(candidates);
    if !gate.spec.auto {
        return Decision::Stand(Standing::Idle(match eligible.first() {
            None => waiting(candidates),
            Some(newest) => format!(
                "{} eligible; crossing must be requested, e.g. {}",
                bundles_count(eligible.len()),
                Remedy::Promote {
                    gate: name,
                    bundle: newest.name_any(),
                }
                .fix(&namespace)
            ),
        }));
    }
    let windows = window::judge(&gate.spec.windows, now);
    if !windows.allowed {
        return Decision::Stand(Standing::WindowClosed {
            message: windows.reason_with_until(),
            reopens: windows.next_change,
        });
    }
    let current = gate
        .current_bundle()
        .and_then(|current| bundles.iter().find(|b| b.name_any() == current));
    let standing = match eligibility::auto_next(&name, candidates, current) {
        AutoNext::Cross(next) if obstacle == Some(&Obstacle::NoSteps) => {
            Standing::CannotOpen(format!(
                "cannot cross {}: the Gate has no passage steps; add spec.passage.steps",
                next.name_any()
            ))
        }
        AutoNext::Cross(next) => return Decision::Open(next),
        AutoNext::FailedHere(newest) => {
            let reason = newest
                .status
                .as_ref()
                .and_then(|s| {
                    s.blocked
                        .iter()
                        .chain(&s.unverified)
                        .find(|c| c.gate == name)
                })
                .map(|failure| failure.reason.as_str())
                .filter(|reason| !reason.is_empty())
                .unwrap_or("no reason recorded");
            Standing::CrossingFailed(format!(
                "the crossing of {} failed: {reason}; automatic crossings never retry a failure. To try again: {}",
                newest.name_any(),
                Remedy::Promote {
                    gate: name,
                    bundle: newest.name_any(),
                }
                .fix(&namespace)
            ))
        }
        AutoNext::NothingNewer { held_back: None } => {
            Standing::Idle("nothing newer than the current Bundle".into())
        }
        AutoNext::NothingNewer {
            held_back: Some(why),
        } => Standing::Idle(format!("nothing newer can cross yet: {why}")),
        AutoNext::NoneEligible => Standing::Idle(waiting(candidates)),
    };
    Decision::Stand(standing)
}

/// The Gate's next move, given what ops judged of its newest finished crossing
/// (`automatic`, [`rollback::automatic`](hecate_ops::rules::rollback::automatic)): a
/// rollback that is due comes before anything else — unless the Gate has no steps or
/// its windows are closed, as for any crossing —; one that will not happen is said
/// when nothing else moves, and never holds back a newer Bundle an automatic Gate would
/// cross. Without either, [`decide`].
pub fn next_move<'a>(
    gate: &Gate,
    obstacle: Option<&Obstacle>,
    active: Option<&Passage>,
    candidates: &[Candidate<'a>],
    bundles: &'a [Bundle],
    automatic: Option<Automatic<'a>>,
    now: Timestamp,
) -> Decision<'a> {
    let usual = || decide(gate, obstacle, active, candidates, bundles, now);
    let (bundle, undoing, why) = match automatic {
        None => return usual(),
        Some(Automatic::Stopped(why)) => {
            return match usual() {
                Decision::Stand(Standing::Idle(_) | Standing::CrossingFailed(_)) => {
                    Decision::Stand(Standing::CrossingFailed(why))
                }
                other => other,
            };
        }
        Some(Automatic::Open {
            target,
            undoing,
            why,
        }) => (target, undoing, why),
    };
    if obstacle == Some(&Obstacle::NoSteps) {
        return Decision::Stand(Standing::CannotOpen(format!(
            "{why}, and the Gate has no passage steps; add spec.passage.steps"
        )));
    }
    let windows = window::judge(&gate.spec.windows, now);
    if !windows.allowed {
        return Decision::Stand(Standing::WindowClosed {
            message: format!("{why} once a window opens: {}", windows.reason_with_until()),
            reopens: windows.next_change,
        });
    }
    Decision::RollBack {
        bundle,
        undoing,
        why,
    }
}

/// What a running Passage is doing: held by the change gate (with its risk and
/// blockers) when its evidence verdict says so, otherwise in progress.
pub fn crossing_message(active: &Passage) -> String {
    let name = active.name_any();
    let held = active
        .status
        .as_ref()
        .and_then(|s| s.evidence.as_ref())
        .filter(|e| change::evidence_holds(e));
    match held {
        Some(evidence) => {
            let risk = evidence
                .risk
                .map(|r| format!(" (risk {r})"))
                .unwrap_or_default();
            let blockers = if evidence.blockers.is_empty() {
                String::new()
            } else {
                format!(": {}", evidence.blockers.join("; "))
            };
            format!("{name} is held by the change gate{risk}{blockers}")
        }
        None => format!("{name} is in progress"),
    }
}

/// What a Gate with nothing eligible waits on.
fn waiting(candidates: &[Candidate<'_>]) -> String {
    eligibility::waiting_on(candidates).unwrap_or_else(|| "nothing is eligible".into())
}

fn bundles_count(n: usize) -> String {
    if n == 1 {
        "1 Bundle is".into()
    } else {
        format!("{n} Bundles are")
    }
}

#[cfg(test)]
mod tests {
    use hecate_types::{
        Admission, Artifact, BundleOrigin, BundleSpec, GateSpec, PassageTemplate, Step,
    };

    use super::*;

    #[test]
    fn a_gate_rests_only_when_nothing_but_an_event_can_change_it() {
        let idle = || Standing::Idle("nothing newer".into());
        let crossing = Standing::Crossing {
            passage: "dev-1".into(),
            message: String::new(),
        };
        let closed = Standing::WindowClosed {
            message: String::new(),
            reopens: None,
        };
        let healthy = Some(Health::Healthy);
        // (standing, verifying, health, followed) → at rest
        let table: [(&Standing, bool, Option<Health>, bool, bool); 10] = [
            (&idle(), false, healthy, true, true),
            (&idle(), false, Some(Health::NotApplicable), true, true),
            (&idle(), false, None, true, true),
            (&closed, false, healthy, true, true),
            (
                &Standing::CrossingFailed("failed".into()),
                false,
                healthy,
                true,
                true,
            ),
            (&idle(), false, healthy, false, false),
            (&idle(), true, healthy, true, false),
            (&idle(), false, Some(Health::Progressing), true, false),
            (&idle(), false, Some(Health::Degraded), true, false),
            (&crossing, false, healthy, true, false),
        ];
        for (standing, verifying, health, followed, rests) in table {
            assert_eq!(
                at_rest(standing, verifying, health, followed),
                rests,
                "{standing:?}, verifying {verifying}, {health:?}, followed {followed}"
            );
        }
        assert!(
            !at_rest(
                &Standing::CannotOpen("refused".into()),
                false,
                healthy,
                true
            ),
            "a refused Passage is tried again at the tick"
        );
    }

    fn gate(auto: bool, steps: &[&str]) -> Gate {
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

    fn bundle(name: &str) -> Bundle {
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
        let bundles = [bundle("b1")];
        let bare = gate(true, &[]);
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
        let stepped = gate(true, &["git-clone"]);
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
        let bundles = [bundle("b1"), bundle("b2")];
        let stepped = gate(true, &["git-clone"]);
        let candidates = eligibility::evaluate(&stepped, &bundles, None, now);
        let open = || {
            Some(Automatic::Open {
                target: &bundles[0],
                undoing: "dev-2".into(),
                why: "b2 was not verified (dev-2): rolling back to b1".into(),
            })
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
        let stopped = Some(Automatic::Stopped("it was itself a rollback".into()));
        assert_eq!(
            next_move(&stepped, None, None, &candidates, &bundles, stopped, now),
            decide(&stepped, None, None, &candidates, &bundles, now)
        );
        // And is said when nothing else moves.
        let manual = gate(false, &["git-clone"]);
        let stopped = Some(Automatic::Stopped("it was itself a rollback".into()));
        assert_eq!(
            next_move(&manual, None, None, &[], &bundles, stopped, now),
            Decision::Stand(Standing::CrossingFailed("it was itself a rollback".into()))
        );
    }
}
