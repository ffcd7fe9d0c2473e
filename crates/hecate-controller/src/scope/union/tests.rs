//! The merge against watches the test drives, through a real store writer: what the
//! store holds after each turn is what a controller would read.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use futures::channel::mpsc;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::Event;
use tokio::sync::watch;

use super::{Item, Union};
use hecate_ops::json_store::JsonStore;

type Senders = Arc<Mutex<BTreeMap<String, mpsc::UnboundedSender<Item<ConfigMap>>>>>;

/// A shard's watches the test sends events into, the store they fill, and the
/// namespaces the shard holds.
struct World {
    senders: Senders,
    store: Store<ConfigMap>,
    /// The Gate loop's kind of store, when the merge fills that one instead.
    json: Option<JsonStore<ConfigMap>>,
    namespaces: watch::Sender<Option<Arc<BTreeSet<String>>>>,
}

impl World {
    fn start(namespaces: Option<&[&str]>) -> Self {
        Self::filling(namespaces, false)
    }

    /// A merge filling a [`JsonStore`], applied in the task that polls the merge (as
    /// the Gate loop's wakes do).
    fn start_json(namespaces: Option<&[&str]>) -> Self {
        Self::filling(namespaces, true)
    }

    fn filling(namespaces: Option<&[&str]>, json: bool) -> Self {
        let senders: Senders = Arc::default();
        let (publish, receiver) = watch::channel(
            namespaces.map(|set| Arc::new(set.iter().map(|ns| ns.to_string()).collect())),
        );
        let (store, writer) = reflector::store::<ConfigMap>();
        let watch = {
            let senders = senders.clone();
            move |namespace: &str| {
                let (sender, receiver) = mpsc::unbounded();
                senders.lock().unwrap().insert(namespace.into(), sender);
                receiver.boxed()
            }
        };
        let json = json.then(JsonStore::<ConfigMap>::new);
        if let Some(json) = json.clone() {
            let events = Union::new(receiver, watch, Box::new(json.clone())).into_stream();
            tokio::spawn(events.for_each(move |event| {
                if let Ok(event) = event {
                    json.apply(event);
                }
                async {}
            }));
        } else {
            let events = Union::new(receiver, watch, Box::new(store.clone()))
                .into_stream()
                .reflect(writer);
            tokio::spawn(events.for_each(|_| async {}));
        }
        Self {
            senders,
            store,
            json,
            namespaces: publish,
        }
    }

