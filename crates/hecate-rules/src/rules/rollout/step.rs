//! What a rollout does next, at `now`: the one judgement the controller follows and
//! Explain, status and the UI word.
//!
//! Waves are judged in order; the first that is not done decides:
//!
//! - **Failures past a wave's budget halt the rollout** — that wave's, or an earlier
//!   one's whose verification said no late. Nothing more starts; targets under way
//!   finish; what succeeded stays. The halt names the failed targets, each at the step
//!   it failed, and the fixes: retry them, roll them (or all) back, or accept them.
//!   Failures a person accepted do not count against the budget.
//! - **A wave under way** starts its pending targets, in the Gate's order, while fewer
//!   than `maxConcurrency` cross; otherwise it waits for them.
//! - **A wave done within budget** holds the next until `minSuccessTime` has passed
//!   since its last success, and while any target it reached reports `Degraded`. The
//!   last wave is held alike before the Bundle clears the Gate: clearing lets it go on
//!   downstream.
//! - A target past its wave's `progressDeadline` (counted from its start) is failed
//!   here and now — the laggard counts against the budget in the same judgement — and
//!   named in [`Next::timed_out`] for the controller to stop and record.
//! - A record whose target is no longer among the Gate's targets is not waited on
//!   ([`Next::departed`]); a target that left and came back crosses again.

use std::collections::BTreeMap;
use std::time::Duration;

use hecate_types::{Health, RolloutPhase, RolloutStatus, TargetPhase, TargetStatus, Time};
use jiff::{SignedDuration, Timestamp};

use super::plan::{Plan, PlannedWave};

/// What a rollout does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Next {
    /// The move.
    pub decision: Decision,
    /// Targets under way past their wave's `progressDeadline`: the controller stops
    /// each and records it `Failed`, reason `ProgressDeadlineExceeded`. Already
    /// counted as failed in `decision`.
    pub timed_out: Vec<String>,
    /// Records of targets no longer among the Gate's targets, not yet marked: the
    /// controller stops any still crossing and marks them `departedAt`. Nothing waits
    /// on them.
    pub departed: Vec<String>,
    /// When to judge again though nothing changes: a soak's end or the nearest
    /// deadline.
    pub recheck_at: Option<Timestamp>,
}

/// The move itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start these targets now, in this order.
    Start {
        /// The wave they are in (its index).
        wave: usize,
        /// The targets.
        targets: Vec<String>,
    },
    /// Nothing to start yet.
    Wait {
        /// The wave under way (its index).
        wave: usize,
        /// What for.
        why: Waiting,
    },
    /// Failures passed a wave's budget: nothing more starts until a person decides.
    Halted(Halt),
    /// Every wave finished within its budget: the Bundle clears the Gate.
    Completed,
    /// Every wave finished, some only because failures were accepted: the Bundle
    /// clears the Gate; the record says who let it.
    Accepted {
        /// The accepted failures that counted.
        targets: Vec<String>,
    },
}

impl Decision {
    /// The rollout's phase while this is its move.
    pub fn phase(&self) -> RolloutPhase {
        match self {
            Self::Start { .. } | Self::Wait { .. } => RolloutPhase::Progressing,
            Self::Halted(_) => RolloutPhase::Halted,
            Self::Completed => RolloutPhase::Completed,
            Self::Accepted { .. } => RolloutPhase::Accepted,
        }
    }

    /// Whether the Bundle clears the Gate: the rollout finished within its budget,
    /// or with its failures accepted.
    pub fn clears(&self) -> bool {
        self.phase().is_finished()
    }

