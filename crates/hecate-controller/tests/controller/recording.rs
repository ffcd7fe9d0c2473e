//! A crossing the controller can always record (issue 30, item 6): a Passage whose steps
//! answer more than its status can hold is recorded cut to fit, each step run once; its
//! progress is written after every step, so a controller killed mid-run resumes from
//! the recorded step; a Passage deleted mid-run stops before its next step; and a
//! Passage with more steps (or a larger spec) than the controller can record — made
//! under a looser CRD — is refused, with the reason on its status, and none of it runs.

use std::sync::Arc;
use std::time::Duration;

use hecate_controller::events::Events;
use hecate_controller::metrics::Metrics;
use hecate_controller::passage::PassageReconciler;
use hecate_ops::rules::promotion::new_passage;
use hecate_steps::clock::SystemClock;
use hecate_steps::{Tools, runners};
use hecate_testenv::TestEnv;
use hecate_types::limits::{MAX_PASSAGE_STATUS_BYTES, MAX_STEPS};
use hecate_types::{
    Gate, Passage, PassagePhase, PassageSpec, PassageStatus, PassageTemplate, Step, StepPhase, Time,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

/// `n` `http` steps posting their Passage's name to `url`.
fn calls(url: &str, n: usize) -> Vec<Step> {
    vec![
        Step {
            uses: "http".into(),
            with: Some(json!({"url": url, "body": {"passage": "${{ passage }}"}})),
            ..Step::default()
        };
        n
    ]
}

/// A Gate admitting Beacon `app`'s Bundles (by itself when `auto`) that crosses with
/// `steps`.
fn gate_with(auto: bool, steps: Vec<Step>) -> hecate_types::GateSpec {
    let mut spec = gate_spec(auto, &[], false);
    spec.passage = Some(PassageTemplate { steps });
    spec
}

/// How many requests `server` has had on `at`.
async fn received(server: &MockServer, at: &str) -> usize {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r: &&Request| r.url.path() == at)
        .count()
}

/// How many requests `server` has had from Passage `passage`'s steps.
async fn from(server: &MockServer, passage: &str) -> usize {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| {
            serde_json::from_slice::<serde_json::Value>(&r.body)
                .is_ok_and(|body| body["passage"] == passage)
        })
        .count()
}

/// A receiver answering every POST with 200 after `delay`, and `body`.
async fn receiver(delay: Duration, body: Vec<u8>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_delay(delay)
                .set_body_raw(body, "text/plain"),
        )
        .mount(&server)
        .await;
    server
}

/// The status as the API server stores it, in bytes of JSON.
fn size(status: &PassageStatus) -> usize {
    serde_json::to_vec(status).unwrap().len()
}

