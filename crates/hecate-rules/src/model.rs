//! The answers hecate-ops gives: typed, serialisable, with a JSON Schema each, so every
//! surface renders the same value — the CLI's `-o json`, the API's bodies and the MCP
//! server's `structuredContent` are these, field for field.
//!
//! JSON keys and the strings of [`State`] and [`BlockerKind`] are stable interface.
//! Lists that are empty are omitted inside an [`Explanation`] (as in the reference) and
//! are `[]`, never `null`, at the top level of every answer.

use std::collections::BTreeMap;
use std::sync::Arc;

use hecate_types::{EvidenceRef, Health, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::rules::eligibility::Code;

mod delivery;
mod diff;
mod notice;
mod preview;
mod request;

pub use delivery::{
    ChangeFailureRate, DeliveredCrossing, Delivery, DeliveryOutcome, DeploymentFrequency,
    FailureCounts, Figures, GateDelivery, LeadTime, LeadTimeParts, PipelineDelivery, Reach,
    TimeToRestore,
};
pub use diff::{ArtifactChange, ArtifactKind, BundleDiff, BundleRef, CommitGap, DiffDirection};
pub use notice::{Notice, Notifications, NotifierSummary, SentNotice};
pub use preview::{CrossingPreview, PlannedStep};
pub use request::{
    AcceptFailuresRequest, ApproveRequest, PromoteRequest, RejectRequest, RequestProblem,
    RollbackAsked, RollbackRequest,
};

/// Fides' answers as they appear inside Hecate's ([`Evidence`], [`VerifyReport`]'s
/// sources): part of this model, so a surface names them from here.
pub use hecate_fides::model::{ChainVerdict, ChangeRequest, ChangeVerdict};

/// Someone acting, as the cluster identified them: the username and the groups a
/// TokenReview or SelfSubjectReview reported. What an approval policy counts.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Person {
    /// The username.
    pub name: String,
    /// The groups the cluster reports for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

impl From<&str> for Person {
    fn from(name: &str) -> Self {
        Self::named(name)
    }
}

impl From<&String> for Person {
    fn from(name: &String) -> Self {
        Self::named(name.as_str())
    }
}

impl From<String> for Person {
    fn from(name: String) -> Self {
        Self::named(name)
    }
}

impl Person {
    /// `name`, with no groups.
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            groups: Vec::new(),
        }
    }
}

/// How a Bundle stands against what a Gate asks of approvals: the one answer Explain's
/// blocker, promote's refusal, the approvals queue and the controller read.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalProgress {
    /// Whether the approvals let it cross (no rejection, every rule holds).
    pub satisfied: bool,
    /// Where it stands, in words: "1 of 2 from release-managers; carol approved".
    pub summary: String,
    /// Each rule that must hold and who counted toward it (`requireApproval` alone:
    /// one rule, one approval from anyone).
    pub rules: Vec<RuleProgress>,
    /// The policy's alternatives (`anyOf`), each its rules' progress: one must hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub any_of: Vec<Vec<RuleProgress>>,
    /// Approvals given that do not count, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_counted: Vec<NotCounted>,
    /// The "no" holding it, if one stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<RejectionView>,
    /// When the first approval that counts stops counting (`expireAfter`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Time>,
}

/// One rule of an approval policy, and who has counted toward it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleProgress {
    /// How many distinct people it asks for.
    pub count: usize,
    /// The groups whose members count (none, and no users: anyone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// The people who count by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<String>,
    /// Who counted, in the order they approved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approved_by: Vec<String>,
    /// Whether it holds.
    pub holds: bool,
    /// Whether it can never hold for this Bundle: it names only people, and fewer of
    /// them than it asks for may count (the policy, or the Bundle's history, leaves
    /// out the rest).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub impossible: bool,
}

/// An approval that was given and does not count.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct NotCounted {
    /// Who gave it.
    pub actor: String,
    /// Why it does not count.
    pub why: Uncounted,
}

/// Why someone's approval does not count. Stable strings.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum Uncounted {
    /// Older than the policy's `expireAfter`.
    Expired,
    /// They wrote the change (`excludeAuthor`).
    Author,
    /// They promoted the Bundle through an earlier Gate (`excludeUpstreamPromoters`).
    UpstreamPromoter,
    /// They are the one asking for the crossing: no one approves their own release.
    Promoter,
    /// No rule of the policy names them or a group of theirs.
    NotNamed,
    /// Its time is later than now: an approval counts from when it was given, and one
    /// dated ahead would never expire (DECISION 148).
    Future,
}

impl Uncounted {
    /// The reason in words, short enough for a table cell.
    pub fn words(self) -> &'static str {
        match self {
            Self::Expired => "it expired",
            Self::Author => "they wrote the change",
            Self::UpstreamPromoter => "they promoted it through an earlier Gate",
            Self::Promoter => "they are the one promoting it",
            Self::NotNamed => "no rule names them or a group of theirs",
            Self::Future => "it is dated in the future",
        }
    }

    /// The reason in words, addressed to the one it is about.
    pub fn to_you(self) -> &'static str {
        match self {
            Self::Expired => "your approval has expired",
            Self::Author => "you wrote the change",
            Self::UpstreamPromoter => "you promoted it through an earlier Gate",
            Self::Promoter => "you are the one promoting it",
            Self::NotNamed => "the Gate's policy names neither you nor a group of yours",
            Self::Future => "your approval is dated in the future",
        }
    }
}

/// A Bundle waiting on a person for a Gate: one row of the approvals queue.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct QueuedApproval {
    /// The Gate.
    pub gate: String,
    /// Where the Gate stands in the pipeline.
    pub stage: Stage,
    /// The Bundle.
    pub bundle: String,
    /// Its version for people (`rules::version`; DECISION 140).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Where its approvals stand.
    pub progress: ApprovalProgress,
    /// What the one asking could do about it.
    pub you: YourTurn,
    /// The Gate's windows hold crossings now: an approval waits for them (issue 53;
    /// not the reference's: additive, DECISION 159).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<WindowHold>,
    /// Where a crossing of the Gate goes, when it spans targets: "to eu-1 and the
    /// clusters labelled region=eu, in 2 waves: canary, then the rest" (issue 52;
    /// additive).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reach: String,
}

