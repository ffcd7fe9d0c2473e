//! Attestations of a crossing (spec controller.md §3.11, fides.md §4.4), on the Fides
//! trail of the Bundle's artifact, when the crossing's Gate binds a Fides environment:
//!
//! - [`attest`]: a crossing, when it ends — succeeded, failed or aborted — as one
//!   `promotion` attestation saying who crossed what, how it went and what every step
//!   did. The Passage reconciler calls it only after the status write that finished the
//!   Passage succeeded — that write is the claim, so neither a conflict nor a restart
//!   can attest a crossing twice (see `PassageReconciler::reconcile`).
//! - [`verification`]: the verdict of a successful crossing's verification (DECISION
//!   139), once it is final, as one `verification` attestation on the trail the
//!   `promotion` used. The Gate reconciler calls it only after its write that made the
//!   Passage's `status.verification` final succeeded, a write made with the
//!   resourceVersion it read — the claim again (see `GateReconciler::verify`).
//!
//! Both go through [`record`], the one place that dials the Gate's Fides and finds
//! the trail: the trail the crossing was judged on (`status.evidence.trail`, set by an
//! `evidence-gate` step or by the `promotion` attestation), else the trail of the
//! Bundle's first image digest.
//!
//! At most once, and never retried: Fides' trail is an append-only hash chain, where a
//! second record of one crossing cannot be told from a replay; a gap, reported as an
//! Event, is the honest failure. It never fails the Passage or the verification
//! either: what happened has happened whether or not it was recorded.
//!
//! [`payload`] and [`verification_payload`] are pure; the rest talks to Fides.

use hecate_fides::model::Attestation;
use hecate_types::{Bundle, Gate, Passage, PassageStatus, Time, VerificationStatus};
use kube::ResourceExt as _;
use kube::api::Api;
use serde_json::{Map, Value, json};

/// What attesting came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attested {
    /// Not asked for: the Gate is gone, or binds no Fides. Nothing to say.
    NotAsked,
    /// Nothing recorded, and nothing broke (`AttestationSkipped`): why.
    Skipped(String),
    /// Nothing recorded because something failed (`AttestationFailed`): why.
    Failed(String),
    /// Recorded on this trail.
    Recorded(String),
}

/// One attestation about a crossing of `bundle` through `gate`, to record on the
/// Bundle's trail, and the words for what became of it.
pub struct Record<'a> {
    /// The Gate crossed: its Fides is the one asked.
    pub gate: &'a Gate,
    /// The Bundle that crossed: its first image digest is the attestation's artifact.
    pub bundle: &'a Bundle,
    /// The trail already known for the crossing (`status.evidence.trail`), if any: no
    /// lookup then.
    pub trail: Option<&'a str>,
    /// What is attested, in words: "the crossing of Gate production".
    pub subject: String,
    /// What happened, in words: "the crossing of Gate production ended Succeeded".
    pub happened: String,
    /// The attestation's name, and its type.
    pub name: &'static str,
    /// The attestation's document.
    pub payload: Value,
    /// Who signs it; empty is `hecate`.
    pub signed_by: String,
}

