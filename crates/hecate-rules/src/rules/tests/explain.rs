//! Spec §11.8 (AC-076 – AC-092), AC-155 and AC-159, and a reviewed snapshot of the
//! Explanation for every State and every BlockerKind.

use hecate_types::{
    Bundle, Gate, Health, Passage, PassagePhase::*, StepPhase, Verification, VerificationPhase,
    Window,
};
use pretty_assertions::assert_eq;

use crate::model::{BlockerKind, Explanation, Remedy, State};
use crate::rules::eligibility::Code;
use crate::rules::explain::explain;
use crate::rules::fixtures::*;
use crate::rules::snapshot::NamespaceSnapshot;
use crate::rules::verification;

fn explain_at(gate: Gate, bundles: Vec<Bundle>, passages: Vec<Passage>) -> Explanation {
    let snapshot = NamespaceSnapshot::new(NS, vec![gate.clone()], bundles, passages);
    explain(&snapshot, &gate, t0())
}

fn kinds(x: &Explanation) -> Vec<BlockerKind> {
    x.blockers.iter().map(|b| b.kind).collect()
}

fn after(gate: Gate, upstream: &[&str]) -> Gate {
    let mut gate = gate;
    gate.spec.admits[0].after = upstream.iter().map(|s| s.to_string()).collect();
    gate
}

fn needing_approval(gate: Gate) -> Gate {
    let mut gate = gate;
    gate.spec.admits[0].require_approval = true;
    gate
}

fn suspended(gate: Gate) -> Gate {
    let mut gate = gate;
    gate.spec.suspend = true;
    gate
}

fn without_steps(gate: Gate) -> Gate {
    let mut gate = gate;
    gate.spec.passage = None;
    gate
}

fn auto(gate: Gate) -> Gate {
    let mut gate = gate;
    gate.spec.auto = true;
    gate
}

fn windowed(gate: Gate, windows: Vec<Window>) -> Gate {
    let mut gate = gate;
    gate.spec.windows = windows;
    gate
}

/// b1's crossing of `gate`, succeeded, with its verification at `phase`: a soak until
/// minute 30 while verifying, a prometheus "no" when failed.
fn verified_b1(gate: &str, phase: VerificationPhase) -> Passage {
    let mut passage = passage(gate, "b1", Some(Succeeded), -5);
    let mut verification = verification::begin(&verifying_gate(gate), t0());
    match phase {
        VerificationPhase::Failed => {
            verification.verifiers[0].phase = VerificationPhase::Failed;
            verification.verifiers[0].message = "error ratio 0.4 is not below 0.01".into();
        }
        VerificationPhase::Verifying => {
            verification.verifiers[0].message =
                "soaking until 2026-01-05T10:30:00Z (30m healthy from 2026-01-05T10:00:00Z)".into();
            verification.verifiers[0].next_look_at = Some(minutes(t0(), 30));
        }
        VerificationPhase::Verified => verification.verifiers[0].phase = phase,
        VerificationPhase::Superseded => verification::supersede(&mut verification, "b2", t0()),
    }
    verification::settle(&mut verification, t0());
    passage
        .status
        .get_or_insert_with(Default::default)
        .verification = Some(verification);
    passage
}

fn verifying_gate(name: &str) -> Gate {
    let mut gate = gate(name);
    gate.spec.verify = vec![Verification {
        uses: "prometheus".into(),
        with: Some(serde_json::json!({
            "address": "http://prometheus:9090",
            "query": "sum(rate(errors[5m]))",
            "successIf": "result < 0.01",
        })),
    }];
    gate
}

fn failed_b1() -> Passage {
    with_steps(
        with_message(
            passage("staging", "b1", Some(Failed), 0),
            "git-push: authentication failed",
        ),
        &[
            ("git-clone", StepPhase::Succeeded, "", ""),
            (
                "git-push",
                StepPhase::Failed,
                "GitAuthFailed",
                "the host rejected our credentials",
            ),
        ],
    )
}

fn held_b1() -> Passage {
    with_evidence(
        with_steps(
            passage("staging", "b1", Some(Running), 0),
            &[(
                "evidence-gate",
                StepPhase::Running,
                "",
                "change gate is holding",
            )],
        ),
        "hold",
        Some(62),
        &["no approver recorded", "the SBOM has a critical finding"],
    )
}

fn waiting_b1() -> Passage {
    with_steps(
        passage("staging", "b1", Some(Running), 0),
        &[
            ("git-push", StepPhase::Succeeded, "", ""),
            (
                "evidence-gate",
                StepPhase::Running,
                "",
                "change gate is holding (risk 20): awaiting a human approval",
            ),
        ],
    )
}