/// A Gate's windows holding crossings at the moment someone decides: what their
/// approval then waits for, and whether the Gate crosses by itself when they open.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct WindowHold {
    /// Why, in words, with when it lifts: `blocked by deny window "0 22 * * *" (no
    /// crossings daily 22:00 – 06:00 UTC) until Mon 7 Dec 2026 00:00 UTC`.
    pub reason: String,
    /// When crossings may start again, if within 400 days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Time>,
    /// Whether the Gate then crosses by itself (`spec.auto`): unattended, at `until`.
    pub unattended: bool,
}

/// What the one asking could do for a queued Bundle, as the Gate's policy judges them
/// (whether the cluster lets them approve at all is their rights' business).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct YourTurn {
    /// Whether an approval from them would count now.
    pub can_approve: bool,
    /// Whether they have approved it already, in a way that counts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub approved: bool,
    /// Why an approval from them would not count, when it would not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_counted: Option<Uncounted>,
    /// The same, in words addressed to them ("you promoted it through an earlier
    /// Gate").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why_not: String,
    /// Whether they may withdraw the rejection holding it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub can_withdraw: bool,
}

/// What the one asking would meet if they promoted each Bundle a Gate could take: the
/// answer of `your_crossings`, judged for them by promote's own rules, so a page can
/// say so before the click (the one who approved a Bundle may not also cross it).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct YourCrossings {
    /// The Gate.
    pub gate: String,
    /// Who was judged, as promote would record them.
    pub actor: String,
    /// Each Bundle the Gate's explanation lists as eligible, in its order.
    pub bundles: Vec<YourCrossing>,
    /// Each Bundle the Gate held (its occupant, then its history, each once) as a
    /// rollback to it would be judged (`promotion::judge_rollback`, the rules the
    /// rollback action applies): a "Roll back to this" button asks here rather than
    /// judging anything itself (ours: additive, #53).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rollbacks: Vec<YourCrossing>,
    /// Why a rollback to the target the server chooses (the newest Bundle the Gate
    /// verified before) would be refused them; absent when it would start (ours:
    /// additive, #53).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<crate::rules::refusal::Refusal>,
}

/// One Bundle of [`YourCrossings`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct YourCrossing {
    /// The Bundle.
    pub bundle: String,
    /// Why promote would refuse them this crossing now; absent when it would start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<crate::rules::refusal::Refusal>,
}

/// A "no" that holds a Bundle for a Gate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct RejectionView {
    /// Who gave it.
    pub by: String,
    /// When.
    pub at: Time,
    /// Why, in their words.
    pub reason: String,
}

/// Where a Gate is, in one word.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum State {
    /// A Passage is moving a Bundle in.
    Crossing,
    /// Something could cross now.
    Ready,
    /// Something would cross, but something stands in the way.
    Blocked,
    /// There is nothing to do.
    Idle,
    /// The latest crossing failed.
    Failed,
}

impl State {
    /// The state as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Crossing => "Crossing",
            Self::Ready => "Ready",
            Self::Blocked => "Blocked",
            Self::Idle => "Idle",
            Self::Failed => "Failed",
        }
    }
}

/// Why nothing is crossing, as a stable code: a UI picks an icon by it, a script
/// branches on it, a model reasons over it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum BlockerKind {
    /// The Gate is suspended.
    Suspended,
    /// The Gate's steps do not validate.
    InvalidSteps,
    /// The Gate has no steps.
    #[serde(rename = "NoPassageTemplate")]
    NoPassage,
    /// No admitted Beacon has produced a Bundle.
    NoBundles,
    /// A Bundle needs an approval for this Gate.
    #[serde(rename = "AwaitingApproval")]
    NotApproved,
    /// A Bundle has not cleared an upstream Gate.
    #[serde(rename = "UpstreamNotCleared")]
    Upstream,
    /// A promotion window is closed (or a freeze is on).
    WindowClosed,
    /// The latest crossing failed.
    PassageFailed,
    /// The crossing in progress is waiting on a step.
    StepWaiting,
    /// A crossing was asked for long ago and has not started: the controller that
    /// runs crossings is probably not running (not the reference's).
    NotStarted,
    /// The crossing in progress is held by the Fides change gate.
    ChangeHeld,
    /// What the Gate watches is degraded or unknown.
    Unhealthy,
    /// The Gate crosses only when asked, and nobody has asked.
    #[serde(rename = "AwaitingRequest")]
    Manual,
    /// Someone said no to a Bundle for this Gate (Hecate's addition, DECISION 137).
    Rejected,
    /// The newest crossing's verification said no (Hecate's addition, DECISION 139).
    VerificationFailed,
    /// The crossing's rollout across the Gate's targets passed a wave's failure budget
    /// and stopped until a person decides (Hecate's addition, DECISION 158).
    RolloutHalted,
}

impl BlockerKind {
    /// Every kind.
    pub const ALL: [Self; 16] = [
        Self::Suspended,
        Self::InvalidSteps,
        Self::NoPassage,
        Self::NoBundles,
        Self::NotApproved,
        Self::Upstream,
        Self::WindowClosed,
        Self::PassageFailed,
        Self::StepWaiting,
        Self::NotStarted,
        Self::ChangeHeld,
        Self::Unhealthy,
        Self::Manual,
        Self::Rejected,
        Self::VerificationFailed,
        Self::RolloutHalted,
    ];

    /// The kind as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Suspended => "Suspended",
            Self::InvalidSteps => "InvalidSteps",
            Self::NoPassage => "NoPassageTemplate",
            Self::NoBundles => "NoBundles",
            Self::NotApproved => "AwaitingApproval",
            Self::Upstream => "UpstreamNotCleared",
            Self::WindowClosed => "WindowClosed",
            Self::PassageFailed => "PassageFailed",
            Self::StepWaiting => "StepWaiting",
            Self::NotStarted => "NotStarted",
            Self::ChangeHeld => "ChangeHeld",
            Self::Unhealthy => "Unhealthy",
            Self::Manual => "AwaitingRequest",
            Self::Rejected => "Rejected",
            Self::VerificationFailed => "VerificationFailed",
            Self::RolloutHalted => "RolloutHalted",
        }
    }
}

/// One specific thing standing in a Gate's way.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct Blocker {
    /// What kind of thing.
    pub kind: BlockerKind,
    /// The specifics, in words.
    pub detail: String,
    /// What would remove it — usually the exact command — when there is one answer:
    /// `action` in words, for people and for scripts written against the reference.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fix: String,
    /// When it lifts by itself, if it will (a window opening, a freeze ending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Time>,
    /// What would remove it, as a value a surface acts on: a button, a tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Remedy>,
    /// Other ways to remove it, in the order offered, where there is more than one
    /// answer — a halted rollout is retried, or its failures accepted, or it is
    /// aborted (not the reference's: additive, DECISION 158).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<Alternative>,
}