#[tokio::test]
async fn a_status_too_large_to_record_is_cut_to_fit_and_no_step_runs_twice() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    // 4 KiB of a control character, the most an http step keeps of a body: recorded as
    // JSON each byte is six (`\u0001`), so the most steps a Gate may have, each keeping
    // all of it, would make a status of 2.4 MB, over the 1.5 MiB etcd stores.
    let server = receiver(Duration::ZERO, vec![1u8; 4096]).await;
    let url = format!("{}/hook", server.uri());
    create_gate(&h, "dev", gate_with(true, calls(&url, MAX_STEPS))).await;
    let controller = Controller::start(&h.env, &ns, &[]).await;
    bundle(&h.env, "b1").await;

    // Finished, or started again: either ends the wait.
    let passages = h.env.api::<Passage>();
    let passage = eventually(Duration::from_secs(120), "dev-1 finished", || async {
        let passage = passages.get_opt("dev-1").await.unwrap()?;
        (passage.is_terminal() || received(&server, "/hook").await > MAX_STEPS).then_some(passage)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let requests = received(&server, "/hook").await;
    let status = passage.status.clone().unwrap_or_default();
    let bytes = size(&status);
    eprintln!(
        "{MAX_STEPS} steps: {requests} requests, a status of {bytes} bytes, {} requests to the API server",
        controller.requests_sent().await
    );
    assert_eq!(requests, MAX_STEPS, "each step ran exactly once");
    assert_eq!(
        passage.phase(),
        PassagePhase::Succeeded,
        "{}",
        status.message
    );
    assert!(bytes <= MAX_PASSAGE_STATUS_BYTES, "{bytes} bytes");
    for (i, step) in status.steps.iter().enumerate() {
        assert_eq!(
            (step.phase, step.attempts),
            (StepPhase::Succeeded, 1),
            "steps[{i}]"
        );
        let output = step.output.as_ref().unwrap();
        // What later steps read stays: the status code, whole; the body is cut, and
        // says so.
        assert_eq!(output["status"], 200, "steps[{i}]: {output}");
        let body = output["body"].as_str().unwrap();
        assert!(
            body.ends_with("…[truncated]") && body.len() < 4096,
            "steps[{i}]: {body:?}"
        );
    }
}

#[tokio::test]
async fn a_controller_killed_mid_run_resumes_from_the_recorded_step() {
    const STEPS: usize = 30;
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    let server = receiver(Duration::from_millis(150), b"ok".to_vec()).await;
    let url = format!("{}/hook", server.uri());
    create_gate(&h, "dev", gate_with(true, calls(&url, STEPS))).await;
    let first = Controller::start(&h.env, &ns, &[]).await;
    bundle(&h.env, "b1").await;

    eventually(Duration::from_secs(30), "ten steps ran", || async {
        (received(&server, "/hook").await >= 10).then_some(())
    })
    .await;
    first.kill().await;
    let before = received(&server, "/hook").await;
    // What ran is on record: every step but the one in flight.
    let recorded = h.env.api::<Passage>().get("dev-1").await.unwrap();
    let done = |p: &Passage| {
        p.status.as_ref().map_or(0, |s| {
            s.steps
                .iter()
                .filter(|s| s.phase == StepPhase::Succeeded)
                .count()
        })
    };
    eprintln!(
        "killed after {before} requests, {} steps recorded",
        done(&recorded)
    );
    assert!(
        done(&recorded) + 1 >= before,
        "{before} steps ran, {} recorded",
        done(&recorded)
    );

    let _second = Controller::start(&h.env, &ns, &[]).await;
    let finished = eventually(Duration::from_secs(60), "dev-1 finished", || async {
        h.env
            .api::<Passage>()
            .get_opt("dev-1")
            .await
            .unwrap()
            .filter(Passage::is_terminal)
    })
    .await;
    let requests = received(&server, "/hook").await;
    eprintln!("{STEPS} steps, killed once: {requests} requests");
    assert_eq!(finished.phase(), PassagePhase::Succeeded);
    // At most the step in flight when the process died runs again (steps are
    // re-entrant); nothing from step 0.
    assert!(
        (STEPS..=STEPS + 1).contains(&requests),
        "{requests} requests for {STEPS} steps"
    );
}

#[tokio::test]
async fn a_passage_deleted_mid_run_stops_before_its_next_step() {
    const STEPS: usize = 30;
    const HOLD: &str = "test.hecate.dev/hold";
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    let server = receiver(Duration::from_millis(200), b"ok".to_vec()).await;
    let _controller = Controller::start(&h.env, &ns, &[]).await;
    let b1 = bundle(&h.env, "b1").await;
    // Promoted by hand: an automatic Gate would open its crossing again, under the same
    // name, once the first is gone.
    for name in ["gone", "held"] {
        let url = format!("{}/{name}", server.uri());
        let gate = create_gate(&h, name, gate_with(false, calls(&url, STEPS))).await;
        let asked = new_passage(
            &gate,
            &b1,
            "olaf",
            &format!("{name}-1"),
            jiff::Timestamp::now(),
        );
        h.env.create(asked).await;
    }
    let passages = h.env.api::<Passage>();
    eventually(
        Duration::from_secs(30),
        "both crossings under way",
        || async {
            (from(&server, "gone-1").await >= 5 && from(&server, "held-1").await >= 5).then_some(())
        },
    )
    .await;

    // Deleted outright: the object is gone at once.
    passages
        .delete("gone-1", &DeleteParams::default())
        .await
        .unwrap();
    let at_delete = from(&server, "gone-1").await;
    // Deletion asked for while something holds the object (a finalizer): it stays,
    // with a deletion timestamp, until that is released.
    let hold = json!({"metadata": {"finalizers": [HOLD]}});
    passages
        .patch("held-1", &PatchParams::default(), &Patch::Merge(&hold))
        .await
        .unwrap();
    passages
        .delete("held-1", &DeleteParams::default())
        .await
        .unwrap();
    let at_held = from(&server, "held-1").await;

    let held = eventually(Duration::from_secs(15), "held-1 stopped", || async {
        passages
            .get_opt("held-1")
            .await
            .unwrap()
            .filter(Passage::is_terminal)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (gone, after_held) = (from(&server, "gone-1").await, from(&server, "held-1").await);
    eprintln!(
        "deleted after {at_delete} steps: {gone} ran; deletion asked after {at_held}: {after_held} ran"
    );
    // The step in flight finishes; no other starts.
    assert!(gone <= at_delete + 1, "{gone} requests after {at_delete}");
    assert!(
        after_held <= at_held + 1,
        "{after_held} requests after {at_held}"
    );
    let status = held.status.clone().unwrap();
    assert_eq!(held.phase(), PassagePhase::Aborted, "{}", status.message);
    assert!(status.message.contains("deleted"), "{}", status.message);
    assert!(
        status
            .steps
            .iter()
            .any(|s| s.phase == StepPhase::Aborted && s.started_at.is_none()),
        "the steps not run are aborted: {:?}",
        status.steps
    );
    let release = json!({"metadata": {"finalizers": null}});
    passages
        .patch("held-1", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .unwrap();
}

/// The controller's Passage reconciler, called directly, as admin.
fn reconciler(h: &Harness) -> PassageReconciler {
    let client = h.env.admin.clone();
    PassageReconciler {
        client: client.clone(),
        clock: Arc::new(SystemClock),
        steps: runners(&Tools::new(client.clone())).unwrap(),
        verifiers: hecate_controller::verify::Verifiers::new(),
        events: Events::new(client, "passage-controller", None),
        metrics: Arc::new(Metrics::new()),
        work_root: std::env::temp_dir().join("hecate-recording"),
        fides_server: None,
        tracing: hecate_controller::telemetry::Tracing::off(),
    }
}

#[tokio::test]
async fn a_passage_too_large_to_record_beside_its_status_is_refused_and_runs_nothing() {
    let h = Harness::new().await;
    let server = receiver(Duration::ZERO, b"ok".to_vec()).await;
    bundle(&h.env, "b1").await;
    // One step whose configuration alone is 600 KiB: the CRD takes it (`with` is
    // free-form), and so does etcd, but then there is no room left for a status the
    // size the controller may write.
    let step = Step {
        uses: "http".into(),
        with: Some(json!({
            "url": format!("{}/hook", server.uri()),
            "body": {"pad": "x".repeat(600 * 1024)},
        })),
        ..Step::default()
    };
    h.env
        .create(Passage::new(
            "big-1",
            PassageSpec {
                gate: "dev".into(),
                bundle: "b1".into(),
                steps: vec![step],
                actor: "controller".into(),
                ..PassageSpec::default()
            },
        ))
        .await;
    reconciler(&h)
        .reconcile_named(&h.env.namespace, "big-1")
        .await
        .unwrap();
    let passage = h.env.api::<Passage>().get("big-1").await.unwrap();
    let status = passage.status.unwrap();
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert!(
        status.message.starts_with("refused (TooLarge): "),
        "{}",
        status.message
    );
    assert!(status.steps.is_empty(), "no step ran: {:?}", status.steps);
    assert_eq!(received(&server, "/hook").await, 0);
}

/// Removes the CRD `name`'s `maxItems` at `at` (a JSON pointer into its schema): a
/// cluster whose CRDs predate the bound, or the reference's CRDs, which have none.
async fn loosen(admin: &kube::Client, name: &str, at: &str) {
    let api = Api::<CustomResourceDefinition>::all(admin.clone());
    let crd = api.get(name).await.unwrap();
    let mut value = serde_json::to_value(&crd).unwrap();
    let schema = value
        .pointer_mut("/spec/versions/0/schema/openAPIV3Schema")
        .unwrap();
    let list = schema.pointer_mut(at).unwrap().as_object_mut().unwrap();
    assert!(list.remove("maxItems").is_some(), "{name}{at} has maxItems");
    let loosened: CustomResourceDefinition = serde_json::from_value(value).unwrap();
    api.replace(name, &PostParams::default(), &loosened)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_passage_with_more_steps_than_the_controller_runs_is_refused_and_none_runs() {
    // CRDs are cluster-wide: loosened on a control plane of this test's own.
    let (_plane, env) = TestEnv::on_own_plane("loose-crds", &[]).await;
    let ns = env.namespace.clone();
    loosen(
        &env.admin,
        "gates.hecate.dev",
        "/properties/spec/properties/passage/properties/steps",
    )
    .await;
    loosen(
        &env.admin,
        "passages.hecate.dev",
        "/properties/spec/properties/steps",
    )
    .await;
    join_shard(&env, &ns, &ns).await;

    // The Passage: 5,000 steps.
    const MANY: usize = 5_000;
    let server = receiver(Duration::ZERO, b"ok".to_vec()).await;
    let url = format!("{}/hook", server.uri());
    let gates = Api::<Gate>::namespaced(env.admin.clone(), &ns);
    let mut gate = Gate::new("big", gate_with(false, calls(&url, MANY)));
    gate.metadata.namespace = Some(ns.clone());
    // The API server takes the looser schema a moment after the CRD is replaced.
    let gate = eventually(Duration::from_secs(30), "a Gate of 5,000 steps", || async {
        gates.create(&PostParams::default(), &gate).await.ok()
    })
    .await;
    let b1 = hecate_testenv::fixtures::bundle(&env, "b1").await;
    let passages = Api::<Passage>::namespaced(env.admin.clone(), &ns);
    let asked = new_passage(&gate, &b1, "olaf", "big-1", jiff::Timestamp::now());
    let asked = eventually(
        Duration::from_secs(30),
        "a Passage of 5,000 steps",
        || async { passages.create(&PostParams::default(), &asked).await.ok() },
    )
    .await;
    // One an older controller had started (a second Gate's, so neither waits on the
    // other).
    let mut other = Gate::new("big-too", gate_with(false, calls(&url, MANY)));
    other.metadata.namespace = Some(ns.clone());
    let other = gates.create(&PostParams::default(), &other).await.unwrap();
    let mut started = passages
        .create(
            &PostParams::default(),
            &new_passage(&other, &b1, "olaf", "big-too-1", jiff::Timestamp::now()),
        )
        .await
        .unwrap();
    started.status = Some(PassageStatus {
        phase: Some(PassagePhase::Running),
        started_at: Some(Time(jiff::Timestamp::now())),
        observed_generation: started.metadata.generation.unwrap_or_default(),
        ..PassageStatus::default()
    });
    env.write_status(&started).await;

    let controller = Controller::start(&env, &ns, &[]).await;
    for name in ["big-1", "big-too-1"] {
        let refused = eventually(Duration::from_secs(30), name, || async {
            passages
                .get_opt(name)
                .await
                .unwrap()
                .filter(Passage::is_terminal)
        })
        .await;
        let status = refused.status.unwrap();
        eprintln!("{name}: {}", status.message);
        assert_eq!(status.phase, Some(PassagePhase::Failed));
        assert!(
            status.message.starts_with("refused (TooManySteps): ")
                && status.message.contains("5000 steps"),
            "{name}: {}",
            status.message
        );
        assert!(status.steps.is_empty(), "{name}: no step ran");
    }
    assert_eq!(received(&server, "/hook").await, 0, "none of them ran");
    assert_eq!(asked.spec.steps.len(), MANY);

    // The Gate says why it cannot cross.
    let ready = eventually(Duration::from_secs(15), "big's Ready", || async {
        let gate = gates.get("big").await.unwrap();
        gate.status?
            .conditions
            .into_iter()
            .find(|c| c.type_ == "Ready" && c.reason == "InvalidSteps")
    })
    .await;
    assert!(ready.message.contains("5000 steps"), "{}", ready.message);
    let status = controller.terminate().await;
    assert!(status.success(), "{status:?}");
}
