//! The one condition Hecate writes, `Ready`, with the usual "set condition" rules: the
//! transition time moves only when the status does, the message is bounded.

use hecate_types::limits::truncate;
use hecate_types::{Condition, ConditionStatus, Time, wellknown};
use jiff::Timestamp;

/// The CRD's limit on a condition message, in bytes.
const MAX_MESSAGE: usize = 32 * 1024;

/// Sets the `Ready` condition in `conditions` (replacing an earlier one).
pub fn set_ready(
    conditions: &mut Vec<Condition>,
    ready: bool,
    reason: &str,
    message: &str,
    generation: i64,
    now: Timestamp,
) {
    let status = if ready {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    };
    let previous = conditions
        .iter()
        .position(|c| c.type_ == wellknown::condition::READY)
        .map(|i| conditions.remove(i));
    let last_transition_time = match previous {
        Some(previous) if previous.status == status => previous.last_transition_time,
        _ => Time(now),
    };
    conditions.push(Condition {
        type_: wellknown::condition::READY.into(),
        status,
        observed_generation: generation,
        last_transition_time,
        reason: reason.into(),
        message: truncate(message, MAX_MESSAGE).into(),
    });
}

/// The `Ready` condition, if there is one.
pub fn ready(conditions: &[Condition]) -> Option<&Condition> {
    conditions
        .iter()
        .find(|c| c.type_ == wellknown::condition::READY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transition_time_moves_only_with_the_status() {
        let t0: Timestamp = "2026-08-10T12:00:00Z".parse().expect("a time");
        let t1: Timestamp = "2026-08-10T12:05:00Z".parse().expect("a time");
        let t2: Timestamp = "2026-08-10T12:10:00Z".parse().expect("a time");
        let mut conditions = Vec::new();
        set_ready(&mut conditions, true, "Idle", "nothing to do", 1, t0);
        set_ready(
            &mut conditions,
            true,
            "Crossing",
            "dev-1 is in progress",
            2,
            t1,
        );
        let c = ready(&conditions).expect("Ready");
        assert_eq!(
            (
                c.last_transition_time.0,
                c.reason.as_str(),
                c.observed_generation
            ),
            (t0, "Crossing", 2)
        );
        set_ready(&mut conditions, false, "Suspended", "suspended", 2, t2);
        assert_eq!(conditions.len(), 1);
        assert_eq!(
            ready(&conditions).expect("Ready").last_transition_time.0,
            t2
        );
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let text = "é".repeat(MAX_MESSAGE);
        let cut = truncate(&text, MAX_MESSAGE);
        assert!(cut.len() <= MAX_MESSAGE && cut.len() >= MAX_MESSAGE - 1);
        assert_eq!(truncate("short", 10), "short");
    }
}