/// Records `record` in the Fides its Gate binds (`default_server` is
/// `--fides-server`), reading the credentials Secret through `client`: dials, finds
/// the trail, attests — once, never retried. A Gate that binds no Fides is
/// [`Attested::NotAsked`], with no request made.
pub async fn record(client: &kube::Client, default_server: &str, record: Record<'_>) -> Attested {
    let Record {
        gate,
        bundle,
        trail,
        subject,
        happened,
        name,
        payload,
        signed_by,
    } = record;
    if gate.spec.evidence.is_none() {
        return Attested::NotAsked;
    }
    let failed =
        |why: String| Attested::Failed(format!("{happened}, but Fides has no record of it: {why}"));
    let roots = hecate_sources::tls::platform_roots();
    let fides = match hecate_ops::dial_fides_trusting(client, gate, default_server, roots).await {
        Ok(fides) => fides,
        Err(error) => return failed(error.to_string()),
    };
    let first = bundle.image_digests().next();
    let trail = match (trail.filter(|t| !t.is_empty()), first) {
        (Some(trail), _) => trail.to_string(),
        (None, None) => {
            return Attested::Skipped(format!(
                "Bundle {} pins no image digest, so Fides holds no trail to attest {subject} on",
                bundle.name_any()
            ));
        }
        (None, Some(digest)) => match fides.trail_for_artifact(digest).await {
            Ok(Some(trail)) => trail,
            Ok(None) => {
                return Attested::Skipped(format!(
                    "Fides has no trail for {digest} (the build that produced it did not report the artifact), so {subject} is not attested"
                ));
            }
            Err(error) => return failed(format!("looking up the trail of {digest}: {error}")),
        },
    };
    let attestation = Attestation {
        name: name.into(),
        type_name: name.into(),
        artifact: first.unwrap_or_default().into(),
        payload,
        signed_by,
    };
    match fides.attest(&trail, &attestation).await {
        Ok(()) => Attested::Recorded(trail),
        Err(error) => failed(format!(
            "recording the attestation on trail {trail}: {error}"
        )),
    }
}

/// The trail a crossing already names (`status.evidence.trail`), if any.
fn known_trail(status: Option<&PassageStatus>) -> Option<&str> {
    status
        .and_then(|s| s.evidence.as_ref())
        .map(|e| e.trail.as_str())
        .filter(|t| !t.is_empty())
}

/// Records the finished crossing `passage` (its final `status`) of `bundle` in the
/// Fides its Gate binds, as a `promotion` attestation; `default_server` is
/// `--fides-server`. Reads the Gate and the credentials Secret through `client`.
pub async fn attest(
    client: &kube::Client,
    default_server: &str,
    passage: &Passage,
    bundle: &Bundle,
    status: &PassageStatus,
) -> Attested {
    let namespace = passage.namespace().unwrap_or_default();
    let gate_name = &passage.spec.gate;
    let gate = match Api::<Gate>::namespaced(client.clone(), &namespace)
        .get_opt(gate_name)
        .await
    {
        Ok(Some(gate)) => gate,
        Ok(None) => return Attested::NotAsked,
        Err(error) => {
            return Attested::Skipped(format!(
                "could not read Gate {gate_name} to attest the crossing in Fides: {error}"
            ));
        }
    };
    let outcome = status.phase().as_str();
    record(
        client,
        default_server,
        Record {
            gate: &gate,
            bundle,
            // The trail the crossing was judged on, when an evidence-gate step found it.
            trail: known_trail(Some(status)),
            subject: format!("the crossing of Gate {gate_name}"),
            happened: format!("the crossing of Gate {gate_name} ended {outcome}"),
            name: "promotion",
            payload: payload(passage, bundle, status),
            signed_by: passage.spec.actor.clone(),
        },
    )
    .await
}

/// Records the final `verification` of `passage`, a successful crossing of `gate` by
/// `bundle`, in the Fides the Gate binds, as a `verification` attestation on the trail
/// the crossing's `promotion` attestation used; `default_server` is `--fides-server`.
/// A Gate that binds no Fides is [`Attested::NotAsked`] with no request made; else it
/// reads the credentials Secret through `client`. Signed by `hecate`: the verdict is
/// the controller's, not the crossing's actor's.
pub async fn verification(
    client: &kube::Client,
    default_server: &str,
    gate: &Gate,
    passage: &Passage,
    bundle: &Bundle,
    verification: &VerificationStatus,
) -> Attested {
    let gate_name = gate.name_any();
    let passage_name = passage.name_any();
    let phase = verification.phase.as_str();
    record(
        client,
        default_server,
        Record {
            gate,
            bundle,
            trail: known_trail(passage.status.as_ref()),
            subject: format!("the verification of {passage_name} (Gate {gate_name})"),
            happened: format!(
                "the verification of {passage_name} (Gate {gate_name}) ended {phase}"
            ),
            name: "verification",
            payload: verification_payload(passage, verification),
            signed_by: String::new(),
        },
    )
    .await
}

