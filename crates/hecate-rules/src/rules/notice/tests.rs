//! What people are told (DECISION 166): news of crossings within the horizon, what
//! waits on a person in the Overview's words, and a Notifier's record of what it sent.

use hecate_types::{
    NoticeKind, NoticeOutcome, NotifierSpec, NotifierType, PassagePhase::*, Severity, StepPhase,
    Time,
};
use jiff::{SignedDuration, Timestamp};
use pretty_assertions::assert_eq;

use super::*;
use crate::rules::explain::explain;
use crate::rules::fixtures::*;

fn told(
    gate: hecate_types::Gate,
    bundles: Vec<hecate_types::Bundle>,
    passages: Vec<hecate_types::Passage>,
    now: Timestamp,
) -> Vec<Notice> {
    let snapshot = NamespaceSnapshot::new(NS, vec![gate.clone()], bundles, passages);
    let gate = snapshot.gate(&gate.name_any()).unwrap().clone();
    let explanation = explain(&snapshot, &gate, now);
    of_gate(&snapshot, &gate, &explanation, now)
}

fn kinds(notices: &[Notice]) -> Vec<NoticeKind> {
    notices.iter().map(|n| n.kind).collect()
}

/// A Passage of `bundle` through `gate` that ran from `start` to `end` minutes after T0.
fn ran(
    gate: &str,
    bundle: &str,
    phase: hecate_types::PassagePhase,
    start: i64,
    end: i64,
) -> hecate_types::Passage {
    let mut p = passage(gate, bundle, Some(phase), start);
    p.metadata.uid = Some("0123456789abcdef".into());
    p.spec.actor = "bob".into();
    let status = p.status.get_or_insert_with(Default::default);
    status.started_at = Some(minutes(t0(), start));
    status.finished_at = Some(minutes(t0(), end));
    p
}

#[test]
fn a_crossing_is_told_when_it_starts_and_when_it_crosses_in_order() {
    let notices = told(
        with_current(gate("staging"), "b2"),
        vec![bundle("b2", 1)],
        vec![ran("staging", "b2", Succeeded, 2, 5)],
        t0() + SignedDuration::from_mins(10),
    );
    assert_eq!(
        kinds(&notices),
        [NoticeKind::CrossingStarted, NoticeKind::Crossed]
    );
    let crossed = &notices[1];
    assert_eq!(crossed.summary, "1.0.0 crossed staging (by bob)");
    assert_eq!(crossed.key, "acme/staging/staging-b2@01234567/Crossed");
    assert_eq!(crossed.at, Some(minutes(t0(), 5)));
    assert_eq!(crossed.version.as_deref(), Some("1.0.0"));
    assert_eq!(crossed.actor.as_deref(), Some("bob"));
    assert_eq!(crossed.severity, Severity::Info);
}

#[test]
fn news_older_than_the_horizon_is_not_told() {
    let notices = told(
        with_current(gate("staging"), "b2"),
        vec![bundle("b2", 1)],
        vec![ran("staging", "b2", Succeeded, 2, 5)],
        t0() + SignedDuration::from_mins(5) + HORIZON + SignedDuration::from_secs(1),
    );
    assert_eq!(kinds(&notices), []);
}

#[test]
fn a_failed_crossing_is_told_in_explains_words_with_the_command_that_inspects_it() {
    let failed = with_steps(
        ran("staging", "b2", Failed, 2, 4),
        &[(
            "git-push",
            StepPhase::Failed,
            "PushRejected",
            "non-fast-forward",
        )],
    );
    let now = t0() + SignedDuration::from_mins(10);
    let notices = told(gate("staging"), vec![bundle("b2", 1)], vec![failed], now);
    let failed = notices
        .iter()
        .find(|n| n.kind == NoticeKind::CrossingFailed)
        .unwrap();
    assert_eq!(
        failed.summary,
        "staging: the crossing of 1.0.0 failed at git-push [PushRejected]: non-fast-forward"
    );
    assert_eq!(failed.severity, Severity::Error);
    assert_eq!(
        failed.command.as_deref(),
        Some(
            Remedy::InspectPassage {
                passage: "staging-b2".into()
            }
            .fix(NS)
            .as_str()
        )
    );
}

