//! Which Gates a change of a Passage or a Bundle wakes: those whose judgement it can
//! change, and only when it changed something they read.
//!
//! - a Passage wakes its Gate when the Gate's copy of it changes (its phase, start,
//!   finish, evidence, handed checks; not a step's progress, which the Gate does not
//!   keep), when it goes, or when it comes;
//! - a Bundle, new, gone, or changed outside its status, wakes every Gate admitting
//!   its Beacon; a change of its status wakes only the Gates the changed entries name
//!   (an approval, a failure recorded, a crossing recorded there) and those that
//!   admit it after one of them (`after`).
//!
//! Without the second rule, each of fifty Gates recording its crossing of one Bundle
//! woke all fifty: 2,500 reconciles for 50 crossings, each a health check and a
//! status write.
//!
//! What changed is told by the store the events fill: it answers each event with the
//! object as it held it before ([`Change`]), so nothing is kept here per object.
//! Errors of the watch are logged here; the watch backs off and resumes by itself.

use std::collections::{BTreeMap, HashSet};

use futures::{Stream, StreamExt as _};
use hecate_types::{Bundle, BundleApproval, Gate, GateCrossing, Passage};
use kube::ResourceExt as _;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

use super::reads::gate_of;
use crate::index::ByNamespace;
use hecate_ops::json_store::{Change, JsonStore};

/// The Gates to reconcile for each event of `events`, applied to `store` first (so a
/// Gate woken reads the change), as `on` decides from what the store says changed.
pub fn stream<K, S, F>(
    events: S,
    store: JsonStore<K>,
    mut on: F,
) -> impl Stream<Item = ObjectRef<Gate>> + Send
where
    K: kube::Resource + serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
    S: Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    F: FnMut(Change<K>) -> Vec<ObjectRef<Gate>> + Send + 'static,
{
    events
        .map(move |event| {
            let gates = match event {
                Ok(event) => on(store.apply(event)),
                Err(error) => {
                    tracing::debug!(%error, "gate controller: a watch failed; it resumes");
                    Vec::new()
                }
            };
            futures::stream::iter(gates)
        })
        .flatten()
}

/// Passages: the Gates a change wakes — a Passage's, when the Gate's copy of it
/// changed (its Passage as the Gate keeps it: see `slim_passage`).
pub fn of_passage(change: Change<Passage>) -> Vec<ObjectRef<Gate>> {
    let changed = |before: Option<&Passage>, now: &Passage| {
        if before.is_some_and(|before| same_to_its_gate(before, now)) {
            Vec::new()
        } else {
            gate_of(now).into_iter().collect()
        }
    };
    match change {
        Change::Applied { before, now } => changed(before.as_ref(), &now),
        Change::Deleted(passage) => gate_of(&passage).into_iter().collect(),
        Change::Listed { first: true, .. } | Change::Nothing => Vec::new(),
        Change::Listed {
            changed: all, gone, ..
        } => distinct(
            all.iter()
                .flat_map(|(before, now)| changed(before.as_ref(), now))
                .chain(gone.iter().filter_map(gate_of))
                .collect(),
        ),
    }
}

/// Whether two versions of a Passage are the same to its Gate: all but the
/// resourceVersion.
fn same_to_its_gate(a: &Passage, b: &Passage) -> bool {
    let meta = |p: &Passage| {
        let mut meta = p.metadata.clone();
        meta.resource_version = None;
        meta.managed_fields = None;
        meta
    };
    a.spec == b.spec && a.status == b.status && meta(a) == meta(b)
}

/// Whether a Bundle is the same to the Gates apart from its status: its name, labels,
/// annotations, creation, whether it is being deleted, and its spec.
fn same_apart_from_status(a: &Bundle, b: &Bundle) -> bool {
    let (x, y) = (&a.metadata, &b.metadata);
    x.name == y.name
        && x.labels == y.labels
        && x.annotations == y.annotations
        && x.creation_timestamp == y.creation_timestamp
        && x.deletion_timestamp.is_some() == y.deletion_timestamp.is_some()
        && a.spec == b.spec
}

/// A Bundle's status entries naming one Gate: its crossings recorded, its failures
/// recorded and its approval, in order.
#[derive(Default, PartialEq)]
struct GateEntries<'a> {
    cleared: Vec<&'a GateCrossing>,
    blocked: Vec<&'a GateCrossing>,
    approved: Vec<&'a BundleApproval>,
}

