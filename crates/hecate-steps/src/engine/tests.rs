//! The engine, case by case (spec controller.md §3.3–3.8), with steps the tests script:
//! no cluster, no git, milliseconds each.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use hecate_types::{
    Bundle, BundleSpec, Passage, PassagePhase, PassageSpec, PassageStatus, Step, StepPhase,
    StepStatus, Time, Var,
};
use jiff::{SignedDuration, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::clock::ManualClock;
use crate::engine::{self, Advance, Fence, Steps};
use crate::reason::Reason;
use crate::runner::{Progress, Runner, StepContext, StepError, StepResult};

/// What a scripted step saw on one call.
#[derive(Clone, Debug, PartialEq)]
struct Call {
    config: Value,
    attempt: u32,
    failed: bool,
}

/// A step that answers from a script, one answer per call, and remembers each call.
struct Scripted {
    name: &'static str,
    answers: Mutex<VecDeque<Result<StepResult, StepError>>>,
    calls: Mutex<Vec<Call>>,
}

impl Scripted {
    fn new(name: &'static str, answers: Vec<Result<StepResult, StepError>>) -> Arc<Self> {
        Arc::new(Self {
            name,
            answers: Mutex::new(answers.into()),
            calls: Mutex::new(Vec::new()),
        })
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().expect("calls").clone()
    }
}

impl Runner for Scripted {
    fn name(&self) -> &'static str {
        self.name
    }

    fn run<'a>(&'a self, ctx: &'a StepContext<'a>) -> BoxFuture<'a, Result<StepResult, StepError>> {
        self.calls.lock().expect("calls").push(Call {
            config: ctx.config.clone(),
            attempt: ctx.attempt,
            failed: ctx.failed,
        });
        let answer = self
            .answers
            .lock()
            .expect("answers")
            .pop_front()
            .unwrap_or_else(|| Ok(StepResult::done("done", json!({}))));
        Box::pin(async move { answer })
    }
}

fn ok(output: Value) -> Result<StepResult, StepError> {
    Ok(StepResult::done("done", output))
}

fn wait() -> Result<StepResult, StepError> {
    Ok(StepResult::waiting("not yet", Duration::from_secs(7)))
}

fn step(uses: &str) -> Step {
    Step {
        uses: uses.into(),
        ..Step::default()
    }
}

fn passage(steps: Vec<Step>) -> Passage {
    let mut passage = Passage::new(
        "dev-1",
        PassageSpec {
            gate: "dev".into(),
            bundle: "app-1".into(),
            steps,
            vars: vec![Var {
                name: "fleet".into(),
                value: "file:///srv/fleet.git".into(),
            }],
            actor: "controller".into(),
            abort: false,
            rollout: None,
            targets: Vec::new(),
        },
    );
    passage.metadata.namespace = Some("shop".into());
    passage
}

fn bundle() -> Bundle {
    Bundle::new(
        "app-1",
        BundleSpec {
            beacon: "app".into(),
            artifacts: vec![hecate_types::Artifact::commit(
                "file:///srv/app.git",
                "9f8c1a2b",
            )],
            ..BundleSpec::default()
        },
    )
}

fn t0() -> Timestamp {
    "2026-08-10T12:00:00Z".parse().expect("a time")
}

struct Engine {
    registry: Steps,
    clock: ManualClock,
}

impl Engine {
    fn new(runners: &[Arc<Scripted>]) -> Self {
        let mut registry = Steps::new();
        for runner in runners {
            registry.register(runner.clone()).expect("unique");
        }
        Self {
            registry,
            clock: ManualClock::at(t0()),
        }
    }

    /// One call of the engine; the Passage carries the new status afterwards, as if
    /// written.
    async fn step(&self, passage: &mut Passage) -> Advance {
        let advance = engine::advance(
            &self.registry,
            &self.clock,
            passage,
            &bundle(),
            Path::new("/nonexistent/work"),
            "",
        )
        .await;
        passage.status = Some(advance.status.clone());
        advance
    }

    /// What one reconcile does: calls while the engine has more to do, the status
    /// written after each; the last answer, with every call's checks.
    async fn advance(&self, passage: &mut Passage) -> Advance {
        let mut watch = Vec::new();
        loop {
            let advance = self.step(passage).await;
            watch.extend(advance.watch.iter().cloned());
            if !advance.more {
                return Advance { watch, ..advance };
            }
        }
    }
}

