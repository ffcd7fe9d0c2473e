//! A Passage runs only its Gate's own steps (issue 30, item 5). A person with the shipped
//! `hecate-promoter` role may create Passages (that is how `hecate promote` asks for a
//! crossing) and patch them (that is how it aborts), so the controller judges every
//! Passage before its first step — its Gate's template, and promote's rules — and keeps
//! a crossing under way to the spec it started with. A Gate counts as its record only a
//! finished Passage that is its own.

use std::sync::Arc;
use std::time::Duration;

use hecate_controller::passage::PassageReconciler;
use hecate_ops::Ops;
use hecate_ops::rules::promotion::new_passage;
use hecate_steps::clock::SystemClock;
use hecate_testenv::Identity::Bob;
use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
use hecate_testenv::rbac::grant_deployed_roles;
use hecate_types::{Gate, Passage, PassagePhase, PassageStatus, Step, wellknown};
use kube::ResourceExt as _;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

/// A loopback receiver answering 200 to any POST.
async fn receiver() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    server
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

/// An `http` step posting the Bundle's name to `url`.
fn call(url: &str) -> Step {
    Step {
        uses: "http".into(),
        with: Some(json!({"url": url, "body": {"bundle": "${{ bundle.name }}"}})),
        ..Step::default()
    }
}

/// Waits for Kustomization `app` (not ready yet), then posts to `url`.
fn wait_then_call(url: &str) -> Vec<Step> {
    vec![
        Step {
            uses: "flux-wait".into(),
            with: Some(json!({"resources": [{"kind": "Kustomization", "name": "app"}]})),
            ..Step::default()
        },
        call(url),
    ]
}

/// A manual Gate `name` admitting Beacon `app`, crossing with `steps`.
async fn manual_gate(h: &Harness, name: &str, steps: Vec<Step>) -> Gate {
    let mut spec = gate_spec(false, &[], false);
    spec.passage.as_mut().unwrap().steps = steps;
    create_gate(h, name, spec).await
}

/// Passage `name` as the API server has it once it has finished.
async fn finished(h: &Harness, name: &str, limit: Duration) -> Passage {
    eventually(limit, &format!("{name} finished"), || async {
        h.env
            .api::<Passage>()
            .get_opt(name)
            .await
            .unwrap()
            .filter(Passage::is_terminal)
    })
    .await
}

/// The controller's Passage reconciler, called directly, as the controller's identity.
async fn reconciler(h: &Harness) -> PassageReconciler {
    passage_reconciler(h, Arc::new(SystemClock), "hecate-own-steps").await
}

async fn reconcile(h: &Harness, reconciler: &PassageReconciler, name: &str) -> Passage {
    reconciler
        .reconcile_named(&h.env.namespace, name)
        .await
        .unwrap();
    h.env.api::<Passage>().get(name).await.unwrap()
}

/// The refusal a finished Passage records: its message, which starts with the stable
/// code, and no step having run.
fn refusal(passage: &Passage, code: &str) -> String {
    let status = passage.status.clone().unwrap();
    assert_eq!(status.phase, Some(PassagePhase::Failed), "{status:?}");
    assert!(
        status.message.starts_with(&format!("refused ({code}): ")),
        "{}",
        status.message
    );
    assert!(status.finished_at.is_some());
    status.message
}

