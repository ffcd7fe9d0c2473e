//! Lists and watches that read each object on its own ([`hecate_types::lenient`]): an
//! object that does not decode is reported and skipped, and every other object of its
//! kind is still served (DECISIONS 110). Every LIST and watch of a Hecate kind in
//! ops and in the controller goes through here.

use std::fmt::Debug;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt as _};
use hecate_types::lenient::{Lenient, Placeholder, Undecodable};
use kube::Resource;
use kube::api::Api;
use kube::runtime::watcher::{self, Event};
use serde::de::DeserializeOwned;

/// `watcher::watcher` over `api`, with the objects that do not decode handed to
/// `undecodable` instead of failing the watch. To a store they are deletions: an
/// object that stops decoding leaves the store rather than standing there as it was.
///
/// A `config` that asks for a streaming list gets one where the API server streams
/// lists, and pages where it refuses to (`streaming_or_paged`).
pub fn watcher<K>(
    api: Api<Lenient<K>>,
    config: watcher::Config,
    mut undecodable: impl FnMut(&Undecodable) + Send + 'static,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static
where
    K: Placeholder + Clone + Debug + DeserializeOwned + Send + 'static,
{
    streaming_or_paged(api, config).filter_map(move |event| {
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

/// The watch `config` asks for. A streaming list (the initial state sent as the watch's
/// first events, from the API server's watch cache, without pages) is refused by a
/// server whose `WatchList` feature is off — Kubernetes 1.33 ships it off — with 422
/// Invalid at the watch's start; then the same watch lists in pages instead, for this
/// stream's life (DECISION 143).
fn streaming_or_paged<K>(
    api: Api<K>,
    config: watcher::Config,
) -> BoxStream<'static, Result<Event<K>, watcher::Error>>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + 'static,
    K::DynamicType: Default,
{
    if config.initial_list_strategy != watcher::InitialListStrategy::StreamingList {
        return watcher::watcher(api, config).boxed();
    }
    let paged = watcher::Config {
        initial_list_strategy: watcher::InitialListStrategy::ListWatch,
        ..config.clone()
    };
    let mut streaming = watcher::watcher(api.clone(), config).boxed();
    // The first answer says whether the server streams: `Init` once the watch is
    // accepted, or the error that refused it.
    futures::stream::once(async move {
        match streaming.next().await {
            Some(Err(error)) if refuses_streaming(&error) => {
                tracing::info!(
                    kind = %K::kind(&K::DynamicType::default()),
                    "the API server does not stream lists; listing in pages"
                );
                watcher::watcher(api, paged).boxed()
            }
            Some(first) => futures::stream::once(async { first })
                .chain(streaming)
                .boxed(),
            None => futures::stream::empty().boxed(),
        }
    })
    .flatten()
    .boxed()
}

/// Whether `error` is a server's refusal of a streaming list: an Invalid answer to the
/// watch that asked for one.
fn refuses_streaming(error: &watcher::Error) -> bool {
    matches!(error, watcher::Error::WatchStartFailed(kube::Error::Api(status)) if status.is_invalid())
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
