//! Which namespaces this controller acts in, and watches that see only those (DECISION
//! 133). By default it acts everywhere and each kind has one cluster-wide watch; with
//! `--watch-label-selector` it acts in the namespaces whose labels match, so several
//! controllers split a fleet between them (Flux's `sharding.fluxcd.io/key` convention,
//! applied to namespaces: every object of a namespace — Gates, their Passages, the
//! Bundles they judge — belongs to exactly one shard, and a shard never writes
//! another's objects).
//!
//! A shard's watches are its own: one watch per namespace of the shard ([`union`]),
//! never a cluster-wide list filtered afterwards, so a shard holds and is sent only
//! its share. The set of namespaces comes from one watch of the matching namespaces
//! for the whole process; a namespace that joins is listed and watched, one that
//! leaves (relabelled to another shard) is dropped from every store at once, and from
//! then on no step starts there ([`Scope::holds`]).

mod union;

use std::collections::BTreeSet;
use std::sync::Arc;

use futures::{Stream, TryStreamExt as _};
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::Store;
use kube::runtime::watcher::{self, Event};
use tokio::sync::watch;

/// The namespaces of a shard: `None` until their first full list.
type Namespaces = watch::Receiver<Option<Arc<BTreeSet<String>>>>;

/// A watch's events, as every controller consumes them.
pub type Events<K> = std::pin::Pin<Box<dyn Stream<Item = Result<Event<K>, watcher::Error>> + Send>>;

/// The namespaces a controller acts in.
#[derive(Clone, Default)]
pub enum Scope {
    /// Every namespace.
    #[default]
    Everywhere,
    /// The namespaces whose labels match a selector that names them (`key=shard1`),
    /// as they change: each watched on its own.
    Shard(Namespaces),
    /// The namespaces whose labels match a selector that only excludes (`!key`: the
    /// rest, where no shard acts), as they change: most of the cluster, so watched
    /// across it and filtered.
    Rest(Namespaces),
}

impl Scope {
    /// The scope `selector` chooses (every namespace without one). For a shard it
    /// starts the one watch of its namespaces that every controller of this process
    /// reads.
    pub fn start(client: &kube::Client, selector: Option<&str>) -> Self {
        let Some(selector) = selector else {
            return Self::Everywhere;
        };
        let (publish, namespaces) = watch::channel(None);
        let changes = watcher::watcher(
            Api::<PartialObjectMeta<Namespace>>::all(client.clone()),
            watcher::Config::default().labels(selector),
        )
        .default_backoff();
        tokio::spawn(follow(changes, publish));
        if names_namespaces(selector) {
            Self::Shard(namespaces)
        } else {
            Self::Rest(namespaces)
        }
    }

    /// Whether objects in `namespace` are this controller's. Waits for the first full
    /// list of namespaces: before it, every answer would be "no".
    pub async fn contains(&self, namespace: &str) -> bool {
        match self {
            Self::Everywhere => true,
            Self::Shard(namespaces) | Self::Rest(namespaces) => {
                let mut namespaces = namespaces.clone();
                let Ok(listed) = namespaces.wait_for(Option::is_some).await else {
                    return false;
                };
                listed.as_ref().is_some_and(|set| set.contains(namespace))
            }
        }
    }

    /// Whether `namespace` is this controller's now (no waiting: "no" until the
    /// namespaces are listed). What the steps' fence asks before a step starts.
    pub fn holds(&self, namespace: &str) -> bool {
        match self {
            Self::Everywhere => true,
            Self::Shard(namespaces) | Self::Rest(namespaces) => namespaces
                .borrow()
                .as_ref()
                .is_some_and(|set| set.contains(namespace)),
        }
    }

    /// The events of `K` in this scope: one cluster-wide watch for every namespace, or
    /// one watch per namespace of a shard, merged ([`union`]). `watch` makes the watch
    /// of one namespace (`None`: all of them); `store` is the store these events fill,
    /// which a shard reads to drop what a namespace that left, or a re-listed one, no
    /// longer has. Each watch backs off on its own.
    pub fn watch<K, S>(
        &self,
        watch: impl Fn(Option<String>) -> S + Send + 'static,
        store: impl Holding<K>,
    ) -> Events<K>
    where
        K: kube::Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
        S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
    {
        match self {
            Self::Everywhere | Self::Rest(_) => Box::pin(watch(None).default_backoff()),
            Self::Shard(namespaces) => Box::pin(
                union::Union::new(
                    namespaces.clone(),
                    move |namespace: &str| {
                        Box::pin(watch(Some(namespace.to_string())).default_backoff())
                    },
                    Box::new(store),
                )
                .into_stream(),
            ),
        }
    }
}

/// What a store filled by a scope's events holds, as a shard's merge asks it when a
/// namespace leaves or lists again.
pub trait Holding<K>: Send + 'static {
    /// The namespaces it holds objects in.
    fn namespaces(&self) -> BTreeSet<String>;
    /// Its objects in `namespace`.
    fn in_namespace(&self, namespace: &str) -> Vec<K>;
}

impl<K> Holding<K> for Store<K>
where
    K: kube::Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    fn namespaces(&self) -> BTreeSet<String> {
        self.state()
            .iter()
            .filter_map(|o| o.meta().namespace.clone())
            .collect()
    }

    fn in_namespace(&self, namespace: &str) -> Vec<K> {
        self.state()
            .into_iter()
            .filter(|o| o.meta().namespace.as_deref() == Some(namespace))
            .map(Arc::unwrap_or_clone)
            .collect()
    }
}

