//! How looks add up to a verdict (DECISION 139): passes in a row, failures in all,
//! looks that cannot judge never passing, timeouts, soaks waiting for their end.

use std::time::Duration;

use hecate_types::{Time, Verification, VerificationPhase};
use jiff::{SignedDuration, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::rules::fixtures::*;
use crate::rules::verification::*;

fn look(seen: Seen, value: &str) -> Look {
    Look {
        seen,
        value: value.into(),
        message: format!("saw {value}"),
    }
}

fn verifying(uses: &[&str]) -> hecate_types::VerificationStatus {
    let mut gate = gate("staging");
    gate.spec.verify = uses
        .iter()
        .map(|uses| Verification {
            uses: (*uses).into(),
            with: None,
        })
        .collect();
    begin(&gate, t0())
}

fn after(seconds: i64) -> Timestamp {
    t0() + SignedDuration::from_secs(seconds)
}

#[test]
fn a_cadence_reads_the_shared_fields_and_refuses_what_it_cannot_read() {
    assert_eq!(Cadence::of(None), Ok(Cadence::default()));
    assert_eq!(
        Cadence::of(Some(&json!({"interval": "5s"}))).map(|c| c.interval),
        Ok(MIN_INTERVAL)
    );
    assert_eq!(
        Cadence::of(Some(
            &json!({"interval": "1m", "successes": 3, "failures": 2, "timeout": "10m", "query": "up"})
        )),
        Ok(Cadence {
            interval: Duration::from_secs(60),
            successes: 3,
            failures: 2,
            timeout: Some(Duration::from_secs(600)),
        })
    );
    for (with, why) in [
        (json!({"interval": "soon"}), "interval"),
        (json!({"interval": "0s"}), "at least 5s apart"),
        (
            json!({"interval": "1ms"}),
            "interval: 1ms is too often; looks are at least 5s apart",
        ),
        (json!({"interval": "4.9s"}), "at least 5s apart"),
        (json!({"interval": 30}), "a duration"),
        (json!({"timeout": "-1m"}), "negative"),
        (json!({"successes": 0}), "1 to 100"),
        (json!({"failures": 101}), "1 to 100"),
        (json!({"successes": "3"}), "1 to 100"),
    ] {
        let error = Cadence::of(Some(&with)).expect_err(&with.to_string());
        assert!(error.contains(why), "{with}: {error}");
    }
}

#[test]
fn a_crossing_begins_undecided_with_every_verification_due_at_once() {
    let status = verifying(&["prometheus", "soak"]);
    assert_eq!(status.phase, VerificationPhase::Verifying);
    assert_eq!(status.verifiers.len(), 2);
    assert!(status.verifiers.iter().all(|v| is_due(v, t0())));
    assert_eq!(next_look(&status), Some(t0()));

    let nothing = begin(&gate("dev"), t0());
    assert_eq!(
        nothing.phase,
        VerificationPhase::Verified,
        "nothing to verify"
    );
}

#[test]
fn passes_must_come_in_a_row_and_a_look_that_cannot_judge_breaks_the_run() {
    let cadence = Cadence {
        successes: 3,
        ..Cadence::default()
    };
    let mut status = verifying(&["prometheus"]);
    let verifier = &mut status.verifiers[0];
    record(
        verifier,
        &cadence,
        look(Seen::Pass, "0.001"),
        t0(),
        after(0),
    );
    record(
        verifier,
        &cadence,
        look(Seen::Pass, "0.002"),
        t0(),
        after(30),
    );
    assert_eq!(verifier.passes, 2);
    assert_eq!(
        verifier_words(verifier),
        "2 passes in a row, last 0.002: saw 0.002"
    );
    record(
        verifier,
        &cadence,
        look(Seen::Inconclusive, ""),
        t0(),
        after(60),
    );
    assert_eq!((verifier.passes, verifier.inconclusive), (0, 1));
    assert_eq!(verifier.phase, VerificationPhase::Verifying, "never a pass");
    for (i, at) in [90, 120, 150].into_iter().enumerate() {
        record(
            verifier,
            &cadence,
            look(Seen::Pass, "0.001"),
            t0(),
            after(at),
        );
        assert_eq!(verifier.passes, i as i32 + 1);
    }
    assert_eq!(verifier.phase, VerificationPhase::Verified);
    assert_eq!(
        verifier.next_look_at, None,
        "a decided verification looks no more"
    );
    assert!(!is_due(verifier, after(10_000)));
}

#[test]
fn failures_count_in_all_and_the_count_asked_for_fails() {
    let cadence = Cadence {
        failures: 2,
        successes: 2,
        ..Cadence::default()
    };
    let mut status = verifying(&["http"]);
    let verifier = &mut status.verifiers[0];
    record(
        verifier,
        &cadence,
        look(Seen::Fail, "HTTP 500"),
        t0(),
        after(0),
    );
    record(
        verifier,
        &cadence,
        look(Seen::Pass, "HTTP 200"),
        t0(),
        after(30),
    );
    assert_eq!(verifier.phase, VerificationPhase::Verifying);
    record(
        verifier,
        &cadence,
        look(Seen::Fail, "HTTP 500"),
        t0(),
        after(60),
    );
    assert_eq!(verifier.phase, VerificationPhase::Failed);
    assert_eq!(verifier.failures, 2);

    settle(&mut status, after(60));
    assert_eq!(status.phase, VerificationPhase::Failed);
    assert_eq!(status.message, "http verification said no: saw HTTP 500");
    assert_eq!(status.finished_at, Some(Time(after(60))));
}

#[test]
fn a_refusal_is_final_at_once() {
    let cadence = Cadence {
        failures: 5,
        ..Cadence::default()
    };
    let mut status = verifying(&["flagger"]);
    record(
        &mut status.verifiers[0],
        &cadence,
        look(Seen::Refused, "Failed"),
        t0(),
        after(0),
    );
    assert_eq!(status.verifiers[0].phase, VerificationPhase::Failed);
}

#[test]
fn looks_that_cannot_judge_back_off_and_never_pass_even_forever() {
    let cadence = Cadence::default();
    let mut status = verifying(&["prometheus"]);
    let verifier = &mut status.verifiers[0];
    let mut at = 0;
    let mut waits = Vec::new();
    for _ in 0..8 {
        record(
            verifier,
            &cadence,
            look(Seen::Inconclusive, ""),
            t0(),
            after(at),
        );
        let next = verifier.next_look_at.clone().expect("looks again").0;
        let wait = next.duration_since(after(at)).as_secs();
        waits.push(wait);
        at += wait;
    }
    assert_eq!(waits, [30, 60, 120, 240, 300, 300, 300, 300]);
    assert_eq!(verifier.phase, VerificationPhase::Verifying);
}

#[test]
fn an_undecided_verification_says_no_at_its_timeout_and_never_waits_past_it() {
    let cadence = Cadence {
        interval: Duration::from_secs(60),
        timeout: Some(Duration::from_secs(90)),
        ..Cadence::default()
    };
    let mut status = verifying(&["prometheus"]);
    let verifier = &mut status.verifiers[0];
    record(
        verifier,
        &cadence,
        look(Seen::Inconclusive, ""),
        t0(),
        after(0),
    );
    record(
        verifier,
        &cadence,
        look(Seen::Inconclusive, ""),
        t0(),
        after(60),
    );
    assert_eq!(
        verifier.next_look_at,
        Some(Time(after(90))),
        "the backoff (120 s) stops at the deadline"
    );
    record(
        verifier,
        &cadence,
        look(Seen::Inconclusive, ""),
        t0(),
        after(90),
    );
    assert_eq!(verifier.phase, VerificationPhase::Failed);
    assert!(
        verifier
            .message
            .starts_with("no verdict within 1m30s of the crossing"),
        "{}",
        verifier.message
    );
}

#[test]
fn a_soak_waits_for_its_end_without_counting_anything() {
    let cadence = Cadence::default();
    let mut status = verifying(&["soak", "prometheus"]);
    let end = after(1800);
    record(
        &mut status.verifiers[0],
        &cadence,
        look(Seen::WaitUntil(end), ""),
        t0(),
        after(0),
    );
    let soak = &status.verifiers[0];
    assert_eq!(soak.next_look_at, Some(Time(end)));
    assert_eq!((soak.passes, soak.failures, soak.inconclusive), (0, 0, 0));
    record(
        &mut status.verifiers[1],
        &cadence,
        look(Seen::Pass, "1"),
        t0(),
        after(0),
    );
    settle(&mut status, after(0));
    assert_eq!(status.phase, VerificationPhase::Verifying);
    assert_eq!(next_look(&status), Some(end), "the soak is what is left");
    assert_eq!(status.message, "soak: saw ");

    record(
        &mut status.verifiers[0],
        &cadence,
        look(Seen::Pass, ""),
        t0(),
        end,
    );
    settle(&mut status, end);
    assert_eq!(status.phase, VerificationPhase::Verified);
    assert_eq!(next_look(&status), None);
}

#[test]
fn one_no_fails_the_crossing_whatever_the_others_say_and_a_final_phase_stays() {
    let cadence = Cadence::default();
    let mut status = verifying(&["http", "prometheus"]);
    record(
        &mut status.verifiers[1],
        &cadence,
        look(Seen::Fail, "0.4"),
        t0(),
        after(0),
    );
    settle(&mut status, after(0));
    assert_eq!(status.phase, VerificationPhase::Failed);
    assert_eq!(
        status.verifiers[0].next_look_at, None,
        "nothing looks again"
    );
    status.verifiers[1].phase = VerificationPhase::Verified;
    settle(&mut status, after(30));
    assert_eq!(status.phase, VerificationPhase::Failed, "final");
}

#[test]
fn durations_read_as_people_write_them() {
    assert_eq!(words(Duration::from_secs(30)), "30s");
    assert_eq!(words(Duration::from_secs(300)), "5m");
    assert_eq!(words(Duration::from_secs(5400)), "1h30m");
    assert_eq!(words(Duration::ZERO), "0s");
    assert_eq!(
        later(Timestamp::MAX, Duration::from_secs(1)),
        Timestamp::MAX
    );
}

#[test]
fn a_crossings_verification_is_said_in_one_line_for_lists() {
    let cadence = Cadence {
        successes: 3,
        ..Cadence::default()
    };
    let mut status = verifying(&["prometheus", "soak"]);
    assert_eq!(summary(&status), "Verifying (prometheus: not looked yet)");
    for (at, value) in [(0, "0.001"), (30, "0.002")] {
        let mut seen = look(Seen::Pass, value);
        seen.message = String::new();
        record(&mut status.verifiers[0], &cadence, seen, t0(), after(at));
    }
    settle(&mut status, after(30));
    assert_eq!(
        summary(&status),
        "Verifying (prometheus: 2 passes in a row, last 0.002)"
    );

    let mut passed = verifying(&[]);
    passed.phase = VerificationPhase::Verified;
    assert_eq!(summary(&passed), "Verified");

    record(
        &mut status.verifiers[1],
        &Cadence::default(),
        look(Seen::Refused, "Failed"),
        t0(),
        after(60),
    );
    settle(&mut status, after(60));
    assert_eq!(
        summary(&status),
        "Failed: soak verification said no: saw Failed"
    );

    // Undecided with no verifier left to look: the phase alone, never "(verifying)".
    let mut undecided = verifying(&["prometheus"]);
    undecided.verifiers[0].phase = VerificationPhase::Verified;
    assert_eq!(summary(&undecided), "Verifying");
}

#[test]
fn the_gates_words_change_only_when_a_verification_decides() {
    let mut status = verifying(&["http", "prometheus", "soak"]);
    assert_eq!(
        waiting_on("staging-3", &status),
        "verifying passage staging-3: http, prometheus and soak have not decided"
    );
    let before = waiting_on("staging-3", &status);
    record(
        &mut status.verifiers[0],
        &Cadence {
            successes: 3,
            ..Cadence::default()
        },
        look(Seen::Pass, "HTTP 200"),
        t0(),
        t0(),
    );
    assert_eq!(waiting_on("staging-3", &status), before, "a look alone");
    status.verifiers[0].phase = VerificationPhase::Verified;
    status.verifiers[1].phase = VerificationPhase::Verified;
    assert_eq!(
        waiting_on("staging-3", &status),
        "verifying passage staging-3: soak has not decided"
    );
}

/// A crossing of `gate` by `name`, started `minute` minutes after t0, in `phase`, its
/// verification undecided when it crossed.
fn crossing(
    gate: &str,
    name: &str,
    minute: i64,
    phase: hecate_types::PassagePhase,
) -> hecate_types::Passage {
    let mut passage = hecate_types::Passage::new(
        name,
        hecate_types::PassageSpec {
            gate: gate.into(),
            bundle: format!("b-{name}"),
            ..Default::default()
        },
    );
    passage.metadata.labels = Some(
        [(
            hecate_types::wellknown::LABEL_GATE.to_string(),
            gate.to_string(),
        )]
        .into(),
    );
    let status = passage.status.get_or_insert_with(Default::default);
    status.phase = Some(phase);
    status.started_at = Some(Time(after(minute * 60)));
    if phase == hecate_types::PassagePhase::Succeeded {
        status.verification = Some(verifying(&["soak"]));
    }
    passage
}

#[test]
fn a_newer_crossing_cuts_an_undecided_verification_short_and_names_itself() {
    use hecate_types::PassagePhase::{Failed, Running, Succeeded};
    let mut decided = crossing("staging", "staging-1", 0, Succeeded);
    let mut verified = decided.status.clone().unwrap().verification.unwrap();
    verified.verifiers[0].phase = VerificationPhase::Verified;
    settle(&mut verified, after(60));
    decided.status.as_mut().unwrap().verification = Some(verified);
    let passages = vec![
        crossing("staging", "staging-3", 20, Running),
        decided,
        crossing("staging", "staging-2", 10, Succeeded),
        crossing("dev", "dev-9", 30, Succeeded),
        crossing("staging", "staging-0", -10, Failed),
    ];
    let cut: Vec<(String, String)> = superseded(&passages, "staging")
        .into_iter()
        .map(|(p, newer)| (p.metadata.name.clone().unwrap_or_default(), newer))
        .collect();
    // staging-1 decided, staging-0 never crossed, dev-9 is another Gate's; the newest
    // of each Gate is never cut short.
    assert_eq!(
        cut,
        vec![("staging-2".to_string(), "staging-3".to_string())]
    );
    assert_eq!(superseded(&passages, "dev"), vec![]);

    let mut status = verifying(&["http", "soak"]);
    status.verifiers[0].phase = VerificationPhase::Verified;
    supersede(&mut status, "staging-3", after(90));
    assert_eq!(status.phase, VerificationPhase::Superseded);
    assert_eq!(
        status.message,
        "cut short by staging-3, a newer crossing of the Gate"
    );
    assert_eq!(status.finished_at, Some(Time(after(90))));
    assert_eq!(
        status.verifiers[0].phase,
        VerificationPhase::Verified,
        "decided stays"
    );
    assert_eq!(status.verifiers[1].phase, VerificationPhase::Superseded);
    assert_eq!(status.verifiers[1].next_look_at, None);
    assert_eq!(
        summary(&status),
        "Superseded: cut short by staging-3, a newer crossing of the Gate"
    );
    // Final: a later cut or settle changes nothing.
    let before = status.clone();
    supersede(&mut status, "staging-4", after(120));
    settle(&mut status, after(120));
    assert_eq!(status, before);
}

#[test]
fn a_soak_records_each_interruption_once_with_why_and_keeps_the_newest() {
    let cadence = Cadence::default();
    let mut status = verifying(&["soak"]);
    let soak = &mut status.verifiers[0];
    // Looked at twice during one interruption: one restart, named by when it began.
    for at in [60, 90] {
        record(
            soak,
            &cadence,
            Look {
                seen: Seen::Interrupted(after(50)),
                value: String::new(),
                message: "the Gate turned Degraded".into(),
            },
            t0(),
            after(at),
        );
    }
    assert_eq!(soak.restarts.len(), 1);
    assert_eq!(soak.restarts[0].at, Time(after(50)));
    assert_eq!(soak.restarts[0].reason, "the Gate turned Degraded");
    assert_eq!(soak.phase, VerificationPhase::Verifying);
    assert_eq!(soak.next_look_at, Some(Time(after(90 + 30))));
    // Many interruptions: the newest ten are kept, reasons cut to a line.
    for n in 0..15 {
        record(
            soak,
            &cadence,
            Look {
                seen: Seen::Interrupted(after(1000 + n)),
                value: String::new(),
                message: "x".repeat(400),
            },
            t0(),
            after(1000 + n),
        );
    }
    assert_eq!(
        soak.restarts.len(),
        hecate_types::limits::MAX_VERIFICATION_RESTARTS
    );
    assert_eq!(soak.restarts[0].at, Time(after(1005)));
    assert_eq!(soak.restarts[9].at, Time(after(1014)));
    assert_eq!(soak.restarts[9].reason.chars().count(), 301);
}

#[test]
fn a_soak_looks_again_when_its_gate_s_health_changes() {
    use hecate_types::{GateStatus, Health, HealthReport};
    let mut status = verifying(&["soak", "prometheus"]);
    for verifier in &mut status.verifiers {
        verifier.last_look_at = Some(Time(after(100)));
    }
    let gate_turned_at = |seconds: i64| {
        let mut gate = gate("staging");
        gate.status = Some(GateStatus {
            health: Some(HealthReport {
                status: Health::Degraded,
                issues: vec![],
                details: None,
                observed_at: None,
                since: Some(Time(after(seconds))),
            }),
            ..GateStatus::default()
        });
        gate
    };
    assert!(health_changed(&status.verifiers[0], &gate_turned_at(150)));
    assert!(!health_changed(&status.verifiers[0], &gate_turned_at(50)));
    // Only a soak reads the Gate's health.
    assert!(!health_changed(&status.verifiers[1], &gate_turned_at(150)));
    // Nor one that is decided.
    status.verifiers[0].phase = VerificationPhase::Verified;
    assert!(!health_changed(&status.verifiers[0], &gate_turned_at(150)));
}
