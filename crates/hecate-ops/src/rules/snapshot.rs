//! A namespace as the rules see it: its Gates, Bundles and Passages, fetched once and
//! put in the orders the rules rely on.
//!
//! Objects are shared (`Arc`), so a snapshot built from a watch-backed cache costs
//! pointer copies, not object copies, and one snapshot serves many requests.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use hecate_types::{Bundle, Gate, Passage};
use kube::ResourceExt as _;

use super::eligibility::{newest_first, passages_newest_first};

/// One namespace's objects. Gates are sorted by name, Bundles newest first by
/// creation ([`newest_first`]) and Passages by start ([`passages_newest_first`]); every
/// rule may rely on that.
#[derive(Clone, Debug, Default)]
pub struct NamespaceSnapshot {
    namespace: String,
    gates: Vec<Arc<Gate>>,
    bundles: Vec<Arc<Bundle>>,
    passages: Vec<Arc<Passage>>,
    /// Indexes into `passages` by `spec.gate`, newest first.
    passages_by_gate: HashMap<String, Vec<usize>>,
}

impl NamespaceSnapshot {
    /// Puts one namespace's objects in order.
    pub fn new(
        namespace: impl Into<String>,
        gates: Vec<Gate>,
        bundles: Vec<Bundle>,
        passages: Vec<Passage>,
    ) -> Self {
        Self::shared(
            namespace,
            gates.into_iter().map(Arc::new).collect(),
            bundles.into_iter().map(Arc::new).collect(),
            passages.into_iter().map(Arc::new).collect(),
        )
    }

    /// Puts one namespace's shared objects in order.
    pub fn shared(
        namespace: impl Into<String>,
        mut gates: Vec<Arc<Gate>>,
        mut bundles: Vec<Arc<Bundle>>,
        mut passages: Vec<Arc<Passage>>,
    ) -> Self {
        gates.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        bundles.sort_by(|a, b| newest_first(a.as_ref(), b.as_ref()));
        passages.sort_by(|a, b| passages_newest_first(a.as_ref(), b.as_ref()));
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
        Self::group(
            gates.into_iter().map(Arc::new),
            bundles.into_iter().map(Arc::new),
            passages.into_iter().map(Arc::new),
        )
    }

    /// [`NamespaceSnapshot::by_namespace`] over shared objects.
    pub fn group(
        gates: impl IntoIterator<Item = Arc<Gate>>,
        bundles: impl IntoIterator<Item = Arc<Bundle>>,
        passages: impl IntoIterator<Item = Arc<Passage>>,
    ) -> Vec<Self> {
        // Unsorted groups first; `shared` puts each in order once.
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
            .map(|g| Self::shared(g.namespace, g.gates, g.bundles, g.passages))
            .collect()
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Its Gates, by name.
    pub fn gates(&self) -> impl ExactSizeIterator<Item = &Gate> + DoubleEndedIterator {
        self.gates.iter().map(AsRef::as_ref)
    }

    /// The Gate named `name`.
    pub fn gate(&self, name: &str) -> Option<&Gate> {
        self.gates()
            .find(|g| g.metadata.name.as_deref() == Some(name))
    }

    /// Its Bundles, newest first.
    pub fn bundles(&self) -> impl ExactSizeIterator<Item = &Bundle> + DoubleEndedIterator {
        self.bundles.iter().map(AsRef::as_ref)
    }

    /// Its Passages, newest first.
    pub fn passages(&self) -> impl ExactSizeIterator<Item = &Passage> + DoubleEndedIterator {
        self.passages.iter().map(AsRef::as_ref)
    }

    /// The Passages whose `spec.gate` is `gate`, newest first.
    pub fn passages_of(&self, gate: &str) -> impl Iterator<Item = &Passage> {
        self.passages_by_gate
            .get(gate)
            .into_iter()
            .flatten()
            .map(|i| self.passages[*i].as_ref())
    }

    /// Its Gates, Bundles and Passages as owned lists, in the snapshot's orders.
    pub fn into_parts(self) -> (Vec<Gate>, Vec<Bundle>, Vec<Passage>) {
        fn owned<T: Clone>(shared: Vec<Arc<T>>) -> Vec<T> {
            shared.into_iter().map(Arc::unwrap_or_clone).collect()
        }
        (owned(self.gates), owned(self.bundles), owned(self.passages))
    }
}