#[tokio::test]
async fn a_promoter_cannot_run_steps_of_their_own_however_the_passage_is_written() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    grant_deployed_roles(&h.env).await;
    standins::install_flux_standins(&h.env.admin).await.unwrap();
    let kustomizations: Api<DynamicObject> =
        Api::namespaced_with(h.env.admin.clone(), &ns, &KUSTOMIZATION.api_resource());
    let mut app = DynamicObject::new("app", &KUSTOMIZATION.api_resource());
    app.data = json!({"spec": {"path": "./apps/dev"}});
    kustomizations
        .create(&PostParams::default(), &app)
        .await
        .unwrap();
    let (ours, theirs) = (receiver().await, receiver().await);
    let (our_url, their_url) = (
        format!("{}/deploy", ours.uri()),
        format!("{}/collect", theirs.uri()),
    );
    manual_gate(&h, "dev", wait_then_call(&our_url)).await;
    bundle(&h.env, "b1").await;
    let _controller = Controller::start(&h.env, &ns, &[]).await;
    let bob = h.env.client(Bob).await;
    let bobs = Api::<Passage>::namespaced(bob.clone(), &ns);

    // 1. Written by hand with an `http` step of bob's own: refused, nothing sent.
    let gate = h.gate("dev").await;
    let mut forged = new_passage(
        &gate,
        &h.bundle("b1").await,
        "bob",
        "dev-by-hand",
        jiff::Timestamp::now(),
    );
    forged.spec.steps = vec![call(&their_url)];
    bobs.create(&PostParams::default(), &forged).await.unwrap();
    let done = finished(&h, "dev-by-hand", Duration::from_secs(20)).await;
    let message = refusal(&done, "NotGateTemplate");
    assert!(
        message.contains("does not carry Gate dev's own template")
            && message.contains("hecate promote dev --bundle b1"),
        "{message}"
    );
    assert!(done.status.unwrap().steps.is_empty(), "no step ran");
    let event = h.event("PassageRefused").await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(
        event.regarding.and_then(|r| r.name).as_deref(),
        Some("dev-by-hand")
    );

    // 2. Labelled for dev but crossing production with production's own steps: dev
    // would record it as its crossing. Refused too.
    manual_gate(&h, "production", vec![call(&their_url)]).await;
    let production = h.gate("production").await;
    let mut mislabelled = new_passage(
        &production,
        &h.bundle("b1").await,
        "bob",
        "dev-mislabelled",
        jiff::Timestamp::now(),
    );
    mislabelled
        .labels_mut()
        .insert(wellknown::LABEL_GATE.into(), "dev".into());
    bobs.create(&PostParams::default(), &mislabelled)
        .await
        .unwrap();
    let done = finished(&h, "dev-mislabelled", Duration::from_secs(20)).await;
    refusal(&done, "NotGateTemplate");

    // 3. Promoted as bob: dev's own steps run, and wait for Flux.
    let promoted = Ops::new(bob.clone())
        .promote(&ns, "dev", "b1", "bob")
        .await
        .unwrap();
    let name = promoted.name_any();
    eventually(
        Duration::from_secs(20),
        "the promoted crossing waits",
        || async {
            let p = bobs.get(&name).await.unwrap();
            (p.phase() == PassagePhase::Running).then_some(())
        },
    )
    .await;
    // …and bob patches its later step to be his own (patch is what abort needs).
    let patch = json!({"spec": {"steps": [wait_then_call(&our_url)[0].clone(), call(&their_url)]}});
    bobs.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let done = finished(&h, &name, Duration::from_secs(20)).await;
    let message = refusal(&done, "SpecChanged");
    assert!(message.contains("only an abort may change"), "{message}");
    // Flux applies; nothing more runs.
    standins::report_applied(&h.env.admin, KUSTOMIZATION, &ns, "app", "main@sha1:1")
        .await
        .unwrap();

    // 4. Promoted again, left alone: it crosses with dev's steps.
    let again = Ops::new(bob)
        .promote(&ns, "dev", "b1", "bob")
        .await
        .unwrap();
    let done = finished(&h, &again.name_any(), Duration::from_secs(20)).await;
    assert_eq!(done.phase(), PassagePhase::Succeeded, "{:?}", done.status);
    assert_eq!(requests(&ours).await, 1, "dev's own step ran, once");
    assert_eq!(requests(&theirs).await, 0, "no step of bob's ever ran");
}

#[tokio::test]
async fn a_gate_edited_between_promote_and_start_asks_to_promote_again() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    let (before, after) = (receiver().await, receiver().await);
    manual_gate(&h, "dev", vec![call(&format!("{}/hook", before.uri()))]).await;
    bundle(&h.env, "b1").await;
    let reconciler = reconciler(&h).await;
    let ops = Ops::new(h.env.admin.clone());

    let asked = ops.promote(&ns, "dev", "b1", "olaf").await.unwrap();
    // Before the controller starts it, the Gate's steps change.
    h.env
        .api::<Gate>()
        .patch(
            "dev",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"passage": {"steps": [call(&format!("{}/hook", after.uri()))]}}}),
            ),
        )
        .await
        .unwrap();
    let done = reconcile(&h, &reconciler, &asked.name_any()).await;
    let message = refusal(&done, "GateChanged");
    assert!(
        message
            .contains("Gate dev changed after Passage dev-1 was asked for (generation 1, now 2)")
            && message.contains("Promote again")
            && message.contains("hecate promote dev --bundle b1"),
        "{message}"
    );
    assert!(done.status.unwrap().steps.is_empty(), "no step ran");
    assert_eq!(requests(&before).await + requests(&after).await, 0);

    // Promoted again: the Gate's steps as they are now.
    let again = ops.promote(&ns, "dev", "b1", "olaf").await.unwrap();
    let done = reconcile(&h, &reconciler, &again.name_any()).await;
    assert_eq!(done.phase(), PassagePhase::Succeeded, "{:?}", done.status);
    assert_eq!((requests(&before).await, requests(&after).await), (0, 1));
    // Once started, its record stands: editing the Gate again changes nothing.
    let p = h.env.api::<Passage>().get(&again.name_any()).await.unwrap();
    assert_eq!(p.spec.steps, vec![call(&format!("{}/hook", after.uri()))]);
}

