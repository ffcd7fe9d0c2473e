//! What changed between two Bundles (issue 34, DECISION 140), judged once for every
//! surface: the artifacts side by side, and the commits between them.
//!
//! Nothing here reads a repository. A Beacon records on each commit artifact the
//! commits its Bundle brings since the Beacon's previous Bundle (`commits`,
//! `moreCommits`) and which commit those count from (`commitsSince`); the commits
//! between two Bundles are the ones the Bundles of their Beacon emitted after the older
//! one, up to and including the newer one, chained here. Where a link of that chain is
//! missing — a Bundle between them deleted by retention, or one that recorded nothing —
//! the answer says so ([`CommitGap`]) instead of pretending to be whole.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use hecate_types::{Artifact, ArtifactRef, Bundle, CommitArtifact, Gate, Passage};
use kube::ResourceExt as _;

use super::eligibility::{newest_first, passages_newest_first};
use super::passage;
use super::version;
use crate::model::{ArtifactChange, ArtifactKind, BundleDiff, BundleRef, CommitGap, DiffDirection};

/// The most commits a diff lists; the rest are counted in `moreCommits`.
pub const MAX_COMMITS: usize = 50;

/// What a Bundle is compared against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DiffAgainst {
    /// What the Gate runs now: its current occupant (`status.current`, the Bundle
    /// Explain and `hecate status` name as current). A Gate that holds nothing is
    /// compared as nothing: every artifact added.
    Gate(String),
    /// Another Bundle of the namespace.
    Bundle(String),
    /// The Beacon's previous Bundle: the newest of its Bundles emitted before this one
    /// that still exists.
    #[default]
    Previous,
    /// The Gate of that name when the namespace has one, else the Bundle of that name:
    /// what `hecate diff --against` and `?against=` take.
    Named(String),
}

impl DiffAgainst {
    /// The Gate this may name, if any.
    pub fn gate(&self) -> Option<&str> {
        match self {
            Self::Gate(name) | Self::Named(name) => Some(name),
            Self::Bundle(_) | Self::Previous => None,
        }
    }
}

/// What a diff could not find.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// No Gate of this name.
    Gate(String),
    /// No Bundle of this name.
    Bundle(String),
}

/// What changed from what `against` names to Bundle `bundle`, among a namespace's
/// `bundles`; `gate` is the Gate `against` names ([`DiffAgainst::gate`]) when the
/// namespace has it, and `passages` its Passages (any order; others are ignored): what
/// its newest crossing, if aborted, left on the branch is part of what it runs.
pub fn judge(
    bundles: &[&Bundle],
    gate: Option<&Gate>,
    passages: &[&Passage],
    bundle: &str,
    against: &DiffAgainst,
) -> Result<BundleDiff, Missing> {
    let find = |name: &str| {
        bundles
            .iter()
            .copied()
            .find(|b| b.name_any() == name)
            .ok_or_else(|| Missing::Bundle(name.to_string()))
    };
    let to = find(bundle)?;
    let beacon_bundles: Vec<&Bundle> = bundles
        .iter()
        .copied()
        .filter(|b| b.spec.beacon == to.spec.beacon)
        .collect();
    let occupant = |gate: &Gate| gate.current_bundle().map(find).transpose();
    let (from, gate_name) = match (against, gate) {
        (DiffAgainst::Gate(_) | DiffAgainst::Named(_), Some(gate)) => {
            (occupant(gate)?, Some(gate.name_any()))
        }
        (DiffAgainst::Gate(name), None) => return Err(Missing::Gate(name.clone())),
        (DiffAgainst::Named(name) | DiffAgainst::Bundle(name), _) => (Some(find(name)?), None),
        (DiffAgainst::Previous, _) => (
            beacon_bundles
                .iter()
                .copied()
                .filter(|b| newest_first(*b, to) == Ordering::Greater)
                .min_by(|a, b| newest_first(*a, *b)),
            None,
        ),
    };
    let mut diff = between(from, to, &beacon_bundles);
    diff.left_behind = gate_name.as_deref().and_then(|gate| {
        passages
            .iter()
            .copied()
            .filter(|p| p.spec.gate == gate)
            .min_by(|a, b| passages_newest_first(a, b))
            .and_then(passage::left_behind)
    });
    diff.gate = gate_name;
    Ok(diff)
}

