//! Which namespaces this controller acts in. By default all; with
//! `--watch-label-selector`, only namespaces whose labels match, so that several
//! controllers split a large fleet between them (Flux's `sharding.fluxcd.io/key`
//! convention, applied to namespaces: every object of a namespace — Gates, their
//! Passages, the Bundles they judge — then belongs to exactly one shard, and a shard
//! never writes another's objects).

use futures::Stream;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};

use crate::ready::Ready;

/// The namespaces a controller acts in.
#[derive(Clone, Default)]
pub enum Scope {
    /// Every namespace.
    #[default]
    Everywhere,
    /// The namespaces in this store (fed by a watch of the matching namespaces).
    Namespaces(Store<Namespace>, Ready),
}

/// The namespaces of a shard as they change, which the controller must poll (it both
/// fills the scope's store and says when a namespace joins).
pub type NamespaceChanges =
    std::pin::Pin<Box<dyn Stream<Item = Result<Namespace, watcher::Error>> + Send>>;

impl Scope {
    /// The scope `selector` chooses (every namespace without one), and — for a shard —
    /// the watch of its namespaces that keeps the scope current.
    pub fn watch(
        client: &kube::Client,
        selector: Option<&str>,
    ) -> (Self, Option<NamespaceChanges>) {
        let Some(selector) = selector else {
            return (Self::Everywhere, None);
        };
        let (reader, writer) = reflector::store::<Namespace>();
        let changes = watcher(
            Api::<Namespace>::all(client.clone()),
            watcher::Config::default().labels(selector),
        )
        .default_backoff()
        .reflect(writer)
        .touched_objects();
        (Self::namespaces(reader), Some(Box::pin(changes)))
    }

    /// The namespaces in `store`.
    pub fn namespaces(store: Store<Namespace>) -> Self {
        let ready = Ready::after(vec![store.clone()]);
        Self::Namespaces(store, ready)
    }

    /// Whether objects in `namespace` are this controller's. Waits for the first full
    /// list of namespaces: before it, every answer would be "no".
    pub async fn contains(&self, namespace: &str) -> bool {
        match self {
            Self::Everywhere => true,
            Self::Namespaces(store, ready) => {
                ready.wait().await;
                store
                    .state()
                    .iter()
                    .any(|ns| ns.metadata.name.as_deref() == Some(namespace))
            }
        }
    }
}