/// The attestation's document (fides.md §4.4): the crossing, its outcome, and every
/// step — skipped and aborted ones included — as the final status has them.
pub fn payload(passage: &Passage, bundle: &Bundle, status: &PassageStatus) -> Value {
    let steps: Vec<Value> = status
        .steps
        .iter()
        .map(|step| {
            let mut entry = Map::new();
            entry.insert("uses".into(), json!(step.uses));
            entry.insert("phase".into(), json!(step.phase.as_str()));
            for (key, value) in [
                ("as", &step.alias),
                ("reason", &step.reason),
                ("message", &step.message),
            ] {
                insert_text(&mut entry, key, value);
            }
            Value::Object(entry)
        })
        .collect();
    let mut document = crossing(passage);
    document.insert("outcome".into(), json!(status.phase().as_str()));
    document.insert("steps".into(), Value::Array(steps));
    for (key, value) in [
        ("actor", passage.spec.actor.clone()),
        ("message", status.message.clone()),
        ("startedAt", utc(status.started_at.as_ref())),
        ("finishedAt", utc(status.finished_at.as_ref())),
        ("traceID", status.trace_id.clone()),
        ("bundleDigest", bundle.spec.digest.clone()),
    ] {
        insert_text(&mut document, key, &value);
    }
    let artifacts: Vec<&str> = bundle.image_digests().collect();
    if !artifacts.is_empty() {
        document.insert("artifacts".into(), json!(artifacts));
    }
    if let Some(rollout) = &status.rollout {
        document.insert("rollout".into(), rollout_evidence(passage, rollout));
    }
    Value::Object(document)
}

/// A rollout's part of the evidence (issue 52): where it ended, each target's crossing
/// — wave, outcome, attempt, the step it ended on, what it pushed and its Flux
/// applied, health, verification, times — and every acceptance of failures, with who,
/// when and why. A crossing of some targets names which, and the rollout it belongs to.
fn rollout_evidence(passage: &Passage, rollout: &hecate_types::RolloutStatus) -> Value {
    let targets: Vec<Value> = rollout
        .targets
        .iter()
        .filter(|t| t.departed_at.is_none())
        .map(|t| {
            let mut entry = Map::new();
            entry.insert("name".into(), json!(t.name));
            // People count waves and steps from 1.
            entry.insert("wave".into(), json!(t.wave + 1));
            entry.insert("outcome".into(), json!(t.phase.as_str()));
            entry.insert("attempt".into(), json!(t.attempt));
            if t.phase != hecate_types::TargetPhase::Pending {
                entry.insert("step".into(), json!(t.current_step + 1));
            }
            for (key, value) in [
                ("reason", t.reason.clone()),
                ("message", t.message.clone()),
                ("pushedRevision", t.pushed_revision.clone()),
                ("appliedRevision", t.applied_revision.clone()),
                (
                    "health",
                    t.health.map(|h| h.as_str().to_string()).unwrap_or_default(),
                ),
                (
                    "verification",
                    t.verification
                        .map(|v| v.as_str().to_string())
                        .unwrap_or_default(),
                ),
                ("startedAt", utc(t.started_at.as_ref())),
                ("finishedAt", utc(t.finished_at.as_ref())),
            ] {
                insert_text(&mut entry, key, &value);
            }
            Value::Object(entry)
        })
        .collect();
    let accepted: Vec<Value> = rollout
        .accepted
        .iter()
        .map(|a| {
            json!({
                "by": a.by,
                "at": utc(Some(&a.at)),
                "reason": a.reason,
                "targets": a.targets,
            })
        })
        .collect();
    let mut document = Map::new();
    document.insert("phase".into(), json!(rollout.phase.as_str()));
    insert_text(&mut document, "message", &rollout.message);
    document.insert("targets".into(), Value::Array(targets));
    if !accepted.is_empty() {
        document.insert("accepted".into(), Value::Array(accepted));
    }
    if passage.spec.is_partial() {
        document.insert("only".into(), json!(passage.spec.targets));
        if let Some(of) = hecate_ops::rules::rollout::view::belongs_to(passage) {
            document.insert("of".into(), json!(of));
        }
    }
    Value::Object(document)
}

