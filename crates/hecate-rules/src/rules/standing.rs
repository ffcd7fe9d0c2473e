//! Where a Gate stands, judged once (issue 51): what it does next — keep watching a
//! crossing, open one, roll back — or what it waits for, and the `Ready` condition
//! that says so (spec controller.md §2.7).
//!
//! The controller acts on [`next_move`] and writes [`ready`]; Explain and promote
//! judge with the same pieces — [`Queue`] (what is new work and what only a rollback
//! would take), the windows, the automatic rule — in the same order, so a Gate's
//! condition, `hecate explain` and `hecate promote` give one answer. The table test
//! in `tests/standing.rs` holds them to it (DECISION 152).
//!
//! Deliberately unlike the reference: windows hold new work whether it would cross
//! by itself or when asked (a manual Gate inside a deny window is `WindowClosed`, as
//! promote refuses it), and a manual Gate without steps cannot open what it offers
//! (`PassageFailed`, as promote refuses `NoSteps`). Older Bundles are "could be
//! rolled back to", never "ready to cross".

use hecate_types::wellknown::gate_reason;
use hecate_types::{Bundle, Gate, Passage};
use jiff::Timestamp;
use kube::ResourceExt as _;

use super::change;
use super::eligibility::{self, AutoNext, Candidate, Queue};
use super::gate::Obstacle;
use super::rollback::Automatic;
use super::window;
use crate::model::Remedy;

/// The Gate's next move.
#[derive(Debug, PartialEq)]
pub enum Decision<'a> {
    /// Open a Passage for this Bundle.
    Open(&'a Bundle),
    /// Open a rollback crossing this Bundle again, undoing the Passage `undoing`
    /// ([`super::rollback::automatic`]).
    RollBack {
        /// The Bundle to go back to.
        bundle: &'a Bundle,
        /// The Passage whose crossing it undoes.
        undoing: String,
        /// Why, in words.
        why: String,
    },
    /// Open a catch-up crossing of the Bundle the Gate holds, to the targets that
    /// joined after its rollout (DECISION 164).
    CatchUp {
        /// The Bundle the Gate holds.
        bundle: &'a Bundle,
        /// The rollout it completes: the crossing the Gate holds.
        rollout: String,
        /// The targets.
        targets: Vec<String>,
        /// Why, in words: for the Event.
        why: String,
    },
    /// Nothing to open: where the Gate stands.
    Stand(Standing),
}

/// What is due besides new work, judged by ops from the Gate's finished crossings:
/// an automatic rollback ([`super::rollback::automatic`]) and a catch-up
/// ([`super::rollout::view::catch_up`], with the occupant's Bundle).
#[derive(Debug, Default, PartialEq)]
pub struct Due<'a> {
    /// What automatic rollback says of the newest finished crossing.
    pub rollback: Option<Automatic<'a>>,
    /// The catch-up crossing due, and the Bundle it crosses.
    pub catch_up: Option<(&'a Bundle, super::rollout::view::CatchUp)>,
}

/// Where a Gate stands once it has done what it decided — what its `Ready` condition
/// reports ([`ready`]). Opening a Passage ends in [`Standing::Crossing`] or
/// [`Standing::CannotOpen`].
#[derive(Debug, PartialEq)]
pub enum Standing {
    /// A Passage is under way: watch it.
    Crossing {
        /// The Passage.
        passage: String,
        /// What it is doing, for the Ready message.
        message: String,
    },
    /// The Gate cannot open the Passage it would: it has no steps ([`Obstacle::NoSteps`]),
    /// or the API server refused the Passage. Why.
    CannotOpen(String),
    /// Nothing to do now, or nothing without a person asking.
    Idle(String),
    /// New work waits for the Gate's windows.
    WindowClosed {
        /// Why, and until when if known.
        message: String,
        /// When the windows next change, if known.
        reopens: Option<Timestamp>,
    },
    /// The newest eligible Bundle already failed here, or its verification said no
    /// here: an automatic Gate stopped (automation never retries a failure), a manual
    /// one offers it only to someone who asks knowingly.
    CrossingFailed(String),
}

