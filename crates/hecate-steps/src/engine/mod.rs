//! The step engine (spec controller.md §3.3–3.6): one call advances a Passage as far
//! as it can go now — running steps in order until one waits, or all are done — and
//! answers the new status. Everything needed to resume lives in that status (phases,
//! attempts, outputs, the step to start from), so a new process with an empty work
//! directory carries on where the last one stopped and never re-runs a finished step.
//!
//! The rules, in brief: a step with `if:` runs when its condition holds (also after a
//! failure: that is how `if: always` cleans up); one without is skipped after a
//! failure. A failed step fails the crossing unless `continueOnError` forgives it (a
//! terminal error is never forgiven); the engine never calls a failed step again —
//! trying again is a new Passage. A step that waits answers `Running`, and the engine
//! returns until it is asked again; a step run after a failure gets exactly one call.
//! `spec.abort` ends everything not finished at the next call. A step's `timeout`
//! ends a wait that has gone on too long (`StepTimedOut`; the reference never
//! enforced it, quirk Q8).
//!
//! One call runs at most one step's side effects: it stops before the next step is
//! invoked and answers [`Advance::more`], so that what ran is recorded before anything
//! else runs (the reference ran every step and wrote once at the end: a status it could
//! not write meant running them all again). What it records is bounded
//! ([`bounds`]): a step's message and output are cut as the step finishes. A
//! Passage whose deletion was asked for ends as an abort does.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hecate_expr as expr;
use hecate_types::StepLogLine;
use hecate_types::limits::{MAX_STEP_LOG_LINE, MAX_STEP_LOG_LINES};
use hecate_types::{
    Bundle, HealthCheck, Passage, PassagePhase, PassageStatus, Step, StepPhase, StepStatus, Time,
};
use jiff::Timestamp;
use kube::ResourceExt as _;
use serde_json::Value;

pub use hecate_ops::rules::env::{Place, bundle_view, place_view};

use crate::by_name::{ByName, Duplicate, Named};
use crate::clock::Clock;
use crate::reason::Reason;
use crate::runner::{Progress, Runner, StepContext, StepError};

pub mod bounds;
#[cfg(test)]
mod tests;

/// How long a waiting step waits when it does not say.
pub const DEFAULT_RETRY: Duration = Duration::from_secs(15);

/// Whether this process may still do a step's side effects in a namespace — for the
/// controller, that it still holds its Lease and the namespace is still in its shard.
/// The engine asks immediately before each step.
pub trait Fence: Send + Sync {
    /// Whether side effects may happen in `namespace` now.
    fn holds(&self, namespace: &str) -> bool;
}

/// Both fences hold.
impl<A: Fence, B: Fence> Fence for (A, B) {
    fn holds(&self, namespace: &str) -> bool {
        self.0.holds(namespace) && self.1.holds(namespace)
    }
}

/// The steps an engine can run, by name, and the fence they run behind.
#[derive(Clone, Default)]
pub struct Steps {
    runners: ByName<dyn Runner>,
    fence: Option<Arc<dyn Fence>>,
}

impl Named for dyn Runner {
    const KIND: &'static str = "step";

    fn name(&self) -> &str {
        Runner::name(self)
    }
}

impl Steps {
    /// No steps.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `runner` under its name; a name may be registered once.
    pub fn register(&mut self, runner: Arc<dyn Runner>) -> Result<(), Duplicate> {
        self.runners.register(runner)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.runners.names()
    }

    /// These steps, run only while `fence` holds: the engine asks it immediately
    /// before each step's side effects (DECISION 112). Without, they always run.
    pub fn fenced_by(mut self, fence: Arc<dyn Fence>) -> Self {
        self.fence = Some(fence);
        self
    }
}

/// What one call to [`advance`] produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Advance {
    /// The Passage's new status.
    pub status: PassageStatus,
    /// When a step waits: how long until the next call.
    pub requeue_after: Option<Duration>,
    /// Health checks the steps handed over in this call (for the Gate, once the
    /// crossing succeeds).
    pub watch: Vec<HealthCheck>,
    /// The fence no longer holds (this replica lost its Lease, or the namespace left
    /// its shard): the run stopped before a step, and nothing of it may be recorded
    /// (`status` is the Passage's as read).
    pub fenced: bool,
    /// A step ran and the next is due: record `status`, then call again at once.
    pub more: bool,
}

