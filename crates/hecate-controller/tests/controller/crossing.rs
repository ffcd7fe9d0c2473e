//! Crossings run by the controller process: steps against a stand-in Flux object and a
//! loopback HTTP receiver; a failing step; an abort during a wait; a restart during a
//! wait with the work root gone (spec controller.md §3, §10.3 checks 5–7); and, called
//! directly, the Passage reconciler on a Passage whose Bundle is missing (§3.2).

use std::time::{Duration, Instant};

use hecate_steps::reason::Reason;
use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
use hecate_types::{
    Bundle, Gate, Health, Passage, PassagePhase, Step, StepPhase, VerificationPhase,
};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

/// A namespace that is its own shard, with the Flux stand-ins and a Kustomization
/// `app` that has not reconciled yet.
async fn setup() -> Harness {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    standins::install_flux_standins(&h.env.admin).await.unwrap();
    let api: Api<DynamicObject> =
        Api::namespaced_with(h.env.admin.clone(), &ns, &KUSTOMIZATION.api_resource());
    let mut object = DynamicObject::new("app", &KUSTOMIZATION.api_resource());
    object.data = json!({"spec": {"path": "./apps/dev"}});
    api.create(&PostParams::default(), &object).await.unwrap();
    h
}

/// Steps: wait for Kustomization `app` at `revision`, then always call `url`.
fn steps(revision: &str, url: &str) -> Vec<Step> {
    vec![
        Step {
            uses: "flux-wait".into(),
            alias: "synced".into(),
            with: Some(json!({
                "resources": [{"kind": "Kustomization", "name": "app"}],
                "expectedRevision": revision,
            })),
            ..Step::default()
        },
        Step {
            uses: "http".into(),
            condition: "always".into(),
            with: Some(json!({
                "url": url,
                "body": {"gate": "${{ gate }}", "bundle": "${{ bundle.name }}", "failed": "${{ failed }}"},
            })),
            ..Step::default()
        },
    ]
}

async fn auto_gate_with(h: &Harness, steps: Vec<Step>) {
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = steps;
    create_gate(h, "dev", spec).await;
}

async fn wait_for_phase(h: &Harness, phase: PassagePhase, limit: Duration) -> Passage {
    eventually(limit, &format!("dev-1 {phase:?}"), || async {
        h.env
            .api::<Passage>()
            .get_opt("dev-1")
            .await
            .unwrap()
            .filter(|p| p.phase() == phase)
    })
    .await
}

#[tokio::test]
async fn a_crossing_waits_for_flux_then_calls_out_and_the_gate_records_it() {
    let h = setup().await;
    let receiver = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/hook"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
        .mount(&receiver)
        .await;
    let _controller = Controller::start(&h.env, &h.env.namespace, &[]).await;
    auto_gate_with(
        &h,
        steps("main@sha1:9f8c1a2b", &format!("{}/hook", receiver.uri())),
    )
    .await;
    bundle(&h.env, "b1").await;

    let waiting = wait_for_phase(&h, PassagePhase::Running, Duration::from_secs(10)).await;
    let status = waiting.status.unwrap();
    assert_eq!(status.steps[0].phase, StepPhase::Running);
    assert!(
        status.message.contains("generation") || status.message.contains("Ready"),
        "{}",
        status.message
    );

    // Flux applies the revision: the change itself wakes the step.
    standins::report_applied(
        &h.env.admin,
        KUSTOMIZATION,
        &h.env.namespace,
        "app",
        "main@sha1:9f8c1a2b",
    )
    .await
    .unwrap();
    let applied = Instant::now();
    let done = wait_for_phase(&h, PassagePhase::Succeeded, Duration::from_secs(20)).await;
    let noticed = applied.elapsed();
    eprintln!("flux-wait finished {noticed:?} after the object turned ready");
    assert!(noticed < Duration::from_secs(2), "{noticed:?}");
    let status = done.status.unwrap();
    assert_eq!(status.message, "crossed dev");
    assert_eq!(status.steps[1].phase, StepPhase::Succeeded);
    assert_eq!(status.steps[1].output.as_ref().unwrap()["status"], 200);
    assert_eq!(status.watch.len(), 1, "the wait is handed to the Gate");

    let calls = receiver.received_requests().await.unwrap();
    assert_eq!(calls.len(), 1);
    let body: serde_json::Value = serde_json::from_slice(&calls[0].body).unwrap();
    // A string that is one whole expression takes the expression's type.
    assert_eq!(
        body,
        json!({"gate": "dev", "bundle": "b1", "failed": false})
    );

    eventually(
        Duration::from_secs(10),
        "the Gate records the crossing",
        || async {
            let gate: Gate = h.gate("dev").await;
            let status = gate.status?;
            (status.current.as_ref()?.bundle == "b1"
                && status.health.as_ref()?.status == Health::Healthy)
                .then_some(())
        },
    )
    .await;
    let bundle: Bundle = h.bundle("b1").await;
    assert!(bundle.has_cleared("dev"));
}

