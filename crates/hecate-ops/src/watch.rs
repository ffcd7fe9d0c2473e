//! Following the cluster as it changes, through Kubernetes watches (never a poll loop):
//! which objects changed, and how one Passage or Beacon is getting on.

use std::fmt::Debug;

use futures::{Stream, StreamExt as _, stream};
use hecate_types::{Beacon, Bundle, Gate, Passage};
use k8s_openapi::NamespaceResourceScope;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::watcher::{self, Event};
use kube::{Resource, ResourceExt as _};
use serde::de::DeserializeOwned;

use crate::error::{Error, Kind, Result};
use crate::ops::{Ops, Scope};

/// One Hecate object that was created, changed or deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Its kind.
    pub kind: Kind,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl Ops {
    /// Every change to a Gate, Bundle, Passage or Beacon in `scope` from now on
    /// (metadata-only watches, one per kind). Resolves once all four watches have
    /// listed, so a change made after it returns is always reported — read what to
    /// show after awaiting this, not before. Objects that already exist are not
    /// reported. The stream ends at the first error (a lost watch), which the caller
    /// reports rather than silently retries.
    ///
    /// With a [`Cache`](crate::Cache) that has listed, the changes are the cache's:
    /// no watch of their own, however many streams follow (a server's event streams).
    pub async fn changes(
        &self,
        scope: &Scope,
    ) -> Result<impl Stream<Item = Result<Change>> + Send + 'static> {
        let visible = match scope {
            Scope::All => None,
            Scope::Namespaces(list) => Some(list.clone()),
        };
        if let Some(cache) = self.cache() {
            return Ok(followed(cache.subscribe(), visible).boxed());
        }
        let namespace = match scope {
            Scope::Namespaces(list) if list.len() == 1 => Some(list[0].clone()),
            _ => None,
        };
        let namespace = namespace.as_deref();
        let streams = futures::future::try_join_all([
            listed(Kind::Gate, self.changes_of::<Gate>(Kind::Gate, namespace)),
            listed(
                Kind::Bundle,
                self.changes_of::<Bundle>(Kind::Bundle, namespace),
            ),
            listed(
                Kind::Passage,
                self.changes_of::<Passage>(Kind::Passage, namespace),
            ),
            listed(
                Kind::Beacon,
                self.changes_of::<Beacon>(Kind::Beacon, namespace),
            ),
        ])
        .await?;
        Ok(stream::select_all(streams)
            .boxed()
            .filter(move |change| {
                let keep = match (change, &visible) {
                    (Ok(change), Some(visible)) => visible.contains(&change.namespace),
                    _ => true,
                };
                futures::future::ready(keep)
            })
            .scan(false, |failed, item| {
                // End after the first error: a watch that broke once is not trusted.
                if *failed {
                    return futures::future::ready(None);
                }
                *failed = item.is_err();
                futures::future::ready(Some(item))
            })
            .boxed())
    }

    /// A kind's changes; `Ok(None)` marks the end of each listing.
    fn changes_of<K>(
        &self,
        kind: Kind,
        namespace: Option<&str>,
    ) -> stream::BoxStream<'static, Result<Option<Change>>>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + Clone
            + Debug
            + DeserializeOwned
            + Send
            + 'static,
    {
        // `Api<PartialObjectMeta<K>>` asks for metadata only: the watch carries names,
        // not whole objects.
        let api: Api<PartialObjectMeta<K>> = match namespace {
            Some(namespace) => Api::namespaced(self.client(), namespace),
            None => Api::all(self.client()),
        };
        let mut initialised = false;
        watcher::watcher(api, watcher::Config::default())
            .filter_map(move |event| {
                let change = match event {
                    Ok(Event::InitDone) => {
                        initialised = true;
                        Some(Ok(None))
                    }
                    Ok(Event::Apply(meta) | Event::Delete(meta)) if initialised => {
                        Some(Ok(Some(Change {
                            kind,
                            namespace: meta.namespace().unwrap_or_default(),
                            name: meta.name_any(),
                        })))
                    }
                    Ok(_) => None,
                    Err(error) => Some(Err(Error::Watch {
                        context: format!("watching {kind}s"),
                        message: error.to_string(),
                    })),
                };
                futures::future::ready(change)
            })
            .boxed()
    }

    /// The Passage now and after every change, until the caller stops listening.
    /// [`Error::NotFound`] if it does not exist or is deleted (retention may collect a
    /// finished one).
    pub fn follow_passage(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Stream<Item = Result<Passage>> + Send + 'static {
        self.follow(Kind::Passage, namespace, name)
    }

    /// The Beacon now and after every change (see [`Ops::follow_passage`]).
    pub fn follow_beacon(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Stream<Item = Result<Beacon>> + Send + 'static {
        self.follow(Kind::Beacon, namespace, name)
    }

    fn follow<K>(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
    ) -> impl Stream<Item = Result<K>> + Send + 'static
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + Clone
            + Debug
            + DeserializeOwned
            + Send
            + 'static,
    {
        let api: Api<K> = self.api(namespace);
        let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let (namespace, name) = (namespace.to_string(), name.to_string());
        let mut seen = false;
        watcher::watcher(api, config).filter_map(move |event| {
            let not_found = || {
                Err(Error::NotFound {
                    kind,
                    namespace: namespace.clone(),
                    name: name.clone(),
                })
            };
            let item = match event {
                Ok(Event::Apply(object) | Event::InitApply(object)) => {
                    seen = true;
                    Some(Ok(object))
                }
                Ok(Event::InitDone) if !seen => Some(not_found()),
                Ok(Event::Delete(_)) => Some(not_found()),
                Ok(_) => None,
                Err(error) => Some(Err(Error::Watch {
                    context: format!("watching {kind} {name}"),
                    message: error.to_string(),
                })),
            };
            futures::future::ready(item)
        })
    }
}