/// Advances `passage` (moving `bundle`) as far as it can go now.
pub async fn advance(
    registry: &Steps,
    clock: &dyn Clock,
    passage: &Passage,
    bundle: &Bundle,
    work_dir: &Path,
    traceparent: &str,
) -> Advance {
    advance_at(
        registry,
        clock,
        passage,
        bundle,
        work_dir,
        traceparent,
        None,
    )
    .await
}

/// Advances `passage`'s crossing of one `place` of the Gate — `passage.status` being
/// that place's record — or, with `None`, of the one place a Gate without targets is.
pub async fn advance_at(
    registry: &Steps,
    clock: &dyn Clock,
    passage: &Passage,
    bundle: &Bundle,
    work_dir: &Path,
    traceparent: &str,
    place: Option<&Place<'_>>,
) -> Advance {
    let mut status = passage.status.clone().unwrap_or_default();
    let unchanged = |status: PassageStatus| Advance {
        status,
        requeue_after: None,
        watch: Vec::new(),
        fenced: false,
        more: false,
    };
    if status.phase().is_terminal() {
        return unchanged(status);
    }
    let now = clock.now();
    if passage.spec.abort {
        abort(&mut status, now, "aborted");
        return unchanged(status);
    }
    if passage.metadata.deletion_timestamp.is_some() {
        abort(&mut status, now, "aborted: the Passage is being deleted");
        return unchanged(status);
    }
    let steps = &passage.spec.steps;
    if status.steps.len() != steps.len() {
        status.steps = steps
            .iter()
            .map(|step| StepStatus {
                uses: step.uses.clone(),
                alias: step.alias.clone(),
                phase: StepPhase::Pending,
                ..StepStatus::default()
            })
            .collect();
    }
    let started_at = status.started_at.get_or_insert(Time(now)).0;
    status.phase = Some(PassagePhase::Running);

    let mut outputs: BTreeMap<String, Value> = status
        .steps
        .iter()
        .filter(|s| !s.alias.is_empty())
        .filter_map(|s| Some((s.alias.clone(), s.output.clone()?)))
        .collect();
    let (vars, target) = place_view(passage, place);
    let mut watch = Vec::new();
    let first = usize::try_from(status.current_step).unwrap_or(0);
    // `currentStep` stays on the step that failed the crossing; every other step it
    // names is under way or next. So a crossing that failed in an earlier call goes on
    // as failed.
    let mut failure: Option<String> = match (steps.get(first), status.steps.get(first)) {
        (Some(step), Some(record)) if record.phase == StepPhase::Failed => {
            Some(step_failure(first, step, &record.message))
        }
        _ => None,
    };
    let output_limit = bounds::output_limit(steps.len());
    // What expressions read of the Bundle, made once for every step.
    let view = bundle_view(bundle);
    // Whether this call has invoked a step.
    let mut ran = false;

    for (i, step) in steps.iter().enumerate().skip(first) {
        let failed = failure.is_some();
        if !failed {
            status.current_step = i32::try_from(i).unwrap_or(i32::MAX);
        }
        if status.steps[i].phase.is_terminal() {
            continue;
        }
        let env = expr::Env {
            steps: outputs.clone(),
            vars: vars.clone(),
            gate: passage.spec.gate.clone(),
            passage: passage.name_any(),
            actor: passage.spec.actor.clone(),
            namespace: passage.namespace().unwrap_or_default(),
            failed,
            bundle: view.clone(),
            target: target.clone(),
        };

        if !step.condition.trim().is_empty() {
            match expr::condition(&step.condition, &env) {
                Err(error) => {
                    fail(
                        &mut status.steps[i],
                        clock,
                        Reason::BadExpression,
                        &format!("condition: {error}"),
                    );
                    failure.get_or_insert_with(|| {
                        step_failure(i, step, &format!("condition: {error}"))
                    });
                    continue;
                }
                Ok(false) => {
                    finish(
                        &mut status.steps[i],
                        clock,
                        StepPhase::Skipped,
                        &format!("condition {:?} was false", step.condition),
                    );
                    continue;
                }
                Ok(true) => {}
            }
        } else if failed {
            finish(
                &mut status.steps[i],
                clock,
                StepPhase::Skipped,
                "the Passage had already failed",
            );
            continue;
        }

        let Some(runner) = registry.runners.get(step.uses.as_str()) else {
            let message = format!(
                "no step is called {:?}; the steps are {}",
                step.uses,
                registry.runners.listed()
            );
            fail(
                &mut status.steps[i],
                clock,
                Reason::UnregisteredStep,
                &message,
            );
            failure.get_or_insert_with(|| step_failure(i, step, &message));
            continue;
        };

        // A wait that has gone on past the step's timeout ends here, before another call.
        if let Some(message) = timed_out(step, &status.steps[i], now) {
            fail(&mut status.steps[i], clock, Reason::StepTimedOut, &message);
            failure.get_or_insert_with(|| step_failure(i, step, &message));
            continue;
        }

        // What the last step did is recorded before this one starts.
        if ran {
            return Advance {
                status,
                requeue_after: None,
                watch,
                fenced: false,
                more: true,
            };
        }
        ran = true;

        let record = &mut status.steps[i];
        record.started_at.get_or_insert(Time(clock.now()));
        record.phase = StepPhase::Running;
        record.attempts += 1;
        let config = match expr::interpolate(
            step.with
                .as_ref()
                .unwrap_or(&Value::Object(Default::default())),
            &env,
        ) {
            Ok(config) => in_cluster_of(config, runner.as_ref(), place),
            Err(error) => {
                let message = format!("with: {error}");
                fail(record, clock, Reason::BadExpression, &message);
                failure.get_or_insert_with(|| step_failure(i, step, &message));
                continue;
            }
        };
        let context = StepContext {
            namespace: &env.namespace,
            gate: &passage.spec.gate,
            passage: &env.passage,
            bundle,
            actor: &passage.spec.actor,
            work_dir,
            config,
            outputs: &outputs,
            attempt: u32::try_from(record.attempts - 1).unwrap_or(0),
            failed,
            traceparent,
            started_at,
        };
        // The fence: a replica whose Lease another may hold by now, or whose shard the
        // namespace has left, starts no step's side effects, and its record of this
        // call is dropped (DECISIONS 112, 133).
        if registry
            .fence
            .as_ref()
            .is_some_and(|fence| !fence.holds(&env.namespace))
        {
            return Advance {
                fenced: true,
                ..unchanged(passage.status.clone().unwrap_or_default())
            };
        }
        let result = runner.run(&context).await;
        drop(context);

        let record = &mut status.steps[i];
        let output = match &result {
            Ok(r) => r.output.clone(),
            Err(e) => e.output.clone(),
        };
        if let Some(output) = output
            .filter(|o| !is_empty(o))
            .map(|o| bounds::output(o, output_limit))
        {
            record.output = Some(output.clone());
            if !step.alias.is_empty() {
                outputs.insert(step.alias.clone(), output);
            }
        }
        match result {
            Err(StepError {
                reason,
                message,
                terminal,
                evidence,
                ..
            }) => {
                if let Some(evidence) = evidence {
                    status.evidence = Some(*evidence);
                }
                fail(record, clock, reason, &message);
                if terminal || !step.continue_on_error {
                    failure.get_or_insert_with(|| step_failure(i, step, &message));
                }
            }
            Ok(result) => {
                watch.extend(result.watch);
                if result.evidence.is_some() {
                    status.evidence = result.evidence;
                }
                match result.progress {
                    // No error, so no reason: recorded as a step that answers `Failed`
                    // is (spec §3.3, §3.4).
                    Progress::Running if failed => {
                        finish(
                            record,
                            clock,
                            StepPhase::Failed,
                            &format!(
                                "a step that runs after a failure cannot wait: {}",
                                result.message
                            ),
                        );
                    }
                    Progress::Running => {
                        say(record, clock.now(), &result.message);
                        status.message = record.message.clone();
                        return Advance {
                            status,
                            requeue_after: Some(result.retry_after.unwrap_or(DEFAULT_RETRY)),
                            watch,
                            fenced: false,
                            more: false,
                        };
                    }
                    Progress::Succeeded => {
                        finish(record, clock, StepPhase::Succeeded, &result.message);
                    }
                    Progress::Failed => {
                        finish(record, clock, StepPhase::Failed, &result.message);
                        if !step.continue_on_error {
                            failure.get_or_insert_with(|| step_failure(i, step, &result.message));
                        }
                    }
                }
            }
        }
    }

    let finished = Some(Time(clock.now()));
    match failure {
        Some(message) => {
            status.phase = Some(PassagePhase::Failed);
            status.message = message;
        }
        None => {
            status.phase = Some(PassagePhase::Succeeded);
            status.message = format!("crossed {}", passage.spec.gate);
        }
    }
    status.finished_at = finished;
    Advance {
        status,
        requeue_after: None,
        watch,
        fenced: false,
        more: false,
    }
}

