//! A rule saying no: a stable code and a reason in words.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::eligibility::Code;

/// Why an action was refused. Stable strings: surfaces map them to exit codes and
/// HTTP statuses, and scripts branch on them.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum RefusalCode {
    /// No actor was given; every write records who asked.
    NoActor,
    /// The Gate (or, for a poll, the Beacon) is suspended.
    Suspended,
    /// The Gate has no steps.
    NoSteps,
    /// What the Gate names — steps, verifications, health checks — cannot run (see
    /// `rules::gate::problems`).
    InvalidSteps,
    /// No target of the rollout has failed: nothing to retry (ours, DECISION 157).
    NothingFailed,
    /// The crossing is not a halted rollout: there are no failures to accept (ours,
    /// DECISION 157).
    NotHalted,
    /// The Gate's targets or waves cannot be followed (see `rules::rollout`; ours:
    /// additive, DECISION 155).
    InvalidTargets,
    /// The Gate admits no Bundles from the Bundle's Beacon.
    NotAdmitted,
    /// The Bundle is the Gate's current occupant already.
    AlreadyCurrent,
    /// The Bundle has not cleared an upstream Gate.
    UpstreamNotCleared,
    /// The Bundle needs an approval for this Gate.
    AwaitingApproval,
    /// The only approval was given by the person asking to promote.
    SelfApproved,
    /// Someone said no to the Bundle for this Gate, and the "no" stands.
    Rejected,
    /// Under the Gate's approval policy, this person's approval would not count (not
    /// named by any rule, the author, or an upstream promoter).
    NotAnApprover,
    /// A rejection must say why.
    NoReason,
    /// Only the one who rejected, or someone the Gate's policy names, may withdraw a
    /// rejection.
    MayNotWithdraw,
    /// Another Passage is crossing the Gate.
    AlreadyCrossing,
    /// A promotion window is closed.
    WindowClosed,
    /// The Passage has already finished.
    AlreadyFinished,
    /// The Gate records approvals in Fides, and the Bundle pins no image digest to
    /// record one against.
    NoImageDigest,
    /// The Gate records approvals in Fides, and Fides has no trail for the artifact.
    NoFidesTrail,
    /// Fides stored the approval as something its change gate will not count.
    ApprovalNotCounted,
    /// The Flux object is not one the Gate's own watch names (in its cluster and
    /// namespace): Hecate operates only what a Gate depends on.
    NotWatched,
    /// The Passage names a Gate its namespace does not have.
    NoGate,
    /// The Passage is not what its Gate's template makes (its steps, its vars, or the
    /// labels its Gate finds it by): a Passage runs only its Gate's own steps.
    NotGateTemplate,
    /// The Gate's template changed after the Passage was made from it: promote again.
    GateChanged,
    /// A crossing under way had its spec changed (other than an abort).
    SpecChanged,
    /// The Passage has more steps than one crossing may run (a CRD without the bound,
    /// or an older one, let it be written).
    TooManySteps,
    /// The Passage is too large to record: its spec leaves no room for its status, or
    /// its status could not be written.
    TooLarge,
    /// A rollback was asked of a Gate that holds no Bundle, or whose earlier
    /// occupants are none it could go back to (none verified, or gone).
    NothingToRollBackTo,
    /// A rollback named a Bundle the Gate never held, or one whose verification there
    /// said no: a rollback goes back only to what the Gate verified before.
    NotVerifiedHere,
}

impl RefusalCode {
    /// The code as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoActor => "NoActor",
            Self::Suspended => "Suspended",
            Self::NoSteps => "NoSteps",
            Self::InvalidSteps => "InvalidSteps",
            Self::InvalidTargets => "InvalidTargets",
            Self::NothingFailed => "NothingFailed",
            Self::NotHalted => "NotHalted",
            Self::NotAdmitted => "NotAdmitted",
            Self::AlreadyCurrent => "AlreadyCurrent",
            Self::UpstreamNotCleared => "UpstreamNotCleared",
            Self::AwaitingApproval => "AwaitingApproval",
            Self::SelfApproved => "SelfApproved",
            Self::Rejected => "Rejected",
            Self::NotAnApprover => "NotAnApprover",
            Self::NoReason => "NoReason",
            Self::MayNotWithdraw => "MayNotWithdraw",
            Self::AlreadyCrossing => "AlreadyCrossing",
            Self::WindowClosed => "WindowClosed",
            Self::AlreadyFinished => "AlreadyFinished",
            Self::NoImageDigest => "NoImageDigest",
            Self::NoFidesTrail => "NoFidesTrail",
            Self::ApprovalNotCounted => "ApprovalNotCounted",
            Self::NotWatched => "NotWatched",
            Self::NoGate => "NoGate",
            Self::NotGateTemplate => "NotGateTemplate",
            Self::GateChanged => "GateChanged",
            Self::SpecChanged => "SpecChanged",
            Self::TooManySteps => "TooManySteps",
            Self::TooLarge => "TooLarge",
            Self::NothingToRollBackTo => "NothingToRollBackTo",
            Self::NotVerifiedHere => "NotVerifiedHere",
        }
    }
}

impl fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Code> for RefusalCode {
    fn from(code: Code) -> Self {
        match code {
            Code::AlreadyCurrent => Self::AlreadyCurrent,
            Code::UpstreamNotCleared => Self::UpstreamNotCleared,
            Code::AwaitingApproval => Self::AwaitingApproval,
            Code::SelfApproved => Self::SelfApproved,
            Code::Rejected => Self::Rejected,
        }
    }
}

/// A rule's "no". On the wire `{"code": "SelfApproved", "reason": "…"}`, where a
/// surface is told a refusal before anyone asks ([`crate::model::YourCrossing`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct Refusal {
    /// The stable code.
    pub code: RefusalCode,
    /// The reason in words.
    pub reason: String,
}

impl Refusal {
    /// A refusal with this code and reason.
    pub fn new(code: RefusalCode, reason: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
        }
    }
}
