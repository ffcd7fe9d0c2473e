//! The `flux` checker's configuration (spec controller.md §6.2): decoded leniently,
//! then validated into [`FluxCheck`] — the objects to read, each with a known API
//! version and namespace. Pure; the `flux-reconcile` and `flux-wait` steps validate
//! their resources with the same rules.

use jiff::SignedDuration;
use kube::core::GroupVersionKind;
use serde::Deserialize;
use serde_json::Value;

/// How long a `Ready=False` object may stay failing before it counts as `Degraded`,
/// when the configuration does not say.
pub const DEFAULT_FAIL_AFTER: SignedDuration = SignedDuration::from_mins(10);

/// The `with` of a `flux` health check, as written. Unknown keys are ignored: a health
/// check that cannot be read reports `Unknown` rather than failing the Gate.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FluxConfig {
    /// The Flux objects to judge.
    #[serde(default)]
    pub resources: Vec<ResourceRef>,
    /// The revision every object must have applied to be `Healthy`.
    #[serde(default)]
    pub expected_revision: Option<String>,
    /// How long an object may fail before it is `Degraded`, as a Go duration.
    #[serde(default)]
    pub fail_after: Option<String>,
    /// The Secret holding the kubeconfig of a remote cluster to read from.
    #[serde(default)]
    pub cluster_ref: Option<ClusterRef>,
}

/// One Flux object, as written in a configuration.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// The object's kind, e.g. `Kustomization`.
    #[serde(default)]
    pub kind: String,
    /// The object's name.
    #[serde(default)]
    pub name: String,
    /// The object's namespace; the Gate's (or Passage's) when empty.
    #[serde(default)]
    pub namespace: String,
    /// The object's API version; the kind's Flux default when empty.
    #[serde(default)]
    pub api_version: String,
}

/// A Secret, in the Gate's namespace, holding a kubeconfig — Flux's
/// `kubeConfig.secretRef` shape, `{name, key}`.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterRef {
    /// The Secret's name.
    #[serde(default)]
    pub name: String,
    /// The key holding the kubeconfig; blank: `value`, else `value.yaml`, as Flux reads.
    #[serde(default)]
    pub key: String,
}

/// A validated `clusterRef`: the Secret, and the key the reference names, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSecret {
    /// The Secret's name, in the Gate's (or Passage's) namespace.
    pub name: String,
    /// The key named; `None`: Flux's defaults ([`hecate_types::secrets::DEFAULT_KEYS`]).
    pub key: Option<String>,
}

impl std::fmt::Display for ClusterSecret {
    /// `name`, or `name` and its key: how a Secret is named where a remote cluster is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.key {
            Some(key) => write!(f, "{} (key {key})", self.name),
            None => f.write_str(&self.name),
        }
    }
}

impl ClusterSecret {
    /// How an object of this cluster is told from one of the same kind, namespace and
    /// name elsewhere: `Kind/namespace/name@<this>` — the Secret's name, and `:key`
    /// where one is named (one Secret may hold several clusters).
    pub fn qualifier(&self) -> String {
        crate::rules::flux::cluster_name(&self.name, self.key.as_deref())
    }
}

/// A configuration that cannot be used, and why.
#[derive(thiserror::Error, Clone, Debug, PartialEq, Eq)]
#[error("{0}")]
pub struct ConfigError(String);

/// A validated `flux` configuration: what to read, where, and how to judge it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FluxCheck {
    /// The objects to read, at least one.
    pub targets: Vec<Target>,
    /// The revision to wait for; `None` when any will do.
    pub expected_revision: Option<String>,
    /// How long an object may fail before it is `Degraded`.
    pub fail_after: SignedDuration,
    /// The Secret holding a remote cluster's kubeconfig; `None` for the cluster the
    /// controller runs in.
    pub cluster_secret: Option<ClusterSecret>,
}

