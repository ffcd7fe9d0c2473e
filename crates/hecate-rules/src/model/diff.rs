//! What changed between two Bundles (issue 34, DECISION 140): their artifacts side by
//! side, the commits between them and which way it goes. Judged in
//! [`crate::rules::diff`]; `hecate diff`, `GET …/bundles/{name}/diff` and MCP's
//! `diff_bundles` show this one value.
//!
//! The JSON shape is stable interface:
//!
//! ```json
//! {
//!   "namespace": "demo",
//!   "from": {"name": "shop-2b6cb0929e7d", "version": "v1.3.0"},
//!   "to": {"name": "shop-9f8c1a2b3c4d", "version": "v1.4.0"},
//!   "gate": "production",
//!   "direction": "forward",
//!   "artifacts": [{"kind": "commit", "repo": "https://git.example/shop",
//!                  "from": "v1.3.0", "to": "v1.4.0",
//!                  "fromDigest": "2b6c…", "toDigest": "9f8c…", "changed": true}],
//!   "commits": [{"sha": "9f8c…", "subject": "checkout: retry the payment call",
//!                "author": "Ann <ann@example.com>", "committedAt": "2026-03-01T10:00:00Z"}],
//!   "moreCommits": 0
//! }
//! ```
//!
//! `from`, `gate`, `gap` (with `gapWords`, what it means in words) and `leftBehind` are left out
//! when absent, as are an artifact's `name`, `from`/`to` and `fromDigest`/`toDigest`;
//! `artifacts`, `commits` and `moreCommits` are always there.

use hecate_types::CommitSummary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What changed between two Bundles.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BundleDiff {
    /// The namespace of both.
    pub namespace: String,
    /// The Bundle compared against: what a Gate runs, the Beacon's previous Bundle, or
    /// the one named. Absent when there is none — a Gate that holds nothing, a
    /// Beacon's first Bundle — and then every artifact of `to` is added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<BundleRef>,
    /// The Bundle asked about.
    pub to: BundleRef,
    /// The Gate whose occupant `from` is, when the comparison is against a Gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// Which way `to` lies from `from`: `forward` (newer), `back` (older: moving to it
    /// is a rollback, and `commits` are those it undoes) or `same`.
    pub direction: DiffDirection,
    /// Each artifact, matched by kind and repository (and a chart's name): `to`'s in
    /// its order, then those only `from` has.
    pub artifacts: Vec<ArtifactChange>,
    /// The commits between the two, newest first: those the Bundles of their Beacon
    /// emitted after the older one, up to and including the newer one, recorded when
    /// each was emitted. At most 50.
    pub commits: Vec<CommitSummary>,
    /// How many more commits lie between them than `commits` lists (beyond the 50, or
    /// beyond what each Bundle lists).
    pub more_commits: u32,
    /// Why `commits` may not be all of them; absent when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<CommitGap>,
    /// What `gap` means for the list, in the words every surface shows
    /// ([`CommitGap::words`]); absent with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_words: Option<String>,
    /// Against a Gate whose newest crossing was aborted after its push: that commit,
    /// still on the environment's branch, which Flux applies until the next crossing
    /// whatever `from` says the Gate runs (issue 53; not the reference's: additive).
    #[serde(
        default,
        rename = "leftBehind",
        skip_serializing_if = "Option::is_none"
    )]
    pub left_behind: Option<super::LeftBehind>,
}

/// A Bundle as a diff names it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BundleRef {
    /// Its name.
    pub name: String,
    /// Its version for people (`rules::version::of`): `v1.3.0`, `1.4.2, 6.3.5`.
    pub version: String,
}

/// Which way a diff goes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiffDirection {
    /// `to` is newer than `from` (or there is no `from`).
    Forward,
    /// `to` is older than `from`: moving to it is a rollback.
    Back,
    /// The same Bundle, or the same content.
    Same,
}

/// What kind of artifact.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactKind {
    /// A container image.
    Image,
    /// A Helm chart.
    Chart,
    /// A Git commit.
    Commit,
}

/// One artifact on both sides: `from` absent, it is added; `to` absent, removed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactChange {
    /// What kind of artifact.
    pub kind: ArtifactKind,
    /// Its repository: an image's, a chart repository, a Git URL.
    pub repo: String,
    /// A chart's name, where its repository (an index) holds several.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Its version in `from`: an image's tag (or short digest), a chart's version, a
    /// commit's tag (or short SHA). Absent: `from` does not have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Its version in `to`. Absent: `to` does not have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// What the version stands for in `from`, where it matters: an image's manifest
    /// digest, a commit's full SHA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_digest: Option<String>,
    /// The same in `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_digest: Option<String>,
    /// Whether it differs: another digest, SHA or version, or on one side only.
    pub changed: bool,
}

/// Why a diff's commits may not be all of them.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommitGap {
    /// A Bundle between the two is no longer kept (the Beacon's retention deleted
    /// it): the commits it brought are missing.
    BundlesCollected,
    /// A Bundle between them, or `to`, does not record the commits it brought: it was
    /// emitted before Beacons recorded them, or its previous commit lay beyond the
    /// history a Beacon reads.
    NotRecorded,
    /// The two come from different Beacons: their commits do not follow one another.
    DifferentBeacons,
}

impl ArtifactKind {
    /// The kind as JSON spells it: `image`, `chart`, `commit`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Chart => "chart",
            Self::Commit => "commit",
        }
    }
}

impl CommitGap {
    /// What it means for the list, in words every surface shows.
    pub fn words(self) -> &'static str {
        match self {
            Self::BundlesCollected => {
                "a Bundle between them is no longer kept: the commits it brought are missing"
            }
            Self::NotRecorded => {
                "a Bundle between them does not record the commits it brought (emitted \
                 before Beacons recorded them, or from further back than its Beacon reads): \
                 there may be more"
            }
            Self::DifferentBeacons => {
                "they come from different Beacons: their commits do not follow one another"
            }
        }
    }
}
