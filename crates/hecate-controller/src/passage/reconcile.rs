//! One Passage reconcile (spec controller.md §3.2): find the Bundle, advance the steps
//! as far as they go now, write the status, and on the way out record the outcome
//! (Event, metrics, an attestation in Fides when the Gate binds one) and clear the work
//! directory.
//!
//! Before any step, the Passage is judged by ops' rule (`hecate_ops::rules::passage`):
//! one not started yet must be its Gate's own template and a crossing promote would
//! allow; one under way must still have the spec it started with. A Passage that is not
//! is refused — failed, with the reason in its message and a `PassageRefused` Event —
//! and none of its steps runs, however it was written (docs/DECISIONS.md, "A Passage
//! runs only its Gate's own steps").
//!
//! The status is written after every step that ran, before the next one starts, whole
//! with the resourceVersion read, and cut to what a status may hold (`bounds`): an
//! abort or a deletion asked for meanwhile makes the write fail, and the next reconcile
//! sees it before another step; a Passage deleted outright stops at that write; one
//! whose status the API server will not store ends as refused (`TooLarge`) instead of
//! running again. The step that ran when a write failed is re-entrant, so running it
//! again from the record is safe (spec §3.7) — and it is the only one that runs again
//! (docs/DECISIONS.md 111).

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hecate_ops::rules::passage as rule;
use hecate_ops::rules::refusal::Refusal;
use hecate_types::limits::MAX_PASSAGE_STATUS_BYTES;
use hecate_types::{
    Bundle, EvidenceRef, Gate, HealthCheck, Passage, PassagePhase, PassageStatus, StepPhase, Time,
    wellknown,
};
use kube::api::{Api, ListParams, PostParams};
use kube::{Resource as _, ResourceExt as _};

use super::attest::{self, Attested};
use crate::events::{self, Events};
use crate::metrics::Metrics;
use crate::telemetry::Tracing;
use crate::telemetry::spans as trace;
use hecate_steps::clock::Clock;
use hecate_steps::engine::{self, Steps, bounds};

/// What a Passage reconcile can fail with; the controller retries with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed.
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// The work directory could not be made.
    #[error("work directory {0}: {1}")]
    WorkDir(PathBuf, std::io::Error),
    /// This replica no longer leads, or the namespace left its shard: the run stopped
    /// before a step, recording nothing (DECISIONS 112, 133); the crossing is left to
    /// the controller that now may act on it.
    #[error(
        "this controller may no longer act here (it lost its Lease, or the namespace left its shard): the crossing was left to the one that may"
    )]
    Fenced,
}

impl Error {
    /// The kind of failure, for the failures metric: one of a fixed set.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Kube(error) => crate::backoff::kind(error),
            Self::WorkDir(..) => "work_dir",
            Self::Fenced => "fenced",
        }
    }
}

/// When to look at the Passage again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// `None`: only when it changes (finished, or nothing to do).
    pub requeue_after: Option<Duration>,
}

/// Everything a Passage reconcile needs.
pub struct PassageReconciler {
    /// The client it reads and writes with.
    pub client: kube::Client,
    /// Where it reads the time.
    pub clock: Arc<dyn Clock>,
    /// The steps it can run.
    pub steps: Steps,
    /// The verifications it can run: a rollout verifies each target itself
    /// (DECISION 162).
    pub verifiers: crate::verify::Verifiers,
    /// Where Events go.
    pub events: Events,
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// Where Passages' work directories live.
    pub work_root: PathBuf,
    /// `--fides-server`: the Fides a Gate's evidence uses when it names none (for
    /// attesting finished crossings).
    pub fides_server: Option<String>,
    /// OpenTelemetry: on, it gives each Passage a trace ID and sends finished crossings'
    /// traces.
    pub tracing: Tracing,
}

impl PassageReconciler {
    /// Reconciles Passage `name` in `namespace`, reading it first; a Passage that no
    /// longer exists is not an error.
    pub async fn reconcile_named(&self, namespace: &str, name: &str) -> Result<Outcome, Error> {
        match Api::<Passage>::namespaced(self.client.clone(), namespace)
            .get_opt(name)
            .await?
        {
            Some(passage) => self.reconcile(&passage).await,
            None => Ok(Outcome {
                requeue_after: None,
            }),
        }
    }