fn phases(status: &PassageStatus) -> Vec<StepPhase> {
    status.steps.iter().map(|s| s.phase).collect()
}

#[tokio::test]
async fn every_step_runs_in_order_and_the_crossing_succeeds() {
    let a = Scripted::new("a", vec![ok(json!({"sha": "abc"}))]);
    let b = Scripted::new("b", vec![ok(json!({}))]);
    let engine = Engine::new(&[a.clone(), b.clone()]);
    let mut p = passage(vec![step("a"), step("b")]);
    let advance = engine.advance(&mut p).await;
    let status = advance.status;
    assert_eq!(status.phase, Some(PassagePhase::Succeeded));
    assert_eq!(status.message, "crossed dev");
    assert_eq!(
        phases(&status),
        [StepPhase::Succeeded, StepPhase::Succeeded]
    );
    assert_eq!(status.current_step, 1);
    assert_eq!(status.started_at, Some(Time(t0())));
    assert!(status.finished_at.is_some());
    assert_eq!(status.steps[0].attempts, 1);
    assert_eq!(status.steps[0].output, Some(json!({"sha": "abc"})));
    assert_eq!(advance.requeue_after, None);

    // A finished crossing is never advanced again.
    engine.advance(&mut p).await;
    assert_eq!((a.calls().len(), b.calls().len()), (1, 1));
}

/// A step's log keeps what it said over its attempts (#53): a wait that says the same
/// at each look is one line counted, a change of words a new line, the end its own.
#[tokio::test]
async fn a_steps_log_keeps_what_it_said_over_its_attempts() {
    let waiting = |words: &str| Ok(StepResult::waiting(words, Duration::from_secs(7)));
    let a = Scripted::new(
        "a",
        vec![
            waiting("Flux has not applied 46eeba7 yet"),
            waiting("Flux has not applied 46eeba7 yet"),
            waiting("Flux has not applied 46eeba7 yet"),
            waiting("Flux applied 46eeba7; waiting for Ready"),
            ok(json!({})),
        ],
    );
    let engine = Engine::new(std::slice::from_ref(&a));
    let mut p = passage(vec![step("a")]);
    for minute in 0..5 {
        engine
            .clock
            .set(t0() + jiff::SignedDuration::from_mins(minute));
        engine.advance(&mut p).await;
    }
    let record = &p.status.as_ref().expect("a status").steps[0];
    let log: Vec<(String, &str, u32)> = record
        .log
        .iter()
        .map(|l| (l.at.0.to_string(), l.text.as_str(), l.repeated))
        .collect();
    assert_eq!(
        log,
        [
            (
                "2026-08-10T12:00:00Z".into(),
                "Flux has not applied 46eeba7 yet",
                2
            ),
            (
                "2026-08-10T12:03:00Z".into(),
                "Flux applied 46eeba7; waiting for Ready",
                0
            ),
            ("2026-08-10T12:04:00Z".into(), "done", 0),
        ]
    );
    assert_eq!(record.message, "done", "the message is the newest line");
}

#[tokio::test]
async fn a_waiting_step_is_asked_again_with_its_attempts_counted() {
    let a = Scripted::new("a", vec![wait(), wait(), ok(json!({}))]);
    let engine = Engine::new(std::slice::from_ref(&a));
    let mut p = passage(vec![step("a")]);
    let first = engine.advance(&mut p).await;
    assert_eq!(first.requeue_after, Some(Duration::from_secs(7)));
    assert_eq!(first.status.phase, Some(PassagePhase::Running));
    assert_eq!(first.status.message, "not yet");
    assert_eq!(first.status.steps[0].phase, StepPhase::Running);
    engine.advance(&mut p).await;
    let last = engine.advance(&mut p).await;
    assert_eq!(last.status.phase, Some(PassagePhase::Succeeded));
    assert_eq!(last.status.steps[0].attempts, 3);
    let attempts: Vec<u32> = a.calls().iter().map(|c| c.attempt).collect();
    assert_eq!(attempts, [0, 1, 2]);
}