/// `config` of a step that reaches a cluster, crossing to `place`: its `clusterRef`
/// the target's cluster unless it names one (the hand-over to the Gate's watch then
/// carries it too). Any other step, or Hecate's own cluster, as written.
fn in_cluster_of(mut config: Value, runner: &dyn Runner, place: Option<&Place<'_>>) -> Value {
    let Some(cluster) = place.and_then(|p| p.cluster) else {
        return config;
    };
    if runner.reaches_clusters()
        && let Some(with) = config.as_object_mut()
        && !with.contains_key("clusterRef")
    {
        with.insert("clusterRef".into(), serde_json::json!({"name": cluster}));
    }
    config
}

/// Ends an aborted Passage with `message`: every unfinished step `Aborted`, finished
/// ones kept.
fn abort(status: &mut PassageStatus, now: Timestamp, message: &str) {
    for step in &mut status.steps {
        if !step.phase.is_terminal() {
            step.phase = StepPhase::Aborted;
            say(step, now, "aborted");
            step.finished_at = Some(Time(now));
        }
    }
    status.phase = Some(PassagePhase::Aborted);
    status.message = message.into();
    status.finished_at = Some(Time(now));
}

/// Finishes a step with `phase`, at the time read now (durations must be real), and
/// `message` cut to its bound.
fn finish(record: &mut StepStatus, clock: &dyn Clock, phase: StepPhase, message: &str) {
    let now = clock.now();
    record.phase = phase;
    say(record, now, message);
    record.finished_at = Some(Time(now));
}

