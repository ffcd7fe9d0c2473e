//! A watch-backed copy of the cluster's Hecate objects, for servers that answer many
//! questions a second.
//!
//! One watch per kind (cluster-wide) keeps a [`JsonStore`] current: each object held
//! as its JSON by namespace, without managed fields — at a fleet's scale a Bundle
//! decoded takes well over twice its text (DECISIONS 142, 144). Reads judge a snapshot
//! of one namespace instead of LISTing, so a request costs the API server nothing. A
//! namespace's snapshot is decoded from that namespace's objects once per change
//! there and shared (`Arc`) by every request until the next change — the most
//! recently read namespaces' snapshots are kept, not every namespace's — and a Gate's
//! explanation once per change (or window opening or closing) too. The answers are the
//! direct path's: the same rules over the same objects, a watch's latency later
//! (milliseconds). Writes never read from here.

use std::collections::HashMap;
use std::fmt::Debug;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::{FutureExt as _, StreamExt as _};
use hecate_types::lenient::{Lenient, Placeholder};
use hecate_types::{Beacon, Bundle, Gate, Passage};
use jiff::Timestamp;
use k8s_openapi::NamespaceResourceScope;
use kube::api::Api;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt as _};
use lru::LruCache;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::Kind;
use crate::json_store::{self, JsonStore};
use crate::model::Explanation;
use crate::rules::overview::NamespacePart;
use crate::rules::{self, NamespaceSnapshot};
use crate::watch::Change;

/// How many changes a follower of [`Cache::subscribe`] may fall behind before it is
/// told it lost some (and should read again).
const FOLLOWERS_BACKLOG: usize = 4096;

/// How many namespaces' snapshots are kept decoded: those of the namespaces read most
/// recently. At a fleet's scale one is a few MiB (500 Bundles and 500 Passages); a
/// namespace read again after it was dropped is decoded again, in milliseconds.
const SNAPSHOTS_KEPT: NonZeroUsize = NonZeroUsize::new(32).unwrap();

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
    gates: JsonStore<Gate>,
    bundles: JsonStore<Bundle>,
    passages: JsonStore<Passage>,
    beacons: JsonStore<Beacon>,
    /// Bumped when a store is (re)listed: every snapshot is then stale.
    epoch: AtomicU64,
    /// Per namespace, bumped on every change there.
    changes: Mutex<HashMap<String, u64>>,
    /// Per namespace read lately, the snapshot and the version it was built at.
    snapshots: Mutex<LruCache<String, (Version, Arc<NamespaceSnapshot>)>>,
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
        let inner = Arc::new(Inner {
            gates: JsonStore::new(),
            bundles: JsonStore::new(),
            passages: JsonStore::new(),
            beacons: JsonStore::new(),
            epoch: AtomicU64::new(0),
            changes: Mutex::new(HashMap::new()),
            snapshots: Mutex::new(LruCache::new(SNAPSHOTS_KEPT)),
            explanations: Mutex::new(HashMap::new()),
            overview_parts: Mutex::new(HashMap::new()),
            followers: tokio::sync::broadcast::channel(FOLLOWERS_BACKLOG).0,
        });
        let driver = futures::future::join4(
            follow(
                Kind::Gate,
                client.clone(),
                inner.gates.clone(),
                inner.clone(),
            ),
            follow(
                Kind::Bundle,
                client.clone(),
                inner.bundles.clone(),
                inner.clone(),
            ),
            follow(
                Kind::Passage,
                client.clone(),
                inner.passages.clone(),
                inner.clone(),
            ),
            follow(Kind::Beacon, client, inner.beacons.clone(), inner.clone()),
        )
        .map(drop);
        (Self { inner }, driver)
    }

    /// Waits until every kind has been listed once.
    pub async fn ready(&self) {
        let inner = &self.inner;
        futures::join!(
            inner.gates.ready(),
            inner.bundles.ready(),
            inner.passages.ready(),
            inner.beacons.ready()
        );
    }

    /// Whether every kind has been listed once; until then [`crate::Ops`] reads from
    /// the API server directly.
    pub fn is_ready(&self) -> bool {
        let inner = &self.inner;
        inner.gates.is_ready()
            && inner.bundles.is_ready()
            && inner.passages.is_ready()
            && inner.beacons.is_ready()
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
        let snapshot = Arc::new(NamespaceSnapshot::new(
            namespace,
            inner.gates.in_namespace(namespace),
            inner.bundles.in_namespace(namespace),
            inner.passages.in_namespace(namespace),
        ));
        inner
            .snapshots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .put(namespace.to_string(), (version, snapshot.clone()));
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
        let mut namespaces = self.inner.gates.namespaces();
        namespaces.extend(self.inner.beacons.namespaces());
        namespaces.into_iter().collect()
    }

    /// The namespaces holding a Gate, sorted.
    pub(crate) fn gate_namespaces(&self) -> Vec<String> {
        self.inner.gates.namespaces().into_iter().collect()
    }

    /// The Beacons of `namespace`, any order.
    pub(crate) fn beacons(&self, namespace: &str) -> Vec<Beacon> {
        self.inner.beacons.in_namespace(namespace)
    }
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

/// Keeps one kind's store current, forever, backing off on errors.
async fn follow<K>(kind: Kind, client: kube::Client, store: JsonStore<K>, inner: Arc<Inner>)
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Placeholder
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    crate::lenient::watcher(
        Api::<Lenient<K>>::all(client),
        list_like_informers(),
        move |bad| crate::lenient::warn(kind, bad),
    )
    .default_backoff()
    .modify(|object| object.meta_mut().managed_fields = None)
    .for_each(|event| {
        match event {
            Ok(event) => match store.apply(event) {
                json_store::Change::Applied { now: object, .. }
                | json_store::Change::Deleted(object) => {
                    let namespace = object.meta().namespace.clone().unwrap_or_default();
                    inner.changed(&namespace);
                    // No followers is not an error.
                    let _ = inner.followers.send(Some(Change {
                        kind,
                        namespace,
                        name: object.name_any(),
                    }));
                }
                json_store::Change::Listed { first, .. } => {
                    inner.epoch.fetch_add(1, Ordering::AcqRel);
                    if !first {
                        let _ = inner.followers.send(None);
                    }
                }
                json_store::Change::Nothing => {}
            },
            // The watcher backs off and retries; the store keeps its last state.
            Err(error) => {
                tracing::warn!(kind = K::kind(&()).as_ref(), %error, "watch failed; retrying")
            }
        }
        futures::future::ready(())
    })
    .await;
}
