//! The `soak` verifier (DECISION 139): a crossing counts as verified only once it has
//! run for `duration` **and** the Gate stayed Healthy throughout. It reads the Gate's
//! own health record (`status.health`: its state and since when), makes no request,
//! and names the instant the soak ends, so the Gate wakes then rather than polling. A
//! health interruption restarts the clock: the soak counts from when the Gate last
//! became Healthy, never from before.

use std::time::Duration;

use futures::future::BoxFuture;
use hecate_ops::rules::verification::{Look, Seen, later, words};
use hecate_types::{Gate, Health};
use jiff::Timestamp;
use serde_json::Value;

use super::{Subject, Verifier, VerifyError};

/// Verifies by time spent healthy.
#[derive(Clone, Copy, Debug, Default)]
pub struct SoakVerifier;

impl SoakVerifier {
    /// The name verifications use.
    pub const NAME: &'static str = hecate_ops::catalogue::Verifier::Soak.name();
}

/// How long a soak lasts, from its `with: {duration}`: the catalogue's reading, which
/// ops judges a Gate by.
pub use hecate_ops::catalogue::verifier::soak_duration as duration;

/// Judges a soak of `length` for a crossing that finished at `started`, by `gate`'s
/// health record at `now`.
pub fn judge(gate: &Gate, length: Duration, started: Timestamp, now: Timestamp) -> Look {
    let health = gate.status.as_ref().and_then(|s| s.health.as_ref());
    let state = health.map_or(Health::NotApplicable, |h| h.status);
    if !matches!(state, Health::Healthy | Health::NotApplicable) {
        // The clock stops when the Gate's health turned; that instant names the
        // interruption, so it is recorded once however often it is looked at.
        let since = health.and_then(|h| h.since.as_ref()).map_or(now, |t| t.0);
        let issues = health
            .map(|h| h.issues.join("; "))
            .filter(|issues| !issues.is_empty())
            .map(|issues| format!(" ({issues})"))
            .unwrap_or_default();
        return Look {
            seen: Seen::Interrupted(since),
            value: String::new(),
            message: format!(
                "the Gate turned {state} at {since}{issues}: the {} soak starts again once it is Healthy",
                words(length)
            ),
        };
    }
    // The clock runs from the crossing, or from the Gate's last turn to Healthy.
    let healthy_since = health
        .filter(|h| h.status == Health::Healthy)
        .and_then(|h| h.since.as_ref())
        .map(|t| t.0);
    let from = healthy_since.map_or(started, |since| since.max(started));
    let end = later(from, length);
    if now >= end {
        Look {
            seen: Seen::Pass,
            value: words(length),
            message: format!("ran {} healthy, since {from}", words(length)),
        }
    } else {
        Look {
            seen: Seen::WaitUntil(end),
            value: String::new(),
            message: format!(
                "soaking until {end} ({} healthy from {from})",
                words(length)
            ),
        }
    }
}

impl Verifier for SoakVerifier {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn look<'a>(
        &'a self,
        config: Option<&'a Value>,
        subject: &'a Subject<'a>,
    ) -> BoxFuture<'a, Result<Look, VerifyError>> {
        Box::pin(async move {
            let length = duration(config).map_err(|problem| VerifyError::Config {
                verifier: Self::NAME.into(),
                problem,
            })?;
            Ok(judge(subject.gate, length, subject.started, subject.now))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hecate_ops::rules::verification::Seen;
    use hecate_types::{Gate, GateSpec, GateStatus, Health, HealthReport, Time};
    use jiff::{SignedDuration, Timestamp};
    use serde_json::json;

    use super::{duration, judge};

    fn t(minutes: i64) -> Timestamp {
        let t0: Timestamp = "2026-12-03T12:00:00Z".parse().expect("a time");
        t0 + SignedDuration::from_mins(minutes)
    }

    fn gate(health: Option<(Health, i64)>) -> Gate {
        let mut gate = Gate::new("staging", GateSpec::default());
        gate.status = Some(GateStatus {
            health: health.map(|(status, since)| HealthReport {
                status,
                issues: Vec::new(),
                details: None,
                observed_at: None,
                since: Some(Time(t(since))),
            }),
            ..GateStatus::default()
        });
        gate
    }

    const HALF_HOUR: Duration = Duration::from_secs(30 * 60);

    #[test]
    fn a_healthy_gate_soaks_from_the_crossing_and_names_the_end() {
        let gate = gate(Some((Health::Healthy, -60)));
        let look = judge(&gate, HALF_HOUR, t(0), t(10));
        assert_eq!(look.seen, Seen::WaitUntil(t(30)));
        assert!(
            look.message
                .starts_with("soaking until 2026-12-03T12:30:00Z"),
            "{}",
            look.message
        );
        assert_eq!(judge(&gate, HALF_HOUR, t(0), t(30)).seen, Seen::Pass);
    }

    #[test]
    fn an_interruption_restarts_the_clock() {
        // Degraded since minute 12: interrupted then, looked at again on the interval.
        let degraded = gate(Some((Health::Degraded, 12)));
        let look = judge(&degraded, HALF_HOUR, t(0), t(20));
        assert_eq!(look.seen, Seen::Interrupted(t(12)));
        assert!(
            look.message
                .starts_with("the Gate turned Degraded at 2026-12-03T12:12:00Z"),
            "{}",
            look.message
        );
        // Healthy again from minute 25: the soak ends at 55, not at 30.
        let recovered = gate(Some((Health::Healthy, 25)));
        assert_eq!(
            judge(&recovered, HALF_HOUR, t(0), t(30)).seen,
            Seen::WaitUntil(t(55))
        );
        assert_eq!(judge(&recovered, HALF_HOUR, t(0), t(55)).seen, Seen::Pass);
    }

    #[test]
    fn a_gate_that_watches_nothing_soaks_by_time_alone() {
        let look = judge(&gate(None), HALF_HOUR, t(0), t(5));
        assert_eq!(look.seen, Seen::WaitUntil(t(30)));
    }

    #[test]
    fn the_duration_is_required_and_positive() {
        assert_eq!(duration(Some(&json!({"duration": "30m"}))), Ok(HALF_HOUR));
        for with in [
            json!({}),
            json!({"duration": "0s"}),
            json!({"duration": "soon"}),
            json!({"duration": 30}),
        ] {
            assert!(duration(Some(&with)).is_err(), "{with}");
        }
        assert!(duration(None).is_err());
    }
}
