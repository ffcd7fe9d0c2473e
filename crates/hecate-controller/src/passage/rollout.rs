//! A crossing of a Gate that spans several targets (DECISION 151, 155): one Passage,
//! one record per target in `status.rollout`, each target's steps run by the same
//! engine as a one-place crossing's ([`engine::advance_at`]), with the target as its
//! [`Place`].
//!
//! Each round reads where the rollout stands and does what ops' rule says next
//! (`rules::rollout::next`): records for targets that joined, deadlines passed,
//! targets that left, the targets a wave starts. Then every target under way takes
//! one step, together, and the round's outcome is recorded in one status write — so
//! what a target ran is recorded before it runs another, as for one place, and a
//! hundred targets cost a write per round, not one each. A round whose targets have
//! more to do, or whose outcome lets a wave start, is followed by another at once;
//! otherwise the Passage is looked at again when the nearest step, soak or deadline
//! asks.
//!
//! A target's steps' records live on its own record while it crosses (what a new
//! process resumes from) and are dropped when it ends, leaving the step it ended on,
//! its reason and a line. The Passage succeeds when the rollout finishes within its
//! budget, or with its failures accepted; halted, it waits for a person.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::future::join_all;
use hecate_ops::rules::refusal::{Refusal, RefusalCode};
use hecate_ops::rules::rollout::{self, Cluster, Decision, Next, ResolvedTarget, Span};
use hecate_steps::engine::{self, Advance, Place, bounds};
use hecate_steps::flux::checker::ResourceHealth;
use hecate_steps::runner::StepKind as _;
use hecate_types::{
    Bundle, Gate, Health, Passage, PassagePhase, PassageStatus, RolloutStatus, StepPhase,
    TargetPhase, TargetStatus, Time, VerificationPhase, VerificationStatus,
};
use jiff::Timestamp;
use kube::ResourceExt as _;

use super::reconcile::{Error, Outcome, PassageReconciler, accumulate, remove};
use crate::telemetry::spans as trace;

/// Why a target's crossing ended without its steps saying so.
const ABORTED: &str = "Aborted";

impl PassageReconciler {
    /// Crosses `gate`'s targets with `passage` (moving `bundle`), round after round,
    /// as far as the rollout can go now.
    pub(super) async fn roll_out(
        &self,
        passage: &Passage,
        bundle: &Bundle,
        gate: &Gate,
        work_dir: &Path,
    ) -> Result<Outcome, Error> {
        let done = Outcome {
            requeue_after: None,
        };
        let namespace = passage.namespace().unwrap_or_default();
        let clusters = self.connected_clusters(&namespace, gate).await?;
        let span = match rollout::span(&gate.spec, &clusters) {
            Ok(Some(span)) => span.only(&passage.spec.targets),
            Ok(None) => {
                let refusal = Refusal::new(
                    RefusalCode::InvalidTargets,
                    format!(
                        "Gate {} no longer names targets: a rollout cannot go on without them",
                        gate.name_any()
                    ),
                );
                return self.refuse(passage, &refusal).await.map(|()| done);
            }
            Err(problems) => {
                let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
                let refusal = Refusal::new(
                    RefusalCode::InvalidTargets,
                    format!(
                        "Gate {}'s targets cannot be followed: {}",
                        gate.name_any(),
                        lines.join("; ")
                    ),
                );
                return self.refuse(passage, &refusal).await.map(|()| done);
            }
        };
        let mut passage = passage.clone();
        loop {
            let trace_id = passage.status.as_ref().map_or("", |s| s.trace_id.as_str());
            let traceparent = trace::traceparent(trace_id);
            let round = self
                .round(&passage, bundle, gate, &span, work_dir, &traceparent)
                .await;
            if round.fenced {
                return Err(Error::Fenced);
            }
            let finished = round.status.phase().is_terminal();
            let Some(written) = self.record(&passage, round.status).await? else {
                remove(work_dir).await;
                return Ok(done);
            };
            self.observe_ended(&passage, &written);
            if finished {
                let status = written.status.clone().unwrap_or_default();
                self.send_trace(&written);
                self.finished(&passage, bundle, &status).await;
                self.attest(written, bundle, &status).await;
                remove(work_dir).await;
                return Ok(done);
            }
            if !round.again {
                return Ok(Outcome {
                    requeue_after: round.requeue_after,
                });
            }
            passage = written;
        }
    }