#[tokio::test]
async fn a_passage_made_by_hand_meets_the_rules_promote_would_apply() {
    let h = Harness::new().await;
    let hook = receiver().await;
    let url = format!("{}/hook", hook.uri());
    // Production comes after staging, with an approval.
    let mut spec = gate_spec(false, &["staging"], true);
    spec.passage.as_mut().unwrap().steps = vec![call(&url)];
    create_gate(&h, "production", spec).await;
    bundle(&h.env, "b1").await;
    let reconciler = reconciler(&h).await;

    let gate = h.gate("production").await;
    let passage = new_passage(
        &gate,
        &h.bundle("b1").await,
        "mallory",
        "production-1",
        jiff::Timestamp::now(),
    );
    h.env.create(passage).await;
    let done = reconcile(&h, &reconciler, "production-1").await;
    let message = refusal(&done, "UpstreamNotCleared");
    assert!(message.contains("has not cleared staging"), "{message}");
    assert_eq!(requests(&hook).await, 0);
}

#[tokio::test]
async fn the_promoter_role_creates_and_aborts_but_never_updates_a_passage() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    grant_deployed_roles(&h.env).await;
    manual_gate(&h, "dev", vec![call("http://127.0.0.1:9/hook")]).await;
    bundle(&h.env, "b1").await;
    let bob = h.env.client(Bob).await;
    let bobs = Api::<Passage>::namespaced(bob.clone(), &ns);

    let promoted = Ops::new(bob.clone())
        .promote(&ns, "dev", "b1", "bob")
        .await
        .unwrap();
    let mut replaced = promoted.clone();
    replaced.spec.steps = vec![call("http://127.0.0.1:9/mine")];
    match bobs
        .replace(&promoted.name_any(), &PostParams::default(), &replaced)
        .await
    {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 403, "{status:?}"),
        other => panic!("bob replaced a Passage: {other:?}"),
    }
    let aborted = Ops::new(bob)
        .abort(&ns, &promoted.name_any(), "bob")
        .await
        .unwrap();
    assert!(aborted.aborted);
    assert_eq!(aborted.aborted_by.as_deref(), Some("bob"));
}

#[tokio::test]
async fn a_finished_crossing_relabelled_for_another_gate_is_not_its_record() {
    let h = Harness::new().await;
    create_gate(&h, "dev", gate_spec(false, &[], false)).await;
    create_gate(&h, "production", gate_spec(false, &[], false)).await;
    bundle(&h.env, "b1").await;
    let gate = h.gate("dev").await;
    let passage = h
        .env
        .create(new_passage(
            &gate,
            &h.bundle("b1").await,
            "olaf",
            "dev-1",
            jiff::Timestamp::now(),
        ))
        .await;
    let mut done = passage.clone();
    done.status = Some(PassageStatus {
        phase: Some(PassagePhase::Succeeded),
        message: "crossed dev".into(),
        observed_generation: passage.metadata.generation.unwrap(),
        ..PassageStatus::default()
    });
    h.env.write_status(&done).await;
    h.reconcile("dev").await;
    assert_eq!(h.gate("dev").await.current_bundle(), Some("b1"));

    // Relabelled for production (metadata: a merge patch any promoter may send).
    let passages = h.env.api::<Passage>();
    let relabel = json!({"metadata": {"labels": {wellknown::LABEL_GATE: "production"}}});
    passages
        .patch("dev-1", &PatchParams::default(), &Patch::Merge(&relabel))
        .await
        .unwrap();
    h.reconcile("production").await;
    assert_eq!(h.gate("production").await.current_bundle(), None);
    // And its spec too: still not production's crossing.
    let respec = json!({"spec": {"gate": "production"}});
    passages
        .patch("dev-1", &PatchParams::default(), &Patch::Merge(&respec))
        .await
        .unwrap();
    h.reconcile("production").await;
    assert_eq!(h.gate("production").await.current_bundle(), None);
    let b1 = h.bundle("b1").await;
    assert!(!b1.has_cleared("production"), "{:?}", b1.status);
}
