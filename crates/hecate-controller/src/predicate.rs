//! What wakes a Beacon or Gate reconcile: a change of its spec (`metadata.generation`)
//! or a new reconcile request (the `reconcile.fluxcd.io/requestedAt` annotation). Not
//! its status — the controller's own writes — or it would wake itself forever.
//! kube-runtime's `predicates::generation` alone would drop the annotation, which is
//! exactly how `hecate poll` asks for a reconcile now.

use std::hash::{DefaultHasher, Hash, Hasher};

use hecate_types::wellknown;
use kube::Resource;

/// A value that changes exactly when the object should be reconciled again.
pub fn spec_or_request<K: Resource>(object: &K) -> Option<u64> {
    let meta = object.meta();
    let mut hasher = DefaultHasher::new();
    meta.generation.hash(&mut hasher);
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(wellknown::ANNOTATION_RECONCILE_REQUESTED_AT))
        .hash(&mut hasher);
    Some(hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hecate_types::{Gate, GateSpec, GateStatus};

    #[test]
    fn ac050_a_gate_is_not_woken_by_its_own_status_write() {
        let mut old = Gate::new("dev", GateSpec::default());
        old.metadata.generation = Some(1);
        old.metadata.resource_version = Some("10".into());
        let mut status_only = old.clone();
        status_only.metadata.resource_version = Some("11".into());
        status_only.status = Some(GateStatus {
            active_passage: "dev-1".into(),
            ..GateStatus::default()
        });
        assert_eq!(spec_or_request(&old), spec_or_request(&status_only));

        let mut edited = old.clone();
        edited.metadata.generation = Some(2);
        assert_ne!(spec_or_request(&old), spec_or_request(&edited));

        let mut requested = old.clone();
        requested.metadata.annotations = Some(
            [(
                wellknown::ANNOTATION_RECONCILE_REQUESTED_AT.to_string(),
                "1786620716793895315".to_string(),
            )]
            .into(),
        );
        assert_ne!(spec_or_request(&old), spec_or_request(&requested));
    }
}
