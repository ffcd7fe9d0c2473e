//! The shapes Fides exchanges. Unknown fields are ignored, absent or `null` lists are
//! empty, missing scalars take their defaults: Fides servers of several versions must
//! all decode.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// `null` or absent as empty.
fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// The answer to "is this trail's hash chain intact?" (verify-chain).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ChainVerdict {
    /// Whether every entry links to the one before and hashes to what is stored.
    #[serde(default)]
    pub valid: bool,
    /// How many chained entries there are (when valid) or rows (when broken).
    #[serde(default)]
    pub count: i64,
    /// The 0-based entry where the chain breaks; -1 when it does not.
    #[serde(default)]
    pub broken_at: i64,
    /// Why it breaks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The external timestamp anchoring the chain head, if it was ever anchored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_anchor: Option<ExternalAnchor>,
}

/// An RFC 3161 timestamp over a chain head.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ExternalAnchor {
    /// Whether an anchor exists.
    #[serde(default)]
    pub anchored: bool,
    /// Whether it still covers the current head (false when the chain grew or was
    /// rewritten, or the token does not verify).
    #[serde(default)]
    pub head_matches: bool,
    /// The timestamp authority.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tsa_url: String,
    /// When it was anchored (RFC 3339).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub anchored_at: String,
}

/// An environment's policy verdict on a trail (policy-check).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct PolicyCheck {
    /// Whether every applicable policy is satisfied.
    #[serde(default)]
    pub compliant: bool,
    /// The trail judged.
    #[serde(default)]
    pub trail_id: String,
    /// One result per policy.
    #[serde(default, deserialize_with = "nullable")]
    pub results: Vec<PolicyResult>,
}

/// One policy's verdict.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct PolicyResult {
    /// The policy's name.
    #[serde(default)]
    pub policy: String,
    /// Whether it applies to this trail.
    #[serde(default)]
    pub applies: bool,
    /// Attestation types it needs and the trail lacks.
    #[serde(default, deserialize_with = "nullable")]
    pub missing: Vec<String>,
}

impl PolicyCheck {
    /// The applicable policies that are not met: `"<policy> (missing <types>)"`.
    pub fn unmet(&self) -> Vec<String> {
        self.results
            .iter()
            .filter(|r| r.applies && !r.missing.is_empty())
            .map(|r| format!("{} (missing {})", r.policy, r.missing.join(", ")))
            .collect()
    }
}

/// A control of the change gate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Control {
    /// Its key, e.g. `CC7.2`.
    #[serde(default)]
    pub control: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Why it failed or is missing.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reasons: Vec<String>,
    /// The reasons a waiver covers.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub waived_reasons: Vec<String>,
    /// The waiver's reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Who approved the waiver.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub approved_by: String,
    /// When the waiver expires (RFC 3339).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub expires_at: String,
}

impl Control {
    /// `"<control> <name> (<reasons>)"`.
    pub fn describe(&self) -> String {
        let label = if self.name.is_empty() {
            self.control.clone()
        } else {
            format!("{} {}", self.control, self.name)
        };
        let reasons = if self.reasons.is_empty() {
            &self.waived_reasons
        } else {
            &self.reasons
        };
        if reasons.is_empty() {
            label
        } else {
            format!("{label} ({})", reasons.join(", "))
        }
    }
}

/// Attestation counts on a trail.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct AttestationCounts {
    /// All attestations.
    #[serde(default)]
    pub total: i64,
    /// Those that are not compliant.
    #[serde(default)]
    pub non_compliant: i64,
}

/// Who approved and deployed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Approvals {
    /// Approvals of either role.
    #[serde(default)]
    pub count: i64,
    /// Those made by people (kind `session`).
    #[serde(default)]
    pub human_approvers: i64,
    /// Whether at least two people approved.
    #[serde(default)]
    pub four_eyes: bool,
    /// The approvers.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub approvers: Vec<String>,
    /// The deployers.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub deployers: Vec<String>,
}

/// Fides' segregation-of-duties finding.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct SegregationOfDuties {
    /// Who committed the change.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub committer: String,
    /// Who approved.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub approvers: Vec<String>,
    /// Who deployed.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub deployers: Vec<String>,
    /// Whether no one played two roles.
    #[serde(default)]
    pub compliant: bool,
    /// What collided.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub violations: Vec<String>,
}

/// The change gate's verdict on a trail.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ChangeVerdict {
    /// `approve`, or anything else (`hold`): held.
    // (What holds a change is judged in hecate-ops' `rules::change`; this doc is the
    // schema's description, which the API's and MCP's documents carry.)
    #[serde(default)]
    pub recommendation: String,
    /// No failed or missing control, and at least one person approved.
    #[serde(default)]
    pub approved: bool,
    /// 0–100, higher is worse.
    #[serde(default)]
    pub risk_score: i32,
    /// `low`, `medium` or `high`.
    #[serde(default)]
    pub risk_level: String,
    /// Controls that passed.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub passed: Vec<String>,
    /// Controls that failed.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub failed: Vec<Control>,
    /// Controls with evidence missing.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub missing_evidence: Vec<Control>,
    /// Controls waived.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub waived: Vec<Control>,
    /// Attestation counts.
    #[serde(default)]
    pub attestations: AttestationCounts,
    /// Approval counts.
    #[serde(default)]
    pub approvals: Approvals,
    /// The segregation-of-duties finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segregation_of_duties: Option<SegregationOfDuties>,
    /// A summary in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
}

/// The role of an approval in Fides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalRole {
    /// Approved the change.
    Approver,
    /// Deployed it.
    Deployer,
}

impl ApprovalRole {
    /// As Fides spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approver => "approver",
            Self::Deployer => "deployer",
        }
    }
}

/// A person's approval, recorded on their behalf.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    /// The person (an email Fides knows).
    pub by: String,
    /// In which role.
    pub role: ApprovalRole,
    /// Why, in words.
    pub reason: String,
}

/// An attestation to append to a trail.
#[derive(Clone, Debug, PartialEq)]
pub struct Attestation {
    /// Its name, e.g. `promotion`.
    pub name: String,
    /// Its type, as environment policies name it.
    pub type_name: String,
    /// The artifact digest it is about (`sha256:` optional); may be empty.
    pub artifact: String,
    /// The document, sent as a JSON string.
    pub payload: serde_json::Value,
    /// Who signs it; empty is `hecate`.
    pub signed_by: String,
}

/// An artifact to report against a trail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// Its digest (`sha256:` optional).
    pub sha256: String,
    /// The trail it belongs to.
    pub trail: String,
    /// Its name, e.g. the image repository.
    pub name: String,
    /// Its type, e.g. `container-image`.
    pub kind: String,
}

/// The ITSM change request attested on a trail (ServiceNow).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ChangeRequest {
    /// The change number, e.g. `CHG0033184`.
    #[serde(default)]
    pub number: String,
    /// Its state.
    #[serde(default)]
    pub state: String,
    /// Its approval state.
    #[serde(default)]
    pub approval: String,
    /// Its risk.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub risk: String,
    /// Whether it is on hold.
    #[serde(default)]
    pub on_hold: bool,
    /// Its short description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub short_description: String,
    /// Whether the ITSM system found it.
    #[serde(default)]
    pub found: bool,
    /// Whether the attestation was compliant.
    #[serde(default)]
    pub compliant: bool,
    /// When it was attested (RFC 3339).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub at: String,
}
