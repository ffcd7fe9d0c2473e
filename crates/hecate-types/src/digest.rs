//! The Bundle content address: a SHA-256 over a canonical text form of its artifacts.
//!
//! Each artifact becomes one line of NUL-separated fields (`image␀repo␀digest-or-tag`,
//! `chart␀repo␀name␀version`, `commit␀repo␀sha`); the lines are sorted by byte order,
//! joined with `\n` and hashed. Only identity counts: an image's tag is ignored once it
//! has a digest, a commit's branch, tag, message, author, time and the commits it
//! brings never count, and nothing is normalised (case, scheme and trailing slashes
//! are significant). The same set of artifacts in any order therefore has the same
//! address, in this implementation and in the Go reference alike.

use sha2::{Digest as _, Sha256};

use crate::{Artifact, ArtifactRef};

/// How many leading digest characters a Bundle name carries.
const NAME_DIGEST_LEN: usize = 12;

/// The content address of a set of artifacts: 64 lowercase hex characters, no
/// `sha256:` prefix.
pub fn content_digest(artifacts: &[Artifact]) -> String {
    let mut lines: Vec<String> = artifacts.iter().filter_map(canonical_line).collect();
    lines.sort_unstable();
    hex::encode(Sha256::digest(lines.join("\n").as_bytes()))
}

/// The name of the Bundle a Beacon emits for a digest: `<beacon>-<first 12 characters
/// of the digest>` (the whole digest when it is shorter, or when it is not hex and the
/// cut would split a character).
pub fn bundle_name(beacon: &str, digest: &str) -> String {
    let short = digest.get(..NAME_DIGEST_LEN).unwrap_or(digest);
    format!("{beacon}-{short}")
}

