//! What a Gate reconcile reads besides the Gate: its Passages and the namespace's
//! Bundles. The running controller reads them from watch-fed stores (no request per
//! reconcile); a reconcile called on its own (tests, tools) lists them.

use std::future::Future;

use hecate_ops::lenient;
use hecate_types::{Bundle, Passage, wellknown};
use kube::ResourceExt as _;
use kube::api::ListParams;
use kube::runtime::reflector::{ObjectRef, Store};

use crate::index::ByNamespace;
use crate::ready::Ready;

/// Reads of a Gate's Passages and its namespace's Bundles.
pub trait Reads: Send + Sync + 'static {
    /// The Passages labelled for Gate `gate` in `namespace`, any order.
    fn passages(
        &self,
        namespace: &str,
        gate: &str,
    ) -> impl Future<Output = Result<Vec<Passage>, kube::Error>> + Send;
    /// Every Bundle in `namespace`, any order.
    fn bundles(
        &self,
        namespace: &str,
    ) -> impl Future<Output = Result<Vec<Bundle>, kube::Error>> + Send;
}

/// Reads straight from the API server: one LIST each.
#[derive(Clone)]
pub struct Lists(pub kube::Client);

impl Reads for Lists {
    async fn passages(&self, namespace: &str, gate: &str) -> Result<Vec<Passage>, kube::Error> {
        let selector = format!("{}={gate}", wellknown::LABEL_GATE);
        lenient::list(
            self.0.clone(),
            namespace,
            &ListParams::default().labels(&selector),
        )
        .await
    }

    async fn bundles(&self, namespace: &str) -> Result<Vec<Bundle>, kube::Error> {
        lenient::list(self.0.clone(), namespace, &ListParams::default()).await
    }
}

/// Reads from the controller's watch-fed stores, once they hold a first full list.
#[derive(Clone)]
pub struct Stores {
    passages: Store<Passage>,
    bundles: Store<Bundle>,
    /// Which of them are in which namespace: a reconcile reads its namespace's, never
    /// the whole store.
    passages_by_namespace: ByNamespace,
    bundles_by_namespace: ByNamespace,
    passages_ready: Ready,
    bundles_ready: Ready,
}

impl Stores {
    /// Reads from these stores (each fed by a watch someone polls), each with the
    /// index the same events keep.
    pub fn new(
        (passages, passages_by_namespace): (Store<Passage>, ByNamespace),
        (bundles, bundles_by_namespace): (Store<Bundle>, ByNamespace),
    ) -> Self {
        Self {
            passages_ready: Ready::after(vec![passages.clone()]),
            bundles_ready: Ready::after(vec![bundles.clone()]),
            passages,
            bundles,
            passages_by_namespace,
            bundles_by_namespace,
        }
    }
}

impl Reads for Stores {
    async fn passages(&self, namespace: &str, gate: &str) -> Result<Vec<Passage>, kube::Error> {
        // Before the first list a store is empty, and an empty store would read as a
        // Gate with no Passages: it could open a crossing beside a running one.
        self.passages_ready.wait().await;
        Ok(self
            .passages_by_namespace
            .in_namespace(&self.passages, namespace)
            .iter()
            .filter(|p| p.labels().get(wellknown::LABEL_GATE).map(String::as_str) == Some(gate))
            .map(|p| Passage::clone(p))
            .collect())
    }

    async fn bundles(&self, namespace: &str) -> Result<Vec<Bundle>, kube::Error> {
        self.bundles_ready.wait().await;
        Ok(self
            .bundles_by_namespace
            .in_namespace(&self.bundles, namespace)
            .iter()
            .map(|b| Bundle::clone(b))
            .collect())
    }
}

/// The Gate a Passage belongs to (its `spec.gate`, in its namespace).
pub fn gate_of(passage: &Passage) -> Option<ObjectRef<hecate_types::Gate>> {
    let namespace = passage.metadata.namespace.as_deref()?;
    Some(ObjectRef::new(&passage.spec.gate).within(namespace))
}
