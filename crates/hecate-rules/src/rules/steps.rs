//! Whether a Gate's step list can run, judged before any crossing starts: what can be
//! told from the list alone (no cluster, no checkout, no Bundle) — each step's name
//! and `with:` by the [catalogue](crate::catalogue), its `timeout:` and `if:`, and the
//! list's bounds and aliases.
//!
//! [`super::gate::problems`] adds a Gate's verifications and health checks; the
//! controller reports them as its Gate's `InvalidSteps` condition, Explain shows them,
//! and promote refuses a Gate that has them — one judgement for all three.

use hecate_types::limits::MAX_WITH_DEPTH;
use hecate_types::{Step, duration};

use crate::catalogue::step::{self as catalogue, Step as Kind};

/// Every problem with `steps`, one line each as `steps[<i>] (<uses>): <problem>`, in
/// list order; empty when they can run.
pub fn problems(steps: &[Step]) -> Vec<String> {
    let mut problems = Vec::new();
    // The CRD bounds the list, but an older or looser CRD (the reference's) does not.
    let most = hecate_types::limits::MAX_STEPS;
    if steps.len() > most {
        problems.push(format!(
            "steps: {} steps, more than the {most} one crossing may run: shorten the list",
            steps.len()
        ));
    }
    for (i, step) in steps.iter().enumerate() {
        let uses = step.uses.as_str();
        let mut problem = |what: String| problems.push(format!("steps[{i}] ({uses}): {what}"));
        if uses.is_empty() {
            problem("uses is empty: name the step to run".into());
        } else if let Some(why) = nesting(step.with.as_ref()) {
            problem(why);
        } else if let Err(why) = check(step) {
            problem(why);
        }
        if !step.alias.is_empty()
            && let Some(earlier) = steps[..i].iter().position(|s| s.alias == step.alias)
        {
            problem(format!(
                "as {:?} is already the name of steps[{earlier}]",
                step.alias
            ));
        }
    }
    problems
}

/// What is wrong with one step — its name, its `with:`, its `timeout:` and its `if:` —
/// judged without a cluster, a checkout or a Bundle.
pub fn check(step: &Step) -> Result<(), String> {
    let Some(kind) = Kind::named(&step.uses) else {
        return Err(format!(
            "no step is called {:?}; the steps are {}",
            step.uses,
            catalogue::names()
        ));
    };
    kind.check(step.with.as_ref())?;
    timeout(step)?;
    condition(step)
}

/// The step's `if:` compiles (the reference never checks it before a crossing; spec
/// §3.9 proposes it). Only the syntax is judged: the data it reads exists at run time.
fn condition(step: &Step) -> Result<(), String> {
    if step.condition.trim().is_empty() {
        return Ok(());
    }
    hecate_expr::compile(&step.condition).map_err(|why| format!("if: {why}"))
}

/// The step's own `timeout:`, a Go duration longer than zero; `None` when unset.
pub fn timeout(step: &Step) -> Result<Option<jiff::SignedDuration>, String> {
    if step.timeout.trim().is_empty() {
        return Ok(None);
    }
    match duration::parse(&step.timeout) {
        Ok(limit) if limit.is_positive() => Ok(Some(limit)),
        Ok(_) => Err(format!(
            "timeout {:?} must be longer than zero",
            step.timeout
        )),
        Err(why) => Err(format!("timeout: {why}")),
    }
}

/// Why a `with:` nests too deep to be judged, if it does.
pub fn nesting(with: Option<&serde_json::Value>) -> Option<String> {
    let depth = with.map(depth)?;
    (depth > MAX_WITH_DEPTH)
        .then(|| format!("with nests {depth} deep; the most is {MAX_WITH_DEPTH}: flatten it"))
}

/// How deep `value` nests: 0 for a scalar, one more for each map or list around it.
/// Iterative, so any depth a decoder hands over is measured without recursion.
fn depth(value: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 0)];
    while let Some((value, above)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &serde_json::Value>> = match value {
            serde_json::Value::Array(items) => Box::new(items.iter()),
            serde_json::Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        deepest = deepest.max(above + 1);
        pending.extend(children.map(|child| (child, above + 1)));
    }
    deepest
}