/// production-b1 rolling b1 out to three clusters: the canary failed at its fifth
/// step, which wave 1 tolerates not; eu-1 and us-1 not started.
fn halted_b1() -> Passage {
    use hecate_types::{RolloutPhase, RolloutStatus, TargetPhase, TargetStatus};
    let mut p = passage("production", "b1", Some(Running), 0);
    let target = |name: &str, wave: i32, phase: TargetPhase| TargetStatus {
        name: name.into(),
        wave,
        phase,
        ..TargetStatus::default()
    };
    p.status.get_or_insert_with(Default::default).rollout = Some(RolloutStatus {
        phase: RolloutPhase::Halted,
        message: "halted: canary failed at step 5 (FluxDegraded); wave 1 (canary) tolerates none"
            .into(),
        targets: vec![
            TargetStatus {
                attempt: 1,
                current_step: 4,
                reason: "FluxDegraded".into(),
                message: "Kustomization flux-system/apps: Ready=False, HealthCheckFailed".into(),
                ..target("canary", 0, TargetPhase::Failed)
            },
            target("eu-1", 1, TargetPhase::Pending),
            target("us-1", 2, TargetPhase::Pending),
        ],
        ..RolloutStatus::default()
    });
    p
}

#[test]
fn a_halted_rollout_names_its_failed_targets_and_what_a_person_may_do() {
    let x = explain_at(gate("production"), vec![bundle("b1", 0)], vec![halted_b1()]);
    assert_eq!(x.state, State::Crossing, "the Passage still holds the Gate");
    assert_eq!(
        x.summary,
        "rolling b1 out: 1.0.0 on 0 of 3 targets; canary failed; halted"
    );
    assert_eq!(kinds(&x), [BlockerKind::RolloutHalted]);
    let halted = &x.blockers[0];
    assert_eq!(
        halted.detail,
        "canary failed at step 5 (FluxDegraded); wave 1 (canary) tolerates none"
    );
    assert_eq!(
        halted.fix,
        format!("cross the failed targets again: hecate retry production-b1 -n {NS}")
    );
    let offered: Vec<&str> = halted
        .action
        .iter()
        .chain(halted.alternatives.iter().map(|a| &a.action))
        .map(|r| match r {
            Remedy::RetryTargets { targets, .. } if targets == &["canary"] => "retry",
            Remedy::AcceptFailures { targets, .. } if targets == &["canary"] => "accept",
            Remedy::RollbackTargets {
                gate,
                passage,
                targets,
            } if gate == "production" && passage == "production-b1" && targets == &["canary"] => {
                "roll back"
            }
            Remedy::Abort { passage } if passage == "production-b1" => "abort",
            other => panic!("not offered for a halted rollout: {other:?}"),
        })
        .collect();
    assert_eq!(offered, ["retry", "accept", "roll back", "abort"]);
    let rollout = x
        .crossing
        .and_then(|c| c.rollout)
        .expect("the rollout is described");
    assert_eq!((rollout.phase.as_str(), rollout.of), ("Halted", 3));
    assert_eq!(rollout.failed.len(), 1);
    assert_eq!(
        (
            rollout.failed[0].target.as_str(),
            rollout.failed[0].step,
            rollout.failed[0].reason.as_str()
        ),
        ("canary", Some(5), "FluxDegraded"),
        "the step is counted from 1, as the words say"
    );
}

#[test]
fn a_rollout_under_way_says_where_the_bundle_is() {
    use hecate_types::{RolloutPhase, TargetPhase};
    let mut p = halted_b1();
    let record = p
        .status
        .as_mut()
        .and_then(|s| s.rollout.as_mut())
        .expect("a rollout");
    record.phase = RolloutPhase::Progressing;
    record.message = "wave 2 (eu): eu-1 crossing".into();
    record.targets[0].phase = TargetPhase::Succeeded;
    record.targets[1].phase = TargetPhase::Running;
    let x = explain_at(gate("production"), vec![bundle("b1", 0)], vec![p]);
    assert_eq!(x.state, State::Crossing);
    assert_eq!(
        x.summary,
        "rolling b1 out: 1.0.0 on 1 of 3 targets; eu-1 crossing"
    );
    assert!(x.blockers.is_empty(), "{:?}", x.blockers);
    let rollout = x
        .crossing
        .and_then(|c| c.rollout)
        .expect("the rollout is described");
    assert_eq!(rollout.message, "wave 2 (eu): eu-1 crossing");
    assert_eq!(
        (rollout.on, rollout.crossing),
        (vec!["canary".to_string()], vec!["eu-1".to_string()])
    );
}

#[test]
fn ac076_a_suspended_gate() {
    let x = explain_at(suspended(gate("staging")), vec![bundle("b1", 0)], vec![]);
    assert_eq!(x.state, State::Blocked);
    assert_eq!(kinds(&x), [BlockerKind::Suspended]);
    assert!(x.summary.contains("suspended"), "{}", x.summary);
    assert!(x.blockers[0].fix.contains("suspend"));
    assert!(
        x.eligible.is_empty() && x.waiting.is_empty(),
        "nothing else is judged"
    );
}

