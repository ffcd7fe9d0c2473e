//! What a crossing would do, before anyone asks for it (issue 55): promote's own
//! judgement for the one asking — the same checks, in the same order, with the same
//! codes — and the Passage it would create, step by step, each `with:` resolved against
//! the Bundle and the Gate's vars by the reading the engine uses ([`super::env`]).
//!
//! Nothing here runs a step: what a step would change in the environment's repository
//! is the preview crossing's to show, run by the controller.

use std::collections::BTreeSet;

use hecate_expr as expr;
use hecate_types::{Bundle, Gate, Passage, Step};
use kube::ResourceExt as _;
use serde_json::Value;

use super::env::{bundle_view, place_view};
use super::promotion::{self, CrossingKind};
use super::{actions, diff};
use crate::catalogue::step::Step as Kind;
use crate::model::{CrossingPreview, PlannedStep};

/// The Passage promote would create for `actor` crossing `gate` with `bundle` at
/// `now`, given the Gate's `passages`: its name and steps as promote makes them.
pub fn passage(
    gate: &Gate,
    bundle: &Bundle,
    passages: &[&Passage],
    actor: &str,
    now: jiff::Timestamp,
) -> Passage {
    let name = promotion::next_passage_name(&gate.name_any(), passages);
    promotion::new_passage(gate, bundle, actor, &name, now)
}

/// The preview of `passage` — what [`passage`] made — crossing `gate` with `bundle` at
/// `now`, given the Gate's `passages`: refused as promote would refuse its actor, and
/// its steps as they would run.
pub fn of(
    gate: &Gate,
    bundle: &Bundle,
    passage: &Passage,
    passages: &[&Passage],
    now: jiff::Timestamp,
) -> CrossingPreview {
    let actor = passage.spec.actor.as_str();
    let refused = actions::judge_actor(actor, "a crossing")
        .and_then(|()| promotion::judge_gate(gate))
        .and_then(|()| {
            promotion::judge(gate, bundle, passages, actor, CrossingKind::Promotion, now)
        })
        .err();
    CrossingPreview {
        namespace: gate.namespace().unwrap_or_default(),
        gate: gate.name_any(),
        bundle: diff::reference(bundle),
        actor: actor.to_string(),
        refused,
        steps: plan(passage, bundle),
        per_target: gate.spec.targets.is_some(),
    }
}

/// `passage`'s steps as they would run, resolved where they can be before they run.
pub fn plan(passage: &Passage, bundle: &Bundle) -> Vec<PlannedStep> {
    let (vars, target) = place_view(passage, None);
    let env = expr::Env {
        // Nothing has run: a value that reads an output stays as written (`resolve`).
        steps: Default::default(),
        vars,
        gate: passage.spec.gate.clone(),
        passage: passage.name_any(),
        actor: passage.spec.actor.clone(),
        namespace: passage.namespace().unwrap_or_default(),
        failed: false,
        bundle: bundle_view(bundle),
        target,
    };
    let mut earlier: Vec<&str> = Vec::new();
    let mut planned = Vec::with_capacity(passage.spec.steps.len());
    for step in &passage.spec.steps {
        planned.push(planned_step(step, &env, &earlier));
        if !step.alias.is_empty() {
            earlier.push(&step.alias);
        }
    }
    planned
}

fn planned_step(step: &Step, env: &expr::Env, earlier: &[&str]) -> PlannedStep {
    let empty = Value::Object(Default::default());
    let with = step.with.as_ref().unwrap_or(&empty);
    let awaits = reads_outputs(step, earlier);
    let effect = Kind::named(&step.uses).map(Kind::effect);
    let mut problem = None;
    let condition = step.condition.trim();
    // An `if:` that reads outputs, or whose answer turns on `failed` (judged both
    // ways), is decided as the crossing goes.
    let runs = if condition.is_empty() {
        Some(true)
    } else if !awaits.is_empty() {
        None
    } else {
        let failing = expr::Env {
            failed: true,
            ..env.clone()
        };
        match (
            expr::condition(condition, env),
            expr::condition(condition, &failing),
        ) {
            (Ok(runs), Ok(if_failed)) => (runs == if_failed).then_some(runs),
            (Err(error), _) | (_, Err(error)) => {
                problem = Some(format!("if: {error}"));
                None
            }
        }
    };
    let resolved = match resolve(with, env, &awaits) {
        Ok(resolved) => resolved,
        Err(error) => {
            problem.get_or_insert_with(|| format!("with: {error}"));
            with.clone()
        }
    };
    PlannedStep {
        uses: step.uses.clone(),
        alias: step.alias.clone(),
        condition: step.condition.clone(),
        runs,
        with: resolved,
        awaits,
        effect,
        effect_words: effect
            .map_or(
                "not a step Hecate knows",
                crate::catalogue::step::Effect::words,
            )
            .to_string(),
        problem,
    }
}

/// `with` with what can be known now resolved: each string that reads none of
/// `awaits`' outputs is interpolated as the engine would; one that reads them stays as
/// written, to be read as "known once that step runs".
fn resolve(with: &Value, env: &expr::Env, awaits: &[String]) -> Result<Value, expr::ExprError> {
    Ok(match with {
        Value::String(text) if awaits.iter().any(|alias| reads(text, alias)) => with.clone(),
        Value::String(_) => expr::interpolate(with, env)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| resolve(item, env, awaits))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| Ok((key.clone(), resolve(value, env, awaits)?)))
                .collect::<Result<_, expr::ExprError>>()?,
        ),
        _ => with.clone(),
    })
}

/// Whether `text` reads step `alias`'s output (`steps.repo` is not `steps.repository`).
fn reads(text: &str, alias: &str) -> bool {
    let needle = format!("steps.{alias}");
    text.match_indices(&needle).any(|(at, _)| {
        text[at + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-'))
    })
}

/// The aliases among `earlier` whose outputs `step` reads (`steps.<alias>` in an
/// expression of its `with:` or `if:`), in `earlier`'s order.
fn reads_outputs(step: &Step, earlier: &[&str]) -> Vec<String> {
    let mut texts = vec![step.condition.as_str()];
    if let Some(with) = &step.with {
        strings(with, &mut texts);
    }
    let read: BTreeSet<&str> = earlier
        .iter()
        .copied()
        .filter(|alias| texts.iter().any(|t| reads(t, alias)))
        .collect();
    earlier
        .iter()
        .filter(|a| read.contains(*a))
        .map(|a| a.to_string())
        .collect()
}

/// Every string in `value`, keys included.
fn strings<'a>(value: &'a Value, into: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => into.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, into)),
        Value::Object(map) => {
            for (key, v) in map {
                into.push(key);
                strings(v, into);
            }
        }
        _ => {}
    }
}
