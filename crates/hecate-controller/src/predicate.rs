//! What wakes a Beacon or Gate reconcile: a change of its spec (`metadata.generation`)
//! or a new reconcile request (the `reconcile.fluxcd.io/requestedAt` annotation). Not
//! its status — the controller's own writes — or it would wake itself forever.
//! kube-runtime's `predicates::generation` alone would drop the annotation, which is
//! exactly how `hecate poll` asks for a reconcile now.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use futures::{Stream, StreamExt as _};
use hecate_types::wellknown;
use kube::Resource;
use kube::runtime::watcher::Event;

/// A value that changes exactly when the object should be reconciled again.
pub fn spec_or_request<K: Resource>(object: &K) -> Option<u64> {
    let meta = object.meta();
    let mut hasher = DefaultHasher::new();
    meta.generation.hash(&mut hasher);
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(wellknown::ANNOTATION_RECONCILE_REQUESTED_AT))
        .hash(&mut hasher);
    Some(hasher.finish())
}

/// The objects of `events` to reconcile: each one whose `key` differs from the last
/// one seen of it — kube-runtime's `predicate_filter`, except that a deleted object is
/// forgotten (and a full list forgets what it no longer names), so an object that
/// comes back is looked at again: a namespace handed back to this shard has its
/// objects listed again, unchanged since this shard last saw them.
pub fn changed<K, E, S>(
    events: S,
    key: fn(&K) -> Option<u64>,
) -> impl Stream<Item = Result<K, E>> + Send
where
    K: Resource + Send + 'static,
    E: Send + 'static,
    S: Stream<Item = Result<Event<K>, E>> + Send,
{
    // By namespace and name: the uid and key last seen.
    type Seen = HashMap<(Option<String>, String), (Option<String>, Option<u64>)>;
    let mut seen = Seen::new();
    let mut listing: Option<Seen> = None;
    events.filter_map(move |event| {
        let id = |object: &K| {
            let meta = object.meta();
            (
                meta.namespace.clone(),
                meta.name.clone().unwrap_or_default(),
            )
        };
        let woken = match event {
            Err(error) => Some(Err(error)),
            Ok(Event::Init) => {
                listing = Some(Seen::new());
                None
            }
            Ok(Event::InitDone) => {
                if let Some(listed) = listing.take() {
                    seen = listed;
                }
                None
            }
            Ok(Event::Delete(object)) => {
                seen.remove(&id(&object));
                None
            }
            Ok(Event::Apply(object) | Event::InitApply(object)) => {
                let now = (object.meta().uid.clone(), key(&object));
                let before = seen.get(&id(&object)).cloned();
                if let Some(listed) = listing.as_mut() {
                    listed.insert(id(&object), now.clone());
                }
                seen.insert(id(&object), now.clone());
                (before.is_none_or(|before| before != now || now.1.is_none())).then_some(Ok(object))
            }
        };
        futures::future::ready(woken)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hecate_types::{Gate, GateSpec, GateStatus};

    #[test]
    fn ac050_a_gate_is_not_woken_by_its_own_status_write() {
        let mut old = Gate::new("dev", GateSpec::default());
        old.metadata.generation = Some(1);
        old.metadata.resource_version = Some("10".into());
        let mut status_only = old.clone();
        status_only.metadata.resource_version = Some("11".into());
        status_only.status = Some(GateStatus {
            active_passage: "dev-1".into(),
            ..GateStatus::default()
        });
        assert_eq!(spec_or_request(&old), spec_or_request(&status_only));

        let mut edited = old.clone();
        edited.metadata.generation = Some(2);
        assert_ne!(spec_or_request(&old), spec_or_request(&edited));

        let mut requested = old.clone();
        requested.metadata.annotations = Some(
            [(
                wellknown::ANNOTATION_RECONCILE_REQUESTED_AT.to_string(),
                "1786620716793895315".to_string(),
            )]
            .into(),
        );
        assert_ne!(spec_or_request(&old), spec_or_request(&requested));
    }

    #[tokio::test]
    async fn an_object_is_woken_when_its_key_changes_and_again_after_it_went() {
        let gate = |generation: i64| {
            let mut gate = Gate::new("dev", GateSpec::default());
            gate.metadata.namespace = Some("shop".into());
            gate.metadata.uid = Some("u1".into());
            gate.metadata.generation = Some(generation);
            gate
        };
        let events: Vec<Result<Event<Gate>, ()>> = vec![
            Ok(Event::Init),
            Ok(Event::InitApply(gate(1))),
            Ok(Event::InitDone),
            // Its own status write: same generation.
            Ok(Event::Apply(gate(1))),
            Ok(Event::Apply(gate(2))),
            // Its namespace left the shard, and came back.
            Ok(Event::Delete(gate(2))),
            Ok(Event::Apply(gate(2))),
            // A full list that no longer names it forgets it too.
            Ok(Event::Init),
            Ok(Event::InitDone),
            Ok(Event::Apply(gate(2))),
        ];
        let woken: Vec<i64> = changed(futures::stream::iter(events), spec_or_request)
            .map(|gate| gate.unwrap().metadata.generation.unwrap())
            .collect()
            .await;
        assert_eq!(woken, [1, 2, 2, 2]);
    }
}