#[test]
fn ac077_a_gate_with_no_steps() {
    let x = explain_at(
        without_steps(gate("staging")),
        vec![bundle("b1", 0)],
        vec![],
    );
    assert_eq!(x.state, State::Blocked);
    assert_eq!(kinds(&x), [BlockerKind::NoPassage]);
    assert!(x.summary.contains("no steps"), "{}", x.summary);
}

#[test]
fn ac078_a_gate_with_nothing_to_promote() {
    let x = explain_at(gate("staging"), vec![], vec![]);
    assert_eq!(x.state, State::Idle);
    assert_eq!(kinds(&x), [BlockerKind::NoBundles]);
    assert!(x.summary.contains("no Bundle"), "{}", x.summary);
}

#[test]
fn ac079_a_bundle_that_has_not_cleared_upstream() {
    let x = explain_at(
        after(gate("staging"), &["dev"]),
        vec![bundle("b1", 0)],
        vec![],
    );
    assert_eq!(x.state, State::Blocked);
    assert_eq!(kinds(&x), [BlockerKind::Upstream]);
    assert_eq!(x.summary, "1 Bundle cannot cross: has not cleared dev");
    assert!(x.blockers[0].detail.contains("has not cleared dev"));
    assert!(x.blockers[0].fix.contains("upstream"));
}

#[test]
fn ac080_a_bundle_awaiting_approval() {
    let x = explain_at(
        needing_approval(gate("staging")),
        vec![bundle("b1", 0)],
        vec![],
    );
    assert_eq!(x.state, State::Blocked);
    assert_eq!(kinds(&x), [BlockerKind::NotApproved]);
    assert!(x.blockers[0].detail.contains("awaiting approval"));
    assert!(
        x.blockers[0].fix.contains("hecate approve b1"),
        "{}",
        x.blockers[0].fix
    );
}

#[test]
fn ac081_a_manual_gate_with_something_ready() {
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![]);
    assert_eq!(x.state, State::Ready);
    assert_eq!(kinds(&x), [BlockerKind::Manual]);
    assert!(x.summary.contains("ready to cross"), "{}", x.summary);
    assert!(
        x.blockers[0]
            .fix
            .contains("hecate promote staging --bundle b1"),
        "{}",
        x.blockers[0].fix
    );
}

#[test]
fn ac082_an_in_flight_crossing() {
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![waiting_b1()]);
    assert_eq!(x.state, State::Crossing);
    assert!(
        x.summary.contains("evidence-gate") && x.summary.contains("awaiting a human approval"),
        "{}",
        x.summary
    );
    assert_eq!(kinds(&x), [BlockerKind::StepWaiting]);
}

#[test]
fn ac083_a_failed_crossing() {
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![failed_b1()]);
    assert_eq!(x.state, State::Failed);
    assert_eq!(kinds(&x), [BlockerKind::PassageFailed, BlockerKind::Manual]);
    let detail = &x.blockers[0].detail;
    assert_eq!(
        detail,
        "the last crossing of b1 failed at git-push [GitAuthFailed]: the host rejected our credentials"
    );
    assert_eq!(x.summary, *detail);
}

#[test]
fn ac084_an_older_failure_is_not_a_blocker() {
    let old = with_message(passage("staging", "b0", Some(Failed), -60), "boom");
    let recent = passage("staging", "b1", Some(Succeeded), 0);
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![old, recent]);
    assert!(!kinds(&x).contains(&BlockerKind::PassageFailed));
    assert_eq!(x.state, State::Ready);
}

#[test]
fn ac085_a_closed_window() {
    let g = windowed(auto(gate("staging")), vec![window("0 6 * * 1-5", "1h")]);
    let x = explain_at(g, vec![bundle("b1", 0)], vec![]);
    assert_eq!(x.state, State::Blocked);
    assert_eq!(kinds(&x), [BlockerKind::WindowClosed]);
    assert_eq!(x.eligible, ["b1"], "still eligible, queued");
    // It says when the window opens: Wednesday 06:00 UTC.
    assert_eq!(
        x.blockers[0].until.as_ref().map(|t| t.0),
        Some(at("2026-08-12T06:00:00Z"))
    );
    // In words, not as a raw timestamp.
    assert!(
        x.blockers[0]
            .detail
            .ends_with("until Wed 12 Aug 2026 06:00 UTC"),
        "{}",
        x.blockers[0].detail
    );
}

#[test]
fn ac086_health_is_reported() {
    let g = with_health(
        gate("staging"),
        Health::Degraded,
        &["Kustomization podinfo: Ready=False"],
    );
    let x = explain_at(g, vec![], vec![]);
    assert_eq!(x.health, Some(Health::Degraded));
    assert_eq!(x.state, State::Idle);
    assert_eq!(kinds(&x), [BlockerKind::Unhealthy, BlockerKind::NoBundles]);
    assert!(x.blockers[0].detail.contains("Kustomization podinfo"));
}