#[tokio::test]
async fn after_a_failure_only_steps_that_ask_run_and_the_first_failure_is_the_message() {
    let broken = Scripted::new(
        "broken",
        vec![Err(StepError::retryable(
            Reason::GitRejected,
            "the remote said no",
        ))],
    );
    let skipped = Scripted::new("skipped", vec![]);
    let cleanup = Scripted::new(
        "cleanup",
        vec![Err(StepError::retryable(
            Reason::GitFailed,
            "cleanup failed too",
        ))],
    );
    let notify = Scripted::new("notify", vec![ok(json!({}))]);
    let engine = Engine::new(&[
        broken.clone(),
        skipped.clone(),
        cleanup.clone(),
        notify.clone(),
    ]);
    let mut always = step("cleanup");
    always.condition = "always".into();
    let mut on_failure = step("notify");
    on_failure.condition = "failed".into();
    let mut p = passage(vec![step("broken"), step("skipped"), always, on_failure]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert_eq!(
        phases(&status),
        [
            StepPhase::Failed,
            StepPhase::Skipped,
            StepPhase::Failed,
            StepPhase::Succeeded
        ]
    );
    assert_eq!(status.steps[0].reason, Reason::GitRejected.as_str());
    assert!(
        status.message.contains("the remote said no"),
        "{}",
        status.message
    );
    assert!(
        !status.message.contains("cleanup"),
        "the first failure stays the message"
    );
    assert_eq!(status.current_step, 0, "frozen on the step that broke");
    assert!(skipped.calls().is_empty());
    assert!(cleanup.calls()[0].failed && notify.calls()[0].failed);
}

#[tokio::test]
async fn continue_on_error_forgives_a_retryable_failure_but_never_a_terminal_one() {
    let flaky = Scripted::new(
        "flaky",
        vec![Err(StepError::retryable(Reason::HttpFailed, "503"))],
    );
    let fatal = Scripted::new("fatal", vec![Err(StepError::config("unknown field `x`"))]);
    let after = Scripted::new("after", vec![ok(json!({})), ok(json!({}))]);
    let engine = Engine::new(&[flaky.clone(), fatal.clone(), after.clone()]);
    let mut forgiven = step("flaky");
    forgiven.continue_on_error = true;
    let mut p = passage(vec![forgiven.clone(), step("after")]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Succeeded));
    assert_eq!(phases(&status), [StepPhase::Failed, StepPhase::Succeeded]);

    let mut unforgiven = step("fatal");
    unforgiven.continue_on_error = true;
    let mut p = passage(vec![unforgiven, step("after")]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert_eq!(status.steps[0].reason, Reason::InvalidConfig.as_str());
    assert_eq!(status.steps[1].phase, StepPhase::Skipped);
}

#[tokio::test]
async fn a_step_run_after_a_failure_cannot_wait() {
    let broken = Scripted::new(
        "broken",
        vec![Err(StepError::retryable(Reason::GitFailed, "broke"))],
    );
    let waits = Scripted::new("waits", vec![wait()]);
    let engine = Engine::new(&[broken, waits.clone()]);
    let mut always = step("waits");
    always.condition = "always".into();
    let mut p = passage(vec![step("broken"), always]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert_eq!(status.steps[1].phase, StepPhase::Failed);
    assert!(status.steps[1].message.contains("cannot wait"));
    assert_eq!(status.steps[1].reason, "", "no error, so no reason");
    assert_eq!(waits.calls().len(), 1, "exactly one call");
}

#[tokio::test]
async fn an_abort_ends_every_unfinished_step_at_the_next_call() {
    let a = Scripted::new("a", vec![ok(json!({}))]);
    let b = Scripted::new("b", vec![wait()]);
    let engine = Engine::new(&[a, b.clone()]);
    let mut p = passage(vec![step("a"), step("b"), step("a")]);
    engine.advance(&mut p).await;
    p.spec.abort = true;
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Aborted));
    assert_eq!(status.message, "aborted");
    assert_eq!(
        phases(&status),
        [StepPhase::Succeeded, StepPhase::Aborted, StepPhase::Aborted]
    );
    assert_eq!(b.calls().len(), 1, "the waiting step is not called again");
}

#[tokio::test]
async fn outputs_feed_later_steps_and_survive_a_restart() {
    let commit = Scripted::new("commit", vec![ok(json!({"sha": "9f8c1a2b"}))]);
    let wait_then_done = Scripted::new("wait", vec![wait()]);
    let engine = Engine::new(&[commit, wait_then_done]);
    let mut first = step("commit");
    first.alias = "commit".into();
    let mut second = step("wait");
    second.with = Some(json!({
        "expectedRevision": "${{ steps.commit.sha }}",
        "repo": "${{ vars.fleet }}",
        "app": "${{ bundle.commit('file:///srv/app.git').sha }}",
    }));
    let mut p = passage(vec![first, second]);
    engine.advance(&mut p).await;

    // A new process: only the stored status is left. The waiting step is asked once
    // more, sees its second attempt, and the outputs are rebuilt from the status.
    let resumed = Scripted::new("wait", vec![ok(json!({}))]);
    let commit_again = Scripted::new("commit", vec![]);
    let engine = Engine::new(&[commit_again.clone(), resumed.clone()]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Succeeded));
    assert!(
        commit_again.calls().is_empty(),
        "a finished step never runs again"
    );
    let call = &resumed.calls()[0];
    assert_eq!(call.attempt, 1);
    assert_eq!(
        call.config,
        json!({
            "expectedRevision": "9f8c1a2b",
            "repo": "file:///srv/fleet.git",
            "app": "9f8c1a2b",
        })
    );
}

