//! The tools' arguments and answers as Rust types: serde decodes the arguments (and
//! refuses fields it does not know), schemars derives the `inputSchema` and
//! `outputSchema` every tool advertises. The answers reuse hecate-ops' own model types,
//! so a tool result and `hecate … -o json` carry the same values.
//!
//! Every answer is a JSON object — lists are wrapped (`{"gates": […]}`) — because the
//! protocol revisions before 2026-07-28 allow only objects as `structuredContent`.

use hecate_ops::model::GateSummary;
use hecate_ops::{AuditEntry, QueuedApproval, RefusalCode};
use hecate_types::{Bundle, Passage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// Optional string arguments are declared `"type": "string"` rather than schemars'
// `["string", "null"]`: a model should leave them out, not send null (which is still
// accepted, and means the same).

/// Arguments of a tool that reads one namespace and needs nothing else.
#[derive(Deserialize, JsonSchema, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct InNamespace {
    /// Kubernetes namespace to look in; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `get_gate`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct GateName {
    /// The Gate's name, e.g. `production` (list_gates shows them).
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Kubernetes namespace of the Gate; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `get_passage`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct PassageName {
    /// The Passage's name, e.g. `production-3` (list_passages shows them).
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Kubernetes namespace of the Passage; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `why_stuck`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct GateArgs {
    /// The Gate's name, e.g. `production`.
    #[schemars(length(min = 1, max = 253))]
    pub gate: String,
    /// Kubernetes namespace of the Gate; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `list_passages`.
#[derive(Deserialize, JsonSchema, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct PassageFilter {
    /// Only Passages through this Gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub gate: Option<String>,
    /// Only Passages moving this Bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub bundle: Option<String>,
    /// Kubernetes namespace to look in; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `delivery_metrics`.
#[derive(Deserialize, JsonSchema, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct DeliveryArgs {
    /// Only this Gate's figures (then without the pipeline's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub gate: Option<String>,
    /// How far back — days (`30d`), weeks (`2w`), hours (`12h`) — 30 days if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub since: Option<String>,
    /// Kubernetes namespace to look in; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `evidence`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct BundleArgs {
    /// The Bundle's name.
    #[schemars(length(min = 1, max = 253))]
    pub bundle: String,
    /// Kubernetes namespace of the Bundle; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `diff_bundles`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    /// The Bundle's name, e.g. `shop-9f8c1a2b3c4d` (list_bundles shows them).
    #[schemars(length(min = 1, max = 253))]
    pub bundle: String,
    /// What to compare it with: a Gate's name (what it runs now) or another Bundle's;
    /// a Gate when one has the name. Leave it out for the Beacon's previous Bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = 253))]
    pub against: Option<String>,
    /// Kubernetes namespace of the Bundle; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `overview`: none.
#[derive(Deserialize, JsonSchema, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

/// Arguments of `promote`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct PromoteArgs {
    /// The Gate to cross, e.g. `staging`.
    #[schemars(length(min = 1, max = 253))]
    pub gate: String,
    /// The Bundle to move through it.
    #[schemars(length(min = 1, max = 253))]
    pub bundle: String,
    /// Kubernetes namespace of the Gate and Bundle; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `rollback`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct RollbackArgs {
    /// The Gate to roll back, e.g. `staging`.
    #[schemars(length(min = 1, max = 253))]
    pub gate: String,
    /// The Bundle to go back to: one the Gate verified before. Leave it out for the
    /// newest earlier Bundle the Gate verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = 253))]
    pub to: Option<String>,
    /// Roll back only some targets of the Gate's last rollout, to what they ran
    /// before it: `failed`, `all` (every target it reached), or names separated by
    /// commas. The Gate keeps what it holds. Not with `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = 6500))]
    pub targets: Option<String>,
    /// Kubernetes namespace of the Gate; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `abort`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct AbortArgs {
    /// The running Passage to stop.
    #[schemars(length(min = 1, max = 253))]
    pub passage: String,
    /// Kubernetes namespace of the Passage; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// Arguments of `retry_targets`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct RetryArgs {
    /// The Passage of the halted rollout, e.g. the one `rollout_targets` names.
    #[schemars(length(min = 1, max = 253))]
    pub passage: String,
    /// Kubernetes namespace of the Passage; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// The answer of `list_gates`.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
pub struct GateList {
    /// The namespace listed.
    pub namespace: String,
    /// Every Gate in it, by name, with where it is and what stands in its way.
    pub gates: Vec<GateSummary>,
}

/// The answer of `list_bundles`.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
pub struct BundleList {
    /// The namespace listed.
    pub namespace: String,
    /// Its Bundles, newest first.
    pub bundles: Vec<Bundle>,
}

/// The answer of `list_passages`.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
pub struct PassageList {
    /// The namespace listed.
    pub namespace: String,
    /// Its Passages (those matching the filters), newest first.
    pub passages: Vec<Passage>,
}

/// The answer of `audit`.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
pub struct AuditTrail {
    /// The namespace audited.
    pub namespace: String,
    /// What happened, newest first.
    pub entries: Vec<AuditEntry>,
}

/// The answer of `approvals`.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
pub struct ApprovalQueue {
    /// The namespace.
    pub namespace: String,
    /// The Bundles waiting on a person, Gates upstream first. `you` describes the
    /// authenticated caller over HTTP; without one it is empty.
    pub waiting: Vec<QueuedApproval>,
}

/// A tool result a model should read and act on rather than retry blindly: arguments
/// to correct, what was not there, what the rules refused, what the caller may not do,
/// or what could not be reached. Sent as `structuredContent` `{"error": …}` with
/// `isError: true`.
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct Problem {
    /// Which kind of answer this is.
    pub class: ProblemClass,
    /// The whole answer in one sentence.
    pub message: String,
    /// For a refusal: the stable code of the rule that said no.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<RefusalCode>,
    /// For a refusal: the action refused (`promote`, `abort`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// For something missing: its kind, name and namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<Missing>,
    /// For a caller without access: the permission they lack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<Lacking>,
}

impl Problem {
    /// A problem of `class`, in one sentence, with nothing more to say.
    pub fn new(class: ProblemClass, message: String) -> Self {
        Self {
            class,
            message,
            code: None,
            action: None,
            missing: None,
            permission: None,
        }
    }
}

/// The class of a [`Problem`].
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemClass {
    /// The arguments do not fit the tool's input schema (a field missing, unknown or
    /// of the wrong type), or a name is not one Kubernetes accepts. Nothing was asked
    /// of the cluster; correct the arguments and call again.
    InvalidArguments,
    /// The named object does not exist.
    NotFound,
    /// A rule said no; nothing was written. Asking again gets the same answer until
    /// the situation changes.
    Refused,
    /// The caller's Kubernetes RBAC does not allow this.
    Forbidden,
    /// Kubernetes or Fides could not be reached or failed; trying later may work.
    Unavailable,
}

/// What was looked for and not found.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// `Gate`, `Bundle`, `Passage` or `Beacon`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Where it was looked for.
    pub namespace: String,
}

/// A permission a caller lacks, and where: ops' [`hecate_ops::Permission`] (verb,
/// group, resource, subresource when there is one) and the namespace.
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq, Eq)]
pub struct Lacking {
    /// The permission the operation needs.
    #[serde(flatten)]
    pub permission: hecate_ops::Permission,
    /// The namespace; empty means cluster-wide.
    pub namespace: String,
}