    /// The move in words, for the rollout's record and the Passage's message:
    /// "wave 1 (canary): eu-1 crossing", "wave 2 (eu) stays healthy until
    /// 2026-08-11T12:10:00Z", "halted: eu-2 failed at step 2 (GitRejected); wave 1
    /// (canary) tolerates none", "rolled out to all 5 targets", "rolled out to 4 of 5
    /// targets; eu-2 failed, within its wave's budget" — `status` the record the move
    /// was judged from.
    pub fn words(&self, plan: &Plan, status: &RolloutStatus) -> String {
        let label = |wave: usize| {
            plan.waves
                .iter()
                .find(|w| w.index == wave)
                .map_or_else(|| format!("wave {}", wave + 1), PlannedWave::label)
        };
        let of = plan.targets().count();
        let on = status
            .targets
            .iter()
            .filter(|t| t.departed_at.is_none() && t.phase == TargetPhase::Succeeded)
            .filter(|t| plan.has(&t.name))
            .count();
        let all = match (on, of) {
            (1, 1) => "its one target".to_string(),
            (on, of) if on == of => format!("all {of} targets"),
            (on, of) => format!("{on} of {of} targets"),
        };
        match self {
            Self::Start { wave, targets } => {
                format!("{}: starting {}", label(*wave), super::listed(targets))
            }
            Self::Wait { wave, why } => match why {
                Waiting::Crossing { targets } => {
                    format!("{}: {} crossing", label(*wave), super::listed(targets))
                }
                Waiting::Soaking { until } => {
                    format!("{} stays healthy until {until}", label(*wave))
                }
                Waiting::Unhealthy { targets } => format!(
                    "{}: waiting for {} to be healthy again",
                    label(*wave),
                    super::listed(targets)
                ),
            },
            Self::Halted(halt) => format!("{HALTED}{}", halt.words()),
            Self::Completed if on < of => {
                let failed: Vec<String> = plan
                    .targets()
                    .filter(|t| {
                        status.targets.iter().any(|r| {
                            r.name == *t
                                && r.departed_at.is_none()
                                && r.phase.is_terminal()
                                && r.phase != TargetPhase::Succeeded
                        })
                    })
                    .map(str::to_string)
                    .collect();
                format!(
                    "rolled out to {all}; {} failed, within budget",
                    super::listed(&failed)
                )
            }
            Self::Completed => format!("rolled out to {all}"),
            Self::Accepted { targets } => format!(
                "rolled out to {all}; {} failed, accepted",
                super::listed(targets)
            ),
        }
    }
}

/// What a wave waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Waiting {
    /// Targets crossing, as many as the wave allows at once.
    Crossing {
        /// The targets under way.
        targets: Vec<String>,
    },
    /// The wave's `minSuccessTime`, after its last success.
    Soaking {
        /// When it ends.
        until: Timestamp,
    },
    /// Targets the wave reached that report `Degraded`.
    Unhealthy {
        /// The targets.
        targets: Vec<String>,
    },
}

/// How a halted rollout's message begins; what follows is [`Halt::words`], which
/// Explain shows as the blocker's detail.
pub const HALTED: &str = "halted: ";

/// A rollout halted: where, who failed, and what a person may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Halt {
    /// The wave whose budget was passed (its index).
    pub wave: usize,
    /// That wave for people: "wave 1 (canary)".
    pub label: String,
    /// How many failures it allows.
    pub allowed: usize,
    /// Its failures that count, in the Gate's order.
    pub failed: Vec<FailedTarget>,
    /// What a person may do, in the order offered.
    pub fixes: Vec<Fix>,
}

impl Halt {
    /// The halt in words: "eu-2 failed at step 2 (GitRejected); wave 1 (canary)
    /// tolerates none".
    pub fn words(&self) -> String {
        let failures: Vec<String> = self.failed.iter().map(FailedTarget::words).collect();
        let tolerates = match self.allowed {
            0 => "none".to_string(),
            1 => "1 failure".to_string(),
            n => format!("{n} failures"),
        };
        format!(
            "{}; {} tolerates {tolerates}",
            failures.join("; "),
            self.label
        )
    }
}

/// One target whose failure counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedTarget {
    /// The target.
    pub name: String,
    /// The step it failed at (its index); `None` when it failed after its steps (its
    /// verification) or before any.
    pub step: Option<usize>,
    /// The code: a step's reason, `ProgressDeadlineExceeded`, `VerificationFailed`,
    /// `Aborted`.
    pub reason: String,
    /// What its record says, in words.
    pub message: String,
}

impl FailedTarget {
    /// "eu-2 failed at step 2 (GitRejected)": the step counted from 1, as people do.
    pub fn words(&self) -> String {
        let at = self
            .step
            .map(|s| format!(" at step {}", s + 1))
            .unwrap_or_default();
        let why = if self.reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.reason)
        };
        format!("{} failed{at}{why}", self.name)
    }
}

/// What a person may do about a halted rollout, typed: a surface offers it as a
/// button, a command, a tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fix {
    /// Cross the failed targets again; nothing else restarts.
    RetryFailed {
        /// The targets.
        targets: Vec<String>,
    },
    /// Roll the failed targets back to what they ran before.
    RollBackFailed {
        /// The targets.
        targets: Vec<String>,
    },
    /// Roll every target the rollout reached back.
    RollBackAll {
        /// The targets.
        targets: Vec<String>,
    },
    /// Accept the failures, on the record, and let the later waves go.
    AcceptFailures {
        /// The targets.
        targets: Vec<String>,
    },
}

/// The reason a target past its deadline is recorded with.
pub const PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// The reason a target whose verification said no counts as failed with.
pub const VERIFICATION_FAILED: &str = "VerificationFailed";

