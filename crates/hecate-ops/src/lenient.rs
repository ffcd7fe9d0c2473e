//! Lists and watches that read each object on its own ([`hecate_types::lenient`]): an
//! object that does not decode is reported and skipped, and every other object of its
//! kind is still served (DECISIONS 110). Every LIST and watch of a Hecate kind in
//! ops and in the controller goes through here.

use std::fmt::Debug;

use futures::{Stream, StreamExt as _};
use hecate_types::lenient::{Lenient, Placeholder, Undecodable};
use kube::Resource;
use kube::api::Api;
use kube::runtime::watcher::{self, Event};
use serde::de::DeserializeOwned;

/// `watcher::watcher` over `api`, with the objects that do not decode handed to
/// `undecodable` instead of failing the watch. To a store they are deletions: an
/// object that stops decoding leaves the store rather than standing there as it was.
pub fn watcher<K>(
    api: Api<Lenient<K>>,
    config: watcher::Config,
    mut undecodable: impl FnMut(&Undecodable) + Send + 'static,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static
where
    K: Placeholder + Clone + Debug + DeserializeOwned + Send + 'static,
{
    watcher::watcher(api, config).filter_map(move |event| {
        let event = match event {
            Err(error) => Some(Err(error)),
            Ok(Event::Init) => Some(Ok(Event::Init)),
            Ok(Event::InitDone) => Some(Ok(Event::InitDone)),
            Ok(Event::InitApply(object)) => match object {
                Lenient::Decoded(object) => Some(Ok(Event::InitApply(object))),
                Lenient::Undecodable(bad) => {
                    undecodable(&bad);
                    None
                }
            },
            Ok(Event::Apply(object)) => match object {
                Lenient::Decoded(object) => Some(Ok(Event::Apply(object))),
                Lenient::Undecodable(bad) => {
                    undecodable(&bad);
                    Some(Ok(Event::Delete(K::placeholder(bad.metadata))))
                }
            },
            Ok(Event::Delete(object)) => Some(Ok(Event::Delete(object.or_placeholder()))),
        };
        futures::future::ready(event)
    })
}

/// Logs an object that does not decode, once per call: what a reader that cannot
/// write to the object does with it.
pub fn warn(kind: impl std::fmt::Display, bad: &Undecodable) {
    tracing::warn!(
        kind = %kind,
        object = %bad.key(),
        error = %bad.error,
        "skipping an object that does not decode"
    );
}

/// One LIST of `K` in `namespace`: the objects that decode; each that does not is
/// logged and left out. (A reader for which a missing object is unsafe — retention,
/// which must not collect what an unreadable Gate holds — lists strictly instead.)
pub async fn list<K>(
    client: kube::Client,
    namespace: &str,
    params: &kube::api::ListParams,
) -> kube::Result<Vec<K>>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + Debug
        + DeserializeOwned,
{
    let list = Api::<Lenient<K>>::namespaced(client, namespace)
        .list(params)
        .await?;
    Ok(decoded(K::kind(&()), list.items))
}

/// The objects of a list that decode; each that does not is logged as `kind` and left
/// out.
pub fn decoded<K>(kind: impl std::fmt::Display, items: Vec<Lenient<K>>) -> Vec<K> {
    let (objects, undecodable) = hecate_types::lenient::partition(items);
    for bad in &undecodable {
        warn(&kind, bad);
    }
    objects
}
