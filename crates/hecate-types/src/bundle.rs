//! Bundle: an immutable, content-addressed set of artifact versions.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Time;

/// What a Bundle is made of. A Beacon writes it once; nothing changes it afterwards.
// Each printcolumn(...) repeats the same keys, which clippy reads as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "hecate.dev",
    version = "v1alpha1",
    kind = "Bundle",
    namespaced,
    status = "BundleStatus",
    shortname = "bnd",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Bundle is one release candidate: a fixed set of artifact versions, named by their \
           content. It moves through Gates; its status records which Gates it has cleared, \
           where it was stopped, and who approved it where.",
    // Beyond the reference's CRD (additive): Explain lists only the Bundles of the
    // Beacon its Gate admits, selected by the API server (DECISIONS 42).
    selectable = ".spec.beacon",
    printcolumn(name = "Beacon", type_ = "string", json_path = ".spec.beacon"),
    printcolumn(name = "Digest", type_ = "string", json_path = ".spec.digest"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct BundleSpec {
    /// The Beacon that emitted this Bundle, in the same namespace.
    pub beacon: String,
    /// The content address of `artifacts` (see `hecate_types::digest`), written at
    /// creation.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
    /// An optional short handle for people, e.g. a release name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_ALIAS_LENGTH))]
    pub alias: String,
    /// The artifact versions this Bundle pins.
    #[schemars(length(min = 1))]
    pub artifacts: Vec<Artifact>,
}

/// One versioned item. Exactly one member is set.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
pub struct Artifact {
    /// A container image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageArtifact>,
    /// A Helm chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartArtifact>,
    /// A Git commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<CommitArtifact>,
}

/// The member an [`Artifact`] holds, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArtifactRef<'a> {
    /// A container image.
    Image(&'a ImageArtifact),
    /// A Helm chart.
    Chart(&'a ChartArtifact),
    /// A Git commit.
    Commit(&'a CommitArtifact),
}

impl Artifact {
    /// The member this artifact holds. The schema allows exactly one; should an
    /// object carry several anyway, image wins over chart over commit, as in the
    /// content address.
    pub fn get(&self) -> Option<ArtifactRef<'_>> {
        if let Some(image) = &self.image {
            Some(ArtifactRef::Image(image))
        } else if let Some(chart) = &self.chart {
            Some(ArtifactRef::Chart(chart))
        } else {
            self.commit.as_ref().map(ArtifactRef::Commit)
        }
    }

    /// An image artifact.
    pub fn image(
        repo: impl Into<String>,
        tag: impl Into<String>,
        digest: impl Into<String>,
    ) -> Self {
        Self {
            image: Some(ImageArtifact {
                repo: repo.into(),
                tag: tag.into(),
                digest: digest.into(),
            }),
            ..Self::default()
        }
    }

    /// A chart artifact.
    pub fn chart(
        repo: impl Into<String>,
        name: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        Self {
            chart: Some(ChartArtifact {
                repo: repo.into(),
                name: name.into(),
                version: version.into(),
            }),
            ..Self::default()
        }
    }

    /// A commit artifact found without branch, tag or message.
    pub fn commit(repo: impl Into<String>, sha: impl Into<String>) -> Self {
        Self {
            commit: Some(CommitArtifact {
                repo: repo.into(),
                sha: sha.into(),
                ..CommitArtifact::default()
            }),
            ..Self::default()
        }
    }
}

/// A container image at one version.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ImageArtifact {
    /// The repository, e.g. `ghcr.io/acme/api`.
    #[schemars(length(max = crate::limits::MAX_REPO_LENGTH))]
    pub repo: String,
    /// The tag that was resolved.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_REF_LENGTH))]
    pub tag: String,
    /// The manifest digest, `sha256:…`; the image's identity when present.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
}

/// A Helm chart at one version.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ChartArtifact {
    /// The chart repository: an HTTPS index or an `oci://` reference.
    #[schemars(length(max = crate::limits::MAX_REPO_LENGTH))]
    pub repo: String,
    /// The chart's name; empty for OCI charts, whose reference already names them.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_REF_LENGTH))]
    pub name: String,
    /// The resolved chart version.
    #[schemars(length(max = crate::limits::MAX_REF_LENGTH))]
    pub version: String,
}

