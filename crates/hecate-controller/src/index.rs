//! Which objects of a store are in which namespace, kept from the same events that
//! fill the store.
//!
//! kube-runtime's `Store` answers "every object" (a copy of the whole list) or one by
//! name; a Bundle's change asks for its namespace's Gates. Asked of the whole store,
//! each change would cost what the cluster holds. The index holds names only (the
//! objects stay in the store, once), so a namespace's objects are found at what the
//! namespace holds. (The Passages and Bundles a Gate judges are held by namespace to
//! begin with: [`hecate_ops::json_store`].)

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, PoisonError, RwLock};

use kube::Resource;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event;

type Names = HashMap<String, BTreeSet<String>>;

/// The names of a store's objects, by namespace.
#[derive(Clone, Default)]
pub struct ByNamespace {
    names: Arc<RwLock<Names>>,
    /// A full list under way: what it has named so far (it replaces `names` at its end,
    /// as the store is replaced).
    listing: Arc<RwLock<Option<Names>>>,
}

impl ByNamespace {
    /// Follows one event of the stream that fills the store — before the store does, so
    /// that whoever the store's readiness wakes finds the index listed as well (a name
    /// whose object the store does not hold yet is skipped).
    pub fn apply<K: Resource>(&self, event: &Event<K>) {
        let id = |object: &K| {
            let meta = object.meta();
            (
                meta.namespace.clone().unwrap_or_default(),
                meta.name.clone().unwrap_or_default(),
            )
        };
        let mut listing = self.listing.write().unwrap_or_else(PoisonError::into_inner);
        match event {
            Event::Init => *listing = Some(Names::new()),
            Event::InitApply(object) => {
                let (namespace, name) = id(object);
                listing
                    .get_or_insert_with(Names::new)
                    .entry(namespace)
                    .or_default()
                    .insert(name);
            }
            Event::InitDone => {
                if let Some(listed) = listing.take() {
                    *self.names.write().unwrap_or_else(PoisonError::into_inner) = listed;
                }
            }
            Event::Apply(object) => {
                let (namespace, name) = id(object);
                self.names
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(namespace)
                    .or_default()
                    .insert(name);
            }
            Event::Delete(object) => {
                let (namespace, name) = id(object);
                let mut names = self.names.write().unwrap_or_else(PoisonError::into_inner);
                if let Some(in_namespace) = names.get_mut(&namespace) {
                    in_namespace.remove(&name);
                    if in_namespace.is_empty() {
                        names.remove(&namespace);
                    }
                }
            }
        }
    }

    /// The objects of `store` in `namespace`.
    pub fn in_namespace<K>(&self, store: &Store<K>, namespace: &str) -> Vec<Arc<K>>
    where
        K: Resource<DynamicType = ()> + Clone,
    {
        let names = self.names.read().unwrap_or_else(PoisonError::into_inner);
        names.get(namespace).map_or_else(Vec::new, |in_namespace| {
            in_namespace
                .iter()
                .filter_map(|name| store.get(&ObjectRef::new(name).within(namespace)))
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use kube::runtime::WatchStreamExt as _;
    use kube::runtime::reflector;

    fn cm(namespace: &str, name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn names(objects: Vec<Arc<ConfigMap>>) -> Vec<String> {
        objects
            .iter()
            .map(|o| o.metadata.name.clone().unwrap_or_default())
            .collect()
    }

    #[tokio::test]
    async fn a_namespace_holds_what_the_store_holds_of_it() {
        let (store, writer) = reflector::store::<ConfigMap>();
        let index = ByNamespace::default();
        let events: Vec<Result<Event<ConfigMap>, kube::runtime::watcher::Error>> = vec![
            Ok(Event::Init),
            Ok(Event::InitApply(cm("a", "1"))),
            Ok(Event::InitApply(cm("b", "1"))),
            Ok(Event::InitDone),
            Ok(Event::Apply(cm("a", "2"))),
            Ok(Event::Delete(cm("a", "1"))),
        ];
        let indexed = index.clone();
        futures::stream::iter(events)
            .reflect(writer)
            .for_each(|event| {
                if let Ok(event) = &event {
                    indexed.apply(event);
                }
                async {}
            })
            .await;
        assert_eq!(names(index.in_namespace(&store, "a")), ["2"]);
        assert_eq!(names(index.in_namespace(&store, "b")), ["1"]);
        assert!(index.in_namespace(&store, "c").is_empty());

        // A full list replaces what was known: b/1 went while the watch was away.
        for event in [Event::Init, Event::InitApply(cm("a", "2")), Event::InitDone] {
            index.apply(&event);
        }
        assert!(names(index.in_namespace(&store, "b")).is_empty());
    }
}
