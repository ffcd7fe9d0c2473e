//! Fan-out (issue 52): one Gate over many targets in four waves, zero soak, with
//! `hecate-controller` as its own process. Each target's crossing is one `flux-wait` on
//! a Kustomization of its own that Flux (played here) has already applied and found
//! healthy, so what is measured is Hecate's cost per target: the time from promote to
//! the last target crossed, beside the same Gate over one target; the controller's
//! requests per target; the size of the Passage's record; the controller's memory.
//!
//! Each run uses a new namespace and removes it afterwards.

use std::path::Path;
use std::time::{Duration, Instant};

use hecate_ops::Ops;
use hecate_testenv::Endpoint;
use hecate_testenv::flux::{KUSTOMIZATION, report_applied};
use hecate_types::{
    Admission, BundleOrigin, Gate, GateSpec, Passage, PassageTemplate, Rollout, Step, Target,
    Targets, Wave, WaveTargets,
};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, PostParams};
use serde::Serialize;
use serde_json::json;

use super::controller::{Breakdown, Process};

/// The label that makes a run's namespace the benched controller's shard.
const SHARD_LABEL: &str = "hecate.dev/bench-fan-out";

/// How many waves the targets are spread over.
const WAVES: usize = 4;

/// What the fan-out run measured.
#[derive(Serialize)]
pub(crate) struct FanOutResults {
    /// Targets of the wide Gate.
    pub(crate) targets: usize,
    /// Promote → the Passage succeeded, the Gate over one target.
    pub(crate) one_ms: f64,
    /// Requests the controller sent for that crossing.
    pub(crate) one_requests: f64,
    /// Promote → the Passage succeeded, the Gate over every target.
    pub(crate) all_ms: f64,
    /// Requests the controller sent for that crossing.
    pub(crate) all_requests: f64,
    /// Those by verb and resource.
    pub(crate) all_breakdown: Breakdown,
    /// (all − one) / (targets − 1): what each target beyond the first cost.
    pub(crate) per_target_ms: f64,
    pub(crate) per_target_requests: f64,
    /// The finished Passage's status, as JSON, in bytes.
    pub(crate) status_bytes: usize,
    /// The controller's resident memory at the end / its peak, MiB.
    pub(crate) memory_mib: f64,
    pub(crate) peak_mib: f64,
}

/// The fan-out bench over `targets` targets.
pub(crate) async fn run(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    targets: usize,
) -> anyhow::Result<FanOutResults> {
    let namespace = format!("bench-fan-out-{}", std::process::id());
    super::shard_namespace(admin, &namespace, SHARD_LABEL).await?;
    let result = measure(root, endpoint, admin, &namespace, targets).await;
    Api::<Namespace>::all(admin.clone())
        .delete(&namespace, &DeleteParams::background())
        .await?;
    result
}

async fn measure(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    namespace: &str,
    targets: usize,
) -> anyhow::Result<FanOutResults> {
    let names: Vec<String> = (0..targets).map(|i| format!("t{i:03}")).collect();
    let environments: Vec<&str> = names.iter().map(String::as_str).collect();
    hecate_testenv::world::kustomizations(admin, namespace, &environments).await?;
    for name in &names {
        report_applied(
            admin,
            KUSTOMIZATION,
            namespace,
            &format!("app-{name}"),
            "main@sha1:0000000000000000000000000000000000000000",
        )
        .await?;
    }
    Api::<hecate_types::Bundle>::namespaced(admin.clone(), namespace)
        .create(
            &PostParams::default(),
            &super::controller::bundle("b1", "app", 1),
        )
        .await?;
    let gates = Api::<Gate>::namespaced(admin.clone(), namespace);
    gates
        .create(&PostParams::default(), &gate("one", &names[..1]))
        .await?;
    gates
        .create(&PostParams::default(), &gate("all", &names))
        .await?;

    let process = Process::start(
        root,
        endpoint,
        "bench-fan-out",
        &format!("{SHARD_LABEL}=true"),
    )?;
    process.serving().await?;
    // Let the controller's start-up (its first lists, the shard's namespace) settle.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let ops = Ops::new(admin.clone());
    let passages = Api::<Passage>::namespaced(admin.clone(), namespace);

    let (one_ms, one_requests, _, _) =
        crossing(&ops, &passages, &process, namespace, "one").await?;
    let (all_ms, all_requests, all_breakdown, status_bytes) =
        crossing(&ops, &passages, &process, namespace, "all").await?;
    let (memory_mib, peak_mib) = process.memory();
    let beyond = (targets.max(2) - 1) as f64;
    Ok(FanOutResults {
        targets,
        one_ms,
        one_requests,
        all_ms,
        all_requests,
        all_breakdown,
        per_target_ms: (all_ms - one_ms) / beyond,
        per_target_requests: (all_requests - one_requests) / beyond,
        status_bytes,
        memory_mib,
        peak_mib,
    })
}

