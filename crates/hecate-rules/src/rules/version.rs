//! A Bundle's name for people (issue 34, DECISION 140): its version — `v1.3.0` where
//! the Bundle is named by its content, `shop-2b6cb0929e7d` — and what its commit says
//! of it: subject, author, time.
//!
//! The version is decided here once. A Beacon writes it as the Bundle's `spec.alias`
//! when it emits the Bundle ([`derive`]); every surface reads it through [`of`], which
//! takes the alias — a person's word wins — and derives it again for a Bundle without
//! one (emitted before Beacons wrote it, or made by hand).

use hecate_types::{Artifact, ArtifactRef, Bundle, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How many artifacts a version names before the rest are counted (`+N`).
pub const MAX_NAMED: usize = 3;

/// How many characters of a commit SHA (or an image digest's hex) a version shows.
pub const SHORT_SHA: usize = 7;

/// The version of `bundle`: its `spec.alias` when set, else [`derive`]d from its
/// artifacts.
pub fn of(bundle: &Bundle) -> String {
    let alias = bundle.spec.alias.trim();
    if alias.is_empty() {
        derive(&bundle.spec.artifacts)
    } else {
        alias.to_string()
    }
}

/// The version a set of artifacts reads as, each artifact's own in order — a commit's
/// tag, else its short SHA; an image's tag, else its short digest; a chart's version —
/// each distinct one once, joined with `, `: at most [`MAX_NAMED`], then `+N` for the
/// rest. Empty when no artifact has anything to say.
pub fn derive(artifacts: &[Artifact]) -> String {
    let mut versions: Vec<String> = Vec::new();
    for version in artifacts.iter().filter_map(artifact_version) {
        if !versions.contains(&version) {
            versions.push(version);
        }
    }
    let rest = versions.len().saturating_sub(MAX_NAMED);
    versions.truncate(MAX_NAMED);
    let mut text = versions.join(", ");
    if rest > 0 {
        text.push_str(&format!(" +{rest}"));
    }
    text
}

/// One artifact's version, as [`derive`] reads it; `None` when it has none to give.
pub fn artifact_version(artifact: &Artifact) -> Option<String> {
    let version = match artifact.get()? {
        ArtifactRef::Commit(commit) if !commit.tag.is_empty() => commit.tag.clone(),
        ArtifactRef::Commit(commit) => short(&commit.sha),
        ArtifactRef::Image(image) if !image.tag.is_empty() => image.tag.clone(),
        ArtifactRef::Image(image) => short(image.digest.trim_start_matches("sha256:")),
        ArtifactRef::Chart(chart) => chart.version.clone(),
    };
    let version = version.trim().to_string();
    (!version.is_empty()).then_some(version)
}

/// The first [`SHORT_SHA`] characters of `text` (all of it when shorter).
pub fn short(text: &str) -> String {
    text.chars().take(SHORT_SHA).collect()
}

/// A Bundle's name for people: its version, and what its first commit says.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BundleName {
    /// The version ([`of`]): `v1.3.0`, `1.4.2, 6.3.5`, `2b6cb09`.
    pub version: String,
    /// The subject line of its first commit artifact, where its Beacon read one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subject: String,
    /// That commit's author, `Name <email>`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub author: String,
    /// When that commit was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_at: Option<Time>,
}

/// `bundle`'s name for people: [`of`], with the subject, author and time of its first
/// commit artifact.
pub fn name(bundle: &Bundle) -> BundleName {
    let commit = bundle.spec.artifacts.iter().find_map(|a| match a.get()? {
        ArtifactRef::Commit(commit) => Some(commit),
        _ => None,
    });
    BundleName {
        version: of(bundle),
        subject: commit.map(|c| c.message.clone()).unwrap_or_default(),
        author: commit.map(|c| c.author.clone()).unwrap_or_default(),
        committed_at: commit.and_then(|c| c.committed_at.clone()),
    }
}

#[cfg(test)]
mod tests {
    use hecate_types::{BundleSpec, CommitArtifact};
    use pretty_assertions::assert_eq;

    use super::*;

    const SHA: &str = "2b6cb0929e7d11aa22bb33cc44dd55ee66ff7788";

    fn tagged(repo: &str, sha: &str, tag: &str) -> Artifact {
        let mut artifact = Artifact::commit(repo, sha);
        if let Some(commit) = artifact.commit.as_mut() {
            commit.tag = tag.into();
        }
        artifact
    }