/// Records what a step says now: its message, and a line of its log — counted when it
/// repeats the newest line (a wait that says the same at each look), else added, the
/// newest [`MAX_STEP_LOG_LINES`] kept ([`bounds::fit`] keeps fewer in a Passage of many
/// steps).
fn say(record: &mut StepStatus, now: Timestamp, message: &str) {
    record.message = bounds::text(message, bounds::MAX_STEP_MESSAGE).into_owned();
    let text = bounds::text(message, MAX_STEP_LOG_LINE);
    match record.log.last_mut() {
        Some(last) if last.text == text => last.repeated = last.repeated.saturating_add(1),
        _ => {
            record.log.push(StepLogLine {
                at: Time(now),
                text: text.into_owned(),
                repeated: 0,
            });
            let over = record.log.len().saturating_sub(MAX_STEP_LOG_LINES);
            record.log.drain(..over);
        }
    }
}

/// Fails a step with `reason`, recorded as it is spelled on the wire.
fn fail(record: &mut StepStatus, clock: &dyn Clock, reason: Reason, message: &str) {
    record.reason = reason.as_str().into();
    finish(record, clock, StepPhase::Failed, message);
}

/// The Passage's message for a crossing that broke at step `i` with `message` (as the
/// step records it: the same words whether the failure was seen in this call or read
/// back from the record).
fn step_failure(i: usize, step: &Step, message: &str) -> String {
    let message = bounds::text(message, bounds::MAX_STEP_MESSAGE);
    let name = if step.alias.is_empty() {
        step.uses.clone()
    } else {
        format!("{} ({})", step.alias, step.uses)
    };
    format!("steps[{i}] {name}: {message}")
}

/// Why a step that has been waiting must stop, if its timeout has passed.
fn timed_out(step: &Step, record: &StepStatus, now: Timestamp) -> Option<String> {
    let limit = crate::timeout(step).ok().flatten()?;
    let started = record.started_at.as_ref()?.0;
    (now.duration_since(started) > limit)
        .then(|| format!("still not done after its timeout of {}", step.timeout))
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}