/// Promotes b1 through `gate` and waits until its Passage succeeded: how long it took,
/// the requests the controller sent meanwhile (all, and by verb and resource), and
/// the size of the Passage's status.
async fn crossing(
    ops: &Ops,
    passages: &Api<Passage>,
    process: &Process,
    namespace: &str,
    gate: &str,
) -> anyhow::Result<(f64, f64, Breakdown, usize)> {
    let before = process.requests_by_kind().await?;
    let requests = process.requests().await?;
    let started = Instant::now();
    let passage = ops.promote(namespace, gate, "b1", "bench").await?;
    let name = passage.metadata.name.clone().unwrap_or_default();
    let finished = loop {
        let passage = passages.get(&name).await?;
        if passage.is_terminal() {
            break passage;
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "{gate}'s crossing did not finish within 10 minutes (the controller's log: {})",
            process.log.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let took = started.elapsed().as_secs_f64() * 1000.0;
    anyhow::ensure!(
        finished.phase() == hecate_types::PassagePhase::Succeeded,
        "{gate}'s crossing ended {:?}: {:?}",
        finished.phase(),
        finished.status.as_ref().map(|s| &s.message)
    );
    let sent = process.requests().await? - requests;
    let breakdown = process.requests_by_kind().await?.since(&before, 1.0);
    let bytes = serde_json::to_vec(&finished.status)?.len();
    Ok((took, sent, breakdown, bytes))
}

/// Manual Gate `name` over `targets` (in the cluster Hecate runs in), in [`WAVES`]
/// waves of about equal size, each tolerating no failure, none soaking: each target's
/// crossing waits for its own Kustomization `app-<target>`.
fn gate(name: &str, targets: &[String]) -> Gate {
    let per_wave = targets.len().div_ceil(WAVES).max(1);
    let waves = targets
        .chunks(per_wave)
        .enumerate()
        .map(|(i, names)| Wave {
            name: format!("wave-{}", i + 1),
            targets: Some(WaveTargets {
                names: names.to_vec(),
                selector: None,
            }),
            ..Wave::default()
        })
        .collect();
    Gate::new(
        name,
        GateSpec {
            admits: vec![Admission {
                from: BundleOrigin {
                    beacon: "app".into(),
                },
                ..Admission::default()
            }],
            targets: Some(Targets {
                list: targets
                    .iter()
                    .map(|name| Target {
                        name: name.clone(),
                        ..Target::default()
                    })
                    .collect(),
                selector: None,
            }),
            rollout: Some(Rollout { waves }),
            passage: Some(PassageTemplate {
                steps: vec![Step {
                    uses: "flux-wait".into(),
                    with: Some(json!({
                        "resources": [{"kind": "Kustomization", "name": "app-${{ target.name }}"}],
                    })),
                    ..Step::default()
                }],
            }),
            ..GateSpec::default()
        },
    )
}
