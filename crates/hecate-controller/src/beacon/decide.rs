//! What a Beacon reconcile concludes from what its sources answered (spec
//! controller.md §1.2 steps 4–6), as pure functions: whether the Beacon can work at
//! all, how often it polls, and — given every entry's answer — whether to emit a
//! Bundle or why not.

use std::time::Duration;

use hecate_types::limits::{
    self, MAX_AUTHOR_BYTES, MAX_REF_LENGTH, MAX_REPO_LENGTH, MAX_SUBJECT_BYTES,
};
use hecate_types::{Artifact, Beacon, EmitPolicy, duration, wellknown};

use super::source::ResolveError;

/// The longest Beacon name whose Bundles can be named: `<beacon>-<12 hex>` is also a
/// label value on Passages, and label values stop at 63 characters (quirk Q1).
pub const MAX_NAME: usize = 50;

/// `Ready` reason of a Beacon whose name is too long to name its Bundles (quirk Q1;
/// the reference has no reason for this, it fails later, at the first crossing).
pub const NAME_TOO_LONG: &str = "NameTooLong";

/// How often a Beacon polls when `spec.interval` is unset, not positive or unreadable.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(300);

/// Why a Beacon with this name cannot emit Bundles, if it cannot.
pub fn name_problem(name: &str) -> Option<String> {
    (name.len() > MAX_NAME).then(|| {
        format!(
            "the Beacon's name is {} characters long; its Bundles would be named \
             <name>-<12 hex>, too long for the hecate.dev/bundle label on Passages \
             (63 at most). Recreate it with a name of {MAX_NAME} characters or fewer",
            name.len()
        )
    })
}

/// How long to wait before polling again: `spec.interval` (a Go duration), or
/// [`DEFAULT_INTERVAL`] when it is unset, zero, negative or not a duration.
pub fn interval(beacon: &Beacon) -> Duration {
    beacon
        .spec
        .interval
        .as_deref()
        .and_then(|text| duration::parse(text).ok())
        .and_then(|d| Duration::try_from(d).ok())
        .filter(|d| !d.is_zero())
        .unwrap_or(DEFAULT_INTERVAL)
}

/// What to do after a poll.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Some entry did not resolve: `Ready=False` with this reason and message.
    NotReady {
        /// The first failure's class, as a reason.
        reason: &'static str,
        /// `watch[<i>]: <error>`, plus ` (and N more)`.
        message: String,
    },
    /// Everything resolved and a person creates the Bundles: `Ready=True`.
    Manual(String),
    /// Everything resolved: emit a Bundle of these artifacts.
    Emit(Vec<Artifact>),
}

/// The artifacts that resolved (in watch order, for `status.discovered`) and what to
/// do next, from each entry's answer in watch order.
pub fn decide(
    beacon: &Beacon,
    answers: Vec<Result<Artifact, ResolveError>>,
) -> (Vec<Artifact>, Next) {
    let total = answers.len();
    let mut discovered = Vec::new();
    let mut failures = Vec::new();
    for (i, answer) in answers.into_iter().enumerate() {
        match answer.and_then(fit) {
            Ok(artifact) => discovered.push(artifact),
            Err(error) => failures.push((i, error)),
        }
    }
    let next = if let Some((i, first)) = failures.first() {
        let more = match failures.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        Next::NotReady {
            reason: first.class.reason(),
            message: format!("watch[{i}]: {}{more}", first.message),
        }
    } else if discovered.is_empty() {
        // The schema requires one entry; an object written around it still gets an
        // answer rather than an empty Bundle.
        Next::NotReady {
            reason: wellknown::beacon_reason::RESOLVE_FAILED,
            message: "spec.watch lists no source".into(),
        }
    } else if beacon.spec.emit == Some(EmitPolicy::Manual) {
        Next::Manual(format!(
            "resolved {total} source(s); emit is Manual, so Bundles are created by people"
        ))
    } else {
        Next::Emit(discovered.clone())
    };
    (discovered, next)
}

/// `artifact` as a Bundle, and the Beacon's status, can record it (DECISION 145): what
/// it says for people — a commit's subject and author, and those of the commits it
/// lists — without control characters and cut to the CRD's bounds; what names it — a
/// repository, tag, branch, chart name or version — left whole, and the artifact
/// refused when one is longer than the CRD allows, so that the Beacon says why instead
/// of failing to emit.
pub fn fit(mut artifact: Artifact) -> Result<Artifact, ResolveError> {
    let mut names: Vec<(&str, &str, usize)> = Vec::new();
    if let Some(image) = &artifact.image {
        names.push(("repo", &image.repo, MAX_REPO_LENGTH));
        names.push(("tag", &image.tag, MAX_REF_LENGTH));
    }
    if let Some(chart) = &artifact.chart {
        names.push(("repo", &chart.repo, MAX_REPO_LENGTH));
        names.push(("chart name", &chart.name, MAX_REF_LENGTH));
        names.push(("version", &chart.version, MAX_REF_LENGTH));
    }
    if let Some(commit) = &artifact.commit {
        names.push(("repo", &commit.repo, MAX_REPO_LENGTH));
        names.push(("branch", &commit.branch, MAX_REF_LENGTH));
        names.push(("tag", &commit.tag, MAX_REF_LENGTH));
    }
    // As the API server counts `maxLength`: in characters.
    if let Some((field, text, max)) = names
        .into_iter()
        .find(|(_, text, max)| text.chars().count() > *max)
    {
        return Err(ResolveError::failed(format!(
            "its {field} is {} characters long; a Bundle records at most {max}",
            text.chars().count()
        )));
    }
    if let Some(commit) = artifact.commit.as_mut() {
        commit.message = limits::clean(&commit.message, MAX_SUBJECT_BYTES);
        commit.author = limits::clean(&commit.author, MAX_AUTHOR_BYTES);
        for listed in &mut commit.commits {
            listed.subject = limits::clean(&listed.subject, MAX_SUBJECT_BYTES);
            listed.author = limits::clean(&listed.author, MAX_AUTHOR_BYTES);
        }
    }
    Ok(artifact)
}

