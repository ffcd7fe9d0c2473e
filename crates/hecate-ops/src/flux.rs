//! Operating the Flux objects a Gate depends on (ops spec §10.3): listing them as
//! they stand, suspending or resuming one, asking Flux to reconcile one now — only
//! ever what the Gate's own watch names ([`rules::flux_watch`]).

use hecate_types::wellknown;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use serde_json::json;

use crate::error::{Action, Error, Kind, Result};
use crate::model::{FluxReconciled, FluxResource, FluxSuspended};
use crate::ops::Ops;
use crate::rules::flux_watch::{self, Read, Watched};
use crate::rules::refusal::{Refusal, RefusalCode};

impl Ops {
    /// The Flux objects `gate`'s own watch names, each as its status stands (health by
    /// the shared Flux evaluator, revision, suspended, the last reconcile request
    /// handled), by kind then name; `[]` when it watches none. An object that is not
    /// there is `missing`, not unhealthy; one in another namespace is listed as not
    /// read, and is not asked for ([`flux_watch::may_read`]); one in a connected
    /// cluster is as the controller last assessed it ([`flux_watch::recorded`]). One
    /// GET per object named in the Gate's namespace of its own cluster, always from the
    /// API server.
    pub async fn flux_resources(&self, namespace: &str, gate: &str) -> Result<Vec<FluxResource>> {
        let gate = &self.gate(namespace, gate).await?;
        let now = self.now();
        let reads = flux_watch::watched(gate)
            .into_iter()
            .map(|watched| async move {
                let read = match self.flux_api(&watched) {
                    // Outside the Gate's namespace: never asked for (the one rule).
                    _ if !flux_watch::may_read(&watched) => Read::NotAsked,
                    _ if watched.is_remote() => flux_watch::recorded(gate, &watched),
                    Some(api) => match api.get_opt(&watched.name).await {
                        Ok(Some(object)) => serde_json::to_value(object)
                            .map_or_else(|e| Read::Failed(e.to_string()), Read::Found),
                        Ok(None) => Read::Missing,
                        Err(e) => Read::Failed(format!(
                            "could not read it: {}",
                            crate::error::in_words(&e)
                        )),
                    },
                    None => Read::Failed(String::new()),
                };
                flux_watch::describe(&watched, read, now)
            });
        Ok(futures::future::join_all(reads).await)
    }

    /// Suspends (`suspend: true`) or resumes a Flux object `gate` depends on, for
    /// `actor`: a merge patch of `spec.suspend`. Anything the Gate's own watch does not
    /// name (in `namespace`, in its own cluster) is refused, [`RefusalCode::NotWatched`].
    ///
    /// [`RefusalCode::NotWatched`]: crate::RefusalCode::NotWatched
    pub async fn set_flux_suspend(
        &self,
        namespace: &str,
        gate: &str,
        kind: &str,
        name: &str,
        suspend: bool,
        actor: &str,
    ) -> Result<FluxSuspended> {
        let watched = self
            .flux_target(Action::Suspend, namespace, gate, kind, name)
            .await?;
        let patch = json!({"spec": {"suspend": suspend}});
        let verb = if suspend { "suspending" } else { "resuming" };
        self.patch_flux(&watched, verb, &patch).await?;
        Ok(FluxSuspended {
            namespace: namespace.into(),
            gate: gate.into(),
            kind: watched.kind,
            name: watched.name,
            suspended: suspend,
            by: actor.into(),
        })
    }

    /// Asks Flux to reconcile a Flux object `gate` depends on now: writes the stamp
    /// ([`flux_watch::reconcile_stamp`] of now) to `reconcile.fluxcd.io/requestedAt`
    /// and answers it — Flux echoes it in `status.lastHandledReconcileAt` once done.
    /// Refused as [`Ops::set_flux_suspend`] is.
    pub async fn reconcile_flux(
        &self,
        namespace: &str,
        gate: &str,
        kind: &str,
        name: &str,
    ) -> Result<FluxReconciled> {
        let watched = self
            .flux_target(Action::Reconcile, namespace, gate, kind, name)
            .await?;
        let stamp = flux_watch::reconcile_stamp(self.now());
        let patch = json!({"metadata": {"annotations": {
            wellknown::ANNOTATION_RECONCILE_REQUESTED_AT: stamp,
        }}});
        self.patch_flux(&watched, "annotating", &patch).await?;
        Ok(FluxReconciled {
            namespace: namespace.into(),
            gate: gate.into(),
            kind: watched.kind,
            name: watched.name,
            requested_at: stamp,
        })
    }

    /// The watched object an operation may touch, or the refusal.
    async fn flux_target(
        &self,
        action: Action,
        namespace: &str,
        gate: &str,
        kind: &str,
        name: &str,
    ) -> Result<Watched> {
        let gate = self.get(Kind::Gate, namespace, gate).await?;
        let watched = flux_watch::target(&gate, kind, name)
            .map_err(|refusal| Error::refused(action, refusal))?;
        if let Err(problem) = &watched.api_version {
            // Watched, but of a kind nobody can resolve: the Gate's watch must say more.
            return Err(Error::refused(
                action,
                Refusal::new(
                    RefusalCode::NotWatched,
                    format!("{kind} {name:?}: {problem}"),
                ),
            ));
        }
        Ok(watched)
    }

    /// The API of `watched`'s kind in its namespace; `None` when its apiVersion is not
    /// known. The plural is Kubernetes' usual one (every Flux kind follows it), so no
    /// discovery request is needed.
    fn flux_api(&self, watched: &Watched) -> Option<Api<DynamicObject>> {
        let api_version = watched.api_version.as_ref().ok()?;
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, &watched.kind);
        Some(Api::namespaced_with(
            self.client(),
            &watched.namespace,
            &ApiResource::from_gvk(&gvk),
        ))
    }

    /// A merge patch of `watched` (`verb`: what it does, e.g. `suspending`), its
    /// failures in words that say what to do.
    async fn patch_flux(
        &self,
        watched: &Watched,
        verb: &str,
        patch: &serde_json::Value,
    ) -> Result<()> {
        let (kind, name, namespace) = (&watched.kind, &watched.name, &watched.namespace);
        let api_version = watched.api_version.as_deref().unwrap_or_default();
        let group = api_version.split_once('/').map_or("", |(group, _)| group);
        let Some(api) = self.flux_api(watched) else {
            return Ok(()); // `flux_target` refused an unresolvable kind already
        };
        api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map(drop)
            .map_err(|source| {
                let context = match &source {
                    kube::Error::Api(status) if status.code == 404 => format!(
                        "no {kind} named {name} in {namespace} — check the name, and that Flux owns it"
                    ),
                    // Worded as what was being done: surfaces say "not allowed while …".
                    kube::Error::Api(status) if status.code == 403 => format!(
                        "{verb} {kind} {namespace}/{name}, which needs patch on {group}"
                    ),
                    _ => format!("patching {kind} {namespace}/{name}"),
                };
                Error::Kubernetes { context, source }
            })
    }
}
