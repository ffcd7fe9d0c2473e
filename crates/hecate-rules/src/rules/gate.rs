//! What a Gate alone decides, before any Bundle is looked at: whether it can start a
//! crossing at all. Explain shows it as the blocker, promote refuses with it and the
//! controller will not open a Passage past it — judged here, once.

use hecate_types::Gate;

use super::steps;
use crate::catalogue::{Checker, Verifier, checker, verifier};

/// Why a Gate can start no crossing, in the order they are looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obstacle {
    /// `spec.suspend` is true.
    Suspended,
    /// Its steps, verifications or health checks cannot run; every problem, one per
    /// line, each naming its field (`steps[1] (git-push): …`, `verify[0] (http): …`).
    InvalidSteps(String),
    /// It has no steps.
    NoSteps,
}

/// The first thing that stops `gate` starting any crossing, if there is one. The order
/// is the one rule: suspended, then what it names that cannot run ([`problems`]), then
/// no steps.
pub fn obstacle(gate: &Gate) -> Option<Obstacle> {
    if gate.spec.suspend {
        return Some(Obstacle::Suspended);
    }
    let problems = problems(gate);
    if !problems.is_empty() {
        return Some(Obstacle::InvalidSteps(problems.join("\n")));
    }
    if gate_steps(gate).is_empty() {
        return Some(Obstacle::NoSteps);
    }
    None
}

/// Every problem with what `gate` names, judged by the [catalogue](crate::catalogue)
/// before any crossing: its steps ([`steps::problems`]), then its verifications —
/// a release must not land only to meet a verifier that cannot judge it —, then its
/// health checks. Empty when all of it can run.
pub fn problems(gate: &Gate) -> Vec<String> {
    let mut problems = steps::problems(gate_steps(gate));
    for (i, verification) in gate.spec.verify.iter().enumerate() {
        let uses = verification.uses.as_str();
        let judged = match Verifier::named(uses) {
            None => Err(format!(
                "no verifier is called {uses:?}; the verifiers are {}",
                verifier::names()
            )),
            Some(_) if let Some(why) = steps::nesting(verification.with.as_ref()) => Err(why),
            Some(verifier) => verifier.check(verification.with.as_ref()),
        };
        if let Err(why) = judged {
            problems.push(format!("verify[{i}] ({uses}): {why}"));
        }
    }
    let namespace = gate.metadata.namespace.as_deref().unwrap_or_default();
    for (i, check) in gate.spec.watch.iter().enumerate() {
        let uses = check.uses.as_str();
        let judged = match Checker::named(uses) {
            None => Err(format!(
                "no health checker is called {uses:?}; the checkers are {}",
                checker::names()
            )),
            Some(_) if let Some(why) = steps::nesting(check.with.as_ref()) => Err(why),
            Some(checker) => checker.check(check.with.as_ref(), namespace),
        };
        if let Err(why) = judged {
            problems.push(format!("watch[{i}] ({uses}): {why}"));
        }
    }
    problems
}

/// The Gate's steps (none when it has no `passage`).
pub fn gate_steps(gate: &Gate) -> &[hecate_types::Step] {
    gate.spec
        .passage
        .as_ref()
        .map(|p| p.steps.as_slice())
        .unwrap_or_default()
}