/// One artifact's canonical line, or nothing for an artifact with no member.
fn canonical_line(artifact: &Artifact) -> Option<String> {
    let fields: Vec<&str> = match artifact.get()? {
        ArtifactRef::Image(image) => {
            let version = if image.digest.is_empty() {
                &image.tag
            } else {
                &image.digest
            };
            vec!["image", &image.repo, version]
        }
        ArtifactRef::Chart(chart) => vec!["chart", &chart.repo, &chart.name, &chart.version],
        ArtifactRef::Commit(commit) => vec!["commit", &commit.repo, &commit.sha],
    };
    Some(fields.join("\0"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CommitArtifact;

    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn spec_vectors() {
        let api = Artifact::image("ghcr.io/acme/api", "1.2.3", "sha256:aaa");
        let web = Artifact::image("ghcr.io/acme/web", "", "sha256:bbb");
        let cases: Vec<(Vec<Artifact>, &str)> = vec![
            (vec![], EMPTY),
            (
                vec![api.clone()],
                "c4667f6c062c0e64eaad14f4740582f140c9fd2d13c236b25aefd3b19946aa74",
            ),
            (
                vec![api.clone(), web.clone()],
                "0151d1d6c4cf9f3bcb8d521b296204b93f90a06444b8e0a5d670fab9acf42e3e",
            ),
            (
                vec![web, api],
                "0151d1d6c4cf9f3bcb8d521b296204b93f90a06444b8e0a5d670fab9acf42e3e",
            ),
            (
                vec![Artifact::commit(
                    "file:///srv/git/app.git",
                    "0123456789abcdef0123456789abcdef01234567",
                )],
                "76d5a6eda356e03de475c6d9f3a015b2f717036130c812c3b167df140d24115b",
            ),
            (
                vec![
                    Artifact::chart("oci://ghcr.io/acme/charts/api", "", "6.3.5"),
                    Artifact::image("ghcr.io/acme/api", "1.2.3", ""),
                ],
                "f3fdf3264935c1b5a9c771dc5e492fe023c161124aabc978b7d4ab947be83db4",
            ),
            (
                vec![
                    Artifact::image("ghcr.io/acme/api", "1.2.3", ""),
                    Artifact::chart("oci://ghcr.io/acme/charts/api", "", "6.3.5"),
                ],
                "f3fdf3264935c1b5a9c771dc5e492fe023c161124aabc978b7d4ab947be83db4",
            ),
            (
                vec![Artifact::image("acme/thing", "1.0.0", "")],
                "6eaf4a0722c5ae5a5fe8cdc986c8f219e95f2594ff91f5a3054a540df6662224",
            ),
            (
                vec![Artifact::chart("acme/thing", "", "1.0.0")],
                "6bebac97aa0752bfaa5f4b9f49279ff9f78847f043dcd557a377fe9a1228c3fe",
            ),
            (
                vec![Artifact::commit(
                    "https://github.com/acme/app",
                    "0123456789abcdef0123456789abcdef01234567",
                )],
                "ce73bb6246b06182abbc448393d9af93bbf1c4642989b8266fb75c2b9192a29e",
            ),
        ];
        for (artifacts, want) in cases {
            assert_eq!(content_digest(&artifacts), want, "{artifacts:?}");
        }
    }

    #[test]
    fn the_tag_does_not_count_once_there_is_a_digest() {
        let a = Artifact::image("ghcr.io/acme/api", "1.0.0", "sha256:aaa");
        let b = Artifact::image("ghcr.io/acme/api", "latest", "sha256:aaa");
        assert_eq!(content_digest(&[a]), content_digest(&[b]));
    }

    #[test]
    fn different_image_digests_differ() {
        let a = Artifact::image("ghcr.io/acme/api", "1.0.0", "sha256:aaa");
        let b = Artifact::image("ghcr.io/acme/api", "1.0.0", "sha256:bbb");
        assert_ne!(content_digest(&[a]), content_digest(&[b]));
    }

    #[test]
    fn an_image_and_a_chart_with_the_same_text_do_not_collide() {
        let image = Artifact::image("acme/thing", "1.0.0", "");
        let chart = Artifact::chart("acme/thing", "", "1.0.0");
        assert_ne!(content_digest(&[image]), content_digest(&[chart]));
    }

    #[test]
    fn display_fields_of_a_commit_do_not_count() {
        let bare = Artifact::commit("https://github.com/acme/app", "abc");
        let decorated = Artifact {
            commit: Some(CommitArtifact {
                repo: "https://github.com/acme/app".into(),
                sha: "abc".into(),
                branch: "main".into(),
                tag: "v1".into(),
                message: "fix the thing".into(),
                author: "Jane Doe <jane@acme.example>".into(),
                ..CommitArtifact::default()
            }),
            ..Artifact::default()
        };
        assert_eq!(content_digest(&[bare]), content_digest(&[decorated]));
    }

    #[test]
    fn the_commits_a_bundle_brings_do_not_count() {
        // Commit time, the commits since the previous Bundle and where they count from
        // are for people (DECISION 140): the same commit is the same Bundle with or
        // without them, and with the address the spec's vector gives.
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let bare = Artifact::commit("https://github.com/acme/app", sha);
        let at = |s: &str| Some(crate::Time(s.parse().expect("a timestamp")));
        let chronicled = Artifact {
            commit: Some(CommitArtifact {
                repo: "https://github.com/acme/app".into(),
                sha: sha.into(),
                tag: "v1.3.0".into(),
                committed_at: at("2026-03-01T10:00:00Z"),
                commits: vec![crate::CommitSummary {
                    sha: sha.into(),
                    subject: "fix checkout".into(),
                    author: "Jane Doe <jane@acme.example>".into(),
                    committed_at: at("2026-03-01T10:00:00Z"),
                }],
                more_commits: 7,
                commits_since: "fedcba9876543210fedcba9876543210fedcba98".into(),
                ..CommitArtifact::default()
            }),
            ..Artifact::default()
        };
        assert_eq!(
            content_digest(std::slice::from_ref(&chronicled)),
            content_digest(&[bare])
        );
        assert_eq!(
            content_digest(&[chronicled]),
            "ce73bb6246b06182abbc448393d9af93bbf1c4642989b8266fb75c2b9192a29e"
        );
    }

    #[test]
    fn nothing_is_normalised_and_duplicates_count() {
        let lower = Artifact::image("ghcr.io/acme/api", "", "sha256:aaa");
        let upper = Artifact::image("GHCR.io/acme/api", "", "sha256:aaa");
        let slash = Artifact::image("ghcr.io/acme/api/", "", "sha256:aaa");
        assert_ne!(
            content_digest(std::slice::from_ref(&lower)),
            content_digest(&[upper])
        );
        assert_ne!(
            content_digest(std::slice::from_ref(&lower)),
            content_digest(&[slash])
        );
        assert_ne!(
            content_digest(std::slice::from_ref(&lower)),
            content_digest(&[lower.clone(), lower])
        );
    }

    #[test]
    fn an_artifact_with_no_member_contributes_nothing() {
        assert_eq!(content_digest(&[Artifact::default()]), EMPTY);
        let api = Artifact::image("ghcr.io/acme/api", "", "sha256:aaa");
        assert_eq!(
            content_digest(&[api.clone(), Artifact::default()]),
            content_digest(&[api])
        );
    }

    #[test]
    fn several_members_hash_as_the_image() {
        let both = Artifact {
            image: Some(crate::ImageArtifact {
                repo: "r".into(),
                tag: "".into(),
                digest: "d".into(),
            }),
            chart: Some(crate::ChartArtifact {
                repo: "r".into(),
                name: "".into(),
                version: "1".into(),
            }),
            commit: None,
        };
        assert_eq!(
            content_digest(&[both]),
            content_digest(&[Artifact::image("r", "", "d")])
        );
    }

    #[test]
    fn bundle_names() {
        assert_eq!(
            bundle_name("podinfo", "9f8c1a2b3c4d5e6f7a8b"),
            "podinfo-9f8c1a2b3c4d"
        );
        assert_eq!(bundle_name("podinfo", "abc"), "podinfo-abc");
        assert_eq!(bundle_name("podinfo", ""), "podinfo-");
        // A digest is hex, but a hand-written one need not be ASCII: never panic, and
        // never split a character.
        assert_eq!(bundle_name("podinfo", "ééééééééé"), "podinfo-éééééé");
        assert_eq!(bundle_name("podinfo", "aéééééé"), "podinfo-aéééééé");
    }
}