/// What changed from `from` (none: nothing before it) to `to`, given the Bundles of
/// `to`'s Beacon that still exist (in any order; `from` and `to` may be among them).
pub fn between(from: Option<&Bundle>, to: &Bundle, beacon_bundles: &[&Bundle]) -> BundleDiff {
    let direction = match from {
        None => DiffDirection::Forward,
        Some(from) if same(from, to) => DiffDirection::Same,
        Some(from) => match newest_first(to, from) {
            Ordering::Less => DiffDirection::Forward,
            Ordering::Greater => DiffDirection::Back,
            Ordering::Equal => DiffDirection::Same,
        },
    };
    let mut diff = BundleDiff {
        namespace: to.namespace().unwrap_or_default(),
        from: from.map(reference),
        to: reference(to),
        gate: None,
        direction,
        artifacts: artifacts(
            from.map(|b| b.spec.artifacts.as_slice())
                .unwrap_or_default(),
            &to.spec.artifacts,
        ),
        commits: Vec::new(),
        more_commits: 0,
        gap: None,
        gap_words: None,
        left_behind: None,
    };
    let (chain, gap) = match (from, direction) {
        (_, DiffDirection::Same) => (Vec::new(), None),
        (None, _) => (vec![to], None),
        (Some(from), _) if from.spec.beacon != to.spec.beacon => {
            let commits = [from, to]
                .iter()
                .any(|b| commit_artifacts(b).next().is_some());
            (Vec::new(), commits.then_some(CommitGap::DifferentBeacons))
        }
        (Some(from), DiffDirection::Back) => chain(to, from, beacon_bundles),
        (Some(from), _) => chain(from, to, beacon_bundles),
    };
    let mut more: u64 = 0;
    for bundle in chain {
        for commit in commit_artifacts(bundle) {
            diff.commits.extend(commit.commits.iter().cloned());
            more += u64::from(commit.more_commits);
        }
    }
    if diff.commits.len() > MAX_COMMITS {
        more += (diff.commits.len() - MAX_COMMITS) as u64;
        diff.commits.truncate(MAX_COMMITS);
    }
    diff.more_commits = u32::try_from(more).unwrap_or(u32::MAX);
    diff.gap = gap;
    diff.gap_words = gap.map(|g| g.words().to_string());
    diff
}

/// A Bundle as a diff names it.
pub fn reference(bundle: &Bundle) -> BundleRef {
    BundleRef {
        name: bundle.name_any(),
        version: version::of(bundle),
    }
}

/// Whether two Bundles are the same one, or hold the same content.
fn same(a: &Bundle, b: &Bundle) -> bool {
    a.name_any() == b.name_any() || (!a.spec.digest.is_empty() && a.spec.digest == b.spec.digest)
}

/// The Bundles of `newer`'s Beacon emitted after `older`, up to and including `newer`,
/// newest first; and why their commits may not reach back to `older`, if they may not.
fn chain<'a>(
    older: &'a Bundle,
    newer: &'a Bundle,
    beacon_bundles: &[&'a Bundle],
) -> (Vec<&'a Bundle>, Option<CommitGap>) {
    let mut names = BTreeSet::new();
    let mut chain: Vec<&Bundle> = beacon_bundles
        .iter()
        .copied()
        .chain(std::iter::once(newer))
        .filter(|b| b.spec.beacon == newer.spec.beacon)
        .filter(|b| newest_first(*b, older) == Ordering::Less)
        .filter(|b| newest_first(*b, newer) != Ordering::Less)
        .filter(|b| names.insert(b.name_any()))
        .collect();
    chain.sort_by(|a, b| newest_first(*a, *b));
    // Oldest first, each Bundle's commits must count from its predecessor's commit.
    let mut gaps = BTreeSet::new();
    let mut before = older;
    for bundle in chain.iter().rev() {
        for commit in commit_artifacts(bundle) {
            let previous = commit_artifacts(before).find(|p| p.repo == commit.repo);
            if previous.is_some_and(|p| p.sha == commit.sha) {
                continue;
            }
            if commit.commits_since.is_empty() {
                gaps.insert(Gap(CommitGap::NotRecorded));
            } else if previous.is_none_or(|p| p.sha != commit.commits_since) {
                gaps.insert(Gap(CommitGap::BundlesCollected));
            }
        }
        before = bundle;
    }
    (chain, gaps.first().map(|g| g.0))
}