/// What the rollout following `plan` does next, given its record `status`, at `now`.
pub fn next(plan: &Plan, status: &RolloutStatus, now: Timestamp) -> Next {
    let records = Records::of(plan, status, now);
    let mut recheck = records.nearest_deadline();
    let mut accepted_failures = Vec::new();
    for wave in &plan.waves {
        let failed: Vec<&str> = wave
            .targets
            .iter()
            .map(String::as_str)
            .filter(|t| records.failed(t))
            .collect();
        let (accepted, counted): (Vec<&str>, Vec<&str>) =
            failed.iter().partition(|t| records.accepted(t));
        if counted.len() > wave.max_failures {
            let halt = halt(wave, &counted, plan, &records);
            return records.next(Decision::Halted(halt), recheck);
        }
        accepted_failures.extend(accepted.iter().map(|t| t.to_string()));
        let under_way: Vec<String> = names(wave, |t| records.under_way(t));
        let pending: Vec<String> = names(wave, |t| records.pending(t));
        if !under_way.is_empty() || !pending.is_empty() {
            let slots = wave.max_concurrency.saturating_sub(under_way.len());
            let decision = if slots > 0 && !pending.is_empty() {
                Decision::Start {
                    wave: wave.index,
                    targets: pending.into_iter().take(slots).collect(),
                }
            } else {
                Decision::Wait {
                    wave: wave.index,
                    why: Waiting::Crossing { targets: under_way },
                }
            };
            return records.next(decision, recheck);
        }
        // Done within budget: it stays healthy for its soak before anything goes on.
        let last_success = wave
            .targets
            .iter()
            .filter(|t| records.succeeded(t))
            .filter_map(|t| records.finished_at(t))
            .max();
        if let Some(until) = last_success.and_then(|at| later(at, wave.min_success_time))
            && now < until
        {
            recheck = earliest(recheck, Some(until));
            let why = Waiting::Soaking { until };
            return records.next(
                Decision::Wait {
                    wave: wave.index,
                    why,
                },
                recheck,
            );
        }
        let degraded = names(wave, |t| {
            records.succeeded(t) && records.health(t) == Some(Health::Degraded)
        });
        if !degraded.is_empty() {
            let why = Waiting::Unhealthy { targets: degraded };
            return records.next(
                Decision::Wait {
                    wave: wave.index,
                    why,
                },
                recheck,
            );
        }
    }
    let decision = if accepted_failures.is_empty() {
        Decision::Completed
    } else {
        Decision::Accepted {
            targets: accepted_failures,
        }
    };
    records.next(decision, recheck)
}

fn names(wave: &PlannedWave, keep: impl Fn(&str) -> bool) -> Vec<String> {
    wave.targets.iter().filter(|t| keep(t)).cloned().collect()
}

/// The halt of `wave`, whose `counted` failures passed its budget.
fn halt(wave: &PlannedWave, counted: &[&str], plan: &Plan, records: &Records<'_>) -> Halt {
    let failed: Vec<FailedTarget> = counted.iter().map(|t| records.failure(t)).collect();
    let names: Vec<String> = counted.iter().map(|t| t.to_string()).collect();
    let reached: Vec<String> = plan
        .targets()
        .filter(|t| records.reached(t))
        .map(str::to_string)
        .collect();
    Halt {
        wave: wave.index,
        label: wave.label(),
        allowed: wave.max_failures,
        failed,
        fixes: vec![
            Fix::RetryFailed {
                targets: names.clone(),
            },
            Fix::RollBackFailed {
                targets: names.clone(),
            },
            Fix::RollBackAll { targets: reached },
            Fix::AcceptFailures { targets: names },
        ],
    }
}

/// `at` + `after`, or `None` past the end of time (a soak nobody will see end).
fn later(at: Timestamp, after: Duration) -> Option<Timestamp> {
    let after = SignedDuration::try_from(after).ok()?;
    at.checked_add(after).ok()
}

fn earliest(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The rollout's records as `next` reads them: present targets by name (a departed
/// record counts as none), with the deadlines judged at `now`.
pub(crate) struct Records<'a> {
    by_name: BTreeMap<&'a str, &'a TargetStatus>,
    status: &'a RolloutStatus,
    timed_out: Vec<String>,
    departed: Vec<String>,
    deadlines: Vec<Timestamp>,
}

