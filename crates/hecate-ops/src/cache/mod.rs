//! A watch-backed copy of the cluster's Hecate objects, for servers that answer many
//! questions a second.
//!
//! One reflector per kind (cluster-wide, metadata's managed fields dropped to save
//! memory) keeps a store current, and an index beside it which names each namespace
//! holds; reads judge a snapshot of the stores instead of LISTing, so a request costs
//! the API server nothing. A namespace's snapshot is built from that namespace's
//! objects (never a walk of the cluster's) once per change there, and shared (`Arc`)
//! by every request until the next change, and a Gate's explanation once per change
//! (or window opening or closing) too. The answers are the direct path's: the same rules over the same
//! objects, a watch's latency later (milliseconds). Writes never read from here.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::{FutureExt as _, StreamExt as _};
use hecate_types::lenient::{Lenient, Placeholder};
use hecate_types::{Beacon, Bundle, Gate, Passage};
use jiff::Timestamp;
use k8s_openapi::NamespaceResourceScope;
use kube::api::Api;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::{Resource, ResourceExt as _};
use serde::de::DeserializeOwned;

use crate::error::Kind;
use crate::model::Explanation;
use crate::rules::overview::NamespacePart;
use crate::rules::{self, NamespaceSnapshot};
use crate::watch::Change;

mod index;

use index::NamespaceIndex;

/// How many changes a follower of [`Cache::subscribe`] may fall behind before it is
/// told it lost some (and should read again).
const FOLLOWERS_BACKLOG: usize = 4096;

/// What the cache tells its followers: a change, or `None` when a kind was listed
/// again (after a lost watch) and anything may have changed.
pub(crate) type Followed = Option<Change>;

/// The stores, and which namespaces changed since their snapshot was built.
#[derive(Clone)]
pub struct Cache {
    inner: Arc<Inner>,
}

/// (epoch, changes in the namespace): a snapshot built at a version is current while
/// the version is.
type Version = (u64, u64);

struct Inner {
    gates: Store<Gate>,
    bundles: Store<Bundle>,
    passages: Store<Passage>,
    beacons: Store<Beacon>,
    /// Which names each namespace holds, per kind; updated after the store, before
    /// the namespace's version moves.
    indexes: Mutex<Indexes>,
    /// Bumped when a store is (re)listed: every snapshot is then stale.
    epoch: AtomicU64,
    /// How many kinds have been listed at least once.
    listed: AtomicUsize,
    /// Per namespace, bumped on every change there.
    changes: Mutex<HashMap<String, u64>>,
    /// Per namespace, the snapshot and the version it was built at.
    snapshots: Mutex<HashMap<String, (Version, Arc<NamespaceSnapshot>)>>,
    /// Per (namespace, Gate), the last explanation, its namespace's version and until
    /// when the clock leaves it standing.
    explanations: Mutex<HashMap<(String, String), Remembered<Explanation>>>,
    /// Per namespace, its last share of the Overview, standing while all of its
    /// Gates' explanations do.
    overview_parts: Mutex<HashMap<String, Remembered<NamespacePart>>>,
    /// Every change, told to whoever follows (the API's event streams): the stores'
    /// one set of watches serves them all.
    followers: tokio::sync::broadcast::Sender<Followed>,
}

/// One [`NamespaceIndex`] per kind.
#[derive(Default)]
struct Indexes {
    gates: NamespaceIndex,
    bundles: NamespaceIndex,
    passages: NamespaceIndex,
    beacons: NamespaceIndex,
}

impl Indexes {
    fn of(&mut self, kind: Kind) -> &mut NamespaceIndex {
        match kind {
            Kind::Gate => &mut self.gates,
            Kind::Bundle => &mut self.bundles,
            Kind::Passage => &mut self.passages,
            Kind::Beacon => &mut self.beacons,
        }
    }
}

