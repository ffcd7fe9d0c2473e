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

/// One built-in step's configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum Config {
    /// `git-clone`.
    GitClone(git::GitClone),
    /// `git-commit`.
    GitCommit(git::GitCommit),
    /// `git-push`.
    GitPush(git::GitPush),
    /// `git-pull-request`.
    GitPullRequest(host::GitPullRequest),
    /// `commit-status`.
    CommitStatus(host::CommitStatus),
    /// `edit-yaml`.
    EditYaml(yaml::EditYaml),
    /// `set-image`.
    SetImage(yaml::SetImage),
    /// `render-kustomize`.
    RenderKustomize(render::RenderKustomize),
    /// `render-helm`.
    RenderHelm(render::RenderHelm),
    /// `oci-push`.
    OciPush(oci::OciPush),
    /// `oci-pull`.
    OciPull(oci::OciPull),
    /// `flux-reconcile`.
    FluxReconcile(flux::FluxReconcile),
    /// `flux-wait`.
    FluxWait(flux::FluxWait),
    /// `http`.
    Http(http::Http),
    /// `evidence-gate`.
    EvidenceGate(evidence::EvidenceGate),
}

impl Config {
    /// Decodes `with` (absent = `{}`) as the configuration of the step named `uses`;
    /// `None` when no built-in step has that name.
    pub fn decode(uses: &str, with: Option<&Value>) -> Option<Result<Config, String>> {
        let empty = Value::Object(serde_json::Map::new());
        let with = with.unwrap_or(&empty);
        let config = match uses {
            "git-clone" => decode(with).map(Config::GitClone),
            "git-commit" => decode(with).map(Config::GitCommit),
            "git-push" => decode(with).map(Config::GitPush),
            "git-pull-request" => decode(with).map(Config::GitPullRequest),
            "commit-status" => decode(with).map(Config::CommitStatus),
            "edit-yaml" => decode(with).map(Config::EditYaml),
            "set-image" => decode(with).map(Config::SetImage),
            "render-kustomize" => decode(with).map(Config::RenderKustomize),
            "render-helm" => decode(with).map(Config::RenderHelm),
            "oci-push" => decode(with).map(Config::OciPush),
            "oci-pull" => decode(with).map(Config::OciPull),
            "flux-reconcile" => decode(with).map(Config::FluxReconcile),
            "flux-wait" => decode(with).map(Config::FluxWait),
            "http" => decode(with).map(Config::Http),
            "evidence-gate" => decode(with).map(Config::EvidenceGate),
            _ => return None,
        };
        Some(config)
    }

    /// The step's registered name, the `uses:` that selects it.
    pub fn uses(&self) -> &'static str {
        match self {
            Config::GitClone(_) => "git-clone",
            Config::GitCommit(_) => "git-commit",
            Config::GitPush(_) => "git-push",
            Config::GitPullRequest(_) => "git-pull-request",
            Config::CommitStatus(_) => "commit-status",
            Config::EditYaml(_) => "edit-yaml",
            Config::SetImage(_) => "set-image",
            Config::RenderKustomize(_) => "render-kustomize",
            Config::RenderHelm(_) => "render-helm",
            Config::OciPush(_) => "oci-push",
            Config::OciPull(_) => "oci-pull",
            Config::FluxReconcile(_) => "flux-reconcile",
            Config::FluxWait(_) => "flux-wait",
            Config::Http(_) => "http",
            Config::EvidenceGate(_) => "evidence-gate",
        }
    }
}

/// Strict decode, then the step's own checks. A decode error is prefixed with the path
/// to the offending value (`edits[1]: missing field `key``), so nested mistakes are
/// found without reading the whole block.
fn decode<T: StepConfig>(with: &Value) -> Result<T, String> {
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
    //! Helpers for the per-step test tables.

    use serde_json::Value;

    use super::Config;

    /// Decodes `with` for `uses`, which must be a built-in step.
    pub(crate) fn decode(uses: &str, with: Value) -> Result<Config, String> {
        Config::decode(uses, Some(&with)).expect("a built-in step")
    }

    /// Asserts that `with` is accepted for `uses`.
    pub(crate) fn accepts(uses: &str, with: Value) -> Config {
        match decode(uses, with.clone()) {
            Ok(config) => config,
            Err(why) => panic!("{uses} refused {with}: {why}"),
        }
    }

    /// Asserts that `with` is refused for `uses` with a message containing each of
    /// `words`.
    pub(crate) fn refuses(uses: &str, with: Value, words: &[&str]) {
        match decode(uses, with.clone()) {
            Ok(config) => panic!("{uses} accepted {with}: {config:?}"),
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