impl<K> Holding<K> for hecate_ops::json_store::JsonStore<K>
where
    K: kube::Resource + serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
{
    fn namespaces(&self) -> BTreeSet<String> {
        hecate_ops::json_store::JsonStore::namespaces(self)
    }

    fn in_namespace(&self, namespace: &str) -> Vec<K> {
        hecate_ops::json_store::JsonStore::in_namespace(self, namespace)
    }
}

/// Whether a label selector names the namespaces it matches — some requirement asks
/// for a value (`key=v`, `key==v`, `key in (a,b)`) — rather than only excluding
/// (`!key`, `key!=v`, `key notin (a)`) or asking for a key to exist: a shard's own
/// namespaces, few enough to watch one by one, rather than everything but the shards'.
fn names_namespaces(selector: &str) -> bool {
    let mut requirements = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                requirements.push(&selector[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    requirements.push(&selector[start..]);
    requirements.iter().any(|requirement| {
        let requirement = requirement.trim();
        let words: Vec<&str> = requirement
            .split(|c: char| c.is_whitespace() || c == '(')
            .collect();
        if words.contains(&"notin") {
            false
        } else if words.contains(&"in") {
            true
        } else {
            requirement.contains('=') && !requirement.contains("!=")
        }
    })
}

/// A step's side effects happen only in this controller's namespaces.
impl hecate_steps::engine::Fence for Scope {
    fn holds(&self, namespace: &str) -> bool {
        Scope::holds(self, namespace)
    }
}

/// The Kubernetes API for `K` in `namespace`, or in every namespace.
pub fn api<K>(client: &kube::Client, namespace: Option<String>) -> Api<K>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
{
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), &namespace),
        None => Api::all(client.clone()),
    }
}

/// Keeps `publish` holding the namespaces the watch `changes` has listed: the whole set
/// after each full list, and every change after it.
async fn follow<S, K>(changes: S, publish: watch::Sender<Option<Arc<BTreeSet<String>>>>)
where
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send,
    K: kube::Resource,
{
    let mut changes = std::pin::pin!(changes);
    let mut listing = BTreeSet::new();
    loop {
        let event = match changes.try_next().await {
            Ok(Some(event)) => event,
            // The watch backs off and resumes.
            Err(error) => {
                tracing::warn!(%error, "watching the shard's namespaces");
                continue;
            }
            Ok(None) => return,
        };
        let name = |object: &K| object.meta().name.clone().unwrap_or_default();
        match event {
            Event::Init => listing.clear(),
            Event::InitApply(namespace) => {
                listing.insert(name(&namespace));
            }
            Event::InitDone => {
                publish.send_replace(Some(Arc::new(std::mem::take(&mut listing))));
            }
            Event::Apply(namespace) => {
                publish.send_if_modified(|set| set_with(set, |set| set.insert(name(&namespace))));
            }
            Event::Delete(namespace) => {
                publish.send_if_modified(|set| set_with(set, |set| set.remove(&name(&namespace))));
            }
        };
    }
}

/// Changes a listed set of namespaces with `change`, saying whether it changed.
fn set_with(
    set: &mut Option<Arc<BTreeSet<String>>>,
    change: impl FnOnce(&mut BTreeSet<String>) -> bool,
) -> bool {
    set.as_mut().is_some_and(|set| change(Arc::make_mut(set)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ObjectMeta;

    fn namespace(name: &str) -> Namespace {
        Namespace {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        }
    }

    #[test]
    fn a_selector_that_asks_for_values_names_its_namespaces() {
        for (selector, names) in [
            ("hecate.dev/shard=shard1", true),
            ("hecate.dev/shard==shard1", true),
            ("hecate.dev/shard in (shard1, shard2)", true),
            ("hecate.dev/shard in(shard1)", true),
            ("team=shop,hecate.dev/shard!=shard2", true),
            ("!hecate.dev/shard", false),
            ("hecate.dev/shard!=shard1", false),
            ("hecate.dev/shard notin (shard1,shard2)", false),
            ("hecate.dev/shard", false),
            ("!a,!b", false),
        ] {
            assert_eq!(names_namespaces(selector), names, "{selector}");
        }
    }

    #[tokio::test]
    async fn a_shard_is_its_listed_namespaces_as_they_join_and_leave() {
        let (events, changes) = futures::channel::mpsc::unbounded();
        let (publish, namespaces) = watch::channel(None);
        let follower = tokio::spawn(follow(changes, publish));
        let scope = Scope::Shard(namespaces);
        assert!(!scope.holds("a"), "nothing is held before the first list");
        for event in [
            Event::Init,
            Event::InitApply(namespace("a")),
            Event::InitApply(namespace("b")),
            Event::InitDone,
        ] {
            events.unbounded_send(Ok(event)).unwrap();
        }
        assert!(scope.contains("a").await, "contains waits for the list");
        assert!(scope.holds("b"));
        assert!(!scope.holds("c"));
        events
            .unbounded_send(Ok(Event::Delete(namespace("a"))))
            .unwrap();
        events
            .unbounded_send(Ok(Event::Apply(namespace("c"))))
            .unwrap();
        drop(events);
        follower.await.unwrap();
        assert!(!scope.holds("a"), "relabelled away");
        assert!(scope.holds("c"), "relabelled in");
        assert!(Scope::Everywhere.holds("anything"));
    }
}
