//! `-o name`: the objects each answer is, or acted on, spelled as kubectl spells
//! them — `<kind>.<group>/<name>`, the kind in lower case (`gate.hecate.dev/dev`,
//! `kustomization.kustomize.toolkit.fluxcd.io/app`). Names only: kubectl prints no
//! namespace either, with `-A` too. Reports (the audit trail, evidence, preflight
//! verdicts, chain checks) are not objects and name none.

use hecate_ops::{
    Aborted, Approved, AuditEntry, BundleDiff, Delivery, Evidence, Explanation, FluxReconciled,
    FluxResource, FluxSuspended, GateTargets, Polled, Preflight, Promoted, QueuedApproval,
    Rejected, RolledBack, RolloutAsked, StagedGate, VerifyReport, Withdrawn,
};
use hecate_types::{Beacon, Bundle, Gate, Passage};
use kube::{Resource, ResourceExt as _};

use super::Written;
use crate::output::Named;

/// An object of kind `K` named `name`, as `-o name` prints it.
pub(crate) fn object<K: Resource<DynamicType = ()>>(name: &str) -> String {
    spelled(&K::kind(&()), &K::group(&()), name)
}

/// A Flux object, in the group Flux serves its kind in (ops'); a kind Flux does not
/// define, by its kind alone.
fn flux_object(kind: &str, name: &str) -> String {
    let group = hecate_ops::rules::flux::default_api_version(kind)
        .and_then(|version| version.split_once('/'))
        .map_or("", |(group, _)| group);
    spelled(kind, group, name)
}

fn spelled(kind: &str, group: &str, name: &str) -> String {
    let kind = kind.to_ascii_lowercase();
    if group.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}.{group}/{name}")
    }
}

/// The names of a list of objects, in its order.
fn all<T>(items: &[T], name: impl Fn(&T) -> String) -> Option<Vec<String>> {
    Some(items.iter().map(name).collect())
}

/// `status`: one Explanation per Gate.
impl Named for Vec<Explanation> {
    fn names(&self) -> Option<Vec<String>> {
        all(self, |x| object::<Gate>(&x.gate))
    }
}

/// `explain`: the Gate.
impl Named for Explanation {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Gate>(&self.gate)])
    }
}

impl Named for Vec<StagedGate> {
    fn names(&self) -> Option<Vec<String>> {
        all(self, |g| object::<Gate>(&g.gate.name_any()))
    }
}

impl Named for Vec<Bundle> {
    fn names(&self) -> Option<Vec<String>> {
        all(self, |b| object::<Bundle>(&b.name_any()))
    }
}

impl Named for Vec<Passage> {
    fn names(&self) -> Option<Vec<String>> {
        all(self, |p| object::<Passage>(&p.name_any()))
    }
}

impl Named for Vec<Beacon> {
    fn names(&self) -> Option<Vec<String>> {
        all(self, |b| object::<Beacon>(&b.name_any()))
    }
}

/// `flux <gate>`: the Flux objects themselves.
impl Named for Vec<FluxResource> {
    fn names(&self) -> Option<Vec<String>> {
        all(self, |r| flux_object(&r.kind, &r.name))
    }
}

/// A write names what it wrote.
impl<T: Named> Named for Written<'_, T> {
    fn names(&self) -> Option<Vec<String>> {
        self.answer.names()
    }
}

/// `promote`: the Passage it created.
impl Named for Promoted {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Passage>(&self.passage)])
    }
}

/// `promote --dry-run`: nothing was created; the Gate it would cross.
impl Named for hecate_ops::model::CrossingPreview {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Gate>(&self.gate)])
    }
}

/// `rollback`: the Passage it created.
impl Named for RolledBack {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Passage>(&self.passage)])
    }
}

/// `approve`: the Bundle the approval is recorded on.
impl Named for Approved {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Bundle>(&self.bundle)])
    }
}

/// `reject`: the Bundle the rejection is recorded on.
impl Named for Rejected {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Bundle>(&self.bundle)])
    }
}

/// `reject --withdraw`: the Bundle the withdrawal is recorded on.
impl Named for Withdrawn {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Bundle>(&self.bundle)])
    }
}

/// `approvals`: the Bundles waiting.
impl Named for Vec<QueuedApproval> {
    fn names(&self) -> Option<Vec<String>> {
        Some(self.iter().map(|q| object::<Bundle>(&q.bundle)).collect())
    }
}

/// `abort`: the Passage asked to stop.
impl Named for Aborted {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Passage>(&self.passage)])
    }
}

/// `retry`, `accept-failures`: the Passage whose rollout was asked.
impl Named for RolloutAsked {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Passage>(&self.passage)])
    }
}

/// `targets`: the Passage whose rollout is shown, if any.
impl Named for GateTargets {
    fn names(&self) -> Option<Vec<String>> {
        Some(
            self.rollout
                .iter()
                .map(|r| object::<Passage>(&r.passage))
                .collect(),
        )
    }
}

/// `notifications`: the Notifiers.
impl Named for hecate_ops::model::Notifications {
    fn names(&self) -> Option<Vec<String>> {
        all(&self.notifiers, |n| {
            object::<hecate_types::Notifier>(&n.name)
        })
    }
}

/// `poll`: the Beacon asked to look.
impl Named for Polled {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![object::<Beacon>(&self.beacon)])
    }
}

impl Named for FluxSuspended {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![flux_object(&self.kind, &self.name)])
    }
}

impl Named for FluxReconciled {
    fn names(&self) -> Option<Vec<String>> {
        Some(vec![flux_object(&self.kind, &self.name)])
    }
}

/// Reports: what happened, not objects.
impl Named for Vec<AuditEntry> {
    fn names(&self) -> Option<Vec<String>> {
        None
    }
}

impl Named for Delivery {
    fn names(&self) -> Option<Vec<String>> {
        None
    }
}

impl Named for BundleDiff {
    fn names(&self) -> Option<Vec<String>> {
        None
    }
}

impl Named for Evidence {
    fn names(&self) -> Option<Vec<String>> {
        None
    }
}

impl Named for Vec<Preflight> {
    fn names(&self) -> Option<Vec<String>> {
        None
    }
}

impl Named for Vec<VerifyReport> {
    fn names(&self) -> Option<Vec<String>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_spelled_as_kubectl_spells_them() {
        assert_eq!(object::<Gate>("dev"), "gate.hecate.dev/dev");
        assert_eq!(object::<Bundle>("app-1"), "bundle.hecate.dev/app-1");
        assert_eq!(object::<Passage>("dev-1"), "passage.hecate.dev/dev-1");
        assert_eq!(object::<Beacon>("app"), "beacon.hecate.dev/app");
        assert_eq!(
            flux_object("Kustomization", "app"),
            "kustomization.kustomize.toolkit.fluxcd.io/app"
        );
        assert_eq!(
            flux_object("HelmRelease", "app"),
            "helmrelease.helm.toolkit.fluxcd.io/app"
        );
        assert_eq!(
            flux_object("GitRepository", "fleet"),
            "gitrepository.source.toolkit.fluxcd.io/fleet"
        );
        assert_eq!(flux_object("Widget", "w"), "widget/w");
    }
}