/// A Bundle's status entries, by the Gate they name.
fn entries_by_gate(bundle: &Bundle) -> BTreeMap<&str, GateEntries<'_>> {
    let mut by_gate: BTreeMap<&str, GateEntries<'_>> = BTreeMap::new();
    if let Some(status) = &bundle.status {
        for entry in &status.cleared {
            by_gate.entry(&entry.gate).or_default().cleared.push(entry);
        }
        for entry in &status.blocked {
            by_gate.entry(&entry.gate).or_default().blocked.push(entry);
        }
        for approval in &status.approved_for {
            by_gate
                .entry(&approval.gate)
                .or_default()
                .approved
                .push(approval);
        }
    }
    by_gate
}

/// Each Gate once, in a stable order (one relist may name a Gate for many objects).
fn distinct(mut gates: Vec<ObjectRef<Gate>>) -> Vec<ObjectRef<Gate>> {
    gates.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    gates.dedup();
    gates
}

/// What changed in a Bundle.
enum Touched {
    /// It is new, gone, or changed outside its status: every admitting Gate cares.
    All,
    /// The status entries naming these Gates changed.
    Entries(HashSet<String>),
}

/// Bundles: wakes the Gates a Bundle's change concerns.
pub struct BundleWakes {
    gates: Store<Gate>,
    /// Which Gates are in which namespace: a Bundle's change looks at its namespace's.
    gates_by_namespace: ByNamespace,
}

impl BundleWakes {
    /// Finds the Gates of a Bundle's namespace in `gates`, by `gates_by_namespace`.
    pub fn new(gates: Store<Gate>, gates_by_namespace: ByNamespace) -> Self {
        Self {
            gates,
            gates_by_namespace,
        }
    }

    /// The Gates `change` wakes.
    pub fn on(&self, change: Change<Bundle>) -> Vec<ObjectRef<Gate>> {
        match change {
            Change::Applied { before, now } => self.changed(before.as_ref(), &now),
            Change::Deleted(bundle) => self.concerned(&bundle, &Touched::All),
            // The first list: every Gate is being looked at for the first time anyway.
            Change::Listed { first: true, .. } | Change::Nothing => Vec::new(),
            Change::Listed { changed, gone, .. } => distinct(
                changed
                    .iter()
                    .flat_map(|(before, now)| self.changed(before.as_ref(), now))
                    .chain(gone.iter().flat_map(|b| self.concerned(b, &Touched::All)))
                    .collect(),
            ),
        }
    }

    /// The Gates a Bundle's change from `before` (`None`: it is new) to `now` concerns.
    fn changed(&self, before: Option<&Bundle>, now: &Bundle) -> Vec<ObjectRef<Gate>> {
        let change = match before {
            Some(before) if same_apart_from_status(before, now) => {
                let (before, after) = (entries_by_gate(before), entries_by_gate(now));
                let gates = before
                    .keys()
                    .chain(after.keys())
                    .filter(|gate| before.get(*gate) != after.get(*gate))
                    .map(|gate| gate.to_string())
                    .collect();
                Touched::Entries(gates)
            }
            _ => Touched::All,
        };
        self.concerned(now, &change)
    }