#[test]
fn ac087_an_invalid_gate() {
    // Judged from the Gate itself (DECISION 168), not from the controller's condition.
    let mut commit = step("git-commit");
    commit.with = Some(serde_json::json!({"mesage": "promote"}));
    let g = gate_with_steps(gate("staging"), vec![step("git-clone"), commit]);
    let x = explain_at(g, vec![bundle("b1", 0)], vec![]);
    assert_eq!(x.state, State::Blocked);
    assert_eq!(kinds(&x), [BlockerKind::InvalidSteps]);
    assert!(x.blockers[0].detail.contains("mesage"));
}

#[test]
fn ac088_the_current_bundle_is_not_waiting() {
    let x = explain_at(
        with_current(gate("staging"), "b1"),
        vec![bundle("b1", 0)],
        vec![],
    );
    assert_eq!(x.current.as_deref(), Some("b1"));
    assert!(x.waiting.is_empty());
    assert_eq!(x.state, State::Idle);
    assert!(x.blockers.is_empty());
}

#[test]
fn ac089_waiting_carries_a_stable_code() {
    let x = explain_at(
        needing_approval(gate("staging")),
        vec![bundle("b1", 0)],
        vec![],
    );
    assert_eq!(x.waiting.len(), 1);
    assert_eq!(x.waiting[0].kind, Some(Code::AwaitingApproval));
    assert!(!x.waiting[0].reason.is_empty());
}

#[test]
fn ac090_an_upstream_wait_is_not_an_approval_wait() {
    let x = explain_at(
        after(gate("staging"), &["dev"]),
        vec![bundle("b1", 0)],
        vec![],
    );
    assert_eq!(x.waiting.len(), 1);
    assert_eq!(x.waiting[0].kind, Some(Code::UpstreamNotCleared));
}

#[test]
fn ac091_a_held_change_gate() {
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![held_b1()]);
    assert_eq!(kinds(&x), [BlockerKind::ChangeHeld]);
    let detail = &x.blockers[0].detail;
    for part in ["hold", "62", "no approver recorded", "critical finding"] {
        assert!(detail.contains(part), "{detail} lacks {part}");
    }
    assert!(!x.blockers[0].fix.is_empty());
    assert_eq!(x.evidence.as_ref().and_then(|e| e.risk), Some(62));
    assert!(
        x.summary.contains("held by the change gate"),
        "{}",
        x.summary
    );
}

#[test]
fn ac092_an_approved_verdict_is_not_held() {
    let p = with_evidence(
        with_steps(
            passage("staging", "b1", Some(Running), 0),
            &[(
                "flux-wait",
                StepPhase::Running,
                "",
                "waiting for Kustomization",
            )],
        ),
        "approve",
        Some(5),
        &[],
    );
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![p]);
    assert_eq!(kinds(&x), [BlockerKind::StepWaiting]);
}

/// A crossing stuck on `flux-wait`: the revisions said short, as one compares them at a
/// glance, and how long the step may go on waiting (its own `timeout`).
#[test]
fn a_flux_wait_says_what_flux_has_not_applied_and_when_the_step_gives_up() {
    let flux = crate::rules::flux::evaluate(
        Some(&serde_json::json!({
            "metadata": {"generation": 1},
            "status": {
                "observedGeneration": 1,
                "lastAppliedRevision": "env/production@sha1:f577c28e0b8a4d7f9c1b2a3d4e5f60718293a4b5",
                "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded"}],
            },
        })),
        Some("46eeba7c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a"),
        jiff::SignedDuration::from_mins(10),
        t0(),
    );
    let message = format!("Kustomization/acme/shop-production: {}", flux.issues[0]);
    let mut p = with_steps(
        passage("production", "b1", Some(Running), 0),
        &[("flux-wait", StepPhase::Running, "", &message)],
    );
    p.spec.steps[0].timeout = "30m".into();
    let x = explain_at(gate("production"), vec![bundle("b1", 0)], vec![p]);
    assert_eq!(kinds(&x), [BlockerKind::StepWaiting]);
    assert_eq!(
        x.blockers[0].detail,
        "flux-wait: Kustomization/acme/shop-production: Flux has not applied 46eeba7 yet; the last applied is f577c28 (the step gives up 30m after it started)"
    );
}

