//! A store that holds each object as its JSON text, by namespace, and decodes what a
//! reader asks for (DECISIONS 142, 144).
//!
//! The controller's Gate loop and the servers' [`crate::Cache`] hold every Passage and
//! Bundle they may read: 200,000 objects at a fleet's scale. Decoded, a Bundle whose
//! JSON is 1.4 KiB takes 3.4 KiB (an `ObjectMeta` is 360 bytes before its strings; a
//! label map is a B-tree node of half a kilobyte), and kube-runtime's store keys each
//! by an `ObjectRef` of four more strings. Held as its JSON, an object costs its text
//! and a name. A reader decodes its namespace's share, which is what it cost to clone
//! it from a kube-runtime store (measured in BENCHMARKS).
//!
//! The store is also the memory of what each object was: applying an event answers
//! with the object as held before ([`Change`]), so what wakes a Gate is told by
//! comparing the two, with no fingerprint kept beside the store.
//!
//! One task applies events (the one that polls the watch); any number read.

use std::collections::{BTreeSet, HashMap};
use std::marker::PhantomData;
use std::sync::{Arc, PoisonError, RwLock};

use kube::Resource;
use kube::runtime::watcher::Event;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::watch;

/// One object as held: the group a reader may ask for (a Passage's Gate), and its JSON.
struct Entry {
    group: Box<str>,
    json: Box<[u8]>,
}

/// Objects by name, in one namespace.
type Namespace = HashMap<String, Entry>;

struct Objects<K> {
    by_namespace: HashMap<String, Namespace>,
    /// A full list under way: what it has named so far, which replaces `by_namespace`
    /// when it ends (as kube-runtime's store does, so a reader never sees half a list).
    listing: Option<HashMap<String, Namespace>>,
    /// What that list changed, reported when it ends (few: a list again after a watch
    /// expired names mostly what is held already, byte for byte).
    relisted: Vec<(Option<K>, K)>,
    /// Whether a first list has ended.
    listed: bool,
}

impl<K> Default for Objects<K> {
    fn default() -> Self {
        Self {
            by_namespace: HashMap::new(),
            listing: None,
            relisted: Vec::new(),
            listed: false,
        }
    }
}

/// What applying an event changed, as readers see it.
#[derive(Debug, PartialEq)]
pub enum Change<K> {
    /// An object came (`before` is `None`) or changed.
    Applied {
        /// The object as held before.
        before: Option<K>,
        /// The object as held now.
        now: K,
    },
    /// An object went: as held, or as the event said when it was not held.
    Deleted(K),
    /// A full list ended and replaced what was held. The first list changes nothing a
    /// reader saw before (there was nothing); a later one reports what it changed.
    Listed {
        /// Whether this was the store's first list.
        first: bool,
        /// What the list changed, each as held before (`None`: new) and now.
        changed: Vec<(Option<K>, K)>,
        /// What the list no longer names, as held before.
        gone: Vec<K>,
    },
    /// Nothing a reader sees changed yet (a list under way).
    Nothing,
}

/// Objects of kind `K` held as JSON, by namespace and name. Cloning shares the store.
pub struct JsonStore<K> {
    objects: Arc<RwLock<Objects<K>>>,
    group_of: fn(&K) -> Option<&str>,
    ready: Arc<watch::Sender<bool>>,
    kind: PhantomData<fn() -> K>,
}

