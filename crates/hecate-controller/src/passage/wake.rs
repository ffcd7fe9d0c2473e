//! Waking a waiting Passage the moment what it waits for changes, rather than at its
//! next look (spec §3.3: "woken by a watch on what it waits for").
//!
//! A waiting step says what it waits for ([`Wake::wait_for`]); the first wait on a
//! kind starts one watch on that kind, cluster-wide, that keeps nothing: it only
//! looks up who waits for the object that changed and wakes them, once. The step's
//! own retry timer stays the fallback — for the moment between a step's look and its
//! registration, a watch that is down or forbidden, and remote clusters, which are
//! not watched.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::StreamExt as _;
use futures::channel::mpsc;
use hecate_steps::flux_wait::Wake;
use hecate_types::Passage;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt as _, watcher};

/// An object waited for: (group, kind, namespace, name). The version is left out: an
/// object is the same whichever version it is read at.
type Key = (String, String, String, String);

/// Who waits for what, and the watches that tell them. Cheap to clone.
#[derive(Clone)]
pub struct Watches {
    inner: Arc<Inner>,
}

struct Inner {
    client: kube::Client,
    waiting: Mutex<HashMap<Key, HashSet<ObjectRef<Passage>>>>,
    watched: Mutex<HashSet<(String, String)>>,
    wake: mpsc::UnboundedSender<ObjectRef<Passage>>,
}

/// The Passages to wake, for the Passage controller's `reconcile_on`.
pub type Wakes = mpsc::UnboundedReceiver<ObjectRef<Passage>>;

impl Watches {
    /// Wakes through watches on `client`'s cluster; the Passages woken come out of the
    /// returned stream.
    pub fn new(client: kube::Client) -> (Self, Wakes) {
        let (wake, wakes) = mpsc::unbounded();
        let inner = Inner {
            client,
            waiting: Mutex::default(),
            watched: Mutex::default(),
            wake,
        };
        (
            Self {
                inner: Arc::new(inner),
            },
            wakes,
        )
    }

    /// How many objects someone waits for (for tests and metrics).
    pub fn waiting(&self) -> usize {
        lock(&self.inner.waiting).len()
    }
}

impl Wake for Watches {
    /// Wake Passage `passage` of `namespace` the next time object `name` of kind `gvk`
    /// in `object_namespace` changes. Call it before looking at the object, so a
    /// change between the look and this call is not missed.
    fn wait_for(
        &self,
        gvk: &GroupVersionKind,
        object_namespace: &str,
        name: &str,
        namespace: &str,
        passage: &str,
    ) {
        let key = key(&gvk.group, &gvk.kind, object_namespace, name);
        lock(&self.inner.waiting)
            .entry(key)
            .or_default()
            .insert(ObjectRef::new(passage).within(namespace));
        let kind = (gvk.group.clone(), gvk.kind.clone());
        if lock(&self.inner.watched).insert(kind) {
            tokio::spawn(watch(self.inner.clone(), gvk.clone()));
        }
    }

    /// The Passage no longer waits for this object (it found it ready).
    fn forget(
        &self,
        gvk: &GroupVersionKind,
        object_namespace: &str,
        name: &str,
        namespace: &str,
        passage: &str,
    ) {
        let key = key(&gvk.group, &gvk.kind, object_namespace, name);
        let mut waiting = lock(&self.inner.waiting);
        if let Some(passages) = waiting.get_mut(&key) {
            passages.remove(&ObjectRef::new(passage).within(namespace));
            if passages.is_empty() {
                waiting.remove(&key);
            }
        }
    }
}

fn key(group: &str, kind: &str, namespace: &str, name: &str) -> Key {
    (group.into(), kind.into(), namespace.into(), name.into())
}

/// Watches one kind for as long as the process runs, waking whoever waits for an
/// object that changed. Objects listed when the watch (re)starts wake nobody: they
/// did not change, and a missed change is caught by the step's own timer.
async fn watch(inner: Arc<Inner>, gvk: GroupVersionKind) {
    let resource = match kube::discovery::pinned_kind(&inner.client, &gvk).await {
        Ok((resource, _)) => resource,
        Err(error) => {
            tracing::info!(kind = %gvk.kind, group = %gvk.group, %error,
                "cannot resolve a kind waited for; steps waiting on it look on their own timer");
            lock(&inner.watched).remove(&(gvk.group, gvk.kind));
            return;
        }
    };
    let api: Api<DynamicObject> = Api::all_with(inner.client.clone(), &resource);
    let mut warned = false;
    let mut events = watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Apply(object) | watcher::Event::Delete(object)) => {
                wake_waiting(&inner, &resource, &object);
            }
            Ok(_) => {}
            Err(error) if !warned => {
                warned = true;
                tracing::warn!(kind = %gvk.kind, group = %gvk.group, %error,
                    "cannot watch a kind waited for; steps waiting on it look on their own timer");
            }
            Err(_) => {}
        }
    }
}

fn wake_waiting(inner: &Inner, resource: &ApiResource, object: &DynamicObject) {
    let key = key(
        &resource.group,
        &resource.kind,
        object.metadata.namespace.as_deref().unwrap_or_default(),
        object.metadata.name.as_deref().unwrap_or_default(),
    );
    let Some(passages) = lock(&inner.waiting).remove(&key) else {
        return;
    };
    for passage in passages {
        // The receiver goes only when the controller stops: nothing left to wake.
        let _ = inner.wake.unbounded_send(passage);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kustomization() -> GroupVersionKind {
        GroupVersionKind::gvk("kustomize.toolkit.fluxcd.io", "v1", "Kustomization")
    }

    #[tokio::test]
    async fn a_change_wakes_each_waiting_passage_once_and_forgetting_stops_it() {
        let config = kube::Config::new("http://127.0.0.1:1".parse().expect("a URL"));
        let client = kube::Client::try_from(config).expect("a client");
        let (wake, mut wakes) = Watches::new(client);
        let gvk = kustomization();
        wake.wait_for(&gvk, "shop", "app", "shop", "dev-1");
        wake.wait_for(&gvk, "shop", "app", "shop", "dev-1");
        wake.wait_for(&gvk, "shop", "app", "shop", "dev-2");
        wake.wait_for(&gvk, "shop", "infra", "shop", "dev-3");
        wake.forget(&gvk, "shop", "infra", "shop", "dev-3");
        assert_eq!(wake.waiting(), 1);

        let resource = ApiResource::from_gvk(&gvk);
        let mut changed = DynamicObject::new("app", &resource).within("shop");
        wake_waiting(&wake.inner, &resource, &changed);
        let mut woken = vec![
            wakes.next().await.expect("a wake").name,
            wakes.next().await.expect("a wake").name,
        ];
        woken.sort();
        assert_eq!(woken, ["dev-1", "dev-2"]);

        // Once: a second change wakes nobody who did not wait again.
        changed.metadata.resource_version = Some("2".into());
        wake_waiting(&wake.inner, &resource, &changed);
        assert_eq!(wake.waiting(), 0);
        assert!(wakes.try_recv().is_err(), "nothing more to wake");
    }
}
