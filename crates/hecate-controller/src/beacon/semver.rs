//! Semantic versions and version ranges as the Go reference reads them (spec
//! controller.md §1.4): Masterminds/semver v3 (3.4+) semantics, not Cargo's.
//!
//! A Beacon's `constraint` is an interface: the same string must pick the same tag here
//! and in the reference, or the two controllers emit different Bundles for one Beacon.
//! The `semver` crate parses Cargo's dialect (no `v` prefix, no `1.2` short forms, no
//! `||`, no hyphen ranges, prereleases only near the named version), so this module
//! implements the reference's dialect itself, small and table-tested:
//!
//! - versions: optional leading `v`; `1` and `1.2` mean `1.0.0` and `1.2.0`; leading
//!   zeros in the numbers are accepted (`01.2.3` is `1.2.3`); prerelease identifiers
//!   are checked (a numeric one may not start with `0`); build metadata never counts;
//! - ranges: comparators `=`, `!=`, `>`, `<`, `>=`, `=>`, `<=`, `=<`, `~`, `~>`, `^`
//!   and none (equality, or `~` when a wildcard is present); wildcards `x`, `X`, `*`;
//!   hyphen ranges `1.2 - 1.4.5` (spaces required around the hyphen); AND by space or
//!   comma; OR by `||`;
//! - prereleases: an AND group admits a prerelease version only when one of its
//!   comparators names a prerelease — and then across every version the group covers
//!   (`>= 6.0.0-0` admits `7.1.0-rc.1`), not only the same `major.minor.patch` as npm
//!   and Cargo do.
//!
//! The ranges are recognised with the same regular expressions the reference uses
//! (RE2 and the `regex` crate agree on leftmost-first matching), so odd inputs are
//! accepted or refused alike. Where the reference's answers look surprising they are
//! kept (and tested), because parity is the point: `^*` admits only `0.0.0` (the
//! wildcard major is read as `0`, and `^0.0.0` is exact), `>1` admits `2.0.0` but not
//! `1.5.0`, and `<=1.2` admits `1.2.9`.

use std::cmp::Ordering;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

/// A version, parsed as the reference's lenient parser does.
#[derive(Clone, Debug)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    metadata: String,
}

impl Version {
    /// Parses `text` (`v1.2.3-rc.1+build`, `1.2`, `7`); `None` when it is not a
    /// version.
    pub fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix('v').unwrap_or(text);
        let (core, metadata) = match rest.split_once('+') {
            Some((core, metadata)) => (core, Some(metadata)),
            None => (rest, None),
        };
        let (numbers, pre) = match core.split_once('-') {
            Some((numbers, pre)) => (numbers, Some(pre)),
            None => (core, None),
        };
        let mut parts = numbers.split('.');
        let major = number(parts.next()?)?;
        let minor = parts.next().map(number).unwrap_or(Some(0))?;
        let patch = parts.next().map(number).unwrap_or(Some(0))?;
        if parts.next().is_some() {
            return None;
        }
        let pre = match pre {
            Some(pre) if valid_prerelease(pre) => pre.to_string(),
            Some(_) => return None,
            None => String::new(),
        };
        let metadata = match metadata {
            Some(metadata) if identifiers(metadata) => metadata.to_string(),
            Some(_) => return None,
            None => String::new(),
        };
        Some(Self {
            major,
            minor,
            patch,
            pre,
            metadata,
        })
    }

    /// Whether this is a prerelease (`1.0.0-rc.1`).
    pub fn is_prerelease(&self) -> bool {
        !self.pre.is_empty()
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    /// SemVer precedence: numbers, then a prerelease below its release, then the
    /// prerelease identifiers; build metadata is ignored.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &other.pre),
            })
    }
}

