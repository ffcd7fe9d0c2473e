//! Choosing one tag from a repository's tags (spec controller.md §1.4), for images and
//! Git tags alike: filter (`allow`, then `ignore`), then a strategy.
//!
//! Mutable tags (`latest`, `main`, nightlies) and prereleases are what make a Beacon
//! ship something nobody meant to ship, so the default strategy skips what is not a
//! version and, without a range that asks for them, every prerelease. `NewestBuild` is
//! refused rather than approximated: ordering by push time needs every manifest, and a
//! plausible wrong answer would promote the wrong image.

use hecate_types::{TagSelection, TagWatch};
use regex::Regex;

use super::semver::{Constraints, Version};
use super::source::ResolveError;

/// How to choose a tag.
#[derive(Clone, Copy, Debug, Default)]
pub struct Selection<'a> {
    /// The strategy; `None` is `SemVer`.
    pub strategy: Option<TagSelection>,
    /// `SemVer`: a range; `Digest`: the tag to follow; `Lexical`: unused.
    pub constraint: &'a str,
    /// A regular expression a tag must match somewhere (unanchored).
    pub allow: &'a str,
    /// Tags never chosen (exact).
    pub ignore: &'a [String],
}

impl<'a> From<&'a TagWatch> for Selection<'a> {
    fn from(watch: &'a TagWatch) -> Self {
        Self {
            strategy: watch.select,
            constraint: &watch.constraint,
            allow: &watch.allow,
            ignore: &watch.ignore,
        }
    }
}

/// Whether a Bundle can record `tag` as it is: no longer than the CRD allows, and
/// without control characters — which git allows in a tag's name, and which would
/// make a Bundle's version read as something else (DECISION 145). Another tag is never
/// picked: it does not stop the Beacon.
fn recordable(tag: &str) -> bool {
    tag.chars().count() <= hecate_types::limits::MAX_REF_LENGTH
        && !tag.chars().any(hecate_types::limits::is_control)
}