#[test]
fn a_verification_that_said_no_is_told_with_the_rollback_that_fixes_it() {
    let mut p = ran("staging", "b2", Succeeded, 2, 4);
    p.status.as_mut().unwrap().verification = Some(hecate_types::VerificationStatus {
        phase: hecate_types::VerificationPhase::Failed,
        finished_at: Some(minutes(t0(), 8)),
        started_at: Some(minutes(t0(), 4)),
        message: "error rate 7% > 1%".into(),
        verifiers: Vec::new(),
    });
    let now = t0() + SignedDuration::from_mins(10);
    let notices = told(
        with_current(gate("staging"), "b2"),
        vec![bundle("b2", 1)],
        vec![p],
        now,
    );
    let said_no = notices
        .iter()
        .find(|n| n.kind == NoticeKind::VerificationFailed)
        .unwrap();
    assert_eq!(
        said_no.summary,
        "staging: 1.0.0 crossed and was not verified: error rate 7% > 1%"
    );
    assert_eq!(
        said_no.action,
        Some(Remedy::Rollback {
            gate: "staging".into()
        })
    );
}

#[test]
fn a_rollback_is_told_as_one_with_why() {
    let mut undone = ran("staging", "b2", Failed, 2, 4);
    undone.metadata.name = Some("staging-7".into());
    let mut back = ran("staging", "b1", Succeeded, 5, 6);
    back.spec.actor = hecate_types::wellknown::ACTOR_CONTROLLER.into();
    back.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(
            hecate_types::wellknown::ANNOTATION_ROLLBACK_OF.into(),
            "staging-7".into(),
        );
    let notices = told(
        with_current(gate("staging"), "b1"),
        vec![bundle("b2", 1), bundle("b1", 0)],
        vec![back, undone],
        t0() + SignedDuration::from_mins(10),
    );
    let rolled_back = notices
        .iter()
        .find(|n| n.kind == NoticeKind::RolledBack)
        .unwrap();
    assert_eq!(
        rolled_back.summary,
        "staging rolled back to 1.0.0 (by itself): it failed"
    );
    assert!(
        notices.iter().any(|n| n.kind == NoticeKind::CrossingStarted
            && n.summary.starts_with("staging: rolling back to 1.0.0")),
        "{notices:#?}"
    );
}

#[test]
fn an_approval_wanted_is_told_in_the_overviews_words_while_it_waits() {
    let mut production = with_current(gate("production"), "b1");
    production.spec.admits[0].require_approval = true;
    let notices = told(
        production,
        vec![bundle("b2", 5), bundle("b1", 0)],
        vec![],
        t0(),
    );
    assert_eq!(kinds(&notices), [NoticeKind::ApprovalWanted]);
    let wanted = &notices[0];
    assert!(
        wanted.summary.starts_with("production: 1.0.0: "),
        "{}",
        wanted.summary
    );
    assert_eq!(wanted.at, None, "told while it holds");
    assert_eq!(wanted.key, "acme/production/b2/ApprovalWanted");
    assert!(
        wanted
            .command
            .as_deref()
            .is_some_and(|c| c.contains("hecate approve b2 --gate production -n acme")),
        "{:?}",
        wanted.command
    );
}

fn slack() -> NotifierSpec {
    NotifierSpec {
        type_: NotifierType::Slack,
        ..NotifierSpec::default()
    }
}

fn notice(kind: NoticeKind, gate: &str, at: Option<Time>) -> Notice {
    let mut n = Notice::new(
        format!("acme/{gate}/x/{}", kind.as_str()),
        kind,
        "acme",
        gate,
        "said".into(),
    );
    n.at = at;
    n
}

#[test]
fn a_notifier_hears_its_namespace_its_gates_its_kinds_and_at_least_its_severity() {
    let failed = notice(NoticeKind::CrossingFailed, "production", None);
    let crossed = notice(NoticeKind::Crossed, "staging", None);
    assert!(hears(&slack(), "acme", "hecate-system", &failed));
    assert!(!hears(&slack(), "other", "hecate-system", &failed));
    let errors = NotifierSpec {
        event_severity: Severity::Error,
        ..slack()
    };
    assert!(hears(&errors, "acme", "hecate-system", &failed));
    assert!(!hears(&errors, "acme", "hecate-system", &crossed));
    let production = NotifierSpec {
        gates: vec!["production".into()],
        ..slack()
    };
    assert!(!hears(&production, "acme", "hecate-system", &crossed));
    let only_crossed = NotifierSpec {
        events: vec![NoticeKind::Crossed],
        ..slack()
    };
    assert!(hears(&only_crossed, "acme", "hecate-system", &crossed));
    assert!(!hears(&only_crossed, "acme", "hecate-system", &failed));
}

