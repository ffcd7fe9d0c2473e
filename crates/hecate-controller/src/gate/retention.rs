//! Passage retention (spec controller.md §2.10): a Gate keeps its newest `spec.retain`
//! finished Passages (default 20, 0 keeps all) and every Passage it still names — the
//! running one, the one behind its occupant, those behind its history. Deleting old
//! Passages is also what lets old Bundles go: Passages protect the Bundles they name.

use std::collections::HashSet;

use hecate_ops::rules::eligibility::newest_first;
use hecate_types::{Gate, Passage, wellknown};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams};

/// How many finished Passages a Gate keeps when `spec.retain` is unset.
pub const DEFAULT_RETAIN: usize = 20;

/// The names of the Gate's Passages to delete: finished ones it does not name, beyond
/// the newest `retain`.
pub fn to_collect(gate: &Gate, passages: &[Passage]) -> Vec<String> {
    let retain = match gate.spec.retain {
        Some(0) => return Vec::new(),
        Some(n) => usize::try_from(n).unwrap_or(0),
        None => DEFAULT_RETAIN,
    };
    let mut named: HashSet<&str> = HashSet::new();
    if let Some(status) = &gate.status {
        named.insert(status.active_passage.as_str());
        named.extend(status.current.iter().map(|c| c.passage.as_str()));
        named.extend(status.history.iter().map(|c| c.passage.as_str()));
    }
    let gate_name = gate.name_any();
    let mut candidates: Vec<&Passage> = passages
        .iter()
        .filter(|p| p.labels().get(wellknown::LABEL_GATE) == Some(&gate_name) && p.is_terminal())
        .filter(|p| !named.contains(p.name_any().as_str()))
        .collect();
    if candidates.len() <= retain {
        return Vec::new();
    }
    candidates.sort_by(|a, b| newest_first(*a, *b));
    candidates[retain..].iter().map(|p| p.name_any()).collect()
}

/// Deletes the Passages [`to_collect`] names; returns how many went. Failures are
/// logged: retention must never stop a Gate from deciding.
pub async fn collect(client: &kube::Client, gate: &Gate, passages: &[Passage]) -> usize {
    let namespace = gate.namespace().unwrap_or_default();
    let api = Api::<Passage>::namespaced(client.clone(), &namespace);
    let mut deleted = 0;
    for name in to_collect(gate, passages) {
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => deleted += 1,
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => {
                tracing::warn!(gate = %gate.name_any(), passage = %name, %error, "could not collect an old Passage")
            }
        }
    }
    deleted
}
