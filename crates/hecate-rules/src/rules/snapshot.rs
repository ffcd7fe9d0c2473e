//! A namespace as the rules see it: its Gates, Bundles and Passages, fetched once and
//! put in the orders the rules rely on.

use std::collections::{BTreeMap, HashMap};

use hecate_types::{Bundle, Gate, Passage};
use kube::ResourceExt as _;

use super::eligibility::{newest_first, passages_newest_first};

/// One namespace's objects. Gates are sorted by name, Bundles newest first by
/// creation ([`newest_first`]) and Passages by start ([`passages_newest_first`]); every
/// rule may rely on that.
#[derive(Clone, Debug, Default)]
pub struct NamespaceSnapshot {
    namespace: String,
    gates: Vec<Gate>,
    bundles: Vec<Bundle>,
    passages: Vec<Passage>,
    /// Indexes into `passages` by `spec.gate`, newest first.
    passages_by_gate: HashMap<String, Vec<usize>>,
}

impl NamespaceSnapshot {
    /// Puts one namespace's objects in order.
    pub fn new(
        namespace: impl Into<String>,
        mut gates: Vec<Gate>,
        mut bundles: Vec<Bundle>,
        mut passages: Vec<Passage>,
    ) -> Self {
        gates.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        bundles.sort_by(newest_first);
        passages.sort_by(passages_newest_first);
        let mut passages_by_gate: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, passage) in passages.iter().enumerate() {
            passages_by_gate
                .entry(passage.spec.gate.clone())
                .or_default()
                .push(i);
        }
        Self {
            namespace: namespace.into(),
            gates,
            bundles,
            passages,
            passages_by_gate,
        }
    }

    /// Splits objects from many namespaces into one snapshot per namespace that holds
    /// a Gate, by namespace name.
    pub fn by_namespace(
        gates: Vec<Gate>,
        bundles: Vec<Bundle>,
        passages: Vec<Passage>,
    ) -> Vec<Self> {
        // Unsorted groups first; `new` puts each in order once.
        let mut grouped: BTreeMap<String, Self> = BTreeMap::new();
        for gate in gates {
            let namespace = gate.namespace().unwrap_or_default();
            let group = grouped.entry(namespace.clone()).or_insert_with(|| Self {
                namespace,
                ..Self::default()
            });
            group.gates.push(gate);
        }
        for bundle in bundles {
            if let Some(group) =
                grouped.get_mut(bundle.metadata.namespace.as_deref().unwrap_or_default())
            {
                group.bundles.push(bundle);
            }
        }
        for passage in passages {
            if let Some(group) =
                grouped.get_mut(passage.metadata.namespace.as_deref().unwrap_or_default())
            {
                group.passages.push(passage);
            }
        }
        grouped
            .into_values()
            .map(|g| Self::new(g.namespace, g.gates, g.bundles, g.passages))
            .collect()
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Its Gates, by name.
    pub fn gates(&self) -> impl ExactSizeIterator<Item = &Gate> + DoubleEndedIterator {
        self.gates.iter()
    }

    /// The Gate named `name`.
    pub fn gate(&self, name: &str) -> Option<&Gate> {
        self.gates()
            .find(|g| g.metadata.name.as_deref() == Some(name))
    }

    /// Its Bundles, newest first.
    pub fn bundles(&self) -> impl ExactSizeIterator<Item = &Bundle> + DoubleEndedIterator {
        self.bundles.iter()
    }

    /// Its Bundles, newest first, as a slice: for the rules that take one.
    pub fn all_bundles(&self) -> &[Bundle] {
        &self.bundles
    }

    /// Its Passages, newest first.
    pub fn passages(&self) -> impl ExactSizeIterator<Item = &Passage> + DoubleEndedIterator {
        self.passages.iter()
    }

    /// The Passages whose `spec.gate` is `gate`, newest first.
    pub fn passages_of(&self, gate: &str) -> impl Iterator<Item = &Passage> {
        self.passages_by_gate
            .get(gate)
            .into_iter()
            .flatten()
            .map(|i| &self.passages[*i])
    }

    /// Its Gates, Bundles and Passages as owned lists, in the snapshot's orders.
    pub fn into_parts(self) -> (Vec<Gate>, Vec<Bundle>, Vec<Passage>) {
        (self.gates, self.bundles, self.passages)
    }
}