#[test]
fn every_namespace_is_heard_only_by_the_platforms_notifier_that_asks() {
    let everywhere = NotifierSpec {
        all_namespaces: true,
        ..slack()
    };
    let failed = notice(NoticeKind::CrossingFailed, "production", None);
    assert!(hears(
        &everywhere,
        "hecate-system",
        "hecate-system",
        &failed
    ));
    // A tenant's Notifier asking for every namespace hears its own alone, and says why.
    assert!(!hears(&everywhere, "tenant", "hecate-system", &failed));
    assert!(judge_spec(&everywhere, "tenant", "hecate-system").is_err());
    assert_eq!(
        judge_spec(&everywhere, "hecate-system", "hecate-system"),
        Ok(())
    );
}

#[test]
fn a_spec_that_cannot_work_says_why() {
    let github = NotifierSpec {
        type_: NotifierType::GitHub,
        ..NotifierSpec::default()
    };
    assert_eq!(
        judge_spec(&github, "acme", "hecate-system"),
        Err("type github needs repository: owner/name".into())
    );
    let reminder = NotifierSpec {
        reminder: "soon".into(),
        ..slack()
    };
    assert!(judge_spec(&reminder, "acme", "hecate-system").is_err());
}

#[test]
fn a_notice_is_due_once_then_recorded_sent() {
    let now = t0();
    let heard = vec![notice(NoticeKind::Crossed, "staging", Some(Time(now)))];
    let due_now = due(
        &slack(),
        now - SignedDuration::from_hours(2),
        &[],
        &heard,
        now,
    );
    assert_eq!(due_now.len(), 1);
    let mut records = Vec::new();
    settle(&mut records, &due_now[0], Ok(()), now);
    assert_eq!(records[0].outcome, NoticeOutcome::Sent);
    assert_eq!(records[0].attempts, 1);
    assert_eq!(due(&slack(), now, &records, &heard, now), []);
}

#[test]
fn what_happened_before_the_notifier_was_made_is_not_sent() {
    let now = t0();
    let heard = vec![notice(
        NoticeKind::Crossed,
        "staging",
        Some(Time(now - SignedDuration::from_mins(5))),
    )];
    assert_eq!(
        due(
            &slack(),
            now - SignedDuration::from_mins(1),
            &[],
            &heard,
            now
        ),
        []
    );
    // What holds now is told to a new Notifier.
    let wanted = vec![notice(NoticeKind::ApprovalWanted, "production", None)];
    assert_eq!(
        due(
            &slack(),
            now - SignedDuration::from_mins(1),
            &[],
            &wanted,
            now
        )
        .len(),
        1
    );
}

#[test]
fn a_failed_delivery_is_retried_after_a_wait_that_doubles_then_given_up() {
    let mut now = t0();
    let heard = vec![notice(NoticeKind::Crossed, "staging", Some(Time(now)))];
    let created = now - SignedDuration::from_hours(2);
    let mut records = Vec::new();
    let mut waits = Vec::new();
    for attempt in 1..=MAX_ATTEMPTS {
        let due_now = due(&slack(), created, &records, &heard, now);
        assert_eq!(due_now.len(), 1, "attempt {attempt}");
        settle(&mut records, &due_now[0], Err("HTTP 500".into()), now);
        // Not due again before its wait.
        assert_eq!(due(&slack(), created, &records, &heard, now), []);
        if let Some(next) = &records[0].next_attempt {
            waits.push(next.0.duration_since(now).as_secs());
            now = next.0;
        }
    }
    assert_eq!(waits, [10, 20, 40, 80, 160, 320, 600]);
    assert_eq!(records[0].outcome, NoticeOutcome::Failed);
    assert_eq!(records[0].error, "HTTP 500");
    assert_eq!(due(&slack(), created, &records, &heard, now), []);
}