    /// Reconciles `passage` as read.
    pub async fn reconcile(&self, passage: &Passage) -> Result<Outcome, Error> {
        let done = Outcome {
            requeue_after: None,
        };
        let work_dir = self.work_dir(passage);
        // A finished crossing is never advanced again: that would deploy something
        // nobody asked for.
        if passage.is_terminal() {
            remove(&work_dir).await;
            return Ok(done);
        }
        let namespace = passage.namespace().unwrap_or_default();
        // Read directly, not from a cache: a Bundle created a moment ago must not
        // fail its crossing as missing (quirk Q13).
        let Some(bundle) = Api::<Bundle>::namespaced(self.client.clone(), &namespace)
            .get_opt(&passage.spec.bundle)
            .await?
        else {
            return self.bundle_missing(passage).await.map(|()| done);
        };
        let gate = match self.judge(passage, &bundle).await? {
            Ok(gate) => gate,
            Err(refusal) => return self.refuse(passage, &refusal).await.map(|()| done),
        };
        // A crossing that spans targets is one from its start: the Gate's targets as
        // they were when it started (its record says so) — a Gate that gains targets
        // meanwhile does not turn a crossing under way into a rollout.
        let gate = match gate {
            Some(gate) => Some(gate),
            None if rolls_out(passage) => {
                let gate = Api::<Gate>::namespaced(self.client.clone(), &namespace)
                    .get_opt(&passage.spec.gate)
                    .await?;
                if gate.is_none() {
                    let refusal = Refusal::new(
                        hecate_ops::rules::refusal::RefusalCode::NoGate,
                        format!(
                            "Gate {} no longer exists: its rollout cannot go on",
                            passage.spec.gate
                        ),
                    );
                    return self.refuse(passage, &refusal).await.map(|()| done);
                }
                gate
            }
            None => None,
        };
        tokio::fs::create_dir_all(&work_dir)
            .await
            .map_err(|e| Error::WorkDir(work_dir.clone(), e))?;
        private(&work_dir)
            .await
            .map_err(|e| Error::WorkDir(work_dir.clone(), e))?;

        let mut passage = self.keep_trace_id(passage).await?;
        if let Some(gate) = gate.filter(|g| g.spec.targets.is_some() || rolls_out(&passage)) {
            return self.roll_out(&passage, &bundle, &gate, &work_dir).await;
        }
        // One step at a time, each recorded before the next starts (the engine stops
        // before invoking another): a write that fails stops the run here, and the next
        // reconcile resumes from the record — never from step 0.
        loop {
            let trace_id = passage.status.as_ref().map_or("", |s| s.trace_id.as_str());
            let advance = engine::advance(
                &self.steps,
                self.clock.as_ref(),
                &passage,
                &bundle,
                &work_dir,
                &trace::traceparent(trace_id),
            )
            .await;
            if advance.fenced {
                return Err(Error::Fenced);
            }
            let mut status = advance.status;
            status.observed_generation = passage.metadata.generation.unwrap_or_default();
            status.watch = accumulate(std::mem::take(&mut status.watch), advance.watch);
            let finished = status.phase().is_terminal();
            let Some(written) = self.record(&passage, status).await? else {
                // Deleted, or ended as too large to record: nothing more runs.
                remove(&work_dir).await;
                return Ok(done);
            };
            if finished {
                let status = written.status.clone().unwrap_or_default();
                // Sent once, as attested once (below): only this write finished it.
                self.send_trace(&written);
                self.finished(&passage, &bundle, &status).await;
                // Only the reconcile whose write finished the Passage gets here: the
                // write carried the resourceVersion read, and a finished Passage is never
                // advanced again. So the crossing is attested at most once, even across a
                // conflict or a restart (see `attest`).
                self.attest(written, &bundle, &status).await;
                remove(&work_dir).await;
                return Ok(done);
            }
            if !advance.more {
                return Ok(Outcome {
                    requeue_after: advance.requeue_after,
                });
            }
            // Carry on from what was written. An abort or a deletion asked for meanwhile
            // moved the resourceVersion: the next write fails, and the next reconcile
            // reads it and stops before another step.
            passage = Cow::Owned(written);
        }
    }

    /// The Passage's scratch directory, by UID: a Passage recreated under the same
    /// name never inherits another's leftovers.
    pub fn work_dir(&self, passage: &Passage) -> PathBuf {
        let uid = passage
            .metadata
            .uid
            .clone()
            .unwrap_or_else(|| passage.name_any());
        self.work_root.join(uid)
    }