#[tokio::test]
async fn unknown_steps_and_bad_expressions_are_fatal() {
    let a = Scripted::new("a", vec![]);
    let engine = Engine::new(std::slice::from_ref(&a));
    let mut p = passage(vec![step("nonesuch")]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.steps[0].reason, Reason::UnregisteredStep.as_str());
    assert!(status.steps[0].message.contains("the steps are a"));

    let mut bad = step("a");
    bad.with = Some(json!({"tag": "${{ bundle.image('absent').tag }}"}));
    let mut p = passage(vec![bad]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert_eq!(status.steps[0].reason, Reason::BadExpression.as_str());
    assert!(a.calls().is_empty());
}

#[tokio::test]
async fn a_step_waiting_past_its_timeout_fails() {
    let a = Scripted::new("a", vec![wait(), wait()]);
    let engine = Engine::new(std::slice::from_ref(&a));
    let mut limited = step("a");
    limited.timeout = "10m".into();
    let mut p = passage(vec![limited]);
    engine.advance(&mut p).await;
    engine.clock.advance(SignedDuration::from_mins(11));
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert_eq!(status.steps[0].reason, Reason::StepTimedOut.as_str());
    assert_eq!(a.calls().len(), 1, "not called again once timed out");
}

#[tokio::test]
async fn a_failed_step_without_an_error_fails_the_crossing_with_no_reason() {
    let says_no = Scripted::new(
        "says-no",
        vec![Ok(StepResult {
            progress: Progress::Failed,
            message: "the smoke test said no".into(),
            ..StepResult::default()
        })],
    );
    let engine = Engine::new(&[says_no]);
    let mut p = passage(vec![step("says-no")]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert_eq!(status.steps[0].reason, "");
    assert!(status.message.contains("the smoke test said no"));
}

#[tokio::test]
async fn a_resumed_passage_keeps_its_records() {
    // Written by an older process: step 0 done with an output, step 1 running.
    let mut p = passage(vec![step("a"), step("b")]);
    p.status = Some(PassageStatus {
        phase: Some(PassagePhase::Running),
        current_step: 1,
        started_at: Some(Time(t0())),
        steps: vec![
            StepStatus {
                uses: "a".into(),
                phase: StepPhase::Succeeded,
                attempts: 1,
                ..StepStatus::default()
            },
            StepStatus {
                uses: "b".into(),
                phase: StepPhase::Running,
                attempts: 4,
                ..StepStatus::default()
            },
        ],
        ..PassageStatus::default()
    });
    let a = Scripted::new("a", vec![]);
    let b = Scripted::new("b", vec![ok(json!({}))]);
    let engine = Engine::new(&[a.clone(), b.clone()]);
    let status = engine.advance(&mut p).await.status;
    assert!(a.calls().is_empty());
    assert_eq!(b.calls()[0].attempt, 4);
    assert_eq!(status.steps[1].attempts, 5);
    assert_eq!(status.started_at, Some(Time(t0())), "the start is kept");
}

#[tokio::test]
async fn a_verdict_lands_on_the_passage_while_the_step_waits_and_when_it_fails() {
    let verdict = |verdict: &str| hecate_types::EvidenceRef {
        trail: "91b2ffff".into(),
        verdict: verdict.into(),
        risk: Some(30),
        ..hecate_types::EvidenceRef::default()
    };
    let held = StepResult {
        evidence: Some(verdict("hold")),
        ..StepResult::waiting("holding", Duration::from_secs(60))
    };
    let refused =
        StepError::terminal(Reason::ChangeHeld, "held too long").with_evidence(verdict("held"));
    let gate = Scripted::new("gate", vec![Ok(held), Err(refused)]);
    let engine = Engine::new(std::slice::from_ref(&gate));
    let mut p = passage(vec![step("gate")]);
    let waiting = engine.advance(&mut p).await;
    assert_eq!(waiting.status.evidence, Some(verdict("hold")));
    let failed = engine.advance(&mut p).await;
    assert_eq!(failed.status.phase, Some(PassagePhase::Failed));
    assert_eq!(failed.status.steps[0].reason, Reason::ChangeHeld.as_str());
    assert_eq!(failed.status.evidence, Some(verdict("held")));
}

#[tokio::test]
async fn a_false_condition_skips_its_step_and_the_crossing_goes_on() {
    let gated = Scripted::new("gated", vec![]);
    let after = Scripted::new("after", vec![ok(json!({}))]);
    let engine = Engine::new(&[gated.clone(), after.clone()]);
    let mut only_elsewhere = step("gated");
    only_elsewhere.condition = "gate == 'production'".into();
    let mut p = passage(vec![only_elsewhere, step("after")]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Succeeded));
    assert_eq!(phases(&status), [StepPhase::Skipped, StepPhase::Succeeded]);
    assert_eq!(
        status.steps[0].message,
        r#"condition "gate == 'production'" was false"#
    );
    assert_eq!(
        status.steps[0].attempts, 0,
        "a skipped step is never called"
    );
    assert!(status.steps[0].finished_at.is_some());
    assert!(gated.calls().is_empty());
    assert_eq!(after.calls().len(), 1);
}

#[tokio::test]
async fn a_condition_that_cannot_be_evaluated_is_a_fatal_bad_expression() {
    let a = Scripted::new("a", vec![]);
    let engine = Engine::new(std::slice::from_ref(&a));
    let cases = [
        // Reading through null is an error, not false.
        ("steps.absent.sha == 'x'", "cannot read .sha of null"),
        // An `if:` must be a boolean.
        ("vars.fleet", "string"),
    ];
    for (condition, words) in cases {
        let mut broken = step("a");
        broken.condition = condition.into();
        let mut p = passage(vec![broken, step("a")]);
        let status = engine.advance(&mut p).await.status;
        assert_eq!(status.phase, Some(PassagePhase::Failed), "{condition}");
        assert_eq!(status.steps[0].reason, Reason::BadExpression.as_str());
        assert!(
            status.steps[0].message.starts_with("condition: ")
                && status.steps[0].message.contains(words),
            "{condition}: {}",
            status.steps[0].message
        );
        assert!(status.message.starts_with("steps[0] a: condition: "));
        assert_eq!(status.steps[1].phase, StepPhase::Skipped);
    }
    assert!(a.calls().is_empty(), "neither step was called");

    // continueOnError does not forgive a broken expression, in `if:` or in `with:`.
    let mut forgiven = step("a");
    forgiven.condition = "steps.absent.sha".into();
    forgiven.continue_on_error = true;
    let mut bad_with = step("a");
    bad_with.with = Some(json!({"x": "${{ bundle.image('absent').tag }}"}));
    bad_with.continue_on_error = true;
    for broken in [forgiven, bad_with] {
        let mut p = passage(vec![broken, step("a")]);
        let status = engine.advance(&mut p).await.status;
        assert_eq!(status.phase, Some(PassagePhase::Failed));
        assert_eq!(status.steps[0].reason, Reason::BadExpression.as_str());
        assert_eq!(status.steps[1].phase, StepPhase::Skipped);
    }
    assert!(a.calls().is_empty());
}

#[tokio::test]
async fn continue_on_error_forgives_a_step_that_reports_failed() {
    let says_no = Scripted::new(
        "says-no",
        vec![Ok(StepResult {
            progress: Progress::Failed,
            message: "the smoke test said no".into(),
            ..StepResult::default()
        })],
    );
    let after = Scripted::new("after", vec![ok(json!({}))]);
    let engine = Engine::new(&[says_no, after]);
    let mut forgiven = step("says-no");
    forgiven.continue_on_error = true;
    let mut p = passage(vec![forgiven, step("after")]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Succeeded));
    assert_eq!(phases(&status), [StepPhase::Failed, StepPhase::Succeeded]);
    assert_eq!(status.steps[0].reason, "");
}

