//! Passage: one attempt to move one Bundle through one Gate, kept as a record.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::{free_form, is_false, is_zero};
use crate::{EvidenceRef, HealthCheck, RolloutStatus, Step, Time, Var};

/// Which Bundle crosses which Gate, with a copy of the Gate's steps taken when the
/// Passage was created. Only `abort` may change afterwards.
// Each printcolumn(...) repeats the same keys, which clippy reads as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "hecate.dev",
    version = "v1alpha1",
    kind = "Passage",
    namespaced,
    status = "PassageStatus",
    shortname = "psg",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Passage is one attempt to move one Bundle through one Gate. It runs the Gate's \
           steps in order and stays behind afterwards as the record of what happened.",
    // Beyond the reference's CRD (additive): a Gate's Passages are listed with a field
    // selector instead of every Passage of the namespace (DECISIONS 42).
    selectable = ".spec.gate",
    selectable = ".spec.bundle",
    printcolumn(name = "Gate", type_ = "string", json_path = ".spec.gate"),
    printcolumn(name = "Bundle", type_ = "string", json_path = ".spec.bundle"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct PassageSpec {
    /// The Gate being crossed.
    pub gate: String,
    /// The Bundle being moved.
    pub bundle: String,
    /// The Gate's steps as they were when this Passage was created.
    #[schemars(length(min = 1, max = crate::limits::MAX_STEPS))]
    pub steps: Vec<Step>,
    /// The Gate's vars as they were when this Passage was created.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vars: Vec<Var>,
    /// Who asked: a user as the cluster identified them, or `controller` for an
    /// automatic crossing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub actor: String,
    /// Set to cancel the crossing.
    #[serde(default, skip_serializing_if = "is_false")]
    pub abort: bool,
    /// What people asked of the rollout under way, when the Gate spans targets:
    /// retries of its failed targets, and failures accepted so it goes on. Each entry
    /// is asked once, in the asker's name, and carried out once by the controller
    /// (ours, additive: DECISION 157).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<crate::RolloutRequests>,
    /// Which of the Gate's targets this crossing reaches, when not every one: a
    /// rollback of some targets, or a catch-up of a target that joined after the
    /// Gate's last rollout. Empty: every target the Gate spans. A crossing of some
    /// targets never changes what the Gate holds (ours, additive: DECISION 163).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_TARGETS))]
    pub targets: Vec<String>,
}

impl PassageSpec {
    /// Whether this crossing reaches only some of the Gate's targets (DECISION 163).
    pub fn is_partial(&self) -> bool {
        !self.targets.is_empty()
    }
}

impl PassageSpec {
    /// The crossing this spec asks for, as a digest: everything but what people may
    /// ask of it under way (`abort`, `rollout`). A rollout's record keeps it, so a
    /// request changes the spec without changing the crossing.
    pub fn crossing_digest(&self) -> String {
        use sha2::{Digest as _, Sha256};
        let crossing = Self {
            abort: false,
            rollout: None,
            ..self.clone()
        };
        let json = serde_json::to_vec(&crossing).unwrap_or_default();
        hex::encode(Sha256::digest(&json))
    }
}

/// Where a Passage is in its life.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum PassagePhase {
    /// Created, not yet started.
    #[default]
    Pending,
    /// Running its steps.
    Running,
    /// Crossed.
    Succeeded,
    /// A step failed.
    Failed,
    /// Cancelled through `spec.abort`.
    Aborted,
}

impl PassagePhase {
    /// Every phase, in lifecycle order.
    pub const ALL: [Self; 5] = [
        Self::Pending,
        Self::Running,
        Self::Succeeded,
        Self::Failed,
        Self::Aborted,
    ];

    /// Whether the Passage is over: `Succeeded`, `Failed` or `Aborted`.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Aborted)
    }

    /// The phase as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Running => "Running",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Aborted => "Aborted",
        }
    }
}

/// How far a Passage has got. Written by the controller.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PassageStatus {
    /// The `metadata.generation` last advanced.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// The overall phase; absent reads as `Pending` (see [`PassageStatus::phase`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Pending"))]
    pub phase: Option<PassagePhase>,
    /// What is happening or what happened, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// One entry per step, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepStatus>,
    /// The index of the step in progress, or of the first step that failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub current_step: i32,
    /// When the first step started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When the Passage ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// Health checks the steps asked the Gate to adopt after success.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watch: Vec<HealthCheck>,
    /// The OpenTelemetry trace of this crossing.
    #[serde(rename = "traceID", default, skip_serializing_if = "String::is_empty")]
    pub trace_id: String,
    /// The compliance record of this crossing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceRef>,
    /// Whether the crossing, once it succeeded, achieved its aim: the Gate's
    /// verifications and how far each has got. Written by the Gate's reconcile; Hecate's
    /// own addition (DECISION 139).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationStatus>,
    /// Where a Gate with `spec.targets` stands across them: each target's crossing, and
    /// whether the rollout is progressing, halted, or finished within its budget.
    /// Hecate's own addition (DECISION 151).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutStatus>,
}