    /// Counts each target whose crossing ended between `before` and `after` (as
    /// recorded): once per attempt, by target and outcome (issue 52's series by
    /// target).
    fn observe_ended(&self, before: &Passage, after: &Passage) {
        // Ended already, in this attempt: a retry's end is a new one.
        let ended = |p: &Passage, now: &hecate_types::TargetStatus| {
            p.status
                .as_ref()
                .and_then(|s| s.rollout.as_ref())
                .and_then(|r| r.targets.iter().find(|t| t.name == now.name))
                .is_some_and(|t| t.phase.is_terminal() && t.attempt == now.attempt)
        };
        let Some(record) = after.status.as_ref().and_then(|s| s.rollout.as_ref()) else {
            return;
        };
        let namespace = after.namespace().unwrap_or_default();
        for target in &record.targets {
            if !target.phase.is_terminal() || ended(before, target) {
                continue;
            }
            let seconds = match (&target.started_at, &target.finished_at) {
                (Some(from), Some(to)) => Some(to.0.duration_since(from.0).as_secs_f64()),
                _ => None,
            };
            self.metrics.observe_target(
                &namespace,
                &after.spec.gate,
                &target.name,
                target.phase.as_str(),
                seconds,
            );
        }
    }

    /// The clusters connected to `namespace` (Secrets labelled
    /// `hecate.dev/cluster=true`), by their metadata alone, when `gate` selects
    /// targets by label; none otherwise (listed targets name their cluster).
    async fn connected_clusters(
        &self,
        namespace: &str,
        gate: &Gate,
    ) -> Result<Vec<Cluster>, Error> {
        if !gate.selects_targets() {
            return Ok(Vec::new());
        }
        Ok(crate::gate::reads::list_clusters(&self.client, namespace).await?)
    }

    /// One round: the rollout's record brought up to date and ops' next move made,
    /// then one step of every target under way, together.
    async fn round(
        &self,
        passage: &Passage,
        bundle: &Bundle,
        gate: &Gate,
        span: &Span,
        work_dir: &Path,
        traceparent: &str,
    ) -> Round {
        let now = self.clock.now();
        let mut status = passage.status.clone().unwrap_or_default();
        let mut record = status.rollout.take().unwrap_or_default();
        status.phase = Some(PassagePhase::Running);
        status.started_at.get_or_insert(Time(now));
        status.observed_generation = passage.metadata.generation.unwrap_or_default();

        let stopping = passage.spec.abort || passage.metadata.deletion_timestamp.is_some();
        if stopping {
            let why = if passage.spec.abort {
                "aborted"
            } else {
                "aborted: the Passage is being deleted"
            };
            stop_all(&mut record, now, why);
            status.phase = Some(PassagePhase::Aborted);
            status.message = why.into();
            status.finished_at = Some(Time(now));
            record.message = why.into();
            status.rollout = Some(record);
            return Round::recorded(status);
        }

        present(&span.plan, &mut record);
        if record.crossing.is_empty() {
            record.crossing = passage.spec.crossing_digest();
        }
        let said = passage
            .spec
            .rollout
            .as_ref()
            .map(|asked| rollout::carry_out(&span.plan, &mut record, asked, now))
            .unwrap_or_default();
        for line in &said {
            tracing::info!(
                namespace = %passage.namespace().unwrap_or_default(),
                passage = %passage.name_any(),
                "rollout: {line}"
            );
        }
        let next = rollout::next(&span.plan, &record, now);
        let started = act(&mut record, &next, now);

        // Every target under way takes its next step, together; those whose steps
        // are done and are being verified take their due looks.
        let by_name: BTreeMap<&str, &ResolvedTarget> =
            span.targets.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut round = Round::default();
        self.verify_targets(
            passage,
            bundle,
            gate,
            &by_name,
            &mut record,
            &mut round,
            now,
        )
        .await;
        let under_way: Vec<usize> = record
            .targets
            .iter()
            .enumerate()
            .filter(|(_, t)| t.phase == TargetPhase::Running && t.departed_at.is_none())
            .map(|(i, _)| i)
            .collect();
        let advances = join_all(under_way.iter().map(|&i| {
            let target = &record.targets[i];
            let resolved = by_name.get(target.name.as_str()).copied();
            self.advance_target(passage, bundle, target, resolved, work_dir, traceparent)
        }))
        .await;

        for (&i, advance) in under_way.iter().zip(advances) {
            if advance.fenced {
                round.fenced = true;
                continue;
            }
            round.again |= advance.more;
            round.requeue_after = earliest(round.requeue_after, advance.requeue_after);
            status.watch = accumulate(std::mem::take(&mut status.watch), advance.watch.clone());
            let target = &mut record.targets[i];
            took_step(target, advance, now);
            // Its steps done, a target of a Gate that verifies is verified before it
            // counts as Succeeded: at once, in the next round.
            if !gate.spec.verify.is_empty() && target.phase == TargetPhase::Succeeded {
                start_verifying(target, gate, now);
                round.again = true;
            }
        }

        // Where the rollout stands once the round's steps are counted.
        let next = rollout::next(&span.plan, &record, now);
        round.again |= started || matches!(next.decision, Decision::Start { .. });
        if let Some(at) = next.recheck_at {
            round.requeue_after = earliest(round.requeue_after, until(now, at));
        }
        record.phase = next.decision.phase();
        record.wave = i32::try_from(wave_of(&next)).unwrap_or(i32::MAX);
        let mut words = next.decision.words(&span.plan, &record);
        if let Some(last) = said.last() {
            words = format!("{last}; {words}");
        }
        record.message =
            bounds::text(&words, hecate_types::limits::MAX_ROLLOUT_MESSAGE_BYTES).into_owned();
        status.message = format!("{}: {}", passage.spec.gate, record.message);
        if next.decision.clears() {
            status.phase = Some(PassagePhase::Succeeded);
            status.message = format!("crossed {}: {}", passage.spec.gate, record.message);
            let finished = self.clock.now();
            status.finished_at = Some(Time(finished));
            // Each target was verified before it counted: the Gate verifies nothing
            // more after the rollout (DECISION 162).
            if !gate.spec.verify.is_empty() {
                status.verification = Some(verified_on_each_target(&record, finished));
            }
            round.again = false;
        }
        rollout::keep_within_bounds(&mut record);
        status.rollout = Some(record);
        round.status = status;
        round
    }