/// A remembered answer: it stands for `version` from `from` until `until`.
struct Remembered<T> {
    version: Version,
    from: Timestamp,
    until: Option<Timestamp>,
    value: Arc<T>,
}

impl<T> Remembered<T> {
    /// Whether it is still the answer at `version` and `now`.
    fn stands(&self, version: Version, now: Timestamp) -> bool {
        self.version == version && self.from <= now && self.until.is_none_or(|until| now < until)
    }
}

impl Inner {
    fn indexes(&self) -> std::sync::MutexGuard<'_, Indexes> {
        self.indexes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn changed(&self, namespace: &str) {
        *self
            .changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(namespace.to_string())
            .or_default() += 1;
    }

    fn version(&self, namespace: &str) -> Version {
        let changes = self
            .changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(namespace)
            .copied()
            .unwrap_or(0);
        (self.epoch.load(Ordering::Acquire), changes)
    }
}

impl Cache {
    /// Starts following the cluster with `client` (which must be allowed to list and
    /// watch the four kinds cluster-wide). The returned future drives the watches — it
    /// never ends; spawn it. Reads wait for [`Cache::ready`].
    pub fn start(client: kube::Client) -> (Self, impl Future<Output = ()> + Send + 'static) {
        let (gates, gates_writer) = reflector::store();
        let (bundles, bundles_writer) = reflector::store();
        let (passages, passages_writer) = reflector::store();
        let (beacons, beacons_writer) = reflector::store();
        let inner = Arc::new(Inner {
            gates,
            bundles,
            passages,
            beacons,
            indexes: Mutex::new(Indexes::default()),
            epoch: AtomicU64::new(0),
            listed: AtomicUsize::new(0),
            changes: Mutex::new(HashMap::new()),
            snapshots: Mutex::new(HashMap::new()),
            explanations: Mutex::new(HashMap::new()),
            overview_parts: Mutex::new(HashMap::new()),
            followers: tokio::sync::broadcast::channel(FOLLOWERS_BACKLOG).0,
        });
        let driver = futures::future::join4(
            follow::<Gate>(Kind::Gate, client.clone(), gates_writer, inner.clone()),
            follow::<Bundle>(Kind::Bundle, client.clone(), bundles_writer, inner.clone()),
            follow::<Passage>(
                Kind::Passage,
                client.clone(),
                passages_writer,
                inner.clone(),
            ),
            follow::<Beacon>(Kind::Beacon, client, beacons_writer, inner.clone()),
        )
        .map(drop);
        (Self { inner }, driver)
    }

    /// Waits until every kind has been listed once.
    pub async fn ready(&self) {
        let inner = &self.inner;
        let _ = futures::join!(
            inner.gates.wait_until_ready(),
            inner.bundles.wait_until_ready(),
            inner.passages.wait_until_ready(),
            inner.beacons.wait_until_ready()
        );
    }

    /// Whether every kind has been listed once; until then [`crate::Ops`] reads from
    /// the API server directly.
    pub fn is_ready(&self) -> bool {
        self.inner.listed.load(Ordering::Acquire) == KINDS
    }

    /// Every change from now on, as the stores see it (after they have applied it), at
    /// no cost to the API server however many follow. `None` says a kind was listed
    /// again and anything may have changed; a follower that falls behind by more
    /// than a few thousand changes is told so by the receiver (`Lagged`).
    pub(crate) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Followed> {
        self.inner.followers.subscribe()
    }

    /// The snapshot of `namespace` as the stores hold it now.
    pub(crate) fn snapshot(&self, namespace: &str) -> Arc<NamespaceSnapshot> {
        let inner = &self.inner;
        let version = inner.version(namespace);
        if let Some((built, snapshot)) = inner
            .snapshots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(namespace)
            && *built == version
        {
            return snapshot.clone();
        }
        let (gates, bundles, passages) = {
            let indexes = inner.indexes();
            (
                indexes.gates.names(namespace),
                indexes.bundles.names(namespace),
                indexes.passages.names(namespace),
            )
        };
        let snapshot = Arc::new(NamespaceSnapshot::shared(
            namespace,
            objects(&inner.gates, namespace, &gates),
            objects(&inner.bundles, namespace, &bundles),
            objects(&inner.passages, namespace, &passages),
        ));
        inner
            .snapshots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(namespace.to_string(), (version, snapshot.clone()));
        snapshot
    }

