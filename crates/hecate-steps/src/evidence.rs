//! `evidence-gate` (spec controller.md §5.16, fides.md §4.2–4.3 and §5.3): the step
//! that lets the compliance record in Fides decide whether the crossing goes on.
//!
//! The Gate binds the Fides environment (`spec.evidence.fidesEnvironment`) and the
//! credentials; the step's `gates:` pick the checks. They run in a fixed order, cheapest
//! and most certain first: every image digest is asserted compliant (`assert`), then
//! found on the environment's allowlist (`allowlist`); only then is the trail CI
//! recorded for the first digest looked up, the Bundle's artifacts optionally reported
//! to it, the environment's policy checked against it (`policy`), and the change gate
//! asked (`change`) — after recording the person crossing as the deployer, so the
//! verdict counts them. A held change waits (`Running`, every `pollInterval`) until
//! someone approves in Fides or `holdTimeout` has passed since the Passage started.
//!
//! Fides' answers are not judged here: whether a change is held and what holds it are
//! `hecate_fides::model::ChangeVerdict::{held, blockers}`, the unmet policies are
//! `PolicyCheck::unmet`, the Bundle's digests `Bundle::image_digests`, and the client
//! comes from `hecate_ops::dial_fides` (trusting the platform's CAs, as every client of
//! the controller does: `hecate_sources::tls`), the one way every part of Hecate reaches a
//! Gate's Fides.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use hecate_fides::model::{Approval, ApprovalRole, Artifact, ChangeVerdict};
use hecate_ops::rules::change;
use hecate_types::{EvidenceRef, Gate, wellknown};
use jiff::SignedDuration;
use kube::api::Api;
use serde_json::json;

use super::config::evidence::EvidenceCheck;
use super::config::fields::Deferred;
use super::runner::{StepContext, StepError, StepKind, StepResult};
use crate::Tools;
use crate::clock::{Clock, SystemClock};
use crate::reason::Reason;

/// The `evidence-gate` step.
pub struct EvidenceGate {
    client: kube::Client,
    fides_server: String,
    clock: Arc<dyn Clock>,
}

impl EvidenceGate {
    /// Reads Gates and Secrets through `client`; `fides_server` (`--fides-server`)
    /// serves Gates whose evidence names no server.
    pub fn new(client: kube::Client, fides_server: Option<String>) -> Self {
        Self {
            client,
            fides_server: fides_server.unwrap_or_default(),
            clock: Arc::new(SystemClock),
        }
    }

    /// The same step reading the time from `clock` (how long a change has been held).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

impl StepKind for EvidenceGate {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::EvidenceGate;
    type With = crate::config::evidence::EvidenceGateConfig;

