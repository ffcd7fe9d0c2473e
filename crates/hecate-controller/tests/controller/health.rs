//! A Gate's health and verification through reconciles (AC-039 – AC-045, AC-051 –
//! AC-054), with checkers and verifiers the test controls.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use hecate_controller::verify::{self, Subject, Verifier, VerifyError};
use hecate_ops::rules::verification::{Look, Seen};
use hecate_steps::clock::Clock as _;
use hecate_steps::health::{self, CheckResult, Checker};
use hecate_types::{
    Gate, Health, HealthCheck, Passage, PassagePhase, PassageStatus, RollbackPolicy, Verification,
    VerificationPhase, wellknown,
};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;
use kube::api::PostParams;
use serde_json::Value;

use crate::harness::*;

/// A `flux` checker answering whatever the test last set, and remembering each config.
#[derive(Default)]
struct Scripted {
    answer: Mutex<Option<Health>>,
    seen: Mutex<Vec<Value>>,
}

impl Scripted {
    fn answer(&self, health: Health) {
        *self.answer.lock().unwrap() = Some(health);
    }
    fn seen(&self) -> Vec<Value> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl Checker for Scripted {
    fn name(&self) -> &str {
        "flux"
    }
    fn check<'a>(
        &'a self,
        config: Option<&'a Value>,
        _namespace: &'a str,
        _now: Timestamp,
    ) -> BoxFuture<'a, CheckResult> {
        self.seen
            .lock()
            .unwrap()
            .push(config.cloned().unwrap_or_default());
        let health = self.answer.lock().unwrap().unwrap_or(Health::Healthy);
        let issues = if health == Health::Healthy {
            vec![]
        } else {
            vec![format!("the app is {health}")]
        };
        Box::pin(async move {
            CheckResult {
                health,
                issues,
                details: None,
                reapplying: false,
            }
        })
    }
}

async fn with_checker() -> (Harness, Arc<Scripted>) {
    let checker = Arc::new(Scripted::default());
    let mut registry = health::Checkers::new();
    registry.register(checker.clone()).unwrap();
    (
        Harness::with(registry, verify::Verifiers::new()).await,
        checker,
    )
}

fn watch_app() -> HealthCheck {
    HealthCheck {
        uses: "flux".into(),
        with: Some(
            serde_json::json!({"resources": [{"kind": "Kustomization", "name": "podinfo"}]}),
        ),
    }
}

async fn finish_with_watch(h: &Harness, phase: PassagePhase) {
    let mut passage = h.the_passage().await;
    passage.status = Some(PassageStatus {
        phase: Some(phase),
        watch: vec![watch_app()],
        ..PassageStatus::default()
    });
    h.env.write_status(&passage).await;
}

#[tokio::test]
async fn ac040_a_gate_adopts_the_watch_of_a_succeeded_crossing() {
    let (h, checker) = with_checker().await;
    auto_gate(&h, "staging", &[]).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    finish_with_watch(&h, PassagePhase::Succeeded).await;
    checker.seen();
    h.reconcile("staging").await;
    let seen = checker.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].to_string().contains("podinfo"));
    let health = h.gate("staging").await.status.unwrap().health.unwrap();
    assert_eq!(health.status, Health::Healthy);
}

#[tokio::test]
async fn ac041_a_failed_crossing_hands_over_nothing() {
    let (h, checker) = with_checker().await;
    auto_gate(&h, "staging", &[]).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    finish_with_watch(&h, PassagePhase::Failed).await;
    checker.seen();
    h.reconcile("staging").await;
    assert!(checker.seen().is_empty());
}

async fn watched_production(h: &Harness) {
    let mut spec = gate_spec(false, &[], false);
    spec.watch = vec![watch_app()];
    create_gate(h, "production", spec).await;
}