/// The `Ready` message of a Beacon whose newest Bundle is `bundle`.
pub fn discovered_message(sources: usize, bundle: &str) -> String {
    format!("resolved {sources} source(s); latest Bundle is {bundle}")
}

#[cfg(test)]
mod tests {
    use hecate_types::BeaconSpec;

    use super::*;

    fn beacon(emit: Option<EmitPolicy>, interval: Option<&str>) -> Beacon {
        Beacon::new(
            "app",
            BeaconSpec {
                emit,
                interval: interval.map(String::from),
                ..BeaconSpec::default()
            },
        )
    }

    fn commit(sha: &str) -> Artifact {
        Artifact::commit("file:///srv/app.git", sha)
    }

    #[test]
    fn q1_names_longer_than_fifty_characters_are_refused() {
        assert_eq!(name_problem(&"a".repeat(50)), None);
        let problem = name_problem(&"a".repeat(51)).expect("a problem");
        assert!(problem.contains("51 characters"), "{problem}");
        // The limit is exactly what keeps the Bundle name a label value.
        let bundle = hecate_types::digest::bundle_name(&"a".repeat(MAX_NAME), &"f".repeat(64));
        assert_eq!(bundle.len(), 63);
    }

    #[test]
    fn the_interval_is_a_go_duration_with_a_floor() {
        let cases = [
            (None, 300),
            (Some("1m30s"), 90),
            (Some("1h"), 3600),
            (Some("0s"), 300),
            (Some("-5m"), 300),
            (Some("5 minutes"), 300),
        ];
        for (text, seconds) in cases {
            assert_eq!(
                interval(&beacon(None, text)),
                Duration::from_secs(seconds),
                "{text:?}"
            );
        }
    }

    #[test]
    fn every_source_resolved_emits() {
        let (discovered, next) =
            decide(&beacon(None, None), vec![Ok(commit("a")), Ok(commit("b"))]);
        assert_eq!(discovered, [commit("a"), commit("b")]);
        assert_eq!(next, Next::Emit(vec![commit("a"), commit("b")]));
    }

    #[test]
    fn manual_beacons_report_and_never_emit() {
        let (discovered, next) = decide(
            &beacon(Some(EmitPolicy::Manual), None),
            vec![Ok(commit("a"))],
        );
        assert_eq!(discovered, [commit("a")]);
        assert!(matches!(next, Next::Manual(m) if m.contains("Manual")));
    }

    #[test]
    fn one_failure_stops_emission_and_the_first_names_the_reason() {
        let (discovered, next) = decide(
            &beacon(None, None),
            vec![
                Ok(commit("a")),
                Err(ResolveError::unsupported("platform is not supported")),
                Err(ResolveError::no_match("nothing in range")),
            ],
        );
        assert_eq!(discovered, [commit("a")]);
        assert_eq!(
            next,
            Next::NotReady {
                reason: "UnsupportedSource",
                message: "watch[1]: platform is not supported (and 1 more)".into(),
            }
        );
        let (_, next) = decide(
            &beacon(None, None),
            vec![Err(ResolveError::no_match(
                "no version tag is in range \"^9\"",
            ))],
        );
        assert_eq!(
            next,
            Next::NotReady {
                reason: "NoMatchingArtifact",
                message: "watch[0]: no version tag is in range \"^9\"".into(),
            }
        );
        let (_, next) = decide(&beacon(None, None), vec![Err(ResolveError::failed("down"))]);
        assert!(matches!(
            next,
            Next::NotReady {
                reason: "ResolveFailed",
                ..
            }
        ));
    }

    /// Issue 50: a provider's (or a forge's) text is cut and cleaned; a name too long
    /// to record is said, not emitted into a refusal.
    #[test]
    fn what_a_bundle_cannot_hold_is_cut_or_said() {
        let mut long = commit("a");
        if let Some(c) = long.commit.as_mut() {
            c.message = format!("\u{1b}]8;;x\u{7}{}", "m".repeat(1000));
            c.author = "a".repeat(100 << 10);
        }
        let (discovered, next) = decide(&beacon(None, None), vec![Ok(long)]);
        let c = discovered[0].commit.clone().expect("a commit");
        assert_eq!(
            c.message,
            format!("]8;;x{}", "m".repeat(MAX_SUBJECT_BYTES - 5))
        );
        assert_eq!(c.author.len(), MAX_AUTHOR_BYTES);
        assert!(matches!(next, Next::Emit(_)));
        let tagged = Artifact::image("ghcr.io/acme/api", "t".repeat(MAX_REF_LENGTH + 1), "");
        let (discovered, next) = decide(&beacon(None, None), vec![Ok(tagged)]);
        assert!(discovered.is_empty());
        assert_eq!(
            next,
            Next::NotReady {
                reason: "ResolveFailed",
                message: "watch[0]: its tag is 256 characters long; a Bundle records at most 255"
                    .into(),
            }
        );
        let at_the_bound = Artifact::image("r".repeat(MAX_REPO_LENGTH), "é".repeat(255), "");
        assert_eq!(fit(at_the_bound.clone()), Ok(at_the_bound));
    }

    #[test]
    fn no_sources_is_not_an_empty_bundle() {
        let (_, next) = decide(&beacon(None, None), vec![]);
        assert!(matches!(
            next,
            Next::NotReady {
                reason: "ResolveFailed",
                ..
            }
        ));
    }
}
