//! Verification after a crossing (spec controller.md §7): did the release that crossed
//! achieve its aim? A Gate lists verifications (`spec.verify[]`, each `{uses, with}`);
//! after a successful crossing it asks them on every reconcile until all pass, and
//! clears the Bundle only then.
//!
//! - [`Verifiers`] runs a Gate's verifications: every one must pass, and the first that
//!   does not is the answer. A verification naming no registered verifier is an error
//!   (the Gate reconcile fails, the Bundle stays uncleared) — never "passed".
//! - [`flagger`] verifies by a Flagger Canary's phase.
//!
//! Health (`hecate_steps::health`) says whether things run now; verification says whether
//! a crossing landed. The two stay separate.

pub mod flagger;

use std::sync::Arc;

use futures::future::BoxFuture;
use hecate_steps::by_name::{ByName, Duplicate, Named};
use hecate_types::Verification;
use serde_json::Value;

pub use flagger::FlaggerVerifier;

/// A verifier's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The crossing achieved its aim.
    pub verified: bool,
    /// The answer is final: `false` with `done` is "no", without it "not yet". The Gate
    /// acts on `verified` alone; `done` is for people.
    pub done: bool,
    /// Why, in words.
    pub reason: String,
}

/// Why a verification could not judge at all.
#[derive(thiserror::Error, Debug)]
pub enum VerifyError {
    /// No verifier is registered under the name a verification uses.
    #[error("unknown verifier {name:?} (registered: {registered})")]
    UnknownVerifier {
        /// The name used.
        name: String,
        /// The registered names, comma-separated.
        registered: String,
    },
    /// The verification's `with` cannot be used.
    #[error("{verifier} verification: {problem}")]
    Config {
        /// The verifier's name.
        verifier: String,
        /// What is wrong.
        problem: String,
    },
    /// What the verifier judges by does not exist: a named but absent object must not
    /// pass.
    #[error("{0} not found")]
    NotFound(String),
    /// What the verifier judges by could not be read.
    #[error("cannot read {what}: {}", hecate_steps::flux::access::describe(.source))]
    Read {
        /// What was being read.
        what: String,
        /// What the API server (or the way to it) said.
        #[source]
        source: kube::Error,
    },
}

/// A kind of verification, registered under the name verifications `use`.
pub trait Verifier: Send + Sync {
    /// The name verifications refer to in `uses`, e.g. `flagger`.
    fn name(&self) -> &str;

    /// Judges one verification whose `with` is `config`, for a Gate in `namespace`.
    fn verify<'a>(
        &'a self,
        config: Option<&'a Value>,
        namespace: &'a str,
    ) -> BoxFuture<'a, Result<Verdict, VerifyError>>;
}

/// The verifiers a controller knows, by name.
#[derive(Clone, Default)]
pub struct Verifiers {
    verifiers: ByName<dyn Verifier>,
}

impl Named for dyn Verifier {
    const KIND: &'static str = "verifier";

    fn name(&self) -> &str {
        Verifier::name(self)
    }
}

impl Verifiers {
    /// No verifiers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `verifier` under its name; a name may be registered once.
    pub fn register(&mut self, verifier: Arc<dyn Verifier>) -> Result<(), Duplicate> {
        self.verifiers.register(verifier)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.verifiers.names()
    }

