//! Fides' change gate as Hecate reads it: whether a verdict holds the change, and what
//! holds it. Judged here, once: the `evidence-gate` step waits on a live verdict with
//! it, `hecate evidence` shows one with it, and Explain's `ChangeHeld` blocker and the
//! Gate's `Ready` message read the verdict a crossing recorded with it.

use hecate_fides::model::ChangeVerdict;
use hecate_types::EvidenceRef;

/// The one recommendation that lets a change go.
const APPROVE: &str = "approve";

/// Whether the change gate's `recommendation` holds the change: anything but `approve`
/// does.
fn holds(recommendation: &str) -> bool {
    recommendation != APPROVE
}

/// Whether Fides' `verdict` holds the change (an empty recommendation too: Fides
/// answered, and did not approve).
pub fn verdict_holds(verdict: &ChangeVerdict) -> bool {
    holds(&verdict.recommendation)
}

/// Whether the evidence a crossing recorded says the change gate holds it. A record
/// without a verdict (the step checked the policy only) holds nothing.
pub fn evidence_holds(evidence: &EvidenceRef) -> bool {
    !evidence.verdict.is_empty() && holds(&evidence.verdict)
}

/// What holds the change, one line each: failing controls, missing evidence, or — held
/// with nothing failing — a missing human approval. None when it is approved.
pub fn blockers(verdict: &ChangeVerdict) -> Vec<String> {
    let mut blockers: Vec<String> = verdict
        .failed
        .iter()
        .map(|c| format!("failing control {}", c.describe()))
        .collect();
    blockers.extend(
        verdict
            .missing_evidence
            .iter()
            .map(|c| format!("missing evidence for {}", c.describe())),
    );
    if blockers.is_empty() && verdict_holds(verdict) {
        blockers.push("awaiting a human approval".into());
    }
    blockers
}
