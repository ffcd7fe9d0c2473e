//! Whether a Gate's step list can run, judged before any crossing starts: what can be
//! told from the list alone (no cluster, no checkout, no Bundle).
//!
//! The controller reports these as its Gate's `InvalidSteps` condition, Explain shows
//! them, and promote refuses a Gate that has them — one judgement for all three. Each
//! step's own configuration check belongs to the step, which the controller knows; it
//! passes it in as `check`.

use hecate_types::Step;
use hecate_types::limits::MAX_WITH_DEPTH;

/// The registered step names, in the order the specification lists them.
pub const BUILT_IN: [&str; 15] = [
    "git-clone",
    "git-commit",
    "git-push",
    "git-pull-request",
    "commit-status",
    "edit-yaml",
    "set-image",
    "render-kustomize",
    "render-helm",
    "oci-push",
    "oci-pull",
    "flux-reconcile",
    "flux-wait",
    "http",
    "evidence-gate",
];

/// Every problem with `steps`, one line each as `steps[<i>] (<uses>): <problem>`, in
/// list order; empty when they can run. `check` judges one built-in step's own
/// configuration (`Err` says what is wrong); [`structural`] passes none.
pub fn problems(steps: &[Step], check: impl Fn(&Step) -> Result<(), String>) -> Vec<String> {
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
        } else if !BUILT_IN.contains(&uses) {
            problem(format!(
                "no step is called {uses:?}; the steps are {}",
                BUILT_IN.join(", ")
            ));
        } else if let Some(depth) = step.with.as_ref().map(depth)
            && depth > MAX_WITH_DEPTH
        {
            problem(format!(
                "with nests {depth} deep; the most is {MAX_WITH_DEPTH}: flatten it"
            ));
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

/// [`problems`] without any step's own configuration check: what ops can judge
/// without the step implementations.
pub fn structural(steps: &[Step]) -> Vec<String> {
    problems(steps, |_| Ok(()))
}