/// A gap ordered by what a reader most needs to know: Bundles gone first.
#[derive(PartialEq, Eq)]
struct Gap(CommitGap);

impl Gap {
    fn rank(&self) -> u8 {
        match self.0 {
            CommitGap::BundlesCollected => 0,
            CommitGap::NotRecorded => 1,
            CommitGap::DifferentBeacons => 2,
        }
    }
}

impl PartialOrd for Gap {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Gap {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

/// A Bundle's commit artifacts, in order.
fn commit_artifacts(bundle: &Bundle) -> impl Iterator<Item = &CommitArtifact> {
    bundle.spec.artifacts.iter().filter_map(|a| match a.get()? {
        ArtifactRef::Commit(commit) => Some(commit),
        _ => None,
    })
}

/// What an artifact is matched by across two Bundles: its kind, repository and (a
/// chart's) name.
fn key(artifact: &Artifact) -> Option<(ArtifactKind, &str, &str)> {
    Some(match artifact.get()? {
        ArtifactRef::Image(image) => (ArtifactKind::Image, image.repo.as_str(), ""),
        ArtifactRef::Chart(chart) => (
            ArtifactKind::Chart,
            chart.repo.as_str(),
            chart.name.as_str(),
        ),
        ArtifactRef::Commit(commit) => (ArtifactKind::Commit, commit.repo.as_str(), ""),
    })
}

/// What identifies an artifact's version, as the content address counts it: an
/// image's digest (its tag without one), a chart's version, a commit's SHA.
fn identity(artifact: &Artifact) -> Option<&str> {
    Some(match artifact.get()? {
        ArtifactRef::Image(image) if image.digest.is_empty() => &image.tag,
        ArtifactRef::Image(image) => &image.digest,
        ArtifactRef::Chart(chart) => &chart.version,
        ArtifactRef::Commit(commit) => &commit.sha,
    })
}

/// The digest a diff shows beside a version: an image's, a commit's full SHA.
fn digest(artifact: &Artifact) -> Option<String> {
    let digest = match artifact.get()? {
        ArtifactRef::Image(image) => &image.digest,
        ArtifactRef::Chart(_) => return None,
        ArtifactRef::Commit(commit) => &commit.sha,
    };
    (!digest.is_empty()).then(|| digest.clone())
}

/// `to`'s artifacts each beside `from`'s of the same kind and repository (pairs taken
/// in order), then those only `from` has.
fn artifacts(from: &[Artifact], to: &[Artifact]) -> Vec<ArtifactChange> {
    let mut unmatched: Vec<&Artifact> = from.iter().filter(|a| key(a).is_some()).collect();
    let mut changes = Vec::new();
    for artifact in to {
        let Some(wanted) = key(artifact) else {
            continue;
        };
        let before = unmatched
            .iter()
            .position(|a| key(a) == Some(wanted))
            .map(|i| unmatched.remove(i));
        changes.push(change(wanted, before, Some(artifact)));
    }
    for artifact in unmatched {
        if let Some(wanted) = key(artifact) {
            changes.push(change(wanted, Some(artifact), None));
        }
    }
    changes
}

fn change(
    (kind, repo, name): (ArtifactKind, &str, &str),
    from: Option<&Artifact>,
    to: Option<&Artifact>,
) -> ArtifactChange {
    ArtifactChange {
        kind,
        repo: repo.to_string(),
        name: name.to_string(),
        from: from.and_then(version::artifact_version),
        to: to.and_then(version::artifact_version),
        from_digest: from.and_then(digest),
        to_digest: to.and_then(digest),
        changed: match (from, to) {
            (Some(from), Some(to)) => identity(from) != identity(to),
            _ => true,
        },
    }
}

#[cfg(test)]
mod tests {
    use hecate_types::{
        BundleSpec, CommitSummary, GateOccupant, GateSpec, GateStatus, Time, wellknown,
    };
    use pretty_assertions::assert_eq;