    /// The due looks of every target being verified, together, each record carried
    /// on: a target whose verification passed has `Succeeded`; one it said no to has
    /// `Failed` (`VerificationFailed`), counted against its wave's budget like any
    /// failure. When to look again goes into `round`.
    #[allow(clippy::too_many_arguments)]
    async fn verify_targets(
        &self,
        passage: &Passage,
        bundle: &Bundle,
        gate: &Gate,
        by_name: &BTreeMap<&str, &ResolvedTarget>,
        record: &mut RolloutStatus,
        round: &mut Round,
        now: Timestamp,
    ) {
        let verifying: Vec<usize> = record
            .targets
            .iter()
            .enumerate()
            .filter(|(_, t)| t.phase == TargetPhase::Verifying && t.departed_at.is_none())
            .map(|(i, _)| i)
            .collect();
        let looked = join_all(verifying.iter().map(|&i| {
            let target = &record.targets[i];
            let place = by_name.get(target.name.as_str()).map(|t| place_of(t));
            let recorded = target.verifying.clone();
            let started = recorded
                .as_ref()
                .and_then(|v| v.started_at.as_ref())
                .map_or(now, |t| t.0);
            async move {
                self.verifiers
                    .advance_target(
                        gate,
                        passage,
                        bundle,
                        place.as_ref(),
                        recorded,
                        started,
                        now,
                    )
                    .await
            }
        }))
        .await;
        for (&i, verification) in verifying.iter().zip(looked) {
            let target = &mut record.targets[i];
            target.verification = Some(verification.phase);
            match verification.phase {
                VerificationPhase::Verifying => {
                    let next_look = verification
                        .verifiers
                        .iter()
                        .filter(|v| !v.phase.is_final())
                        .filter_map(|v| v.next_look_at.as_ref().map(|t| t.0))
                        .min();
                    if let Some(at) = next_look {
                        round.requeue_after = earliest(round.requeue_after, until(now, at));
                    }
                    target.message = bounds::text(
                        &format!("verifying: {}", verification.message),
                        hecate_types::limits::MAX_TARGET_MESSAGE_BYTES,
                    )
                    .trim_end_matches([':', ' '])
                    .to_string();
                    target.verifying = Some(compact(verification));
                }
                VerificationPhase::Verified => {
                    end(
                        target,
                        TargetPhase::Succeeded,
                        "",
                        "crossed and verified",
                        now,
                    );
                    round.again = true;
                }
                // A target's verification is never cut short by a newer crossing (one
                // Passage holds the Gate): anything final but Verified is a no.
                VerificationPhase::Failed | VerificationPhase::Superseded => {
                    let said = format!("verification said no: {}", verification.message);
                    let said = bounds::text(&said, hecate_types::limits::MAX_TARGET_MESSAGE_BYTES);
                    end(
                        target,
                        TargetPhase::Failed,
                        rollout::step::VERIFICATION_FAILED,
                        &said,
                        now,
                    );
                    round.again = true;
                }
            }
        }
    }

