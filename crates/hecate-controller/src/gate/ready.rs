//! What stops a Gate's reconcile before anything is judged, and the `Ready` condition
//! that says so (spec controller.md §2.7). Where a Gate stands otherwise is ops'
//! (`hecate_ops::rules::standing`), and so is the condition that says it.
//!
//! Pure: the reconcile writes the condition, and publishes the Event, these return.

use hecate_ops::rules::gate::Obstacle;
pub use hecate_ops::rules::standing::{Ready, Unverified, ready};
use hecate_types::wellknown::gate_reason;

use crate::events::{self, Kind};

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
/// assesses its health and publishes its queue, and ops' `standing::decide` says
/// it cannot open a Passage (ops' `Standing::CannotOpen`).
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

#[cfg(test)]
mod tests {
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
}
