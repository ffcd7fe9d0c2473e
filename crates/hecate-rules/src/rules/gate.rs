//! What a Gate alone decides, before any Bundle is looked at: whether it can start a
//! crossing at all. Explain shows it as the blocker, promote refuses with it and the
//! controller will not open a Passage past it — judged here, once.

use hecate_types::{ConditionStatus, Gate, wellknown};

use super::steps;

/// Why a Gate can start no crossing, in the order they are looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obstacle {
    /// `spec.suspend` is true.
    Suspended,
    /// Its steps cannot run; every problem, one per line.
    InvalidSteps(String),
    /// It has no steps.
    NoSteps,
}

/// The first thing that stops `gate` starting any crossing, if there is one, as people
/// see it: step problems are the ones [`steps::structural`] finds, else those the
/// controller reported (its Ready condition with reason `InvalidSteps`, which also
/// covers each step's own configuration check, which only the controller knows).
pub fn obstacle(gate: &Gate) -> Option<Obstacle> {
    let mut problems = steps::structural(gate_steps(gate));
    if problems.is_empty()
        && let Some(reported) = reported_invalid_steps(gate)
    {
        problems.push(reported);
    }
    obstacle_given(gate, problems)
}

/// The first thing that stops `gate` starting any crossing, given every problem with
/// its steps (the controller passes its full [`steps::problems`], which is what it
/// reports; it must not read back its own report). The order is the one rule:
/// suspended, then steps that cannot run, then no steps.
pub fn obstacle_given(gate: &Gate, step_problems: Vec<String>) -> Option<Obstacle> {
    if gate.spec.suspend {
        return Some(Obstacle::Suspended);
    }
    if !step_problems.is_empty() {
        return Some(Obstacle::InvalidSteps(step_problems.join("\n")));
    }
    if gate_steps(gate).is_empty() {
        return Some(Obstacle::NoSteps);
    }
    None
}

/// The Gate's steps (none when it has no `passage`).
pub fn gate_steps(gate: &Gate) -> &[hecate_types::Step] {
    gate.spec
        .passage
        .as_ref()
        .map(|p| p.steps.as_slice())
        .unwrap_or_default()
}

/// The controller's `InvalidSteps` message, if its Ready condition carries one.
fn reported_invalid_steps(gate: &Gate) -> Option<String> {
    gate.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| {
            c.type_ == wellknown::condition::READY
                && c.status == ConditionStatus::False
                && c.reason == wellknown::gate_reason::INVALID_STEPS
        })
        .map(|c| c.message.clone())
}
