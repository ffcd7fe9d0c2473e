//! The `flagger` verifier (spec controller.md §7): a crossing is verified when the
//! Flagger Canary it rolled out says `Succeeded`. The Canary is read untyped — the
//! Flagger CRD is optional in a cluster — and judged by [`judge`], a pure function of
//! its JSON.

use futures::future::BoxFuture;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use serde_json::Value;

use hecate_ops::rules::verification::{Look, Seen};

use super::{Subject, Verifier, VerifyError};

/// Verifies by a Flagger Canary's `status.phase`.
pub struct FlaggerVerifier {
    client: kube::Client,
    /// `--no-cross-namespace-refs`: a Canary outside the Gate's namespace is refused,
    /// as a Flux object there is.
    refuse_cross_namespace: bool,
}

/// The `with` of a `flagger` verification: the catalogue's, which ops judges a Gate
/// by.
pub use hecate_ops::catalogue::verifier::FlaggerConfig;

impl FlaggerVerifier {
    /// The name verifications use.
    pub const NAME: &'static str = hecate_ops::catalogue::Verifier::Flagger.name();

    /// A verifier reading Canaries with `client`; with `refuse_cross_namespace`, only
    /// in the Gate's namespace.
    pub fn new(client: kube::Client, refuse_cross_namespace: bool) -> Self {
        Self {
            client,
            refuse_cross_namespace,
        }
    }

    fn canaries(&self, namespace: &str) -> Api<DynamicObject> {
        // The plural is Flagger's own and stable; no discovery needed.
        let gvk = GroupVersionKind::gvk("flagger.app", "v1beta1", "Canary");
        let resource = ApiResource::from_gvk_with_plural(&gvk, "canaries");
        Api::namespaced_with(self.client.clone(), namespace, &resource)
    }
}

impl Verifier for FlaggerVerifier {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn look<'a>(
        &'a self,
        config: Option<&'a Value>,
        subject: &'a Subject<'a>,
    ) -> BoxFuture<'a, Result<Look, VerifyError>> {
        Box::pin(async move {
            let config = FlaggerConfig::decode(config).map_err(|problem| VerifyError::Config {
                verifier: Self::NAME.into(),
                problem,
            })?;
            let namespace = match config.namespace.trim() {
                "" => subject.namespace,
                given => given,
            };
            let name = config.name.trim();
            hecate_steps::flux::config::outside(
                &format!("Canary {namespace}/{name}"),
                namespace,
                subject.namespace,
                self.refuse_cross_namespace,
            )
            .map_err(|problem| VerifyError::Config {
                verifier: Self::NAME.into(),
                problem,
            })?;
            let what = format!("Canary {namespace}/{name}");
            let canary = self
                .canaries(namespace)
                .get_opt(name)
                .await
                .map_err(|source| VerifyError::Read {
                    what: what.clone(),
                    source,
                })?
                .ok_or_else(|| VerifyError::NotFound(what.clone()))?;
            let canary = serde_json::to_value(canary).map_err(|e| VerifyError::Read {
                what: what.clone(),
                source: kube::Error::SerdeError(e),
            })?;
            Ok(judge(&what, &canary))
        })
    }
}

/// Judges a Canary by its phase: `Succeeded` passes; `Failed` and `Terminated` are a
/// final no, explained by the failed checks and the `Promoted` condition; any other
/// phase — `Initialized` included, which only means Flagger took the workload over — is
/// not yet. `what` names the Canary in the message; the phase is the look's value.
pub fn judge(what: &str, canary: &Value) -> Look {
    let phase = canary
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (seen, message) = match phase {
        "Succeeded" => (Seen::Pass, format!("{what} succeeded")),
        "Failed" | "Terminated" => (Seen::Refused, failure(what, phase, canary)),
        "" => (Seen::NotYet, format!("{what} has no phase yet")),
        "Initialized" => (
            Seen::NotYet,
            format!("{what} is Initialized; no analysis has run for this release yet"),
        ),
        other => (Seen::NotYet, format!("{what} is {other}")),
    };
    Look {
        seen,
        value: phase.to_string(),
        message,
    }
}

