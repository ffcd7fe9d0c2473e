//! What people ask of Hecate, as typed as what it answers: one request per write,
//! with its fields, bounds and documentation, read the same way by every surface.
//!
//! The API's bodies are these, field for field (its OpenAPI document describes them
//! from their schemas); MCP's tool arguments and the CLI's flags are made into them;
//! and what a request means — which fields go together, what empty means — is said
//! once, here ([`RollbackRequest::asked`]), not by each surface.

use hecate_types::names::{self, DNS_SUBDOMAIN_PATTERN};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::rules::rollout::RollBack;

/// A request that cannot be acted on as written: what is wrong, in words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RequestProblem(pub String);

/// `name`, checked as a Kubernetes object name; `field` says which.
fn object_name(field: &str, name: &str) -> Result<String, RequestProblem> {
    if names::is_dns_subdomain(name) {
        Ok(name.to_string())
    } else {
        Err(RequestProblem(format!(
            "{field}: {name:?} is not a valid object name"
        )))
    }
}

/// Promote: move a Bundle through a Gate (the Gate is the request's address).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
// Required, though missing reads as empty: either way the request is refused.
#[schemars(extend("required" = ["bundle"]))]
pub struct PromoteRequest {
    /// The Bundle to move.
    #[serde(default)]
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS_SUBDOMAIN_PATTERN))]
    pub bundle: String,
}

/// Roll back: cross an earlier verified Bundle again, or send some targets of the
/// Gate's last rollout back to what they ran before it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RollbackRequest {
    /// The Bundle to go back to: one the Gate verified before. Without it, the newest
    /// earlier Bundle the Gate verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS_SUBDOMAIN_PATTERN))]
    pub to: Option<String>,
    /// Roll back only some targets of the Gate's last rollout, to what they ran before
    /// it: `failed`, `all` (every target it reached), or names separated by commas.
    /// The Gate keeps what it holds (DECISION 163). Not with `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 6500))]
    pub targets: Option<String>,
}

/// What a rollback asks for, once read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RollbackAsked {
    /// The Gate goes back: to this Bundle, or (`None`) to the one the Gate chooses.
    Gate(Option<String>),
    /// Some targets go back; the Gate keeps what it holds.
    Targets(RollBack),
}

impl RollbackRequest {
    /// What the request asks for. Empty fields read as absent; `to` must be an object
    /// name; `to` and `targets` together are refused — a rollback of some targets goes
    /// back to what each ran before the rollout, not to a Bundle of one's choosing.
    pub fn asked(&self) -> Result<RollbackAsked, RequestProblem> {
        let to = self.to.as_deref().filter(|to| !to.is_empty());
        let targets = self.targets.as_deref().filter(|t| !t.trim().is_empty());
        match (to, targets) {
            (Some(_), Some(_)) => Err(RequestProblem(
                "to and targets cannot be given together: a rollback of some targets goes \
                 back to what they ran before the rollout"
                    .into(),
            )),
            (None, Some(targets)) => Ok(RollbackAsked::Targets(RollBack::parse(targets))),
            (to, None) => Ok(RollbackAsked::Gate(
                to.map(|to| object_name("to", to)).transpose()?,
            )),
        }
    }
}

/// Approve a Bundle for one Gate — or, at its own route, withdraw one's rejection.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
// Required, though missing reads as empty: either way the request is refused.
#[schemars(extend("required" = ["gate"]))]
pub struct ApproveRequest {
    /// The Gate the approval is for; an approval is for one Gate only.
    #[serde(default)]
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS_SUBDOMAIN_PATTERN))]
    pub gate: String,
}

/// Reject a Bundle for one Gate, saying why.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
// Required, though missing reads as empty: either way the request is refused.
#[schemars(extend("required" = ["gate", "reason"]))]
pub struct RejectRequest {
    /// The Gate the Bundle is held from; a rejection is for one Gate only.
    #[serde(default)]
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS_SUBDOMAIN_PATTERN))]
    pub gate: String,
    /// Why: recorded with the rejection, shown wherever the Bundle is held.
    #[serde(default)]
    #[schemars(length(min = 1, max = 1000))]
    pub reason: String,
}

/// Let a halted rollout go on without its failed targets, saying why.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
// Required, though missing reads as empty: either way the request is refused.
#[schemars(extend("required" = ["reason"]))]
pub struct AcceptFailuresRequest {
    /// Why the rollout may go on without these targets: kept on the record.
    #[serde(default)]
    #[schemars(length(min = 1, max = 1000))]
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn rollback(to: Option<&str>, targets: Option<&str>) -> Result<RollbackAsked, RequestProblem> {
        RollbackRequest {
            to: to.map(str::to_string),
            targets: targets.map(str::to_string),
        }
        .asked()
    }

    #[test]
    fn a_rollback_asks_for_the_gate_or_some_targets_never_both() {
        assert_eq!(rollback(None, None), Ok(RollbackAsked::Gate(None)));
        assert_eq!(rollback(Some(""), Some(" ")), Ok(RollbackAsked::Gate(None)));
        assert_eq!(
            rollback(Some("b1"), None),
            Ok(RollbackAsked::Gate(Some("b1".into())))
        );
        assert_eq!(
            rollback(None, Some("failed")),
            Ok(RollbackAsked::Targets(RollBack::Failed))
        );
        let both = rollback(Some("b1"), Some("failed")).unwrap_err();
        assert!(
            both.0
                .starts_with("to and targets cannot be given together"),
            "{both}"
        );
        let bad = rollback(Some("B 1"), None).unwrap_err();
        assert_eq!(bad.0, r#"to: "B 1" is not a valid object name"#);
    }

    #[test]
    fn bodies_refuse_fields_they_do_not_know() {
        assert!(serde_json::from_str::<PromoteRequest>(r#"{"bundle":"b1","gate":"x"}"#).is_err());
        assert_eq!(
            serde_json::from_str::<RejectRequest>(r#"{"gate":"prod","reason":"no"}"#).ok(),
            Some(RejectRequest {
                gate: "prod".into(),
                reason: "no".into()
            })
        );
    }
}