/// A remedy, and it in words (as a blocker's `fix` says its `action`): another way to
/// remove a blocker, or what a person may do about a Gate's targets.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct Alternative {
    /// What would remove it, in words: usually the exact command.
    pub fix: String,
    /// The same, as a value a surface acts on.
    pub action: Remedy,
}

impl Blocker {
    /// A blocker in `namespace` whose `fix` is `action` in words (none: no fix).
    pub fn new(
        kind: BlockerKind,
        detail: impl Into<String>,
        action: Option<Remedy>,
        namespace: &str,
    ) -> Self {
        Self {
            kind,
            detail: detail.into(),
            fix: action
                .as_ref()
                .map(|a| a.fix(namespace))
                .unwrap_or_default(),
            until: None,
            action,
            alternatives: Vec::new(),
        }
    }

    /// The blocker with other ways to remove it besides its `action`, in `namespace`.
    pub fn or(mut self, alternatives: Vec<Remedy>, namespace: &str) -> Self {
        self.alternatives = alternatives
            .into_iter()
            .map(|action| Alternative {
                fix: action.fix(namespace),
                action,
            })
            .collect();
        self
    }
}

/// What would remove a blocker, typed: the decision ops made, for a surface to offer
/// as it offers things (the CLI prints it as the blocker's `fix`, the web UI draws a
/// button, an agent calls a tool). Tagged by `type`; the tags are stable interface.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Remedy {
    /// Start a crossing of `bundle` through `gate`.
    Promote {
        /// The Gate.
        gate: String,
        /// The Bundle.
        bundle: String,
    },
    /// Take `bundle` through the upstream Gate `gate` first.
    PromoteUpstream {
        /// The upstream Gate it has not cleared.
        gate: String,
        /// The Bundle.
        bundle: String,
    },
    /// Approve `bundle` for `gate`.
    Approve {
        /// The Gate.
        gate: String,
        /// The Bundle.
        bundle: String,
        /// Whose approval would count, where the Gate's approval policy says: the
        /// people and groups of the rules that do not hold yet. Empty: anyone who may
        /// approve.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        from: Vec<String>,
    },
    /// Withdraw the rejection holding `bundle` from `gate` — or ask whoever may.
    WithdrawRejection {
        /// The Gate.
        gate: String,
        /// The Bundle.
        bundle: String,
        /// Who may withdraw it: the one who rejected it, and the people and groups
        /// the Gate's approval policy names.
        by: Vec<String>,
    },
    /// Resume the suspended `gate` (`spec.suspend: false`).
    Resume {
        /// The Gate.
        gate: String,
    },
    /// Wait for a promotion window (the blocker's `until` says until when, if it is
    /// known), or change `spec.windows`.
    Wait,
    /// Read what happened to `passage`.
    InspectPassage {
        /// The Passage.
        passage: String,
    },
    /// Give `gate` the steps that move a Bundle in.
    AddSteps {
        /// The Gate.
        gate: String,
    },
    /// Correct `gate`'s steps.
    FixSteps {
        /// The Gate.
        gate: String,
    },
    /// Check that the admitted Beacons are discovering artifacts.
    CheckBeacons,
    /// Settle what the Fides change gate asks for; the crossing continues by itself.
    ResolveInFides,
    /// Check that hecate-controller, which starts and runs crossings, is running.
    CheckController,
    /// Roll `gate` back to the Bundle it last verified.
    Rollback {
        /// The Gate.
        gate: String,
    },
    /// Cross the failed targets of `passage`'s halted rollout again; nothing else
    /// restarts (DECISION 157).
    RetryTargets {
        /// The Passage.
        passage: String,
        /// The targets a retry crosses again.
        targets: Vec<String>,
    },
    /// Accept the failures that halted `passage`'s rollout, with a reason kept on the
    /// record, and let its later waves go on (DECISION 157).
    AcceptFailures {
        /// The Passage.
        passage: String,
        /// The failed targets an acceptance names.
        targets: Vec<String>,
    },
    /// Stop `passage`'s rollout, then roll its failed targets back to what they ran
    /// before it, those targets alone (DECISION 163).
    RollbackTargets {
        /// The Gate.
        gate: String,
        /// The Passage whose rollout halted.
        passage: String,
        /// The targets the rollback crosses back.
        targets: Vec<String>,
    },
    /// Roll the failed targets of `gate`'s finished rollout back to what they ran
    /// before it, those targets alone (DECISION 163).
    RollbackFailedTargets {
        /// The Gate.
        gate: String,
        /// The targets the rollback crosses back.
        targets: Vec<String>,
    },
    /// Stop `passage`: every target not finished ends aborted.
    Abort {
        /// The Passage.
        passage: String,
    },
}

impl Remedy {
    /// The remedy in words, with the command that performs it where there is one —
    /// the one place a remedy becomes text.
    pub fn fix(&self, namespace: &str) -> String {
        match self {
            Self::Promote { gate, bundle } => {
                format!("hecate promote {gate} --bundle {bundle} -n {namespace}")
            }
            Self::PromoteUpstream { gate, bundle } => format!(
                "take it through the upstream Gate first: hecate promote {gate} --bundle {bundle} -n {namespace}"
            ),
            Self::Approve { gate, bundle, from } => {
                let command = format!("hecate approve {bundle} --gate {gate} -n {namespace}");
                if from.is_empty() {
                    command
                } else {
                    format!("{command} (by {})", from.join(" or "))
                }
            }
            Self::WithdrawRejection { gate, bundle, by } => format!(
                "ask {} to withdraw the rejection: hecate reject {bundle} --gate {gate} --withdraw -n {namespace}",
                by.join(" or ")
            ),
            Self::Resume { gate } => format!(
                r#"kubectl -n {namespace} patch gate {gate} --type=merge -p '{{"spec":{{"suspend":false}}}}'"#
            ),
            Self::Wait => "wait for the window, or change spec.windows".into(),
            Self::InspectPassage { passage } => {
                format!("kubectl -n {namespace} describe passage {passage}")
            }
            Self::AddSteps { .. } => {
                "add spec.passage.steps: the steps that move a Bundle into this environment"
                    .into()
            }
            Self::FixSteps { .. } => "fix each field named (spec.passage.steps, spec.verify or spec.watch) and apply the Gate again".into(),
            Self::CheckBeacons => format!(
                "check that the Beacon is discovering artifacts: kubectl -n {namespace} get beacons"
            ),
            Self::ResolveInFides => "resolve what the change gate asks for in Fides; the crossing reads the verdict again and continues by itself".into(),
            Self::CheckController => "check that hecate-controller is running: kubectl get pods -A -l app.kubernetes.io/name=hecate-controller".into(),
            Self::Rollback { gate } => format!(
                "roll back to the last verified Bundle: hecate rollback {gate} -n {namespace}"
            ),
            Self::RetryTargets { passage, .. } => {
                format!("cross the failed targets again: hecate retry {passage} -n {namespace}")
            }
            Self::AcceptFailures { passage, .. } => format!(
                "accept the failures and go on: hecate accept-failures {passage} --reason <why> -n {namespace}"
            ),
            Self::RollbackTargets { gate, passage, .. } => format!(
                "stop the rollout and roll the failed targets back: hecate abort {passage} -n {namespace}, then hecate rollback {gate} --targets failed -n {namespace}"
            ),
            Self::RollbackFailedTargets { gate, .. } => format!(
                "roll the failed targets back to what they ran before the rollout: hecate rollback {gate} --targets failed -n {namespace}"
            ),
            Self::Abort { passage } => {
                format!("stop the rollout: hecate abort {passage} -n {namespace}")
            }
        }
    }
}