fn failure(what: &str, phase: &str, canary: &Value) -> String {
    let mut reason = format!("{what} {}", phase.to_lowercase());
    if let Some(checks) = canary
        .pointer("/status/failedChecks")
        .and_then(Value::as_i64)
    {
        reason.push_str(&format!(" after {checks} failed checks"));
    }
    let promoted = canary
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| conditions.iter().find(|c| c["type"] == "Promoted"))
        .and_then(|c| c["message"].as_str())
        .map(str::trim)
        .filter(|message| !message.is_empty());
    if let Some(message) = promoted {
        reason.push_str(": ");
        reason.push_str(message);
    }
    reason
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use hecate_ops::rules::verification::Seen;

    use super::{FlaggerConfig, judge};

    fn canary(phase: Option<&str>) -> Value {
        let mut canary = json!({
            "apiVersion": "flagger.app/v1beta1",
            "kind": "Canary",
            "metadata": {"name": "api", "namespace": "shop"},
            "status": {
                "failedChecks": 5,
                "canaryWeight": 0,
                "conditions": [{
                    "type": "Promoted", "status": "False", "reason": "Failed",
                    "message": "Canary analysis failed, Deployment scaled to zero.",
                }],
            },
        });
        if let Some(phase) = phase {
            canary["status"]["phase"] = json!(phase);
        }
        canary
    }

    #[test]
    fn the_phase_decides() {
        let cases = [
            (Some("Succeeded"), Seen::Pass, "Canary shop/api succeeded"),
            (
                Some("Failed"),
                Seen::Refused,
                "Canary shop/api failed after 5 failed checks: Canary analysis failed, Deployment scaled to zero.",
            ),
            (
                Some("Terminated"),
                Seen::Refused,
                "Canary shop/api terminated after 5 failed checks: Canary analysis failed, Deployment scaled to zero.",
            ),
            (None, Seen::NotYet, "Canary shop/api has no phase yet"),
            (Some(""), Seen::NotYet, "Canary shop/api has no phase yet"),
            (
                Some("Initialized"),
                Seen::NotYet,
                "Canary shop/api is Initialized; no analysis has run for this release yet",
            ),
            (
                Some("Initializing"),
                Seen::NotYet,
                "Canary shop/api is Initializing",
            ),
            (Some("Waiting"), Seen::NotYet, "Canary shop/api is Waiting"),
            (
                Some("Progressing"),
                Seen::NotYet,
                "Canary shop/api is Progressing",
            ),
            (
                Some("WaitingPromotion"),
                Seen::NotYet,
                "Canary shop/api is WaitingPromotion",
            ),
            (
                Some("Promoting"),
                Seen::NotYet,
                "Canary shop/api is Promoting",
            ),
            (
                Some("Finalising"),
                Seen::NotYet,
                "Canary shop/api is Finalising",
            ),
            (
                Some("Terminating"),
                Seen::NotYet,
                "Canary shop/api is Terminating",
            ),
        ];
        for (phase, seen, message) in cases {
            let look = judge("Canary shop/api", &canary(phase));
            assert_eq!(
                (look.seen, look.message.as_str()),
                (seen, message),
                "{phase:?}"
            );
            assert_eq!(look.value, phase.unwrap_or_default());
        }
    }

    #[test]
    fn a_failure_without_checks_or_message_still_says_it_failed() {
        let canary = json!({"status": {"phase": "Failed"}});
        let look = judge("Canary shop/api", &canary);
        assert_eq!(look.message, "Canary shop/api failed");
        assert_eq!(look.seen, Seen::Refused);
    }

    #[test]
    fn the_config_needs_a_name_and_ignores_what_it_does_not_know() {
        let config = FlaggerConfig::decode(Some(&json!({"name": "api", "interval": "1m"})))
            .expect("a config");
        assert_eq!(
            config,
            FlaggerConfig {
                name: "api".into(),
                namespace: String::new()
            }
        );
        let config = FlaggerConfig::decode(Some(&json!({"name": "api", "namespace": "canaries"})))
            .expect("a config");
        assert_eq!(config.namespace, "canaries");

        for with in [None, Some(json!({})), Some(json!({"name": " "}))] {
            let error = FlaggerConfig::decode(with.as_ref()).expect_err("no name");
            assert_eq!(error, "name is required");
        }
        assert!(FlaggerConfig::decode(Some(&json!({"name": 3}))).is_err());
    }
}