/// The newest crossing was aborted after its push: the Gate says what stays on its
/// branch; once another crossing follows, nothing.
#[test]
fn an_aborted_crossing_leaves_its_pushed_commit_said() {
    let aborted = |bundle: &str, m: i64| {
        let mut p = passage("production", bundle, Some(Aborted), m);
        p.status.get_or_insert_with(Default::default).steps = vec![hecate_types::StepStatus {
            uses: "git-push".into(),
            phase: StepPhase::Succeeded,
            output: Some(
                serde_json::json!({"branch": "env/production", "sha": "46eeba7c3d", "pushed": true}),
            ),
            ..Default::default()
        }];
        p
    };
    let x = explain_at(
        gate("production"),
        vec![bundle("b1", 0)],
        vec![aborted("b1", 0)],
    );
    let left = x.left_behind.expect("the pushed commit is said");
    assert_eq!(
        (
            left.passage.as_str(),
            left.branch.as_str(),
            left.commit.as_str()
        ),
        ("production-b1", "env/production", "46eeba7c3d")
    );
    let later = passage("production", "b2", Some(Succeeded), 5);
    let x = explain_at(
        gate("production"),
        vec![bundle("b1", 0), bundle("b2", 1)],
        vec![later, aborted("b1", 0)],
    );
    assert_eq!(x.left_behind, None, "the next crossing replaced it");
}

#[test]
fn ac155_an_aborted_latest_passage_is_not_a_failure() {
    let p = with_message(passage("staging", "b1", Some(Aborted), 0), "aborted");
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![p]);
    assert!(!kinds(&x).contains(&BlockerKind::PassageFailed));
    assert_eq!(x.state, State::Ready);
}

#[test]
fn ac159_an_active_passage_with_no_running_step() {
    let p = passage("staging", "b1", None, 0);
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![p]);
    assert_eq!(x.state, State::Crossing);
    // Created just now: nothing is wrong yet, and it says what happens next.
    assert_eq!(x.summary, "crossing b1: staging-b1 is about to start");
    assert!(x.blockers.is_empty());
    let crossing = x.crossing.expect("the crossing is described");
    assert!(!crossing.stalled);
    assert_eq!(crossing.started_at, None);
}

#[test]
fn a_crossing_that_never_starts_is_named() {
    let p = passage("staging", "b1", None, -3);
    let g = gate("staging");
    let x = explain_at(g.clone(), vec![bundle("b1", 0)], vec![p.clone()]);
    assert_eq!(x.state, State::Crossing);
    assert_eq!(x.summary, "crossing b1, but staging-b1 has not started");
    assert_eq!(kinds(&x), [BlockerKind::NotStarted]);
    assert_eq!(
        x.blockers[0].detail,
        "staging-b1 was created at 2026-08-11 11:57:00 UTC and has not started within 2 min: \
         is hecate-controller running?"
    );
    assert!(x.crossing.as_ref().is_some_and(|c| c.stalled));
    // Just inside the threshold it is not stalled yet, and the explanation says until
    // when it holds: the instant it would be.
    let fresh = passage("staging", "b1", None, -1);
    let snapshot = NamespaceSnapshot::new(NS, vec![g.clone()], vec![bundle("b1", 0)], vec![fresh]);
    let x = explain(&snapshot, &g, t0());
    assert!(x.blockers.is_empty(), "{x:?}");
    assert_eq!(
        crate::rules::explain::unchanged_until(&snapshot, &g, t0()),
        Some(at("2026-08-11T12:01:00Z"))
    );
    // Once started, age never stalls it.
    let mut running = passage("staging", "b1", Some(Running), -30);
    running.status.as_mut().unwrap().started_at = Some(minutes(t0(), -29));
    let x = explain_at(g, vec![bundle("b1", 0)], vec![running]);
    assert!(x.blockers.is_empty());
}

#[test]
fn a_running_step_carries_its_age_and_attempts() {
    let mut p = waiting_b1();
    let step = &mut p.status.as_mut().unwrap().steps[1];
    step.started_at = Some(minutes(t0(), -15));
    step.attempts = 7;
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![p]);
    let step = x.crossing.and_then(|c| c.step).expect("a running step");
    assert_eq!(
        (
            step.uses.as_str(),
            step.started_at.as_ref().map(|t| t.0),
            step.attempts
        ),
        ("evidence-gate", Some(at("2026-08-11T11:45:00Z")), 7)
    );
    assert_eq!(step.invocations(), "looked 7 times", "each call was a look");
}

#[test]
fn bundles_stay_listed_during_a_crossing() {
    let g = needing_approval(gate("staging"));
    let bundles = vec![
        approved(bundle("b3", 3), "staging", "carol"),
        bundle("b2", 2),
        approved(bundle("b1", 1), "staging", "carol"),
    ];
    let p = passage("staging", "b1", Some(Running), 1);
    let x = explain_at(g, bundles, vec![p]);
    assert_eq!(x.state, State::Crossing);
    assert_eq!(x.eligible, ["b3"], "the Bundle crossing is not listed");
    let waiting: Vec<&str> = x.waiting.iter().map(|w| w.bundle.as_str()).collect();
    assert_eq!(waiting, ["b2"]);
    assert!(x.blockers.is_empty(), "nothing but the crossing is judged");
}