/// A Bundle the Gate admits that cannot cross, and why.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct Waiting {
    /// The Bundle.
    pub bundle: String,
    /// Why it cannot cross, in words.
    pub reason: String,
    /// Why it cannot cross, as a stable code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Code>,
    /// What would let it cross, when a person can help: an approval here, or a
    /// crossing of the upstream Gate it has not cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Remedy>,
    /// Where its approvals stand, when approvals (or a rejection) hold it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<ApprovalProgress>,
    /// When what holds it lifts by itself, if it will: an upstream soak's end (not the
    /// reference's: additive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Time>,
}

/// Why a Gate is where it is: the answer to "why is nothing crossing?".
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct Explanation {
    /// The Gate.
    pub gate: String,
    /// Its namespace.
    pub namespace: String,
    /// Where it is, in one word.
    pub state: State,
    /// Where it is, in one line.
    pub summary: String,
    /// What stands in the way, most actionable first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blockers: Vec<Blocker>,
    /// The Bundle in the environment now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// Bundles that could cross now, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eligible: Vec<String>,
    /// How many of `eligible` — its first ones, as it is newest first — are ahead of
    /// the current Bundle (newer than it, or all of them when the Gate holds none):
    /// the Bundles waiting to cross. The rest are older, to be rolled back to by hand
    /// (not the reference's: additive).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub ahead: usize,
    /// Bundles that cannot, newest first, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<Waiting>,
    /// The Gate's own assessment of what it watches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// The change gate's verdict on the crossing in progress, carried whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceRef>,
    /// The crossing in progress, with the times a surface needs to say how long it has
    /// waited (not the reference's: additive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossing: Option<CrossingNow>,
    /// Eligible Bundles whose last crossing of this Gate failed, newest first: crossing
    /// them again may fail the same way (not the reference's: additive).
    #[serde(
        default,
        rename = "failedBefore",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub failed_before: Vec<FailedBefore>,
    /// The Gate's promotion windows, each in words, in `spec.windows` order (not the
    /// reference's: additive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<WindowWords>,
    /// How the Bundles named above read for people, by name: their versions
    /// (`hecate_ops::rules::version`; not the reference's: additive, DECISION 140).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub versions: BTreeMap<String, String>,
    /// The commit the Gate's newest crossing pushed before it was aborted: still on the
    /// branch it pushed to, so the environment may run it until the next crossing (not
    /// the reference's: additive).
    #[serde(
        default,
        rename = "leftBehind",
        skip_serializing_if = "Option::is_none"
    )]
    pub left_behind: Option<LeftBehind>,
}

/// A commit an aborted crossing pushed, as its Passage records it: the abort stopped
/// the steps after the push, not the push.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct LeftBehind {
    /// The aborted Passage.
    pub passage: String,
    /// The Bundle it was moving.
    pub bundle: String,
    /// The branch it pushed to.
    pub branch: String,
    /// The commit it pushed.
    pub commit: String,
}

/// How a crossing ended, or that it has not: one vocabulary for the audit trail,
/// Passages and Bundles. `crossed` and `running` are the audit's words, `failed` and
/// `aborted` the Passage phases'; the audit's `refused` is a `failed` or an `aborted`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The Bundle entered the Gate.
    Crossed,
    /// A step failed; the Bundle did not enter.
    Failed,
    /// Someone stopped it; the Bundle did not enter.
    Aborted,
    /// Not over yet (pending or running).
    Running,
}

impl Outcome {
    /// The outcome of a Passage in `phase` (none: not started, so running).
    pub fn of(phase: Option<hecate_types::PassagePhase>) -> Self {
        use hecate_types::PassagePhase;
        match phase {
            Some(PassagePhase::Succeeded) => Self::Crossed,
            Some(PassagePhase::Failed) => Self::Failed,
            Some(PassagePhase::Aborted) => Self::Aborted,
            Some(PassagePhase::Pending | PassagePhase::Running) | None => Self::Running,
        }
    }

    /// The outcome as it is written on the wire, and said.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Crossed => "crossed",
            Self::Failed => "failed",
            Self::Aborted => "aborted",
            Self::Running => "running",
        }
    }
}

/// The crossing in progress: which Passage, since when, and the step it is on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrossingNow {
    /// The Passage.
    pub passage: String,
    /// The Bundle it moves.
    pub bundle: String,
    /// When the Passage was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Time>,
    /// When the controller started it; absent while it has not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// Created longer ago than the controller takes to start a crossing, and not
    /// started: the controller is probably not running.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stalled: bool,
    /// The step running now, if one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<StepNow>,
    /// Where its rollout across the Gate's targets stands, for a Gate with targets
    /// (not the reference's: additive, DECISION 158).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutNow>,
}

/// A rollout under way across a Gate's targets, from the Passage's record
/// ([`crate::rules::rollout::recorded`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutNow {
    /// `Progressing`, `Halted`, `Completed` or `Accepted`.
    pub phase: String,
    /// What the rollout does now, in the controller's words: "wave 2 (eu): eu-1
    /// crossing", "halted: canary failed at step 5 (FluxDegraded); …".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Where the Bundle is, in words: "v1.4.0 on 3 of 5 targets; eu-2 failed".
    pub occupancy: String,
    /// How many targets the Gate spans.
    pub of: usize,
    /// The targets it is on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on: Vec<String>,
    /// The targets crossing now.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crossing: Vec<String>,
    /// The targets whose crossing failed and counts, each where and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<TargetFailure>,
    /// The targets whose failure a person accepted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted: Vec<String>,
}