/// An automatic Gate `dev` whose one step calls a loopback receiver and whose crossings
/// soak for `soak`, with the controller running: the receiver and the controller, to
/// keep for the test.
async fn soaking_dev(h: &Harness, soak: &str) -> (MockServer, Controller) {
    let receiver = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    let controller = Controller::start(&h.env, &h.env.namespace, &[]).await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "http".into(),
        with: Some(json!({"url": format!("{}/deploy", receiver.uri()), "body": {}})),
        ..Step::default()
    }];
    spec.verify = vec![hecate_types::Verification {
        uses: "soak".into(),
        with: Some(json!({"duration": soak})),
    }];
    create_gate(h, "dev", spec).await;
    (receiver, controller)
}

/// The controller as the chart deploys it — its own identity, the ClusterRole in
/// `deploy/` — records a verification as it goes: a merge patch of the Passage's status
/// (#50 item 8; before, the chart's role allowed only `update`, and every reconcile of a
/// Gate that verifies failed, the Gate Crossing for ever).
#[tokio::test]
async fn the_chart_role_lets_the_controller_record_a_verification() {
    let h = setup().await;
    let (_receiver, _controller) = soaking_dev(&h, "1s").await;
    bundle(&h.env, "b1").await;
    wait_for_phase(&h, PassagePhase::Succeeded, Duration::from_secs(15)).await;
    let verified = eventually(Duration::from_secs(20), "dev-1 verified", || async {
        let passage = h.env.api::<Passage>().get("dev-1").await.ok()?;
        let verification = passage.status?.verification?;
        (verification.phase == hecate_types::VerificationPhase::Verified).then_some(verification)
    })
    .await;
    assert!(!verified.message.is_empty(), "{verified:?}");
    eventually(Duration::from_secs(10), "b1 clears dev", || async {
        h.bundle("b1").await.has_cleared("dev").then_some(())
    })
    .await;
}

/// A newer crossing cuts an older one's verification short, and the older Passage says
/// so — before, it stayed `Verifying` for ever, looked at by nothing (#53).
#[tokio::test]
async fn a_newer_crossing_ends_the_older_verification_as_superseded() {
    let h = setup().await;
    let (_receiver, _controller) = soaking_dev(&h, "1h").await;
    bundle(&h.env, "b1").await;
    eventually(Duration::from_secs(20), "dev-1 verifying", || async {
        let passage = h.env.api::<Passage>().get("dev-1").await.ok()?;
        let verification = passage.status?.verification?;
        (verification.phase == VerificationPhase::Verifying).then_some(())
    })
    .await;
    // Creation times are whole seconds: b2 must be a second younger to be ahead of b1.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    bundle(&h.env, "b2").await;
    let cut = eventually(Duration::from_secs(20), "dev-1 superseded", || async {
        let passage = h.env.api::<Passage>().get("dev-1").await.ok()?;
        let verification = passage.status?.verification?;
        (verification.phase == VerificationPhase::Superseded).then_some(verification)
    })
    .await;
    assert_eq!(
        cut.message, "cut short by dev-2, a newer crossing of the Gate",
        "{cut:?}"
    );
    assert!(cut.finished_at.is_some(), "{cut:?}");
    assert_eq!(cut.verifiers[0].phase, VerificationPhase::Superseded);
    assert_eq!(cut.verifiers[0].next_look_at, None);
    // The newer crossing verifies in its turn; b1 never clears dev by a cut soak.
    eventually(Duration::from_secs(20), "dev-2 verifying", || async {
        let passage = h.env.api::<Passage>().get("dev-2").await.ok()?;
        let verification = passage.status?.verification?;
        (verification.phase == VerificationPhase::Verifying).then_some(())
    })
    .await;
    assert!(!h.bundle("b1").await.has_cleared("dev"));
}

