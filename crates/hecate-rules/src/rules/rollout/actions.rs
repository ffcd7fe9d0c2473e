//! What people ask of a rollout — retry, roll back, accept — and what the controller
//! does to a target's record when it starts, restarts, or the record list grows past
//! its bound; and which targets need a catch-up crossing after a rollout finished.

use hecate_types::limits::{MAX_ACTOR_CHARS, MAX_REASON_CHARS, MAX_TARGETS, MAX_WAVES};
use hecate_types::{
    AcceptedFailures, RolloutPhase, RolloutStatus, TargetPhase, TargetStatus, Time,
};
use jiff::Timestamp;

use super::plan::Plan;
use super::step::{Decision, Records, next};

/// Why a rollout action is refused: an answer, not a failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ActionRefusal {
    /// No present target has failed.
    #[error("no target of the rollout has failed: nothing to {action}")]
    NothingFailed {
        /// What was asked: "retry", "roll back".
        action: &'static str,
    },
    /// The rollout has reached no target.
    #[error("the rollout has reached no target yet: nothing to roll back")]
    NothingReached,
    /// A rollback names targets the rollout never reached (or that are not its).
    #[error("the rollout did not reach {}: only a target it reached can be rolled back", super::listed(.names))]
    NotReached {
        /// Those names.
        names: Vec<String>,
    },
    /// A rollback names more targets than a Gate spans.
    #[error("{count} targets are named; a Gate spans at most {MAX_TARGETS}")]
    TooManyNames {
        /// How many were named.
        count: usize,
    },
    /// Failures are accepted only to let a halted rollout go on.
    #[error("the rollout is {}, not halted: there are no failures to accept", .phase.as_str())]
    NotHalted {
        /// Where it stands.
        phase: RolloutPhase,
    },
    /// An acceptance must say why.
    #[error("say why the failures are accepted: the reason is kept on the record")]
    NoReason,
    /// The reason is longer than a record keeps.
    #[error("the reason is {chars} characters; the record keeps at most {MAX_REASON_CHARS}")]
    ReasonTooLong {
        /// Its length.
        chars: usize,
    },
    /// An acceptance must say who.
    #[error("who accepts the failures must be known")]
    NoActor,
    /// The record keeps no more acceptances.
    #[error(
        "the rollout has recorded {MAX_WAVES} acceptances, the most it keeps; cross the Gate again instead"
    )]
    TooManyAcceptances,
}

/// The targets a retry crosses again: every present target whose crossing failed
/// (its steps, its verification, its deadline, an abort) — accepted or not; nothing
/// that succeeded or is under way restarts.
pub fn retry(
    plan: &Plan,
    status: &RolloutStatus,
    now: Timestamp,
) -> Result<Vec<String>, ActionRefusal> {
    let records = Records::of(plan, status, now);
    let failed: Vec<String> = plan
        .targets()
        .filter(|t| records.failed(t))
        .map(str::to_string)
        .collect();
    if failed.is_empty() {
        return Err(ActionRefusal::NothingFailed { action: "retry" });
    }
    Ok(failed)
}

/// `record` made ready to cross again, as a retry asks: `Pending`, its attempt kept
/// (the start counts the next), everything the failed attempt recorded cleared.
pub fn restart(record: &mut TargetStatus) {
    *record = TargetStatus {
        name: std::mem::take(&mut record.name),
        wave: record.wave,
        attempt: record.attempt,
        ..TargetStatus::default()
    };
}

/// `record` as its target starts crossing in wave `wave` at `now`: `Running`, one
/// attempt more, nothing left from an earlier attempt or stay.
pub fn begin(record: &mut TargetStatus, wave: usize, now: Timestamp) {
    *record = TargetStatus {
        name: std::mem::take(&mut record.name),
        wave: i32::try_from(wave).unwrap_or(i32::MAX),
        phase: TargetPhase::Running,
        attempt: record.attempt.saturating_add(1),
        started_at: Some(Time(now)),
        ..TargetStatus::default()
    };
}

/// The record of `by` accepting the failures that halted the rollout, for `reason`,
/// at `now`: appended to `status.accepted`, it lets the later waves go. Refused
/// unless the rollout is halted, and without a reason or a name.
pub fn accept(
    plan: &Plan,
    status: &RolloutStatus,
    by: &str,
    reason: &str,
    now: Timestamp,
) -> Result<AcceptedFailures, ActionRefusal> {
    let by = by.trim();
    let reason = reason.trim();
    if by.is_empty() || by.chars().count() > MAX_ACTOR_CHARS {
        return Err(ActionRefusal::NoActor);
    }
    if reason.is_empty() {
        return Err(ActionRefusal::NoReason);
    }
    let chars = reason.chars().count();
    if chars > MAX_REASON_CHARS {
        return Err(ActionRefusal::ReasonTooLong { chars });
    }
    if status.accepted.len() >= MAX_WAVES {
        return Err(ActionRefusal::TooManyAcceptances);
    }
    let decision = next(plan, status, now).decision;
    let Decision::Halted(halt) = decision else {
        return Err(ActionRefusal::NotHalted {
            phase: decision.phase(),
        });
    };
    Ok(AcceptedFailures {
        by: by.to_string(),
        at: Time(now),
        reason: reason.to_string(),
        targets: halt.failed.into_iter().map(|f| f.name).collect(),
    })
}

/// Which targets a rollback crosses back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RollBack {
    /// The failed ones (accepted or not).
    Failed,
    /// Every one the rollout reached.
    All,
    /// These, each one the rollout reached.
    Named(Vec<String>),
}

