//! Whether the change gate holds a change, and what holds it (fides.md C14–C16),
//! judged once for the `evidence-gate` step, `hecate evidence`, Explain and the Gate's
//! `Ready` message.

use hecate_types::EvidenceRef;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::model::ChangeVerdict;
use crate::rules::change::{blockers, evidence_holds, verdict_holds};

fn verdict(answer: serde_json::Value) -> ChangeVerdict {
    serde_json::from_value(answer).expect("a change-gate answer")
}

#[test]
fn c14_to_c16_a_verdict_holds_unless_approved_and_says_what_holds_it() {
    let cases = [
        (
            json!({"recommendation":"approve","approved":true,"risk_score":5,"risk_level":"low"}),
            false,
            vec![],
        ),
        (
            json!({"trail_id":"t-1","recommendation":"hold","approved":false,"risk_score":45,"risk_level":"medium","passed":["CC8.1"],"failed":[{"control":"CC7.2","name":"Vulnerability scanning","reasons":["failed vuln-scan"]}],"missing_evidence":[{"control":"CC6.1","name":"Change approval","reasons":["missing sbom"]}],"waived":[],"attestations":{"total":3,"non_compliant":1},"approvals":{"count":1,"human_approvers":1,"four_eyes":false,"approvers":["a@x"],"deployers":[]},"segregation_of_duties":{"committer":"a@x","approvers":["a@x"],"deployers":[],"compliant":false,"violations":["committer and approver are the same person"]},"summary":"Controls failed."}),
            true,
            vec![
                "failing control CC7.2 Vulnerability scanning (failed vuln-scan)",
                "missing evidence for CC6.1 Change approval (missing sbom)",
            ],
        ),
        // 16: held, and the only thing in the way is a person's approval.
        (
            json!({"recommendation":"hold","approved":false,"risk_score":20,"risk_level":"medium","segregation_of_duties":{"approvers":null,"violations":null,"compliant":false}}),
            true,
            vec!["awaiting a human approval"],
        ),
        (
            json!({"recommendation":"hold","approved":false,"risk_score":20,"risk_level":"medium"}),
            true,
            vec!["awaiting a human approval"],
        ),
        // Fides answered without approving: held.
        (
            json!({"approved":false}),
            true,
            vec!["awaiting a human approval"],
        ),
        // Approved, yet a control failed: not held, and the failure is still named.
        (
            json!({"recommendation":"approve","failed":[{"control":"CC7.2","reasons":["late scan"]}]}),
            false,
            vec!["failing control CC7.2 (late scan)"],
        ),
    ];
    for (answer, held, want) in cases {
        let v = verdict(answer.clone());
        assert_eq!(verdict_holds(&v), held, "{answer}");
        assert_eq!(blockers(&v), want, "{answer}");
    }
}

#[test]
fn a_recorded_verdict_holds_the_crossing_unless_approved_or_absent() {
    for (recorded, held) in [
        ("hold", true),
        ("reject", true),
        ("approve", false),
        // The step checked the policy only: no verdict, nothing held.
        ("", false),
    ] {
        let evidence = EvidenceRef {
            trail: "t-1".into(),
            verdict: recorded.into(),
            ..EvidenceRef::default()
        };
        assert_eq!(evidence_holds(&evidence), held, "{recorded:?}");
    }
}
