//! What a Gate's newly assessed health means (spec controller.md §2.6): the report it
//! keeps, and — when the state changed — the Event that says so and, on leaving
//! `Degraded`, how long it was degraded.
//!
//! Pure: the reconcile publishes the Event and observes the duration [`judge`] returns.

use hecate_types::{Health, HealthReport, Time};
use jiff::Timestamp;

use crate::events::{self, Kind};
use hecate_steps::health::Assessment;

/// A change of a Gate's health state (never its first observation).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// `HealthWorsened` (a warning) into `Degraded` or `Unknown`, else `HealthChanged`.
    pub event: Kind,
    /// The Event's note: the new state, the old one, and the first issue.
    pub note: String,
    /// How long the Gate was `Degraded`, in seconds, when it leaves `Degraded` with a
    /// `since` recorded (observed as `hecate_gate_degraded_seconds`; `since` is in the
    /// status, so this holds across restarts).
    pub degraded_seconds: Option<f64>,
}

/// The health report a Gate keeps after `assessment` at `now`, following `previous`,
/// and the change it makes, if its state changed: `since` is kept while the state
/// stays (now if none was recorded), and moves to now when it changes.
///
/// While Flux applies again what it had applied ([`Assessment::reapplying`]), what
/// it reapplies stands as it stood: the state is the previous one merged with the
/// rest of the assessment, and the previous issues stay while that state does — a
/// routine reconcile on Flux's interval neither restarts a soak nor says the Gate
/// recovered (issue 53).
pub fn judge(
    previous: Option<&HealthReport>,
    mut assessment: Assessment,
    now: Timestamp,
) -> (HealthReport, Option<Change>) {
    if let Some(previous) = previous.filter(|_| assessment.reapplying) {
        let status = previous.status.merge(assessment.status);
        if status == previous.status && status != assessment.status {
            assessment.issues = previous.issues.clone();
        }
        assessment.status = status;
    }
    let since = match previous {
        Some(previous) if previous.status == assessment.status => {
            previous.since.clone().or(Some(Time(now)))
        }
        _ => Some(Time(now)),
    };
    let change = previous
        .filter(|previous| previous.status != assessment.status)
        .map(|previous| {
            let degraded_seconds = previous
                .since
                .as_ref()
                .filter(|_| previous.status == Health::Degraded)
                .map(|since| now.duration_since(since.0).as_secs_f64());
            let event = if matches!(assessment.status, Health::Degraded | Health::Unknown) {
                events::HEALTH_WORSENED
            } else {
                events::HEALTH_CHANGED
            };
            let first_issue = assessment
                .issues
                .first()
                .map(|i| format!(": {i}"))
                .unwrap_or_default();
            Change {
                event,
                note: format!(
                    "health is {} (was {}){first_issue}",
                    assessment.status, previous.status
                ),
                degraded_seconds,
            }
        });
    let report = HealthReport {
        status: assessment.status,
        issues: assessment.issues,
        details: assessment.details,
        observed_at: Some(Time(now)),
        since,
    };
    (report, change)
}

#[cfg(test)]
mod tests {
    use jiff::SignedDuration;
    use serde_json::json;

    use super::Health::*;
    use super::*;

    fn at(minute: i64) -> Timestamp {
        let t0: Timestamp = "2026-08-10T12:00:00Z".parse().expect("a time");
        t0 + SignedDuration::from_mins(minute)
    }

    fn report(status: Health, since: Option<i64>) -> HealthReport {
        HealthReport {
            status,
            issues: vec!["old issue".into()],
            details: None,
            observed_at: Some(Time(at(0))),
            since: since.map(|m| Time(at(m))),
        }
    }

    fn assessment(status: Health, issues: &[&str]) -> Assessment {
        Assessment {
            status,
            issues: issues.iter().map(|i| i.to_string()).collect(),
            details: Some(json!({"flux": {"checked": 1}})),
            reapplying: false,
        }
    }