impl Selection<'_> {
    /// The tag this selection picks from `tags` (any order), as written.
    pub fn pick<S: AsRef<str>>(&self, tags: &[S]) -> Result<String, ResolveError> {
        let allow = match self.allow {
            "" => None,
            pattern => Some(Regex::new(pattern).map_err(|e| {
                ResolveError::failed(format!("allow pattern {pattern:?} is not valid: {e}"))
            })?),
        };
        let candidates: Vec<&str> = tags
            .iter()
            .map(|tag| tag.as_ref())
            .filter(|tag| allow.as_ref().is_none_or(|re| re.is_match(tag)))
            .filter(|tag| !self.ignore.iter().any(|ignored| ignored == tag))
            .filter(|tag| recordable(tag))
            .collect();
        if candidates.is_empty() {
            return Err(ResolveError::no_match(if tags.is_empty() {
                "there are no tags".to_string()
            } else {
                "no tag is left after allow and ignore".to_string()
            }));
        }
        match self.strategy.unwrap_or_default() {
            TagSelection::SemVer => self.highest_version(&candidates),
            TagSelection::Lexical => Ok(candidates
                .iter()
                .max()
                .map(|tag| tag.to_string())
                .unwrap_or_default()),
            TagSelection::Digest => {
                if self.constraint.is_empty() {
                    return Err(ResolveError::failed(
                        "select: Digest needs constraint to name the tag to follow",
                    ));
                }
                if candidates.contains(&self.constraint) {
                    Ok(self.constraint.to_string())
                } else {
                    Err(ResolveError::no_match(format!(
                        "tag {:?} is not there (or is filtered out)",
                        self.constraint
                    )))
                }
            }
            TagSelection::NewestBuild => Err(ResolveError::failed(
                "select: NewestBuild is not implemented; use SemVer with a constraint, or \
                 Lexical for zero-padded dates or build numbers",
            )),
        }
    }

    /// The highest version among `tags` that the constraint admits (without one: the
    /// highest release). Equal versions written differently (`v1.2.0`, `1.2`) are
    /// told apart by the tag text, the byte-wise greatest winning, so the answer never
    /// depends on the order the registry listed them in.
    fn highest_version(&self, tags: &[&str]) -> Result<String, ResolveError> {
        let constraints = match self.constraint {
            "" => None,
            range => Some(Constraints::parse(range).map_err(|e| {
                ResolveError::failed(format!("constraint {range:?} is not a version range: {e}"))
            })?),
        };
        let best = tags
            .iter()
            .filter_map(|tag| Version::parse(tag).map(|version| (version, *tag)))
            .filter(|(version, _)| match &constraints {
                Some(constraints) => constraints.matches(version),
                None => !version.is_prerelease(),
            })
            .max();
        match best {
            Some((_, tag)) => Ok(tag.to_string()),
            None if constraints.is_some() => Err(ResolveError::no_match(format!(
                "no version tag is in range {:?}",
                self.constraint
            ))),
            None => Err(ResolveError::no_match("no tag is a release version")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::Class;
    use super::*;

    /// Releases mixed with the mutable and prerelease tags real repositories carry.
    const REALISTIC: &[&str] = &[
        "latest",
        "main",
        "6.0.0",
        "6.1.0",
        "6.2.0-rc.1",
        "6.2.0",
        "7.0.0-beta.1",
        "5.9.3",
        "nightly-20260810",
    ];

    fn semver(constraint: &str) -> Selection<'_> {
        Selection {
            constraint,
            ..Selection::default()
        }
    }

    #[test]
    fn semver_picks() {
        let ignored = vec!["6.2.0".to_string()];
        let cases: Vec<(&str, Selection, &[&str], &str)> = vec![
            (
                "highest release, mutable tags skipped",
                semver(""),
                REALISTIC,
                "6.2.0",
            ),
            (
                "caret keeps the major",
                semver("^6.0.0"),
                REALISTIC,
                "6.2.0",
            ),
            (
                "tilde keeps the minor",
                semver("~6.1.0"),
                REALISTIC,
                "6.1.0",
            ),
            (
                "a plain range skips prereleases",
                semver(">= 6.0.0"),
                REALISTIC,
                "6.2.0",
            ),
            (
                "a prerelease range opts in",
                semver(">= 0.0.0-0"),
                REALISTIC,
                "7.0.0-beta.1",
            ),
            (
                "v prefixes are versions, kept as written",
                semver(""),
                &["v1.2.3", "v1.3.0"],
                "v1.3.0",
            ),
            (
                "short forms are versions",
                semver(""),
                &["1.2", "1.10", "1.9.9"],
                "1.10",
            ),
            ("or", semver("5.x || ^7.0.0-0"), REALISTIC, "7.0.0-beta.1"),
            ("hyphen range", semver("5.0 - 6.1"), REALISTIC, "6.1.0"),
            (
                "ignore removes a tag",
                Selection {
                    ignore: &ignored,
                    ..Selection::default()
                },
                REALISTIC,
                "6.1.0",
            ),
            (
                "allow narrows first",
                Selection {
                    allow: r"^6\.0",
                    ..Selection::default()
                },
                REALISTIC,
                "6.0.0",
            ),
            (
                "allow is a search, not a full match",
                Selection {
                    allow: r"\.1",
                    ..Selection::default()
                },
                REALISTIC,
                "6.1.0",
            ),
            (
                "equal versions: the byte-wise greatest text",
                semver(""),
                &["1.2", "v1.2.0", "1.2.0"],
                "v1.2.0",
            ),
            (
                "build metadata does not order",
                semver(""),
                &["1.0.0+b", "1.0.0+a"],
                "1.0.0+b",
            ),
        ];
        for (name, selection, tags, want) in cases {
            assert_eq!(selection.pick(tags).as_deref(), Ok(want), "{name}");
        }
    }

    #[test]
    fn other_strategies() {
        let lexical = Selection {
            strategy: Some(TagSelection::Lexical),
            ..Selection::default()
        };
        assert_eq!(
            lexical
                .pick(&["20260101", "20260810", "20251231"])
                .as_deref(),
            Ok("20260810")
        );
        let releases = Selection {
            strategy: Some(TagSelection::Lexical),
            allow: r"^\d+\.\d+\.\d+$",
            ..Selection::default()
        };
        assert_eq!(releases.pick(REALISTIC).as_deref(), Ok("6.2.0"));
        let digest = Selection {
            strategy: Some(TagSelection::Digest),
            constraint: "stable",
            ..Selection::default()
        };
        assert_eq!(digest.pick(&["stable", "6.2.0"]).as_deref(), Ok("stable"));
    }

    /// Issue 50: a tag no Bundle could record is never picked, whatever it sorts as.
    #[test]
    fn tags_a_bundle_cannot_record_are_passed_over() {
        let long = format!("9.9.9-{}", "a".repeat(300));
        let lexical = Selection {
            strategy: Some(TagSelection::Lexical),
            ..Selection::default()
        };
        for strategy in [Selection::default(), lexical] {
            assert_eq!(
                strategy
                    .pick(&["1.0.0", &long, "9.0.0\u{202e}", "8.0.0\u{1b}[2J"])
                    .as_deref(),
                Ok("1.0.0")
            );
        }
    }

    #[test]
    fn failures_are_classified() {
        let digest = |constraint| Selection {
            strategy: Some(TagSelection::Digest),
            constraint,
            ..Selection::default()
        };
        let cases: Vec<(&str, Selection, &[&str], Class)> = vec![
            (
                "nothing in range",
                semver("^99.0.0"),
                REALISTIC,
                Class::NoMatch,
            ),
            (
                "no version tags",
                semver(""),
                &["latest", "main"],
                Class::NoMatch,
            ),
            (
                "only prereleases",
                semver(""),
                &["1.0.0-rc.1"],
                Class::NoMatch,
            ),
            ("no tags", semver(""), &[], Class::NoMatch),
            (
                "all filtered out",
                Selection {
                    allow: "^release-",
                    ..Selection::default()
                },
                REALISTIC,
                Class::NoMatch,
            ),
            (
                "tracked tag absent",
                digest("absent"),
                REALISTIC,
                Class::NoMatch,
            ),
            (
                "a bad range",
                semver("not-a-constraint"),
                REALISTIC,
                Class::Failed,
            ),
            (
                "a bad pattern",
                Selection {
                    allow: "[",
                    ..Selection::default()
                },
                REALISTIC,
                Class::Failed,
            ),
            ("Digest without a tag", digest(""), REALISTIC, Class::Failed),
            (
                "NewestBuild is refused",
                Selection {
                    strategy: Some(TagSelection::NewestBuild),
                    ..Selection::default()
                },
                REALISTIC,
                Class::Failed,
            ),
        ];
        for (name, selection, tags, class) in cases {
            let error = selection.pick(tags).expect_err(name);
            assert_eq!(error.class, class, "{name}: {error}");
            assert!(!error.message.is_empty(), "{name}");
        }
    }
}
