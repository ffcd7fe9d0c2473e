//! One Beacon reconcile (spec controller.md §1.2): acknowledge the reconcile request,
//! resolve every watch entry, decide, emit the Bundle, prune old ones, write the
//! status, and come back after `spec.interval`.
//!
//! The decisions are pure ([`super::decide`], [`super::retention::to_collect`]); this
//! is the I/O around them. The status is written whole with the resourceVersion it was
//! read at, so a reconcile that raced another write fails and is retried rather than
//! overwriting it; the retry is harmless because emission is idempotent by name.
//!
//! A source that cannot be reached is a `Ready=False` condition and a poll at the next
//! interval, not an error: errors (the API server refusing a write) are what back off.
//!
//! A reconcile that answers a new request (`requestedAt` not yet echoed) is a requested
//! poll ([`Occasion::Requested`]): sources look everything up afresh rather than trust
//! what they remember.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use hecate_types::{
    ArtifactRef, Beacon, BeaconStatus, Bundle, GitWatch, Time, WatchSourceRef, wellknown,
};
use kube::api::{Api, PostParams};
use kube::{Resource as _, ResourceExt as _};

use super::decide::{self, Next};
use super::emit::{self, Emitted};
use super::retention;
use super::source::{Occasion, ResolveError, Source};
use crate::condition::set_ready;
use crate::events::{self, Events};
use crate::metrics::Metrics;
use hecate_steps::clock::Clock;

/// What a Beacon reconcile can fail with; the controller retries with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed.
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// Creating the Bundle failed (other than "it exists").
    #[error("creating Bundle {bundle}: {source}")]
    Emit {
        /// The Bundle's name.
        bundle: String,
        /// Why.
        source: kube::Error,
    },
}

impl Error {
    /// The kind of failure, for the failures metric: one of a fixed set.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Kube(error) => crate::backoff::kind(error),
            Self::Emit { .. } => "emit",
        }
    }
}

/// When to look at the Beacon again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// `None`: only when something changes (a suspended Beacon, an unusable name).
    pub requeue_after: Option<Duration>,
}

/// Everything a Beacon reconcile needs.
pub struct BeaconReconciler {
    /// The client it writes with.
    pub client: kube::Client,
    /// Where watch entries resolve.
    pub sources: Arc<dyn Source>,
    /// Where it reads the time.
    pub clock: Arc<dyn Clock>,
    /// Where Events go.
    pub events: Events,
    /// Where its reconciles are counted.
    pub metrics: Arc<Metrics>,
}

impl BeaconReconciler {
    /// Reconciles Beacon `name` in `namespace`, reading it first; one that no longer
    /// exists is not an error.
    pub async fn reconcile_named(&self, namespace: &str, name: &str) -> Result<Outcome, Error> {
        match Api::<Beacon>::namespaced(self.client.clone(), namespace)
            .get_opt(name)
            .await?
        {
            Some(beacon) => self.reconcile(&beacon).await,
            None => Ok(Outcome {
                requeue_after: None,
            }),
        }
    }

    /// Reconciles `beacon` as read.
    pub async fn reconcile(&self, beacon: &Beacon) -> Result<Outcome, Error> {
        let now = self.clock.now();
        let namespace = beacon.namespace().unwrap_or_default();
        let name = beacon.name_any();
        let generation = beacon.metadata.generation.unwrap_or_default();
        let mut status = beacon.status.clone().unwrap_or_default();
        // Acknowledged before anything can stop the reconcile, so that a caller waiting
        // for its token (`hecate poll --wait`) hears back even from a suspended Beacon.
        let requested = beacon
            .annotations()
            .get(wellknown::ANNOTATION_RECONCILE_REQUESTED_AT)
            .cloned()
            .unwrap_or_default();
        let occasion = if requested.is_empty() || requested == status.last_handled_reconcile_at {
            Occasion::Routine
        } else {
            Occasion::Requested
        };
        status.last_handled_reconcile_at = requested;

        if let Some(problem) = decide::name_problem(&name) {
            status.observed_generation = generation;
            set_ready(
                &mut status.conditions,
                false,
                decide::NAME_TOO_LONG,
                &problem,
                generation,
                now,
            );
            self.write_status(beacon, status).await?;
            return Ok(Outcome {
                requeue_after: None,
            });
        }
        if beacon.spec.suspend {
            status.observed_generation = generation;
            set_ready(
                &mut status.conditions,
                false,
                wellknown::beacon_reason::SUSPENDED,
                "the Beacon is suspended: nothing is polled or emitted; its Bundles stay",
                generation,
                now,
            );
            self.write_status(beacon, status).await?;
            return Ok(Outcome {
                requeue_after: None,
            });
        }

        let answers = self.resolve_all(&namespace, beacon, occasion).await;
        let (discovered, next) = decide::decide(beacon, answers);
        status.discovered = discovered;
        status.last_polled = Some(Time(now));
        status.observed_generation = generation;
        match next {
            Next::NotReady { reason, message } => {
                set_ready(
                    &mut status.conditions,
                    false,
                    reason,
                    &message,
                    generation,
                    now,
                );
            }
            Next::Manual(message) => {
                set_ready(
                    &mut status.conditions,
                    true,
                    wellknown::beacon_reason::DISCOVERED,
                    &message,
                    generation,
                    now,
                );
            }
            Next::Emit(artifacts) => {
                let mut bundle = emit::bundle_for(beacon, artifacts, now);
                let bundle_name = bundle.name_any();
                if bundle_name != status.latest_bundle {
                    // New content, as far as the Beacon knows: what it brings is read
                    // once, now (an existing Bundle is never updated).
                    self.chronicle(&namespace, beacon, &status.latest_bundle, &mut bundle)
                        .await;
                }
                match emit::create(&self.client, &bundle).await {
                    Ok(emitted) => {
                        if let Emitted::Created(created) = &emitted {
                            self.events
                                .publish(
                                    &beacon.object_ref(&()),
                                    events::BUNDLE_EMITTED,
                                    &format!(
                                        "emitted {created} ({} artifact(s), digest {})",
                                        bundle.spec.artifacts.len(),
                                        bundle.spec.digest
                                    ),
                                )
                                .await;
                        }
                        status.latest_bundle = emitted.name().to_string();
                        set_ready(
                            &mut status.conditions,
                            true,
                            wellknown::beacon_reason::DISCOVERED,
                            &decide::discovered_message(beacon.spec.watch.len(), emitted.name()),
                            generation,
                            now,
                        );
                    }
                    Err(source) => {
                        set_ready(
                            &mut status.conditions,
                            false,
                            wellknown::beacon_reason::EMIT_FAILED,
                            &format!(
                                "could not create Bundle {bundle_name}: {}",
                                hecate_steps::flux::access::describe(&source)
                            ),
                            generation,
                            now,
                        );
                        self.write_status(beacon, status).await?;
                        return Err(Error::Emit {
                            bundle: bundle_name,
                            source,
                        });
                    }
                }
            }
        }

        retention::collect(&self.client, beacon, &status.latest_bundle).await;
        self.write_status(beacon, status).await?;
        Ok(Outcome {
            requeue_after: Some(decide::interval(beacon)),
        })
    }

