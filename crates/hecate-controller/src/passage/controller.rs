//! The Passage controller's wiring on kube-runtime (spec controller.md §0.5): a Passage
//! wakes when it is created or its spec changes (an abort), never on its own status
//! writes (every step call raises `attempts`: waking on that would spin); a waiting
//! step is asked again after the delay it named, or sooner when the object it waits
//! for changes ([`super::wake`]). Few crossings run at once: a
//! checkout is heavy on a small machine.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use hecate_types::Passage;
use hecate_types::lenient::Lenient;
use kube::ResourceExt as _;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector;
use kube::runtime::{WatchStreamExt as _, watcher};

use super::{Error, PassageReconciler};
use crate::backoff;
use crate::metrics::Loop;
use crate::predicate;
use crate::scope::{self, Scope};
use crate::unreadable::Unreadable;

/// How many Passages advance at once.
pub const CONCURRENCY: u16 = 4;

/// Runs the Passage controller over the namespaces of `scope` until `shutdown`
/// completes, then lets steps under way finish.
pub async fn run(
    client: kube::Client,
    reconciler: PassageReconciler,
    wakes: super::wake::Wakes,
    scope: Scope,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let (reader, writer) = reflector::store::<Passage>();
    // Each object read on its own: one that does not decode is reported and skipped.
    let unreadable = Unreadable::start(client.clone(), scope.clone(), reconciler.events.clone());
    let passages = scope
        .watch(
            move |namespace| {
                hecate_ops::lenient::watcher(
                    scope::api::<Lenient<Passage>>(&client, namespace),
                    watcher::Config::default(),
                    unreadable.of::<Passage>(),
                )
            },
            reader.clone(),
        )
        .modify(slim_finished)
        .reflect(writer);
    let passages = predicate::changed(passages, |passage| {
        passage.metadata.generation.map(|g| g as u64)
    });
    let context = Arc::new(Context { reconciler, scope });
    Controller::for_stream(passages, reader)
        .with_config(controller::Config::default().concurrency(CONCURRENCY))
        .reconcile_on(wakes)
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "passage controller");
            }
        })
        .await;
}

/// What the controller keeps of a Passage: a finished one is only ever looked at to
/// remove its work directory, so its steps (most of its size) are dropped; field
/// managers go for all. The cluster's whole history of crossings is held in memory.
fn slim_finished(passage: &mut Passage) {
    // `None`, not an empty list: this copy is written back with the status, and an
    // empty list would erase the object's field ownership.
    passage.metadata.managed_fields = None;
    if passage.is_terminal() {
        passage.spec.steps.clear();
        passage.spec.vars.clear();
        if let Some(status) = passage.status.as_mut() {
            status.steps.clear();
            status.watch.clear();
        }
    }
}

struct Context {
    reconciler: PassageReconciler,
    scope: Scope,
}

async fn reconcile(passage: Arc<Passage>, context: Arc<Context>) -> Result<Action, Error> {
    if !context
        .scope
        .contains(&passage.namespace().unwrap_or_default())
        .await
    {
        return Ok(Action::await_change());
    }
    // A crossing under way is read afresh, not from the watch's copy: a wake queued
    // while the last reconcile ran (its own flux-reconcile touching what flux-wait
    // watches, say) can find that copy older than the last status write, and would run
    // finished steps — their side effects — again from the older record. A finished
    // one never changes again.
    let reconciler = &context.reconciler;
    let outcome = if passage.is_terminal() {
        reconciler
            .metrics
            .reconcile(Loop::Passage, reconciler.reconcile(&passage))
            .await?
    } else {
        let (namespace, name) = (passage.namespace().unwrap_or_default(), passage.name_any());
        let read_afresh = reconciler.reconcile_named(&namespace, &name);
        reconciler
            .metrics
            .reconcile(Loop::Passage, read_afresh)
            .await?
    };
    Ok(match outcome.requeue_after {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    })
}

fn error_policy(passage: Arc<Passage>, error: &Error, context: Arc<Context>) -> Action {
    context
        .reconciler
        .metrics
        .count_failure(Loop::Passage, error.kind());
    if let Error::Kube(error) = error
        && backoff::is_conflict(error)
    {
        // An abort (or another write) landed meanwhile: advance again with it.
        return Action::requeue(backoff::FIRST);
    }
    tracing::warn!(
        namespace = %passage.namespace().unwrap_or_default(),
        passage = %passage.name_any(),
        %error,
        "Passage reconcile failed"
    );
    Action::requeue(Duration::from_secs(5))
}