    /// One call of the engine for `target`'s crossing: its steps' records as the
    /// Passage's, its place (`None` when it left the Gate's targets meanwhile: the
    /// Gate's own cluster and vars, which the next round stops).
    async fn advance_target(
        &self,
        passage: &Passage,
        bundle: &Bundle,
        target: &TargetStatus,
        resolved: Option<&ResolvedTarget>,
        work_dir: &Path,
        traceparent: &str,
    ) -> Advance {
        let mut view = passage.clone();
        view.status = Some(PassageStatus {
            phase: Some(PassagePhase::Running),
            steps: target.steps.clone(),
            current_step: target.current_step,
            started_at: target.started_at.clone(),
            trace_id: passage
                .status
                .as_ref()
                .map(|s| s.trace_id.clone())
                .unwrap_or_default(),
            ..PassageStatus::default()
        });
        let place = resolved.map(place_of);
        let dir = target_dir(work_dir, &target.name, target.attempt);
        if target.steps.is_empty() && target.attempt > 1 {
            // The failed attempt's work tree is done with: it may hold a clone.
            let before = target_dir(work_dir, &target.name, target.attempt - 1);
            if let Err(error) = tokio::fs::remove_dir_all(&before).await
                && error.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(dir = %before.display(), %error, "could not remove a failed attempt's work directory");
            }
        }
        if let Err(error) = tokio::fs::create_dir_all(&dir).await {
            tracing::warn!(dir = %dir.display(), %error, "could not make a target's work directory");
        }
        engine::advance_at(
            &self.steps,
            self.clock.as_ref(),
            &view,
            bundle,
            &dir,
            traceparent,
            place.as_ref(),
        )
        .await
    }
}

/// What one round produced.
#[derive(Default)]
struct Round {
    /// The Passage's new status.
    status: PassageStatus,
    /// A target has more to do now, or a wave may start: another round at once.
    again: bool,
    /// When to look again otherwise.
    requeue_after: Option<Duration>,
    /// The fence no longer holds: nothing of the round may be recorded.
    fenced: bool,
}

impl Round {
    fn recorded(status: PassageStatus) -> Self {
        Self {
            status,
            ..Self::default()
        }
    }
}

/// A target's own work directory inside the Passage's, one per attempt: a retry
/// starts from a fresh clone, never from the failed attempt's work tree — whose
/// commit would be what the retry pushes and waits for, though the branch moved on.
/// Target names are Secret names, so one path component each.
fn target_dir(work_dir: &Path, target: &str, attempt: i32) -> PathBuf {
    work_dir
        .join("targets")
        .join(target)
        .join(attempt.to_string())
}

/// `record`'s targets in the plan's order, a `Pending` record for each target that
/// has none yet; records of targets that left stay after them, for `next` to mark.
fn present(plan: &rollout::Plan, record: &mut RolloutStatus) {
    let mut old: Vec<TargetStatus> = std::mem::take(&mut record.targets);
    let mut targets = Vec::with_capacity(old.len());
    for name in plan.targets() {
        match old
            .iter()
            .position(|t| t.name == name && t.departed_at.is_none())
        {
            Some(i) => targets.push(old.remove(i)),
            None => targets.push(TargetStatus {
                name: name.to_string(),
                wave: plan
                    .wave_of(name)
                    .and_then(|w| i32::try_from(w.index).ok())
                    .unwrap_or_default(),
                ..TargetStatus::default()
            }),
        }
    }
    targets.extend(old);
    record.targets = targets;
}

