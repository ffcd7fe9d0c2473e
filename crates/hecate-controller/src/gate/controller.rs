//! The Gate controller's wiring on kube-runtime (spec controller.md §0.5): what wakes a
//! Gate, where a reconcile reads, how failures back off.
//!
//! - a Gate wakes on a spec change or a reconcile request, never on its own status
//!   write ([`crate::predicate::spec_or_request`]);
//! - a change of a Passage that the Gate's copy shows wakes its Gate (a finished
//!   crossing is noticed at once; a step's progress wakes nobody);
//! - a change of a Bundle wakes the Gates it concerns (a new Bundle or an approval is
//!   acted on at once, not at the next minute's tick: quirk Q12; a crossing recorded
//!   wakes the Gate that recorded it and those downstream, not every Gate of the
//!   Beacon — see [`super::wakes`]);
//! - a change of a Flux object a Gate's own watch names (a Kustomization or HelmRelease
//!   Flux wrote, someone suspended) wakes that Gate, so its health follows Flux's
//!   status at once rather than at the next tick ([`flux_wakes`]);
//! - a connected cluster coming, going or changing its labels wakes the Gates of its
//!   namespace that select targets by label, so one that joins is caught up at once
//!   (DECISION 164);
//! - otherwise a Gate is looked at every [`super::RESYNC`], or every
//!   [`super::AT_REST_RESYNC`] when at rest (nothing under way, healthy by checks a
//!   watch follows): the Flux watches' stores are what its `flux` checks read
//!   (DECISION 131).
//!
//! Passages and Bundles are read from the same watches that wake Gates, so a reconcile
//! costs no LIST; kube-runtime runs one reconcile per Gate at a time, which is what
//! makes "one crossing at a time" hold.

use std::future::Future;
use std::sync::Arc;

use futures::StreamExt as _;
use hecate_ops::lenient;
use hecate_steps::flux::FluxAccess;
use hecate_types::lenient::Lenient;
use hecate_types::{Bundle, Gate, Passage};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt as _;
use kube::api::{Api, ApiResource, DynamicObject, PartialObjectMeta};
use kube::core::GroupVersionKind;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use tokio::sync::watch;

use super::reads::{self, Stores};
use super::wakes::{self, BundleWakes};
use super::{Error, GateReconciler};
use crate::backoff::{self, Failures};
use crate::index::ByNamespace;
use crate::metrics::Loop;
use crate::notify::{self, Listening};
use crate::predicate;
use crate::scope::{self, Scope};
use crate::unreadable::Unreadable;
use hecate_ops::json_store::JsonStore;

/// How many Gates reconcile at once: each holds copies of its namespace's Bundles and
/// its Passages while it decides, so two thousand starting together must not all
/// hold theirs at the same time.
pub const CONCURRENCY: u16 = 16;

/// Builds the reconciler around the stores this controller fills.
pub type Build = Box<dyn FnOnce(Stores) -> GateReconciler<Stores> + Send>;

