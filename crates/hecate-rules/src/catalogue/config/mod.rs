//! The typed `with:` of each built-in step (spec §5), decoded strictly.
//!
//! One decoder serves two moments: the Gate judges a step list before any crossing
//! (spec §3.9), and the Passage engine decodes the interpolated configuration before it
//! runs a step. Using the same types for both means a Gate that passes validation
//! never meets a different reading of its steps mid-crossing.

pub mod evidence;
pub mod fields;
pub mod flux;
pub mod git;
pub mod host;
pub mod http;
pub mod oci;
pub mod render;
pub mod yaml;

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_path_to_error::Segment;

/// What every step configuration offers beyond decoding.
pub trait StepConfig: DeserializeOwned {
    /// The checks that need neither a cluster, a checkout nor a Bundle, made after a
    /// successful decode; `Err` names the field and says what is wrong.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// A step's `with:` (absent: `{}`), decoded strictly, then the step's own checks. A
/// decode error is prefixed with the path to the offending value (`edits[1]: missing
/// field `key``), so nested mistakes are found without reading the whole block. The
/// one decoder of a step's configuration: at Gate time
/// ([`crate::catalogue::step::Step::check`]) and before each run (hecate-steps'
/// `StepKind`).
pub fn decode<T: StepConfig>(with: Option<&Value>) -> Result<T, String> {
    let empty = Value::Object(serde_json::Map::new());
    let with = with.unwrap_or(&empty);
    if !with.is_object() {
        return Err(format!(
            "with must be a mapping of settings, not {}",
            kind_of(with)
        ));
    }
    let config: T = serde_path_to_error::deserialize(with).map_err(|e| describe(&e))?;
    config.check()?;
    Ok(config)
}

/// A decode error, prefixed with where it happened. An unknown key is located at its
/// parent: serde's message already names the key.
fn describe(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let message = error.inner().to_string();
    let mut segments: Vec<&Segment> = error.path().iter().collect();
    if message.starts_with("unknown field") {
        segments.pop();
    }
    let mut at = String::new();
    for segment in segments {
        match segment {
            Segment::Seq { index } => at.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !at.is_empty() {
                    at.push('.');
                }
                at.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    if at.is_empty() {
        message
    } else {
        format!("{at}: {message}")
    }
}

/// How a JSON value is called in a message.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Helpers for the per-step test tables: each judges a `with:` by the step's name,
    //! as a Gate's step list is judged.

    use serde_json::Value;

    use super::StepConfig;

    /// What the built-in step `uses` says of `with`.
    fn judge(uses: &str, with: &Value) -> Result<(), String> {
        crate::catalogue::step::Step::named(uses)
            .unwrap_or_else(|| panic!("{uses} is not a built-in step"))
            .check(Some(with))
    }

    /// Asserts that `with` is accepted for `uses`.
    pub(crate) fn accepts(uses: &str, with: Value) {
        if let Err(why) = judge(uses, &with) {
            panic!("{uses} refused {with}: {why}");
        }
    }

    /// Asserts that `with` is accepted for `uses`, and answers it decoded.
    pub(crate) fn accepted<T: StepConfig>(uses: &str, with: Value) -> T {
        accepts(uses, with.clone());
        match super::decode(Some(&with)) {
            Ok(config) => config,
            Err(why) => panic!("{uses} accepted {with}, which does not decode as asked: {why}"),
        }
    }

    /// Asserts that `with` is refused for `uses` with a message containing each of
    /// `words`.
    pub(crate) fn refuses(uses: &str, with: Value, words: &[&str]) {
        match judge(uses, &with) {
            Ok(()) => panic!("{uses} accepted {with}"),
            Err(why) => {
                for word in words {
                    assert!(
                        why.contains(word),
                        "{uses} refused {with} with {why:?}, which does not mention {word:?}"
                    );
                }
            }
        }
    }
}