impl<'a> Records<'a> {
    pub(crate) fn of(plan: &Plan, status: &'a RolloutStatus, now: Timestamp) -> Self {
        let mut by_name = BTreeMap::new();
        let mut departed = Vec::new();
        for record in &status.targets {
            if !plan.has(&record.name) {
                if record.departed_at.is_none() {
                    departed.push(record.name.clone());
                }
                continue;
            }
            // A target that left and came back crosses again: its old record is
            // not a crossing of this place as it is now.
            if record.departed_at.is_none() {
                by_name.insert(record.name.as_str(), record);
            }
        }
        let mut timed_out = Vec::new();
        let mut deadlines = Vec::new();
        for wave in &plan.waves {
            let Some(limit) = wave.progress_deadline else {
                continue;
            };
            for target in &wave.targets {
                let Some(record) = by_name.get(target.as_str()) else {
                    continue;
                };
                let deadline = record
                    .started_at
                    .as_ref()
                    .and_then(|Time(start)| later(*start, limit));
                match deadline {
                    Some(deadline) if record.phase.is_under_way() => {
                        if now >= deadline {
                            timed_out.push(target.clone());
                        } else {
                            deadlines.push(deadline);
                        }
                    }
                    _ => {}
                }
            }
        }
        Self {
            by_name,
            status,
            timed_out,
            departed,
            deadlines,
        }
    }

    /// The records as the controller last wrote them, without the Gate's plan: every
    /// record not marked departed is a present target, and no deadline is judged (the
    /// controller records a laggard `Failed` when its deadline passes). What a reader
    /// of the Passage alone — Explain, a surface — sees.
    pub(crate) fn recorded(status: &'a RolloutStatus) -> Self {
        Self {
            by_name: status
                .targets
                .iter()
                .filter(|r| r.departed_at.is_none())
                .map(|r| (r.name.as_str(), r))
                .collect(),
            status,
            timed_out: Vec::new(),
            departed: Vec::new(),
            deadlines: Vec::new(),
        }
    }

    fn next(self, decision: Decision, recheck_at: Option<Timestamp>) -> Next {
        Next {
            decision,
            timed_out: self.timed_out,
            departed: self.departed,
            recheck_at,
        }
    }

    fn nearest_deadline(&self) -> Option<Timestamp> {
        self.deadlines.iter().min().copied()
    }

    fn phase(&self, target: &str) -> TargetPhase {
        self.by_name
            .get(target)
            .map_or(TargetPhase::Pending, |r| r.phase)
    }

    fn timed_out(&self, target: &str) -> bool {
        self.timed_out.iter().any(|t| t == target)
    }

    /// Failed (its steps, or its verification), aborted, or past its deadline.
    pub(crate) fn failed(&self, target: &str) -> bool {
        self.timed_out(target)
            || matches!(
                self.phase(target),
                TargetPhase::Failed | TargetPhase::Aborted
            )
    }

    pub(crate) fn under_way(&self, target: &str) -> bool {
        self.phase(target).is_under_way() && !self.timed_out(target)
    }

    fn pending(&self, target: &str) -> bool {
        self.phase(target) == TargetPhase::Pending
    }

    pub(crate) fn succeeded(&self, target: &str) -> bool {
        self.phase(target) == TargetPhase::Succeeded
    }

    /// Whether the rollout has touched `target`: started, whatever came of it.
    pub(crate) fn reached(&self, target: &str) -> bool {
        self.phase(target) != TargetPhase::Pending || self.timed_out(target)
    }

    fn finished_at(&self, target: &str) -> Option<Timestamp> {
        self.by_name
            .get(target)
            .and_then(|r| r.finished_at.as_ref())
            .map(|Time(at)| *at)
    }

    fn health(&self, target: &str) -> Option<Health> {
        self.by_name.get(target).and_then(|r| r.health)
    }

    /// Whether a person accepted `target`'s failure: an acceptance names it, made
    /// after it failed (a failure of a later attempt is a new one).
    pub(crate) fn accepted(&self, target: &str) -> bool {
        let failed_at = self.finished_at(target);
        self.status
            .accepted
            .iter()
            .any(|a| a.targets.iter().any(|t| t == target) && failed_at.is_none_or(|f| f <= a.at.0))
    }

    pub(crate) fn failure(&self, target: &str) -> FailedTarget {
        let record = self.by_name.get(target);
        let message = record.map(|r| r.message.clone()).unwrap_or_default();
        if self.timed_out(target) {
            return FailedTarget {
                name: target.to_string(),
                step: record.and_then(|r| usize::try_from(r.current_step).ok()),
                reason: PROGRESS_DEADLINE_EXCEEDED.into(),
                message,
            };
        }
        let verification_said_no = record
            .and_then(|r| r.verification)
            .is_some_and(|v| v == hecate_types::VerificationPhase::Failed);
        let (step, reason) = match record {
            Some(_) if verification_said_no => (None, VERIFICATION_FAILED.to_string()),
            Some(r) if r.phase == TargetPhase::Aborted && r.reason.is_empty() => {
                (usize::try_from(r.current_step).ok(), "Aborted".to_string())
            }
            Some(r) => (usize::try_from(r.current_step).ok(), r.reason.clone()),
            None => (None, String::new()),
        };
        FailedTarget {
            name: target.to_string(),
            step,
            reason,
            message,
        }
    }
}
