//! One kind's watches over a shard's namespaces, merged into the event stream of one
//! store, as if they were one watch.
//!
//! A store's writer takes a stream with one first list (`Init`, `InitApply`…,
//! `InitDone`: the store is replaced at `InitDone`) and changes after it. Many watches
//! each list on their own, and again whenever their watch expires; passed through as
//! they come, the second namespace's `InitDone` would replace the store with that
//! namespace alone. So:
//!
//! - until every namespace first listed has finished its list, their objects are the
//!   first list (`InitApply`), and its end is the last one's end (`InitDone`); changes
//!   that arrive meanwhile are held and follow it;
//! - after that, a namespace's list (it joined, or its watch listed again) is a run of
//!   changes (`Apply`), and at its end whatever the store holds of that namespace that
//!   the list did not name is deleted;
//! - a namespace that leaves the shard has its watch stopped and everything the store
//!   holds of it deleted — before any later event: the merge is polled in the same
//!   task that applies its events, so the store is current whenever it is read here.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};

use futures::stream::{AbortHandle, Abortable, BoxStream, SelectAll};
use futures::{Stream, StreamExt as _};
use kube::ResourceExt as _;
use kube::runtime::watcher::{self, Event};

use super::{Holding, Namespaces};

type Item<K> = Result<Event<K>, watcher::Error>;

/// The merge of one kind's watches over a shard's namespaces.
pub(super) struct Union<K: kube::Resource<DynamicType = ()> + Clone + 'static, W> {
    namespaces: Namespaces,
    watch: W,
    /// What the events fill, read to find what a namespace no longer has.
    store: Box<dyn Holding<K>>,
    /// The namespaces watched, each with what stops its watch.
    watching: BTreeMap<String, AbortHandle>,
    streams: SelectAll<BoxStream<'static, (String, Item<K>)>>,
    /// Before the first list ends: the namespaces still listing, and the changes held
    /// until it ends. `None` after.
    first: Option<(BTreeSet<String>, Vec<Item<K>>)>,
    /// Namespaces listing again, with the names their list has named so far.
    relisting: BTreeMap<String, HashSet<String>>,
    /// Events to hand out before reading more.
    out: VecDeque<Item<K>>,
    /// Whether the first list has just been handed out: the store holds it once `out`
    /// is empty, and anything in it of a namespace that left meanwhile goes then.
    sweep: bool,
    /// Whether the shard's namespaces have been read once.
    started: bool,
}