/// Rewrites every `oneOf` of string constants (how schemars renders a documented Rust
/// enum) as one `enum`, with each value's meaning listed in the description. The
/// values are the same; `enum` is what validators and model tool-schemas handle best,
/// and the meanings stay readable.
pub fn consts_as_enums(schema: &mut serde_json::Value) {
    use serde_json::Value;
    match schema {
        Value::Object(object) => {
            let constants = object
                .get("oneOf")
                .and_then(Value::as_array)
                .and_then(|variants| {
                    variants
                        .iter()
                        .map(|v| {
                            let value = v.get("const")?.as_str()?;
                            let meaning = v.get("description").and_then(Value::as_str);
                            Some((value.to_string(), meaning.map(|m| m.replace('\n', " "))))
                        })
                        .collect::<Option<Vec<_>>>()
                });
            if let Some(constants) = constants {
                object.remove("oneOf");
                let mut description = object
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|d| d.replace('\n', " "))
                    .unwrap_or_default();
                for (value, meaning) in &constants {
                    if let Some(meaning) = meaning {
                        description.push_str(&format!("\n- {value}: {meaning}"));
                    }
                }
                object.insert("type".into(), Value::from("string"));
                object.insert(
                    "enum".into(),
                    Value::from(constants.into_iter().map(|(v, _)| v).collect::<Vec<_>>()),
                );
                if !description.is_empty() {
                    object.insert("description".into(), Value::from(description.trim_start()));
                }
            }
            for value in object.values_mut() {
                consts_as_enums(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(consts_as_enums),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn documented_constants_become_an_enum() {
        let mut schema = json!({"$defs": {"State": {
            "description": "Where a Gate is.",
            "oneOf": [
                {"const": "Ready", "description": "Something could\ncross.", "type": "string"},
                {"const": "Idle", "type": "string"},
            ],
        }}});
        consts_as_enums(&mut schema);
        assert_eq!(
            schema,
            json!({"$defs": {"State": {
                "description": "Where a Gate is.\n- Ready: Something could cross.",
                "type": "string",
                "enum": ["Ready", "Idle"],
            }}})
        );
        let mut mixed = json!({"oneOf": [{"const": "a"}, {"type": "integer"}]});
        let before = mixed.clone();
        consts_as_enums(&mut mixed);
        assert_eq!(mixed, before);
    }
}

/// Arguments of `suspend_flux`, `resume_flux` and `reconcile_flux`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct FluxObjectArgs {
    /// The Gate whose watch names the Flux object, e.g. `production`.
    #[schemars(length(min = 1, max = 253))]
    pub gate: String,
    /// The Flux object's kind, e.g. `Kustomization` or `HelmRelease` (flux_resources
    /// shows them).
    #[schemars(length(min = 1, max = 63))]
    pub kind: String,
    /// The Flux object's name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Kubernetes namespace of the Gate; defaults to the server's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub namespace: Option<String>,
}

/// The answer of `preflight`.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
pub struct PreflightList {
    /// The namespace.
    pub namespace: String,
    /// The Gate asked about.
    pub gate: String,
    /// One verdict per eligible Bundle; empty when the Gate does not gate on evidence
    /// or nothing is eligible.
    pub bundles: Vec<hecate_ops::Preflight>,
}

/// The answer of `flux_resources`.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
pub struct FluxResourceList {
    /// The namespace.
    pub namespace: String,
    /// The Gate asked about.
    pub gate: String,
    /// The Flux objects its own watch names, by kind then name.
    pub resources: Vec<hecate_ops::FluxResource>,
}