#[test]
fn eligible_bundles_that_failed_here_before_say_so() {
    // b1 failed here and is eligible again; b2 never crossed; b0 failed, then crossed.
    let mut b0_crossed = passage("staging", "b0", Some(Succeeded), 2);
    b0_crossed.metadata.name = Some("staging-b0-2".into());
    let b0_failed = with_message(passage("staging", "b0", Some(Failed), 1), "boom");
    let bundles = vec![bundle("b2", 2), bundle("b1", 0), bundle("b0", -1)];
    let x = explain_at(
        gate("staging"),
        bundles,
        vec![failed_b1(), b0_crossed, b0_failed],
    );
    assert_eq!(x.eligible, ["b2", "b1", "b0"]);
    let failed: Vec<(&str, &str, &str)> = x
        .failed_before
        .iter()
        .map(|f| (f.bundle.as_str(), f.passage.as_str(), f.reason.as_str()))
        .collect();
    assert_eq!(
        failed,
        [(
            "b1",
            "staging-b1",
            "failed at git-push [GitAuthFailed]: the host rejected our credentials"
        )]
    );
    assert_eq!(x.failed_before[0].outcome.as_str(), "failed");
}

#[test]
fn windows_are_described_in_words() {
    let g = windowed(
        gate("production"),
        vec![
            Window {
                deny: true,
                time_zone: "Europe/London".into(),
                ..window("0 0 * * 6", "48h")
            },
            window("0 9 * * 1-5", "8h"),
            window("0 22 * * *", "8h"),
            window("0 0 1 * *", "36h"),
        ],
    );
    let x = explain_at(g, vec![], vec![]);
    let texts: Vec<&str> = x.windows.iter().map(|w| w.text.as_str()).collect();
    // The clock is Tuesday 2026-08-11 12:00 UTC (13:00 in London).
    assert_eq!(
        texts,
        [
            "no crossings Sat 00:00 – Mon 00:00 Europe/London; next in force Sat 00:00",
            "crossings allowed Mon–Fri 09:00 – 17:00 UTC; open now; closes Tue 17:00",
            "crossings allowed daily 22:00 – 06:00 UTC; closed now; opens Tue 22:00",
            "crossings allowed from each `0 0 1 * *` UTC for 1 day 12 h; closed now; opens Tue 1 Sep 00:00",
        ]
    );
    assert_eq!(
        x.windows[0].next.as_ref().map(|t| t.0),
        Some(at("2026-08-14T23:00:00Z")),
        "Saturday midnight in London is 23:00 UTC in summer"
    );
    assert!(x.windows[1].open && !x.windows[1].deny);
}

#[test]
fn window_words_hold_until_they_would_read_differently() {
    // Next opening Tue 1 Sep 00:00: named by date until six days before, then by
    // weekday — so the explanation holds until 26 Aug 00:00, not until 1 Sep.
    let g = windowed(gate("production"), vec![window("0 0 1 * *", "36h")]);
    let snapshot = NamespaceSnapshot::new(NS, vec![g.clone()], vec![], vec![]);
    let until = crate::rules::explain::unchanged_until(&snapshot, &g, t0());
    assert_eq!(until, Some(at("2026-08-26T00:00:00Z")));
    let later = explain(&snapshot, &g, at("2026-08-26T00:00:00Z"));
    assert!(
        later.windows[0].text.ends_with("opens Tue 00:00"),
        "{}",
        later.windows[0].text
    );
}

#[test]
fn a_passage_of_another_gate_is_not_this_gates_crossing() {
    let p = passage("production", "b1", Some(Running), 0);
    let x = explain_at(gate("staging"), vec![bundle("b1", 0)], vec![p]);
    assert_eq!(x.state, State::Ready);
}

#[test]
fn the_approver_is_named_when_a_manual_gate_waits_for_a_request() {
    let g = needing_approval(gate("production"));
    let x = explain_at(
        g,
        vec![approved(bundle("b1", 0), "production", "carol")],
        vec![],
    );
    assert_eq!(x.state, State::Ready);
    assert!(
        x.blockers[0].detail.contains("someone other than carol"),
        "{}",
        x.blockers[0].detail
    );
}

#[test]
fn blockers_come_most_actionable_first() {
    // A failed crossing, degraded health and Bundles waiting for two reasons.
    let g = with_health(
        needing_approval(after(gate("staging"), &["dev"])),
        Health::Unknown,
        &[],
    );
    let bundles = vec![
        cleared(bundle("b2", 1), &["dev"]),
        bundle("b1", 0),
        cleared(bundle("b0", -1), &["dev"]),
    ];
    let x = explain_at(g, bundles, vec![failed_b1()]);
    assert_eq!(
        kinds(&x),
        [
            BlockerKind::PassageFailed,
            BlockerKind::Unhealthy,
            BlockerKind::NotApproved,
            BlockerKind::Upstream
        ]
    );
    assert_eq!(x.state, State::Failed);
    let waiting: Vec<&str> = x.waiting.iter().map(|w| w.bundle.as_str()).collect();
    assert_eq!(waiting, ["b2", "b1", "b0"], "newest first");
}