    #[test]
    fn a_version_is_derived_from_the_artifacts() {
        let cases: Vec<(&str, Vec<Artifact>, &str)> = vec![
            ("nothing", vec![], ""),
            ("an empty artifact", vec![Artifact::default()], ""),
            (
                "a commit's tag",
                vec![tagged("https://git.example/shop", SHA, "v1.3.0")],
                "v1.3.0",
            ),
            (
                "a commit without a tag: its short SHA",
                vec![Artifact::commit("https://git.example/shop", SHA)],
                "2b6cb09",
            ),
            (
                "an image's tag",
                vec![Artifact::image("ghcr.io/acme/api", "1.4.2", "sha256:abc")],
                "1.4.2",
            ),
            (
                "an image without a tag: its short digest",
                vec![Artifact::image(
                    "ghcr.io/acme/api",
                    "",
                    "sha256:9f8c1a2b3c4d5e6f",
                )],
                "9f8c1a2",
            ),
            (
                "a chart's version",
                vec![Artifact::chart(
                    "oci://ghcr.io/acme/charts/api",
                    "",
                    "6.3.5",
                )],
                "6.3.5",
            ),
            (
                "several, in order",
                vec![
                    Artifact::image("ghcr.io/acme/api", "1.4.2", ""),
                    Artifact::chart("oci://ghcr.io/acme/charts/api", "", "6.3.5"),
                ],
                "1.4.2, 6.3.5",
            ),
            (
                "the same version once",
                vec![
                    Artifact::image("ghcr.io/acme/api", "1.4.2", ""),
                    Artifact::image("ghcr.io/acme/web", "1.4.2", ""),
                    Artifact::chart("oci://ghcr.io/acme/charts/shop", "", "1.4.2"),
                ],
                "1.4.2",
            ),
            (
                "three named, the rest counted",
                vec![
                    Artifact::image("a", "1", ""),
                    Artifact::image("b", "2", ""),
                    Artifact::image("c", "3", ""),
                    Artifact::image("d", "4", ""),
                    Artifact::image("e", "5", ""),
                ],
                "1, 2, 3 +2",
            ),
            (
                "a short SHA of a short SHA",
                vec![Artifact::commit("r", "abc")],
                "abc",
            ),
        ];
        for (what, artifacts, want) in cases {
            assert_eq!(derive(&artifacts), want, "{what}");
        }
    }

    fn bundle(alias: &str, artifacts: Vec<Artifact>) -> Bundle {
        Bundle::new(
            "shop-2b6cb0929e7d",
            BundleSpec {
                beacon: "shop".into(),
                alias: alias.into(),
                artifacts,
                ..BundleSpec::default()
            },
        )
    }

    #[test]
    fn the_alias_wins_and_older_bundles_are_derived_again() {
        let artifacts = vec![tagged("https://git.example/shop", SHA, "v1.3.0")];
        assert_eq!(of(&bundle("release-13", artifacts.clone())), "release-13");
        assert_eq!(of(&bundle("", artifacts.clone())), "v1.3.0");
        assert_eq!(of(&bundle("  ", artifacts)), "v1.3.0");
    }

    #[test]
    fn a_name_tells_the_first_commit() {
        let at = Time("2026-03-01T10:00:00Z".parse().expect("a timestamp"));
        let commit = Artifact {
            commit: Some(CommitArtifact {
                repo: "https://git.example/shop".into(),
                sha: SHA.into(),
                tag: "v1.3.0".into(),
                message: "checkout: retry the payment call".into(),
                author: "Ann Example <ann@example.com>".into(),
                committed_at: Some(at.clone()),
                ..CommitArtifact::default()
            }),
            ..Artifact::default()
        };
        let image = Artifact::image("ghcr.io/acme/shop", "1.3.0", "");
        assert_eq!(
            name(&bundle("", vec![image.clone(), commit])),
            BundleName {
                version: "1.3.0, v1.3.0".into(),
                subject: "checkout: retry the payment call".into(),
                author: "Ann Example <ann@example.com>".into(),
                committed_at: Some(at),
            }
        );
        // No commit: the version alone.
        assert_eq!(
            name(&bundle("", vec![image])),
            BundleName {
                version: "1.3.0".into(),
                ..BundleName::default()
            }
        );
    }
}
