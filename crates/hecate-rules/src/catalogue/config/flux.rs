//! `flux-reconcile` and `flux-wait` (spec §5.13, §5.14): the steps that ask Flux (or
//! anything following its status conventions) to act, and wait for it to be healthy.
//!
//! `flux-wait` reads the same settings as the Gate's `flux` health check (spec §6.2),
//! but decodes them strictly, as every step does; the checker itself is lenient.

use serde::Deserialize;

use super::StepConfig;
use super::fields::{Deferred, GoDuration, blank_is_unset, is_expression, required};

/// One object to reconcile or wait for.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FluxResource {
    /// The object's kind, e.g. `Kustomization`.
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// The object's namespace; blank = the Passage's. Another namespace is refused
    /// when the Passage runs unless cross-namespace references are allowed.
    #[serde(default)]
    pub namespace: String,
    /// The object's API version; blank = Flux's current version of `kind`.
    #[serde(default)]
    pub api_version: String,
}

impl FluxResource {
    /// The API version to read the object with: the one given, else Flux's for its
    /// kind; `None` for a kind Flux does not serve.
    pub fn api_version(&self) -> Option<&str> {
        if !self.api_version.trim().is_empty() {
            return Some(&self.api_version);
        }
        crate::rules::flux::default_api_version(&self.kind)
    }

    fn check(&self, at: &str) -> Result<(), String> {
        required(&format!("{at}.kind"), &self.kind)?;
        required(&format!("{at}.name"), &self.name)?;
        let judged_later = is_expression(&self.kind) || is_expression(&self.api_version);
        if self.api_version().is_none() && !judged_later {
            return Err(format!(
                "{at}: {:?} is not a Flux kind; set apiVersion for any other kind",
                self.kind
            ));
        }
        Ok(())
    }
}

/// A Secret in the Passage's namespace holding another cluster's kubeconfig: Flux's
/// `kubeConfig.secretRef` shape, `{name, key}`.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ClusterSecretRef {
    /// The Secret's name.
    pub name: String,
    /// The key holding the kubeconfig; blank: `value`, else `value.yaml`.
    #[serde(default)]
    pub key: String,
}

impl ClusterSecretRef {
    fn check(&self) -> Result<(), String> {
        required("clusterRef.name", &self.name)?;
        match self.key.trim() {
            // An expression is judged once it is evaluated, when the step runs.
            "" => Ok(()),
            key if is_expression(key) => Ok(()),
            key => hecate_types::secrets::check_key(key)
                .map_err(|problem| format!("clusterRef: {problem}")),
        }
    }
}

/// Resources and cluster are judged the same way for both steps.
fn check_targets(
    resources: &[FluxResource],
    cluster: Option<&ClusterSecretRef>,
) -> Result<(), String> {
    if resources.is_empty() {
        return Err("resources must name at least one object".into());
    }
    for (i, resource) in resources.iter().enumerate() {
        resource.check(&format!("resources[{i}]"))?;
    }
    cluster.map_or(Ok(()), ClusterSecretRef::check)
}

/// `flux-reconcile`: ask Flux to reconcile objects now.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FluxReconcileConfig {
    /// The objects to reconcile.
    pub resources: Vec<FluxResource>,
    /// A Secret holding the kubeconfig of another cluster; none = this one.
    #[serde(default)]
    pub cluster_ref: Option<ClusterSecretRef>,
}

impl StepConfig for FluxReconcileConfig {
    fn check(&self) -> Result<(), String> {
        check_targets(&self.resources, self.cluster_ref.as_ref())
    }
}

/// `flux-wait`: wait until objects are healthy, optionally at a given revision.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FluxWaitConfig {
    /// The objects to wait for.
    pub resources: Vec<FluxResource>,
    /// The revision they must have applied; blank = any.
    #[serde(default)]
    pub expected_revision: String,
    /// How long `Ready=False` may last before it counts as degraded; unset = ten
    /// minutes.
    #[serde(default, deserialize_with = "blank_is_unset")]
    pub fail_after: Option<Deferred<GoDuration>>,
    /// A Secret holding the kubeconfig of another cluster; none = this one.
    #[serde(default)]
    pub cluster_ref: Option<ClusterSecretRef>,
}

impl FluxWaitConfig {
    /// How long `Ready=False` may last before it counts as degraded.
    pub fn fail_after(&self) -> Deferred<GoDuration> {
        self.fail_after.clone().unwrap_or(GoDuration::secs(600))
    }
}