#[test]
fn a_retry_after_a_restart_is_sent_under_the_same_key() {
    let now = t0();
    let heard = vec![notice(NoticeKind::Crossed, "staging", Some(Time(now)))];
    let mut records = Vec::new();
    let first = due(&slack(), now, &records, &heard, now);
    settle(&mut records, &first[0], Err("timed out".into()), now);
    // A new process reads the record back and sends the same notice under its key.
    let later = now + SignedDuration::from_mins(1);
    let again = due(&slack(), now, &records, &heard, later);
    assert_eq!(again[0].notice.key, first[0].notice.key);
    settle(&mut records, &again[0], Ok(()), later);
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].outcome, records[0].attempts),
        (NoticeOutcome::Sent, 2)
    );
}

#[test]
fn a_reminder_re_announces_an_approval_still_waiting() {
    let spec = NotifierSpec {
        reminder: "4h".into(),
        ..slack()
    };
    let now = t0();
    let heard = vec![notice(NoticeKind::ApprovalWanted, "production", None)];
    let mut records = Vec::new();
    let first = due(&spec, now, &records, &heard, now);
    settle(&mut records, &first[0], Ok(()), now);
    let before = now + SignedDuration::from_hours(4) - SignedDuration::from_secs(1);
    assert_eq!(due(&spec, now, &records, &heard, before), []);
    let after = now + SignedDuration::from_hours(4);
    let reminded = due(&spec, now, &records, &heard, after);
    assert_eq!(reminded[0].notice.key, "acme/production/x/ApprovalWanted#2");
    settle(&mut records, &reminded[0], Ok(()), after);
    let third = due(
        &spec,
        now,
        &records,
        &heard,
        after + SignedDuration::from_hours(4),
    );
    assert_eq!(third[0].notice.key, "acme/production/x/ApprovalWanted#3");
    // Without a reminder, once.
    assert_eq!(due(&slack(), now, &records, &heard, after), []);
}

#[test]
fn records_are_kept_while_they_matter_and_bounded() {
    let now = t0();
    let wanted = notice(NoticeKind::ApprovalWanted, "production", None);
    let mut records = Vec::new();
    settle(
        &mut records,
        &Due {
            notice: wanted.clone(),
        },
        Ok(()),
        now,
    );
    let old_news = notice(NoticeKind::Crossed, "staging", Some(Time(now)));
    settle(
        &mut records,
        &Due { notice: old_news },
        Err("HTTP 503".into()),
        now,
    );
    let later = now + KEPT_FOR + SignedDuration::from_secs(1);
    prune(&mut records, std::slice::from_ref(&wanted), later);
    // The approval still waits, so its record stays (no second announcement); the old
    // crossing's is gone, given up first.
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].key, wanted.key);

    let mut many = Vec::new();
    for i in 0..(hecate_types::DELIVERIES_KEPT + 10) {
        let n = notice(NoticeKind::Crossed, &format!("g{i}"), Some(Time(now)));
        settle(
            &mut many,
            &Due { notice: n },
            Ok(()),
            now + SignedDuration::from_secs(i as i64),
        );
    }
    prune(&mut many, &[], now + SignedDuration::from_mins(10));
    assert_eq!(many.len(), hecate_types::DELIVERIES_KEPT);
    assert_eq!(
        many[0].gate,
        format!("g{}", hecate_types::DELIVERIES_KEPT + 9),
        "newest first"
    );
}

#[test]
fn a_retry_of_what_no_longer_holds_is_given_up() {
    let now = t0();
    let wanted = notice(NoticeKind::ApprovalWanted, "production", None);
    let mut records = Vec::new();
    settle(
        &mut records,
        &Due { notice: wanted },
        Err("HTTP 500".into()),
        now,
    );
    // Approved meanwhile: nothing waits any more.
    prune(&mut records, &[], now + SignedDuration::from_mins(1));
    assert_eq!(records[0].outcome, NoticeOutcome::Failed);
    assert_eq!(
        due(
            &slack(),
            now,
            &records,
            &[],
            now + SignedDuration::from_mins(1)
        ),
        []
    );
}

#[test]
fn a_suspended_notifier_sends_nothing() {
    let spec = NotifierSpec {
        suspend: true,
        ..slack()
    };
    let heard = vec![notice(NoticeKind::ApprovalWanted, "production", None)];
    assert_eq!(due(&spec, t0(), &[], &heard, t0()), []);
}