#[tokio::test]
async fn ac042_a_health_transition_records_one_event() {
    let (h, checker) = with_checker().await;
    watched_production(&h).await;
    let changes = || async {
        h.events()
            .await
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("HealthChanged"))
            .collect::<Vec<_>>()
    };
    checker.answer(Health::Healthy);
    h.reconcile("production").await;
    h.reconcile("production").await;
    assert!(
        changes().await.is_empty(),
        "the first observation and no change are silent"
    );
    checker.answer(Health::Degraded);
    h.reconcile("production").await;
    let event = h.event("HealthChanged").await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.action.as_deref(), Some("Monitoring"));
    assert!(
        event
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("Degraded")
    );
    h.reconcile("production").await;
    assert_eq!(changes().await.len(), 1);
}

#[tokio::test]
async fn ac043_since_marks_the_change_not_the_check() {
    let (h, checker) = with_checker().await;
    watched_production(&h).await;
    let g0 = h.clock.now();
    checker.answer(Health::Healthy);
    h.reconcile("production").await;
    let health = || async { h.gate("production").await.status.unwrap().health.unwrap() };
    assert_eq!(health().await.since.unwrap().0, g0);
    h.clock.advance(SignedDuration::from_mins(10));
    h.reconcile("production").await;
    let later = health().await;
    assert_eq!(later.since.unwrap().0, g0);
    assert_eq!(
        later.observed_at.unwrap().0,
        g0 + SignedDuration::from_mins(10)
    );
    h.clock.advance(SignedDuration::from_mins(10));
    checker.answer(Health::Degraded);
    h.reconcile("production").await;
    assert_eq!(
        health().await.since.unwrap().0,
        g0 + SignedDuration::from_mins(20)
    );
}

#[tokio::test]
async fn ac044_ac045_recovery_is_measured_across_a_restart_and_only_on_recovery() {
    let (h, checker) = with_checker().await;
    watched_production(&h).await;
    checker.answer(Health::Degraded);
    h.reconcile("production").await;
    h.reconcile("production").await;
    let observed = |h: &Harness| {
        let text = h.metrics.encode();
        text.lines()
            .find(|l| {
                l.starts_with("hecate_gate_degraded_seconds_count")
                    && l.contains("gate=\"production\"")
            })
            .map(|l| l.rsplit(' ').next().unwrap().to_string())
    };
    assert_eq!(observed(&h), None, "AC-045: still Degraded records nothing");

    // A fresh reconciler (a restarted controller) thirty minutes later sees it healthy:
    // the outage is measured from the `since` the first one persisted.
    let (restarted, checker) = with_checker_in(&h).await;
    restarted
        .clock
        .set(h.clock.now() + SignedDuration::from_mins(30));
    checker.answer(Health::Healthy);
    restarted.reconcile("production").await;
    let text = restarted.metrics.encode();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name) && l.contains("gate=\"production\""))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    assert_eq!(line("hecate_gate_degraded_seconds_count"), 1.0);
    assert_eq!(line("hecate_gate_degraded_seconds_sum"), 1800.0);
}

/// A second reconciler (fresh metrics, its own clock) over `h`'s namespace.
async fn with_checker_in(h: &Harness) -> (Harness, Arc<Scripted>) {
    let checker = Arc::new(Scripted::default());
    let mut registry = health::Checkers::new();
    registry.register(checker.clone()).unwrap();
    (h.sibling(registry, verify::Verifiers::new()), checker)
}

/// A `flagger` verifier answering whatever the test last set.
struct Canary(Mutex<Result<Look, String>>);

impl Canary {
    /// Says `Succeeded` (verified) or `Failed` (a final no) with `message`; `None`:
    /// still progressing.
    fn says(&self, verified: Option<bool>, message: &str) {
        let seen = match verified {
            Some(true) => Seen::Pass,
            Some(false) => Seen::Refused,
            None => Seen::NotYet,
        };
        *self.0.lock().unwrap() = Ok(Look {
            seen,
            value: String::new(),
            message: message.into(),
        });
    }
}

