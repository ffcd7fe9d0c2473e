//! What a Gate's `Ready` condition says (spec controller.md §2.7): what stopped its
//! reconcile, or where the Gate stands once it did what it decided, and whether its
//! newest crossing is verified yet.
//!
//! Pure: the reconcile writes the condition, and publishes the Event, these return.

use hecate_ops::rules::gate::Obstacle;
use hecate_types::wellknown::gate_reason;

use super::advance::Standing;
use crate::events::{self, Kind};

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
    fn new(ready: bool, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            ready,
            reason,
            message: message.into(),
        }
    }
}

/// A reconcile that stops before any Bundle is judged: it publishes no queue, opens
/// nothing and is not requeued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    /// The condition it writes.
    pub ready: Ready,
    /// The Event it publishes, with the condition's message as its note.
    pub event: Option<Kind>,
}

/// Whether ops' `obstacle` stops the reconcile: a suspended Gate and one whose steps
/// cannot run do. A Gate with no steps does not: it still records its crossings,
/// assesses its health and publishes its queue, and [`super::advance::decide`] says
/// it cannot open a Passage ([`Standing::CannotOpen`]).
pub fn stop(obstacle: &Obstacle) -> Option<Stop> {
    match obstacle {
        Obstacle::Suspended => Some(Stop {
            ready: Ready::new(
                false,
                gate_reason::SUSPENDED,
                "the Gate is suspended: no crossing starts; one under way goes on",
            ),
            event: None,
        }),
        Obstacle::InvalidSteps(problems) => Some(Stop {
            ready: Ready::new(
                false,
                gate_reason::INVALID_STEPS,
                problems.replace('\n', "; "),
            ),
            event: Some(events::INVALID_STEPS),
        }),
        Obstacle::NoSteps => None,
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
        next_look: Option<jiff::Timestamp>,
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

#[cfg(test)]
mod tests {
    use jiff::Timestamp;

    use super::*;

    #[test]
    fn what_stops_a_reconcile_is_suspension_and_steps_that_cannot_run() {
        let cases = [
            (
                Obstacle::Suspended,
                Some((
                    gate_reason::SUSPENDED,
                    "the Gate is suspended: no crossing starts; one under way goes on",
                    None,
                )),
            ),
            (
                Obstacle::InvalidSteps(
                    "steps[0] (nope): unknown step\nsteps[1] (): no uses".into(),
                ),
                Some((
                    gate_reason::INVALID_STEPS,
                    "steps[0] (nope): unknown step; steps[1] (): no uses",
                    Some(events::INVALID_STEPS),
                )),
            ),
            (Obstacle::NoSteps, None),
        ];
        for (obstacle, want) in cases {
            let want = want.map(|(reason, message, event)| Stop {
                ready: Ready::new(false, reason, message),
                event,
            });
            assert_eq!(stop(&obstacle), want, "{obstacle:?}");
        }
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
}