#[tokio::test]
async fn an_abort_before_the_first_advance_leaves_no_step_records() {
    let a = Scripted::new("a", vec![]);
    let engine = Engine::new(std::slice::from_ref(&a));
    let mut p = passage(vec![step("a"), step("a")]);
    p.spec.abort = true;
    let advance = engine.advance(&mut p).await;
    let status = advance.status;
    assert_eq!(status.phase, Some(PassagePhase::Aborted));
    assert_eq!(status.message, "aborted");
    assert!(status.steps.is_empty(), "{:?}", status.steps);
    assert_eq!(status.finished_at, Some(Time(t0())));
    assert_eq!(advance.requeue_after, None);
    assert!(a.calls().is_empty());

    // Aborted is terminal: lifting the flag afterwards changes nothing.
    p.spec.abort = false;
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Aborted));
    assert!(a.calls().is_empty());
}

#[tokio::test]
async fn an_uncoded_error_is_recorded_as_unknown() {
    let uncoded = Scripted::new(
        "uncoded",
        vec![Err(StepError::retryable(Reason::Unknown, "minting failed"))],
    );
    let engine = Engine::new(&[uncoded]);
    let mut p = passage(vec![step("uncoded")]);
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert_eq!(status.steps[0].reason, Reason::Unknown.as_str());
}