impl<K, W> Union<K, W>
where
    K: kube::Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    W: Fn(&str) -> BoxStream<'static, Item<K>> + Send + 'static,
{
    /// The merge of `watch` over the namespaces `namespaces` holds, filling `store`.
    pub(super) fn new(namespaces: Namespaces, watch: W, store: Box<dyn Holding<K>>) -> Self {
        Self {
            namespaces,
            watch,
            store,
            watching: BTreeMap::new(),
            streams: SelectAll::new(),
            first: None,
            relisting: BTreeMap::new(),
            out: VecDeque::new(),
            sweep: false,
            started: false,
        }
    }

    /// The merged events.
    pub(super) fn into_stream(self) -> impl Stream<Item = Item<K>> + Send {
        futures::stream::unfold(Some(self), |state| async move {
            let mut union = state?;
            if !union.started {
                // The shard's namespaces listed once: until then there is nothing to
                // watch, and nothing to say.
                if union.namespaces.wait_for(Option::is_some).await.is_err() {
                    return None;
                }
                union.started = true;
                union.first = Some((BTreeSet::new(), Vec::new()));
                union.out.push_back(Ok(Event::Init));
                union.follow_namespaces();
                union.end_first_if_listed();
            }
            loop {
                // Once the first list and what followed it have been handed out (and
                // so are in the store).
                if union.sweep && union.out.is_empty() {
                    union.sweep = false;
                    union.drop_unwatched();
                }
                if let Some(item) = union.out.pop_front() {
                    return Some((item, Some(union)));
                }
                tokio::select! {
                    changed = union.namespaces.changed() => {
                        if changed.is_err() {
                            return None;
                        }
                        union.follow_namespaces();
                    }
                    Some((namespace, item)) = union.streams.next(), if !union.streams.is_empty() => {
                        union.on(&namespace, item);
                    }
                }
            }
        })
    }

    /// Starts watching the namespaces that joined and stops those that left.
    fn follow_namespaces(&mut self) {
        let now: BTreeSet<String> = self
            .namespaces
            .borrow_and_update()
            .as_deref()
            .cloned()
            .unwrap_or_default();
        let joined: Vec<&String> = now
            .iter()
            .filter(|ns| !self.watching.contains_key(*ns))
            .collect();
        for namespace in joined {
            let (handle, registration) = AbortHandle::new_pair();
            let tagged = (self.watch)(namespace).map({
                let namespace = namespace.clone();
                move |item| (namespace.clone(), item)
            });
            self.streams
                .push(Abortable::new(tagged, registration).boxed());
            self.watching.insert(namespace.clone(), handle);
            if let Some((listing, _)) = &mut self.first {
                listing.insert(namespace.clone());
            }
        }
        let left: Vec<String> = self
            .watching
            .keys()
            .filter(|ns| !now.contains(*ns))
            .cloned()
            .collect();
        for namespace in left {
            if let Some(handle) = self.watching.remove(&namespace) {
                handle.abort();
            }
            self.relisting.remove(&namespace);
            match &mut self.first {
                Some((listing, _)) => {
                    listing.remove(&namespace);
                    self.end_first_if_listed();
                }
                None => self.drop_namespace(&namespace),
            }
        }
    }

    /// One event of `namespace`'s watch.
    fn on(&mut self, namespace: &str, item: Item<K>) {
        if !self.watching.contains_key(namespace) {
            return;
        }
        let event = match item {
            Ok(event) => event,
            Err(error) => {
                self.out.push_back(Err(error));
                return;
            }
        };
        if let Some((listing, held)) = &mut self.first {
            if listing.contains(namespace) {
                match event {
                    Event::InitApply(object) => self.out.push_back(Ok(Event::InitApply(object))),
                    Event::InitDone => {
                        listing.remove(namespace);
                        self.end_first_if_listed();
                    }
                    // Its list began (again: what it named before stays until the end).
                    Event::Init => {}
                    change => held.push(Ok(change)),
                }
            } else {
                // Listed already: a change, held until the first list ends.
                match event {
                    Event::InitApply(object) | Event::Apply(object) => {
                        held.push(Ok(Event::Apply(object)));
                    }
                    Event::Delete(object) => held.push(Ok(Event::Delete(object))),
                    Event::Init | Event::InitDone => {}
                }
            }
            return;
        }
        match event {
            Event::Init => {
                self.relisting.insert(namespace.to_string(), HashSet::new());
            }
            Event::InitApply(object) => {
                if let Some(named) = self.relisting.get_mut(namespace) {
                    named.insert(object.name_any());
                }
                self.out.push_back(Ok(Event::Apply(object)));
            }
            Event::InitDone => {
                let named = self.relisting.remove(namespace).unwrap_or_default();
                self.drop_from(namespace, |name| !named.contains(name));
            }
            change => self.out.push_back(Ok(change)),
        }
    }

    /// Ends the first list once no namespace is still listing.
    fn end_first_if_listed(&mut self) {
        if self
            .first
            .as_ref()
            .is_some_and(|(listing, _)| listing.is_empty())
            && let Some((_, held)) = self.first.take()
        {
            self.out.push_back(Ok(Event::InitDone));
            self.out.extend(held);
            self.sweep = true;
        }
    }

    /// Deletes everything the store holds of namespaces no longer watched.
    fn drop_unwatched(&mut self) {
        let gone: BTreeSet<String> = self
            .store
            .namespaces()
            .into_iter()
            .filter(|ns| !self.watching.contains_key(ns))
            .collect();
        for namespace in gone {
            self.drop_namespace(&namespace);
        }
    }

    /// Deletes everything the store holds of `namespace`.
    fn drop_namespace(&mut self, namespace: &str) {
        self.drop_from(namespace, |_| true);
    }

    /// Deletes what the store holds of `namespace` whose name `drop` picks.
    fn drop_from(&mut self, namespace: &str, drop: impl Fn(&str) -> bool) {
        let dropped = self
            .store
            .in_namespace(namespace)
            .into_iter()
            .filter(|object| drop(&object.name_any()))
            .map(|object| Ok(Event::Delete(object)));
        self.out.extend(dropped);
    }
}

#[cfg(test)]
mod tests;
