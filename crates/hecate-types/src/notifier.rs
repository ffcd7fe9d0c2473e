//! The Notifier kind: who is told what happens to a namespace's releases (issue 54,
//! DECISION 166).
//!
//! One object says both where notices go (Flux's `Provider`: `type`, `address`,
//! `channel`, `secretRef`) and which go there (Flux's `Alert`: `eventSeverity`, the
//! Gates, the kinds). Its status is the record of what was sent: the controller reads
//! it back after a restart, so a notice is neither lost nor sent twice with one key.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Condition, LocalSecretRef};
use crate::schema::{is_false, is_zero};

/// How many deliveries a Notifier's status keeps, newest first.
pub const DELIVERIES_KEPT: usize = 100;
/// How many crossings' threads (a Slack message, a GitHub deployment) a Notifier's
/// status keeps, newest first.
pub const THREADS_KEPT: usize = 50;

/// Where a namespace's notices go, and which.
// Each printcolumn(...) repeats the same keys, which clippy reads as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "hecate.dev",
    version = "v1alpha1",
    kind = "Notifier",
    namespaced,
    status = "NotifierStatus",
    shortname = "ntf",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Notifier tells people what happens to the releases of its namespace: an \
           approval wanted, a crossing failed, a rollback — on Slack, Microsoft Teams, \
           GitHub Deployments or a signed webhook.",
    printcolumn(name = "Type", type_ = "string", json_path = ".spec.type"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(
        name = "Status",
        type_ = "string",
        priority = 1,
        json_path = r#".status.conditions[?(@.type=="Ready")].message"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct NotifierSpec {
    /// Where notices go, as Flux names its providers.
    #[serde(rename = "type")]
    pub type_: NotifierType,
    /// The URL notices are sent to: the incoming webhook (`slack`, `msteams`,
    /// `generic`, `generic-hmac`), or the API of `github` (default
    /// `https://api.github.com`). A Secret's `address` overrides it; a webhook URL is
    /// itself a credential, so prefer the Secret.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub address: String,
    /// A Secret in this namespace labelled `hecate.dev/usable=true`: `address` (the
    /// URL), `token` (Slack's bot token, GitHub's token, the HMAC key of
    /// `generic-hmac`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalSecretRef>,
    /// Slack with a bot token: the channel a crossing's message is posted in (and
    /// updated as it moves, its notices in the thread).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub channel: String,
    /// `github`: the repository deployments are made in, `owner/name`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repository: String,
    /// The least severity sent: `info` (everything) or `error` (what went wrong).
    #[serde(default)]
    pub event_severity: Severity,
    /// The kinds of notice sent; empty sends every kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<NoticeKind>,
    /// The Gates whose notices are sent, by name; empty sends every Gate's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<String>,
    /// Announce an approval again when it still waits this long after the last time
    /// (a Go duration, e.g. `4h`); empty announces it once.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reminder: String,
    /// Hear every namespace, not only this one: honoured only in the controller's own
    /// namespace, where a platform team keeps its Notifiers.
    #[serde(default, skip_serializing_if = "is_false")]
    pub all_namespaces: bool,
    /// Send nothing; notices that happen meanwhile are not sent later.
    #[serde(default, skip_serializing_if = "is_false")]
    pub suspend: bool,
}

/// Where a Notifier sends, by Flux's names where Flux has one.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum NotifierType {
    /// A Slack incoming webhook, or with a bot token and a channel, one message per
    /// crossing updated as it moves.
    #[default]
    #[serde(rename = "slack")]
    Slack,
    /// A Microsoft Teams workflow webhook, with an Adaptive Card.
    #[serde(rename = "msteams")]
    MsTeams,
    /// A webhook given the notice as JSON.
    #[serde(rename = "generic")]
    Generic,
    /// A webhook given the notice as JSON, signed with HMAC-SHA256 over the body
    /// (`X-Signature: sha256=<hex>`), as Flux's generic-hmac does.
    #[serde(rename = "generic-hmac")]
    GenericHmac,
    /// GitHub Deployments: one deployment per crossing, environment = the Gate, its
    /// statuses following the crossing.
    #[serde(rename = "github")]
    GitHub,
}

/// How severe a notice is, in Flux's words.
#[derive(
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    JsonSchema,
)]
pub enum Severity {
    /// Something happened.
    #[default]
    #[serde(rename = "info")]
    Info,
    /// Something went wrong or waits on someone for it.
    #[serde(rename = "error")]
    Error,
}