/// The `verification` attestation's document: the crossing, the verdict, and every
/// verifier's account of it as the record has them (a verifier's counts always, its
/// last value and words when it has them).
pub fn verification_payload(passage: &Passage, verification: &VerificationStatus) -> Value {
    let verifiers: Vec<Value> = verification
        .verifiers
        .iter()
        .map(|verifier| {
            let mut entry = Map::new();
            entry.insert("uses".into(), json!(verifier.uses));
            entry.insert("phase".into(), json!(verifier.phase.as_str()));
            entry.insert("passes".into(), json!(verifier.passes));
            entry.insert("failures".into(), json!(verifier.failures));
            if verifier.inconclusive > 0 {
                entry.insert("inconclusive".into(), json!(verifier.inconclusive));
            }
            insert_text(&mut entry, "lastValue", &verifier.last_value);
            insert_text(&mut entry, "message", &verifier.message);
            Value::Object(entry)
        })
        .collect();
    let mut document = crossing(passage);
    document.insert("phase".into(), json!(verification.phase.as_str()));
    document.insert("verifiers".into(), Value::Array(verifiers));
    insert_text(&mut document, "message", &verification.message);
    insert_text(
        &mut document,
        "startedAt",
        &utc(verification.started_at.as_ref()),
    );
    insert_text(
        &mut document,
        "finishedAt",
        &utc(verification.finished_at.as_ref()),
    );
    Value::Object(document)
}

/// What both attestations say of the crossing first: which Passage moved which Bundle
/// through which Gate.
fn crossing(passage: &Passage) -> Map<String, Value> {
    let mut document = Map::new();
    document.insert("passage".into(), json!(passage.name_any()));
    document.insert(
        "namespace".into(),
        json!(passage.namespace().unwrap_or_default()),
    );
    document.insert("gate".into(), json!(passage.spec.gate));
    document.insert("bundle".into(), json!(passage.spec.bundle));
    document
}