    /// Every watch entry's answer, in watch order; the entries resolve concurrently.
    async fn resolve_all(
        &self,
        namespace: &str,
        beacon: &Beacon,
        occasion: Occasion,
    ) -> Vec<Result<hecate_types::Artifact, ResolveError>> {
        join_all(beacon.spec.watch.iter().map(|watch| async move {
            match watch.get() {
                Some(source) => self.sources.resolve(namespace, source, occasion).await,
                None => Err(ResolveError::failed(
                    "the entry names no source (image, chart, git or provider)",
                )),
            }
        }))
        .await
    }

    /// Records on `bundle`'s commits from git watches what each brings since the
    /// Beacon's previous Bundle, `latest` (DECISION 140): one GET of that Bundle, and
    /// each watch's history read once. What cannot be read is logged and left out —
    /// it is for people, and never holds a Bundle back.
    async fn chronicle(&self, namespace: &str, beacon: &Beacon, latest: &str, bundle: &mut Bundle) {
        // The artifacts are in watch order, one per entry (every entry resolved).
        let git: Vec<(usize, &GitWatch)> = beacon
            .spec
            .watch
            .iter()
            .enumerate()
            .filter_map(|(i, w)| match w.get() {
                Some(WatchSourceRef::Git(git)) => Some((i, git)),
                _ => None,
            })
            .filter(|(i, _)| {
                bundle
                    .spec
                    .artifacts
                    .get(*i)
                    .is_some_and(|a| a.commit.is_some())
            })
            .collect();
        if git.is_empty() {
            return;
        }
        let previous = self.previous_bundle(namespace, latest).await;
        let histories = join_all(git.iter().map(|(i, watch)| {
            let commit = bundle.spec.artifacts[*i].commit.as_ref();
            let since = commit.and_then(|commit| previous_commit(previous.as_ref(), &commit.repo));
            async move {
                match commit {
                    Some(commit) => {
                        Some(self.sources.history(namespace, watch, commit, since).await)
                    }
                    None => None,
                }
            }
        }))
        .await;
        for ((i, watch), history) in git.iter().zip(histories) {
            let commit = bundle.spec.artifacts[*i].commit.as_mut();
            match (commit, history) {
                (Some(commit), Some(Ok(chronicle))) => chronicle.apply(commit),
                (_, Some(Err(error))) => tracing::warn!(
                    beacon = %beacon.name_any(),
                    namespace,
                    repo = %watch.repo,
                    %error,
                    "could not read what the new Bundle's commit brings; emitting it without"
                ),
                _ => {}
            }
        }
    }

    /// The Beacon's previous Bundle, `latest` by name, if it has one and it is still
    /// there.
    async fn previous_bundle(&self, namespace: &str, latest: &str) -> Option<Bundle> {
        if latest.is_empty() {
            return None;
        }
        match Api::<Bundle>::namespaced(self.client.clone(), namespace)
            .get_opt(latest)
            .await
        {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(
                    namespace,
                    bundle = latest,
                    %error,
                    "could not read the previous Bundle"
                );
                None
            }
        }
    }

    /// Writes the Beacon's status whole, with the resourceVersion it was read at.
    async fn write_status(&self, beacon: &Beacon, status: BeaconStatus) -> Result<(), Error> {
        let mut object = beacon.clone();
        object.status = Some(status);
        Api::<Beacon>::namespaced(self.client.clone(), &beacon.namespace().unwrap_or_default())
            .replace_status(&beacon.name_any(), &PostParams::default(), &object)
            .await?;
        Ok(())
    }
}

/// The commit `previous` (a Bundle) holds of `repo`, if any.
fn previous_commit<'a>(previous: Option<&'a Bundle>, repo: &str) -> Option<&'a str> {
    previous?
        .spec
        .artifacts
        .iter()
        .find_map(|a| match a.get()? {
            ArtifactRef::Commit(commit) if commit.repo == repo => Some(commit.sha.as_str()),
            _ => None,
        })
}