    fn build(tools: &Tools) -> Self {
        Self::new(tools.client.clone(), tools.fides_server.clone())
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        config: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(self.judge(ctx, config))
    }
}

impl EvidenceGate {
    async fn judge(
        &self,
        ctx: &StepContext<'_>,
        config: crate::config::evidence::EvidenceGateConfig,
    ) -> Result<StepResult, StepError> {
        let mut checks = Vec::new();
        for check in &config.gates {
            let check = *known(check, "gates")?;
            if !checks.contains(&check) {
                checks.push(check);
            }
        }
        let hold_timeout = known(&config.hold_timeout(), "holdTimeout")?.0;
        let poll_interval: Duration = known(&config.poll_interval(), "pollInterval")?
            .0
            .try_into()
            .map_err(|_| StepError::config("pollInterval must be longer than zero"))?;
        let wants = |check| checks.contains(&check);

        let gate = Api::<Gate>::namespaced(self.client.clone(), ctx.namespace)
            .get(ctx.gate)
            .await
            .map_err(|e| StepError::config(format!("reading Gate {}: {}", ctx.gate, short(&e))))?;
        let environment = gate
            .spec
            .evidence
            .as_ref()
            .map(|e| e.fides_environment.trim())
            .filter(|e| !e.is_empty())
            .ok_or_else(|| {
                StepError::config(format!(
                    "Gate {} sets no evidence.fidesEnvironment: evidence-gate checks against the Fides environment (and evidence.credentialsRef) the Gate binds",
                    ctx.gate
                ))
            })?
            .to_string();
        let roots = hecate_sources::tls::platform_roots();
        let fides = hecate_ops::dial_fides_trusting(&self.client, &gate, &self.fides_server, roots)
            .await
            .map_err(|e| StepError::config(e.to_string()))?;

        let digests: Vec<&str> = ctx.bundle.image_digests().collect();
        let Some(&first) = digests.first() else {
            return Err(StepError::terminal(
                Reason::NoEvidence,
                format!(
                    "Bundle {} pins no image digests: there is no artifact Fides could hold evidence about",
                    name_of(ctx.bundle)
                ),
            ));
        };

        if wants(EvidenceCheck::Assert) {
            for digest in &digests {
                let (compliant, violations) = fides
                    .assert(digest, &config.policy)
                    .await
                    .map_err(|e| classify(&format!("asserting {digest}"), &e))?;
                if !compliant {
                    let why = if violations.is_empty() {
                        "Fides names no violation".to_string()
                    } else {
                        violations.join("; ")
                    };
                    return Err(StepError::terminal(
                        Reason::NotCompliant,
                        format!("{digest} is not compliant: {why}"),
                    ));
                }
            }
        }
        if wants(EvidenceCheck::Allowlist) {
            for digest in &digests {
                let allowed = fides
                    .allowlisted(&environment, digest)
                    .await
                    .map_err(|e| classify(&format!("reading the allowlist for {digest}"), &e))?;
                if !allowed {
                    return Err(StepError::terminal(
                        Reason::NotAllowlisted,
                        format!(
                            "{digest} is not on the allowlist of Fides environment {environment}; once it is accepted there: fides allowlist add --env {environment} --sha {} --reason \"<why this is accepted>\"",
                            hecate_fides::bare_digest(digest)
                        ),
                    ));
                }
            }
        }
        let cleared = || {
            let names: Vec<&str> = checks.iter().map(|c| c.as_str()).collect();
            format!("{} cleared", names.join(" and "))
        };
        if !wants(EvidenceCheck::Policy) && !wants(EvidenceCheck::Change) {
            return Ok(StepResult::done(cleared(), json!({})));
        }

        let trail = fides
            .trail_for_artifact(first)
            .await
            .map_err(|e| classify(&format!("looking up the trail of {first}"), &e))?
            .ok_or_else(|| {
                StepError::terminal(
                    Reason::NoEvidence,
                    format!(
                        "Fides has no record of {first}: the build that produced it did not report the artifact, so there is no trail to judge"
                    ),
                )
            })?;
        let mut output = json!({"trail": trail, "artifactsReported": 0});

        if config.report_artifacts {
            let mut reported = 0;
            for image in ctx
                .bundle
                .spec
                .artifacts
                .iter()
                .filter_map(|a| a.image.as_ref())
                .filter(|i| !i.digest.is_empty())
            {
                let artifact = Artifact {
                    sha256: image.digest.clone(),
                    trail: trail.clone(),
                    name: image.repo.clone(),
                    kind: "container-image".into(),
                };
                fides.report_artifact(&artifact).await.map_err(|e| {
                    classify(&format!("reporting {} to trail {trail}", image.digest), &e)
                        .with_output(output.clone())
                })?;
                reported += 1;
                output["artifactsReported"] = json!(reported);
            }
        }

        if wants(EvidenceCheck::Policy) {
            let check = fides
                .policy_check(&environment, &trail)
                .await
                .map_err(|e| {
                    classify("checking the environment's policy", &e).with_output(output.clone())
                })?;
            if !check.compliant {
                let unmet = check.unmet();
                let why = if unmet.is_empty() {
                    "Fides names no unmet policy".to_string()
                } else {
                    unmet.join("; ")
                };
                return Err(StepError::terminal(
                    Reason::NotCompliant,
                    format!("trail {trail} does not meet the policy of Fides environment {environment}: {why}"),
                )
                .with_output(output));
            }
        }
        if !wants(EvidenceCheck::Change) {
            return Ok(StepResult {
                evidence: Some(EvidenceRef {
                    trail,
                    ..EvidenceRef::default()
                }),
                ..StepResult::done(cleared(), output)
            });
        }

        // The deployer before the verdict, so the verdict counts them. An automatic
        // crossing has no person to record: the controller is not one.
        let actor = ctx.actor.trim();
        if !actor.is_empty() && actor != wellknown::ACTOR_CONTROLLER {
            let approval = Approval {
                by: actor.into(),
                role: ApprovalRole::Deployer,
                reason: format!("crossing Gate {} in {}", ctx.gate, ctx.namespace),
            };
            fides
                .record_approval(&trail, &approval)
                .await
                .map_err(|e| {
                    classify(&format!("recording {actor} as the deployer"), &e)
                        .with_output(output.clone())
                })?;
        }
        let verdict = fides.change_gate(&trail).await.map_err(|e| {
            classify("reading the change gate's verdict", &e).with_output(output.clone())
        })?;
        output["verdict"] = json!(verdict.recommendation);
        output["risk"] = json!(verdict.risk_score);
        let evidence = EvidenceRef {
            trail,
            verdict: verdict.recommendation.clone(),
            risk: Some(verdict.risk_score),
            blockers: change::blockers(&verdict),
            url: String::new(),
        };
        let held_for = self.clock.now().duration_since(ctx.started_at);
        match judge_change(&verdict, config.max_risk, held_for, hold_timeout) {
            Change::TooRisky(max) => Err(StepError::terminal(
                Reason::NotCompliant,
                format!(
                    "the change's risk {} is above maxRisk {max}{}",
                    verdict.risk_score,
                    summary(&verdict)
                ),
            )
            .with_output(output)
            .with_evidence(evidence)),
            Change::Approved => Ok(StepResult {
                evidence: Some(evidence),
                ..StepResult::done(
                    format!(
                        "change approved, risk {} ({})",
                        verdict.risk_score, verdict.risk_level
                    ),
                    output,
                )
            }),
            Change::GaveUp => Err(StepError::terminal(
                Reason::ChangeHeld,
                format!(
                    "the change gate has held the change for {:#} since the Passage started, past holdTimeout {:#}: {}",
                    whole_seconds(held_for),
                    hold_timeout,
                    evidence.blockers.join("; ")
                ),
            )
            .with_output(output)
            .with_evidence(evidence)),
            Change::Held => Ok(StepResult {
                output: Some(output),
                evidence: Some(evidence.clone()),
                ..StepResult::waiting(
                    format!(
                        "change gate is holding (risk {}): {}",
                        verdict.risk_score,
                        evidence.blockers.join("; ")
                    ),
                    poll_interval,
                )
            }),
        }
    }
}

/// What the change gate's verdict means for the crossing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    /// Riskier than `maxRisk` allows (even when approved: waiting cannot lower it).
    TooRisky(i64),
    /// Approved: cross.
    Approved,
    /// Held for longer than `holdTimeout`: stop waiting.
    GaveUp,
    /// Held: look again later.
    Held,
}

