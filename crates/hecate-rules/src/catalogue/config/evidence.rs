//! `evidence-gate` (spec §5.16): the step that lets the compliance record in Fides
//! decide whether the crossing may go on.

use serde::Deserialize;

use super::StepConfig;
use super::fields::{Deferred, GoDuration, Textual, blank_is_unset};

/// One check against Fides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvidenceCheck {
    /// Each image digest is compliant.
    Assert,
    /// Each image digest is allowed in the Gate's environment.
    Allowlist,
    /// The trail CI recorded meets the environment's policy.
    Policy,
    /// The change is approved (and within `maxRisk`), holding until it is.
    Change,
}

impl EvidenceCheck {
    /// As `gates:` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceCheck::Assert => "assert",
            EvidenceCheck::Allowlist => "allowlist",
            EvidenceCheck::Policy => "policy",
            EvidenceCheck::Change => "change",
        }
    }
}

impl Textual for EvidenceCheck {
    fn from_text(text: &str) -> Result<Self, String> {
        match text {
            "assert" => Ok(EvidenceCheck::Assert),
            "allowlist" => Ok(EvidenceCheck::Allowlist),
            "policy" => Ok(EvidenceCheck::Policy),
            "change" => Ok(EvidenceCheck::Change),
            _ => Err(format!(
                "{text:?} is not one of assert, allowlist, policy, change"
            )),
        }
    }
}

/// `evidence-gate`: run the selected Fides checks.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvidenceGateConfig {
    /// The checks to run; at least one.
    pub gates: Vec<Deferred<EvidenceCheck>>,
    /// The policy `assert` checks against; blank = every applicable one.
    #[serde(default)]
    pub policy: String,
    /// The highest change risk (0-100) that may cross, even when approved.
    #[serde(default)]
    pub max_risk: Option<i64>,
    /// Report the Bundle's artifacts to the trail.
    #[serde(default)]
    pub report_artifacts: bool,
    /// How long a held change may wait for approval; unset = 24 hours.
    #[serde(default, deserialize_with = "blank_is_unset")]
    pub hold_timeout: Option<Deferred<GoDuration>>,
    /// How often to look while held; unset = one minute.
    #[serde(default, deserialize_with = "blank_is_unset")]
    pub poll_interval: Option<Deferred<GoDuration>>,
}

impl EvidenceGateConfig {
    /// How long a held change may wait for approval.
    pub fn hold_timeout(&self) -> Deferred<GoDuration> {
        self.hold_timeout
            .clone()
            .unwrap_or(GoDuration::secs(24 * 3600))
    }

    /// How often to look while held.
    pub fn poll_interval(&self) -> Deferred<GoDuration> {
        self.poll_interval.clone().unwrap_or(GoDuration::secs(60))
    }
}

impl StepConfig for EvidenceGateConfig {
    fn check(&self) -> Result<(), String> {
        if self.gates.is_empty() {
            return Err(
                "gates must select at least one of assert, allowlist, policy, change".into(),
            );
        }
        match self.max_risk {
            Some(risk) if !(0..=100).contains(&risk) => {
                Err(format!("maxRisk {risk} is outside 0-100"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use jiff::SignedDuration;
    use serde_json::json;

    use super::super::fields::{Deferred, GoDuration};
    use super::super::test_support::{accepted, accepts, refuses};
    use super::EvidenceCheck;

    #[test]
    fn evidence_gate() {
        let gate: super::EvidenceGateConfig =
            accepted("evidence-gate", json!({"gates": ["assert"]}));
        assert_eq!(gate.gates, vec![Deferred::Known(EvidenceCheck::Assert)]);
        assert_eq!(
            gate.hold_timeout(),
            Deferred::Known(GoDuration(SignedDuration::from_hours(24)))
        );
        assert_eq!(
            gate.poll_interval(),
            Deferred::Known(GoDuration(SignedDuration::from_mins(1)))
        );
        assert_eq!(gate.max_risk, None);
        accepts(
            "evidence-gate",
            json!({"gates": ["assert", "allowlist", "policy", "change", "${{ vars.extra }}"],
                   "policy": "prod", "maxRisk": 40, "reportArtifacts": true,
                   "holdTimeout": "4h", "pollInterval": "${{ vars.poll }}"}),
        );
        accepts("evidence-gate", json!({"gates": ["change"], "maxRisk": 0}));
        accepts(
            "evidence-gate",
            json!({"gates": ["change"], "maxRisk": 100}),
        );

        refuses("evidence-gate", json!({}), &["missing field `gates`"]);
        refuses(
            "evidence-gate",
            json!({"gates": []}),
            &["gates must select"],
        );
        refuses("evidence-gate", json!({"gates": "assert"}), &["gates"]);
        refuses(
            "evidence-gate",
            json!({"gates": ["assert", "approve"]}),
            &[
                "gates[1]",
                "\"approve\"",
                "assert, allowlist, policy, change",
            ],
        );
        refuses("evidence-gate", json!({"gates": ["Assert"]}), &["gates[0]"]);
        refuses(
            "evidence-gate",
            json!({"gates": ["change"], "maxRisk": 101}),
            &["maxRisk"],
        );
        refuses(
            "evidence-gate",
            json!({"gates": ["change"], "maxRisk": -1}),
            &["maxRisk"],
        );
        refuses(
            "evidence-gate",
            json!({"gates": ["change"], "maxRisk": "40"}),
            &["maxRisk"],
        );
        refuses(
            "evidence-gate",
            json!({"gates": ["change"], "holdTimeout": "1d"}),
            &["holdTimeout", "invalid duration"],
        );
        refuses(
            "evidence-gate",
            json!({"gates": ["change"], "pollInterval": "0s"}),
            &["pollInterval"],
        );
        refuses(
            "evidence-gate",
            json!({"gates": ["change"], "maxrisk": 4}),
            &["unknown field `maxrisk`"],
        );
    }
}