/// Decides the Gate's next move. `obstacle` is what ops'
/// [`obstacle`](super::gate::obstacle) found (only [`Obstacle::NoSteps`]
/// lets a reconcile get this far: a Gate without steps still records, assesses and
/// publishes its queue, but opens nothing), `active` its running Passage, `candidates`
/// every admitted Bundle judged by [`eligibility::evaluate`], `bundles` the
/// namespace's Bundles (to find the current occupant; a deleted one counts as none).
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
    let current = gate
        .current_bundle()
        .and_then(|current| bundles.iter().find(|b| b.name_any() == current));
    let queue = Queue::of(candidates, current);
    // The windows hold new work, asked for or automatic: what promote would refuse
    // now is never said to wait for a request.
    if !queue.ahead.is_empty() {
        let windows = window::judge(&gate.spec.windows, now);
        if !windows.allowed {
            return Decision::Stand(Standing::WindowClosed {
                message: windows.reason_with_until(),
                reopens: windows.next_change,
            });
        }
    }
    if !gate.spec.auto {
        return Decision::Stand(manual(&name, &namespace, obstacle, &queue, candidates));
    }
    let standing = match eligibility::auto_next(&name, candidates, current) {
        AutoNext::Cross(next) if obstacle == Some(&Obstacle::NoSteps) => {
            Standing::CannotOpen(format!(
                "cannot cross {}: the Gate has no passage steps; add spec.passage.steps",
                next.name_any()
            ))
        }
        AutoNext::Cross(next) => return Decision::Open(next),
        AutoNext::FailedHere(newest) => Standing::CrossingFailed(format!(
            "the crossing of {} failed: {}; automatic crossings never retry a failure. To try again: {}",
            newest.name_any(),
            failure_reason(newest, &name),
            Remedy::Promote {
                gate: name.clone(),
                bundle: newest.name_any(),
            }
            .fix(&namespace)
        )),
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

/// A Gate that crosses only when asked, its windows open or nothing new: what a
/// person may ask for, in the words promote's refusals use.
fn manual(
    name: &str,
    namespace: &str,
    obstacle: Option<&Obstacle>,
    queue: &Queue<'_>,
    candidates: &[Candidate<'_>],
) -> Standing {
    if let Some(failed) = queue.failed_here(name) {
        return Standing::CrossingFailed(format!(
            "{}; crossing it again must be requested, e.g. {}",
            failure_here(failed, name),
            Remedy::Promote {
                gate: name.into(),
                bundle: failed.name_any(),
            }
            .fix(namespace)
        ));
    }
    match queue.ahead.first() {
        Some(_) if obstacle == Some(&Obstacle::NoSteps) => Standing::CannotOpen(format!(
            "{} eligible, but the Gate has no passage steps: a crossing would have nothing to run; add spec.passage.steps",
            bundles_count(queue.ahead.len())
        )),
        Some(newest) => Standing::Idle(format!(
            "{} eligible; crossing must be requested, e.g. {}",
            bundles_count(queue.ahead.len()),
            Remedy::Promote {
                gate: name.into(),
                bundle: newest.name_any(),
            }
            .fix(namespace)
        )),
        None => match eligibility::waiting_on(candidates) {
            Some(waiting) => Standing::Idle(waiting),
            None if !queue.older.is_empty() => Standing::Idle(format!(
                "nothing newer than the current Bundle; {}",
                could_be_rolled_back_to(queue.older.len())
            )),
            None => Standing::Idle("nothing is eligible".into()),
        },
    }
}

/// The Gate's next move, given what ops judged of its newest finished crossing
/// (`automatic`, [`super::rollback::automatic`]): a rollback that is due comes before
/// anything else — unless the Gate has no steps or its windows are closed, as for any
/// crossing —; one that will not happen is said when nothing else moves, and never
/// holds back a newer Bundle an automatic Gate would cross. Without either, [`decide`].
pub fn next_move<'a>(
    gate: &Gate,
    obstacle: Option<&Obstacle>,
    active: Option<&Passage>,
    candidates: &[Candidate<'a>],
    bundles: &'a [Bundle],
    due: Due<'a>,
    now: Timestamp,
) -> Decision<'a> {
    let Due { rollback, catch_up } = due;
    let usual = || {
        let usual = decide(gate, obstacle, active, candidates, bundles, now);
        match catch_up {
            Some((bundle, due)) => catching_up(gate, obstacle, usual, bundle, due, now),
            None => usual,
        }
    };
    let (bundle, undoing, why) = match rollback {
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
    if let Some(held) = held(gate, obstacle, &why, now) {
        return Decision::Stand(held);
    }
    Decision::RollBack {
        bundle,
        undoing,
        why,
    }
}

/// What holds a crossing the Gate would open by itself, for `why`: no steps to run,
/// or windows closed — as for any crossing.
fn held(gate: &Gate, obstacle: Option<&Obstacle>, why: &str, now: Timestamp) -> Option<Standing> {
    if obstacle == Some(&Obstacle::NoSteps) {
        return Some(Standing::CannotOpen(format!(
            "{why}, and the Gate has no passage steps; add spec.passage.steps"
        )));
    }
    let windows = window::judge(&gate.spec.windows, now);
    (!windows.allowed).then(|| Standing::WindowClosed {
        message: format!("{why} once a window opens: {}", windows.reason_with_until()),
        reopens: windows.next_change,
    })
}

/// `usual` with a catch-up due (DECISION 164): a crossing opened or under way goes
/// first (a whole rollout reaches the new targets itself); otherwise the catch-up
/// opens — unless the Gate has no steps or its windows are closed, as for any
/// crossing.
fn catching_up<'a>(
    gate: &Gate,
    obstacle: Option<&Obstacle>,
    usual: Decision<'a>,
    bundle: &'a Bundle,
    due: super::rollout::view::CatchUp,
    now: Timestamp,
) -> Decision<'a> {
    if !matches!(
        usual,
        Decision::Stand(
            Standing::Idle(_) | Standing::CrossingFailed(_) | Standing::WindowClosed { .. }
        )
    ) {
        return usual;
    }
    let why = format!(
        "{} joined after {}'s rollout of {}: bringing {} to it",
        super::rollout::listed(&due.targets),
        gate.name_any(),
        bundle.name_any(),
        if due.targets.len() == 1 { "it" } else { "them" },
    );
    if let Some(held) = held(gate, obstacle, &why, now) {
        return Decision::Stand(held);
    }
    Decision::CatchUp {
        bundle,
        rollout: due.rollout,
        targets: due.targets,
        why,
    }
}

