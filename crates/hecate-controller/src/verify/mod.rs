//! Verification after a crossing (spec controller.md §7, DECISION 139): did the release
//! that crossed achieve its aim? A Gate lists verifications (`spec.verify[]`, each
//! `{uses, with}`); after a successful crossing each looks at the environment on its
//! own cadence until all pass or one says no, and the Bundle clears only then.
//!
//! - [`Verifiers`] runs a crossing's due looks, at once, and adds them up by ops' one
//!   rule (`hecate_ops::rules::verification`): the record it returns is written on the
//!   Passage, where every surface reads it.
//! - A verifier only looks: [`flagger`] reads a Canary's phase, [`http`] asks a URL,
//!   [`prometheus`] runs a query, [`soak`] waits for the crossing to have run long
//!   enough while healthy. Each decodes its `with` with the catalogue's type
//!   (`hecate_ops::catalogue::verifier`), by which ops refuses a Gate with an unknown
//!   verifier or a `with` that cannot be read before any crossing. What still stops a
//!   look — a `${{ … }}` that substitutes to something unusable, a Gate changed while
//!   a verification runs, a server down — is a look that cannot judge: never a pass.
//!
//! Health (`hecate_steps::health`) says whether things run now; verification says whether
//! a crossing landed. The two stay separate; `soak` reads the Gate's health record.

pub mod flagger;
pub mod http;
pub mod prometheus;
pub mod soak;

use std::sync::Arc;

use futures::future::{BoxFuture, join_all};
use hecate_ops::rules::verification::{self as rule, Cadence, Look, Seen};
use hecate_steps::by_name::{ByName, Duplicate, Named};
use hecate_types::{Bundle, Gate, Passage, VerificationStatus};
use jiff::Timestamp;
use kube::ResourceExt as _;
use serde_json::Value;

pub use flagger::FlaggerVerifier;
pub use http::HttpVerifier;
pub use prometheus::PrometheusVerifier;
pub use soak::SoakVerifier;

/// Why a verifier could not look. Each is a look that cannot judge, with this as its
/// message: never a pass.
#[derive(thiserror::Error, Debug)]
pub enum VerifyError {
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
    /// A server the verifier asks did not answer usably.
    #[error("{0}")]
    Unanswered(String),
}

/// What a verifier looks at: the crossing being verified, its Gate, and the time.
pub struct Subject<'a> {
    /// The Gate's namespace.
    pub namespace: &'a str,
    /// The Gate, as this reconcile read it (its health record included).
    pub gate: &'a Gate,
    /// The crossing being verified.
    pub passage: &'a Passage,
    /// When verification began: when the crossing finished.
    pub started: Timestamp,
    /// Now.
    pub now: Timestamp,
}

/// A kind of verification, registered under the name verifications `use`.
pub trait Verifier: Send + Sync {
    /// The name verifications refer to in `uses`, e.g. `flagger`.
    fn name(&self) -> &str;

