//! Audit: what happened in a namespace, newest first.
//!
//! Gate history is the spine — capped but durable, it outlives the Passages it names —
//! and Passages enrich it with actor, evidence and why a crossing stopped. A Passage
//! that never entered history still appears: that is exactly the refused crossing.
//! Approvals, and aborts (with who asked), are entries of their own.

use std::collections::{HashMap, HashSet};

use hecate_types::{PassagePhase, StepPhase, Time, wellknown};
use kube::ResourceExt as _;

use super::approval::{self, Asked};
use super::rollback;
use super::snapshot::NamespaceSnapshot;
use crate::model::{AuditEntry, AuditKind, Outcome};

/// The namespace's audit trail, newest first; entries at the same instant keep the
/// order history, Passages, approvals, aborts.
pub fn audit(snapshot: &NamespaceSnapshot) -> Vec<AuditEntry> {
    let by_name: HashMap<&str, &hecate_types::Passage> = snapshot
        .passages()
        .filter_map(|p| Some((p.metadata.name.as_deref()?, p)))
        .collect();
    let mut entries = Vec::new();
    let mut recorded: HashSet<&str> = HashSet::new();

    for gate in snapshot.gates() {
        for occupant in gate.status.iter().flat_map(|s| &s.history) {
            entries.push(AuditEntry {
                at: occupant.entered_at.clone(),
                kind: AuditKind::Crossed,
                gate: gate.name_any(),
                bundle: occupant.bundle.clone(),
                digest: occupant.digest.clone(),
                actor: occupant.actor.clone(),
                passage: occupant.passage.clone(),
                detail: String::new(),
                verified: occupant.verified,
                evidence: by_name
                    .get(occupant.passage.as_str())
                    .and_then(|p| p.status.as_ref()?.evidence.clone()),
                outcome: Some(Outcome::Crossed),
                rollback_of: by_name
                    .get(occupant.passage.as_str())
                    .and_then(|p| rollback::of(p, |name| by_name.get(name).copied())),
            });
            if !occupant.passage.is_empty() {
                recorded.insert(occupant.passage.as_str());
            }
        }
    }

    for passage in snapshot.passages() {
        let name = passage.name_any();
        // An abort is one entry (who asked, below), not also the crossing it ended.
        let aborted = passage.phase() == PassagePhase::Aborted
            && passage
                .annotations()
                .contains_key(wellknown::ANNOTATION_ABORTED_BY);
        if recorded.contains(name.as_str()) || aborted {
            continue;
        }
        let status = passage.status.as_ref();
        let kind = match passage.phase() {
            PassagePhase::Succeeded => AuditKind::Crossed,
            PassagePhase::Failed | PassagePhase::Aborted => AuditKind::Refused,
            PassagePhase::Pending | PassagePhase::Running => AuditKind::Running,
        };
        let failed_step = status.and_then(|s| {
            s.steps
                .iter()
                .find(|step| step.phase == StepPhase::Failed && !step.message.is_empty())
        });
        let detail = match (kind, failed_step) {
            (AuditKind::Refused, Some(step)) => step.message.clone(),
            _ => status.map(|s| s.message.clone()).unwrap_or_default(),
        };
        let at = status
            .and_then(|s| s.finished_at.clone().or_else(|| s.started_at.clone()))
            .or_else(|| passage.creation_timestamp())
            .unwrap_or(Time(jiff::Timestamp::UNIX_EPOCH));
        entries.push(AuditEntry {
            at,
            kind,
            gate: passage.spec.gate.clone(),
            bundle: passage.spec.bundle.clone(),
            digest: String::new(),
            actor: passage.spec.actor.clone(),
            passage: name,
            detail,
            verified: None,
            evidence: status.and_then(|s| s.evidence.clone()),
            outcome: Some(Outcome::of(Some(passage.phase()))),
            rollback_of: rollback::of(passage, |name| by_name.get(name).copied()),
        });
    }

    for bundle in snapshot.bundles() {
        let entry = |at: &Time, kind, gate: &str, actor: &str, detail: String| AuditEntry {
            at: at.clone(),
            kind,
            gate: gate.to_string(),
            bundle: bundle.name_any(),
            digest: bundle.spec.digest.clone(),
            actor: actor.to_string(),
            passage: String::new(),
            detail,
            verified: None,
            evidence: None,
            outcome: None,
            rollback_of: None,
        };
        let Some(status) = bundle.status.as_ref() else {
            continue;
        };
        // Under a policy, every approval with the groups it counted by; the
        // reference's one per Gate only when it is not among them.
        for approval in &status.approvals {
            // The groups a person is in by being signed in (`system:authenticated`)
            // say nothing of why their approval counts.
            let groups: Vec<&str> = approval
                .groups
                .iter()
                .map(String::as_str)
                .filter(|g| !g.starts_with("system:"))
                .collect();
            let detail = if groups.is_empty() {
                String::new()
            } else {
                format!("as a member of {}", groups.join(", "))
            };
            entries.push(entry(
                &approval.at,
                AuditKind::Approved,
                &approval.gate,
                &approval.actor,
                detail,
            ));
        }
        for approval in status.approved_for.iter().filter(|a| {
            !status
                .approvals
                .iter()
                .any(|p| p.gate == a.gate && p.actor == a.actor)
        }) {
            entries.push(entry(
                &approval.at,
                AuditKind::Approved,
                &approval.gate,
                &approval.actor,
                String::new(),
            ));
        }
        for rejection in &status.rejections {
            entries.push(entry(
                &rejection.at,
                AuditKind::Rejected,
                &rejection.gate,
                &rejection.actor,
                rejection.reason.clone(),
            ));
            if let Some(at) = &rejection.withdrawn_at {
                let asked = snapshot
                    .gate(&rejection.gate)
                    .and_then(|g| g.admission_for(&bundle.spec.beacon))
                    .map_or(Asked::Nothing, Asked::of);
                let detail = if approval::stands(asked, rejection) {
                    format!(
                        "{}'s rejection — not theirs to withdraw: it still holds",
                        rejection.actor
                    )
                } else {
                    format!("{}'s rejection", rejection.actor)
                };
                entries.push(entry(
                    at,
                    AuditKind::Withdrawn,
                    &rejection.gate,
                    &rejection.withdrawn_by,
                    detail,
                ));
            }
        }
    }

    for passage in snapshot.passages() {
        let annotations = passage.annotations();
        let (Some(actor), Some(at)) = (
            annotations.get(wellknown::ANNOTATION_ABORTED_BY),
            annotations
                .get(wellknown::ANNOTATION_ABORTED_AT)
                .and_then(|t| t.parse().ok()),
        ) else {
            continue;
        };
        entries.push(AuditEntry {
            at: Time(at),
            kind: AuditKind::Aborted,
            gate: passage.spec.gate.clone(),
            bundle: passage.spec.bundle.clone(),
            digest: String::new(),
            actor: actor.clone(),
            passage: passage.name_any(),
            detail: String::new(),
            verified: None,
            evidence: None,
            outcome: None,
            rollback_of: None,
        });
    }

    // Stable: equal instants keep the order above.
    entries.sort_by(|a, b| b.at.cmp(&a.at));
    entries
}
