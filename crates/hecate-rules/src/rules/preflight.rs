//! Preflight (ops spec §10.2): would the evidence gate let a Bundle through, judged
//! from Fides' policy check before anyone promotes. Never an error per Bundle: what
//! could not be found out is said in `unknown`, and `compliant` is then false — an
//! unanswered question is never a yes.

use hecate_fides::model::PolicyCheck;

use crate::model::Preflight;

/// Why a Bundle's verdict is not known, in the words every surface shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// Fides could not be reached for this Gate at all.
    Unreachable(String),
    /// The Bundle is not in the namespace (or could not be read).
    Unreadable,
    /// The Bundle pins no image digest.
    NoDigest,
    /// Looking up the artifact's trail failed.
    TrailLookup(String),
    /// Fides has no trail for the artifact.
    NoTrail,
    /// The policy check itself failed.
    PolicyCheck(String),
}

impl Unknown {
    /// The reason, in words.
    pub fn reason(&self) -> String {
        match self {
            Self::Unreachable(cause) => format!("Fides is not reachable: {cause}"),
            Self::Unreadable => "this Bundle could not be read".into(),
            Self::NoDigest => {
                "pins no image digest, so there is no artifact to hold evidence about".into()
            }
            Self::TrailLookup(cause) => format!("looking up the artifact's trail: {cause}"),
            Self::NoTrail => "no Fides trail for this artifact yet".into(),
            Self::PolicyCheck(cause) => format!("asking Fides: {cause}"),
        }
    }
}

/// The verdict for `bundle` from Fides' answer to the policy check, or why there is
/// none. Only applicable policies count: each one with missing evidence is named in
/// `policies`, and what it misses goes into `missing` (both sorted, each once).
pub fn verdict(bundle: &str, answer: Result<PolicyCheck, Unknown>) -> Preflight {
    let check = match answer {
        Ok(check) => check,
        Err(unknown) => {
            return Preflight {
                bundle: bundle.into(),
                compliant: false,
                missing: Vec::new(),
                policies: Vec::new(),
                unknown: unknown.reason(),
            };
        }
    };
    let unmet = || {
        check
            .results
            .iter()
            .filter(|r| r.applies && !r.missing.is_empty())
    };
    let mut policies: Vec<String> = unmet().map(|r| r.policy.clone()).collect();
    policies.sort();
    policies.dedup();
    let mut missing: Vec<String> = unmet().flat_map(|r| r.missing.iter().cloned()).collect();
    missing.sort();
    missing.dedup();
    Preflight {
        bundle: bundle.into(),
        compliant: check.compliant,
        missing,
        policies,
        unknown: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use hecate_fides::model::PolicyResult;
    use serde_json::json;

    use super::*;

    fn result(policy: &str, applies: bool, missing: &[&str]) -> PolicyResult {
        PolicyResult {
            policy: policy.into(),
            applies,
            missing: missing.iter().map(|m| m.to_string()).collect(),
        }
    }

    fn check(compliant: bool, results: Vec<PolicyResult>) -> PolicyCheck {
        PolicyCheck {
            compliant,
            trail_id: String::new(),
            results,
        }
    }

    #[test]
    fn ac128_a_compliant_answer_would_cross() {
        let preflight = verdict("b1", Ok(check(true, vec![])));
        assert_eq!(
            serde_json::to_value(&preflight).expect("json"),
            json!({"bundle": "b1", "compliant": true})
        );
    }

    #[test]
    fn ac129_what_is_missing_is_named_sorted_and_once() {
        let preflight = verdict(
            "b1",
            Ok(check(
                false,
                vec![
                    result("sox", true, &["servicenow-change", "sbom"]),
                    result("change-control", true, &["servicenow-change"]),
                ],
            )),
        );
        assert!(!preflight.compliant);
        assert_eq!(preflight.missing, ["sbom", "servicenow-change"]);
        assert_eq!(preflight.policies, ["change-control", "sox"]);
        assert_eq!(preflight.unknown, "");
    }

    #[test]
    fn ac130_a_policy_that_does_not_apply_contributes_nothing() {
        let preflight = verdict(
            "b1",
            Ok(check(true, vec![result("pci", false, &["pci-scan"])])),
        );
        assert!(preflight.compliant);
        assert!(preflight.missing.is_empty() && preflight.policies.is_empty());
    }

    #[test]
    fn ac133_to_ac135_unknown_is_never_compliant_and_never_blank() {
        for (unknown, says) in [
            (
                Unknown::Unreachable("no token".into()),
                "Fides is not reachable: no token",
            ),
            (Unknown::Unreadable, "could not be read"),
            (Unknown::NoDigest, "no image digest"),
            (
                Unknown::TrailLookup("500".into()),
                "looking up the artifact's trail: 500",
            ),
            (Unknown::NoTrail, "no Fides trail"),
            (Unknown::PolicyCheck("500".into()), "asking Fides: 500"),
        ] {
            let preflight = verdict("b1", Err(unknown));
            assert!(!preflight.compliant);
            assert!(preflight.unknown.contains(says), "{}", preflight.unknown);
        }
    }
}