    /// Gate `gate` of `namespace` explained at `now`, or `None` when there is no such
    /// Gate. Judged once per change in the namespace — and again when a window of
    /// the Gate opens or closes, the one way time enters an explanation — so a busy
    /// page costs a clone, not a judgement of every Bundle.
    pub(crate) fn explain(
        &self,
        namespace: &str,
        gate: &str,
        now: Timestamp,
    ) -> Option<Arc<Explanation>> {
        self.explained(namespace, gate, now)
            .map(|(explanation, _)| explanation)
    }

    /// [`Cache::explain`], and until when the clock leaves it standing.
    fn explained(
        &self,
        namespace: &str,
        gate: &str,
        now: Timestamp,
    ) -> Option<(Arc<Explanation>, Option<Timestamp>)> {
        let inner = &self.inner;
        // Read before the snapshot: if a change lands in between, the explanation is
        // remembered under the older version and judged again on the next call.
        let version = inner.version(namespace);
        let key = (namespace.to_string(), gate.to_string());
        if let Some(known) = inner
            .explanations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            && known.stands(version, now)
        {
            return Some((known.value.clone(), known.until));
        }
        let snapshot = self.snapshot(namespace);
        let found = snapshot.gate(gate)?;
        let explanation = Arc::new(rules::explain::explain(&snapshot, found, now));
        let until = rules::explain::unchanged_until(&snapshot, found, now);
        inner
            .explanations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                key,
                Remembered {
                    version,
                    from: now,
                    until,
                    value: explanation.clone(),
                },
            );
        Some((explanation, until))
    }

    /// `namespace`'s share of the Overview at `now` (`None`: it holds no Gate). Built
    /// once per change in the namespace, or when one of its Gates' explanations
    /// changes with the clock, so an Overview from the cache costs what putting the
    /// shares together costs (docs/DECISIONS.md 125).
    pub(crate) fn overview_part(
        &self,
        namespace: &str,
        now: Timestamp,
    ) -> Option<Arc<NamespacePart>> {
        let inner = &self.inner;
        let version = inner.version(namespace);
        if let Some(known) = inner
            .overview_parts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(namespace)
            && known.stands(version, now)
        {
            return Some(known.value.clone());
        }
        let snapshot = self.snapshot(namespace);
        let mut until: Option<Timestamp> = None;
        let part = rules::overview::namespace_part(&snapshot, |gate| {
            let (explanation, stands_until) = self
                .explained(namespace, &gate.name_any(), now)
                .unwrap_or_else(|| {
                    // The Gate went between the snapshot and this look: judged here,
                    // and the next change rebuilds the share.
                    let explanation = rules::explain::explain(&snapshot, gate, now);
                    (Arc::new(explanation), Some(now))
                });
            until = until.into_iter().chain(stands_until).min();
            explanation
        })?;
        let part = Arc::new(part);
        inner
            .overview_parts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                namespace.to_string(),
                Remembered {
                    version,
                    from: now,
                    until,
                    value: part.clone(),
                },
            );
        Some(part)
    }

    /// The namespaces holding a Gate or a Beacon, sorted.
    pub(crate) fn namespaces(&self) -> Vec<String> {
        let indexes = self.inner.indexes();
        let namespaces: BTreeSet<&str> = indexes
            .gates
            .namespaces()
            .chain(indexes.beacons.namespaces())
            .collect();
        namespaces.into_iter().map(str::to_string).collect()
    }

    /// The namespaces holding a Gate, sorted.
    pub(crate) fn gate_namespaces(&self) -> Vec<String> {
        let indexes = self.inner.indexes();
        let namespaces: BTreeSet<&str> = indexes.gates.namespaces().collect();
        namespaces.into_iter().map(str::to_string).collect()
    }

    /// The Beacons of `namespace`, by name.
    pub(crate) fn beacons(&self, namespace: &str) -> Vec<Arc<Beacon>> {
        let names = self.inner.indexes().beacons.names(namespace);
        objects(&self.inner.beacons, namespace, &names)
    }
}