/// A Gate's targets and the crossing that last reached them: the answer of
/// `targets` (`hecate targets <gate>`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateTargets {
    /// The Gate.
    pub gate: String,
    /// Its namespace.
    pub namespace: String,
    /// Whether the Gate names targets (`spec.targets`); without, it is one place.
    pub spans_targets: bool,
    /// The crossing under way across its targets, else the newest that reached them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutRecord>,
    /// What a person may do about the targets now, judged by ops, in words and as a
    /// value: after a finished rollout that left targets failed, rolling them back
    /// (DECISION 163).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<Alternative>,
}

/// One crossing's rollout across a Gate's targets, from its Passage's record.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutRecord {
    /// The Passage.
    pub passage: String,
    /// The Bundle it moves.
    pub bundle: String,
    /// The Bundle's version, as people call it.
    pub version: String,
    /// Whether the crossing is under way.
    pub active: bool,
    /// Where it stands.
    pub now: RolloutNow,
    /// The wave under way or last reached, counted from 0 as the record counts it.
    pub wave: i32,
    /// Each present target's record, in the Gate's order: its wave, phase, attempt,
    /// step, revisions, health, verification and times.
    pub targets: Vec<hecate_types::TargetStatus>,
    /// Records of departed targets the record left out to stay within its bound.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub omitted_targets: i32,
    /// The crossing this one undoes, when it is a rollback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_of: Option<String>,
    /// Crossings of some of its targets since (DECISION 163) — rollbacks of some,
    /// catch-ups of targets that joined —, newest first, each with its own record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub since: Vec<RolloutRecord>,
}

impl RolloutRecord {
    /// What a crossing of some targets is, for people: a "rollback" of some of a
    /// rollout's targets, or a "catch-up" of targets that joined after it.
    pub fn kind_of_some(&self) -> &'static str {
        if self.rollback_of.is_some() {
            "rollback"
        } else {
            "catch-up"
        }
    }
}

fn is_zero_i32(n: &i32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One target's failed crossing.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetFailure {
    /// The target.
    pub target: String,
    /// The step it failed at, counted from 1; absent when it failed after its steps
    /// (its verification) or before any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// A PascalCase code: the step's reason, `ProgressDeadlineExceeded`,
    /// `VerificationFailed`, `Aborted`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// What its record says.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A step of a crossing in progress.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepNow {
    /// The step (`uses`).
    pub uses: String,
    /// Its alias (`as`), if it has one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub alias: String,
    /// When it was first invoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// How many times it has been invoked. A running step is always waiting (no engine
    /// re-invokes a failed step: spec §3.4), so each invocation was a look.
    pub attempts: i32,
}

impl StepNow {
    /// How many invocations so far, in words — `looked once`, `looked 14 times`: each
    /// was a look at what the step waits for, never a retry of a failure.
    pub fn invocations(&self) -> String {
        match self.attempts.max(1) {
            1 => "looked once".into(),
            n => format!("looked {n} times"),
        }
    }
}

/// An eligible Bundle whose last crossing of this Gate did not land.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedBefore {
    /// The Bundle.
    pub bundle: String,
    /// The Passage of that crossing.
    pub passage: String,
    /// How it ended ([`Outcome::Failed`]).
    pub outcome: Outcome,
    /// When it ended, if recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Time>,
    /// Why, in the words of what failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// A promotion window in words, and where it stands now.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WindowWords {
    /// The window and where it stands, e.g. `no crossings Sat 00:00 – Mon 00:00
    /// (Europe/London); in force now; lifts Mon 00:00`.
    pub text: String,
    /// A freeze (no crossings while it is open) rather than an allow window.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deny: bool,
    /// Whether it is open (a freeze: in force) now.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
    /// When it next opens or closes, for a surface to say how far off that is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Time>,
    /// The zone its schedule is read in, as an IANA name (`UTC` when it names none),
    /// for a surface to tell whether the viewer's differs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub zone: String,
    /// When its current opening began — or, while it is not open, when the next one
    /// begins: with `closes`, one opening a surface can say in the viewer's zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opens: Option<Time>,
    /// When that opening ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closes: Option<Time>,
}

/// Every visible Gate at a glance: what `hecate status` and the UI's front page show.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct Overview {
    /// Namespaces holding at least one visible Gate, by name.
    // Shared: a server keeps each namespace's share while it stands, and an Overview
    // points at it (docs/DECISIONS.md 136).
    pub namespaces: Vec<Arc<NamespaceOverview>>,
    /// Counts over all of them.
    pub totals: Totals,
    /// Crossings and failures per UTC day, the last 14 days, oldest first.
    pub activity: Vec<Day>,
    /// What waits on a person, most pressing first: failures, crossings that run too
    /// long, approvals and rejections to settle (Hecate's own, DECISION 141).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attention: Vec<Attention>,
}

/// Something on the Overview that waits on a person, and what would settle it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attention {
    /// What kind of thing.
    pub kind: AttentionKind,
    /// The namespace.
    pub namespace: String,
    /// The Gate.
    pub gate: String,
    /// The Bundle it is about, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// The Passage it is about, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passage: Option<String>,
    /// Since when: the failure's end, the crossing's start, or when the Bundle was
    /// emitted (an approval waits on it since then at the latest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Time>,
    /// What it is, in words: whose approval would count, how long a crossing has run
    /// against its usual time or its step's timeout, what failed.
    pub detail: String,
    /// What would settle it, as a value a surface acts on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Remedy>,
    /// When it happens by itself, if it will: a window opening on an approved Bundle
    /// (additive, DECISION 159).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<Time>,
}

/// What kind of thing waits on a person; the order is how pressing it is.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum AttentionKind {
    /// The Gate's newest crossing failed, or its verification said no.
    Failed,
    /// A crossing has run past its step's timeout, or far longer than the Gate's
    /// crossings usually take.
    Slow,
    /// A Bundle waits for an approval.
    Approval,
    /// Someone said no to a Bundle, and it waits until they withdraw it.
    Rejected,
    /// Nothing but the Gate's window holds a Bundle the Gate takes by itself: it
    /// crosses, unattended, when the window opens (`due`). Said so nobody is surprised
    /// (DECISION 159).
    Scheduled,
}