/// Runs the Gate controller over the namespaces of `scope` until `shutdown` completes,
/// then lets reconciles under way finish.
pub async fn run(
    client: kube::Client,
    build: Build,
    flux: Arc<FluxAccess>,
    listening: watch::Receiver<Listening>,
    scope: Scope,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let (gates_reader, gates_writer) = reflector::store::<Gate>();
    let gates_index = ByNamespace::default();
    // What the Gates judge, held as JSON (DECISION 142): the stores and the memory of
    // what each object was, which tells what a change wakes.
    let passages_held = JsonStore::<Passage>::grouped(reads::passage_gate);
    let bundles_held = JsonStore::<Bundle>::new();
    // Connected clusters' Secrets, by their metadata alone: what a Gate selecting
    // targets by label spans, and a cluster joining wakes it (DECISION 164).
    let (clusters_reader, clusters_writer) = reflector::store::<PartialObjectMeta<Secret>>();
    let reconciler = build(Stores::new(
        passages_held.clone(),
        bundles_held.clone(),
        clusters_reader.clone(),
    ));
    // kube-runtime reconciles what exists; what the reconciler keeps per Gate (its
    // health series, its last write) is dropped here when a Gate goes.
    let forget = reconciler.forgetter();
    // Each object read on its own: one that does not decode is reported and skipped.
    let unreadable = Unreadable::start(client.clone(), scope.clone(), reconciler.events.clone());
    let gates = scope
        .watch(
            {
                let (client, unreadable) = (client.clone(), unreadable.clone());
                move |namespace| {
                    lenient::watcher(
                        scope::api::<Lenient<Gate>>(&client, namespace),
                        watcher::Config::default(),
                        unreadable.of::<Gate>(),
                    )
                }
            },
            gates_reader.clone(),
        )
        .inspect({
            let gates_index = gates_index.clone();
            move |event| {
                if let Ok(event) = event {
                    gates_index.apply(event);
                }
            }
        })
        .reflect(gates_writer)
        .inspect(move |event| {
            if let Ok(watcher::Event::Delete(gate)) = event {
                forget.gate(gate);
            }
        });
    let gates = predicate::changed(gates, predicate::spec_or_request);
    let passages = wakes::stream(
        scope
            .watch(
                {
                    let client = client.clone();
                    move |namespace| {
                        lenient::watcher(
                            scope::api::<Lenient<Passage>>(&client, namespace),
                            watcher::Config::default(),
                            // The Passage controller reports it on the Passage.
                            |bad| lenient::warn("Passage", bad),
                        )
                    }
                },
                passages_held.clone(),
            )
            .modify(slim_passage),
        passages_held,
        wakes::of_passage,
    );
    let clusters = scope
        .watch(
            {
                let client = client.clone();
                move |namespace| {
                    watcher(
                        scope::api::<PartialObjectMeta<Secret>>(&client, namespace),
                        watcher::Config::default().labels(&reads::connected()),
                    )
                }
            },
            clusters_reader,
        )
        .reflect(clusters_writer)
        .touched_objects()
        .flat_map({
            let (gates, index) = (gates_reader.clone(), gates_index.clone());
            move |changed| {
                let woken = match changed {
                    Ok(secret) => selecting(&gates, &index, secret.metadata.namespace.as_deref()),
                    // The watch backs off and resumes; the tick covers the gap.
                    Err(_) => Vec::new(),
                };
                futures::stream::iter(woken)
            }
        });
    let heard = newly_heard(listening, gates_reader.clone(), gates_index.clone());
    let bundle_wakes = BundleWakes::new(gates_reader.clone(), gates_index);
    let bundles = wakes::stream(
        scope
            .watch(
                {
                    let client = client.clone();
                    move |namespace| {
                        lenient::watcher(
                            scope::api::<Lenient<Bundle>>(&client, namespace),
                            watcher::Config::default(),
                            unreadable.of::<Bundle>(),
                        )
                    }
                },
                bundles_held.clone(),
            )
            .modify(slim_bundle),
        bundles_held,
        move |change| bundle_wakes.on(change),
    );

    let context = Arc::new(Context {
        scope,
        reconciler,
        failures: Failures::default(),
    });
    // A namespace joining the shard is listed: its Gates arrive as changes and are
    // looked at then.
    let mut controller = Controller::for_stream(gates, gates_reader)
        .with_config(controller::Config::default().concurrency(CONCURRENCY))
        .reconcile_on(passages)
        .reconcile_on(bundles)
        .reconcile_on(clusters)
        .reconcile_on(heard);
    for (resource, changes) in flux_wakes(&client, &flux).await {
        let watching = controller.store();
        let kind = resource.kind;
        let wakes = changes.flat_map(move |change| {
            let gates = match change {
                Ok(object) => gates_watching(&watching, &kind, &object),
                // The watch backs off and resumes; the tick covers the gap.
                Err(_) => Vec::new(),
            };
            futures::stream::iter(gates)
        });
        controller = controller.reconcile_on(wakes);
    }
    controller
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                // error_policy has said it, with the Gate's name.
                tracing::debug!(%error, "gate controller");
            }
        })
        .await;
}

/// The Gates of each namespace a Notifier starts hearing (every Gate when one starts
/// hearing every namespace): looked at again, they offer what they have to tell at
/// once rather than at their next tick (DECISION 166).
fn newly_heard(
    listening: watch::Receiver<Listening>,
    gates: Store<Gate>,
    index: ByNamespace,
) -> impl futures::Stream<Item = ObjectRef<Gate>> + Send + 'static {
    let before = listening.borrow().clone();
    futures::stream::unfold((listening, before), move |(mut listening, before)| {
        let (gates, index) = (gates.clone(), index.clone());
        async move {
            listening.changed().await.ok()?;
            let now = listening.borrow_and_update().clone();
            let woken: Vec<ObjectRef<Gate>> = match notify::controller::newly_heard(&before, &now) {
                None => gates
                    .state()
                    .iter()
                    .map(|g| ObjectRef::from(g.as_ref()))
                    .collect(),
                Some(namespaces) => namespaces
                    .iter()
                    .flat_map(|ns| index.in_namespace(&gates, ns))
                    .map(|g| ObjectRef::from(g.as_ref()))
                    .collect(),
            };
            Some((futures::stream::iter(woken), (listening, now)))
        }
    })
    .flatten()
}

/// The Gates of `namespace` that select targets by label: those a connected cluster
/// coming, changing its labels or going can change.
fn selecting(
    gates: &Store<Gate>,
    index: &ByNamespace,
    namespace: Option<&str>,
) -> Vec<ObjectRef<Gate>> {
    let Some(namespace) = namespace else {
        return Vec::new();
    };
    index
        .in_namespace(gates, namespace)
        .iter()
        .filter(|gate| gate.selects_targets())
        .map(|gate| ObjectRef::from(gate.as_ref()))
        .collect()
}