    use super::*;

    fn sha(c: char) -> String {
        c.to_string().repeat(40)
    }

    fn commit(n: usize) -> CommitSummary {
        CommitSummary {
            sha: sha(char::from(b'a' + (n % 26) as u8)),
            subject: format!("change {n}"),
            author: "Ann <ann@example.com>".into(),
            committed_at: None,
        }
    }

    /// A Bundle of Beacon `beacon` emitted at minute `minute`, on commit `head` tagged
    /// `tag`, recording `brings` since `since` (empty: not recorded).
    fn bundle(
        beacon: &str,
        minute: i64,
        head: char,
        tag: &str,
        since: &str,
        brings: Vec<CommitSummary>,
        more: u32,
    ) -> Bundle {
        let artifact = Artifact {
            commit: Some(CommitArtifact {
                repo: "https://git.example/shop".into(),
                sha: sha(head),
                tag: tag.into(),
                commits: brings,
                more_commits: more,
                commits_since: since.into(),
                ..CommitArtifact::default()
            }),
            ..Artifact::default()
        };
        let artifacts = vec![artifact];
        let digest = hecate_types::digest::content_digest(&artifacts);
        let mut bundle = Bundle::new(
            &hecate_types::digest::bundle_name(beacon, &digest),
            BundleSpec {
                beacon: beacon.into(),
                digest,
                alias: String::new(),
                artifacts,
            },
        );
        bundle.metadata.namespace = Some("shop".into());
        let at: jiff::Timestamp = "2026-03-01T10:00:00Z".parse().expect("a timestamp");
        bundle.metadata.annotations = Some(
            [(
                wellknown::ANNOTATION_CREATED_AT.to_string(),
                (at + jiff::SignedDuration::from_mins(minute)).to_string(),
            )]
            .into(),
        );
        bundle
    }

    /// Four Bundles of one Beacon: v1 (first), v2 bringing 2 commits, v3 bringing 1,
    /// v4 bringing 2 and 3 more.
    fn history() -> Vec<Bundle> {
        vec![
            bundle("shop", 0, 'a', "v1.0.0", "", vec![], 0),
            bundle(
                "shop",
                10,
                'c',
                "v1.1.0",
                &sha('a'),
                vec![commit(2), commit(1)],
                0,
            ),
            bundle("shop", 20, 'd', "v1.2.0", &sha('c'), vec![commit(3)], 0),
            bundle(
                "shop",
                30,
                'f',
                "v1.3.0",
                &sha('d'),
                vec![commit(5), commit(4)],
                3,
            ),
        ]
    }

    fn subjects(diff: &BundleDiff) -> Vec<&str> {
        diff.commits.iter().map(|c| c.subject.as_str()).collect()
    }

    #[test]
    fn forward_lists_what_the_newer_bundles_brought_newest_first() {
        let h = history();
        let all: Vec<&Bundle> = h.iter().collect();
        let diff = between(Some(&h[0]), &h[3], &all);
        assert_eq!(diff.direction, DiffDirection::Forward);
        assert_eq!(
            subjects(&diff),
            ["change 5", "change 4", "change 3", "change 2", "change 1"]
        );
        assert_eq!((diff.more_commits, diff.gap), (3, None));
        assert_eq!(
            (diff.from.map(|f| f.version), diff.to.version),
            (Some("v1.0.0".to_string()), "v1.3.0".to_string())
        );
        assert_eq!(
            diff.artifacts,
            [ArtifactChange {
                kind: ArtifactKind::Commit,
                repo: "https://git.example/shop".into(),
                name: String::new(),
                from: Some("v1.0.0".into()),
                to: Some("v1.3.0".into()),
                from_digest: Some(sha('a')),
                to_digest: Some(sha('f')),
                changed: true,
            }]
        );
        // One step: the newer one's own.
        let diff = between(Some(&h[2]), &h[3], &all);
        assert_eq!(subjects(&diff), ["change 5", "change 4"]);
        assert_eq!(diff.namespace, "shop");
    }

