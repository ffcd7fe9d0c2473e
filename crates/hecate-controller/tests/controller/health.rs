//! A Gate's health and verification through reconciles (AC-039 – AC-045, AC-051 –
//! AC-054), with checkers and verifiers the test controls.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use hecate_controller::verify::{self, Verdict, Verifier, VerifyError};
use hecate_steps::clock::Clock as _;
use hecate_steps::health::{self, CheckResult, Checker};
use hecate_types::{Health, HealthCheck, PassagePhase, PassageStatus, Verification};
use jiff::{SignedDuration, Timestamp};
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
struct Canary(Mutex<Result<Verdict, String>>);

impl Canary {
    fn says(&self, verified: bool, reason: &str) {
        *self.0.lock().unwrap() = Ok(Verdict {
            verified,
            done: true,
            reason: reason.into(),
        });
    }
}

impl Verifier for Canary {
    fn name(&self) -> &str {
        "flagger"
    }
    fn verify<'a>(
        &'a self,
        _config: Option<&'a Value>,
        _namespace: &'a str,
    ) -> BoxFuture<'a, Result<Verdict, VerifyError>> {
        let answer = self.0.lock().unwrap().clone();
        Box::pin(async move { answer.map_err(VerifyError::NotFound) })
    }
}

async fn verifying(first: (bool, &str)) -> (Harness, Arc<Canary>) {
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
    let (h, _canary) = verifying((false, "Canary podinfo Failed after 3 failed check(s)")).await;
    h.reconcile("staging").await;
    let status = h.bundle("b1").await.status.unwrap_or_default();
    assert!(status.cleared.is_empty() && status.blocked.is_empty());
    let ready = h.ready("staging").await;
    assert_eq!(ready.reason, "Verifying");
    assert!(
        ready.message.contains("3 failed check"),
        "{}",
        ready.message
    );
    h.reconcile("production").await;
    assert_eq!(h.passages().await.len(), 1, "no production Passage");
}

#[tokio::test]
async fn ac052_ac054_a_passing_canary_clears_even_when_its_verdict_comes_late() {
    let (h, canary) = verifying((false, "Canary podinfo is Progressing")).await;
    h.reconcile("staging").await;
    assert!(
        h.bundle("b1")
            .await
            .status
            .unwrap_or_default()
            .cleared
            .is_empty()
    );
    canary.says(true, "Canary podinfo Succeeded");
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
async fn ac053_an_unknown_verifier_refuses() {
    let h = Harness::new().await;
    let mut spec = gate_spec(true, &[], false);
    spec.verify = vec![Verification {
        uses: "nonesuch".into(),
        with: None,
    }];
    create_gate(&h, "staging", spec).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    let passage = h.the_passage().await;
    h.finish(&passage, PassagePhase::Succeeded, "").await;
    let error = h
        .reconciler
        .reconcile_named(&h.env.namespace, "staging")
        .await
        .expect_err("an unknown verifier is an error");
    assert!(error.to_string().contains("nonesuch"), "{error}");
    assert!(
        h.bundle("b1")
            .await
            .status
            .unwrap_or_default()
            .cleared
            .is_empty()
    );
}