#[tokio::test]
async fn a_failing_step_fails_the_crossing_the_cleanup_still_runs_and_automation_stops() {
    let h = setup().await;
    let receiver = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400))
        .mount(&receiver)
        .await;
    let _controller = Controller::start(&h.env, &h.env.namespace, &[]).await;
    let mut steps = steps("", &format!("{}/hook", receiver.uri()));
    // The first step calls out too, and is refused.
    steps.insert(
        0,
        Step {
            uses: "http".into(),
            with: Some(json!({"url": format!("{}/deploy", receiver.uri()), "body": {}})),
            ..Step::default()
        },
    );
    auto_gate_with(&h, steps).await;
    bundle(&h.env, "b1").await;
    let failed = wait_for_phase(&h, PassagePhase::Failed, Duration::from_secs(15)).await;
    let status = failed.status.unwrap();
    assert_eq!(status.steps[0].reason, Reason::HttpFailed.as_str());
    assert_eq!(status.steps[1].phase, StepPhase::Skipped);
    assert_eq!(
        status.steps[2].phase,
        StepPhase::Failed,
        "the always-step ran (and was refused too)"
    );
    assert_eq!(receiver.received_requests().await.unwrap().len(), 2);

    eventually(Duration::from_secs(10), "the Gate stops", || async {
        // Not `h.ready`: the Gate may not have written its first status yet.
        let status = h.gate("dev").await.status?;
        let ready = status.conditions.into_iter().find(|c| c.type_ == "Ready")?;
        (ready.reason == "CrossingFailed").then_some(())
    })
    .await;
    let blocked = h.bundle("b1").await.status.unwrap().blocked;
    assert_eq!(blocked.len(), 1);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(h.passages().await.len(), 1, "never retried by itself");
}

#[tokio::test]
async fn an_abort_during_a_wait_ends_the_crossing_at_once() {
    let h = setup().await;
    let _controller = Controller::start(&h.env, &h.env.namespace, &[]).await;
    auto_gate_with(&h, steps("never", "http://127.0.0.1:9/hook")).await;
    bundle(&h.env, "b1").await;
    wait_for_phase(&h, PassagePhase::Running, Duration::from_secs(10)).await;
    let patch = json!({"spec": {"abort": true}});
    h.env
        .api::<Passage>()
        .patch("dev-1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let asked = Instant::now();
    let aborted = wait_for_phase(&h, PassagePhase::Aborted, Duration::from_secs(5)).await;
    eprintln!("aborted {:?} after the request", asked.elapsed());
    let status = aborted.status.unwrap();
    assert_eq!(status.steps[0].phase, StepPhase::Aborted);
    assert_eq!(status.steps[1].phase, StepPhase::Aborted);
}

#[tokio::test]
async fn a_restart_during_a_wait_resumes_with_an_empty_work_root() {
    let h = setup().await;
    let receiver = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&receiver)
        .await;
    let first = Controller::start(&h.env, &h.env.namespace, &[]).await;
    auto_gate_with(
        &h,
        steps("main@sha1:abc", &format!("{}/hook", receiver.uri())),
    )
    .await;
    bundle(&h.env, "b1").await;
    let waiting = wait_for_phase(&h, PassagePhase::Running, Duration::from_secs(10)).await;
    let attempts_before = waiting.status.unwrap().steps[0].attempts;
    first.kill().await;

    // A new process, a new (empty) work root.
    let _second = Controller::start(&h.env, &h.env.namespace, &[]).await;
    standins::report_applied(
        &h.env.admin,
        KUSTOMIZATION,
        &h.env.namespace,
        "app",
        "main@sha1:abc",
    )
    .await
    .unwrap();
    let done = wait_for_phase(&h, PassagePhase::Succeeded, Duration::from_secs(20)).await;
    let status = done.status.unwrap();
    assert!(
        status.steps[0].attempts > attempts_before,
        "attempts continue: {} then {}",
        attempts_before,
        status.steps[0].attempts
    );
    assert_eq!(
        receiver.received_requests().await.unwrap().len(),
        1,
        "the http step ran once"
    );
}