    /// The previous state and its `since` (minutes), the state assessed and its
    /// issues → the Event, its note and the seconds spent degraded.
    type Case = (
        Option<(Health, Option<i64>)>,
        Health,
        &'static [&'static str],
        Option<Kind>,
        &'static str,
        Option<f64>,
    );

    #[test]
    fn each_change_of_state_has_its_event_note_and_degraded_duration() {
        let now = 30;
        let worsened = Some(events::HEALTH_WORSENED);
        let changed = Some(events::HEALTH_CHANGED);
        let cases: Vec<Case> = vec![
            // The first observation is no change.
            (None, Degraded, &["app down"], None, "", None),
            // The same state is no change, whatever its issues.
            (Some((Healthy, Some(0))), Healthy, &["new"], None, "", None),
            (Some((Degraded, Some(0))), Degraded, &[], None, "", None),
            // Into Degraded or Unknown: a warning, with the first issue.
            (
                Some((Healthy, Some(0))),
                Degraded,
                &["app down", "db down"],
                worsened,
                "health is Degraded (was Healthy): app down",
                None,
            ),
            (
                Some((Progressing, Some(0))),
                Unknown,
                &[],
                worsened,
                "health is Unknown (was Progressing)",
                None,
            ),
            // Leaving Degraded: how long since it became Degraded.
            (
                Some((Degraded, Some(0))),
                Healthy,
                &[],
                changed,
                "health is Healthy (was Degraded)",
                Some(1800.0),
            ),
            (
                Some((Degraded, Some(20))),
                Progressing,
                &["rolling out"],
                changed,
                "health is Progressing (was Degraded): rolling out",
                Some(600.0),
            ),
            (
                Some((Degraded, Some(25))),
                Unknown,
                &["cannot tell"],
                worsened,
                "health is Unknown (was Degraded): cannot tell",
                Some(300.0),
            ),
            // Leaving Degraded with no `since` recorded: nothing to observe.
            (
                Some((Degraded, None)),
                Healthy,
                &[],
                changed,
                "health is Healthy (was Degraded)",
                None,
            ),
            // Better, or no longer applicable: a normal Event.
            (
                Some((Unknown, Some(0))),
                Progressing,
                &[],
                changed,
                "health is Progressing (was Unknown)",
                None,
            ),
            (
                Some((Healthy, Some(0))),
                NotApplicable,
                &[],
                changed,
                "health is NotApplicable (was Healthy)",
                None,
            ),
        ];
        for (previous, status, issues, event, note, degraded_seconds) in cases {
            let previous = previous.map(|(status, since)| report(status, since));
            let (_, change) = judge(previous.as_ref(), assessment(status, issues), at(now));
            let want = event.map(|event| Change {
                event,
                note: note.into(),
                degraded_seconds,
            });
            assert_eq!(change, want, "{previous:?} → {status}");
        }
    }

    #[test]
    fn the_report_keeps_its_since_while_the_state_stays() {
        let (kept, _) = judge(
            Some(&report(Healthy, Some(5))),
            assessment(Healthy, &["new"]),
            at(30),
        );
        assert_eq!(
            kept,
            HealthReport {
                status: Healthy,
                issues: vec!["new".into()],
                details: Some(json!({"flux": {"checked": 1}})),
                observed_at: Some(Time(at(30))),
                since: Some(Time(at(5))),
            }
        );
        let since = |previous: Option<HealthReport>| {
            judge(previous.as_ref(), assessment(Healthy, &[]), at(30))
                .0
                .since
        };
        assert_eq!(since(Some(report(Healthy, None))), Some(Time(at(30))));
        assert_eq!(since(Some(report(Degraded, Some(5)))), Some(Time(at(30))));
        assert_eq!(since(None), Some(Time(at(30))));
    }

    /// Flux applying again what it had applied, on its interval, is no change of
    /// health: a Healthy Gate stays Healthy from the same instant (its soak goes on),
    /// a Degraded one stays Degraded with what was wrong; anything else the
    /// assessment says still counts.
    #[test]
    fn a_routine_reconcile_keeps_the_state_and_its_since() {
        let reapplying = |status, issues: &[&str]| Assessment {
            reapplying: true,
            ..assessment(status, issues)
        };
        let (kept, change) = judge(
            Some(&report(Healthy, Some(5))),
            reapplying(Healthy, &[]),
            at(30),
        );
        assert_eq!(
            (kept.status, kept.since, change),
            (Healthy, Some(Time(at(5))), None)
        );
        let (kept, change) = judge(
            Some(&report(Degraded, Some(5))),
            reapplying(Healthy, &[]),
            at(30),
        );
        assert_eq!(
            (kept.status, kept.issues, kept.since, change),
            (
                Degraded,
                vec!["old issue".to_string()],
                Some(Time(at(5))),
                None
            )
        );
        // Another object worse than before is said as ever.
        let (worse, change) = judge(
            Some(&report(Healthy, Some(5))),
            reapplying(Degraded, &["K/shop/b: stalled"]),
            at(30),
        );
        assert_eq!((worse.status, worse.since), (Degraded, Some(Time(at(30)))));
        assert_eq!(change.map(|c| c.event), Some(events::HEALTH_WORSENED));
        // Without a previous report there is nothing to keep.
        let (first, _) = judge(None, reapplying(Healthy, &[]), at(30));
        assert_eq!(first.status, Healthy);
    }
}