/// One object to read, with every default applied.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    /// The API group; empty for the core group.
    pub group: String,
    /// The API version within the group.
    pub version: String,
    /// The kind.
    pub kind: String,
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl FluxConfig {
    /// Decodes a check's `with`, ignoring keys it does not know. No `with` at all
    /// decodes to an empty configuration, which [`FluxConfig::validate`] refuses.
    pub fn decode(with: Option<&Value>) -> Result<Self, ConfigError> {
        match with {
            None | Some(Value::Null) => Ok(Self::default()),
            Some(with) => Self::deserialize(with)
                .map_err(|e| ConfigError(format!("unreadable flux configuration: {e}"))),
        }
    }

    /// Applies the defaults and checks the rules of §6.2: at least one resource; each
    /// with a name and a kind whose API version is given or known; and, when
    /// `refuse_cross_namespace`, no resource outside `namespace` — such a reference
    /// is refused, never quietly read from `namespace` instead.
    pub fn validate(
        &self,
        namespace: &str,
        refuse_cross_namespace: bool,
    ) -> Result<FluxCheck, ConfigError> {
        if self.resources.is_empty() {
            return Err(ConfigError("no resources to check".into()));
        }
        let targets = self
            .resources
            .iter()
            .enumerate()
            .map(|(index, resource)| {
                resource
                    .target(namespace, refuse_cross_namespace)
                    .map_err(|problem| ConfigError(format!("resources[{index}]: {problem}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let fail_after = match self.fail_after.as_deref().map(str::trim) {
            None | Some("") => DEFAULT_FAIL_AFTER,
            Some(text) => hecate_types::duration::parse(text)
                .map_err(|e| ConfigError(format!("failAfter: {e}")))?,
        };
        let cluster_secret = match &self.cluster_ref {
            None => None,
            Some(cluster) if cluster.name.trim().is_empty() => {
                return Err(ConfigError("clusterRef: name is required".into()));
            }
            Some(cluster) => {
                let key = match cluster.key.trim() {
                    "" => None,
                    key => {
                        hecate_types::secrets::check_key(key)
                            .map_err(|problem| ConfigError(format!("clusterRef: {problem}")))?;
                        Some(key.to_string())
                    }
                };
                Some(ClusterSecret {
                    name: cluster.name.trim().to_string(),
                    key,
                })
            }
        };
        Ok(FluxCheck {
            targets,
            expected_revision: self
                .expected_revision
                .as_deref()
                .map(str::trim)
                .filter(|revision| !revision.is_empty())
                .map(str::to_string),
            fail_after,
            cluster_secret,
        })
    }
}

impl ResourceRef {
    fn target(&self, namespace: &str, refuse_cross_namespace: bool) -> Result<Target, String> {
        let (kind, name) = (self.kind.trim(), self.name.trim());
        if kind.is_empty() {
            return Err("kind is required".into());
        }
        if name.is_empty() {
            return Err(format!("{kind}: name is required"));
        }
        let api_version = match self.api_version.trim() {
            "" => default_api_version(kind).ok_or_else(|| {
                format!("{kind}/{name}: {kind} is not a Flux kind; give its apiVersion")
            })?,
            given => given,
        };
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", api_version),
        };
        if version.is_empty() || version.contains('/') || api_version.starts_with('/') {
            return Err(format!(
                "{kind}/{name}: apiVersion {api_version:?} is not group/version"
            ));
        }
        let requested = self.namespace.trim();
        outside(
            &format!("{kind}/{requested}/{name}"),
            requested,
            namespace,
            refuse_cross_namespace,
        )?;
        Ok(Target {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            namespace: if requested.is_empty() {
                namespace
            } else {
                requested
            }
            .to_string(),
            name: name.to_string(),
        })
    }
}

/// The operator's rule for an object a Gate names in `requested`, another namespace
/// than its own `namespace` (empty: its own): refused while `refuse` — the controller's
/// `--no-cross-namespace-refs`, on by default — with `what` named. Flux's objects and
/// Flagger's Canaries alike: a Gate author reads their own namespace only.
pub fn outside(what: &str, requested: &str, namespace: &str, refuse: bool) -> Result<(), String> {
    if refuse && !requested.is_empty() && requested != namespace {
        return Err(format!(
            "{what}: references outside namespace {namespace} are refused"
        ));
    }
    Ok(())
}

/// The API version Flux serves a kind at, for the kinds Flux defines (ops' rule).
pub use crate::rules::flux::default_api_version;

impl Target {
    /// `<Kind>/<namespace>/<name>`: how results name the object.
    pub fn key(&self) -> String {
        crate::rules::flux::object_key(&self.kind, &self.namespace, &self.name, "")
    }

    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The object's group, version and kind.
    pub fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::gvk(&self.group, &self.version, &self.kind)
    }
}

#[cfg(test)]
mod tests {
    use jiff::SignedDuration;
    use serde_json::json;

    use super::{DEFAULT_FAIL_AFTER, FluxCheck, FluxConfig, Target};

    fn validate(with: serde_json::Value, refuse: bool) -> Result<FluxCheck, String> {
        FluxConfig::decode(Some(&with))
            .and_then(|config| config.validate("shop", refuse))
            .map_err(|e| e.to_string())
    }

    fn target(api_version: &str, kind: &str, namespace: &str, name: &str) -> Target {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        Target {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    #[test]
    fn each_flux_kind_has_its_default_api_version_and_an_explicit_one_wins() {
        let check = validate(
            json!({"resources": [
                {"kind": "Kustomization", "name": "a"},
                {"kind": "HelmRelease", "name": "b"},
                {"kind": "GitRepository", "name": "c"},
                {"kind": "OCIRepository", "name": "d"},
                {"kind": "HelmChart", "name": "e"},
                {"kind": "HelmRepository", "name": "f"},
                {"kind": "Bucket", "name": "g"},
                {"kind": "HelmRelease", "name": "h", "apiVersion": "helm.toolkit.fluxcd.io/v2beta2"},
                {"kind": "Widget", "name": "i", "apiVersion": "example.com/v1"},
                {"kind": "ConfigMap", "name": "j", "apiVersion": "v1"},
            ]}),
            true,
        )
        .expect("a valid configuration");
        assert_eq!(
            check.targets,
            vec![
                target(
                    "kustomize.toolkit.fluxcd.io/v1",
                    "Kustomization",
                    "shop",
                    "a"
                ),
                target("helm.toolkit.fluxcd.io/v2", "HelmRelease", "shop", "b"),
                target("source.toolkit.fluxcd.io/v1", "GitRepository", "shop", "c"),
                target("source.toolkit.fluxcd.io/v1", "OCIRepository", "shop", "d"),
                target("source.toolkit.fluxcd.io/v1", "HelmChart", "shop", "e"),
                target("source.toolkit.fluxcd.io/v1", "HelmRepository", "shop", "f"),
                target("source.toolkit.fluxcd.io/v1", "Bucket", "shop", "g"),
                target("helm.toolkit.fluxcd.io/v2beta2", "HelmRelease", "shop", "h"),
                target("example.com/v1", "Widget", "shop", "i"),
                target("v1", "ConfigMap", "shop", "j"),
            ]
        );
        assert_eq!(check.targets[9].api_version(), "v1");
        assert_eq!(
            check.targets[0].api_version(),
            "kustomize.toolkit.fluxcd.io/v1"
        );
        assert_eq!(check.targets[0].key(), "Kustomization/shop/a");
    }

    #[test]
    fn defaults_apply_and_unknown_keys_are_ignored() {
        let check = validate(
            json!({"resources": [{"kind": "Kustomization", "name": "app", "colour": "red"}],
                   "somethingElse": 1}),
            true,
        )
        .expect("a valid configuration");
        assert_eq!(check.fail_after, DEFAULT_FAIL_AFTER);
        assert_eq!(check.expected_revision, None);
        assert_eq!(check.cluster_secret, None);

        let check = validate(
            json!({"resources": [{"kind": "Kustomization", "name": "app"}],
                   "expectedRevision": "main@sha1:abc", "failAfter": "1h30m",
                   "clusterRef": {"name": "prod-kubeconfig"}}),
            true,
        )
        .expect("a valid configuration");
        assert_eq!(check.fail_after, SignedDuration::from_mins(90));
        assert_eq!(check.expected_revision.as_deref(), Some("main@sha1:abc"));
        let secret = check.cluster_secret.expect("a remote cluster");
        assert_eq!(
            (secret.name.as_str(), secret.key),
            ("prod-kubeconfig", None)
        );

        // Flux's `secretRef: {name, key}`: a key of the Secret's own choosing.
        let check = validate(
            json!({"resources": [{"kind": "Kustomization", "name": "app"}],
                   "clusterRef": {"name": "fleet", "key": " eu-1.yaml "}}),
            true,
        )
        .expect("a valid configuration");
        let secret = check.cluster_secret.expect("a remote cluster");
        assert_eq!(secret.key.as_deref(), Some("eu-1.yaml"));
        assert_eq!(secret.to_string(), "fleet (key eu-1.yaml)");

        let check = validate(
            json!({"resources": [{"kind": "Kustomization", "name": "app"}],
                   "expectedRevision": "", "failAfter": ""}),
            true,
        )
        .expect("a valid configuration");
        assert_eq!(check.fail_after, DEFAULT_FAIL_AFTER);
        assert_eq!(check.expected_revision, None);
    }

    #[test]
    fn the_same_namespace_may_be_named_and_another_is_refused_unless_allowed() {
        let other = json!({"resources": [{"kind": "Kustomization", "name": "app", "namespace": "flux-system"}]});
        let error = validate(other.clone(), true).expect_err("refused");
        assert!(error.contains("outside namespace shop"), "{error}");
        assert!(error.contains("Kustomization/flux-system/app"), "{error}");

        let allowed = validate(other, false).expect("allowed");
        assert_eq!(allowed.targets[0].namespace, "flux-system");

        let same =
            json!({"resources": [{"kind": "Kustomization", "name": "app", "namespace": "shop"}]});
        assert_eq!(
            validate(same, true).expect("allowed").targets[0].namespace,
            "shop"
        );
    }

    #[test]
    fn unusable_configurations_say_what_is_wrong() {
        let cases = [
            (json!({}), "no resources"),
            (json!({"resources": []}), "no resources"),
            (json!({"resources": "Kustomization/app"}), "unreadable"),
            (
                json!({"resources": [{"name": "app"}]}),
                "resources[0]: kind is required",
            ),
            (
                json!({"resources": [{"kind": "Kustomization", "name": "a"}, {"kind": "Kustomization"}]}),
                "resources[1]: Kustomization: name is required",
            ),
            (
                json!({"resources": [{"kind": "Deployment", "name": "api"}]}),
                "Deployment is not a Flux kind",
            ),
            (
                json!({"resources": [{"kind": "Widget", "name": "w", "apiVersion": "a/b/c"}]}),
                "is not group/version",
            ),
            (
                json!({"resources": [{"kind": "Widget", "name": "w", "apiVersion": "example.com/"}]}),
                "is not group/version",
            ),
            (
                json!({"resources": [{"kind": "Kustomization", "name": "a"}], "failAfter": "soon"}),
                "failAfter",
            ),
            (
                json!({"resources": [{"kind": "Kustomization", "name": "a"}], "clusterRef": {}}),
                "clusterRef: name is required",
            ),
            (
                json!({"resources": [{"kind": "Kustomization", "name": "a"}],
                       "clusterRef": {"name": "fleet", "key": "../value"}}),
                "clusterRef: key \"../value\" is not a Secret key",
            ),
        ];
        for (with, problem) in cases {
            let error = validate(with.clone(), true).expect_err("refused");
            assert!(
                error.contains(problem),
                "{with}: {error:?} lacks {problem:?}"
            );
        }
        assert!(
            FluxConfig::decode(None)
                .expect("nothing decodes")
                .validate("shop", true)
                .is_err()
        );
    }
}