/// One Explanation per State and per BlockerKind, as JSON: reviewing this snapshot is
/// reviewing every sentence Explain can say.
#[test]
fn every_state_and_blocker_kind() {
    let b1 = || vec![bundle("b1", 0)];
    let scenarios: Vec<(&str, Explanation)> = vec![
        (
            "Suspended",
            explain_at(suspended(gate("staging")), b1(), vec![]),
        ),
        (
            "InvalidSteps",
            explain_at(
                gate_with_steps(gate("staging"), vec![step("flux-wiat")]),
                b1(),
                vec![],
            ),
        ),
        (
            "NoPassageTemplate",
            explain_at(without_steps(gate("staging")), b1(), vec![]),
        ),
        ("NoBundles", explain_at(gate("staging"), vec![], vec![])),
        (
            "AwaitingApproval",
            explain_at(needing_approval(gate("staging")), b1(), vec![]),
        ),
        (
            "UpstreamNotCleared",
            explain_at(after(gate("staging"), &["dev"]), b1(), vec![]),
        ),
        (
            "Rejected",
            explain_at(
                gate("staging"),
                vec![rejected(
                    bundle("b1", 0),
                    "staging",
                    "carol",
                    "the schema migration is not reversible",
                )],
                vec![],
            ),
        ),
        (
            "WindowClosed",
            explain_at(
                windowed(
                    gate("production"),
                    vec![Window {
                        deny: true,
                        time_zone: "Europe/London".into(),
                        ..window("0 0 * * 2", "24h")
                    }],
                ),
                b1(),
                vec![],
            ),
        ),
        (
            "PassageFailed",
            explain_at(gate("staging"), b1(), vec![failed_b1()]),
        ),
        (
            "StepWaiting",
            explain_at(gate("staging"), b1(), vec![waiting_b1()]),
        ),
        (
            "ChangeHeld",
            explain_at(gate("staging"), b1(), vec![held_b1()]),
        ),
        (
            "RolloutHalted",
            explain_at(gate("production"), b1(), vec![halted_b1()]),
        ),
        (
            "Unhealthy",
            explain_at(
                with_health(
                    gate("staging"),
                    Health::Degraded,
                    &["Kustomization podinfo: Ready=False"],
                ),
                vec![],
                vec![],
            ),
        ),
        ("AwaitingRequest", explain_at(gate("staging"), b1(), vec![])),
        (
            "NotStarted",
            explain_at(
                gate("staging"),
                b1(),
                vec![passage("staging", "b1", None, -3)],
            ),
        ),
        (
            "VerificationFailed",
            explain_at(
                with_current(verifying_gate("staging"), "b1"),
                b1(),
                vec![verified_b1("staging", VerificationPhase::Failed)],
            ),
        ),
        (
            "Ready-automatic",
            explain_at(auto(gate("dev")), b1(), vec![]),
        ),
        (
            "Idle-all-current",
            explain_at(with_current(gate("staging"), "b1"), b1(), vec![]),
        ),
    ];
    let states: std::collections::BTreeSet<&str> =
        scenarios.iter().map(|(_, x)| x.state.as_str()).collect();
    assert_eq!(states.len(), 5, "every State appears: {states:?}");
    let mut kinds_seen: Vec<BlockerKind> = scenarios.iter().flat_map(|(_, x)| kinds(x)).collect();
    kinds_seen.sort_by_key(|k| k.as_str());
    kinds_seen.dedup();
    assert_eq!(
        kinds_seen.len(),
        BlockerKind::ALL.len(),
        "every BlockerKind appears"
    );
    for (name, explanation) in scenarios {
        insta::assert_json_snapshot!(name, explanation);
    }
}

#[test]
fn an_automatic_gate_says_what_it_will_take_next() {
    let x = explain_at(
        auto(gate("dev")),
        vec![bundle("b1", 0), bundle("b2", 5)],
        vec![],
    );
    assert_eq!(x.state, State::Ready);
    assert!(x.summary.ends_with("will take b2 next"), "{}", x.summary);
}

#[test]
fn an_automatic_gate_does_not_promise_a_rollback() {
    // The controller only moves forward: older eligible Bundles are for people.
    let g = with_current(auto(gate("dev")), "b2");
    let x = explain_at(g, vec![bundle("b1", 0), bundle("b2", 5)], vec![]);
    assert_eq!(x.state, State::Idle);
    assert_eq!(x.eligible, ["b1"]);
    assert_eq!(x.ahead, 0, "a rollback candidate is not waiting to cross");
    assert_eq!(
        x.summary,
        "nothing newer than the current Bundle; 1 older Bundle could be rolled back to by hand"
    );
}