/// One namespace's Gates.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct NamespaceOverview {
    /// The namespace.
    pub namespace: String,
    /// Its Gates, upstream first (by stage, then by name).
    pub gates: Vec<GateSummary>,
    /// Its share of the overview's totals (so a total can open the list it counts).
    #[serde(default)]
    pub totals: Totals,
    /// Its recent Bundles, newest first, and how far each has come: the ten newest,
    /// and any older one a Gate runs now.
    #[serde(default)]
    pub timeline: Vec<BundleTrack>,
}

/// A Bundle and how far it has come through its namespace's pipeline: one row of the
/// timeline.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BundleTrack {
    /// The Bundle.
    pub bundle: String,
    /// Its version for people ([`crate::rules::version::of`]): its alias
    /// (`spec.alias`), else derived from its artifacts — so a Bundle made before
    /// Beacons wrote aliases still reads `v1.3.0`; empty only when nothing says one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub alias: String,
    /// The Beacon that emitted it.
    pub beacon: String,
    /// When it was emitted: the time Bundles are ordered by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emitted_at: Option<Time>,
    /// The Gates on its way — those admitting its Beacon, and any other it has a
    /// record at —, upstream first, each with where it stands there.
    pub gates: Vec<TrackStop>,
    /// The Gates that hold it now (it is their current Bundle), upstream first.
    #[serde(default)]
    pub holding: Vec<String>,
    /// Its crossings that failed (Passages of it in phase `Failed`, as the
    /// overview's `failed` total counts them).
    pub failed: usize,
}

/// Where a Bundle stands at one Gate of its way.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrackStop {
    /// The Gate.
    pub gate: String,
    /// How its latest crossing of the Gate went: `crossed` (it entered the Gate;
    /// `verification` says whether what the Gate verifies held), `failed`, `aborted`,
    /// or `running`; absent while it has not tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The Gate holds it now.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub holding: bool,
    /// When that happened: it cleared the Gate, the crossing failed, or (running)
    /// the crossing started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Time>,
    /// The Passage of that crossing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub passage: String,
    /// Why it failed, in the words of what failed; for a crossing whose verification
    /// said no, the verifier's words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// For a crossing (`outcome: crossed`) of a Gate that verifies what crossed: where
    /// its verification stands — `Verifying`, `Verified` (it cleared the Gate), or
    /// `Failed` (why in `reason`; it never clears the Gate). Absent when nothing was
    /// to be verified, or no record says (DECISION 139).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<hecate_types::VerificationPhase>,
    /// While `Verifying`: how far it has got, in words ("prometheus: 2 passes in a
    /// row, last 0.002").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub progress: String,
}

/// Where a Gate stands in its namespace's pipeline, derived from `admits[].after`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stage {
    /// 0 for a Gate fed straight from Beacons; otherwise one more than the furthest
    /// Gate it comes after.
    pub index: usize,
    /// The Gates of the namespace it comes after, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// Names in its `after` that are no Gate of the namespace: they order nothing,
    /// and no Bundle can clear them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_after: Vec<String>,
    /// It is on a cycle of `after`s (or downstream of one), so its stage is a
    /// placeholder: one after every Gate that could be ordered.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cycle: bool,
}

/// A Gate as the plain lists give it (`hecate gates`, `GET …/gates`): the object
/// itself, with its [`Stage`] beside `spec` and `status` — an additive key, so a
/// client that reads the Gate reads it as before. The lists stay by name.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct StagedGate {
    /// The Gate, as the API server has it.
    #[serde(flatten)]
    pub gate: hecate_types::Gate,
    /// Where it stands in its namespace's pipeline.
    pub stage: Stage,
}

/// One Gate at a glance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct GateSummary {
    /// The Gate.
    pub name: String,
    /// Where it stands in the pipeline; Gates come upstream first.
    pub stage: Stage,
    /// Where it is, in one word (from Explain).
    pub state: State,
    /// Where it is, in one line (from Explain).
    pub summary: String,
    /// What stands in its way (from Explain).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blockers: Vec<Blocker>,
    /// Its health; `Unknown` when it has not reported any.
    pub health: Health,
    /// What is wrong with its health, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<String>,
    /// The Bundle in the environment now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// How many Bundles could cross now (Explain's `eligible`, so it agrees with the
    /// summary), rollback candidates included.
    pub eligible: usize,
    /// How many of them are waiting to cross: ahead of the current Bundle (Explain's
    /// `ahead`), not older ones to roll back to.
    #[serde(default)]
    pub ahead: usize,
    /// The Passage crossing now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<String>,
    /// Whether the Gate is suspended.
    pub suspended: bool,
    /// Whether it crosses by itself (`spec.auto`): an approval that leaves nothing
    /// else holding a Bundle is then what starts its crossing.
    #[serde(default)]
    pub auto: bool,
    /// What it admits (`spec.admits`): the Beacons and Gates it takes Bundles from and
    /// which need an approval — what a drawing of the pipeline links it to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub admits: Vec<hecate_types::Admission>,
}

/// Counts over every visible Gate and Passage.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Totals {
    /// Gates.
    pub gates: usize,
    /// Gates reporting `Healthy`.
    pub healthy: usize,
    /// Gates reporting `Progressing`.
    pub progressing: usize,
    /// Gates reporting `Degraded`.
    pub degraded: usize,
    /// Gates reporting anything else (`Unknown`, `NotApplicable`, or nothing).
    pub unknown: usize,
    /// Suspended Gates.
    pub suspended: usize,
    /// Eligible Bundles, summed over Gates.
    pub eligible: usize,
    /// Bundles waiting to cross (each Gate's `ahead`), summed over Gates.
    #[serde(default)]
    pub ahead: usize,
    /// Passages pending or running.
    pub running: usize,
    /// Passages that failed.
    pub failed: usize,
}

/// One UTC day of activity.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct Day {
    /// The day, `YYYY-MM-DD`.
    pub date: String,
    /// Bundles that entered a Gate that day.
    pub crossed: usize,
    /// Passages that failed that day.
    pub failed: usize,
}

/// What happened, for an auditor.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuditKind {
    /// A Bundle entered a Gate.
    Crossed,
    /// A crossing was attempted and did not land (it failed, or was aborted). What
    /// makes a deployment log an audit trail.
    Refused,
    /// A crossing in progress.
    Running,
    /// A person approved a Bundle for a Gate.
    Approved,
    /// A person aborted a crossing (recorded by this implementation, not the
    /// reference's).
    Aborted,
    /// A person said no to a Bundle for a Gate (Hecate's addition, DECISION 137).
    Rejected,
    /// A person withdrew a "no" (Hecate's addition, DECISION 137).
    Withdrawn,
}