    /// Looks once, with `config` — the verification's `with`, its expressions
    /// substituted — at `subject`.
    fn look<'a>(
        &'a self,
        config: Option<&'a Value>,
        subject: &'a Subject<'a>,
    ) -> BoxFuture<'a, Result<Look, VerifyError>>;
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

    /// The verification of `passage` — a successful crossing of `gate` that moved
    /// `bundle` — after the looks due at `now`: the record on the Passage carried on,
    /// or a new one begun. A final record is returned as it was.
    pub async fn advance(
        &self,
        gate: &Gate,
        passage: &Passage,
        bundle: &Bundle,
        now: Timestamp,
    ) -> VerificationStatus {
        let passage_status = passage.status.as_ref();
        let started = passage_status
            .and_then(|s| s.finished_at.as_ref())
            .map_or(now, |t| t.0);
        let recorded = passage_status.and_then(|s| s.verification.clone());
        self.look_due(gate, passage, bundle, None, recorded, started, now)
            .await
    }

    /// The verification of one target of a rollout (DECISION 162): `gate`'s
    /// verifications at `place`, whose steps succeeded at `started`, after the looks
    /// due at `now` — `recorded` (its record so far) carried on, or a new one begun.
    /// Expressions read `vars.*` and `target.*` as the target's steps do.
    #[allow(clippy::too_many_arguments)]
    pub async fn advance_target(
        &self,
        gate: &Gate,
        passage: &Passage,
        bundle: &Bundle,
        place: Option<&hecate_steps::engine::Place<'_>>,
        recorded: Option<VerificationStatus>,
        started: Timestamp,
        now: Timestamp,
    ) -> VerificationStatus {
        self.look_due(gate, passage, bundle, place, recorded, started, now)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn look_due(
        &self,
        gate: &Gate,
        passage: &Passage,
        bundle: &Bundle,
        place: Option<&hecate_steps::engine::Place<'_>>,
        recorded: Option<VerificationStatus>,
        started: Timestamp,
        now: Timestamp,
    ) -> VerificationStatus {
        let mut status = recorded
            // A Gate whose verifications changed since starts over: the record must
            // say what the Gate asks now.
            .filter(|v| v.phase.is_final() || same_verifications(gate, v))
            .unwrap_or_else(|| rule::begin(gate, started));
        if status.phase.is_final() {
            return status;
        }
        let namespace = gate.namespace().unwrap_or_default();
        let subject = Subject {
            namespace: &namespace,
            gate,
            passage,
            started,
            now,
        };
        let (vars, target) = hecate_steps::engine::place_view(passage, place);
        let env = hecate_expr::Env {
            gate: gate.name_any(),
            passage: passage.name_any(),
            actor: passage.spec.actor.clone(),
            namespace: namespace.clone(),
            bundle: hecate_steps::engine::bundle_view(bundle),
            vars,
            target,
            ..hecate_expr::Env::default()
        };
        let due: Vec<usize> = (0..status.verifiers.len())
            .filter(|&i| {
                rule::is_due(&status.verifiers[i], now)
                    || rule::health_changed(&status.verifiers[i], gate)
            })
            .collect();
        let looks = join_all(due.iter().map(|&i| {
            let verification = &gate.spec.verify[i];
            self.look_once(verification, &env, &subject)
        }))
        .await;
        for (i, (cadence, look)) in due.into_iter().zip(looks) {
            rule::record(&mut status.verifiers[i], &cadence, look, started, now);
        }
        rule::settle(&mut status, now);
        status
    }

    /// One look by `verification`, whatever stops it turned into a look that cannot
    /// judge; with the cadence its `with` asks for (the default when it cannot be
    /// read, which the look then reports).
    async fn look_once(
        &self,
        verification: &hecate_types::Verification,
        env: &hecate_expr::Env,
        subject: &Subject<'_>,
    ) -> (Cadence, Look) {
        let cannot_judge = |message: String| Look {
            seen: Seen::Inconclusive,
            value: String::new(),
            message,
        };
        let cadence = match Cadence::of(verification.with.as_ref()) {
            Ok(cadence) => cadence,
            Err(problem) => {
                let message = format!("{} verification: {problem}", verification.uses);
                return (Cadence::default(), cannot_judge(message));
            }
        };
        let Some(verifier) = self.verifiers.get(&verification.uses) else {
            let message = format!(
                "unknown verifier {:?} (registered: {})",
                verification.uses,
                self.verifiers.listed()
            );
            return (cadence, cannot_judge(message));
        };
        let config = match verification
            .with
            .as_ref()
            .map(|with| hecate_expr::interpolate(with, env))
            .transpose()
        {
            Ok(config) => config,
            Err(error) => {
                let message = format!("{} verification: {error}", verification.uses);
                return (cadence, cannot_judge(message));
            }
        };
        let look = match verifier.look(config.as_ref(), subject).await {
            Ok(look) => look,
            Err(error) => cannot_judge(error.to_string()),
        };
        (cadence, look)
    }
}