/// A Git commit.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct CommitArtifact {
    /// The repository URL.
    #[schemars(length(max = crate::limits::MAX_REPO_LENGTH))]
    pub repo: String,
    /// The full commit SHA.
    pub sha: String,
    /// The branch it was found on, for display.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_REF_LENGTH))]
    pub branch: String,
    /// The tag it was found by, for display.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_REF_LENGTH))]
    pub tag: String,
    /// The commit's subject line, for display.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_COMMIT_TEXT_LENGTH))]
    pub message: String,
    /// The commit's author, `Name <email>`, where the Beacon read it: for display, and
    /// for approval policies that exclude the author. Hecate's own addition (DECISION
    /// 137); like the subject, not part of the Bundle's identity.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_COMMIT_TEXT_LENGTH))]
    pub author: String,
    /// When the commit was made (its committer time), where the Beacon read it: where
    /// lead time starts. Hecate's own addition (DECISION 140); for display, not part
    /// of the Bundle's identity.
    #[serde(
        default,
        rename = "committedAt",
        skip_serializing_if = "Option::is_none"
    )]
    pub committed_at: Option<Time>,
    /// The commits this Bundle brings since its Beacon's previous Bundle, newest
    /// first along first parents (filtered by the watch's paths), at most
    /// [`crate::limits::MAX_BUNDLE_COMMITS`]; empty when the Beacon could not tell
    /// (`commitsSince` is empty then). Hecate's own addition (DECISION 140); for
    /// display, not part of the Bundle's identity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_BUNDLE_COMMITS))]
    pub commits: Vec<CommitSummary>,
    /// How many more commits it brings than `commits` lists. An `int32` on the wire,
    /// as Kubernetes spells integers.
    #[schemars(with = "i32", range(min = 0))]
    #[serde(
        default,
        rename = "moreCommits",
        skip_serializing_if = "crate::schema::is_zero"
    )]
    pub more_commits: u32,
    /// The commit of the Beacon's previous Bundle that `commits` count from (not
    /// included): how a reader chains one Bundle's commits to the next, and knows
    /// when a Bundle between two is gone. Empty when the Beacon knew no previous
    /// commit, or did not find it in the history it reads. Hecate's own addition
    /// (DECISION 140).
    #[serde(
        default,
        rename = "commitsSince",
        skip_serializing_if = "String::is_empty"
    )]
    pub commits_since: String,
}

/// One commit, as a Beacon read it: for people.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommitSummary {
    /// The full SHA.
    pub sha: String,
    /// The subject line.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_COMMIT_TEXT_LENGTH))]
    pub subject: String,
    /// The author, `Name <email>`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_COMMIT_TEXT_LENGTH))]
    pub author: String,
    /// When it was committed (its committer time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_at: Option<Time>,
}

/// Where a Bundle has been: what it cleared, where it was stopped, who approved it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BundleStatus {
    /// Gates this Bundle crossed and passed verification at, oldest first. Downstream
    /// Gates admit it by looking here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared: Vec<GateCrossing>,
    /// Crossings that failed or were aborted, newest first, at most ten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<GateCrossing>,
    /// Human approvals, at most one per Gate. Under an approval policy, the approval
    /// that completed it (the others are in `approvals`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["gate"]))]
    pub approved_for: Vec<BundleApproval>,
    /// Every approval given for a Gate with an approval policy, at most one per person
    /// and Gate, with the groups the cluster reported for the approver. Hecate's own
    /// addition (DECISION 137).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_APPROVALS))]
    pub approvals: Vec<PolicyApproval>,
    /// Each "no" a person gave for a Gate: it holds the Bundle there until withdrawn.
    /// At most one standing per person and Gate. Hecate's own addition (DECISION 137).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_APPROVALS))]
    pub rejections: Vec<Rejection>,
    /// Gates this Bundle crossed whose verification said no, newest first, at most ten;
    /// `reason` is the verifier's. Such a Bundle never clears that Gate. Hecate's own
    /// addition (DECISION 139).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unverified: Vec<GateCrossing>,
}

