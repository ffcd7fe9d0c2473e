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
    let verify = gate
        .spec
        .verify
        .iter()
        .map(|v| (v.uses.as_str(), v.with.as_ref()));
    problems.extend(named(
        "verify",
        verify,
        |uses, with| match Verifier::named(uses) {
            None => Err(format!(
                "no verifier is called {uses:?}; the verifiers are {}",
                verifier::names()
            )),
            Some(verifier) => verifier.check(with),
        },
    ));
    let namespace = gate.metadata.namespace.as_deref().unwrap_or_default();
    let watch = gate
        .spec
        .watch
        .iter()
        .map(|c| (c.uses.as_str(), c.with.as_ref()));
    problems.extend(named("watch", watch, |uses, with| {
        match Checker::named(uses) {
            None => Err(format!(
                "no health checker is called {uses:?}; the checkers are {}",
                checker::names()
            )),
            Some(checker) => checker.check(with, namespace),
        }
    }));
    problems
}

/// `field[i] (uses): why` for each entry of a list of `{uses, with}` that cannot run:
/// its `with` nested too deep to judge, else what `judge` says of it.
fn named<'a>(
    field: &str,
    entries: impl Iterator<Item = (&'a str, Option<&'a serde_json::Value>)>,
    judge: impl Fn(&str, Option<&serde_json::Value>) -> Result<(), String>,
) -> Vec<String> {
    entries
        .enumerate()
        .filter_map(|(i, (uses, with))| {
            let judged = match steps::nesting(with) {
                Some(why) => Err(why),
                None => judge(uses, with),
            };
            judged
                .err()
                .map(|why| format!("{field}[{i}] ({uses}): {why}"))
        })
        .collect()
}

/// The Gate's steps (none when it has no `passage`).
pub fn gate_steps(gate: &Gate) -> &[hecate_types::Step] {
    gate.spec
        .passage
        .as_ref()
        .map(|p| p.steps.as_slice())
        .unwrap_or_default()
}