/// Whether `status` records the verifications `gate` asks for now, in order.
fn same_verifications(gate: &Gate, status: &VerificationStatus) -> bool {
    gate.spec.verify.len() == status.verifiers.len()
        && gate
            .spec
            .verify
            .iter()
            .zip(&status.verifiers)
            .all(|(asked, recorded)| asked.uses == recorded.uses)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::future::BoxFuture;
    use hecate_ops::rules::verification::{Look, Seen};
    use hecate_types::{
        Bundle, BundleSpec, Gate, GateSpec, Passage, PassagePhase, PassageSpec, PassageStatus,
        Time, Verification, VerificationPhase,
    };
    use jiff::{SignedDuration, Timestamp};
    use serde_json::{Value, json};

    use super::{Subject, Verifier, Verifiers, VerifyError};
    use hecate_steps::by_name::Duplicate;

    /// Answers what its `with` says (`{seen: pass|fail|refuse|wait, value}`, or
    /// `{missing: what}` for a NotFound error) and counts its looks.
    #[derive(Default)]
    struct Scripted {
        looks: AtomicUsize,
    }

    impl Verifier for Scripted {
        fn name(&self) -> &str {
            "scripted"
        }

        fn look<'a>(
            &'a self,
            config: Option<&'a Value>,
            subject: &'a Subject<'a>,
        ) -> BoxFuture<'a, Result<Look, VerifyError>> {
            Box::pin(async move {
                self.looks.fetch_add(1, Ordering::Relaxed);
                let config = config.cloned().unwrap_or_default();
                if let Some(missing) = config["missing"].as_str() {
                    return Err(VerifyError::NotFound(format!(
                        "{}/{missing}",
                        subject.namespace
                    )));
                }
                let seen = match config["seen"].as_str().unwrap_or_default() {
                    "pass" => Seen::Pass,
                    "fail" => Seen::Fail,
                    "refuse" => Seen::Refused,
                    _ => Seen::NotYet,
                };
                Ok(Look {
                    seen,
                    value: config["value"].as_str().unwrap_or_default().into(),
                    message: "as scripted".into(),
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

    fn t0() -> Timestamp {
        "2026-12-03T12:00:00Z".parse().expect("a time")
    }

    fn gate(verify: Vec<Value>) -> Gate {
        let mut gate = Gate::new(
            "staging",
            GateSpec {
                verify: verify
                    .into_iter()
                    .map(|with| Verification {
                        uses: with["uses"].as_str().unwrap_or("scripted").into(),
                        with: Some(with),
                    })
                    .collect(),
                ..GateSpec::default()
            },
        );
        gate.metadata.namespace = Some("shop".into());
        gate
    }

    fn crossing() -> (Passage, Bundle) {
        let mut passage = Passage::new(
            "staging-1",
            PassageSpec {
                gate: "staging".into(),
                bundle: "shop-abc".into(),
                ..PassageSpec::default()
            },
        );
        passage.status = Some(PassageStatus {
            phase: Some(PassagePhase::Succeeded),
            finished_at: Some(Time(t0())),
            ..PassageStatus::default()
        });
        let bundle = Bundle::new(
            "shop-abc",
            BundleSpec {
                beacon: "shop".into(),
                ..BundleSpec::default()
            },
        );
        (passage, bundle)
    }

    #[tokio::test]
    async fn due_looks_add_up_and_one_no_fails_the_crossing() {
        let (registry, scripted) = registry();
        let gate = gate(vec![
            json!({"seen": "pass", "value": "1"}),
            json!({"seen": "fail", "value": "0.4"}),
        ]);
        let (passage, bundle) = crossing();
        let status = registry.advance(&gate, &passage, &bundle, t0()).await;
        assert_eq!(scripted.looks.load(Ordering::Relaxed), 2, "both were due");
        assert_eq!(status.phase, VerificationPhase::Failed);
        assert_eq!(status.verifiers[0].phase, VerificationPhase::Verified);
        assert_eq!(status.verifiers[1].last_value, "0.4");
        assert_eq!(status.message, "scripted verification said no: as scripted");
    }

    #[tokio::test]
    async fn a_look_not_due_is_not_taken_and_a_final_record_is_kept_as_it_is() {
        let (registry, scripted) = registry();
        let gate = gate(vec![json!({"seen": "wait", "interval": "1m"})]);
        let (mut passage, bundle) = crossing();
        let first = registry.advance(&gate, &passage, &bundle, t0()).await;
        assert_eq!(first.phase, VerificationPhase::Verifying);
        passage.status.as_mut().expect("a status").verification = Some(first.clone());
        let later = t0() + SignedDuration::from_secs(30);
        let again = registry.advance(&gate, &passage, &bundle, later).await;
        assert_eq!(again.verifiers, first.verifiers, "not due for 30 s more");
        assert_eq!(scripted.looks.load(Ordering::Relaxed), 1);

        let mut decided = first;
        decided.phase = VerificationPhase::Verified;
        passage.status.as_mut().expect("a status").verification = Some(decided.clone());
        let kept = registry
            .advance(
                &gate,
                &passage,
                &bundle,
                later + SignedDuration::from_secs(60),
            )
            .await;
        assert_eq!(kept, decided);
        assert_eq!(scripted.looks.load(Ordering::Relaxed), 1, "nothing looked");
    }

    #[tokio::test]
    async fn what_stops_a_look_cannot_judge_and_never_passes() {
        let (registry, scripted) = registry();
        let gate = gate(vec![
            json!({"uses": "argo-rollouts"}),
            json!({"seen": "pass", "successes": 0}),
            json!({"seen": "pass", "value": "${{ bundle.nope( }}"}),
            json!({"missing": "Canary api"}),
        ]);
        let (passage, bundle) = crossing();
        let status = registry.advance(&gate, &passage, &bundle, t0()).await;
        assert_eq!(status.phase, VerificationPhase::Verifying);
        let messages: Vec<&str> = status
            .verifiers
            .iter()
            .map(|v| v.message.as_str())
            .collect();
        assert_eq!(
            messages[0],
            r#"unknown verifier "argo-rollouts" (registered: scripted)"#
        );
        assert!(messages[1].contains("successes"), "{}", messages[1]);
        assert!(
            messages[2].starts_with("scripted verification: "),
            "{}",
            messages[2]
        );
        assert_eq!(messages[3], "shop/Canary api not found");
        assert!(status.verifiers.iter().all(|v| v.inconclusive == 1));
        assert_eq!(
            scripted.looks.load(Ordering::Relaxed),
            1,
            "only the last looked"
        );
    }

    #[tokio::test]
    async fn expressions_in_with_read_the_crossing() {
        let (registry, _) = registry();
        let gate = gate(vec![
            json!({"seen": "pass", "value": "${{ bundle.name }} in ${{ gate }}"}),
        ]);
        let (passage, bundle) = crossing();
        let status = registry.advance(&gate, &passage, &bundle, t0()).await;
        assert_eq!(status.verifiers[0].last_value, "shop-abc in staging");
        assert_eq!(status.phase, VerificationPhase::Verified);
    }

    #[tokio::test]
    async fn a_gate_whose_verifications_changed_starts_over() {
        let (registry, _) = registry();
        let (mut passage, bundle) = crossing();
        let before = registry
            .advance(
                &gate(vec![json!({"seen": "wait"})]),
                &passage,
                &bundle,
                t0(),
            )
            .await;
        passage.status.as_mut().expect("a status").verification = Some(before);
        let now = gate(vec![json!({"seen": "wait"}), json!({"uses": "other"})]);
        let status = registry.advance(&now, &passage, &bundle, t0()).await;
        assert_eq!(status.verifiers.len(), 2);
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