/// One thing that happened, in the terms an auditor asks about.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct AuditEntry {
    /// When.
    pub at: Time,
    /// What.
    pub kind: AuditKind,
    /// Where.
    pub gate: String,
    /// Which Bundle.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub bundle: String,
    /// The content address of what shipped: which bits, not which name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
    /// Who caused it. `controller` is an automatic Gate acting on its own.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub actor: String,
    /// The Passage that did it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub passage: String,
    /// Why, for a refusal, in the words of whatever refused.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Whether verification confirmed the crossing worked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// The compliance record: Fides trail, verdict, blockers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceRef>,
    /// For a crossing, how it ended in the words Passages and Bundles use too: a
    /// `refused` entry is `failed` or `aborted` (not the reference's: additive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// For a rollback, the crossing it undid and why (ours: additive, DECISION 153).
    #[serde(
        default,
        rename = "rollbackOf",
        skip_serializing_if = "Option::is_none"
    )]
    pub rollback_of: Option<RollbackOf>,
}

/// A crossing that undid another: a rollback, by hand or by the Gate itself
/// (`rules::rollback::of`, DECISION 153).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollbackOf {
    /// The Passage whose crossing it undid.
    pub passage: String,
    /// The Bundle that crossing brought, when its Passage is still kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub bundle: String,
    /// Why, in words: "its verification said no: …", "it failed at git-push: …", or
    /// "asked for by hand".
    pub why: String,
    /// Whether the Gate rolled back by itself (`spec.rollback.auto`).
    pub automatic: bool,
}

impl RollbackOf {
    /// One line for lists: "rollback of staging-5 (b2): its verification said no: …".
    pub fn words(&self) -> String {
        let bundle = if self.bundle.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.bundle)
        };
        format!("rollback of {}{bundle}: {}", self.passage, self.why)
    }
}

/// Everything Fides holds about one Bundle's artifact: why it was allowed, and who
/// allowed it. Never empty without saying why (`unavailable`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// The Bundle.
    pub bundle: String,
    /// Its namespace.
    pub namespace: String,
    /// The artifact the evidence is about: the Bundle's first image digest.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
    /// The Fides trail holding it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub trail: String,
    /// The Gate whose Fides configuration was used.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub gate: String,
    /// The change gate's verdict: controls, attestations, approvals, segregation of
    /// duties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<hecate_fides::model::ChangeVerdict>,
    /// The ITSM change request attested on the trail, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<hecate_fides::model::ChangeRequest>,
    /// The approvals Hecate itself recorded on the Bundle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approved_in: Vec<hecate_types::BundleApproval>,
    /// Why there is nothing to show, when there is nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unavailable: String,
    /// What verification said of each crossing of the Bundle that had something to
    /// verify, newest crossing first: the cluster's record (the Passages'
    /// `status.verification`), there whether or not Fides answers (ours: additive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verifications: Vec<CrossingVerification>,
}

/// The verification of one crossing, as its Passage records it (DECISION 139).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrossingVerification {
    /// The Gate crossed.
    pub gate: String,
    /// The crossing.
    pub passage: String,
    /// `Verifying`, `Verified` or `Failed`; the last two are final.
    pub phase: hecate_types::VerificationPhase,
    /// When verification began: when the crossing finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When it reached its final phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// Where it stands, in words: the "no" of the verification that said it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Each verification the Gate asks for, in its order: passes, failures, the last
    /// value seen, and why it stands where it does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verifiers: Vec<hecate_types::VerifierStatus>,
}

/// One trail's chain, checked.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// The Gate crossed (absent when a trail was checked directly).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub gate: String,
    /// The Passage that recorded the trail.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub passage: String,
    /// The trail.
    pub trail: String,
    /// What the check found.
    pub verdict: ChainState,
    /// Whether the chain is intact; absent when it could not be checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    /// How many attestations the chain holds.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attestations: i64,
    /// Where the chain breaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken_at: Option<i64>,
    /// Why it breaks, or why it could not be checked.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Whether an external timestamp covers the current chain head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchored: Option<bool>,
    /// When the chain was anchored (RFC 3339), if it ever was.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub anchored_at: String,
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// What checking a chain found, worst last.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema,
)]
pub enum ChainState {
    /// Intact, with attestations on it.
    Valid,
    /// Nothing is recorded: no crossing wrote a trail, or the trail is empty.
    NothingRecorded,
    /// Fides could not be asked, or would not answer: the chain may be anything.
    CouldNotCheck,
    /// The chain is broken: entries were changed, removed or reordered.
    Broken,
}

/// What a promotion started: the answer of `promote` on every surface.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct Promoted {
    /// Where.
    pub namespace: String,
    /// The Gate being crossed.
    pub gate: String,
    /// The Bundle crossing it.
    pub bundle: String,
    /// The Passage opened; it records the crossing from now on.
    pub passage: String,
    /// Who the Passage records as having asked.
    pub actor: String,
}

/// A promotion is the Passage it created (`hecate_ops::Ops::promote` answers that, and the
/// HTTP API with it, as a REST create does); this is its summary.
impl From<&hecate_types::Passage> for Promoted {
    fn from(passage: &hecate_types::Passage) -> Self {
        Self {
            namespace: passage.metadata.namespace.clone().unwrap_or_default(),
            gate: passage.spec.gate.clone(),
            bundle: passage.spec.bundle.clone(),
            passage: passage.metadata.name.clone().unwrap_or_default(),
            actor: passage.spec.actor.clone(),
        }
    }
}

/// What an approval recorded, or found recorded: the answer of `approve`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Approved {
    /// Where.
    pub namespace: String,
    /// The Bundle approved.
    pub bundle: String,
    /// The one Gate it is approved for.
    pub gate: String,
    /// Who approved: the caller, or whoever approved first (the first approval stands).
    pub approved_by: String,
    /// Whether this request recorded it (false: it was there already).
    pub recorded: bool,
    /// Where the Bundle's approvals for the Gate stand now, under an approval policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<ApprovalProgress>,
}

