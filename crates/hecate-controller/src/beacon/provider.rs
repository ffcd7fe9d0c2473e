//! The `provider` source (spec controller.md §1.3): a Flux Operator
//! `ResourceSetInputProvider` in the Beacon's namespace, read untyped (its CRD may not
//! be installed). The provider has already filtered, limited and sorted its inputs, so
//! only the first is taken, and never re-sorted by Hecate's rules.

use hecate_types::{Artifact, CommitArtifact};
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use serde_json::Value;

use super::source::ResolveError;

/// The provider's API group.
pub const GROUP: &str = "fluxcd.controlplane.io";
/// The provider's API version.
pub const VERSION: &str = "v1";
/// The provider's kind.
pub const KIND: &str = "ResourceSetInputProvider";
/// The provider's resource name.
pub const PLURAL: &str = "resourcesetinputproviders";

/// Reads provider `name` in `namespace` and maps its first input to an artifact.
pub async fn resolve(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Artifact, ResolveError> {
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, KIND), PLURAL);
    let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &resource);
    let provider = match api.get_opt(name).await {
        Ok(Some(provider)) => provider,
        Ok(None) => {
            return Err(ResolveError::failed(format!(
                "{KIND} {name} does not exist in namespace {namespace} (or its CRD is not installed)"
            )));
        }
        Err(error) => {
            // The API server's sentence, not the client's dump of its Status.
            return Err(ResolveError::failed(format!(
                "reading {KIND} {name}: {}",
                hecate_steps::flux::access::describe(&error)
            )));
        }
    };
    artifact(name, &provider.data)
}

/// The artifact a provider object (its `spec`/`status` as JSON) stands for now.
pub fn artifact(name: &str, object: &Value) -> Result<Artifact, ResolveError> {
    let status = &object["status"];
    let ready = status["conditions"]
        .as_array()
        .and_then(|conditions| conditions.iter().find(|c| c["type"] == "Ready"));
    match ready {
        None => {
            return Err(ResolveError::no_match(format!(
                "{KIND} {name} has not reported readiness yet"
            )));
        }
        Some(ready) if ready["status"] != "True" => {
            let why = [&ready["message"], &ready["reason"]]
                .into_iter()
                .filter_map(Value::as_str)
                .find(|s| !s.is_empty())
                .unwrap_or("no reason given");
            return Err(ResolveError::no_match(format!(
                "{KIND} {name} is not ready: {why}"
            )));
        }
        Some(_) => {}
    }
    let Some(input) = status["exportedInputs"]
        .as_array()
        .and_then(|inputs| inputs.first())
    else {
        return Err(ResolveError::no_match(format!(
            "{KIND} {name} exports no inputs yet"
        )));
    };
    let field = |key: &str| match &input[key] {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    let url = object["spec"]["url"].as_str().unwrap_or_default();
    if !field("sha").is_empty() {
        return Ok(Artifact {
            commit: Some(CommitArtifact {
                repo: url.to_string(),
                sha: field("sha"),
                branch: field("branch"),
                tag: field("tag"),
                message: field("title"),
                author: field("author"),
                ..CommitArtifact::default()
            }),
            ..Artifact::default()
        });
    }
    if !field("tag").is_empty() {
        let repo = url.strip_prefix("oci://").unwrap_or(url);
        return Ok(Artifact::image(repo, field("tag"), field("digest")));
    }
    let mut keys: Vec<&str> = input
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    Err(ResolveError::failed(format!(
        "{KIND} {name}: the first input has neither sha nor tag (keys: {})",
        keys.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::source::Class;
    use super::*;

    fn provider(url: &str, ready: Value, inputs: Value) -> Value {
        json!({"spec": {"url": url}, "status": {"conditions": [ready], "exportedInputs": inputs}})
    }

    fn ready() -> Value {
        json!({"type": "Ready", "status": "True", "reason": "Succeeded"})
    }

    #[test]
    fn the_first_input_becomes_the_artifact() {
        let git = provider(
            "https://github.com/acme/app",
            ready(),
            json!([
                {"id": 42, "sha": "abc", "branch": "main", "title": "Fix it"},
                {"sha": "older"}
            ]),
        );
        assert_eq!(
            artifact("p", &git),
            Ok(Artifact {
                commit: Some(CommitArtifact {
                    repo: "https://github.com/acme/app".into(),
                    sha: "abc".into(),
                    branch: "main".into(),
                    tag: String::new(),
                    message: "Fix it".into(),
                    author: String::new(),
                    ..CommitArtifact::default()
                }),
                ..Artifact::default()
            })
        );
        let oci = provider(
            "oci://ghcr.io/acme/api",
            ready(),
            json!([{"tag": "1.2.3", "digest": "sha256:aaa"}]),
        );
        assert_eq!(
            artifact("p", &oci),
            Ok(Artifact::image("ghcr.io/acme/api", "1.2.3", "sha256:aaa"))
        );
    }

    #[test]
    fn a_provider_that_is_not_ready_matches_nothing_yet() {
        let cases = [
            (
                json!({"spec": {}, "status": {}}),
                Class::NoMatch,
                "not reported",
            ),
            (
                provider(
                    "u",
                    json!({"type": "Ready", "status": "False", "reason": "Failed", "message": "token expired"}),
                    json!([{"sha": "a"}]),
                ),
                Class::NoMatch,
                "token expired",
            ),
            (
                provider(
                    "u",
                    json!({"type": "Ready", "status": "Unknown", "reason": "Progressing"}),
                    json!([]),
                ),
                Class::NoMatch,
                "Progressing",
            ),
            (
                provider("u", ready(), json!([])),
                Class::NoMatch,
                "no inputs",
            ),
            (
                provider("u", ready(), Value::Null),
                Class::NoMatch,
                "no inputs",
            ),
            (
                provider("u", ready(), json!([{"zeta": 1, "alpha": "x"}])),
                Class::Failed,
                "alpha, zeta",
            ),
        ];
        for (object, class, words) in cases {
            let error = artifact("p", &object).expect_err(words);
            assert_eq!(error.class, class, "{error}");
            assert!(error.message.contains(words), "{error}");
        }
    }
}