/// What a notice is about: each is judged in hecate-ops from the records.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
pub enum NoticeKind {
    /// A Bundle waits for an approval; says whose would count.
    ApprovalWanted,
    /// Someone said no to a Bundle; says who may withdraw it.
    Rejected,
    /// A crossing started (a promotion, a rollback, a catch-up).
    CrossingStarted,
    /// A Bundle crossed.
    Crossed,
    /// A crossing failed; says the step and why.
    CrossingFailed,
    /// A crossing was aborted.
    CrossingAborted,
    /// The verification of a crossing said no.
    VerificationFailed,
    /// A Gate went back to an earlier Bundle, by hand or by itself.
    RolledBack,
    /// A crossing runs far longer than usual, or past its step's timeout.
    Stuck,
    /// A rollout across clusters stopped at its failure budget.
    RolloutHalted,
    /// A Bundle the Gate takes by itself waits only for its window.
    WaitingForWindow,
}

impl NoticeKind {
    /// Every kind, in the order above.
    pub const ALL: [Self; 11] = [
        Self::ApprovalWanted,
        Self::Rejected,
        Self::CrossingStarted,
        Self::Crossed,
        Self::CrossingFailed,
        Self::CrossingAborted,
        Self::VerificationFailed,
        Self::RolledBack,
        Self::Stuck,
        Self::RolloutHalted,
        Self::WaitingForWindow,
    ];

    /// The kind as written in `spec.events` and sent in bodies.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApprovalWanted => "ApprovalWanted",
            Self::Rejected => "Rejected",
            Self::CrossingStarted => "CrossingStarted",
            Self::Crossed => "Crossed",
            Self::CrossingFailed => "CrossingFailed",
            Self::CrossingAborted => "CrossingAborted",
            Self::VerificationFailed => "VerificationFailed",
            Self::RolledBack => "RolledBack",
            Self::Stuck => "Stuck",
            Self::RolloutHalted => "RolloutHalted",
            Self::WaitingForWindow => "WaitingForWindow",
        }
    }

    /// The kind as a heading people read: "Approval wanted".
    pub fn title(self) -> &'static str {
        match self {
            Self::ApprovalWanted => "Approval wanted",
            Self::Rejected => "Rejected",
            Self::CrossingStarted => "Crossing started",
            Self::Crossed => "Crossed",
            Self::CrossingFailed => "Crossing failed",
            Self::CrossingAborted => "Crossing aborted",
            Self::VerificationFailed => "Verification failed",
            Self::RolledBack => "Rolled back",
            Self::Stuck => "Running long",
            Self::RolloutHalted => "Rollout halted",
            Self::WaitingForWindow => "Waiting for its window",
        }
    }

    /// How severe a notice of this kind is.
    pub fn severity(self) -> Severity {
        match self {
            Self::ApprovalWanted
            | Self::Rejected
            | Self::CrossingFailed
            | Self::VerificationFailed
            | Self::RolledBack
            | Self::Stuck
            | Self::RolloutHalted => Severity::Error,
            Self::CrossingStarted
            | Self::Crossed
            | Self::CrossingAborted
            | Self::WaitingForWindow => Severity::Info,
        }
    }
}

/// What a Notifier sent, and whether it is still trying.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotifierStatus {
    /// The generation this status reflects.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// `Ready`: whether the last delivery went through, or why not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The notices sent or being sent, newest first: at most
    /// [`DELIVERIES_KEPT`], and only while they matter (a day).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deliveries: Vec<NoticeRecord>,
    /// A crossing's message or deployment, updated as it moves: at most
    /// [`THREADS_KEPT`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<NoticeThread>,
}

/// One notice and what became of it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NoticeRecord {
    /// The idempotency key: the same notice has the same key after a restart, and is
    /// sent with it (`X-Hecate-Delivery`).
    pub key: String,
    /// The kind of notice.
    pub kind: NoticeKind,
    /// Its namespace.
    pub namespace: String,
    /// Its Gate.
    pub gate: String,
    /// Its Passage, if one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub passage: String,
    /// What it said, in one line.
    pub summary: String,
    /// When what it is about happened, or was first seen.
    pub at: Time,
    /// `Sent`, `Retrying` or `Failed`.
    pub outcome: NoticeOutcome,
    /// How many times it was tried.
    pub attempts: i32,
    /// When it was last tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempt: Option<Time>,
    /// When it is tried next, while `Retrying`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt: Option<Time>,
    /// Why the last try failed (never a credential).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub error: String,
}

/// What became of a notice.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum NoticeOutcome {
    /// It was sent.
    Sent,
    /// It failed and will be tried again.
    #[default]
    Retrying,
    /// It failed too often, or for too long, and was given up.
    Failed,
}

impl NoticeOutcome {
    /// The outcome as written in the status.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sent => "Sent",
            Self::Retrying => "Retrying",
            Self::Failed => "Failed",
        }
    }
}

/// The message (Slack) or deployment (GitHub) a crossing's notices update.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NoticeThread {
    /// The crossing's namespace.
    pub namespace: String,
    /// The crossing.
    pub passage: String,
    /// What the destination calls it: Slack's message `ts`, GitHub's deployment id.
    pub id: String,
    /// Slack: the channel the message is in, as Slack answered.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub channel: String,
}
