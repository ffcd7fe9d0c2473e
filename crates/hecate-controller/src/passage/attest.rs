//! Attestation on finish (spec controller.md §3.11, fides.md §4.4): a crossing of a
//! Gate that binds a Fides environment is recorded there when it ends — succeeded,
//! failed or aborted — as one `promotion` attestation on the trail of the Bundle's
//! first image digest, saying who crossed what, how it went and what every step did.
//!
//! At most once, and never retried: Fides' trail is an append-only hash chain, where a
//! second record of one crossing cannot be told from a replay; a gap, reported as an
//! Event, is the honest failure. It never fails the Passage either: the promotion has
//! happened whether or not it was recorded. The Passage reconciler calls [`attest`]
//! only after the status write that finished the Passage succeeded — that write is the
//! claim, so neither a conflict nor a restart can attest a crossing twice (see
//! `PassageReconciler::reconcile`).
//!
//! [`payload`] is pure; [`attest`] reads the Gate and talks to Fides.

use hecate_fides::model::Attestation;
use hecate_types::{Bundle, Gate, Passage, PassageStatus, Time};
use kube::ResourceExt as _;
use kube::api::Api;
use serde_json::{Map, Value, json};

/// What attesting a finished crossing came to.
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

/// Records the finished crossing `passage` (its final `status`) of `bundle` in the
/// Fides its Gate binds; `default_server` is `--fides-server`. Reads the Gate and
/// the credentials Secret through `client`.
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
    if gate.spec.evidence.is_none() {
        return Attested::NotAsked;
    }
    let outcome = status.phase().as_str();
    let failed = |why: String| {
        Attested::Failed(format!(
            "the crossing of Gate {gate_name} ended {outcome}, but Fides has no record of it: {why}"
        ))
    };
    let roots = hecate_sources::tls::platform_roots();
    let fides = match hecate_ops::dial_fides_trusting(client, &gate, default_server, roots).await {
        Ok(fides) => fides,
        Err(error) => return failed(error.to_string()),
    };
    let first = bundle.image_digests().next();
    // The trail the crossing was judged on, when an evidence-gate step found it.
    let judged = status
        .evidence
        .as_ref()
        .map(|e| e.trail.clone())
        .filter(|t| !t.is_empty());
    let trail = match (judged, first) {
        (Some(trail), _) => trail,
        (None, None) => {
            return Attested::Skipped(format!(
                "Bundle {} pins no image digest, so Fides holds no trail to attest the crossing of Gate {gate_name} on",
                passage.spec.bundle
            ));
        }
        (None, Some(digest)) => match fides.trail_for_artifact(digest).await {
            Ok(Some(trail)) => trail,
            Ok(None) => {
                return Attested::Skipped(format!(
                    "Fides has no trail for {digest} (the build that produced it did not report the artifact), so the crossing of Gate {gate_name} is not attested"
                ));
            }
            Err(error) => return failed(format!("looking up the trail of {digest}: {error}")),
        },
    };
    let attestation = Attestation {
        name: "promotion".into(),
        type_name: "promotion".into(),
        artifact: first.unwrap_or_default().into(),
        payload: payload(passage, bundle, status),
        signed_by: passage.spec.actor.clone(),
    };
    match fides.attest(&trail, &attestation).await {
        Ok(()) => Attested::Recorded(trail),
        Err(error) => failed(format!(
            "recording the attestation on trail {trail}: {error}"
        )),
    }
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
                if !value.is_empty() {
                    entry.insert(key.into(), json!(value));
                }
            }
            Value::Object(entry)
        })
        .collect();
    let mut document = Map::new();
    document.insert("passage".into(), json!(passage.name_any()));
    document.insert(
        "namespace".into(),
        json!(passage.namespace().unwrap_or_default()),
    );
    document.insert("gate".into(), json!(passage.spec.gate));
    document.insert("bundle".into(), json!(passage.spec.bundle));
    document.insert("outcome".into(), json!(status.phase().as_str()));
    document.insert("steps".into(), Value::Array(steps));
    let mut optional = |key: &str, value: &str| {
        if !value.is_empty() {
            document.insert(key.into(), json!(value));
        }
    };
    optional("actor", &passage.spec.actor);
    optional("message", &status.message);
    optional("startedAt", &utc(status.started_at.as_ref()));
    optional("finishedAt", &utc(status.finished_at.as_ref()));
    optional("traceID", &status.trace_id);
    optional("bundleDigest", &bundle.spec.digest);
    let artifacts: Vec<&str> = bundle.image_digests().collect();
    if !artifacts.is_empty() {
        document.insert("artifacts".into(), json!(artifacts));
    }
    Value::Object(document)
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