/// What a running Passage is doing: held by the change gate (with its risk and
/// blockers) when its evidence verdict says so; across a Gate's targets, where its
/// rollout stands — halted, with what a person may do —; otherwise in progress.
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
        None => match active.status.as_ref().and_then(|s| s.rollout.as_ref()) {
            // The controller's own words for where the rollout stands, written with
            // the record each round.
            Some(rollout) if rollout.phase == hecate_types::RolloutPhase::Halted => {
                let namespace = active.namespace().unwrap_or_default();
                // Which targets count as failed is the record's reading, as Explain's.
                let failed = super::rollout::recorded(&active.spec.bundle, rollout).failed_names();
                let retry = Remedy::RetryTargets {
                    passage: name.clone(),
                    targets: failed.clone(),
                };
                let accept = Remedy::AcceptFailures {
                    passage: name.clone(),
                    targets: failed.clone(),
                };
                let roll_back = Remedy::RollbackTargets {
                    gate: active.spec.gate.clone(),
                    passage: name.clone(),
                    targets: failed,
                };
                format!(
                    "{name}'s rollout {}; a person decides: {}, {}, or {}",
                    rollout.message,
                    retry.fix(&namespace),
                    accept.fix(&namespace),
                    roll_back.fix(&namespace)
                )
            }
            Some(rollout) if !rollout.message.is_empty() => {
                format!("{name} is rolling out: {}", rollout.message)
            }
            _ => format!("{name} is in progress"),
        },
    }
}

/// Why `bundle`'s crossing of `gate` is not one to take again unasked, in words:
/// "b2 did not cross here before: …" or "b2 crossed here and verification said no: …".
pub fn failure_here(bundle: &Bundle, gate: &str) -> String {
    let name = bundle.name_any();
    match bundle.failed_verification(gate) {
        Some(_) => format!(
            "{name} crossed here and verification said no: {}",
            failure_reason(bundle, gate)
        ),
        None => format!(
            "{name} did not cross here before: {}",
            failure_reason(bundle, gate)
        ),
    }
}

/// The reason recorded on `bundle` for its failure through `gate`.
fn failure_reason<'a>(bundle: &'a Bundle, gate: &str) -> &'a str {
    bundle
        .status
        .as_ref()
        .and_then(|s| {
            s.blocked
                .iter()
                .chain(&s.unverified)
                .find(|c| c.gate == gate)
        })
        .map(|failure| failure.reason.as_str())
        .filter(|reason| !reason.is_empty())
        .unwrap_or("no reason recorded")
}

/// "1 older Bundle could be rolled back to by hand".
pub fn could_be_rolled_back_to(older: usize) -> String {
    if older == 1 {
        "1 older Bundle could be rolled back to by hand".into()
    } else {
        format!("{older} older Bundles could be rolled back to by hand")
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

/// A Gate's `Ready` condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ready {
    /// Whether it is `True`.
    pub ready: bool,
    /// Its reason, one of [`gate_reason`]'s.
    pub reason: &'static str,
    /// Its message.
    pub message: String,
}

impl Ready {
    /// A condition of `reason`, `True` when `ready`.
    pub fn new(ready: bool, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            ready,
            reason,
            message: message.into(),
        }
    }
}

/// Why a Gate's newest successful crossing is not verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unverified {
    /// Its verification has not decided yet.
    Verifying {
        /// Where it stands.
        message: String,
        /// When it looks next (for a soak, when the soak ends): the Gate wakes then.
        next_look: Option<Timestamp>,
    },
    /// Its verification said no: why. Final for that crossing.
    Failed(String),
}

/// The condition of a Gate that stands at `standing`. `unverified` is why its newest
/// successful crossing is not verified, if it is not: that comes first, and the Gate is
/// not ready until a crossing is.
pub fn ready(standing: &Standing, unverified: Option<&Unverified>) -> Ready {
    match unverified {
        Some(Unverified::Verifying { message, .. }) => {
            return Ready::new(false, gate_reason::VERIFYING, message);
        }
        Some(Unverified::Failed(why)) => {
            return Ready::new(false, gate_reason::VERIFICATION_FAILED, why);
        }
        None => {}
    }
    match standing {
        Standing::Crossing { message, .. } => Ready::new(true, gate_reason::CROSSING, message),
        Standing::CannotOpen(why) => Ready::new(true, gate_reason::PASSAGE_FAILED, why),
        Standing::Idle(message) => Ready::new(true, gate_reason::IDLE, message),
        Standing::WindowClosed { message, .. } => {
            Ready::new(true, gate_reason::WINDOW_CLOSED, message)
        }
        Standing::CrossingFailed(message) => {
            Ready::new(true, gate_reason::CROSSING_FAILED, message)
        }
    }
}