/// Puts `value` under `key` unless it is empty: an attestation says only what is known.
fn insert_text(document: &mut Map<String, Value>, key: &str, value: &str) {
    if !value.is_empty() {
        document.insert(key.into(), json!(value));
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ`, or empty when unset.
fn utc(time: Option<&Time>) -> String {
    time.map(|t| t.0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use hecate_types::{
        Artifact, BundleSpec, PassagePhase, PassageSpec, StepPhase, StepStatus, Time,
        VerificationPhase, VerifierStatus,
    };
    use jiff::Timestamp;
    use pretty_assertions::assert_eq;

    use super::*;

    fn at(second: i64) -> Option<Time> {
        Some(Time(Timestamp::from_second(second).expect("a time")))
    }

    #[test]
    fn the_payload_holds_the_crossing_and_every_step() {
        let mut passage = Passage::new(
            "p1",
            PassageSpec {
                gate: "production".into(),
                bundle: "b1".into(),
                actor: "olaf@acme.example".into(),
                ..PassageSpec::default()
            },
        );
        passage.metadata.namespace = Some("acme".into());
        let bundle = Bundle::new(
            "b1",
            BundleSpec {
                beacon: "app".into(),
                digest: "sha256:bbbb".into(),
                artifacts: vec![
                    Artifact::image("ghcr.io/acme/api", "6.5.0", "sha256:abcdef0123456789"),
                    Artifact::commit("https://github.com/acme/app", "0123456789abcdef"),
                    Artifact::image("ghcr.io/acme/worker", "1.0.0", "sha256:beef00"),
                ],
                ..BundleSpec::default()
            },
        );
        let status = PassageStatus {
            phase: Some(PassagePhase::Failed),
            message: "steps[1] b: nope".into(),
            steps: vec![
                StepStatus {
                    uses: "http".into(),
                    alias: "a".into(),
                    phase: StepPhase::Succeeded,
                    message: "answered 200".into(),
                    ..StepStatus::default()
                },
                StepStatus {
                    uses: "http".into(),
                    alias: "b".into(),
                    phase: StepPhase::Failed,
                    reason: "Nope".into(),
                    message: "nope".into(),
                    ..StepStatus::default()
                },
                StepStatus {
                    uses: "git-push".into(),
                    phase: StepPhase::Skipped,
                    ..StepStatus::default()
                },
            ],
            started_at: at(1_786_000_000),
            finished_at: at(1_786_000_042),
            trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
            ..PassageStatus::default()
        };
        assert_eq!(
            payload(&passage, &bundle, &status),
            json!({
                "passage": "p1",
                "namespace": "acme",
                "gate": "production",
                "bundle": "b1",
                "outcome": "Failed",
                "steps": [
                    {"uses": "http", "phase": "Succeeded", "as": "a", "message": "answered 200"},
                    {"uses": "http", "phase": "Failed", "as": "b", "reason": "Nope", "message": "nope"},
                    {"uses": "git-push", "phase": "Skipped"},
                ],
                "actor": "olaf@acme.example",
                "message": "steps[1] b: nope",
                "startedAt": "2026-08-06T07:06:40Z",
                "finishedAt": "2026-08-06T07:07:22Z",
                "traceID": "4bf92f3577b34da6a3ce929d0e0e4736",
                "artifacts": ["sha256:abcdef0123456789", "sha256:beef00"],
                "bundleDigest": "sha256:bbbb",
            })
        );
    }

    #[test]
    fn a_rollouts_payload_holds_each_target_and_every_acceptance() {
        use hecate_types::{
            AcceptedFailures, RolloutPhase, RolloutStatus, TargetPhase, TargetStatus,
        };
        let mut passage = Passage::new(
            "production-9",
            PassageSpec {
                gate: "production".into(),
                bundle: "b7".into(),
                targets: vec!["eu-2".into()],
                ..PassageSpec::default()
            },
        );
        passage.metadata.namespace = Some("shop".into());
        passage.metadata.annotations = Some(
            [(
                hecate_types::wellknown::ANNOTATION_CATCH_UP_OF.to_string(),
                "production-8".to_string(),
            )]
            .into(),
        );
        let status = PassageStatus {
            phase: Some(PassagePhase::Succeeded),
            rollout: Some(RolloutStatus {
                phase: RolloutPhase::Accepted,
                message: "rolled out to 1 of 2 targets; us-2 failed, accepted".into(),
                targets: vec![
                    TargetStatus {
                        name: "eu-2".into(),
                        wave: 1,
                        phase: TargetPhase::Succeeded,
                        attempt: 1,
                        current_step: 2,
                        pushed_revision: "abc123".into(),
                        applied_revision: "main@sha1:abc123".into(),
                        health: Some(hecate_types::Health::Healthy),
                        started_at: at(100),
                        finished_at: at(160),
                        ..TargetStatus::default()
                    },
                    TargetStatus {
                        name: "us-2".into(),
                        wave: 2,
                        phase: TargetPhase::Failed,
                        attempt: 2,
                        reason: "FluxDegraded".into(),
                        ..TargetStatus::default()
                    },
                    TargetStatus {
                        name: "gone".into(),
                        departed_at: at(90),
                        ..TargetStatus::default()
                    },
                ],
                accepted: vec![AcceptedFailures {
                    by: "carol".into(),
                    at: Time(Timestamp::from_second(200).expect("a time")),
                    reason: "us-2 is being rebuilt".into(),
                    targets: vec!["us-2".into()],
                }],
                ..RolloutStatus::default()
            }),
            ..PassageStatus::default()
        };
        let bundle = Bundle::new("b7", BundleSpec::default());
        let document = payload(&passage, &bundle, &status);
        assert_eq!(
            document["rollout"],
            json!({
                "phase": "Accepted",
                "message": "rolled out to 1 of 2 targets; us-2 failed, accepted",
                "targets": [
                    {
                        "name": "eu-2", "wave": 2, "outcome": "Succeeded", "attempt": 1, "step": 3,
                        "pushedRevision": "abc123", "appliedRevision": "main@sha1:abc123",
                        "health": "Healthy",
                        "startedAt": "1970-01-01T00:01:40Z", "finishedAt": "1970-01-01T00:02:40Z",
                    },
                    {
                        "name": "us-2", "wave": 3, "outcome": "Failed", "attempt": 2, "step": 1,
                        "reason": "FluxDegraded",
                    },
                ],
                "accepted": [{
                    "by": "carol", "at": "1970-01-01T00:03:20Z",
                    "reason": "us-2 is being rebuilt", "targets": ["us-2"],
                }],
                "only": ["eu-2"],
                "of": "production-8",
            })
        );
    }

    #[test]
    fn the_verification_payload_holds_the_verdict_and_every_verifier() {
        let mut passage = Passage::new(
            "staging-3",
            PassageSpec {
                gate: "staging".into(),
                bundle: "b1".into(),
                actor: "olaf@acme.example".into(),
                ..PassageSpec::default()
            },
        );
        passage.metadata.namespace = Some("acme".into());
        let verification = VerificationStatus {
            phase: VerificationPhase::Failed,
            started_at: at(1_786_000_000),
            finished_at: at(1_786_000_300),
            message: "prometheus: 3 failures, last 0.2".into(),
            verifiers: vec![
                VerifierStatus {
                    uses: "soak".into(),
                    phase: VerificationPhase::Verified,
                    passes: 1,
                    message: "soaked 5m".into(),
                    ..verifier()
                },
                VerifierStatus {
                    uses: "prometheus".into(),
                    phase: VerificationPhase::Failed,
                    failures: 3,
                    inconclusive: 1,
                    last_value: "0.2".into(),
                    last_look_at: at(1_786_000_300),
                    ..verifier()
                },
            ],
        };
        assert_eq!(
            verification_payload(&passage, &verification),
            json!({
                "passage": "staging-3",
                "namespace": "acme",
                "gate": "staging",
                "bundle": "b1",
                "phase": "Failed",
                "verifiers": [
                    {"uses": "soak", "phase": "Verified", "passes": 1, "failures": 0, "message": "soaked 5m"},
                    {"uses": "prometheus", "phase": "Failed", "passes": 0, "failures": 3, "inconclusive": 1, "lastValue": "0.2"},
                ],
                "message": "prometheus: 3 failures, last 0.2",
                "startedAt": "2026-08-06T07:06:40Z",
                "finishedAt": "2026-08-06T07:11:40Z",
            })
        );
    }

    #[test]
    fn a_verification_with_nothing_to_say_says_only_its_verdict() {
        let mut passage = Passage::new(
            "dev-1",
            PassageSpec {
                gate: "dev".into(),
                bundle: "b2".into(),
                ..PassageSpec::default()
            },
        );
        passage.metadata.namespace = Some("acme".into());
        let verification = VerificationStatus {
            phase: VerificationPhase::Verified,
            started_at: None,
            finished_at: None,
            message: String::new(),
            verifiers: vec![],
        };
        assert_eq!(
            verification_payload(&passage, &verification),
            json!({
                "passage": "dev-1",
                "namespace": "acme",
                "gate": "dev",
                "bundle": "b2",
                "phase": "Verified",
                "verifiers": [],
            })
        );
    }

    fn verifier() -> VerifierStatus {
        VerifierStatus {
            uses: String::new(),
            phase: VerificationPhase::Verifying,
            passes: 0,
            failures: 0,
            inconclusive: 0,
            last_value: String::new(),
            last_look_at: None,
            next_look_at: None,
            message: String::new(),
            restarts: Vec::new(),
        }
    }

    #[test]
    fn optional_keys_are_left_out_when_empty() {
        let mut passage = Passage::new(
            "p2",
            PassageSpec {
                gate: "dev".into(),
                bundle: "b2".into(),
                ..PassageSpec::default()
            },
        );
        passage.metadata.namespace = Some("acme".into());
        let bundle = Bundle::new("b2", BundleSpec::default());
        let status = PassageStatus {
            phase: Some(PassagePhase::Aborted),
            ..PassageStatus::default()
        };
        assert_eq!(
            payload(&passage, &bundle, &status),
            json!({
                "passage": "p2",
                "namespace": "acme",
                "gate": "dev",
                "bundle": "b2",
                "outcome": "Aborted",
                "steps": [],
            })
        );
    }
}