    #[test]
    fn back_lists_what_is_undone() {
        let h = history();
        let all: Vec<&Bundle> = h.iter().collect();
        let diff = between(Some(&h[3]), &h[1], &all);
        assert_eq!(diff.direction, DiffDirection::Back);
        assert_eq!(subjects(&diff), ["change 5", "change 4", "change 3"]);
        assert_eq!((diff.more_commits, diff.gap), (3, None));
        assert_eq!(diff.artifacts[0].from.as_deref(), Some("v1.3.0"));
        assert_eq!(diff.artifacts[0].to.as_deref(), Some("v1.1.0"));
    }

    #[test]
    fn the_same_bundle_changes_nothing() {
        let h = history();
        let all: Vec<&Bundle> = h.iter().collect();
        let diff = between(Some(&h[2]), &h[2], &all);
        assert_eq!(diff.direction, DiffDirection::Same);
        assert!(diff.commits.is_empty());
        assert_eq!((diff.more_commits, diff.gap), (0, None));
        assert!(!diff.artifacts[0].changed);
    }

    #[test]
    fn nothing_before_it_lists_its_own_commits_and_adds_every_artifact() {
        let h = history();
        let all: Vec<&Bundle> = h.iter().collect();
        let diff = between(None, &h[1], &all);
        assert_eq!(diff.direction, DiffDirection::Forward);
        assert_eq!(diff.from, None);
        assert_eq!(subjects(&diff), ["change 2", "change 1"]);
        assert_eq!(diff.artifacts[0].from, None);
        assert!(diff.artifacts[0].changed);
    }

    #[test]
    fn a_bundle_collected_between_them_is_a_gap() {
        let h = history();
        // v1.2.0 was deleted by retention: v1.3.0 counts from its commit, which v1.1.0
        // is not.
        let kept: Vec<&Bundle> = [&h[0], &h[1], &h[3]].into_iter().collect();
        let diff = between(Some(&h[1]), &h[3], &kept);
        assert_eq!(subjects(&diff), ["change 5", "change 4"]);
        assert_eq!(diff.gap, Some(CommitGap::BundlesCollected));
        // In the words every surface shows, for those that show the answer as it is.
        assert_eq!(
            diff.gap_words.as_deref(),
            Some(CommitGap::BundlesCollected.words())
        );
        // Back over the same gap says the same.
        let diff = between(Some(&h[3]), &h[1], &kept);
        assert_eq!(diff.gap, Some(CommitGap::BundlesCollected));
    }

    #[test]
    fn a_bundle_that_recorded_nothing_is_a_gap() {
        let mut h = history();
        // Emitted before Beacons recorded commits.
        h[2] = bundle("shop", 20, 'd', "v1.2.0", "", vec![], 0);
        let all: Vec<&Bundle> = h.iter().collect();
        let diff = between(Some(&h[0]), &h[3], &all);
        assert_eq!(
            subjects(&diff),
            ["change 5", "change 4", "change 2", "change 1"]
        );
        assert_eq!(diff.gap, Some(CommitGap::NotRecorded));
    }

    #[test]
    fn different_beacons_match_artifacts_and_chain_no_commits() {
        let h = history();
        let other = bundle(
            "shop-hotfix",
            40,
            'z',
            "v1.3.1",
            &sha('f'),
            vec![commit(9)],
            0,
        );
        let all: Vec<&Bundle> = h.iter().chain([&other]).collect();
        let diff = between(Some(&h[3]), &other, &all);
        assert_eq!(diff.direction, DiffDirection::Forward);
        assert!(diff.commits.is_empty());
        assert_eq!(diff.gap, Some(CommitGap::DifferentBeacons));
        assert_eq!(diff.artifacts.len(), 1, "matched by kind and repository");
        assert_eq!(diff.artifacts[0].to.as_deref(), Some("v1.3.1"));
    }