    async fn bundle_missing(&self, passage: &Passage) -> Result<(), Error> {
        let message = format!(
            "Bundle {} does not exist: nothing to cross",
            passage.spec.bundle
        );
        let status = PassageStatus {
            phase: Some(PassagePhase::Failed),
            message: message.clone(),
            finished_at: Some(Time(self.clock.now())),
            observed_generation: passage.metadata.generation.unwrap_or_default(),
            ..passage.status.clone().unwrap_or_default()
        };
        self.write_status(passage, status).await?;
        self.events
            .publish(&passage.object_ref(&()), events::BUNDLE_MISSING, &message)
            .await;
        Ok(())
    }

    /// Whether `passage` may run (on): one not started is judged against its Gate as it
    /// is now — read directly, with the Gate's Passages, so an edit or a crossing of a
    /// moment ago counts — and one under way against the spec it started with
    /// ([`rule::judge_start`], [`rule::judge_resume`]); either must be recordable
    /// ([`rule::judge_size`]), and one asked to stop always may. The reads happen once
    /// per Passage, before its first step.
    ///
    /// Answers the Gate when it was read (a Passage not started yet).
    async fn judge(
        &self,
        passage: &Passage,
        bundle: &Bundle,
    ) -> Result<Result<Option<Gate>, Refusal>, Error> {
        if rule::started(passage) || rule::asked_to_stop(passage) {
            return Ok(rule::judge_resume(passage).map(|()| None));
        }
        let namespace = passage.namespace().unwrap_or_default();
        let name = passage.spec.gate.as_str();
        // A name no Gate could have is no Gate (and no request).
        let gate = if hecate_types::names::is_dns_subdomain(name) {
            Api::<Gate>::namespaced(self.client.clone(), &namespace)
                .get_opt(name)
                .await?
        } else {
            None
        };
        let passages = match &gate {
            Some(_) => {
                let of_gate =
                    ListParams::default().labels(&format!("{}={name}", wellknown::LABEL_GATE));
                hecate_ops::lenient::list(self.client.clone(), &namespace, &of_gate).await?
            }
            None => Vec::new(),
        };
        let passages: Vec<&Passage> = passages.iter().collect();
        Ok(
            rule::judge_start(passage, gate.as_ref(), bundle, &passages, self.clock.now())
                .map(|()| gate),
        )
    }

    /// Fails `passage` for `refusal` without running any step: a step under way (the
    /// spec changed while it waited) is aborted, the rest are left as they were; then a
    /// `PassageRefused` Event. The Gate records it as a crossing that failed.
    pub(super) async fn refuse(&self, passage: &Passage, refusal: &Refusal) -> Result<(), Error> {
        let message = rule::refused_message(refusal);
        let now = Time(self.clock.now());
        let mut status = passage.status.clone().unwrap_or_default();
        for step in &mut status.steps {
            if !step.phase.is_terminal() {
                step.phase = StepPhase::Aborted;
                step.message = "not run: the Passage was refused".into();
                if step.started_at.is_some() {
                    step.finished_at = Some(now.clone());
                }
            }
        }
        let status = PassageStatus {
            phase: Some(PassagePhase::Failed),
            message: message.clone(),
            finished_at: Some(now),
            observed_generation: passage.metadata.generation.unwrap_or_default(),
            ..status
        };
        self.write_status(passage, status).await?;
        tracing::warn!(
            namespace = %passage.namespace().unwrap_or_default(),
            passage = %passage.name_any(),
            code = %refusal.code,
            "Passage refused: {}",
            refusal.reason
        );
        self.events
            .publish(&passage.object_ref(&()), events::PASSAGE_REFUSED, &message)
            .await;
        Ok(())
    }

    /// The Event and metrics of a crossing that just finished.
    pub(super) async fn finished(
        &self,
        passage: &Passage,
        bundle: &Bundle,
        status: &PassageStatus,
    ) {
        let namespace = passage.namespace().unwrap_or_default();
        let gate = &passage.spec.gate;
        let phase = status.phase();
        let kind = match phase {
            PassagePhase::Succeeded => events::PASSAGE_SUCCEEDED,
            PassagePhase::Aborted => events::PASSAGE_ABORTED,
            _ => events::PASSAGE_FAILED,
        };
        self.events
            .publish(&passage.object_ref(&()), kind, &status.message)
            .await;
        let seconds = |from: &Option<Time>, to: &Option<Time>| match (from, to) {
            (Some(from), Some(to)) => Some(to.0.duration_since(from.0).as_secs_f64()),
            _ => None,
        };
        self.metrics.observe_passage(
            &namespace,
            gate,
            phase.as_str(),
            seconds(&status.started_at, &status.finished_at),
        );
        for step in &status.steps {
            if let Some(s) = seconds(&step.started_at, &step.finished_at) {
                self.metrics
                    .observe_step(&namespace, gate, &step.uses, step.phase.as_str(), s);
            }
        }
        // A crossing of some targets delivers nothing new (DECISIONS 163, 164).
        if phase == PassagePhase::Succeeded
            && !passage.spec.is_partial()
            && let Some(s) = seconds(&bundle.metadata.creation_timestamp, &status.finished_at)
        {
            self.metrics.observe_lead_time(&namespace, gate, s);
        }
    }