impl Verifier for Canary {
    fn name(&self) -> &str {
        "flagger"
    }
    fn look<'a>(
        &'a self,
        _config: Option<&'a Value>,
        _subject: &'a Subject<'a>,
    ) -> BoxFuture<'a, Result<Look, VerifyError>> {
        let answer = self.0.lock().unwrap().clone();
        Box::pin(async move { answer.map_err(VerifyError::NotFound) })
    }
}

async fn verifying(first: (Option<bool>, &str)) -> (Harness, Arc<Canary>) {
    let canary = Arc::new(Canary(Mutex::new(Err("unset".into()))));
    canary.says(first.0, first.1);
    let mut verifiers = verify::Verifiers::new();
    verifiers.register(canary.clone()).unwrap();
    let h = Harness::with(health::Checkers::new(), verifiers).await;
    let mut spec = gate_spec(true, &[], false);
    spec.verify = vec![Verification {
        uses: "flagger".into(),
        with: Some(serde_json::json!({"name": "podinfo"})),
    }];
    create_gate(&h, "staging", spec).await;
    auto_gate(&h, "production", &["staging"]).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    let passage = h.the_passage().await;
    h.finish(&passage, PassagePhase::Succeeded, "").await;
    (h, canary)
}

#[tokio::test]
async fn ac051_a_failed_canary_stops_the_bundle_reaching_production() {
    let (h, _canary) =
        verifying((Some(false), "Canary podinfo failed after 3 failed checks")).await;
    h.reconcile("staging").await;
    let status = h.bundle("b1").await.status.unwrap_or_default();
    assert!(status.cleared.is_empty() && status.blocked.is_empty());
    // A "no" is final for the crossing (DECISION 139): recorded on the Bundle, where
    // production reads it, and on the Gate's condition and occupant.
    assert_eq!(status.unverified.len(), 1, "{status:?}");
    assert!(status.unverified[0].reason.contains("3 failed checks"));
    let ready = h.ready("staging").await;
    assert_eq!(ready.reason, "VerificationFailed");
    assert!(
        ready.message.contains("3 failed checks"),
        "{}",
        ready.message
    );
    let current = h.gate("staging").await.status.unwrap().current.unwrap();
    assert_eq!(current.verified, Some(false));
    let verification = h.the_passage().await.status.unwrap().verification.unwrap();
    assert_eq!(verification.phase, VerificationPhase::Failed);
    h.reconcile("production").await;
    assert_eq!(h.passages().await.len(), 1, "no production Passage");
}

#[tokio::test]
async fn ac052_ac054_a_passing_canary_clears_even_when_its_verdict_comes_late() {
    let (h, canary) = verifying((None, "Canary podinfo is Progressing")).await;
    h.reconcile("staging").await;
    assert!(
        h.bundle("b1")
            .await
            .status
            .unwrap_or_default()
            .cleared
            .is_empty()
    );
    let progress = h.the_passage().await.status.unwrap().verification.unwrap();
    assert_eq!(progress.phase, VerificationPhase::Verifying);
    assert_eq!(
        progress.verifiers[0].message,
        "Canary podinfo is Progressing"
    );
    assert_eq!(h.ready("staging").await.reason, "Verifying");
    canary.says(Some(true), "Canary podinfo Succeeded");
    h.reconcile("staging").await;
    assert!(
        h.bundle("b1")
            .await
            .status
            .unwrap_or_default()
            .cleared
            .is_empty(),
        "the next look is 30 s away: nothing looked yet"
    );
    h.clock.advance(SignedDuration::from_secs(30));
    for _ in 0..3 {
        h.reconcile("staging").await;
    }
    let status = h.gate("staging").await.status.unwrap();
    assert_eq!(status.history.len(), 1);
    assert_eq!(
        status.current.unwrap().verified,
        Some(true),
        "Q3: a verified occupant says so"
    );
    assert_eq!(h.bundle("b1").await.status.unwrap().cleared.len(), 1);
    assert_eq!(h.ready("staging").await.reason, "Idle");
}