/// Where the verification of a successful crossing stands.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerificationStatus {
    /// Verifying until every verification has passed (`Verified`), one has said no
    /// (`Failed`), or a newer crossing of the Gate began first (`Superseded`); all
    /// three are final.
    pub phase: VerificationPhase,
    /// When verification began: when the crossing finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When it reached its final phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// Where it stands, in words: the "no" of the verification that said it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// One entry per `spec.verify[]` of the Gate, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_VERIFICATIONS))]
    pub verifiers: Vec<VerifierStatus>,
}

/// How far one verification has got.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifierStatus {
    /// The verifier, as `spec.verify[].uses` names it.
    pub uses: String,
    /// `Verifying`, or its final answer.
    pub phase: VerificationPhase,
    /// Passing looks in a row.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub passes: i32,
    /// Failing looks so far.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failures: i32,
    /// Looks that could not judge in a row (the server down, no data): never a pass.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inconclusive: i32,
    /// What the last look saw, e.g. a query's value or a response's status.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_value: String,
    /// When it last looked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_look_at: Option<Time>,
    /// When it looks next; for a soak, the instant the soak ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_look_at: Option<Time>,
    /// Why it stands where it does, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Each time its clock started again (a soak interrupted by the Gate's health),
    /// oldest first; the newest ten are kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restarts: Vec<VerificationRestart>,
}

/// A verification's clock started again: when the interruption began, and why.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct VerificationRestart {
    /// When the interruption began (the Gate's health turned, for a soak).
    pub at: Time,
    /// What interrupted it, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// Where a verification stands.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum VerificationPhase {
    /// Not decided yet.
    Verifying,
    /// Passed: the crossing achieved its aim.
    Verified,
    /// Said no: final for this crossing.
    Failed,
    /// Cut short, undecided, by a newer crossing of the Gate: final, and neither a
    /// pass nor a no — what it verified no longer runs alone (DECISION 150).
    Superseded,
}

impl VerificationPhase {
    /// The phase as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Verifying => "Verifying",
            Self::Verified => "Verified",
            Self::Failed => "Failed",
            Self::Superseded => "Superseded",
        }
    }

    /// Whether the phase is final.
    pub fn is_final(self) -> bool {
        !matches!(self, Self::Verifying)
    }
}

impl PassageStatus {
    /// The phase, reading an absent one as `Pending` (nobody has reconciled it yet).
    pub fn phase(&self) -> PassagePhase {
        self.phase.unwrap_or_default()
    }
}

impl Passage {
    /// The phase, reading an absent status or phase as `Pending`.
    pub fn phase(&self) -> PassagePhase {
        self.status
            .as_ref()
            .map(PassageStatus::phase)
            .unwrap_or_default()
    }

    /// Whether this Passage is over. One that is not is the Gate's active crossing.
    pub fn is_terminal(&self) -> bool {
        self.phase().is_terminal()
    }
}

/// Where one step is.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum StepPhase {
    /// Not started.
    #[default]
    Pending,
    /// Started, not finished (possibly waiting on something).
    Running,
    /// Done.
    Succeeded,
    /// Failed; `reason` says how.
    Failed,
    /// Not run, because its condition was false or the Passage had already failed.
    Skipped,
    /// Cancelled with the Passage.
    Aborted,
}

impl StepPhase {
    /// Whether the step is over: `Succeeded`, `Failed`, `Skipped` or `Aborted`.
    pub fn is_terminal(self) -> bool {
        !matches!(self, Self::Pending | Self::Running)
    }

    /// The phase as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Running => "Running",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Skipped => "Skipped",
            Self::Aborted => "Aborted",
        }
    }
}

/// The outcome of one step.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepStatus {
    /// The step that ran.
    pub uses: String,
    /// The step's alias.
    #[serde(rename = "as", default, skip_serializing_if = "String::is_empty")]
    pub alias: String,
    /// Where it is.
    pub phase: StepPhase,
    /// A PascalCase code for a failure, e.g. `GitRejected`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// What it is doing or did, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The step's output, kept even when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "free_form")]
    pub output: Option<serde_json::Value>,
    /// When it was first invoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// How many times it was invoked (a waiting step counts each poll).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: i32,
    /// What it said, oldest first: each message as it gave it, a message said again
    /// at once counted rather than repeated; the newest few (not the reference's:
    /// additive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<StepLogLine>,
}

/// One thing a step said, when it first said it (`StepStatus.log`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepLogLine {
    /// When it first said it.
    pub at: Time,
    /// What it said.
    pub text: String,
    /// How many more times it said the same right after, each time it was asked.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repeated: u32,
}