    /// The Gates of `bundle`'s namespace admitting its Beacon that `change` concerns.
    fn concerned(&self, bundle: &Bundle, change: &Touched) -> Vec<ObjectRef<Gate>> {
        if matches!(change, Touched::Entries(gates) if gates.is_empty()) {
            return Vec::new();
        }
        let Some(namespace) = bundle.namespace() else {
            return Vec::new();
        };
        let beacon = &bundle.spec.beacon;
        self.gates_by_namespace
            .in_namespace(&self.gates, &namespace)
            .iter()
            .filter(|gate| {
                let Some(admission) = gate.admission_for(beacon) else {
                    return false;
                };
                match change {
                    Touched::All => true,
                    Touched::Entries(gates) => {
                        gates.contains(&gate.name_any())
                            || admission.after.iter().any(|g| gates.contains(g))
                    }
                }
            })
            .map(|gate| ObjectRef::from(gate.as_ref()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use hecate_types::{
        Admission, BundleApproval, BundleOrigin, BundleSpec, BundleStatus, GateCrossing, GateSpec,
        PassagePhase, PassageSpec, PassageStatus, Time, wellknown,
    };
    use kube::api::ObjectMeta;
    use kube::runtime::reflector::store::Writer;
    use pretty_assertions::assert_eq;

    use super::*;

    fn gate(name: &str, after: &[&str]) -> Gate {
        let mut gate = Gate::new(
            name,
            GateSpec {
                admits: vec![Admission {
                    from: BundleOrigin {
                        beacon: "app".into(),
                    },
                    after: after.iter().map(|s| s.to_string()).collect(),
                    ..Admission::default()
                }],
                ..GateSpec::default()
            },
        );
        gate.metadata.namespace = Some("shop".into());
        gate
    }

    /// Bundle wakes over four Gates of `shop` — dev, staging (after dev), prod (after
    /// staging), and other (admitting another Beacon) — fed through a store, after
    /// the Bundles' first list.
    struct Bundles {
        store: JsonStore<Bundle>,
        wakes: BundleWakes,
    }

    impl Bundles {
        fn listed() -> Self {
            let mut bundles = Self::unlisted();
            assert!(bundles.on(watcher::Event::Init).is_empty());
            assert!(bundles.on(watcher::Event::InitDone).is_empty());
            bundles
        }

        fn unlisted() -> Self {
            let (gates, index) = gates();
            Self {
                store: JsonStore::new(),
                wakes: BundleWakes::new(gates, index),
            }
        }

        fn on(&mut self, event: watcher::Event<Bundle>) -> Vec<ObjectRef<Gate>> {
            self.wakes.on(self.store.apply(event))
        }
    }

    /// Passage wakes, fed through a store as the Gate loop's.
    struct Passages(JsonStore<Passage>);

    impl Passages {
        fn new() -> Self {
            Self(JsonStore::grouped(super::super::reads::passage_gate))
        }

        fn on(&mut self, event: watcher::Event<Passage>) -> Vec<ObjectRef<Gate>> {
            of_passage(self.0.apply(event))
        }
    }

    fn gates() -> (Store<Gate>, ByNamespace) {
        let index = ByNamespace::default();
        let mut writer = Writer::<Gate>::default();
        let mut other = gate("other", &[]);
        other.spec.admits[0].from.beacon = "api".into();
        for gate in [
            gate("dev", &[]),
            gate("staging", &["dev"]),
            gate("prod", &["staging"]),
            other,
        ] {
            let event = watcher::Event::Apply(gate);
            writer.apply_watcher_event(&event);
            index.apply(&event);
        }
        (writer.as_reader(), index)
    }

    fn bundle(version: &str) -> Bundle {
        let mut bundle = Bundle::new(
            "app-1",
            BundleSpec {
                beacon: "app".into(),
                digest: "sha256:1".into(),
                ..BundleSpec::default()
            },
        );
        bundle.metadata.namespace = Some("shop".into());
        bundle.metadata.resource_version = Some(version.into());
        bundle
    }

    fn crossing(gate: &str) -> GateCrossing {
        GateCrossing {
            gate: gate.into(),
            passage: format!("{gate}-1"),
            at: Time("2026-08-10T12:00:00Z".parse().expect("a time")),
            actor: "hecate-controller".into(),
            reason: String::new(),
        }
    }

    fn names(mut gates: Vec<ObjectRef<Gate>>) -> Vec<String> {
        gates.sort_by(|a, b| a.name.cmp(&b.name));
        gates.into_iter().map(|g| g.name).collect()
    }

    #[test]
    fn a_bundle_wakes_only_the_gates_its_change_concerns() {
        let mut wakes = Bundles::listed();
        let new = bundle("1");
        assert_eq!(
            names(wakes.on(watcher::Event::Apply(new.clone()))),
            ["dev", "prod", "staging"],
            "a new Bundle: every Gate admitting its Beacon"
        );
        let mut same = new.clone();
        same.metadata.resource_version = Some("2".into());
        assert!(
            wakes.on(watcher::Event::Apply(same.clone())).is_empty(),
            "nothing changed but the version"
        );

        let mut cleared = same.clone();
        cleared.status = Some(BundleStatus {
            cleared: vec![crossing("dev")],
            ..BundleStatus::default()
        });
        assert_eq!(
            names(wakes.on(watcher::Event::Apply(cleared.clone()))),
            ["dev", "staging"],
            "dev's crossing recorded: dev, and staging which admits it after dev"
        );

        let mut approved = cleared.clone();
        approved
            .status
            .as_mut()
            .expect("a status")
            .approved_for
            .push(BundleApproval {
                gate: "prod".into(),
                actor: "alice".into(),
                at: Time("2026-08-10T12:01:00Z".parse().expect("a time")),
            });
        assert_eq!(
            names(wakes.on(watcher::Event::Apply(approved.clone()))),
            ["prod"],
            "an approval for prod"
        );

        let mut blocked = approved.clone();
        blocked.status.as_mut().expect("a status").blocked = vec![GateCrossing {
            reason: "boom".into(),
            ..crossing("staging")
        }];
        assert_eq!(
            names(wakes.on(watcher::Event::Apply(blocked.clone()))),
            ["prod", "staging"],
            "a failure at staging"
        );

        let mut labelled = blocked.clone();
        labelled.metadata.labels = Some([("team".to_string(), "a".to_string())].into());
        assert_eq!(
            names(wakes.on(watcher::Event::Apply(labelled.clone()))),
            ["dev", "prod", "staging"],
            "a change outside the status"
        );

        assert_eq!(
            names(wakes.on(watcher::Event::Delete(labelled))),
            ["dev", "prod", "staging"],
            "a Bundle gone"
        );
    }

    #[test]
    fn a_relisted_bundle_wakes_nobody_unless_it_changed_or_went() {
        let mut wakes = Bundles::listed();
        wakes.on(watcher::Event::Apply(bundle("1")));
        let mut other = bundle("1");
        other.metadata.name = Some("app-2".into());
        wakes.on(watcher::Event::Apply(other));
        assert!(wakes.on(watcher::Event::Init).is_empty());
        assert!(wakes.on(watcher::Event::InitApply(bundle("3"))).is_empty());
        assert_eq!(
            names(wakes.on(watcher::Event::InitDone)),
            ["dev", "prod", "staging"],
            "app-2 went while the watch was away"
        );
    }

    fn passage(version: &str) -> Passage {
        let mut passage = Passage::new(
            "dev-1",
            PassageSpec {
                gate: "dev".into(),
                bundle: "app-1".into(),
                ..PassageSpec::default()
            },
        );
        passage.metadata = ObjectMeta {
            namespace: Some("shop".into()),
            labels: Some([(wellknown::LABEL_GATE.to_string(), "dev".to_string())].into()),
            resource_version: Some(version.into()),
            ..passage.metadata
        };
        passage
    }

    #[test]
    fn the_first_lists_wake_nobody_every_gate_is_looked_at_anyway() {
        let mut bundles = Bundles::unlisted();
        let mut passages = Passages::new();
        assert!(bundles.on(watcher::Event::Init).is_empty());
        assert!(
            bundles
                .on(watcher::Event::InitApply(bundle("1")))
                .is_empty()
        );
        assert!(bundles.on(watcher::Event::InitDone).is_empty());
        assert!(passages.on(watcher::Event::Init).is_empty());
        assert!(
            passages
                .on(watcher::Event::InitApply(passage("1")))
                .is_empty()
        );
        assert!(passages.on(watcher::Event::InitDone).is_empty());
        // After it, a change wakes as it did.
        let mut labelled = bundle("2");
        labelled.metadata.labels = Some([("team".to_string(), "a".to_string())].into());
        assert_eq!(
            names(bundles.on(watcher::Event::Apply(labelled))),
            ["dev", "prod", "staging"]
        );
    }

    #[test]
    fn a_passage_wakes_its_gate_when_the_gates_copy_changes() {
        let mut wakes = Passages::new();
        assert!(wakes.on(watcher::Event::Init).is_empty());
        assert!(wakes.on(watcher::Event::InitDone).is_empty());
        assert_eq!(
            names(wakes.on(watcher::Event::Apply(passage("1")))),
            ["dev"]
        );
        // A step's progress: the Gate's copy has no steps, so only the version moved.
        assert!(wakes.on(watcher::Event::Apply(passage("2"))).is_empty());
        let mut finished = passage("3");
        finished.status = Some(PassageStatus {
            phase: Some(PassagePhase::Succeeded),
            ..PassageStatus::default()
        });
        assert_eq!(
            names(wakes.on(watcher::Event::Apply(finished.clone()))),
            ["dev"]
        );
        assert_eq!(names(wakes.on(watcher::Event::Delete(finished))), ["dev"]);
    }
}