impl StepConfig for FluxWaitConfig {
    fn check(&self) -> Result<(), String> {
        check_targets(&self.resources, self.cluster_ref.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use jiff::SignedDuration;
    use serde_json::{Value, json};

    use super::super::fields::{Deferred, GoDuration};
    use super::super::test_support::{accepted, accepts, refuses};

    /// The resource-list cases both steps share, with `extra` merged into each config.
    fn shared_resource_cases(uses: &str) {
        let with = |resources: Value| json!({"resources": resources});
        accepts(
            uses,
            with(json!([{"kind": "Kustomization", "name": "app-dev"}])),
        );
        accepts(
            uses,
            with(json!([
                {"kind": "HelmRelease", "name": "app", "namespace": "apps"},
                {"kind": "OCIRepository", "name": "m"},
                {"kind": "Widget", "name": "w", "apiVersion": "example.com/v1"},
                {"kind": "${{ vars.kind }}", "name": "${{ vars.name }}"},
            ])),
        );
        accepts(
            uses,
            json!({"resources": [{"kind": "Kustomization", "name": "a"}],
                   "clusterRef": {"name": "prod-kubeconfig"}}),
        );

        refuses(uses, json!({}), &["missing field `resources`"]);
        refuses(uses, with(json!([])), &["resources must name at least one"]);
        refuses(
            uses,
            with(json!({"kind": "Kustomization", "name": "a"})),
            &["resources"],
        );
        refuses(
            uses,
            with(json!([{"kind": "Kustomization", "name": "a"}, {"kind": "Kustomization"}])),
            &["resources[1]", "missing field `name`"],
        );
        refuses(
            uses,
            with(json!([{"name": "a"}])),
            &["resources[0]", "missing field `kind`"],
        );
        refuses(
            uses,
            with(json!([{"kind": "Kustomization", "name": ""}])),
            &["resources[0].name must not be empty"],
        );
        refuses(
            uses,
            with(json!([{"kind": "Deployment", "name": "a"}])),
            &["resources[0]", "Deployment", "apiVersion"],
        );
        refuses(
            uses,
            with(json!([{"kind": "Kustomization", "name": "a", "apiversion": "v1"}])),
            &["unknown field `apiversion`"],
        );
        refuses(
            uses,
            json!({"resources": [{"kind": "Kustomization", "name": "a"}], "clusterRef": {}}),
            &["clusterRef", "missing field `name`"],
        );
        accepts(
            uses,
            json!({"resources": [{"kind": "Kustomization", "name": "a"}],
                   "clusterRef": {"name": "fleet", "key": "value.yaml"}}),
        );
        refuses(
            uses,
            json!({"resources": [{"kind": "Kustomization", "name": "a"}],
                   "clusterRef": {"name": "fleet", "key": "a/b"}}),
            &["clusterRef: key \"a/b\" is not a Secret key"],
        );
        refuses(
            uses,
            json!({"resources": [{"kind": "Kustomization", "name": "a"}],
                   "clusterRef": {"name": "fleet", "namespace": "other"}}),
            &["clusterRef", "unknown field `namespace`"],
        );
    }

    #[test]
    fn flux_reconcile() {
        shared_resource_cases("flux-reconcile");
        refuses(
            "flux-reconcile",
            json!({"resources": [{"kind": "Kustomization", "name": "a"}], "failAfter": "1m"}),
            &["unknown field `failAfter`"],
        );
    }

    #[test]
    fn flux_wait() {
        shared_resource_cases("flux-wait");
        let wait: super::FluxWaitConfig = accepted(
            "flux-wait",
            json!({"resources": [{"kind": "Kustomization", "name": "a"}]}),
        );
        assert_eq!(
            wait.fail_after(),
            Deferred::Known(GoDuration(SignedDuration::from_mins(10)))
        );
        assert_eq!(
            wait.resources[0].api_version(),
            Some("kustomize.toolkit.fluxcd.io/v1")
        );
        accepts(
            "flux-wait",
            json!({"resources": [{"kind": "Kustomization", "name": "a"}],
                   "expectedRevision": "${{ steps.commit.sha }}", "failAfter": "${{ vars.grace }}"}),
        );
        accepts(
            "flux-wait",
            json!({"resources": [{"kind": "Kustomization", "name": "a"}], "failAfter": "2m30s"}),
        );
        refuses(
            "flux-wait",
            json!({"resources": [{"kind": "Kustomization", "name": "a"}], "failAfter": "10"}),
            &["failAfter", "invalid duration"],
        );
        refuses(
            "flux-wait",
            json!({"resources": [{"kind": "Kustomization", "name": "a"}], "failAfter": "-5m"}),
            &["failAfter", "longer than zero"],
        );
        refuses(
            "flux-wait",
            json!({"resources": [{"kind": "Kustomization", "name": "a"}], "revision": "x"}),
            &["unknown field `revision`"],
        );
    }
}