    #[test]
    fn artifacts_are_matched_by_kind_and_repository() {
        let image = |repo: &str, tag: &str, digest: &str| Artifact::image(repo, tag, digest);
        let from = [
            image("ghcr.io/acme/api", "1.0.0", "sha256:aaa"),
            image("ghcr.io/acme/web", "2.0.0", "sha256:bbb"),
            Artifact::chart("https://charts.example", "shop", "6.3.5"),
            Artifact::chart("https://charts.example", "db", "1.0.0"),
        ];
        let to = [
            // Retagged, same digest: no change.
            image("ghcr.io/acme/api", "latest", "sha256:aaa"),
            Artifact::chart("https://charts.example", "shop", "6.4.0"),
            Artifact::chart("https://charts.example", "db", "1.0.0"),
            image("ghcr.io/acme/worker", "0.1.0", ""),
        ];
        type Row = (ArtifactKind, String, Option<String>, Option<String>, bool);
        let row = |kind, who: &str, from: Option<&str>, to: Option<&str>, changed| -> Row {
            (
                kind,
                who.into(),
                from.map(Into::into),
                to.map(Into::into),
                changed,
            )
        };
        let changes: Vec<Row> = artifacts(&from, &to)
            .into_iter()
            .map(|c| {
                let who = if c.name.is_empty() { c.repo } else { c.name };
                (c.kind, who, c.from, c.to, c.changed)
            })
            .collect();
        let (image, chart) = (ArtifactKind::Image, ArtifactKind::Chart);
        assert_eq!(
            changes,
            [
                row(
                    image,
                    "ghcr.io/acme/api",
                    Some("1.0.0"),
                    Some("latest"),
                    false
                ),
                row(chart, "shop", Some("6.3.5"), Some("6.4.0"), true),
                row(chart, "db", Some("1.0.0"), Some("1.0.0"), false),
                row(image, "ghcr.io/acme/worker", None, Some("0.1.0"), true),
                row(image, "ghcr.io/acme/web", Some("2.0.0"), None, true),
            ]
        );
    }

    #[test]
    fn at_most_fifty_commits_are_listed_and_the_rest_counted() {
        let first = bundle("shop", 0, 'a', "v1", "", vec![], 0);
        let many = bundle(
            "shop",
            10,
            'b',
            "v2",
            &sha('a'),
            (0..20).map(commit).collect(),
            100,
        );
        let more = bundle(
            "shop",
            20,
            'c',
            "v3",
            &sha('b'),
            (0..40).map(commit).collect(),
            0,
        );
        let all = [&first, &many, &more];
        let diff = between(Some(&first), &more, &all);
        assert_eq!(diff.commits.len(), MAX_COMMITS);
        assert_eq!(diff.more_commits, 100 + 10);
        assert_eq!(diff.gap, None);
    }

    fn gate(name: &str, current: Option<&Bundle>) -> Gate {
        let mut gate = Gate::new(name, GateSpec::default());
        gate.status = Some(GateStatus {
            current: current.map(|b| GateOccupant {
                bundle: b.name_any(),
                digest: b.spec.digest.clone(),
                passage: format!("{name}-1"),
                entered_at: Time("2026-03-01T11:00:00Z".parse().expect("a timestamp")),
                actor: "bob".into(),
                verified: None,
            }),
            ..GateStatus::default()
        });
        gate
    }