/// Drives `changes` until its first listing is done, then yields only the changes.
async fn listed(
    kind: Kind,
    mut changes: stream::BoxStream<'static, Result<Option<Change>>>,
) -> Result<stream::BoxStream<'static, Result<Change>>> {
    loop {
        match changes.next().await {
            Some(Ok(None)) => break,
            Some(Ok(Some(_))) => {}
            Some(Err(error)) => return Err(error),
            None => {
                return Err(Error::Watch {
                    context: format!("watching {kind}s"),
                    message: "the watch ended before it had listed".into(),
                });
            }
        }
    }
    Ok(changes
        .filter_map(|item| futures::future::ready(item.transpose()))
        .boxed())
}

/// A cache's changes in `visible` (all when `None`), ending after an error: a re-list
/// or a follower that fell behind may have missed changes, so the follower reads again.
fn followed(
    receiver: tokio::sync::broadcast::Receiver<crate::cache::Followed>,
    visible: Option<Vec<String>>,
) -> impl Stream<Item = Result<Change>> + Send + 'static {
    use tokio::sync::broadcast::error::RecvError;
    stream::unfold(Some(receiver), move |receiver| {
        let visible = visible.clone();
        async move {
            let mut receiver = receiver?;
            loop {
                let lost = |message: String| Error::Watch {
                    context: "following the cache".into(),
                    message,
                };
                match receiver.recv().await {
                    Ok(Some(change)) => {
                        if visible
                            .as_ref()
                            .is_none_or(|visible| visible.contains(&change.namespace))
                        {
                            return Some((Ok(change), Some(receiver)));
                        }
                    }
                    Ok(None) => {
                        let error = lost("a watch was listed again; changes may be missing".into());
                        return Some((Err(error), None));
                    }
                    Err(RecvError::Lagged(missed)) => {
                        let error = lost(format!("{missed} changes went by unread"));
                        return Some((Err(error), None));
                    }
                    Err(RecvError::Closed) => return None,
                }
            }
        }
    })
}