    /// Sends `events` on `namespace`'s watch (once the merge has started it).
    async fn send(&self, namespace: &str, events: Vec<Event<ConfigMap>>) {
        let sender = loop {
            if let Some(sender) = self.senders.lock().unwrap().get(namespace).cloned() {
                break sender;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        for event in events {
            // A stopped watch no longer reads: what it would have said is lost, as
            // a real one's would be.
            let _ = sender.unbounded_send(Ok(event));
        }
    }

    fn shard(&self, namespaces: &[&str]) {
        self.namespaces.send_replace(Some(Arc::new(
            namespaces.iter().map(|ns| ns.to_string()).collect(),
        )));
    }

    /// What the store holds, as `namespace/name`, once it settles on `want`.
    async fn holds(&self, want: &[&str]) -> Vec<String> {
        let mut held = Vec::new();
        for _ in 0..200 {
            held = self.held();
            if held == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        held
    }

    fn held(&self) -> Vec<String> {
        let objects: Vec<ConfigMap> = match &self.json {
            Some(json) => json
                .namespaces()
                .iter()
                .flat_map(|ns| json.in_namespace(ns))
                .collect(),
            None => self
                .store
                .state()
                .iter()
                .map(|cm| ConfigMap::clone(cm))
                .collect(),
        };
        let mut held: Vec<String> = objects
            .iter()
            .map(|cm| {
                format!(
                    "{}/{}",
                    cm.metadata.namespace.as_deref().unwrap_or_default(),
                    cm.metadata.name.as_deref().unwrap_or_default()
                )
            })
            .collect();
        held.sort();
        held
    }
}

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

fn listed(namespace: &str, names: &[&str]) -> Vec<Event<ConfigMap>> {
    let mut events = vec![Event::Init];
    events.extend(
        names
            .iter()
            .map(|name| Event::InitApply(cm(namespace, name))),
    );
    events.push(Event::InitDone);
    events
}

async fn ready_within(store: &Store<ConfigMap>, wait: Duration) -> bool {
    tokio::time::timeout(wait, store.wait_until_ready())
        .await
        .is_ok()
}

#[tokio::test]
async fn the_first_list_ends_when_every_namespace_has_listed() {
    let world = World::start(Some(&["a", "b"]));
    world.send("a", listed("a", &["1", "2"])).await;
    assert!(
        !ready_within(&world.store, Duration::from_millis(100)).await,
        "b has not listed: the store is not ready"
    );
    // A change in a listed namespace before the first list ends is held, not lost.
    world.send("a", vec![Event::Apply(cm("a", "3"))]).await;
    world.send("b", listed("b", &["1"])).await;
    assert!(ready_within(&world.store, Duration::from_secs(2)).await);
    assert_eq!(
        world.holds(&["a/1", "a/2", "a/3", "b/1"]).await,
        ["a/1", "a/2", "a/3", "b/1"],
        "b's end of its list did not replace a's objects"
    );
}

#[tokio::test]
async fn a_shard_of_no_namespaces_is_ready_and_empty() {
    let world = World::start(Some(&[]));
    assert!(ready_within(&world.store, Duration::from_secs(2)).await);
    assert!(world.held().is_empty());
}

#[tokio::test]
async fn nothing_is_listed_before_the_shards_namespaces_are() {
    let world = World::start(None);
    assert!(!ready_within(&world.store, Duration::from_millis(100)).await);
    world.shard(&["a"]);
    world.send("a", listed("a", &["1"])).await;
    assert!(ready_within(&world.store, Duration::from_secs(2)).await);
    assert_eq!(world.holds(&["a/1"]).await, ["a/1"]);
}

#[tokio::test]
async fn a_namespace_listed_again_loses_what_its_list_no_longer_names() {
    listed_again(World::start(Some(&["a", "b"]))).await;
    listed_again(World::start_json(Some(&["a", "b"]))).await;
}

async fn listed_again(world: World) {
    world.send("a", listed("a", &["1", "2"])).await;
    world.send("b", listed("b", &["1"])).await;
    assert_eq!(
        world.holds(&["a/1", "a/2", "b/1"]).await,
        ["a/1", "a/2", "b/1"]
    );
    // Its watch expired and listed again: a/1 was deleted meanwhile, a/4 created.
    world.send("a", listed("a", &["2", "4"])).await;
    assert_eq!(
        world.holds(&["a/2", "a/4", "b/1"]).await,
        ["a/2", "a/4", "b/1"],
        "b kept what it has"
    );
}

#[tokio::test]
async fn a_namespace_that_leaves_is_dropped_and_one_that_joins_is_listed() {
    leaves_and_joins(World::start(Some(&["a", "b"]))).await;
    leaves_and_joins(World::start_json(Some(&["a", "b"]))).await;
}

async fn leaves_and_joins(world: World) {
    world.send("a", listed("a", &["1"])).await;
    world.send("b", listed("b", &["1"])).await;
    assert_eq!(world.holds(&["a/1", "b/1"]).await, ["a/1", "b/1"]);

    world.shard(&["b", "c"]);
    assert_eq!(world.holds(&["b/1"]).await, ["b/1"], "a left the shard");
    // What a's stopped watch would still say changes nothing.
    world.send("a", vec![Event::Apply(cm("a", "2"))]).await;
    world.send("c", listed("c", &["1"])).await;
    assert_eq!(world.holds(&["b/1", "c/1"]).await, ["b/1", "c/1"]);
    world.send("c", vec![Event::Delete(cm("c", "1"))]).await;
    assert_eq!(world.holds(&["b/1"]).await, ["b/1"]);
}

#[tokio::test]
async fn a_namespace_that_leaves_during_the_first_list_leaves_nothing_behind() {
    let world = World::start(Some(&["a", "b"]));
    world.send("a", listed("a", &["1"])).await;
    world.shard(&["b"]);
    world.send("b", listed("b", &["1"])).await;
    assert!(ready_within(&world.store, Duration::from_secs(2)).await);
    assert_eq!(world.holds(&["b/1"]).await, ["b/1"]);
}
