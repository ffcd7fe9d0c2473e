//! What a crossing would do, asked before it is (issue 55): promote's judgement for
//! the one asking, and each step the crossing would run with its `with:` resolved.
//! Judged in [`crate::rules::preview`]; `hecate promote --dry-run` and
//! `POST …/gates/{name}/promote?dryRun=true` show this one value.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::BundleRef;
use crate::catalogue::step::Effect;
use crate::rules::refusal::Refusal;

/// A crossing's preview.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrossingPreview {
    /// The namespace.
    pub namespace: String,
    /// The Gate it would cross.
    pub gate: String,
    /// The Bundle it would move.
    pub bundle: BundleRef,
    /// Who asks.
    pub actor: String,
    /// Why promote would refuse this person this crossing now, with the code the real
    /// promote answers; absent when it would start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<Refusal>,
    /// The steps, in order.
    pub steps: Vec<PlannedStep>,
    /// Whether the Gate spans targets: each target's crossing reads its own
    /// `target.*` and vars, resolved when the crossing reaches it; `steps` reads the
    /// Gate's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_target: bool,
}

/// One step as the crossing would run it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannedStep {
    /// The step it runs.
    pub uses: String,
    /// Its alias, `as:`.
    #[serde(default, rename = "as", skip_serializing_if = "String::is_empty")]
    pub alias: String,
    /// Its `if:` as written.
    #[serde(default, rename = "if", skip_serializing_if = "String::is_empty")]
    pub condition: String,
    /// Whether it runs: its `if:` (none: it runs) judged now; absent when the `if:`
    /// reads what is known only as the crossing goes (earlier steps' outputs,
    /// `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<bool>,
    /// Its `with:`, each value resolved as the engine would now; a value that reads
    /// earlier steps' outputs stays as written (see `awaits`).
    pub with: Value,
    /// The earlier steps (by alias) whose outputs its `with:` or `if:` reads: values
    /// known once they run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub awaits: Vec<String>,
    /// What it does beyond the crossing's work directory; absent for a step no
    /// catalogue entry names (the Gate is then refused `InvalidSteps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<Effect>,
    /// `effect` in the words every surface shows (the catalogue's `Effect::words`).
    pub effect_words: String,
    /// Why it cannot be resolved (an expression that fails on this Bundle); the
    /// crossing would fail here with `BadExpression`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}