fn judge_change(
    verdict: &ChangeVerdict,
    max_risk: Option<i64>,
    held_for: SignedDuration,
    hold_timeout: SignedDuration,
) -> Change {
    match max_risk {
        Some(max) if i64::from(verdict.risk_score) > max => Change::TooRisky(max),
        _ if !change::verdict_holds(verdict) => Change::Approved,
        _ if held_for > hold_timeout => Change::GaveUp,
        _ => Change::Held,
    }
}

/// `: <summary>` when Fides gave one.
fn summary(verdict: &ChangeVerdict) -> String {
    if verdict.summary.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", verdict.summary.trim())
    }
}

fn whole_seconds(duration: SignedDuration) -> SignedDuration {
    SignedDuration::from_secs(duration.as_secs())
}

/// A Fides failure as the step reports it (fides.md §1.5): a configuration Fides or
/// the client refuses, and an approval Fides will not count, are `InvalidConfig`; a
/// refused token is `EvidenceUnavailable` that waiting will not heal; anything else
/// (unreachable, slow, failing, an answer that does not decode) may heal.
fn classify(context: &str, error: &hecate_fides::Error) -> StepError {
    let message = format!("{context}: {error}");
    if error.is_uncounted() || matches!(error, hecate_fides::Error::Misconfigured(_)) {
        StepError::config(message)
    } else if error.is_auth() {
        StepError::terminal(Reason::EvidenceUnavailable, message)
    } else {
        StepError::retryable(Reason::EvidenceUnavailable, message)
    }
}