#[tokio::test]
async fn a_step_finishing_within_its_timeout_is_not_timed_out() {
    let a = Scripted::new("a", vec![wait(), ok(json!({}))]);
    let engine = Engine::new(std::slice::from_ref(&a));
    let mut limited = step("a");
    limited.timeout = "10m".into();
    let mut p = passage(vec![limited]);
    engine.advance(&mut p).await;
    engine.clock.advance(SignedDuration::from_mins(9));
    let status = engine.advance(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Succeeded));
    assert_eq!(a.calls().len(), 2);
}

#[test]
fn a_step_name_can_be_registered_once() {
    let mut registry = Steps::new();
    registry
        .register(Scripted::new("git-clone", vec![]))
        .expect("the first");
    let error = registry
        .register(Scripted::new("git-clone", vec![]))
        .expect_err("a second under the same name");
    assert_eq!(
        error.to_string(),
        r#"a step named "git-clone" is already registered"#
    );
    assert_eq!(registry.names().collect::<Vec<_>>(), ["git-clone"]);
}

#[tokio::test]
async fn a_replica_that_no_longer_leads_runs_no_step_and_records_nothing() {
    let a = Scripted::new("a", vec![ok(json!({}))]);
    let mut engine = Engine::new(std::slice::from_ref(&a));
    /// Another replica may hold the Lease now.
    struct Deposed;
    impl Fence for Deposed {
        fn holds(&self, _: &str) -> bool {
            false
        }
    }
    engine.registry = engine.registry.clone().fenced_by(Arc::new(Deposed));
    let mut p = passage(vec![step("a")]);
    let advance = engine.step(&mut p).await;
    assert!(advance.fenced);
    assert_eq!(
        advance.status,
        PassageStatus::default(),
        "the record as read"
    );
    assert!(a.calls().is_empty(), "the step was not called");
}

/// A shard's fence: it holds in the namespaces named, as the controller's shard does.
struct Shard(&'static [&'static str]);

impl Fence for Shard {
    fn holds(&self, namespace: &str) -> bool {
        self.0.contains(&namespace)
    }
}

/// The Lease's fence, held or not.
struct Lease(bool);

impl Fence for Lease {
    fn holds(&self, _: &str) -> bool {
        self.0
    }
}

#[tokio::test]
async fn a_namespace_that_left_the_shard_runs_no_step_while_one_still_in_it_does() {
    let a = Scripted::new("a", vec![ok(json!({}))]);
    let mut engine = Engine::new(std::slice::from_ref(&a));
    engine.registry = engine
        .registry
        .clone()
        .fenced_by(Arc::new((Lease(true), Shard(&["shop"]))));

    let mut gone = passage(vec![step("a")]);
    gone.metadata.namespace = Some("relabelled".into());
    let advance = engine.step(&mut gone).await;
    assert!(advance.fenced, "the namespace is another shard's now");
    assert_eq!(
        advance.status,
        PassageStatus::default(),
        "the record as read"
    );
    assert!(a.calls().is_empty());

    let mut kept = passage(vec![step("a")]);
    let advance = engine.step(&mut kept).await;
    assert!(!advance.fenced);
    assert_eq!(advance.status.phase, Some(PassagePhase::Succeeded));
    assert_eq!(a.calls().len(), 1);
}

