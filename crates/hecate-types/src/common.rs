//! Types shared by several kinds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Time;
use crate::schema::{free_form, is_false, is_zero};

/// A Secret in the same namespace as the object that names it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct LocalSecretRef {
    /// Name of the Secret.
    pub name: String,
}

/// A named value that step expressions read as `vars.<name>`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Var {
    /// The name expressions use.
    pub name: String,
    /// The value, always a string.
    pub value: String,
}

/// One instruction of a Passage. A Gate's template holds them; each Passage gets a
/// copy when it is created, so editing the Gate never changes a running crossing.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// The registered step to run, e.g. `git-clone`, `set-image`, `flux-wait`.
    pub uses: String,
    /// A name for this step's output; later steps read it as `steps.<as>.<key>`.
    /// Unique within the list.
    #[serde(rename = "as", default, skip_serializing_if = "String::is_empty")]
    pub alias: String,
    /// The step's configuration. String leaves may hold `${{ expr }}` interpolations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "free_form")]
    pub with: Option<serde_json::Value>,
    /// A bare boolean expression (e.g. `always`, `failed`); when false the step is
    /// skipped.
    #[serde(rename = "if", default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_EXPRESSION_LENGTH))]
    pub condition: String,
    /// How long the step may take, as a Go duration (`90s`, `5m`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub timeout: String,
    /// A failure of this step does not fail the Passage.
    #[serde(default, skip_serializing_if = "is_false")]
    pub continue_on_error: bool,
}

/// A health check of an environment: a registered checker and its configuration.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct HealthCheck {
    /// The checker to run, e.g. `flux`.
    pub uses: String,
    /// The checker's configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "free_form")]
    pub with: Option<serde_json::Value>,
}

/// Whether a condition holds.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// Nobody can tell yet.
    Unknown,
}

/// The standard Kubernetes condition, with the validation rules the API server
/// applies to `metav1.Condition` (k8s-openapi's type carries none of them).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition's type, e.g. `Ready`.
    #[serde(rename = "type")]
    #[schemars(
        length(max = 316),
        regex(
            pattern = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
        )
    )]
    pub type_: String,
    /// Whether it holds.
    pub status: ConditionStatus,
    /// The `metadata.generation` the condition was computed from.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0))]
    pub observed_generation: i64,
    /// When `status` last changed.
    pub last_transition_time: Time,
    /// A CamelCase code for the condition's state, e.g. `WindowClosed`.
    #[schemars(
        length(min = 1, max = 1024),
        regex(pattern = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
    )]
    pub reason: String,
    /// The condition's state in words.
    #[schemars(length(max = 32768))]
    pub message: String,
}
