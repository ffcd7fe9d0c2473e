//! Field types and checks the step configurations share.
//!
//! The central one is [`Deferred`]: a `with:` string may be a `${{ … }}` expression whose
//! value only exists once the Passage runs, so a field that is checked for its text (an
//! enum, a duration, a URL) holds either the checked value or the unevaluated
//! expression. The Gate judges the first and leaves the second alone (spec §3.9).

use std::fmt;

use hecate_types::duration;
use jiff::SignedDuration;
use serde::de::{Deserialize, Deserializer, Error as _};

pub use hecate_expr::is_expression;

/// A value written as text whose content can be checked: the field types that
/// [`Deferred`] wraps.
pub trait Textual: Sized {
    /// Reads the value from its text; `Err` says what is wrong with it.
    fn from_text(text: &str) -> Result<Self, String>;
}

/// A checked value, or an expression that yields it when the Passage runs.
///
/// Decoding an interpolated configuration (no expressions left) always gives
/// [`Deferred::Known`]; an [`Deferred::Expression`] at run time means the interpolated
/// value itself contained `${{`, which a step treats as a configuration mistake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Deferred<T> {
    /// The value, already checked.
    Known(T),
    /// The text as written, holding at least one `${{ … }}`.
    Expression(String),
}

impl<T: Textual> Deferred<T> {
    /// Reads `text`: an expression is kept as written, anything else must be a valid
    /// `T`.
    pub fn from_text(text: String) -> Result<Self, String> {
        if is_expression(&text) {
            Ok(Deferred::Expression(text))
        } else {
            T::from_text(&text).map(Deferred::Known)
        }
    }
}

impl<T> Deferred<T> {
    /// The value, when it is known.
    pub fn known(&self) -> Option<&T> {
        match self {
            Deferred::Known(value) => Some(value),
            Deferred::Expression(_) => None,
        }
    }
}

impl<'de, T: Textual> Deserialize<'de> for Deferred<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Deferred::from_text(String::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

/// For `#[serde(deserialize_with)]` on an optional [`Deferred`] field: an empty string
/// means unset, as an omitted key does.
pub(crate) fn blank_is_unset<'de, D, T>(deserializer: D) -> Result<Option<Deferred<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Textual,
{
    match Option::<String>::deserialize(deserializer)? {
        None => Ok(None),
        Some(text) if text.trim().is_empty() => Ok(None),
        Some(text) => Deferred::from_text(text)
            .map(Some)
            .map_err(D::Error::custom),
    }
}

/// A Go duration (`90s`, `5m`, `1h30m`) longer than zero: every step duration is an
/// interval or a limit, and zero would mean spinning or giving up at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoDuration(pub SignedDuration);

impl GoDuration {
    /// A whole number of seconds, for the defaults.
    pub(crate) const fn secs(secs: i64) -> Deferred<GoDuration> {
        Deferred::Known(GoDuration(SignedDuration::from_secs(secs)))
    }
}

impl Textual for GoDuration {
    fn from_text(text: &str) -> Result<Self, String> {
        let parsed = duration::parse(text).map_err(|e| e.to_string())?;
        if parsed.is_positive() {
            Ok(GoDuration(parsed))
        } else {
            Err(format!("{text:?} must be longer than zero"))
        }
    }
}

/// An absolute `http://` or `https://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl(pub String);

impl Textual for HttpUrl {
    fn from_text(text: &str) -> Result<Self, String> {
        let rest = text
            .strip_prefix("https://")
            .or_else(|| text.strip_prefix("http://"));
        match rest {
            Some(host) if !host.is_empty() => Ok(HttpUrl(text.to_string())),
            Some(_) => Err(format!("{text:?} names no host")),
            None => Err(format!("{text:?} must start with http:// or https://")),
        }
    }
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A Secret in the Passage's namespace, named by `{name}` (`credentialsRef`,
/// `secretRef`, `clusterRef`).
#[derive(serde::Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    /// The Secret's name.
    pub name: String,
}

impl SecretRef {
    /// `field` names this reference in the message.
    pub(crate) fn check(&self, field: &str) -> Result<(), String> {
        required(&format!("{field}.name"), &self.name)
    }

    /// [`SecretRef::check`] for a reference that may be absent.
    pub(crate) fn check_optional(field: &str, secret: Option<&SecretRef>) -> Result<(), String> {
        secret.map_or(Ok(()), |secret| secret.check(field))
    }
}

/// A required text field: present (serde says when it is not) and not blank.
pub(crate) fn required(field: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        Err(format!("{field} must not be empty"))
    } else {
        Ok(())
    }
}

/// A path in the work directory: one that climbs out of it with `..` is refused
/// (spec §3.7 rule 4). Absolute paths and symlinks can only be judged against the real
/// directory, when the step runs; an expression is judged then too.
pub(crate) fn inside_work_dir(field: &str, path: &str) -> Result<(), String> {
    if !is_expression(path) && climbs_out(path) {
        Err(format!("{field} {path:?} leads out of the work directory"))
    } else {
        Ok(())
    }
}

/// Whether a relative path, read component by component, goes above its start.
fn climbs_out(path: &str) -> bool {
    let mut depth = 0usize;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match depth.checked_sub(1) {
                Some(up) => depth = up,
                None => return true,
            },
            _ => depth += 1,
        }
    }
    false
}

/// The checkout directory a git step works in when `path` is blank.
pub const CHECKOUT: &str = "repo";

/// `path` when set, else the default checkout directory.
pub(crate) fn checkout(path: &str) -> &str {
    if path.trim().is_empty() {
        CHECKOUT
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn climbing_out_is_told_from_staying_in() {
        for (path, out) in [
            ("repo", false),
            ("repo/values.yaml", false),
            ("./repo/../other", false),
            ("a/b/../../c", false),
            ("", false),
            ("..", true),
            ("../x", true),
            ("repo/../../x", true),
            ("./../x", true),
        ] {
            assert_eq!(climbs_out(path), out, "{path}");
        }
    }

    #[test]
    fn durations_must_parse_and_be_positive() {
        assert_eq!(
            GoDuration::from_text("1m30s"),
            Ok(GoDuration(SignedDuration::from_secs(90)))
        );
        for bad in ["", "5", "5x", "0s", "-1m", "soon"] {
            assert!(GoDuration::from_text(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn urls_must_be_http_or_https_with_a_host() {
        assert!(HttpUrl::from_text("http://127.0.0.1:18080/hook").is_ok());
        assert!(HttpUrl::from_text("https://example.com").is_ok());
        for bad in [
            "",
            "ftp://example.com",
            "example.com",
            "https://",
            "HTTP//x",
        ] {
            assert!(HttpUrl::from_text(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn an_expression_is_deferred_not_judged() {
        let value: Deferred<HttpUrl> =
            serde_json::from_value(serde_json::json!("${{ vars.hook }}")).expect("decodes");
        assert_eq!(value, Deferred::Expression("${{ vars.hook }}".into()));
        assert_eq!(value.known(), None);
    }

    #[test]
    fn required_text_must_not_be_blank() {
        assert!(required("repo", "x").is_ok());
        assert_eq!(
            required("repo", "  "),
            Err("repo must not be empty".to_string())
        );
    }
}