/// What a Gate reads of a Passage, and no more: every Passage of the cluster is held
/// in memory, and its steps (spec and records) are most of its size. Field managers
/// go too, and what only says how far a running crossing got (its current step, its
/// message): a change the Gate does not keep wakes it for nothing.
fn slim_passage(passage: &mut Passage) {
    passage.metadata.managed_fields = None;
    passage.spec.steps.clear();
    passage.spec.vars.clear();
    let terminal = passage.is_terminal();
    if let Some(status) = passage.status.as_mut() {
        status.steps.clear();
        status.current_step = 0;
        if !terminal {
            // A finished crossing's message is the reason a failure is recorded with.
            status.message.clear();
        }
    }
}

/// What a Gate reads of a Bundle: all but its field managers and the commits a git
/// artifact brings (DECISION 140: up to twenty per Bundle, read by `diff` from the API
/// server, never by a Gate's judgement).
fn slim_bundle(bundle: &mut Bundle) {
    bundle.metadata.managed_fields = None;
    for commit in bundle
        .spec
        .artifacts
        .iter_mut()
        .filter_map(|a| a.commit.as_mut())
    {
        commit.commits.clear();
        commit.more_commits = 0;
    }
}

/// The reconciler, its shard, and each Gate's count of consecutive failures (for
/// backoff).
struct Context {
    scope: Scope,
    reconciler: GateReconciler<Stores>,
    failures: Failures<Gate>,
}

async fn reconcile(gate: Arc<Gate>, context: Arc<Context>) -> Result<Action, Error> {
    if !context
        .scope
        .contains(&gate.namespace().unwrap_or_default())
        .await
    {
        return Ok(Action::await_change());
    }
    tracing::debug!(namespace = %gate.namespace().unwrap_or_default(), gate = %gate.name_any(), "reconciling");
    let metrics = &context.reconciler.metrics;
    let outcome = metrics
        .reconcile(Loop::Gate, context.reconciler.reconcile(&gate))
        .await?;
    tracing::debug!(namespace = %gate.namespace().unwrap_or_default(), gate = %gate.name_any(), ?outcome, "reconciled");
    context.failures.succeeded(&gate);
    Ok(match outcome.requeue_after {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    })
}

fn error_policy(gate: Arc<Gate>, error: &Error, context: Arc<Context>) -> Action {
    context
        .reconciler
        .metrics
        .count_failure(Loop::Gate, error.kind());
    // The Gate changed between reading and writing it (a person, or this controller's
    // view catching up with its own last write): decide again with the new version.
    if let Error::Kube(error) = error
        && backoff::is_conflict(error)
    {
        tracing::debug!(gate = %gate.name_any(), "the Gate changed while deciding; again");
        return Action::requeue(backoff::FIRST);
    }
    let wait = context.failures.failed(&gate);
    tracing::warn!(
        namespace = %gate.namespace().unwrap_or_default(),
        gate = %gate.name_any(),
        %error,
        retry_in_s = wait.as_secs(),
        "Gate reconcile failed"
    );
    Action::requeue(wait)
}

/// The Flux kinds whose objects' changes wake the Gates watching them, each with its
/// changes: Flux's appliers, the kinds a Gate's health is usually about. A kind the
/// cluster does not serve is left out (the tick still looks). What each watch holds is
/// what `flux` reads its objects from ([`FluxAccess::follow`]): a Gate watching them
/// costs no request until one changes.
async fn flux_wakes(
    client: &kube::Client,
    flux: &FluxAccess,
) -> Vec<(
    ApiResource,
    impl futures::Stream<Item = Result<DynamicObject, watcher::Error>> + Send + 'static,
)> {
    let mut wakes = Vec::new();
    for kind in ["Kustomization", "HelmRelease"] {
        let Some(api_version) = hecate_ops::rules::flux::default_api_version(kind) else {
            continue;
        };
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let Ok((resource, _)) = kube::discovery::pinned_kind(client, &gvk).await else {
            continue;
        };
        let writer = reflector::store::Writer::new(resource.clone());
        flux.follow(&resource, writer.as_reader());
        let changes = watcher(
            Api::<DynamicObject>::all_with(client.clone(), &resource),
            watcher::Config::default(),
        )
        .default_backoff()
        .modify(|object: &mut DynamicObject| object.metadata.managed_fields = None)
        .reflect(writer)
        .touched_objects();
        wakes.push((resource, changes));
    }
    wakes
}

/// The Gates whose own watch names `object` (of `kind`) in their cluster.
fn gates_watching(gates: &Store<Gate>, kind: &str, object: &DynamicObject) -> Vec<ObjectRef<Gate>> {
    let (Some(namespace), Some(name)) = (
        object.metadata.namespace.as_deref(),
        object.metadata.name.as_deref(),
    ) else {
        return Vec::new();
    };
    gates
        .state()
        .iter()
        .filter(|gate| {
            hecate_ops::rules::flux_watch::watched(gate)
                .iter()
                .any(|w| w.kind == kind && w.name == name && w.namespace == namespace)
        })
        .map(|gate| ObjectRef::from(gate.as_ref()))
        .collect()
}