/// The objects of `store` in `namespace` named `names` (those still there).
fn objects<K>(store: &Store<K>, namespace: &str, names: &[String]) -> Vec<Arc<K>>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    names
        .iter()
        .filter_map(|name| store.get(&ObjectRef::new(name).within(namespace)))
        .collect()
}

/// Lists as client-go's informers do: from the API server's watch cache (any recent
/// state — the watch brings it current), streamed as the watch's first events where
/// the server streams lists, else 500 objects a page. Either way the objects arrive a
/// few at a time: in one response, 10,000 Passages with their managed fields were all
/// held at once, and the server kept 150 MiB resident for good (DECISION 28); a
/// streamed list needs no page round trips (DECISION 143).
fn list_like_informers() -> watcher::Config {
    watcher::Config {
        page_size: Some(500),
        ..watcher::Config::default().any_semantic().streaming_lists()
    }
}

/// Gates, Bundles, Passages, Beacons.
const KINDS: usize = 4;

/// Keeps one kind's store current, forever, backing off on errors.
async fn follow<K>(
    kind: Kind,
    client: kube::Client,
    writer: reflector::store::Writer<K>,
    inner: Arc<Inner>,
) where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Placeholder
        + Clone
        + Debug
        + DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let mut listed = false;
    crate::lenient::watcher(
        Api::<Lenient<K>>::all(client),
        list_like_informers(),
        move |bad| crate::lenient::warn(kind, bad),
    )
    .default_backoff()
    .modify(|object| object.meta_mut().managed_fields = None)
    .reflect(writer)
    .for_each(|event| {
        if let Ok(event) = &event {
            index(inner.indexes().of(kind), event);
        }
        match event {
            Ok(Event::Apply(object) | Event::Delete(object)) => {
                let namespace = object.meta().namespace.clone().unwrap_or_default();
                inner.changed(&namespace);
                // No followers is not an error.
                let _ = inner.followers.send(Some(Change {
                    kind,
                    namespace,
                    name: object.name_any(),
                }));
            }
            Ok(Event::InitDone) => {
                inner.epoch.fetch_add(1, Ordering::AcqRel);
                if std::mem::replace(&mut listed, true) {
                    let _ = inner.followers.send(None);
                } else {
                    inner.listed.fetch_add(1, Ordering::AcqRel);
                }
            }
            Ok(Event::Init | Event::InitApply(_)) => {}
            // The watcher backs off and retries; the store keeps its last state.
            Err(error) => {
                tracing::warn!(kind = K::kind(&()).as_ref(), %error, "watch failed; retrying")
            }
        }
        futures::future::ready(())
    })
    .await;
}

/// Tells `index` of `event`, which the store has applied already.
fn index<K: Resource>(index: &mut NamespaceIndex, event: &Event<K>) {
    let key = |object: &K| {
        let meta = object.meta();
        (
            meta.namespace.clone().unwrap_or_default(),
            meta.name.clone().unwrap_or_default(),
        )
    };
    match event {
        Event::Init => index.init(),
        Event::InitApply(object) => {
            let (namespace, name) = key(object);
            index.init_apply(&namespace, &name);
        }
        Event::InitDone => index.init_done(),
        Event::Apply(object) => {
            let (namespace, name) = key(object);
            index.apply(&namespace, &name);
        }
        Event::Delete(object) => {
            let (namespace, name) = key(object);
            index.delete(&namespace, &name);
        }
    }
}