/// Does what `next` says before the round's steps: deadlines passed fail their
/// targets, targets that left are let go, a wave's targets start. Whether any
/// started.
fn act(record: &mut RolloutStatus, next: &Next, now: Timestamp) -> bool {
    for name in &next.timed_out {
        if let Some(target) = find(record, name) {
            end(
                target,
                TargetPhase::Failed,
                rollout::step::PROGRESS_DEADLINE_EXCEEDED,
                "passed its wave's progressDeadline",
                now,
            );
        }
    }
    for name in &next.departed {
        if let Some(target) = record
            .targets
            .iter_mut()
            .find(|t| &t.name == name && t.departed_at.is_none())
        {
            if target.phase.is_under_way() {
                end(
                    target,
                    TargetPhase::Aborted,
                    ABORTED,
                    "left the Gate's targets while crossing",
                    now,
                );
            }
            target.departed_at = Some(Time(now));
        }
    }
    let Decision::Start { wave, targets } = &next.decision else {
        return false;
    };
    for name in targets {
        if let Some(target) = find(record, name) {
            rollout::begin(target, *wave, now);
            target.message = "starting".into();
        }
    }
    !targets.is_empty()
}

fn find<'a>(record: &'a mut RolloutStatus, name: &str) -> Option<&'a mut TargetStatus> {
    record
        .targets
        .iter_mut()
        .find(|t| t.name == name && t.departed_at.is_none())
}

/// `target`'s record after its engine call: its steps while it crosses; when they
/// ended, `Succeeded` or `Failed` with the step it ended on and the step's reason,
/// and its steps' records dropped (DECISION 155).
fn took_step(target: &mut TargetStatus, advance: Advance, now: Timestamp) {
    let status = advance.status;
    target.current_step = status.current_step;
    target.message = bounds::text(
        &status.message,
        hecate_types::limits::MAX_TARGET_MESSAGE_BYTES,
    )
    .into_owned();
    if let Some(revision) = pushed_revision(&status) {
        target.pushed_revision = revision;
    }
    if let Some((applied, health)) = flux_seen(&status) {
        target.applied_revision = applied;
        target.health = Some(health);
    }
    match status.phase() {
        PassagePhase::Succeeded => {
            target.phase = TargetPhase::Succeeded;
            target.finished_at = Some(Time(now));
            target.steps.clear();
        }
        PassagePhase::Failed | PassagePhase::Aborted => {
            let failed = usize::try_from(status.current_step)
                .ok()
                .and_then(|i| status.steps.get(i));
            target.reason = failed
                .map(|s| s.reason.clone())
                .filter(|r| !r.is_empty())
                .unwrap_or_else(|| "StepFailed".into());
            target.phase = TargetPhase::Failed;
            target.finished_at = Some(Time(now));
            target.steps.clear();
        }
        PassagePhase::Pending | PassagePhase::Running => {
            // A target keeps no step log: a hundred targets crossing at once would
            // multiply it past what a Passage can record (DECISION 170).
            target.steps = status.steps;
            for step in &mut target.steps {
                step.log.clear();
            }
        }
    }
}

/// The revision the target's steps pushed: the last `git-push` commit or
/// `oci-push` digest among its steps' outputs.
fn pushed_revision(status: &PassageStatus) -> Option<String> {
    status
        .steps
        .iter()
        .filter(|s| s.phase == StepPhase::Succeeded)
        .filter_map(|s| {
            let output = s.output.as_ref()?;
            let field = match s.uses.as_str() {
                "git-push" => "sha",
                "oci-push" => "digest",
                _ => return None,
            };
            output.get(field)?.as_str().map(str::to_string)
        })
        .next_back()
        .map(|r| bounds::text(&r, hecate_types::limits::MAX_REVISION_CHARS).into_owned())
}