#[test]
fn only_bundles_newer_than_the_current_one_are_ahead() {
    // The demo's idle dev: it holds b3; b4 and b5 wait to cross, b1 and b2 are there
    // to roll back to, and stay listed for a person to choose.
    let bundles = || (1..=5).rev().map(|i| bundle(&format!("b{i}"), i)).collect();
    for g in [gate("dev"), auto(gate("dev"))] {
        let x = explain_at(with_current(g, "b3"), bundles(), vec![]);
        assert_eq!(x.eligible, ["b5", "b4", "b2", "b1"]);
        assert_eq!(x.ahead, 2);
    }
    // Holding the newest: all four are rollback candidates.
    let x = explain_at(with_current(auto(gate("dev")), "b5"), bundles(), vec![]);
    assert_eq!((x.eligible.len(), x.ahead), (4, 0));
    // Holding nothing (or a Bundle since deleted): every eligible Bundle is ahead.
    let x = explain_at(gate("dev"), bundles(), vec![]);
    assert_eq!((x.eligible.len(), x.ahead), (5, 5));
    let x = explain_at(with_current(gate("dev"), "gone"), bundles(), vec![]);
    assert_eq!((x.eligible.len(), x.ahead), (5, 5));
    // Emitted at the same moment as the current one is not newer (as for auto_next).
    let x = explain_at(
        with_current(gate("dev"), "b3"),
        vec![bundle("b3", 3), bundle("b3-twin", 3)],
        vec![],
    );
    assert_eq!((x.eligible.len(), x.ahead), (1, 0));
}

#[test]
fn an_automatic_gate_does_not_promise_a_retry() {
    // b1's crossing here was aborted (so no failed Passage is the latest), and the
    // controller never retries it by itself.
    let b1 = blocked(bundle("b1", 0), "dev", "aborted");
    let x = explain_at(auto(gate("dev")), vec![b1], vec![]);
    assert_eq!(x.state, State::Failed);
    assert_eq!(kinds(&x), [BlockerKind::PassageFailed]);
    assert!(
        x.blockers[0]
            .detail
            .contains("b1 did not cross here before: aborted; it is crossed again only when asked"),
        "{}",
        x.blockers[0].detail
    );
    assert!(x.blockers[0].fix.contains("hecate promote dev --bundle b1"));
}

#[test]
fn downstream_says_a_bundle_is_being_verified_upstream_and_until_when() {
    let staging = verifying_gate("staging");
    let production = after(gate("production"), &["staging"]);
    let snapshot = NamespaceSnapshot::new(
        NS,
        vec![staging, production.clone()],
        vec![bundle("b1", 0)],
        vec![verified_b1("staging", VerificationPhase::Verifying)],
    );
    let x = explain(&snapshot, &production, t0());
    assert_eq!(x.state, State::Blocked);
    let blocker = &x.blockers[0];
    assert_eq!(blocker.kind, BlockerKind::Upstream);
    assert!(
        blocker
            .detail
            .starts_with("b1: being verified in staging: prometheus: soaking until"),
        "{}",
        blocker.detail
    );
    assert_eq!(
        blocker.until,
        Some(minutes(t0(), 30)),
        "until the soak ends"
    );
    assert_eq!(blocker.action, None, "no crossing upstream would help");
}

#[test]
fn downstream_says_a_bundle_was_not_verified_upstream() {
    let production = after(gate("production"), &["staging"]);
    let mut b1 = bundle("b1", 0);
    b1.status.get_or_insert_with(Default::default).unverified = vec![hecate_types::GateCrossing {
        gate: "staging".into(),
        passage: "staging-1".into(),
        at: minutes(t0(), -1),
        actor: "controller".into(),
        reason: "prometheus verification said no: error ratio 0.4".into(),
    }];
    let x = explain_at(production, vec![b1], vec![]);
    assert_eq!(x.waiting[0].kind, Some(Code::UpstreamNotCleared));
    assert_eq!(
        x.waiting[0].reason,
        "not verified in staging: prometheus verification said no: error ratio 0.4"
    );
    assert_eq!(x.waiting[0].action, None);
}

#[test]
fn an_explanation_names_its_bundles_versions() {
    // b1 carries the version its Beacon wrote; b2 has none and is read from its image.
    let mut b1 = bundle("b1", 0);
    b1.spec.alias = "v1.0.0".into();
    let x = explain_at(
        with_current(gate("production"), "b1"),
        vec![bundle("b2", 5), b1, bundle("b0", -5)],
        vec![],
    );
    assert_eq!(x.current.as_deref(), Some("b1"));
    let versions: Vec<(&str, &str)> = x
        .versions
        .iter()
        .map(|(b, v)| (b.as_str(), v.as_str()))
        .collect();
    // The current Bundle and the eligible ones (b0 to roll back to, b2 ahead).
    assert_eq!(
        versions,
        [("b0", "1.0.0"), ("b1", "v1.0.0"), ("b2", "1.0.0")]
    );
}