/// A Bundle's passage through one Gate, as the Bundle remembers it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct GateCrossing {
    /// The Gate.
    pub gate: String,
    /// The Passage that made the crossing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub passage: String,
    /// When it was recorded.
    pub at: Time,
    /// Who asked for the crossing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub actor: String,
    /// Why the crossing failed; only on `blocked` and `unverified` entries.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// A person's approval of a Bundle for one Gate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct BundleApproval {
    /// The Gate the approval is for.
    pub gate: String,
    /// Who approved, as the cluster identified them.
    pub actor: String,
    /// When.
    pub at: Time,
}

/// An approval under a Gate's approval policy: who, with which groups, when.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct PolicyApproval {
    /// The Gate the approval is for.
    pub gate: String,
    /// Who approved, as the cluster identified them.
    pub actor: String,
    /// The groups the cluster reported for them when they approved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// When.
    pub at: Time,
}

/// A person's "no" to a Bundle for one Gate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rejection {
    /// The Gate it is held from.
    pub gate: String,
    /// Who rejected it, as the cluster identified them.
    pub actor: String,
    /// When.
    pub at: Time,
    /// Why, in their words.
    #[schemars(length(max = crate::limits::MAX_REASON_CHARS))]
    pub reason: String,
    /// Who withdrew it; unset while it stands.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub withdrawn_by: String,
    /// When it was withdrawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn_at: Option<Time>,
    /// The groups the cluster reported for whoever withdrew it, when they did: what
    /// says whether the approval policy let them withdraw another person's "no"
    /// (DECISION 148).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withdrawn_groups: Vec<String>,
}

impl Rejection {
    /// Whether the record says someone withdrew it. Whether that withdrawal counts —
    /// was it theirs to withdraw — is the approval policy's, judged by
    /// `hecate_ops::rules::approval::stands`.
    pub fn is_withdrawn(&self) -> bool {
        !self.withdrawn_by.is_empty()
    }
}

impl Bundle {
    /// The approvals given under the named Gate's approval policy.
    pub fn policy_approvals_for<'a>(
        &'a self,
        gate: &'a str,
    ) -> impl Iterator<Item = &'a PolicyApproval> + 'a {
        self.status
            .iter()
            .flat_map(|s| s.approvals.iter())
            .filter(move |a| a.gate == gate)
    }

    /// The rejections given for the named Gate, withdrawn or not, oldest first.
    pub fn rejections_for<'a>(&'a self, gate: &'a str) -> impl Iterator<Item = &'a Rejection> + 'a {
        self.status
            .iter()
            .flat_map(|s| s.rejections.iter())
            .filter(move |r| r.gate == gate)
    }

    /// Whether this Bundle has cleared (crossed and verified) the named Gate.
    pub fn has_cleared(&self, gate: &str) -> bool {
        self.status
            .as_ref()
            .is_some_and(|s| s.cleared.iter().any(|c| c.gate == gate))
    }

    /// Why the verification of this Bundle's crossing of the named Gate said no, if it
    /// did.
    pub fn failed_verification(&self, gate: &str) -> Option<&GateCrossing> {
        self.status
            .as_ref()
            .and_then(|s| s.unverified.iter().find(|c| c.gate == gate))
    }

    /// Whether a crossing of the named Gate failed or was aborted for this Bundle.
    pub fn was_blocked_by(&self, gate: &str) -> bool {
        self.status
            .as_ref()
            .is_some_and(|s| s.blocked.iter().any(|c| c.gate == gate))
    }

    /// The approval recorded for the named Gate, if any.
    pub fn approval_for(&self, gate: &str) -> Option<&BundleApproval> {
        self.status
            .as_ref()?
            .approved_for
            .iter()
            .find(|a| a.gate == gate)
    }

    /// The non-empty image digests of this Bundle's artifacts, in spec order.
    pub fn image_digests(&self) -> impl Iterator<Item = &str> {
        self.spec
            .artifacts
            .iter()
            .filter_map(|a| a.image.as_ref())
            .map(|i| i.digest.as_str())
            .filter(|d| !d.is_empty())
    }
}
