//! What a Gate reconcile reads besides the Gate: its Passages, the namespace's
//! Bundles and, for a Gate selecting targets by label, its connected clusters. The
//! running controller reads them from watch-fed stores (no request per reconcile); a
//! reconcile called on its own (tests, tools) lists them.

use std::future::Future;

use hecate_ops::lenient;
use hecate_ops::rules::rollout::Cluster;
use hecate_types::{Bundle, Passage, wellknown};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt as _;
use kube::api::{Api, ListParams, PartialObjectMeta};
use kube::runtime::reflector::{ObjectRef, Store};

use hecate_ops::json_store::JsonStore;

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
    /// The clusters connected to `namespace` (Secrets labelled
    /// `hecate.dev/cluster=true`), by their metadata alone: what a Gate selecting
    /// targets by label spans.
    fn clusters(
        &self,
        namespace: &str,
    ) -> impl Future<Output = Result<Vec<Cluster>, kube::Error>> + Send;
}

/// The label selector of connected clusters' Secrets.
pub fn connected() -> String {
    format!("{}=true", wellknown::LABEL_CLUSTER)
}

/// A connected cluster as ops judges it: its Secret's name and labels.
pub fn cluster(meta: &PartialObjectMeta<Secret>) -> Cluster {
    Cluster {
        name: meta.name_any(),
        labels: meta.labels().clone(),
    }
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

    async fn clusters(&self, namespace: &str) -> Result<Vec<Cluster>, kube::Error> {
        list_clusters(&self.0, namespace).await
    }
}

/// The clusters connected to `namespace`, in one metadata LIST: a Secret's data is
/// never read this way.
pub async fn list_clusters(
    client: &kube::Client,
    namespace: &str,
) -> Result<Vec<Cluster>, kube::Error> {
    let secrets = Api::<Secret>::namespaced(client.clone(), namespace)
        .list_metadata(&ListParams::default().labels(&connected()))
        .await?;
    Ok(secrets.items.iter().map(cluster).collect())
}

/// Reads from the controller's watch-fed stores, once they hold a first full list.
#[derive(Clone)]
pub struct Stores {
    /// Grouped by their Gate's label ([`passage_gate`]).
    passages: JsonStore<Passage>,
    bundles: JsonStore<Bundle>,
    /// Connected clusters' Secrets, by their metadata alone.
    clusters: Store<PartialObjectMeta<Secret>>,
}

impl Stores {
    /// Reads from these stores (each fed by a watch someone polls).
    pub fn new(
        passages: JsonStore<Passage>,
        bundles: JsonStore<Bundle>,
        clusters: Store<PartialObjectMeta<Secret>>,
    ) -> Self {
        Self {
            passages,
            bundles,
            clusters,
        }
    }
}

impl Reads for Stores {
    async fn passages(&self, namespace: &str, gate: &str) -> Result<Vec<Passage>, kube::Error> {
        // Before the first list a store is empty, and an empty store would read as a
        // Gate with no Passages: it could open a crossing beside a running one.
        self.passages.ready().await;
        Ok(self.passages.in_group(namespace, gate))
    }

    async fn bundles(&self, namespace: &str) -> Result<Vec<Bundle>, kube::Error> {
        self.bundles.ready().await;
        Ok(self.bundles.in_namespace(namespace))
    }

    async fn clusters(&self, namespace: &str) -> Result<Vec<Cluster>, kube::Error> {
        // Never waited for: a controller whose role cannot list or watch Secrets
        // (narrowed to `get`) would hold every such Gate's reconcile. Until the first
        // list, no cluster is selected — which makes nothing due; the list, when it
        // comes, wakes the Gates it concerns.
        if futures::FutureExt::now_or_never(self.clusters.wait_until_ready()).is_none() {
            return Ok(Vec::new());
        }
        Ok(self
            .clusters
            .state()
            .iter()
            .filter(|meta| meta.metadata.namespace.as_deref() == Some(namespace))
            .map(|meta| cluster(meta))
            .collect())
    }
}

/// The Gate a Passage is labelled for: the group the Gate loop's store keeps it in, so
/// a Gate reads its own Passages only.
pub fn passage_gate(passage: &Passage) -> Option<&str> {
    passage
        .labels()
        .get(wellknown::LABEL_GATE)
        .map(String::as_str)
}

/// The Gate a Passage belongs to (its `spec.gate`, in its namespace).
pub fn gate_of(passage: &Passage) -> Option<ObjectRef<hecate_types::Gate>> {
    let namespace = passage.metadata.namespace.as_deref()?;
    Some(ObjectRef::new(&passage.spec.gate).within(namespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A controller whose role cannot list Secrets never lists them: a reconcile asking
    /// for the clusters is answered at once, with none, rather than held.
    #[tokio::test]
    async fn clusters_not_listed_yet_are_none_and_never_waited_for() {
        let (clusters, _writer) = kube::runtime::reflector::store::<PartialObjectMeta<Secret>>();
        let stores = Stores::new(JsonStore::new(), JsonStore::new(), clusters);
        let answer =
            tokio::time::timeout(std::time::Duration::from_secs(1), stores.clusters("shop"))
                .await
                .expect("answered at once");
        assert_eq!(answer.ok(), Some(Vec::new()));
    }
}