/// A value that must be known by now (expressions are substituted before a step runs).
fn known<'c, T>(value: &'c Deferred<T>, what: &str) -> Result<&'c T, StepError> {
    value.known().ok_or_else(|| {
        StepError::config(format!("{what} is still an expression after substitution"))
    })
}

fn name_of(bundle: &hecate_types::Bundle) -> String {
    kube::ResourceExt::name_any(bundle)
}

/// A Kubernetes error in one line.
fn short(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(recommendation: &str, risk: i32) -> ChangeVerdict {
        ChangeVerdict {
            recommendation: recommendation.into(),
            risk_score: risk,
            ..ChangeVerdict::default()
        }
    }

    #[test]
    fn the_change_gate_is_judged_risk_first_then_approval_then_time() {
        let hour = SignedDuration::from_hours(1);
        let cases = [
            // maxRisk wins even over an approval: waiting cannot lower the risk.
            (verdict("approve", 60), Some(40), hour, Change::TooRisky(40)),
            (
                verdict("hold", 60),
                Some(40),
                3 * hour,
                Change::TooRisky(40),
            ),
            (verdict("approve", 40), Some(40), hour, Change::Approved),
            (verdict("approve", 90), None, hour, Change::Approved),
            (verdict("hold", 30), None, hour / 2, Change::Held),
            (verdict("hold", 30), None, hour, Change::Held),
            (
                verdict("hold", 30),
                None,
                hour + SignedDuration::from_secs(1),
                Change::GaveUp,
            ),
            // Anything but `approve` holds.
            (verdict("", 0), None, SignedDuration::ZERO, Change::Held),
        ];
        for (verdict, max, held_for, want) in cases {
            assert_eq!(
                judge_change(&verdict, max, held_for, hour),
                want,
                "{verdict:?} max {max:?} held {held_for:?}"
            );
        }
    }

    #[test]
    fn failures_are_classified_as_the_step_reports_them() {
        use hecate_fides::Error;
        let http = |status| Error::Http {
            status,
            method: "GET".into(),
            path: "api/v1/compliance".into(),
            body: "refused".into(),
        };
        let cases = [
            (http(503), Reason::EvidenceUnavailable, false),
            (http(500), Reason::EvidenceUnavailable, false),
            (http(404), Reason::EvidenceUnavailable, false),
            (http(401), Reason::EvidenceUnavailable, true),
            (http(403), Reason::EvidenceUnavailable, true),
            (
                Error::Transport {
                    server: "http://127.0.0.1:9/".into(),
                    message: "could not connect".into(),
                },
                Reason::EvidenceUnavailable,
                false,
            ),
            (
                Error::Decode {
                    method: "GET".into(),
                    path: "p".into(),
                    message: "m".into(),
                },
                Reason::EvidenceUnavailable,
                false,
            ),
            (
                Error::Misconfigured("the call needs a digest".into()),
                Reason::InvalidConfig,
                true,
            ),
            (
                Error::Uncounted {
                    kind: "service".into(),
                    by: "olaf@acme.example".into(),
                    role: "deployer".into(),
                },
                Reason::InvalidConfig,
                true,
            ),
        ];
        for (error, reason, terminal) in cases {
            let step = classify("asking", &error);
            assert_eq!((step.reason, step.terminal), (reason, terminal), "{error}");
            assert!(
                step.message.starts_with("asking: fides:"),
                "{}",
                step.message
            );
        }
    }

    #[test]
    fn a_long_hold_is_told_in_words() {
        assert_eq!(
            format!(
                "{:#}",
                whole_seconds(SignedDuration::from_millis(3 * 3_600_000 + 5_250))
            ),
            "3h 5s"
        );
    }
}