    /// Records the finished crossing `passage` (as just written) in Fides, and its
    /// trail on the Passage; says so in an Event when it cannot. Never fails: the
    /// crossing has happened either way.
    pub(super) async fn attest(&self, passage: Passage, bundle: &Bundle, status: &PassageStatus) {
        let default_server = self.fides_server.as_deref().unwrap_or_default();
        let object = passage.object_ref(&());
        match attest::attest(&self.client, default_server, &passage, bundle, status).await {
            Attested::NotAsked => {}
            Attested::Skipped(why) => {
                self.events
                    .publish(&object, events::ATTESTATION_SKIPPED, &why)
                    .await;
            }
            Attested::Failed(why) => {
                self.events
                    .publish(&object, events::ATTESTATION_FAILED, &why)
                    .await;
            }
            Attested::Recorded(trail) => self.record_trail(passage, &trail).await,
        }
    }

    /// Sets `status.evidence.trail` on a finished Passage (keeping the verdict), in a
    /// write of its own: the write that finished the Passage had to come first. The
    /// write is idempotent, so a conflict only costs a re-read.
    async fn record_trail(&self, mut passage: Passage, trail: &str) {
        let api = Api::<Passage>::namespaced(
            self.client.clone(),
            &passage.namespace().unwrap_or_default(),
        );
        let name = passage.name_any();
        for _ in 0..3 {
            let evidence = passage
                .status
                .get_or_insert_with(PassageStatus::default)
                .evidence
                .get_or_insert_with(EvidenceRef::default);
            if evidence.trail == trail {
                return;
            }
            evidence.trail = trail.into();
            let error = match api
                .replace_status(&name, &PostParams::default(), &passage)
                .await
            {
                Ok(_) => return,
                Err(error) => error,
            };
            if !crate::backoff::is_conflict(&error) {
                tracing::warn!(passage = %name, %error, trail, "could not record the attested trail");
                return;
            }
            match api.get(&name).await {
                Ok(fresh) => passage = fresh,
                Err(error) => {
                    tracing::warn!(passage = %name, %error, trail, "could not record the attested trail");
                    return;
                }
            }
        }
        tracing::warn!(passage = %name, trail, "could not record the attested trail: the Passage kept changing");
    }

    /// Records the progress `status` of a crossing under way, as [`Self::write_status`]
    /// does; `None` when nothing more is to run: the Passage is gone (deleted outright:
    /// it has no finalizer), or its status cannot be stored — then it is ended as
    /// refused (`TooLarge`, in a status that can be), since running the step again
    /// would only repeat what it did (issue 30: a status write that always failed made
    /// the whole crossing run again and again).
    pub(super) async fn record(
        &self,
        passage: &Passage,
        mut status: PassageStatus,
    ) -> Result<Option<Passage>, Error> {
        let why = match bounds::fit(&mut status) {
            Err(bytes) => format!(
                "{bytes} bytes of JSON, more than the {MAX_PASSAGE_STATUS_BYTES} a status may take"
            ),
            Ok(()) => match self.write_status(passage, status).await {
                Ok(written) => return Ok(Some(written)),
                Err(Error::Kube(kube::Error::Api(answer))) if answer.code == 404 => {
                    tracing::info!(
                        namespace = %passage.namespace().unwrap_or_default(),
                        passage = %passage.name_any(),
                        "Passage deleted during its crossing: it stops here"
                    );
                    return Ok(None);
                }
                Err(Error::Kube(kube::Error::Api(answer))) if too_large(&answer) => {
                    format!("the API server said: {}", answer.message)
                }
                Err(other) => return Err(other),
            },
        };
        self.refuse(passage, &rule::unrecordable(passage, &why))
            .await?;
        Ok(None)
    }