/// One number of a version: digits only (leading zeros allowed), within `u64`.
fn number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Dot-separated, non-empty identifiers of `[0-9A-Za-z-]`.
fn identifiers(text: &str) -> bool {
    text.split('.').all(|part| {
        !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
}

/// Identifiers, and no numeric one with a leading zero.
fn valid_prerelease(text: &str) -> bool {
    identifiers(text)
        && text.split('.').all(|part| {
            !(part.len() > 1 && part.starts_with('0') && part.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Compares prereleases identifier by identifier: numbers numerically and below
/// words, words by bytes, and a shorter list below a longer one it starts.
fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let a: Vec<&str> = a.split('.').collect();
    let b: Vec<&str> = b.split('.').collect();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or("");
        let y = b.get(i).copied().unwrap_or("");
        let order = match (x, y) {
            _ if x == y => Ordering::Equal,
            ("", _) => Ordering::Less,
            (_, "") => Ordering::Greater,
            _ => match (x.parse::<u64>(), y.parse::<u64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => x.cmp(y),
            },
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

/// A version range: alternatives (`||`) of comparators that must all hold.
#[derive(Clone, Debug)]
pub struct Constraints {
    groups: Vec<Group>,
}

/// Comparators that must all hold; whether any names a prerelease.
#[derive(Clone, Debug)]
struct Group {
    comparators: Vec<Comparator>,
    admits_prereleases: bool,
}

/// One comparator, its version with wildcards read as zero, and which parts were
/// wildcards (or missing).
#[derive(Clone, Debug)]
struct Comparator {
    op: Op,
    version: Version,
    /// Any part was a wildcard or missing.
    dirty: bool,
    /// The minor (and so the patch) was a wildcard or missing.
    minor_dirty: bool,
    /// The patch was a wildcard or missing.
    patch_dirty: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// No operator, or `=`: equality, or `~` with a wildcard.
    Equal,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
    Tilde,
    Caret,
}

/// A range that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("improper constraint: {0}")]
pub struct ConstraintError(String);

/// Whitespace as RE2's `\s` has it.
const WS: &str = r"[\t\n\f\r ]";
/// A version in a range, wildcards allowed (the reference's pattern, verbatim in
/// meaning: its character classes also admit `|`, which the version parse refuses).
const CV: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
/// The operators, in the reference's order (it decides which one a leftmost-first
/// match takes).
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

fn compile(pattern: String) -> Regex {
    // The patterns are constants; a failure here is a bug caught by every test.
    Regex::new(&pattern).unwrap_or_else(|e| panic!("a constant pattern: {e}"))
}

static ONE: LazyLock<Regex> = LazyLock::new(|| compile(format!(r"^{WS}*({OPS}){WS}*({CV}){WS}*$")));
static HYPHEN: LazyLock<Regex> =
    LazyLock::new(|| compile(format!(r"{WS}*({CV}){WS}+-{WS}+({CV}){WS}*")));
static FIND: LazyLock<Regex> = LazyLock::new(|| compile(format!(r"({OPS}){WS}*({CV})")));
static VALID: LazyLock<Regex> = LazyLock::new(|| {
    compile(format!(
        r"^({WS}*({OPS}){WS}*({CV}){WS}*)((?:{WS}+|,{WS}*)({OPS}){WS}*({CV}){WS}*)*$"
    ))
});

impl Constraints {
    /// Parses a range such as `^1.2`, `>= 1.0, < 2 || 3.x`, `1.2 - 1.4.5`.
    pub fn parse(text: &str) -> Result<Self, ConstraintError> {
        let text = rewrite_hyphen_ranges(text);
        let mut groups = Vec::new();
        for alternative in text.split("||") {
            if !VALID.is_match(alternative) {
                return Err(ConstraintError(alternative.to_string()));
            }
            let comparators = FIND
                .find_iter(alternative)
                .map(|m| comparator(m.as_str()))
                .collect::<Result<Vec<_>, _>>()?;
            let admits_prereleases = comparators.iter().any(|c| c.version.is_prerelease());
            groups.push(Group {
                comparators,
                admits_prereleases,
            });
        }
        Ok(Self { groups })
    }

    /// Whether `version` is in the range.
    pub fn matches(&self, version: &Version) -> bool {
        self.groups.iter().any(|group| {
            (group.admits_prereleases || !version.is_prerelease())
                && group.comparators.iter().all(|c| c.matches(version))
        })
    }
}

/// `A - B` becomes `>= A, <= B `, as the reference rewrites it before anything else.
fn rewrite_hyphen_ranges(text: &str) -> String {
    let mut out = text.to_string();
    for captures in HYPHEN.captures_iter(text) {
        let (Some(whole), Some(low), Some(high)) =
            (captures.get(0), captures.get(1), captures.get(11))
        else {
            continue;
        };
        let replacement = format!(">= {}, <= {} ", low.as_str(), high.as_str());
        out = out.replacen(whole.as_str(), &replacement, 1);
    }
    out
}

fn is_wildcard(part: &str) -> bool {
    matches!(part, "x" | "X" | "*")
}

/// One `<op><version>` as found in an alternative.
fn comparator(text: &str) -> Result<Comparator, ConstraintError> {
    let error = || ConstraintError(text.to_string());
    let captures = ONE.captures(text).ok_or_else(error)?;
    let group = |i: usize| captures.get(i).map_or("", |m| m.as_str());
    let op = match group(1) {
        "" | "=" => Op::Equal,
        "!=" => Op::NotEqual,
        ">" => Op::Greater,
        "<" => Op::Less,
        ">=" | "=>" => Op::GreaterEqual,
        "<=" | "=<" => Op::LessEqual,
        "~" | "~>" => Op::Tilde,
        "^" => Op::Caret,
        _ => return Err(error()),
    };
    let (major, minor, patch, pre) = (group(3), group(4), group(5), group(6));
    let minor_digits = minor.strip_prefix('.').unwrap_or(minor);
    let patch_digits = patch.strip_prefix('.').unwrap_or(patch);
    let (written, dirty, minor_dirty, patch_dirty) = if is_wildcard(major) || major.is_empty() {
        (format!("0.0.0{pre}"), true, false, false)
    } else if is_wildcard(minor_digits) || minor.is_empty() {
        (format!("{major}.0.0{pre}"), true, true, false)
    } else if is_wildcard(patch_digits) || patch.is_empty() {
        (format!("{major}{minor}.0{pre}"), true, false, true)
    } else {
        (group(2).to_string(), false, false, false)
    };
    let version = Version::parse(&written).ok_or_else(error)?;
    Ok(Comparator {
        op,
        version,
        dirty,
        minor_dirty,
        patch_dirty,
    })
}

impl Comparator {
    /// Whether `v` satisfies this comparator; the prerelease admission is the
    /// group's business ([`Constraints::matches`]).
    fn matches(&self, v: &Version) -> bool {
        let c = &self.version;
        match self.op {
            Op::Equal if self.dirty => self.tilde(v),
            Op::Equal => v == c,
            Op::NotEqual => self.not_equal(v),
            Op::Greater => {
                if !self.dirty {
                    return v > c;
                }
                match v.major.cmp(&c.major) {
                    Ordering::Greater => true,
                    Ordering::Less => false,
                    Ordering::Equal if self.minor_dirty => false,
                    Ordering::Equal if self.patch_dirty => v.minor > c.minor,
                    Ordering::Equal => v > c,
                }
            }
            Op::Less => v < c,
            Op::GreaterEqual => v >= c,
            Op::LessEqual => {
                if !self.dirty {
                    return v <= c;
                }
                !(v.major > c.major
                    || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            Op::Tilde => self.tilde(v),
            Op::Caret => self.caret(v),
        }
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.version;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if c.minor != v.minor && !self.minor_dirty {
                return true;
            }
            if self.minor_dirty {
                return false;
            }
            if c.patch != v.patch && !self.patch_dirty {
                return true;
            }
            if self.patch_dirty {
                if v.is_prerelease() || c.is_prerelease() {
                    return compare_prerelease(&v.pre, &c.pre) != Ordering::Equal;
                }
                return false;
            }
        }
        v != c
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v < c {
            return false;
        }
        // `~0.0.0` (and `~*`) admits everything.
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.version;
        if v < c {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        v.patch == c.patch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap_or_else(|| panic!("{text} should parse"))
    }

    #[test]
    fn versions_parse_leniently() {
        let cases = [
            ("1.2.3", "1.2.3"),
            ("v1.2.3", "1.2.3"),
            ("1.2", "1.2.0"),
            ("1", "1.0.0"),
            ("v2", "2.0.0"),
            ("01.02.03", "1.2.3"),
            ("1.2-beta", "1.2.0-beta"),
            ("1.2.3-rc.1+build.5", "1.2.3-rc.1+build.5"),
            ("1.2.3+build", "1.2.3+build"),
            ("1.2.3-0", "1.2.3-0"),
            ("1.2.3-alpha-1", "1.2.3-alpha-1"),
            ("1.2.3-01a", "1.2.3-01a"),
            ("18446744073709551615.0.0", "18446744073709551615.0.0"),
        ];
        for (text, shown) in cases {
            assert_eq!(v(text).to_string(), shown, "{text}");
        }
    }

    #[test]
    fn not_versions() {
        for text in [
            "",
            "latest",
            "main",
            "V1.2.3",
            "vv1",
            "1.2.3.4",
            "1..2",
            "1.2.",
            ".1",
            "1.2.3-",
            "1.2.3+",
            "1.2.3-rc..1",
            "1.2.3-01",
            "1.2.3-rc.01",
            "1.2.3-rc_1",
            "1.x",
            "1.2.3 ",
            " 1.2.3",
            "nightly-20260810",
            "18446744073709551616.0.0",
            "-1.2.3",
        ] {
            assert!(Version::parse(text).is_none(), "{text:?} should not parse");
        }
    }

    #[test]
    fn precedence() {
        // Each is lower than the next (SemVer §11, plus the reference's lenient forms).
        let ordered = [
            "0.0.1",
            "1.0.0-0",
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.2",
            "1.10.0",
            "2.0.0",
        ];
        for pair in ordered.windows(2) {
            assert!(v(pair[0]) < v(pair[1]), "{} < {}", pair[0], pair[1]);
        }
        assert_eq!(v("1.2.3+a"), v("1.2.3+b"));
        assert_eq!(v("v1.2"), v("1.2.0"));
        // Numbers beyond u64 in a prerelease compare as words (above numbers).
        assert!(v("1.0.0-99999999999999999999") > v("1.0.0-5"));
    }

    /// `(range, version, in range)`. Most rows come from the behaviour the reference's
    /// library documents and tests; the ones marked "parity" are its surprises, kept.
    const TABLE: &[(&str, &str, bool)] = &[
        // Equality, with and without `=`, `v` and short forms.
        ("1.2.3", "1.2.3", true),
        ("=1.2.3", "1.2.3", true),
        ("= 1.2.3", "v1.2.3", true),
        ("v1.2.3", "1.2.3", true),
        ("1.2.3", "1.2.4", false),
        ("1.2.3", "1.2.3+build", true),
        ("1.2.3-beta", "1.2.3-beta", true),
        ("1.2.3", "1.2.3-beta", false),
        // Not equal.
        ("!=1.2.3", "1.2.4", true),
        ("!=1.2.3", "1.2.3", false),
        ("!=1.2.x", "1.2.9", false),
        ("!=1.2.x", "1.3.0", true),
        ("!=1.x", "1.5.0", false),
        ("!=1.x", "2.0.0", true),
        ("!=1.2.3", "1.2.4-beta", false),
        // Greater, less.
        (">1.2.3", "1.2.4", true),
        (">1.2.3", "1.2.3", false),
        (">1.2", "1.2.9", false),
        (">1.2", "1.3.0", true),
        (">1", "1.5.0", false), // parity: `>1` means "2 or later"
        (">1", "2.0.0", true),
        (">0", "0.0.1-alpha", false),
        ("<1.2.3", "1.2.2", true),
        ("<1.2.3", "1.2.3", false),
        ("<1.2.3", "1.2.3-beta", false),
        ("<2", "1.9.9", true),
        ("<2", "2.0.0", false),
        (">=1.2.3", "1.2.3", true),
        ("=>1.2.3", "1.2.3", true),
        (">= 1.2.3", "1.2.2", false),
        ("<=1.2.3", "1.2.3", true),
        ("=<1.2.3", "1.2.4", false),
        ("<=1.2", "1.2.9", true), // parity: `<=1.2` covers all of 1.2
        ("<=1.2", "1.3.0", false),
        ("<=1", "1.9.0", true),
        ("<=1", "2.0.0", false),
        // Tilde.
        ("~1.2.3", "1.2.3", true),
        ("~1.2.3", "1.2.9", true),
        ("~1.2.3", "1.3.0", false),
        ("~1.2.3", "1.2.2", false),
        ("~>1.2.3", "1.2.5", true),
        ("~1.2", "1.2.0", true),
        ("~1.2", "1.3.0", false),
        ("~1", "1.9.9", true),
        ("~1", "2.0.0", false),
        ("~1.x", "1.5.0", true),
        ("~0", "0.9.0", true),
        ("~0.0.0", "7.0.0", true),
        ("~*", "3.1.4", true),
        // Wildcards.
        ("*", "3.1.4", true),
        ("x", "0.0.1", true),
        ("1.x", "1.9.9", true),
        ("1.x", "2.0.0", false),
        ("1.2.x", "1.2.7", true),
        ("1.2.x", "1.3.0", false),
        ("1.2.X", "1.2.7", true),
        ("1.2.*", "1.2.7", true),
        ("*", "1.0.0-beta", false),
        // Caret.
        ("^1.2.3", "1.2.3", true),
        ("^1.2.3", "1.9.0", true),
        ("^1.2.3", "2.0.0", false),
        ("^1.2.3", "1.2.2", false),
        ("^1.2", "1.2.0", true),
        ("^1", "1.9.9", true),
        ("^1.x", "1.9.9", true),
        ("^0.2.3", "0.2.9", true),
        ("^0.2.3", "0.3.0", false),
        ("^0.2", "0.2.9", true),
        ("^0.0.3", "0.0.3", true),
        ("^0.0.3", "0.0.4", false),
        ("^0.0", "0.0.9", true),
        ("^0.0", "0.1.0", false),
        ("^0", "0.9.9", true),
        ("^0", "1.0.0", false),
        ("^0.x", "0.9.0", true),
        ("^*", "0.0.0", true),
        ("^*", "1.0.0", false), // parity: `^*` is read as `^0.0.0`
        ("^6.0.0", "6.2.0-rc.1", false),
        // Prereleases: admitted only by a group that names one, then across its span.
        ("^1.2.3-beta", "1.2.3-beta.2", true),
        ("^1.2.3-beta", "1.4.0-alpha", true),
        (">= 6.0.0-0", "7.0.0-beta.1", true),
        (">= 0.0.0-0", "7.0.0-beta.1", true),
        (">=1.0.0-0, <2", "1.5.0-rc.1", true),
        // parity: `2.0.0-rc.1` sorts below `2.0.0`, so `<2` holds once prereleases are in.
        (">=1.0.0-0, <2", "2.0.0-rc.1", true),
        (">=1.0.0-0, <2", "2.0.0", false),
        (">=1.0.0 <2 || >=3.0.0-0", "1.5.0-rc.1", false),
        (">=1.0.0 <2 || >=3.0.0-0", "3.1.0-rc.1", true),
        ("1.2.x-0", "1.2.5-rc", true),
        // AND, OR.
        (">=1.2.3, <2.0.0", "1.5.0", true),
        (">=1.2.3,<2.0.0", "2.0.0", false),
        (">=1.2.3 <2.0.0", "1.5.0", true),
        (">= 1.2.3   < 2.0.0", "1.0.0", false),
        ("1.2.3 || 2.x", "2.5.0", true),
        ("1.2.3||2.x", "1.2.4", false),
        ("<1.0.0 || >=2.0.0 <3", "2.5.0", true),
        ("<1.0.0 || >=2.0.0 <3", "1.5.0", false),
        // Hyphen ranges.
        ("1.2 - 1.4.5", "1.2.0", true),
        ("1.2 - 1.4.5", "1.4.5", true),
        ("1.2 - 1.4.5", "1.4.6", false),
        ("1.2.3 - 2", "2.9.0", true), // parity: the upper bound is `<=2`
        ("1.2.3 - 2", "3.0.0", false),
        ("1.0.0 - 2.0.0 || 4.x", "4.2.0", true),
    ];

    #[test]
    fn ranges() {
        let mut wrong = Vec::new();
        for (range, version, want) in TABLE {
            let constraints =
                Constraints::parse(range).unwrap_or_else(|e| panic!("{range:?}: {e}"));
            if constraints.matches(&v(version)) != *want {
                wrong.push(format!("{range:?} vs {version}: expected {want}"));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn not_ranges() {
        for range in [
            "",
            " ",
            "not-a-constraint",
            "latest",
            ">=",
            "1.2.3 -",
            ">= 1.2.3 ||",
            "1.2.3 && 2",
            "1.2.3-01",
            "1x.2.3",
            "1|2.3",
            "^^1",
            "> = 1",
            "~1.2.3.4",
        ] {
            assert!(
                Constraints::parse(range).is_err(),
                "{range:?} should not parse"
            );
        }
    }
}