#[test]
fn a_pair_of_fences_holds_only_where_both_hold() {
    let pair = |lease| (Lease(lease), Shard(&["shop"]));
    assert!(pair(true).holds("shop"));
    assert!(!pair(true).holds("other"), "outside the shard");
    assert!(!pair(false).holds("shop"), "the Lease lost");
    assert!(!pair(false).holds("other"));
}

#[tokio::test]
async fn each_call_runs_one_step_so_what_ran_is_recorded_before_the_next() {
    let a = Scripted::new("a", vec![ok(json!({"sha": "abc"}))]);
    let b = Scripted::new("b", vec![ok(json!({}))]);
    let engine = Engine::new(&[a.clone(), b.clone()]);
    let mut p = passage(vec![step("a"), step("b"), step("a")]);
    let first = engine.step(&mut p).await;
    assert!(first.more, "the next step is due");
    assert_eq!(first.requeue_after, None);
    assert_eq!(first.status.phase, Some(PassagePhase::Running));
    assert_eq!(
        phases(&first.status),
        [StepPhase::Succeeded, StepPhase::Pending, StepPhase::Pending]
    );
    assert_eq!(first.status.current_step, 1, "the step to run next");
    assert_eq!((a.calls().len(), b.calls().len()), (1, 0));

    // A new process with only the record: it carries on at steps[1].
    let engine = Engine::new(&[a.clone(), b.clone()]);
    let second = engine.step(&mut p).await;
    assert!(second.more);
    assert_eq!((a.calls().len(), b.calls().len()), (1, 1));
    let last = engine.step(&mut p).await;
    assert!(!last.more);
    assert_eq!(last.status.phase, Some(PassagePhase::Succeeded));
    assert_eq!((a.calls().len(), b.calls().len()), (2, 1));
}

#[tokio::test]
async fn a_failure_recorded_in_an_earlier_call_still_fails_the_crossing() {
    let broken = Scripted::new(
        "broken",
        vec![Err(StepError::retryable(
            Reason::GitRejected,
            "the remote said no",
        ))],
    );
    let skipped = Scripted::new("skipped", vec![]);
    let cleanup = Scripted::new("cleanup", vec![ok(json!({}))]);
    let mut always = step("cleanup");
    always.condition = "always".into();
    let mut p = passage(vec![
        step("broken"),
        step("skipped"),
        always,
        step("skipped"),
    ]);
    let runners = [broken.clone(), skipped.clone(), cleanup.clone()];
    // Every call in a process of its own: the record alone carries the failure.
    let mut calls = 0;
    let status = loop {
        calls += 1;
        let advance = Engine::new(&runners).step(&mut p).await;
        if !advance.more {
            break advance.status;
        }
    };
    assert_eq!(calls, 2, "the failing step, then the cleanup");
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert_eq!(
        phases(&status),
        [
            StepPhase::Failed,
            StepPhase::Skipped,
            StepPhase::Succeeded,
            StepPhase::Skipped
        ]
    );
    assert_eq!(status.message, "steps[0] broken: the remote said no");
    assert_eq!(status.current_step, 0);
    assert!(skipped.calls().is_empty());
    assert!(cleanup.calls()[0].failed, "the cleanup knows");
}

#[tokio::test]
async fn a_forgiven_failure_does_not_fail_the_steps_after_it() {
    let flaky = Scripted::new(
        "flaky",
        vec![Err(StepError::retryable(Reason::HttpFailed, "503"))],
    );
    let after = Scripted::new("after", vec![ok(json!({}))]);
    let mut forgiven = step("flaky");
    forgiven.continue_on_error = true;
    let mut p = passage(vec![forgiven, step("after")]);
    let first = Engine::new(&[flaky.clone(), after.clone()])
        .step(&mut p)
        .await;
    assert!(first.more);
    assert_eq!(first.status.current_step, 1);
    let last = Engine::new(&[flaky, after.clone()]).step(&mut p).await;
    assert_eq!(last.status.phase, Some(PassagePhase::Succeeded));
    assert_eq!(after.calls().len(), 1);
}

#[tokio::test]
async fn a_passage_whose_deletion_was_asked_for_ends_as_aborted() {
    let a = Scripted::new("a", vec![ok(json!({}))]);
    let engine = Engine::new(std::slice::from_ref(&a));
    let mut p = passage(vec![step("a"), step("a")]);
    assert!(engine.step(&mut p).await.more);
    p.metadata.deletion_timestamp = Some(Time(t0()));
    let status = engine.step(&mut p).await.status;
    assert_eq!(status.phase, Some(PassagePhase::Aborted));
    assert_eq!(status.message, "aborted: the Passage is being deleted");
    assert_eq!(phases(&status), [StepPhase::Succeeded, StepPhase::Aborted]);
    assert_eq!(a.calls().len(), 1, "the second step never ran");
}