#[tokio::test]
async fn ac053_an_unknown_verifier_never_passes() {
    // Refused before any crossing (DECISION 168): the release never lands only to meet
    // a verifier that cannot judge it. (The reference's reconcile failed after it.)
    let h = Harness::new().await;
    let mut spec = gate_spec(true, &[], false);
    spec.verify = vec![Verification {
        uses: "nonesuch".into(),
        with: None,
    }];
    create_gate(&h, "staging", spec).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    let ready = h.ready("staging").await;
    assert_eq!(
        (ready.status, ready.reason.as_str()),
        (hecate_types::ConditionStatus::False, "InvalidSteps")
    );
    assert!(
        ready
            .message
            .contains(r#"verify[0] (nonesuch): no verifier is called "nonesuch""#),
        "{}",
        ready.message
    );
    assert!(h.passages().await.is_empty(), "nothing crossed");
    assert!(
        h.bundle("b1")
            .await
            .status
            .unwrap_or_default()
            .cleared
            .is_empty()
    );
}

/// Passage `name` of `h`'s namespace.
async fn passage_named(h: &Harness, name: &str) -> Passage {
    h.env.api::<Passage>().get(name).await.unwrap()
}

#[tokio::test]
async fn a_no_rolls_back_by_itself_once_and_a_failed_rollback_stops() {
    let (h, canary) = verifying((Some(true), "Canary podinfo succeeded")).await;
    let mut gate = h.gate("staging").await;
    gate.spec.rollback = Some(RollbackPolicy { auto: true });
    h.env
        .api::<Gate>()
        .replace("staging", &PostParams::default(), &gate)
        .await
        .unwrap();
    h.reconcile("staging").await;
    assert_eq!(
        h.gate("staging")
            .await
            .status
            .unwrap()
            .current
            .unwrap()
            .verified,
        Some(true)
    );

    // b2 crosses, and its verification says no.
    canary.says(Some(false), "Canary podinfo failed after 2 failed checks");
    // A second later: creation times, to the second, order the Bundles.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    h.clock.advance(SignedDuration::from_mins(1));
    bundle(&h.env, "b2").await;
    h.reconcile("staging").await;
    let crossing = passage_named(&h, "staging-2").await;
    assert_eq!(crossing.spec.bundle, "b2");
    h.finish(&crossing, PassagePhase::Succeeded, "").await;
    h.clock.advance(SignedDuration::from_mins(1));
    h.reconcile("staging").await;

    // The Gate goes back to b1 by itself, as the controller, saying what it undoes.
    let rollback = passage_named(&h, "staging-3").await;
    assert_eq!(rollback.spec.bundle, "b1");
    assert_eq!(rollback.spec.actor, "controller");
    assert_eq!(
        rollback
            .annotations()
            .get(wellknown::ANNOTATION_ROLLBACK_OF)
            .map(String::as_str),
        Some("staging-2")
    );
    let started = h.event("RollbackStarted").await;
    assert!(
        started
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("b2 was not verified (staging-2): rolling back to b1"),
        "{started:?}"
    );
    assert!(
        h.bundle("b2")
            .await
            .status
            .unwrap()
            .unverified
            .iter()
            .any(|c| c.gate == "staging")
    );

    // The rollback fails too: nothing more opens, and the Gate says why.
    h.finish(&rollback, PassagePhase::Failed, "flux-wait: timed out")
        .await;
    for _ in 0..2 {
        h.reconcile("staging").await;
    }
    assert_eq!(h.passages().await.len(), 3, "never a loop");
    let ready = h.ready("staging").await;
    assert!(
        ready.message.contains("itself a rollback (of staging-2)"),
        "{ready:?}"
    );
}

/// staging, automatic, soaking for five minutes: b1 has just crossed it (its Passage
/// succeeded now), not yet looked at.
async fn soaking_staging() -> (Harness, Passage) {
    let mut verifiers = verify::Verifiers::new();
    verifiers.register(Arc::new(verify::SoakVerifier)).unwrap();
    let h = Harness::with(health::Checkers::new(), verifiers).await;
    let mut spec = gate_spec(true, &[], false);
    spec.verify = vec![Verification {
        uses: "soak".into(),
        with: Some(serde_json::json!({"duration": "5m"})),
    }];
    create_gate(&h, "staging", spec).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    let passage = h.the_passage().await;
    let mut finished = passage.clone();
    finished.status = Some(PassageStatus {
        phase: Some(PassagePhase::Succeeded),
        finished_at: Some(hecate_types::Time(h.clock.now())),
        ..PassageStatus::default()
    });
    h.env.write_status(&finished).await;
    (h, passage)
}

#[tokio::test]
async fn a_soak_wakes_the_gate_when_it_ends_and_only_then_clears() {
    let (h, passage) = soaking_staging().await;

    // Nothing to poll: the Gate sleeps until the soak's end, to the second.
    let outcome = h.reconcile("staging").await;
    assert_eq!(
        outcome.requeue_after,
        Some(std::time::Duration::from_secs(5 * 60))
    );
    let ready = h.ready("staging").await;
    assert_eq!(ready.reason, "Verifying");
    assert_eq!(
        ready.message,
        format!(
            "verifying passage {}: soak has not decided",
            passage.name_any()
        )
    );
    let record = h.the_passage().await.status.unwrap().verification.unwrap();
    assert!(
        record.verifiers[0].message.starts_with("soaking until"),
        "{:?}",
        record.verifiers[0]
    );
    h.clock.advance(SignedDuration::from_mins(2));
    assert_eq!(
        h.reconcile("staging").await.requeue_after,
        Some(std::time::Duration::from_secs(3 * 60)),
        "a reconcile in between does not move the end"
    );
    assert!(
        h.bundle("b1")
            .await
            .status
            .unwrap_or_default()
            .cleared
            .is_empty()
    );

    h.clock.advance(SignedDuration::from_mins(3));
    h.reconcile("staging").await;
    assert_eq!(h.bundle("b1").await.status.unwrap().cleared.len(), 1);
    let verification = h.the_passage().await.status.unwrap().verification.unwrap();
    assert_eq!(verification.phase, VerificationPhase::Verified);
}

#[tokio::test]
async fn a_soak_records_why_its_clock_started_again() {
    let (h, _) = soaking_staging().await;
    h.reconcile("staging").await;

    // Two minutes in, the Gate's health turns: the soak looks at once, not at its
    // end, and records the interruption with why.
    h.clock.advance(SignedDuration::from_mins(2));
    let turned = h.clock.now();
    let mut gate = h.gate("staging").await;
    let status = gate.status.get_or_insert_with(Default::default);
    status.health = Some(hecate_types::HealthReport {
        status: Health::Degraded,
        issues: vec!["Kustomization podinfo: Ready=False".into()],
        details: None,
        observed_at: Some(hecate_types::Time(turned)),
        since: Some(hecate_types::Time(turned)),
    });
    h.env.write_status(&gate).await;
    h.clock.advance(SignedDuration::from_secs(1));
    h.reconcile("staging").await;
    let soak = &h
        .the_passage()
        .await
        .status
        .unwrap()
        .verification
        .unwrap()
        .verifiers[0];
    assert_eq!(soak.restarts.len(), 1, "{soak:?}");
    assert_eq!(soak.restarts[0].at, hecate_types::Time(turned));
    assert!(
        soak.restarts[0]
            .reason
            .starts_with("the Gate turned Degraded at")
            && soak.restarts[0]
                .reason
                .contains("Kustomization podinfo: Ready=False"),
        "{:?}",
        soak.restarts[0]
    );
    assert_eq!(soak.passes, 0);
}