impl<K> Clone for JsonStore<K> {
    fn clone(&self) -> Self {
        Self {
            objects: self.objects.clone(),
            group_of: self.group_of,
            ready: self.ready.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> JsonStore<K>
where
    K: Resource + Serialize + DeserializeOwned,
{
    /// An empty store whose readers may ask for one group of a namespace's objects
    /// (`group_of` names an object's; `None` puts it in no group).
    pub fn grouped(group_of: fn(&K) -> Option<&str>) -> Self {
        Self {
            objects: Arc::default(),
            group_of,
            ready: Arc::new(watch::channel(false).0),
            kind: PhantomData,
        }
    }

    /// An empty store, read a namespace at a time.
    pub fn new() -> Self {
        Self::grouped(|_| None)
    }

    /// Applies one event of the watch that fills the store, answering what changed.
    pub fn apply(&self, event: Event<K>) -> Change<K> {
        let mut objects = self.objects.write().unwrap_or_else(PoisonError::into_inner);
        let objects = &mut *objects;
        match event {
            Event::Init => {
                objects.listing = Some(HashMap::new());
                objects.relisted.clear();
                Change::Nothing
            }
            Event::InitApply(object) => {
                let Some((namespace, name, entry)) = self.entry(&object) else {
                    return Change::Nothing;
                };
                if objects.listed {
                    let held = objects
                        .by_namespace
                        .get(&namespace)
                        .and_then(|n| n.get(&name));
                    if held.is_none_or(|held| held.json != entry.json) {
                        let before = held.and_then(|held| self.decode(held));
                        objects.relisted.push((before, object));
                    }
                }
                objects
                    .listing
                    .get_or_insert_with(HashMap::new)
                    .entry(namespace)
                    .or_default()
                    .insert(name, entry);
                Change::Nothing
            }
            Event::InitDone => {
                let listed = objects.listing.take().unwrap_or_default();
                let mut gone = Vec::new();
                for (namespace, held) in &objects.by_namespace {
                    let still = listed.get(namespace);
                    for (name, entry) in held {
                        if still.is_none_or(|s| !s.contains_key(name)) {
                            gone.extend(self.decode(entry));
                        }
                    }
                }
                objects.by_namespace = listed;
                let first = !objects.listed;
                objects.listed = true;
                let changed = std::mem::take(&mut objects.relisted);
                self.ready.send_replace(true);
                Change::Listed {
                    first,
                    changed,
                    gone,
                }
            }
            Event::Apply(object) => {
                let Some((namespace, name, entry)) = self.entry(&object) else {
                    return Change::Nothing;
                };
                let held = objects.by_namespace.entry(namespace).or_default();
                let before = held
                    .insert(name, entry)
                    .and_then(|entry| self.decode(&entry));
                Change::Applied {
                    before,
                    now: object,
                }
            }
            Event::Delete(object) => {
                let meta = object.meta();
                let (namespace, name) = (
                    meta.namespace.clone().unwrap_or_default(),
                    meta.name.clone().unwrap_or_default(),
                );
                let mut before = None;
                if let Some(held) = objects.by_namespace.get_mut(&namespace) {
                    before = held.remove(&name).and_then(|entry| self.decode(&entry));
                    if held.is_empty() {
                        objects.by_namespace.remove(&namespace);
                    }
                }
                Change::Deleted(before.unwrap_or(object))
            }
        }
    }

    /// Waits until the store holds its first full list: before it, an empty store
    /// would read as a namespace with nothing in it.
    pub async fn ready(&self) {
        let mut ready = self.ready.subscribe();
        // A dropped sender cannot happen while `self` holds it.
        let _ = ready.wait_for(|ready| *ready).await;
    }

    /// Whether the store holds its first full list.
    pub fn is_ready(&self) -> bool {
        *self.ready.borrow()
    }

    /// The objects held in `namespace`, any order.
    pub fn in_namespace(&self, namespace: &str) -> Vec<K> {
        self.select(namespace, |_| true)
    }

    /// The objects held in `namespace` whose group is `group`, any order.
    pub fn in_group(&self, namespace: &str, group: &str) -> Vec<K> {
        self.select(namespace, |g| g == group)
    }

    /// The namespaces the store holds objects in.
    pub fn namespaces(&self) -> BTreeSet<String> {
        let objects = self.objects.read().unwrap_or_else(PoisonError::into_inner);
        objects.by_namespace.keys().cloned().collect()
    }

    /// How many objects the store holds, and their JSON's bytes (for its tests).
    #[cfg(test)]
    pub(crate) fn size(&self) -> (usize, usize) {
        let objects = self.objects.read().unwrap_or_else(PoisonError::into_inner);
        objects
            .by_namespace
            .values()
            .flat_map(HashMap::values)
            .fold((0, 0), |(n, bytes), entry| {
                (n + 1, bytes + entry.json.len())
            })
    }

    fn select(&self, namespace: &str, keep: impl Fn(&str) -> bool) -> Vec<K> {
        let objects = self.objects.read().unwrap_or_else(PoisonError::into_inner);
        let Some(held) = objects.by_namespace.get(namespace) else {
            return Vec::new();
        };
        held.values()
            .filter(|entry| keep(&entry.group))
            .filter_map(|entry| self.decode(entry))
            .collect()
    }

    /// An object's namespace, name and entry; `None` for one that does not encode
    /// (it cannot happen for a typed object; it is said rather than held wrongly).
    fn entry(&self, object: &K) -> Option<(String, String, Entry)> {
        let meta = object.meta();
        let json = match serde_json::to_vec(object) {
            Ok(json) => json.into_boxed_slice(),
            Err(error) => {
                tracing::warn!(%error, name = ?meta.name, "an object that does not encode is not held");
                return None;
            }
        };
        Some((
            meta.namespace.clone().unwrap_or_default(),
            meta.name.clone().unwrap_or_default(),
            Entry {
                group: (self.group_of)(object).unwrap_or_default().into(),
                json,
            },
        ))
    }

    fn decode(&self, entry: &Entry) -> Option<K> {
        // The store encoded it from a typed object: it decodes unless the type changed
        // under a running process, which cannot happen.
        serde_json::from_slice(&entry.json)
            .inspect_err(|error| tracing::warn!(%error, "a held object does not decode"))
            .ok()
    }
}

impl<K> Default for JsonStore<K>
where
    K: Resource + Serialize + DeserializeOwned,
{
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests;
