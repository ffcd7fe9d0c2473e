//! Whether a Gate is at rest once it stands where ops' [`standing`] put it: the
//! controller's own question (how soon to look again), beside the decision it acts on.
//!
//! [`standing`]: hecate_ops::rules::standing

use hecate_ops::rules::standing::Standing;
use hecate_types::Health;

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

#[cfg(test)]
mod tests {
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
}
