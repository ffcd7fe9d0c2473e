//! The Beacon controller's wiring on kube-runtime (spec controller.md §0.5, §1.7): what
//! wakes a Beacon, how many poll at once, how failures back off.
//!
//! - a Beacon wakes on a spec change or a reconcile request (the
//!   `reconcile.fluxcd.io/requestedAt` annotation), never on its own status write
//!   ([`crate::predicate::spec_or_request`]): the interval is kept by the requeue
//!   alone, and a status write that woke the Beacon would poll its sources in a loop;
//! - otherwise a Beacon polls every `spec.interval` (the reconcile says when);
//! - at most [`CONCURRENCY`] Beacons poll at once, so two hundred Beacons starting
//!   together do not start two hundred git processes;
//! - an API error backs off from a second, doubling, to five minutes. A source that
//!   does not answer is not an error: it is a condition and the next interval.

use std::future::Future;
use std::sync::Arc;

use futures::StreamExt as _;
use hecate_types::Beacon;
use hecate_types::lenient::Lenient;
use kube::ResourceExt as _;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector;
use kube::runtime::{WatchStreamExt as _, watcher};

use super::{BeaconReconciler, Error};
use crate::backoff::{self, Failures};
use crate::metrics::Loop;
use crate::predicate;
use crate::scope::{self, Scope};
use crate::unreadable::Unreadable;

/// How many Beacons reconcile (poll their sources) at the same time.
pub const CONCURRENCY: u16 = 8;

/// Runs the Beacon controller over the namespaces of `scope` until `shutdown`
/// completes, then lets reconciles under way finish.
pub async fn run(
    client: kube::Client,
    reconciler: BeaconReconciler,
    scope: Scope,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let (beacons_reader, beacons_writer) = reflector::store::<Beacon>();
    // Each object read on its own: one that does not decode is reported and skipped.
    let unreadable = Unreadable::start(client.clone(), scope.clone(), reconciler.events.clone());
    let beacons = scope
        .watch(
            {
                let client = client.clone();
                move |namespace| {
                    hecate_ops::lenient::watcher(
                        scope::api::<Lenient<Beacon>>(&client, namespace),
                        watcher::Config::default(),
                        unreadable.of::<Beacon>(),
                    )
                }
            },
            beacons_reader.clone(),
        )
        .reflect(beacons_writer);
    let beacons = predicate::changed(beacons, predicate::spec_or_request);

    let context = Arc::new(Context {
        scope,
        reconciler,
        failures: Failures::default(),
    });
    // A namespace joining the shard is listed: its Beacons arrive as changes and are
    // looked at then.
    Controller::for_stream(beacons, beacons_reader)
        .with_config(controller::Config::default().concurrency(CONCURRENCY))
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                // error_policy has said it, with the Beacon's name.
                tracing::debug!(%error, "beacon controller");
            }
        })
        .await;
}

/// The reconciler, its shard, and each Beacon's count of consecutive failures.
struct Context {
    scope: Scope,
    reconciler: BeaconReconciler,
    failures: Failures<Beacon>,
}

async fn reconcile(beacon: Arc<Beacon>, context: Arc<Context>) -> Result<Action, Error> {
    let namespace = beacon.namespace().unwrap_or_default();
    if !context.scope.contains(&namespace).await {
        return Ok(Action::await_change());
    }
    tracing::debug!(%namespace, beacon = %beacon.name_any(), "polling");
    let metrics = &context.reconciler.metrics;
    let outcome = metrics
        .reconcile(Loop::Beacon, context.reconciler.reconcile(&beacon))
        .await?;
    tracing::debug!(%namespace, beacon = %beacon.name_any(), ?outcome, "polled");
    context.failures.succeeded(&beacon);
    Ok(match outcome.requeue_after {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    })
}

fn error_policy(beacon: Arc<Beacon>, error: &Error, context: Arc<Context>) -> Action {
    context
        .reconciler
        .metrics
        .count_failure(Loop::Beacon, error.kind());
    // The Beacon changed between reading and writing its status (a poke, a spec edit,
    // or this controller's view catching up with its own write): poll again now.
    if let Error::Kube(error) = error
        && backoff::is_conflict(error)
    {
        tracing::debug!(beacon = %beacon.name_any(), "the Beacon changed while polling; again");
        return Action::requeue(backoff::FIRST);
    }
    let wait = context.failures.failed(&beacon);
    tracing::warn!(
        namespace = %beacon.namespace().unwrap_or_default(),
        beacon = %beacon.name_any(),
        %error,
        retry_in_s = wait.as_secs(),
        "Beacon reconcile failed"
    );
    Action::requeue(wait)
}

#[cfg(test)]
mod tests {
    use hecate_types::{BeaconSpec, BeaconStatus, wellknown};

    use super::*;

    /// Spec §1.7: the Beacon's own status write must not wake it, or it would poll its
    /// sources in a loop; a spec edit and a reconcile request must.
    #[test]
    fn a_beacon_is_not_woken_by_its_own_status_write() {
        let mut polled = Beacon::new("app", BeaconSpec::default());
        polled.metadata.generation = Some(3);
        polled.metadata.resource_version = Some("100".into());
        let mut written = polled.clone();
        written.metadata.resource_version = Some("101".into());
        written.status = Some(BeaconStatus {
            latest_bundle: "app-0123456789ab".into(),
            last_handled_reconcile_at: "1".into(),
            ..BeaconStatus::default()
        });
        assert_eq!(
            predicate::spec_or_request(&polled),
            predicate::spec_or_request(&written)
        );

        let mut edited = polled.clone();
        edited.metadata.generation = Some(4);
        assert_ne!(
            predicate::spec_or_request(&polled),
            predicate::spec_or_request(&edited)
        );

        let poke = |token: &str| {
            let mut poked = polled.clone();
            poked.metadata.annotations = Some(
                [(
                    wellknown::ANNOTATION_RECONCILE_REQUESTED_AT.to_string(),
                    token.to_string(),
                )]
                .into(),
            );
            predicate::spec_or_request(&poked)
        };
        assert_ne!(
            predicate::spec_or_request(&polled),
            poke("1786620716793895315")
        );
        assert_ne!(poke("1786620716793895315"), poke("1786620716793895316"));
        assert_eq!(poke("same"), poke("same"));
    }
}