/// What the target's Flux last said, by the last `flux-wait` that looked: the
/// revision its objects applied (the first that reports one) and their
/// health, the worst of them.
fn flux_seen(status: &PassageStatus) -> Option<(String, Health)> {
    let output = status
        .steps
        .iter()
        .filter(|s| s.uses == hecate_steps::flux_wait::FluxWait::USES)
        .filter_map(|s| s.output.as_ref())
        .next_back()?;
    let objects: BTreeMap<String, ResourceHealth> =
        serde_json::from_value(output.get("resources")?.clone()).ok()?;
    let revision = objects
        .values()
        .map(|o| o.revision.as_str())
        .find(|r| !r.is_empty())
        .unwrap_or_default();
    let health = objects.values().map(|o| o.health).reduce(Health::merge)?;
    Some((
        bounds::text(revision, hecate_types::limits::MAX_REVISION_CHARS).into_owned(),
        health,
    ))
}

/// `target`, its steps done, as it starts being verified at `now`: `Verifying` — under
/// way, not yet `Succeeded`, so its wave waits for it — with a fresh verification
/// record.
fn start_verifying(target: &mut TargetStatus, gate: &Gate, now: Timestamp) {
    target.phase = TargetPhase::Verifying;
    target.finished_at = None;
    target.verification = Some(VerificationPhase::Verifying);
    target.verifying = Some(hecate_ops::rules::verification::begin(gate, now));
    target.message = "verifying".into();
}

/// How much of a verifier's words a target's record keeps while it is verified: a
/// hundred targets' records share the Passage's status, and the words that end the
/// verification go to the target's message.
const VERIFYING_WORDS: usize = 128;

/// `verification` as a target's record keeps it: what resuming needs (phases, counts,
/// when to look), its words cut to [`VERIFYING_WORDS`].
fn compact(mut verification: VerificationStatus) -> VerificationStatus {
    let cut = |text: &mut String| {
        *text = bounds::text(text, VERIFYING_WORDS).into_owned();
    };
    cut(&mut verification.message);
    for verifier in &mut verification.verifiers {
        cut(&mut verifier.message);
        cut(&mut verifier.last_value);
    }
    verification
}

/// Where `target` crosses, as the engine and the verifiers read it.
fn place_of(target: &ResolvedTarget) -> Place<'_> {
    Place {
        name: &target.name,
        cluster: target.cluster.as_deref(),
        vars: &target.vars,
    }
}

/// The Passage's verification once its rollout cleared: each target that counts was
/// verified before it did, so it is `Verified`, saying so.
fn verified_on_each_target(record: &RolloutStatus, at: Timestamp) -> VerificationStatus {
    let verified = record
        .targets
        .iter()
        .filter(|t| t.departed_at.is_none())
        .filter(|t| t.verification == Some(VerificationPhase::Verified))
        .count();
    VerificationStatus {
        phase: VerificationPhase::Verified,
        started_at: record
            .targets
            .iter()
            .filter_map(|t| t.started_at.clone())
            .min_by_key(|t| t.0),
        finished_at: Some(Time(at)),
        message: format!("verified on each target before it counted ({verified} verified)"),
        verifiers: Vec::new(),
    }
}

/// Ends every target still crossing or waiting, for `why` (an abort).
fn stop_all(record: &mut RolloutStatus, now: Timestamp, why: &str) {
    for target in &mut record.targets {
        if !target.phase.is_terminal() && target.departed_at.is_none() {
            end(target, TargetPhase::Aborted, ABORTED, why, now);
        }
    }
}

fn end(target: &mut TargetStatus, phase: TargetPhase, reason: &str, message: &str, now: Timestamp) {
    target.phase = phase;
    target.reason = reason.into();
    target.message = message.into();
    target.finished_at = Some(Time(now));
    target.steps.clear();
    target.verifying = None;
}

/// The wave the rollout is on or halted in.
fn wave_of(next: &Next) -> usize {
    match &next.decision {
        Decision::Start { wave, .. } | Decision::Wait { wave, .. } => *wave,
        Decision::Halted(halt) => halt.wave,
        Decision::Completed | Decision::Accepted { .. } => 0,
    }
}

fn earliest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// How long from `now` until `at`; at least a second, so a soak that ends now is
/// judged just after rather than in a busy loop.
fn until(now: Timestamp, at: Timestamp) -> Option<Duration> {
    let left = at.duration_since(now);
    Some(
        Duration::try_from(left)
            .unwrap_or_default()
            .max(Duration::from_secs(1)),
    )
}