    /// Writes `status` over `passage`'s (guarded by the resourceVersion read), cut to
    /// fit ([`bounds::fit`]), and answers the Passage as stored.
    async fn write_status(
        &self,
        passage: &Passage,
        mut status: PassageStatus,
    ) -> Result<Passage, Error> {
        if let Err(bytes) = bounds::fit(&mut status) {
            tracing::warn!(passage = %passage.name_any(), bytes, "a Passage status over its bound");
        }
        let mut object = passage.clone();
        object.status = Some(status);
        Ok(Api::<Passage>::namespaced(
            self.client.clone(),
            &passage.namespace().unwrap_or_default(),
        )
        .replace_status(&passage.name_any(), &PostParams::default(), &object)
        .await?)
    }
}

/// Tracing (spec §3.2 step 5, §8.2).
impl PassageReconciler {
    /// With tracing on, gives `passage` a trace ID if it has none, in a status write of
    /// its own before any step runs, and answers the Passage as stored (quirk Q7: kept
    /// only with a step's outcome, a failed write would lose it, and the step run again
    /// would make a second commit with another trailer).
    async fn keep_trace_id<'a>(&self, passage: &'a Passage) -> Result<Cow<'a, Passage>, Error> {
        let has_one = passage
            .status
            .as_ref()
            .is_some_and(|s| !s.trace_id.is_empty());
        if !self.tracing.is_on() || has_one {
            return Ok(Cow::Borrowed(passage));
        }
        let status = PassageStatus {
            trace_id: trace::allocate(),
            ..passage.status.clone().unwrap_or_default()
        };
        Ok(Cow::Owned(self.write_status(passage, status).await?))
    }

    /// Sends the trace of `passage`, a crossing that has just finished, as stored.
    pub(super) fn send_trace(&self, passage: &Passage) {
        if let Some(trace) = trace::spans(passage) {
            self.tracing.emit(&trace);
        }
    }
}

/// Whether `passage` is a rollout under way: its record says so.
fn rolls_out(passage: &Passage) -> bool {
    passage.status.as_ref().is_some_and(|s| s.rollout.is_some())
}

/// Whether the API server's `answer` to a write says the object is too large to store:
/// its own request limit (413), or etcd's (`etcdserver: request is too large`, a 500).
fn too_large(answer: &kube::core::Status) -> bool {
    answer.code == 413 || (answer.code == 500 && answer.message.contains("too large"))
}

/// The checks handed to the Gate so far plus the new ones, each once (quirk Q6: the
/// reference kept only the latest call's).
pub(super) fn accumulate(mut kept: Vec<HealthCheck>, new: Vec<HealthCheck>) -> Vec<HealthCheck> {
    let mut seen: HashSet<String> = kept.iter().map(key).collect();
    for check in new {
        if seen.insert(key(&check)) {
            kept.push(check);
        }
    }
    kept
}

fn key(check: &HealthCheck) -> String {
    format!(
        "{}\u{0}{}",
        check.uses,
        check
            .with
            .as_ref()
            .map(|w| w.to_string())
            .unwrap_or_default()
    )
}

/// Only the controller's user may read a work directory (it may hold credentials).
async fn private(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        tokio::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).await?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Removes a work directory; it being gone already is fine.
pub(super) async fn remove(dir: &Path) {
    if let Err(error) = tokio::fs::remove_dir_all(dir).await
        && error.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(dir = %dir.display(), %error, "could not remove a work directory");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_servers_and_etcds_size_refusals_are_told_apart_from_other_failures() {
        let answer = |code: u16, message: &str| kube::core::Status {
            code,
            message: message.into(),
            ..kube::core::Status::default()
        };
        assert!(too_large(&answer(500, "etcdserver: request is too large")));
        assert!(too_large(&answer(
            413,
            "Request entity too large: limit is 3145728"
        )));
        assert!(!too_large(&answer(500, "etcdserver: leader changed")));
        assert!(!too_large(&answer(409, "the object has been modified")));
    }

    #[test]
    fn handed_checks_accumulate_each_once() {
        let check = |name: &str| HealthCheck {
            uses: "flux".into(),
            with: Some(serde_json::json!({"resources": [{"kind": "Kustomization", "name": name}]})),
        };
        let kept = accumulate(vec![check("a")], vec![check("a"), check("b")]);
        assert_eq!(kept, [check("a"), check("b")]);
    }
}
