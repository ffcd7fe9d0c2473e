//! `hecate promote --dry-run`: what the crossing would do (issue 55) — promote's
//! judgement for the one asking, then each step with its `with:` as ops resolved it.

use hecate_ops::model::{CrossingPreview, PlannedStep};
use serde_json::Value;

use crate::output::{Colour, Style};

/// The preview in words: whether the crossing would start, then its steps.
pub(crate) fn preview(preview: &CrossingPreview, style: &Style) -> String {
    let bundle = if preview.bundle.version.is_empty() {
        preview.bundle.name.clone()
    } else {
        format!("{} ({})", preview.bundle.version, preview.bundle.name)
    };
    let mut out = match &preview.refused {
        None => format!(
            "{} {bundle} through {} as {}; nothing was created (a dry run)\n",
            style.paint(Colour::Green, "would cross"),
            preview.gate,
            preview.actor
        ),
        Some(refusal) => format!(
            "{} {bundle} through {}: {} ({})\n",
            style.paint(Colour::Red, "would be refused:"),
            preview.gate,
            refusal.reason,
            refusal.code.as_str()
        ),
    };
    if preview.per_target {
        out.push_str(
            "the Gate spans targets: each target's crossing reads its own target.* and vars\n",
        );
    }
    if preview.steps.is_empty() {
        out.push_str("no steps\n");
    }
    for (i, step) in preview.steps.iter().enumerate() {
        out.push('\n');
        out.push_str(&planned(i, step, style));
    }
    out
}

fn planned(i: usize, step: &PlannedStep, style: &Style) -> String {
    let name = if step.alias.is_empty() {
        step.uses.clone()
    } else {
        format!("{} ({})", step.uses, step.alias)
    };
    let effect = &step.effect_words;
    let runs = match (step.runs, step.condition.is_empty()) {
        (Some(true), true) => String::new(),
        (Some(true), false) => format!("; runs: if {} holds now", step.condition),
        (Some(false), _) => format!(
            "; {}: if {} does not hold",
            style.paint(Colour::Yellow, "skipped"),
            step.condition
        ),
        (None, _) => format!("; runs if {}, decided as the crossing goes", step.condition),
    };
    let mut out = format!(
        "{}. {} — {effect}{runs}\n",
        i + 1,
        style.paint(Colour::Bold, &name)
    );
    if let Some(problem) = &step.problem {
        out.push_str(&format!(
            "   {} {problem}\n",
            style.paint(Colour::Red, "would fail:")
        ));
    }
    if let Value::Object(with) = &step.with {
        for (key, value) in with {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push_str(&format!("   {key}: {text}\n"));
        }
    }
    if !step.awaits.is_empty() {
        out.push_str(&format!(
            "   (what reads {} is known once {} run{})\n",
            step.awaits
                .iter()
                .map(|a| format!("steps.{a}"))
                .collect::<Vec<_>>()
                .join(", "),
            step.awaits.join(", "),
            if step.awaits.len() == 1 { "s" } else { "" }
        ));
    }
    out
}