#[tokio::test]
async fn a_long_wait_is_woken_by_the_object_not_by_its_timer() {
    let h = setup().await;
    let _controller = Controller::start(&h.env, &h.env.namespace, &[]).await;
    auto_gate_with(
        &h,
        vec![Step {
            uses: "flux-wait".into(),
            with: Some(json!({
                "resources": [{"kind": "Kustomization", "name": "app"}],
                "expectedRevision": "main@sha1:9f8c1a2b",
            })),
            ..Step::default()
        }],
    )
    .await;
    bundle(&h.env, "b1").await;

    // Four looks (after 0, 1, 2 and 4 s): the next one is 8 s away.
    eventually(Duration::from_secs(20), "a fourth look", || async {
        let passage = h.env.api::<Passage>().get_opt("dev-1").await.unwrap()?;
        (passage.status?.steps.first()?.attempts >= 4).then_some(())
    })
    .await;
    standins::report_applied(
        &h.env.admin,
        KUSTOMIZATION,
        &h.env.namespace,
        "app",
        "main@sha1:9f8c1a2b",
    )
    .await
    .unwrap();
    let applied = Instant::now();
    let done = wait_for_phase(&h, PassagePhase::Succeeded, Duration::from_secs(20)).await;
    let noticed = applied.elapsed();
    eprintln!("woken {noticed:?} after the object turned ready");
    assert!(noticed < Duration::from_secs(2), "{noticed:?}");
    assert_eq!(
        done.status.unwrap().steps[0].attempts,
        5,
        "one more look, no more"
    );
}

#[tokio::test]
async fn a_passage_whose_bundle_is_missing_fails_at_once_and_says_so() {
    use std::sync::Arc;

    use hecate_controller::events::Events;
    use hecate_controller::metrics::Metrics;
    use hecate_controller::passage::PassageReconciler;
    use hecate_steps::clock::SystemClock;
    use hecate_steps::runners;
    use hecate_types::PassageSpec;

    let h = Harness::new().await;
    let receiver = MockServer::start().await;
    h.env
        .create(Passage::new(
            "dev-1",
            PassageSpec {
                gate: "dev".into(),
                bundle: "app-0000deadbeef".into(),
                steps: vec![Step {
                    uses: "http".into(),
                    with: Some(json!({"url": format!("{}/hook", receiver.uri())})),
                    ..Step::default()
                }],
                actor: "controller".into(),
                ..PassageSpec::default()
            },
        ))
        .await;
    let client = h.env.admin.clone();
    let reconciler = PassageReconciler {
        client: client.clone(),
        clock: Arc::new(SystemClock),
        steps: runners(&crate::process::test_world_tools(client.clone())).unwrap(),
        verifiers: hecate_controller::verify::Verifiers::new(),
        events: Events::new(client, "passage-controller", None),
        metrics: Arc::new(Metrics::new()),
        work_root: std::env::temp_dir().join("hecate-crossing-missing"),
        fides_server: None,
        tracing: hecate_controller::telemetry::Tracing::off(),
    };
    let reconcile = || async {
        reconciler
            .reconcile_named(&h.env.namespace, "dev-1")
            .await
            .unwrap();
        h.env.api::<Passage>().get("dev-1").await.unwrap()
    };

    let failed = reconcile().await;
    let status = failed.status.clone().unwrap();
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert!(
        status.message.contains("app-0000deadbeef"),
        "{}",
        status.message
    );
    assert!(status.finished_at.is_some());
    assert!(status.steps.is_empty(), "no step ran: {:?}", status.steps);
    let event = h.event("BundleMissing").await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.action.as_deref(), Some("Resolving"));

    // Finished: asked again, nothing changes and nothing is sent.
    let again = reconcile().await;
    assert_eq!(again.status, failed.status);
    assert!(receiver.received_requests().await.unwrap().is_empty());
}
