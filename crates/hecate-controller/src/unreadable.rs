//! Objects that do not decode (DECISIONS 110). Every watch skips them
//! ([`hecate_ops::lenient`]), so one Gate nested too deep for any reader stops only
//! itself; this reports it where its author looks: a Warning Event on the object,
//! and, on a Gate, `Ready=False` with reason `Unreadable` — written without reading
//! the object back, since it cannot be read. Once per resourceVersion, and only in the
//! namespaces this controller acts in: a shard never writes another's objects.

use std::collections::HashMap;

use hecate_types::lenient::Undecodable;
use hecate_types::{Condition, ConditionStatus, Gate, Time, wellknown};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::api::PostParams;
use tokio::sync::mpsc;

use crate::events::{self, Events};
use crate::scope::Scope;

/// Hands objects that do not decode to the task that reports them.
#[derive(Clone)]
pub struct Unreadable {
    sender: mpsc::UnboundedSender<(ObjectReference, Undecodable)>,
}

impl Unreadable {
    /// Starts the reporting task for the objects in `scope`, writing through `client`
    /// and publishing with `events` (its loop's).
    pub fn start(client: kube::Client, scope: Scope, events: Events) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(report(client, scope, events, receiver));
        Self { sender }
    }

    /// The callback a lenient watch of `K` takes.
    pub fn of<K: Resource<DynamicType = ()>>(
        &self,
    ) -> impl FnMut(&Undecodable) + Send + Sync + 'static + use<K> {
        let sender = self.sender.clone();
        move |bad| {
            let object = ObjectReference {
                api_version: Some(K::api_version(&()).into()),
                kind: Some(K::kind(&()).into()),
                name: bad.metadata.name.clone(),
                namespace: bad.metadata.namespace.clone(),
                uid: bad.metadata.uid.clone(),
                resource_version: bad.metadata.resource_version.clone(),
                ..ObjectReference::default()
            };
            // The task ends only with the process.
            let _ = sender.send((object, bad.clone()));
        }
    }
}

async fn report(
    client: kube::Client,
    scope: Scope,
    events: Events,
    mut receiver: mpsc::UnboundedReceiver<(ObjectReference, Undecodable)>,
) {
    // uid → the resourceVersion last reported: a re-list hands the same object again.
    let mut reported: HashMap<String, String> = HashMap::new();
    while let Some((object, bad)) = receiver.recv().await {
        let error = &bad.error;
        let uid = object.uid.clone().unwrap_or_default();
        let version = object.resource_version.clone().unwrap_or_default();
        if reported.get(&uid) == Some(&version) {
            continue;
        }
        reported.insert(uid, version);
        let kind = object.kind.clone().unwrap_or_default();
        let name = object.name.clone().unwrap_or_default();
        let namespace = object.namespace.clone().unwrap_or_default();
        if !scope.contains(&namespace).await {
            continue;
        }
        let message = format!(
            "this {kind} cannot be read, so the controller skips it: {error}. \
             Nesting in `with` is the usual cause; flatten it and apply again"
        );
        hecate_ops::lenient::warn(&kind, &bad);
        events.publish(&object, events::UNREADABLE, &message).await;
        if kind == Gate::kind(&()) {
            let generation = bad.metadata.generation.unwrap_or_default();
            let condition = Condition {
                type_: wellknown::condition::READY.into(),
                status: ConditionStatus::False,
                observed_generation: generation,
                last_transition_time: Time(Timestamp::now()),
                reason: wellknown::gate_reason::UNREADABLE.into(),
                message: hecate_types::limits::truncate(&message, 32 * 1024).into(),
            };
            // Only the status of a status update counts: the stored spec stays.
            let body = serde_json::json!({
                "apiVersion": object.api_version,
                "kind": kind,
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "resourceVersion": object.resource_version,
                },
                "status": {"conditions": [condition]},
            });
            if let Err(error) =
                replace_status_unread::<Gate>(&client, &namespace, &name, &body).await
            {
                tracing::warn!(gate = %bad.key(), %error,
                    "could not say on the Gate that it cannot be read");
            }
        }
    }
}

/// An update of `name`'s status (the controller's one verb on it: RBAC grants
/// `update`, not `patch`) at the resourceVersion it was seen at, whose answer is not
/// decoded (it would not decode). A newer version is reported again.
async fn replace_status_unread<K: Resource<DynamicType = ()>>(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    body: &serde_json::Value,
) -> Result<(), kube::Error> {
    let url = K::url_path(&(), Some(namespace));
    let body = serde_json::to_vec(body).map_err(kube::Error::SerdeError)?;
    let request = kube::core::Request::new(url)
        .replace_subresource("status", name, &PostParams::default(), body)
        .map_err(kube::Error::BuildRequest)?;
    client.request_text(request).await.map(drop)
}