impl RollBack {
    /// What a person wrote: `failed`, `all`, or names separated by commas.
    pub fn parse(text: &str) -> Self {
        match text.trim() {
            "failed" => Self::Failed,
            "all" => Self::All,
            names => Self::Named(
                names
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect(),
            ),
        }
    }
}

/// The present targets of a finished rollout (`status`, its record as written) that a
/// rollback of `asked` crosses back to what they ran before, in the record's order.
pub fn rollback_targets(
    status: &RolloutStatus,
    asked: &RollBack,
) -> Result<Vec<String>, ActionRefusal> {
    let records = Records::recorded(status);
    let present = status
        .targets
        .iter()
        .filter(|r| r.departed_at.is_none())
        .map(|r| r.name.as_str());
    let chosen: Vec<String> = match asked {
        RollBack::Failed => present
            .filter(|t| records.failed(t))
            .map(str::to_string)
            .collect(),
        RollBack::All => present
            .filter(|t| records.reached(t))
            .map(str::to_string)
            .collect(),
        RollBack::Named(names) if names.len() > MAX_TARGETS => {
            return Err(ActionRefusal::TooManyNames { count: names.len() });
        }
        RollBack::Named(names) => {
            let unreached: Vec<String> = names
                .iter()
                .filter(|n| !records.reached(n))
                .cloned()
                .collect();
            if !unreached.is_empty() {
                return Err(ActionRefusal::NotReached { names: unreached });
            }
            present
                .filter(|t| names.iter().any(|n| n == t))
                .map(str::to_string)
                .collect()
        }
    };
    match (chosen.is_empty(), asked) {
        (false, _) => Ok(chosen),
        (true, RollBack::Failed) => Err(ActionRefusal::NothingFailed {
            action: "roll back",
        }),
        (true, _) => Err(ActionRefusal::NothingReached),
    }
}

/// The targets a finished rollout (`finished`, the record of the Gate's occupant's
/// crossing) never brought to the occupant — present now, with no record of their own
/// in it, or one from before they left, or one never started: each needs a catch-up
/// crossing of that one target. Empty while the rollout is not finished: a rollout
/// under way reaches its new targets itself, in their wave. A target that failed
/// within the budget is not caught up: retrying it is a person's call.
pub fn catch_up(plan: &Plan, finished: &RolloutStatus) -> Vec<String> {
    if !finished.phase.is_finished() {
        return Vec::new();
    }
    plan.targets()
        .filter(|target| {
            !finished.targets.iter().any(|r| {
                r.name == *target && r.departed_at.is_none() && r.phase != TargetPhase::Pending
            })
        })
        .map(str::to_string)
        .collect()
}

/// Keeps `status.targets` within the bound a rollout's record has: present targets'
/// records always stay; departed ones give way, the longest gone first, counted in
/// `omittedTargets`. How many were left out.
pub fn keep_within_bounds(status: &mut RolloutStatus) -> usize {
    let over = status.targets.len().saturating_sub(MAX_TARGETS);
    if over == 0 {
        return 0;
    }
    let mut departed: Vec<(Timestamp, String)> = status
        .targets
        .iter()
        .filter_map(|r| r.departed_at.as_ref().map(|Time(at)| (*at, r.name.clone())))
        .collect();
    departed.sort();
    let dropped: Vec<String> = departed.into_iter().take(over).map(|(_, n)| n).collect();
    status
        .targets
        .retain(|r| r.departed_at.is_none() || !dropped.contains(&r.name));
    let count = dropped.len();
    status.omitted_targets = status
        .omitted_targets
        .saturating_add(i32::try_from(count).unwrap_or(i32::MAX));
    count
}

/// Carries out the requests in `asked` (a Passage's `spec.rollout`) that `status`
/// has not yet, in the order asked, at `now`: a retry restarts the targets failed by
/// then ([`retry`], [`restart`]); an acceptance is recorded ([`accept`]) when the
/// rollout is halted. Each request is carried out once — the record counts them — and
/// one that finds nothing to do is said, not repeated. Answers what was said, for the
/// rollout's message.
pub fn carry_out(
    plan: &Plan,
    status: &mut RolloutStatus,
    asked: &hecate_types::RolloutRequests,
    now: Timestamp,
) -> Vec<String> {
    let mut said = Vec::new();
    let done = |count: i32| usize::try_from(count).unwrap_or(0);
    for request in asked.retries.iter().skip(done(status.retries_done)) {
        match retry(plan, status, now) {
            Ok(targets) => {
                for target in &targets {
                    if let Some(record) = status
                        .targets
                        .iter_mut()
                        .find(|r| &r.name == target && r.departed_at.is_none())
                    {
                        restart(record);
                    }
                }
                said.push(format!(
                    "{} asked to retry {}",
                    request.by,
                    super::listed(&targets)
                ));
            }
            Err(refusal) => said.push(format!("{}'s retry: {refusal}", request.by)),
        }
        status.retries_done = status.retries_done.saturating_add(1);
    }
    for request in asked.acceptances.iter().skip(done(status.acceptances_done)) {
        match accept(plan, status, &request.by, &request.reason, now) {
            Ok(accepted) => {
                said.push(format!(
                    "{} accepted the failures of {}: {}",
                    request.by,
                    super::listed(&accepted.targets),
                    accepted.reason
                ));
                status.accepted.push(accepted);
            }
            Err(refusal) => said.push(format!("{}'s acceptance: {refusal}", request.by)),
        }
        status.acceptances_done = status.acceptances_done.saturating_add(1);
    }
    said
}
