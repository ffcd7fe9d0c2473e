//! The bench's namespace: five pipelines of ten Gates, with releases that crossed
//! further the older they are, and two Passages per release (every tenth one failed).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::Context as _;
use futures::{StreamExt as _, TryStreamExt as _};
use hecate_types::{
    Admission, Artifact, Bundle, BundleOrigin, BundleSpec, BundleStatus, Gate, GateCrossing,
    GateOccupant, GateSpec, GateStatus, Health, HealthReport, Passage, PassagePhase, PassageSpec,
    PassageStatus, PassageTemplate, Step, Time, digest, wellknown,
};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::core::object::HasStatus;
use kube::{Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{GATES_PER_PIPELINE, PIPELINES, Scale};

const FIELD_MANAGER: &str = "hecate-bench";
/// Writes in flight at once while seeding.
const CONCURRENCY: usize = 48;

/// Writes the seed unless a complete one is there already.
pub(crate) async fn seed(
    client: &kube::Client,
    namespace: &str,
    scale: Scale,
) -> anyhow::Result<()> {
    // The CRDs as this build generates them (a control plane started before a change
    // to them still has the old ones; applying is idempotent).
    hecate_testenv::install_crds(client)
        .await
        .context("installing the CRDs")?;
    let bundles: Api<Bundle> = Api::namespaced(client.clone(), namespace);
    let passages: Api<Passage> = Api::namespaced(client.clone(), namespace);
    let params = ListParams::default();
    let have_bundles = bundles
        .list_metadata(&params)
        .await
        .map(|l| l.items.len())
        .unwrap_or(0);
    let have_passages = passages
        .list_metadata(&params)
        .await
        .map(|l| l.items.len())
        .unwrap_or(0);
    if have_bundles == scale.bundles() && have_passages == scale.passages() {
        eprintln!("[bench] reusing the seed in namespace {namespace}");
        return Ok(());
    }
    let started = Instant::now();
    eprintln!(
        "[bench] seeding namespace {namespace}: 50 Gates, {} Bundles, {} Passages…",
        scale.bundles(),
        scale.passages()
    );
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let object = Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    namespaces
        .patch(
            namespace,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&object),
        )
        .await?;

    let now = jiff::Timestamp::now();
    let at = |minutes_ago: i64| Time(now - jiff::SignedDuration::from_mins(minutes_ago));
    let per_pipeline = scale.bundles() / PIPELINES;

    let mut gates = Vec::new();
    let mut all_bundles = Vec::new();
    let mut all_passages = Vec::new();
    for p in 0..PIPELINES {
        let beacon = format!("app-{p}");
        // Release r has crossed the first `depth(r)` Gates: old releases went far, new
        // ones are still early in the pipeline.
        let depth =
            |r: usize| ((r * GATES_PER_PIPELINE) / per_pipeline + 1).min(GATES_PER_PIPELINE);
        let names: Vec<String> = (0..per_pipeline)
            .map(|r| {
                let artifacts = vec![Artifact::image(
                    format!("ghcr.io/acme/{beacon}"),
                    format!("1.{r}.0"),
                    format!("sha256:{:064x}", p * 100_000 + r),
                )];
                digest::bundle_name(&beacon, &digest::content_digest(&artifacts))
            })
            .collect();
        for (r, name) in names.iter().enumerate() {
            let artifacts = vec![Artifact::image(
                format!("ghcr.io/acme/{beacon}"),
                format!("1.{r}.0"),
                format!("sha256:{:064x}", p * 100_000 + r),
            )];
            let mut bundle = Bundle::new(
                name,
                BundleSpec {
                    beacon: beacon.clone(),
                    digest: digest::content_digest(&artifacts),
                    alias: String::new(),
                    artifacts,
                },
            );
            bundle
                .labels_mut()
                .insert(wellknown::LABEL_BEACON.into(), beacon.clone());
            let cleared = (0..depth(r))
                .map(|g| GateCrossing {
                    gate: format!("{beacon}-g{g}"),
                    passage: format!("{beacon}-g{g}-{r}"),
                    at: at((per_pipeline - r) as i64),
                    actor: "controller".into(),
                    reason: String::new(),
                })
                .collect();
            bundle.status = Some(BundleStatus {
                cleared,
                ..BundleStatus::default()
            });
            all_bundles.push(bundle);
            // Two Passages per release: a success at its deepest Gate and, every
            // tenth release, a failure one Gate further.
            for (k, phase) in [PassagePhase::Succeeded, PassagePhase::Failed]
                .into_iter()
                .enumerate()
            {
                let g = (depth(r) - 1 + k).min(GATES_PER_PIPELINE - 1);
                let phase = if k == 1 && r % 10 != 0 {
                    PassagePhase::Succeeded
                } else {
                    phase
                };
                let gate = format!("{beacon}-g{g}");
                let mut passage = Passage::new(
                    &format!("{gate}-{r}-{k}"),
                    PassageSpec {
                        gate: gate.clone(),
                        bundle: name.clone(),
                        steps: vec![Step {
                            uses: "flux-wait".into(),
                            ..Step::default()
                        }],
                        actor: "controller".into(),
                        ..PassageSpec::default()
                    },
                );
                passage
                    .labels_mut()
                    .insert(wellknown::LABEL_GATE.into(), gate.clone());
                passage
                    .labels_mut()
                    .insert(wellknown::LABEL_BUNDLE.into(), name.clone());
                passage.status = Some(PassageStatus {
                    phase: Some(phase),
                    message: if phase == PassagePhase::Failed {
                        "step flux-wait: health check failed".into()
                    } else {
                        format!("crossed {gate}")
                    },
                    started_at: Some(at((per_pipeline - r) as i64)),
                    finished_at: Some(at((per_pipeline - r) as i64 - 1)),
                    ..PassageStatus::default()
                });
                all_passages.push(passage);
            }
        }
        for g in 0..GATES_PER_PIPELINE {
            let mut gate = Gate::new(
                &format!("{beacon}-g{g}"),
                GateSpec {
                    admits: vec![Admission {
                        from: BundleOrigin {
                            beacon: beacon.clone(),
                        },
                        after: if g == 0 {
                            vec![]
                        } else {
                            vec![format!("{beacon}-g{}", g - 1)]
                        },
                        require_approval: g == GATES_PER_PIPELINE - 1,
                        approvals: None,
                    }],
                    passage: Some(PassageTemplate {
                        steps: vec![Step {
                            uses: "flux-wait".into(),
                            ..Step::default()
                        }],
                    }),
                    auto: g == 0,
                    ..GateSpec::default()
                },
            );
            let occupants: Vec<usize> = (0..per_pipeline)
                .rev()
                .filter(|r| depth(*r) > g)
                .take(10)
                .collect();
            let history: Vec<GateOccupant> = occupants
                .iter()
                .map(|r| GateOccupant {
                    bundle: names[*r].clone(),
                    digest: String::new(),
                    passage: format!("{beacon}-g{g}-{r}-0"),
                    entered_at: at((per_pipeline - r) as i64),
                    actor: "controller".into(),
                    verified: None,
                })
                .collect();
            gate.status = Some(GateStatus {
                current: history.first().cloned(),
                history,
                health: Some(HealthReport {
                    status: if g % 7 == 3 {
                        Health::Degraded
                    } else {
                        Health::Healthy
                    },
                    issues: vec![],
                    details: None,
                    observed_at: Some(at(0)),
                    since: Some(at(60)),
                }),
                ..GateStatus::default()
            });
            gates.push(gate);
        }
    }
    let written = AtomicUsize::new(0);
    write_all(client, namespace, gates, &written)
        .await
        .context("seeding Gates")?;
    write_all(client, namespace, all_bundles, &written)
        .await
        .context("seeding Bundles")?;
    write_all(client, namespace, all_passages, &written)
        .await
        .context("seeding Passages")?;
    eprintln!("[bench] seeded in {:.0?}", started.elapsed());
    Ok(())
}

/// Creates each object (or leaves an existing one) and writes its status, many at once,
/// counting in `written` the objects done.
pub(crate) async fn write_all<K>(
    client: &kube::Client,
    namespace: &str,
    objects: Vec<K>,
    written: &AtomicUsize,
) -> anyhow::Result<()>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + HasStatus
        + Clone
        + std::fmt::Debug
        + Serialize
        + DeserializeOwned,
    K::Status: Serialize,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    futures::stream::iter(objects)
        .map(|object| {
            let api = api.clone();
            async move {
                match api.create(&PostParams::default(), &object).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 409 => {}
                    Err(error) => return Err(error),
                }
                if let Some(status) = object.status() {
                    let status = serde_json::json!({"status": status});
                    api.patch_status(
                        &object.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(&status),
                    )
                    .await?;
                }
                written.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<()>()
        .await?;
    Ok(())
}