    /// Runs `verifications` in order until one does not pass, and answers with that
    /// one's verdict; verified when all pass (or there are none), with their reasons
    /// joined. Every name is looked
    /// up before anything runs, so an unknown verifier is an error whatever the others
    /// say.
    pub async fn verify(
        &self,
        verifications: &[Verification],
        namespace: &str,
    ) -> Result<Verdict, VerifyError> {
        let verifiers = verifications
            .iter()
            .map(|verification| {
                self.verifiers
                    .get(&verification.uses)
                    .map(|verifier| (verifier, verification.with.as_ref()))
                    .ok_or_else(|| VerifyError::UnknownVerifier {
                        name: verification.uses.clone(),
                        registered: self.verifiers.listed(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut reasons = Vec::with_capacity(verifiers.len());
        for (verifier, config) in verifiers {
            let verdict = verifier.verify(config, namespace).await?;
            if !verdict.verified {
                return Ok(verdict);
            }
            reasons.push(verdict.reason);
        }
        Ok(Verdict {
            verified: true,
            done: true,
            reason: if reasons.is_empty() {
                "nothing to verify".into()
            } else {
                reasons.join("; ")
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::future::BoxFuture;
    use hecate_types::Verification;
    use serde_json::{Value, json};

    use super::{Verdict, Verifier, Verifiers, VerifyError};
    use hecate_steps::by_name::Duplicate;

    /// Answers what its `with` says (`{verified, done, reason}`, or `{missing: what}`
    /// for a NotFound error) and counts its calls.
    #[derive(Default)]
    struct Scripted {
        calls: AtomicUsize,
    }

    impl Verifier for Scripted {
        fn name(&self) -> &str {
            "scripted"
        }

        fn verify<'a>(
            &'a self,
            config: Option<&'a Value>,
            namespace: &'a str,
        ) -> BoxFuture<'a, Result<Verdict, VerifyError>> {
            Box::pin(async move {
                self.calls.fetch_add(1, Ordering::Relaxed);
                let config = config.cloned().unwrap_or_default();
                if let Some(missing) = config["missing"].as_str() {
                    return Err(VerifyError::NotFound(format!("{namespace}/{missing}")));
                }
                Ok(Verdict {
                    verified: config["verified"].as_bool().unwrap_or_default(),
                    done: config["done"].as_bool().unwrap_or_default(),
                    reason: config["reason"].as_str().unwrap_or_default().into(),
                })
            })
        }
    }

    fn registry() -> (Verifiers, Arc<Scripted>) {
        let scripted = Arc::new(Scripted::default());
        let mut registry = Verifiers::new();
        registry.register(scripted.clone()).expect("registered");
        (registry, scripted)
    }

    fn uses(name: &str, with: Value) -> Verification {
        Verification {
            uses: name.into(),
            with: Some(with),
        }
    }

    fn pass(reason: &str) -> Verification {
        uses(
            "scripted",
            json!({"verified": true, "done": true, "reason": reason}),
        )
    }

    #[tokio::test]
    async fn all_must_pass_and_the_first_that_does_not_is_the_answer() {
        let (registry, scripted) = registry();
        let verdict = registry
            .verify(
                &[
                    pass("a"),
                    uses(
                        "scripted",
                        json!({"verified": false, "done": false, "reason": "b not yet"}),
                    ),
                    uses(
                        "scripted",
                        json!({"verified": false, "done": true, "reason": "c failed"}),
                    ),
                ],
                "shop",
            )
            .await
            .expect("a verdict");
        assert_eq!(
            verdict,
            Verdict {
                verified: false,
                done: false,
                reason: "b not yet".into()
            }
        );
        assert_eq!(
            scripted.calls.load(Ordering::Relaxed),
            2,
            "stops at the first"
        );

        let verdict = registry
            .verify(&[pass("a"), pass("b")], "shop")
            .await
            .expect("a verdict");
        assert!(verdict.verified && verdict.done, "{verdict:?}");
        assert_eq!(verdict.reason, "a; b");
    }

    #[tokio::test]
    async fn nothing_to_verify_is_verified() {
        let (registry, _) = registry();
        let verdict = registry.verify(&[], "shop").await.expect("a verdict");
        assert!(verdict.verified && verdict.done, "{verdict:?}");
        assert_eq!(verdict.reason, "nothing to verify");
    }

    #[tokio::test]
    async fn an_unknown_verifier_is_an_error_even_after_a_failure() {
        let (registry, scripted) = registry();
        let error = registry
            .verify(
                &[
                    uses("scripted", json!({"verified": false, "reason": "no"})),
                    uses("argo-rollouts", json!({})),
                ],
                "shop",
            )
            .await
            .expect_err("unknown verifier");
        assert_eq!(
            error.to_string(),
            r#"unknown verifier "argo-rollouts" (registered: scripted)"#
        );
        assert_eq!(scripted.calls.load(Ordering::Relaxed), 0, "nothing ran");
    }

    #[tokio::test]
    async fn a_verifier_error_is_the_registrys_error() {
        let (registry, _) = registry();
        let error = registry
            .verify(
                &[
                    pass("a"),
                    uses("scripted", json!({"missing": "Canary api"})),
                ],
                "shop",
            )
            .await
            .expect_err("not found");
        assert_eq!(error.to_string(), "shop/Canary api not found");
    }

    #[test]
    fn a_name_can_be_registered_once() {
        let (mut registry, scripted) = registry();
        assert_eq!(
            registry.register(scripted),
            Err(Duplicate {
                kind: "verifier",
                name: "scripted".into()
            })
        );
        assert_eq!(registry.names().collect::<Vec<_>>(), ["scripted"]);
    }
}
