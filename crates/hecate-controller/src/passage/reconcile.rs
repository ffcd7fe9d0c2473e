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
//! The status is written whole with the resourceVersion read, so an abort patched in
//! meanwhile makes the write fail and the next reconcile see it; the step that ran is
//! re-entrant, so running it again is safe (spec §3.7).

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hecate_ops::rules::passage as rule;
use hecate_ops::rules::refusal::Refusal;
use hecate_types::{
    Bundle, EvidenceRef, Gate, HealthCheck, Passage, PassagePhase, PassageStatus, StepPhase, Time,
    wellknown,
};
use kube::api::{Api, ListParams, PostParams};
use kube::{Resource as _, ResourceExt as _};

use super::attest::{self, Attested};
use super::engine::{self, Registry};
use super::trace;
use crate::clock::Clock;
use crate::events::{self, Events};
use crate::metrics::Metrics;
use crate::telemetry::Tracing;

/// What a Passage reconcile can fail with; the controller retries with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed.
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// The work directory could not be made.
    #[error("work directory {0}: {1}")]
    WorkDir(PathBuf, std::io::Error),
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
    pub steps: Registry,
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
        if let Err(refusal) = self.judge(passage, &bundle).await? {
            return self.refuse(passage, &refusal).await.map(|()| done);
        }
        tokio::fs::create_dir_all(&work_dir)
            .await
            .map_err(|e| Error::WorkDir(work_dir.clone(), e))?;
        private(&work_dir)
            .await
            .map_err(|e| Error::WorkDir(work_dir.clone(), e))?;

        let kept = self.keep_trace_id(passage).await?;
        let passage: &Passage = &kept;
        let trace_id = passage.status.as_ref().map_or("", |s| s.trace_id.as_str());
        let advance = engine::advance(
            &self.steps,
            self.clock.as_ref(),
            passage,
            &bundle,
            &work_dir,
            &trace::traceparent(trace_id),
        )
        .await;
        let mut status = advance.status;
        status.observed_generation = passage.metadata.generation.unwrap_or_default();
        status.watch = accumulate(std::mem::take(&mut status.watch), advance.watch);
        let finished = status.phase().is_terminal();
        let written = self.write_status(passage, status.clone()).await?;
        if finished {
            // Sent once, as attested once (below): only this write finished it.
            self.send_trace(&written);
            self.finished(passage, &bundle, &status).await;
            // Only the reconcile whose write finished the Passage gets here: the write
            // carried the resourceVersion read, and a finished Passage is never
            // advanced again. So the crossing is attested at most once, even across a
            // conflict or a restart (see `attest`).
            self.attest(written, &bundle, &status).await;
            remove(&work_dir).await;
            return Ok(done);
        }
        Ok(Outcome {
            requeue_after: advance.requeue_after,
        })
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
    /// ([`rule::judge_start`], [`rule::judge_resume`]). The reads happen once per
    /// Passage, before its first step.
    async fn judge(
        &self,
        passage: &Passage,
        bundle: &Bundle,
    ) -> Result<Result<(), Refusal>, Error> {
        if rule::started(passage) || passage.spec.abort {
            return Ok(rule::judge_resume(passage));
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
        Ok(rule::judge_start(
            passage,
            gate.as_ref(),
            bundle,
            &passages,
            crate::steps::validate,
            self.clock.now(),
        ))
    }

    /// Fails `passage` for `refusal` without running any step: a step under way (the
    /// spec changed while it waited) is aborted, the rest are left as they were; then a
    /// `PassageRefused` Event. The Gate records it as a crossing that failed.
    async fn refuse(&self, passage: &Passage, refusal: &Refusal) -> Result<(), Error> {
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
    async fn finished(&self, passage: &Passage, bundle: &Bundle, status: &PassageStatus) {
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
        if phase == PassagePhase::Succeeded
            && let Some(s) = seconds(&bundle.metadata.creation_timestamp, &status.finished_at)
        {
            self.metrics.observe_lead_time(&namespace, gate, s);
        }
    }

    /// Records the finished crossing `passage` (as just written) in Fides, and its
    /// trail on the Passage; says so in an Event when it cannot. Never fails: the
    /// crossing has happened either way.
    async fn attest(&self, passage: Passage, bundle: &Bundle, status: &PassageStatus) {
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

    /// Writes `status` over `passage`'s (guarded by the resourceVersion read) and
    /// answers the Passage as stored.
    async fn write_status(
        &self,
        passage: &Passage,
        status: PassageStatus,
    ) -> Result<Passage, Error> {
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
    fn send_trace(&self, passage: &Passage) {
        if let Some(trace) = trace::spans(passage) {
            self.tracing.emit(&trace);
        }
    }
}

/// The checks handed to the Gate so far plus the new ones, each once (quirk Q6: the
/// reference kept only the latest call's).
fn accumulate(mut kept: Vec<HealthCheck>, new: Vec<HealthCheck>) -> Vec<HealthCheck> {
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
async fn remove(dir: &Path) {
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
    fn handed_checks_accumulate_each_once() {
        let check = |name: &str| HealthCheck {
            uses: "flux".into(),
            with: Some(serde_json::json!({"resources": [{"kind": "Kustomization", "name": name}]})),
        };
        let kept = accumulate(vec![check("a")], vec![check("a"), check("b")]);
        assert_eq!(kept, [check("a"), check("b")]);
    }
}