    #[test]
    fn what_a_diff_is_against() {
        let h = history();
        let all: Vec<&Bundle> = h.iter().collect();
        let name = |i: usize| h[i].name_any();
        let from = |d: Result<BundleDiff, Missing>| d.map(|d| (d.from.map(|f| f.name), d.gate));
        // The Beacon's previous Bundle, by default; none before the first.
        assert_eq!(
            from(judge(&all, None, &[], &name(2), &DiffAgainst::Previous)),
            Ok((Some(name(1)), None))
        );
        assert_eq!(
            from(judge(&all, None, &[], &name(0), &DiffAgainst::Previous)),
            Ok((None, None))
        );
        // What a Gate runs now, or nothing when it holds nothing.
        let production = gate("production", Some(&h[1]));
        let by_gate = judge(
            &all,
            Some(&production),
            &[],
            &name(3),
            &DiffAgainst::Gate("production".into()),
        );
        assert_eq!(
            from(by_gate),
            Ok((Some(name(1)), Some("production".into())))
        );
        let empty = gate("staging", None);
        let by_empty = judge(
            &all,
            Some(&empty),
            &[],
            &name(3),
            &DiffAgainst::Gate("staging".into()),
        );
        assert_eq!(from(by_empty), Ok((None, Some("staging".into()))));
        // A name: the Gate when there is one, else the Bundle.
        assert_eq!(
            from(judge(
                &all,
                Some(&production),
                &[],
                &name(3),
                &DiffAgainst::Named("production".into())
            )),
            Ok((Some(name(1)), Some("production".into())))
        );
        assert_eq!(
            from(judge(
                &all,
                None,
                &[],
                &name(3),
                &DiffAgainst::Named(name(0))
            )),
            Ok((Some(name(0)), None))
        );
        // What is not there is said by kind.
        assert_eq!(
            from(judge(&all, None, &[], "shop-gone", &DiffAgainst::Previous)),
            Err(Missing::Bundle("shop-gone".into()))
        );
        assert_eq!(
            from(judge(
                &all,
                None,
                &[],
                &name(3),
                &DiffAgainst::Gate("qa".into())
            )),
            Err(Missing::Gate("qa".into()))
        );
        assert_eq!(
            from(judge(
                &all,
                None,
                &[],
                &name(3),
                &DiffAgainst::Named("qa".into())
            )),
            Err(Missing::Bundle("qa".into()))
        );
        // A Gate's occupant that is gone.
        let mut stale = gate("production", Some(&h[1]));
        if let Some(current) = stale.status.as_mut().and_then(|s| s.current.as_mut()) {
            current.bundle = "shop-collected".into();
        }
        assert_eq!(
            from(judge(
                &all,
                Some(&stale),
                &[],
                &name(3),
                &DiffAgainst::Gate("production".into())
            )),
            Err(Missing::Bundle("shop-collected".into()))
        );
    }

    /// Against a Gate whose newest crossing was aborted after its push, the diff says
    /// what the branch holds (the Cross dialog after an abort, #53); a later crossing,
    /// or another Gate's abort, says nothing.
    #[test]
    fn a_diff_against_a_gate_says_what_an_abort_left_on_its_branch() {
        use crate::rules::fixtures::passage;
        use hecate_types::{PassagePhase, StepPhase, StepStatus};
        let h = history();
        let all: Vec<&Bundle> = h.iter().collect();
        let dev = gate("dev", Some(&h[1]));
        let mut aborted = passage("dev", &h[2].name_any(), Some(PassagePhase::Aborted), 10);
        aborted.status.get_or_insert_with(Default::default).steps = vec![StepStatus {
            uses: "git-push".into(),
            phase: StepPhase::Succeeded,
            output: Some(
                serde_json::json!({"branch": "env/dev", "sha": "ab4eac1d", "pushed": true}),
            ),
            ..Default::default()
        }];
        let left = |passages: &[&Passage]| {
            judge(
                &all,
                Some(&dev),
                passages,
                &h[3].name_any(),
                &DiffAgainst::Gate("dev".into()),
            )
            .map(|d| d.left_behind.map(|l| (l.passage, l.branch, l.commit)))
        };
        assert_eq!(
            left(&[&aborted]),
            Ok(Some((
                "dev-".to_string() + &h[2].name_any(),
                "env/dev".into(),
                "ab4eac1d".into()
            )))
        );
        let later = passage("dev", &h[1].name_any(), Some(PassagePhase::Succeeded), 20);
        assert_eq!(
            left(&[&aborted, &later]),
            Ok(None),
            "the next crossing replaced it"
        );
        let mut elsewhere = aborted.clone();
        elsewhere.spec.gate = "staging".into();
        assert_eq!(left(&[&elsewhere]), Ok(None), "another Gate's abort");
    }

    #[test]
    fn a_diff_is_json_for_the_surfaces() {
        let h = history();
        let all: Vec<&Bundle> = h.iter().collect();
        let mut diff = between(Some(&h[2]), &h[3], &all);
        diff.gate = Some("production".into());
        diff.commits[0].committed_at =
            Some(Time("2026-03-01T10:29:00Z".parse().expect("a timestamp")));
        insta::assert_json_snapshot!(diff);
    }
}
