//! What people are told (issue 54, DECISION 166): a notice is one thing that happened
//! to a release, or one thing that waits on a person, judged in
//! [`crate::rules::notice`] from the records Explain reads and in Explain's words.

use hecate_types::{NoticeKind, NoticeOutcome, Severity, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Remedy;

/// One notice, as every destination is given it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Notice {
    /// Stable across restarts: the same notice has the same key, and a destination is
    /// sent it at least once under it.
    pub key: String,
    /// What it is about.
    pub kind: NoticeKind,
    /// How severe it is.
    pub severity: Severity,
    /// The namespace.
    pub namespace: String,
    /// The Gate.
    pub gate: String,
    /// The Bundle, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// The Bundle's version for people ([`crate::rules::version::of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The Passage, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passage: Option<String>,
    /// The commit the Bundle pins, if it pins one: what a GitHub deployment deploys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Who acted: the crossing's actor (`controller` when the Gate acted by itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// When it happened; absent for what holds now (an approval wanted, a crossing
    /// running long), which is told while it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Time>,
    /// What happened, in one line, in Explain's words.
    pub summary: String,
    /// What settles it, as a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Remedy>,
    /// What settles it, in words with its command ([`Remedy::fix`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// One notice a Notifier sent or is sending: `hecate notifications`' row.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SentNotice {
    /// The Notifier's namespace.
    pub namespace: String,
    /// The Notifier.
    pub notifier: String,
    /// Where it sends (`slack`, `msteams`, `generic`, `generic-hmac`, `github`).
    pub destination: String,
    /// The notice's kind.
    pub kind: NoticeKind,
    /// The notice's namespace (another than the Notifier's for a platform's Notifier).
    pub about_namespace: String,
    /// The notice's Gate.
    pub gate: String,
    /// The notice's Passage, if one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub passage: String,
    /// What it said.
    pub summary: String,
    /// What became of it.
    pub outcome: NoticeOutcome,
    /// How many times it was tried.
    pub attempts: i32,
    /// When it happened, or was first seen.
    pub at: Time,
    /// When it was last tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempt: Option<Time>,
    /// Why the last try failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub error: String,
}

/// Who is told about a namespace's releases, and what was sent: `hecate
/// notifications`, and the Gate page's "who is told".
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Notifications {
    /// The namespace.
    pub namespace: String,
    /// The Gate asked about, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// Its Notifiers (those that hear the Gate asked about, if one was), by name.
    pub notifiers: Vec<NotifierSummary>,
    /// What they sent or are sending, newest first.
    pub sent: Vec<SentNotice>,
}

/// One Notifier, in a line.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotifierSummary {
    /// Its name.
    pub name: String,
    /// Where it sends.
    pub destination: String,
    /// Its `Ready` condition: absent until the controller has looked at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// The condition's reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The condition's message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// What it hears, in words: "every Gate, every kind, errors only".
    pub hears: String,
    /// It sends nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspended: bool,
}