/// What a rejection recorded, or found standing: the answer of `reject`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rejected {
    /// Where.
    pub namespace: String,
    /// The Bundle held.
    pub bundle: String,
    /// The Gate it is held from.
    pub gate: String,
    /// Who rejected it: the caller.
    pub rejected_by: String,
    /// Why, as recorded (the first reason stands when the caller had rejected it
    /// already).
    pub reason: String,
    /// Whether this request recorded it (false: the caller's "no" stood already).
    pub recorded: bool,
    /// What Fides made of it, when the Gate records evidence there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fides: Option<FidesRecord>,
}

/// A record made in Fides beside the cluster's: the trail it went on, or why it did
/// not (the cluster's record stands either way).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct FidesRecord {
    /// The trail it was recorded on; empty when it was not.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub trail: String,
    /// Why it was not recorded; empty when it was.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub problem: String,
}

impl FidesRecord {
    /// Nothing was recorded in Fides, for this reason.
    pub fn not_recorded(problem: impl Into<String>) -> Self {
        Self {
            trail: String::new(),
            problem: problem.into(),
        }
    }
}

/// What a withdrawal did: the answer of `withdraw_rejection`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Withdrawn {
    /// Where.
    pub namespace: String,
    /// The Bundle.
    pub bundle: String,
    /// The Gate.
    pub gate: String,
    /// Who withdrew: the caller.
    pub withdrawn_by: String,
    /// Whose rejections this request withdrew (none: nothing stood).
    pub rejections_of: Vec<String>,
    /// What Fides made of it, when the Gate records evidence there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fides: Option<FidesRecord>,
}

/// What an abort asked for: the answer of `abort`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Aborted {
    /// Where.
    pub namespace: String,
    /// The Passage asked to stop.
    pub passage: String,
    /// The Gate it was crossing.
    pub gate: String,
    /// The Bundle it was moving.
    pub bundle: String,
    /// Always true: the stop was requested (now or before).
    pub aborted: bool,
    /// Who asked it to stop, as the Passage records it (`hecate.dev/aborted-by`):
    /// for a Passage aborted before, whoever did that first. Absent when the record
    /// does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted_by: Option<String>,
}

/// What a person asked of a rollout: the answer of `retry` and `accept_failures`.
/// The controller carries it out at its next look, and the rollout's record says so.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutAsked {
    /// Where.
    pub namespace: String,
    /// The Passage of the rollout.
    pub passage: String,
    /// The Gate it crosses.
    pub gate: String,
    /// `retry` or `accept`.
    pub asked: String,
    /// Who asked.
    pub by: String,
}

/// What a poll asked for: the answer of `poll`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Polled {
    /// Where.
    pub namespace: String,
    /// The Beacon asked to look.
    pub beacon: String,
    /// The token written to `reconcile.fluxcd.io/requestedAt`; the Beacon echoes it in
    /// `status.lastHandledReconcileAt` once it has looked.
    pub requested_at: String,
}

/// Would the evidence gate let a Bundle through: the answer of `preflight`, one per
/// eligible Bundle, asked of Fides before anyone promotes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct Preflight {
    /// The eligible Bundle.
    pub bundle: String,
    /// Whether every applicable policy is met. False whenever the answer is not known.
    pub compliant: bool,
    /// The attestation types applicable policies miss, sorted, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The applicable policies that miss something, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<String>,
    /// Why the verdict is not known (then `compliant` is false); absent when it is.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unknown: String,
}

/// A Flux object a Gate depends on, as its status stands: the answer of
/// `flux_resources`, one per object the Gate's own watch names.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FluxResource {
    /// Its kind, e.g. `Kustomization`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// Whether `spec.suspend` is set: Flux leaves it alone until it is resumed.
    pub suspended: bool,
    /// What its status says (a suspended object is `Unknown`).
    pub health: Health,
    /// Why it is not `Healthy`, or why it could not be judged.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The revision it reports as applied.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub revision: String,
    /// The last reconcile request Flux handled (`status.lastHandledReconcileAt`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_handled: String,
    /// Whether the object is absent from the cluster (not the same as unhealthy).
    pub missing: bool,
    /// The connected cluster it is in — its Secret's name, `:key` where the watch names
    /// one — or empty for the Gate's own. A remote object is shown as the controller
    /// last assessed it (the Gate's health record: people's credentials do not reach
    /// that cluster) and is not operated from here.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster: String,
    /// Whether Hecate may suspend, resume or reconcile it from here, as ops judges an
    /// operation's target: it is in the Gate's own namespace on the Gate's own
    /// cluster, and there (ours, additive; said only when true).
    #[serde(default, skip_serializing_if = "is_false")]
    pub operable: bool,
}

/// What suspending or resuming a Flux object did: the answer of `flux suspend` and
/// `flux resume`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FluxSuspended {
    /// Where.
    pub namespace: String,
    /// The Gate that depends on it.
    pub gate: String,
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Whether it is suspended now.
    pub suspended: bool,
    /// Who asked.
    pub by: String,
}

/// What a reconcile request wrote: the answer of `flux reconcile`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FluxReconciled {
    /// Where.
    pub namespace: String,
    /// The Gate that depends on it.
    pub gate: String,
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// The value written to `reconcile.fluxcd.io/requestedAt` (RFC 3339, UTC); Flux
    /// echoes it in `status.lastHandledReconcileAt` once it has reconciled.
    pub requested_at: String,
}

/// What a rollback started: the answer of `rollback` on every surface — a promotion's,
/// and the crossing it undoes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolledBack {
    /// Where.
    pub namespace: String,
    /// The Gate rolled back.
    pub gate: String,
    /// The Bundle crossing it again.
    pub bundle: String,
    /// The Passage opened; it records the crossing from now on.
    pub passage: String,
    /// Who the Passage records as having asked.
    pub actor: String,
    /// The Passage whose crossing it undoes.
    pub rollback_of: String,
    /// The targets it crosses back, when not the whole Gate (DECISION 163).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
}

/// A rollback is the Passage it created (`hecate_ops::Ops::rollback` answers that, and the
/// HTTP API with it); this is its summary.
impl From<&hecate_types::Passage> for RolledBack {
    fn from(passage: &hecate_types::Passage) -> Self {
        let promoted = Promoted::from(passage);
        Self {
            namespace: promoted.namespace,
            gate: promoted.gate,
            bundle: promoted.bundle,
            passage: promoted.passage,
            actor: promoted.actor,
            rollback_of: crate::rules::rollback::rollback_of(passage)
                .unwrap_or_default()
                .to_string(),
            targets: passage.spec.targets.clone(),
        }
    }
}
