//! Beacon: watches artifact sources and emits Bundles.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::{is_false, is_zero};
use crate::{Artifact, Condition, LocalSecretRef, Time};

/// What a Beacon watches and how it turns what it finds into Bundles.
// Each printcolumn(...) repeats the same keys, which clippy reads as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "hecate.dev",
    version = "v1alpha1",
    kind = "Beacon",
    namespaced,
    status = "BeaconStatus",
    shortname = "bcn",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Beacon watches artifact sources — image repositories, charts, Git — and, each \
           time the set of newest versions changes, emits a Bundle that pins them.",
    printcolumn(name = "Interval", type_ = "string", json_path = ".spec.interval"),
    printcolumn(name = "Latest", type_ = "string", json_path = ".status.latestBundle"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct BeaconSpec {
    /// How often to resolve the sources, as a Go duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "5m"))]
    pub interval: Option<String>,
    /// The sources; each resolves to one artifact of the emitted Bundle.
    #[schemars(length(min = 1))]
    pub watch: Vec<WatchSource>,
    /// Whether resolved versions become Bundles (`Automatic`) or are only reported
    /// (`Manual`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Automatic"))]
    pub emit: Option<EmitPolicy>,
    /// How many Bundles of this Beacon that nothing refers to are kept; `0` keeps all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0), extend("default" = 10))]
    pub retain: Option<i32>,
    /// Stop discovering; existing Bundles are left alone.
    #[serde(default, skip_serializing_if = "is_false")]
    pub suspend: bool,
}

/// Whether a Beacon creates Bundles.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum EmitPolicy {
    /// Create a Bundle whenever the resolved set changes.
    #[default]
    Automatic,
    /// Resolve and report, never create.
    Manual,
}

/// How a source chooses among its tags.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum TagSelection {
    /// The highest semantic version, optionally within `constraint`.
    #[default]
    SemVer,
    /// The last tag in byte order.
    Lexical,
    /// The most recently built image.
    NewestBuild,
    /// Follow the digest behind the one tag named in `constraint`.
    Digest,
}

/// One source a Beacon watches. Exactly one member is set.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
pub struct WatchSource {
    /// A container image repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageWatch>,
    /// A Helm chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartWatch>,
    /// A Git repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitWatch>,
    /// A Flux Operator ResourceSetInputProvider in the Beacon's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderWatch>,
}

/// The member a [`WatchSource`] holds, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchSourceRef<'a> {
    /// A container image repository.
    Image(&'a ImageWatch),
    /// A Helm chart.
    Chart(&'a ChartWatch),
    /// A Git repository.
    Git(&'a GitWatch),
    /// A ResourceSetInputProvider.
    Provider(&'a ProviderWatch),
}

impl WatchSource {
    /// The member this source holds (the first set, should several be).
    pub fn get(&self) -> Option<WatchSourceRef<'_>> {
        if let Some(image) = &self.image {
            Some(WatchSourceRef::Image(image))
        } else if let Some(chart) = &self.chart {
            Some(WatchSourceRef::Chart(chart))
        } else if let Some(git) = &self.git {
            Some(WatchSourceRef::Git(git))
        } else {
            self.provider.as_ref().map(WatchSourceRef::Provider)
        }
    }
}

/// Watches a container image repository.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageWatch {
    /// The repository, e.g. `ghcr.io/acme/podinfo`.
    pub repo: String,
    /// How the tag is chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "SemVer"))]
    pub select: Option<TagSelection>,
    /// For `SemVer`, a version range (`^6.0.0`); for `Digest`, the tag to follow.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub constraint: String,
    /// A regular expression tags must match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub allow: String,
    /// Tags never chosen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
    /// A platform such as `linux/amd64`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub platform: String,
    /// A Secret with registry credentials; without it the ambient identity is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<LocalSecretRef>,
    /// Allow a registry over plain HTTP.
    #[serde(default, skip_serializing_if = "is_false")]
    pub insecure: bool,
}

/// Watches a Helm chart.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChartWatch {
    /// An HTTPS chart repository, or an `oci://` reference.
    pub repo: String,
    /// The chart's name in an HTTPS repository; empty for OCI.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// A semantic-version range.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub constraint: String,
    /// A Secret with repository credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<LocalSecretRef>,
}

/// Watches a Git repository: a branch's head, or its newest matching tag.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitWatch {
    /// The repository URL.
    pub repo: String,
    /// Follow this branch's head.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub branch: String,
    /// Follow the newest tag chosen this way instead of a branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<TagWatch>,
    /// Only commits that touch these paths count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Changes under these paths never count, even inside `paths`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_paths: Vec<String>,
    /// A Secret with Git credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<LocalSecretRef>,
}

/// How a Git source chooses among tags.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct TagWatch {
    /// How the tag is chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "SemVer"))]
    pub select: Option<TagSelection>,
    /// A semantic-version range.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub constraint: String,
    /// A regular expression tags must match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub allow: String,
    /// Tags never chosen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
}

/// Reads versions from a Flux Operator ResourceSetInputProvider.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ProviderWatch {
    /// The provider's name, in the Beacon's namespace.
    pub name: String,
}

/// What a Beacon found the last time it looked.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BeaconStatus {
    /// The `metadata.generation` last acted on.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// `Ready` and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The last `reconcile.fluxcd.io/requestedAt` token handled.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_handled_reconcile_at: String,
    /// When the sources were last resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_polled: Option<Time>,
    /// The Bundle the last emission produced or found.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub latest_bundle: String,
    /// What the last poll resolved, in `watch` order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discovered: Vec<Artifact>,
}