#[tokio::test]
async fn what_a_step_reports_is_cut_to_its_bounds_before_later_steps_read_it() {
    use super::bounds::{CUT, MAX_STEP_MESSAGE, output_limit};

    let huge = "\u{1}".repeat(64 * 1024);
    let talks = Scripted::new(
        "talks",
        vec![Ok(StepResult {
            progress: Progress::Succeeded,
            message: "m".repeat(10 * MAX_STEP_MESSAGE),
            output: Some(json!({"status": 200, "body": huge})),
            ..StepResult::default()
        })],
    );
    let reads = Scripted::new("reads", vec![ok(json!({}))]);
    let mut first = step("talks");
    first.alias = "talk".into();
    let mut second = step("reads");
    second.with =
        Some(json!({"status": "${{ steps.talk.status }}", "body": "${{ steps.talk.body }}"}));
    let mut p = passage(vec![first, second]);
    let status = Engine::new(&[talks, reads.clone()])
        .advance(&mut p)
        .await
        .status;
    assert_eq!(status.phase, Some(PassagePhase::Succeeded));
    let record = &status.steps[0];
    assert!(record.message.len() <= MAX_STEP_MESSAGE && record.message.contains(CUT));
    let output = record.output.as_ref().expect("an output");
    assert!(super::bounds::json_len(output) <= output_limit(2));
    assert_eq!(output["status"], 200);
    // The next step read what was recorded, not what the step said.
    assert_eq!(reads.calls()[0].config["body"], output["body"]);
    assert_eq!(reads.calls()[0].config["status"], 200);
}

/// A step that takes a `clusterRef`, as `flux-wait` does.
struct ReachesClusters(Arc<Scripted>);

impl Runner for ReachesClusters {
    fn name(&self) -> &'static str {
        self.0.name
    }

    fn run<'a>(&'a self, ctx: &'a StepContext<'a>) -> BoxFuture<'a, Result<StepResult, StepError>> {
        self.0.run(ctx)
    }

    fn reaches_clusters(&self) -> bool {
        true
    }
}

/// A crossing of one of a Gate's targets (DECISION 155): expressions read `target`,
/// the target's vars over the Gate's, and a step that reaches clusters reaches the
/// target's unless its `with` names one; a step that does not is given none.
#[tokio::test]
async fn a_targets_crossing_reads_the_target_and_reaches_its_cluster() {
    let render = Scripted::new("render", vec![]);
    let wait = Scripted::new("wait", vec![]);
    let mut registry = Steps::new();
    registry.register(render.clone()).expect("unique");
    registry
        .register(Arc::new(ReachesClusters(wait.clone())))
        .expect("unique");
    let clock = ManualClock::at(t0());
    let with = |value: Value| Step {
        with: Some(value),
        ..step("render")
    };
    let mut p = passage(vec![
        with(
            json!({"path": "${{ target.name }}/${{ vars.fleet }}", "replicas": "${{ target.vars.replicas }}"}),
        ),
        step("wait"),
        Step {
            with: Some(json!({"clusterRef": {"name": "elsewhere"}})),
            ..step("wait")
        },
    ]);
    let vars = [Var {
        name: "replicas".into(),
        value: "3".into(),
    }];
    let place = engine::Place {
        name: "eu-2",
        cluster: Some("eu-2-kubeconfig"),
        vars: &vars,
    };
    loop {
        let advance = engine::advance_at(
            &registry,
            &clock,
            &p,
            &bundle(),
            Path::new("/nonexistent/work"),
            "",
            Some(&place),
        )
        .await;
        p.status = Some(advance.status.clone());
        if !advance.more {
            assert_eq!(advance.status.phase, Some(PassagePhase::Succeeded));
            break;
        }
    }
    assert_eq!(
        render.calls()[0].config,
        json!({"path": "eu-2/file:///srv/fleet.git", "replicas": "3"})
    );
    let configs: Vec<Value> = wait.calls().into_iter().map(|c| c.config).collect();
    assert_eq!(
        configs,
        [
            json!({"clusterRef": {"name": "eu-2-kubeconfig"}}),
            json!({"clusterRef": {"name": "elsewhere"}}),
        ]
    );
}
