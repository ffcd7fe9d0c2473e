//! A waiting Passage must not spin (spec controller.md §3.8): with the controller
//! running and a `flux-wait` whose object never becomes ready, a 20 s window holds no
//! more looks — and no more writes to the Passage — than the retry schedule asks for.

use std::time::{Duration, Instant};

use futures::{StreamExt as _, TryStreamExt as _};
use hecate_steps::flux_wait::retry_after;
use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
use hecate_types::{Passage, PassagePhase, Step};
use kube::api::{Api, DynamicObject, PostParams, WatchEvent, WatchParams};
use serde_json::json;

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

/// How many looks the retry schedule makes in `window` after any look: the most that
/// fit, which is from the first look on (the waits only grow).
fn scheduled_looks(window: Duration) -> u32 {
    let (mut looks, mut at) = (0, Duration::ZERO);
    loop {
        at += retry_after(looks);
        if at > window {
            return looks;
        }
        looks += 1;
    }
}

#[tokio::test]
async fn a_waiting_passage_looks_on_schedule_and_does_not_spin() {
    const WINDOW: Duration = Duration::from_secs(20);
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    standins::install_flux_standins(&h.env.admin).await.unwrap();
    // A Kustomization that never reconciles: no status at all.
    let api: Api<DynamicObject> =
        Api::namespaced_with(h.env.admin.clone(), &ns, &KUSTOMIZATION.api_resource());
    let mut object = DynamicObject::new("app", &KUSTOMIZATION.api_resource());
    object.data = json!({"spec": {"path": "./apps/dev"}});
    api.create(&PostParams::default(), &object).await.unwrap();

    let controller = Controller::start(&h.env, &ns, &[]).await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "flux-wait".into(),
        with: Some(json!({"resources": [{"kind": "Kustomization", "name": "app"}]})),
        ..Step::default()
    }];
    create_gate(&h, "dev", spec).await;
    bundle(&h.env, "b1").await;

    let passages = h.env.api::<Passage>();
    let waiting: Passage = eventually(Duration::from_secs(20), "dev-1 waiting", || async {
        passages
            .get_opt("dev-1")
            .await
            .unwrap()
            .filter(|p| p.phase() == PassagePhase::Running)
    })
    .await;
    let attempts = |p: &Passage| p.status.as_ref().map_or(0, |s| s.steps[0].attempts);
    let first = attempts(&waiting);
    let version = waiting.metadata.resource_version.clone().unwrap();
    let requests_before = controller.requests_sent().await;

    // Every change to the Passage in the window, as the API server tells it.
    let started = Instant::now();
    let params = WatchParams::default().fields("metadata.name=dev-1");
    let mut stream = passages.watch(&params, &version).await.unwrap().boxed();
    let mut versions = Vec::new();
    let mut last = waiting;
    while let Some(left) = WINDOW.checked_sub(started.elapsed()) {
        match tokio::time::timeout(left, stream.try_next()).await {
            Err(_) => break,
            Ok(Ok(Some(WatchEvent::Modified(passage)))) => {
                versions.push(passage.metadata.resource_version.clone().unwrap());
                last = passage;
            }
            Ok(Ok(Some(WatchEvent::Bookmark(_)))) => {}
            Ok(other) => panic!("unexpected from the watch: {other:?}"),
        }
    }
    let requests = controller.requests_sent().await - requests_before;
    let looks = u32::try_from(attempts(&last) - first).unwrap();
    let allowed = scheduled_looks(WINDOW);
    eprintln!(
        "in {WINDOW:?} of waiting: {looks} looks (the schedule allows {allowed}), {} writes \
         to the Passage, {requests} requests to the API server",
        versions.len()
    );
    assert_eq!(last.phase(), PassagePhase::Running, "still waiting");
    // One look more than the schedule for a wake by a watch that (re)started; the timer
    // must still be running (a wait that never looks again is stuck, not patient).
    assert!(
        looks <= allowed + 1,
        "{looks} looks in {WINDOW:?}; the schedule allows {allowed}"
    );
    assert!(looks + 1 >= allowed, "only {looks} looks in {WINDOW:?}");
    // Each look is one status write, nothing more.
    assert!(
        versions.len() as u32 <= looks + 1,
        "{} writes for {looks} looks: {versions:?}",
        versions.len()
    );
}
