//! Stand-ins for Flux's CRDs, so tests can "play Flux" without Flux: the same group,
//! version, kind and plural as Flux's, namespaced, with a status subresource, and
//! `spec` and `status` free-form. A test creates an object and writes its status
//! through the status subresource as Flux's controllers would; Hecate judges it by the
//! real Flux rules.
//!
//! For test control planes only: installing a stand-in over a real Flux CRD would
//! replace its schema.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// A kind to stand in for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StandIn {
    /// The API group, e.g. `kustomize.toolkit.fluxcd.io`.
    pub group: &'static str,
    /// The served (and stored) version.
    pub version: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// The plural resource name.
    pub plural: &'static str,
}

/// Flux's `Kustomization`.
pub const KUSTOMIZATION: StandIn = StandIn {
    group: "kustomize.toolkit.fluxcd.io",
    version: "v1",
    kind: "Kustomization",
    plural: "kustomizations",
};

/// Flux's `GitRepository`.
pub const GIT_REPOSITORY: StandIn = StandIn {
    group: "source.toolkit.fluxcd.io",
    version: "v1",
    kind: "GitRepository",
    plural: "gitrepositories",
};

impl StandIn {
    /// `group/version`.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// The kube `ApiResource` for [`kube::api::DynamicObject`] access.
    pub fn api_resource(&self) -> kube::api::ApiResource {
        let gvk = kube::core::GroupVersionKind::gvk(self.group, self.version, self.kind);
        kube::api::ApiResource::from_gvk_with_plural(&gvk, self.plural)
    }

    fn crd(&self) -> anyhow::Result<CustomResourceDefinition> {
        let free_form = serde_json::json!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        });
        let crd = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{}.{}", self.plural, self.group)},
            "spec": {
                "group": self.group,
                "scope": "Namespaced",
                "names": {
                    "kind": self.kind,
                    "listKind": format!("{}List", self.kind),
                    "plural": self.plural,
                    "singular": self.kind.to_lowercase(),
                },
                "versions": [{
                    "name": self.version,
                    "served": true,
                    "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": free_form, "status": free_form},
                    }},
                }],
            },
        });
        Ok(serde_json::from_value(crd)?)
    }
}

/// Installs the Kustomization and GitRepository stand-ins and waits until the API
/// server serves them. Idempotent: installing again (from another test) is fine.
pub async fn install_flux_standins(client: &kube::Client) -> anyhow::Result<()> {
    install(client, &[KUSTOMIZATION, GIT_REPOSITORY]).await
}

/// Installs stand-ins for `kinds` (server-side apply, so repeating is harmless) and
/// waits until each is Established.
pub async fn install(client: &kube::Client, kinds: &[StandIn]) -> anyhow::Result<()> {
    let crds = kinds
        .iter()
        .map(StandIn::crd)
        .collect::<anyhow::Result<Vec<_>>>()?;
    crate::control_plane::apply_crds(client, &crds).await
}

/// Writes a stand-in object's status as Flux's controllers would once they applied
/// `revision` (e.g. `env/dev@sha1:<sha>`): the current generation observed, `Ready`
/// true with its own `observedGeneration`, the revision as `lastAppliedRevision`.
pub async fn report_applied(
    client: &kube::Client,
    kind: StandIn,
    namespace: &str,
    name: &str,
    revision: &str,
) -> anyhow::Result<()> {
    let ready = serde_json::json!({
        "type": "Ready",
        "status": "True",
        "reason": "ReconciliationSucceeded",
        "message": format!("Applied revision: {revision}"),
    });
    let revisions = serde_json::json!({
        "lastAppliedRevision": revision,
        "lastAttemptedRevision": revision,
    });
    report(client, kind, namespace, name, revisions, vec![ready]).await
}

/// Writes a stand-in object's status as Flux's controllers would when `revision` was
/// attempted but its health checks never passed: `Ready` false and `Stalled` true, both
/// saying `reason`; the last applied revision stays what it was.
pub async fn report_failed(
    client: &kube::Client,
    kind: StandIn,
    namespace: &str,
    name: &str,
    revision: &str,
    reason: &str,
) -> anyhow::Result<()> {
    let conditions = ["Ready", "Stalled"].map(|type_| {
        serde_json::json!({
            "type": type_,
            "status": if type_ == "Ready" { "False" } else { "True" },
            "reason": "HealthCheckFailed",
            "message": reason,
        })
    });
    let revisions = serde_json::json!({ "lastAttemptedRevision": revision });
    report(
        client,
        kind,
        namespace,
        name,
        revisions,
        conditions.to_vec(),
    )
    .await
}

/// Writes `conditions` (each stamped with the observed generation and now) and the
/// revision fields in `revisions`.
async fn report(
    client: &kube::Client,
    kind: StandIn,
    namespace: &str,
    name: &str,
    revisions: serde_json::Value,
    mut conditions: Vec<serde_json::Value>,
) -> anyhow::Result<()> {
    use kube::api::{Api, DynamicObject, Patch, PatchParams};
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespace, &kind.api_resource());
    let object = api.get(name).await?;
    let generation = object.metadata.generation.unwrap_or(1);
    let now = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    for condition in &mut conditions {
        condition["observedGeneration"] = generation.into();
        condition["lastTransitionTime"] = now.clone().into();
    }
    let mut status = serde_json::json!({
        "observedGeneration": generation,
        "conditions": conditions,
    });
    if let (Some(status), Some(revisions)) = (status.as_object_mut(), revisions.as_object()) {
        status.extend(revisions.clone());
    }
    let status = serde_json::json!({ "status": status });
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    Ok(())
}
