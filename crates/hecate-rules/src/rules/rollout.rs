//! Fan-out (DECISION 151): one Gate, many places. A Gate's `spec.targets` names where
//! its release goes and `spec.rollout` in what waves; each crossing reaches every
//! target in turn, and its Passage records each target's own crossing.
//!
//! The judgement, in the order a crossing meets it:
//!
//! - [`targets`]: which places the Gate spans now — its listed targets, then the
//!   connected clusters its selector matches, by name — with names checked and
//!   refused when two are alike, malformed, or a selector matches nothing.
//! - [`plan`]: which wave each target is in — the first that selects it; targets no
//!   wave selects go in a last wave of their own, so a cluster that joins with labels
//!   nobody foresaw is reached last, never first and never not at all — and what each
//!   wave's budgets allow: `maxConcurrency` rounded up (at least one), `maxFailures`
//!   rounded down, none when unset.
//! - [`step`]: what the rollout does next, at `now`: start these targets, wait (for
//!   crossings, a soak, a wave's health), halt — failures past a wave's budget stop
//!   every later wave, keep what succeeded, and name the fixes — or finish, within
//!   budget (`Completed`) or because a person accepted failures (`Accepted`); both
//!   let the Bundle clear the Gate.
//! - [`actions`]: what people ask of a rollout — retry the failed targets, roll the
//!   failed ones (or all) back, accept the failures (who, when, why) — and what a
//!   target that joins after a rollout finished needs: a catch-up crossing of that
//!   one target.
//! - [`occupancy`]: what is in the environment while a rollout is under way, per
//!   target: "v1.4.0 on 3 of 5 targets; eu-2 failed".
//! - [`view`]: the same from the Passage's record alone, for its readers — Explain,
//!   `hecate targets`, the API and the UI.
//!
//! Nothing here reads a cluster or a clock: the controller passes the connected
//! clusters (Secrets labelled `hecate.dev/cluster=true`) and `now`, and writes what
//! these functions return. A Gate without `spec.targets` never comes here: it is one
//! place, as before ([`span`] answers `None`).

pub mod actions;
pub mod occupancy;
pub mod plan;
pub mod reach;
pub mod step;
pub mod targets;
pub mod view;

use hecate_types::GateSpec;

pub use actions::{
    ActionRefusal, RollBack, accept, begin, carry_out, catch_up, keep_within_bounds, restart,
    retry, rollback_targets,
};
pub use occupancy::{Occupancy, occupancy, recorded};
pub use plan::{Budget, Plan, PlanProblem, PlannedWave, WaveKind, plan};
pub use reach::reach;
pub use step::{Decision, FailedTarget, Fix, Halt, Next, Waiting, next};
pub use targets::{Cluster, Origin, ResolvedTarget, TargetProblem, resolve};

/// The places a Gate spans now and the waves they go in: what a crossing of a Gate
/// with targets follows.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The targets, in order: listed first, then selected by name.
    pub targets: Vec<ResolvedTarget>,
    /// Each target's wave and what the waves allow.
    pub plan: Plan,
}

impl Span {
    /// What a crossing of `names` alone follows ([`Plan::only`]); every target when
    /// `names` is empty.
    pub fn only(self, names: &[String]) -> Span {
        if names.is_empty() {
            return self;
        }
        Span {
            plan: self.plan.only(names),
            targets: self
                .targets
                .into_iter()
                .filter(|t| names.contains(&t.name))
                .collect(),
        }
    }
}

/// Why a Gate's targets or waves cannot be followed: the Gate's problem, shown as
/// its steps' are, and no crossing starts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// Which places the Gate spans.
    #[error(transparent)]
    Targets(#[from] TargetProblem),
    /// Which waves they go in.
    #[error(transparent)]
    Plan(#[from] PlanProblem),
}

/// The places `gate` spans given the clusters connected to its namespace, and their
/// waves: `None` for a Gate without `spec.targets` (one place, as before), or every
/// problem with its targets and waves.
pub fn span(gate: &GateSpec, clusters: &[Cluster]) -> Result<Option<Span>, Vec<Problem>> {
    let Some(spec) = &gate.targets else {
        return match &gate.rollout {
            Some(_) => Err(vec![PlanProblem::WithoutTargets.into()]),
            None => Ok(None),
        };
    };
    let targets = resolve(spec, clusters).map_err(into_problems)?;
    let plan = plan(gate.rollout.as_ref(), spec, &targets).map_err(into_problems)?;
    Ok(Some(Span { targets, plan }))
}

fn into_problems<P: Into<Problem>>(problems: Vec<P>) -> Vec<Problem> {
    problems.into_iter().map(Into::into).collect()
}

/// `names` in a sentence: "eu-2", "eu-2 and eu-4", "eu-1, eu-2 and eu-4", and past
/// three, "eu-1, eu-2, eu-4 and 2 more".
pub fn listed(names: &[String]) -> String {
    const SHOWN: usize = 3;
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [first @ .., last] if names.len() <= SHOWN => format!("{} and {last}", first.join(", ")),
        _ => format!(
            "{} and {} more",
            names[..SHOWN].join(", "),
            names.len() - SHOWN
        ),
    }
}
