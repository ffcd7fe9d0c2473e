//! Objects as the Go reference writes them deserialize and re-serialize without loss.

use pretty_assertions::assert_eq;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

use crate::{Beacon, Bundle, Gate, Health, Passage, PassagePhase, StepPhase};

/// Reads `yaml` as `T` and writes it back as JSON; the JSON must equal the YAML.
fn round_trip<T: Serialize + DeserializeOwned>(yaml: &str) -> T {
    let expected: Value = serde_yaml_ng::from_str(yaml).unwrap();
    let typed: T = serde_yaml_ng::from_str(yaml).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), expected);
    typed
}

#[test]
fn beacon() {
    let beacon: Beacon = round_trip(include_str!("../tests/data/beacon.yaml"));
    assert_eq!(
        beacon.spec.retain,
        Some(0),
        "an explicit retain: 0 survives"
    );
    assert_eq!(beacon.spec.watch.len(), 4);
    assert_eq!(beacon.status.unwrap().discovered.len(), 3);
}

#[test]
fn bundle() {
    let bundle: Bundle = round_trip(include_str!("../tests/data/bundle.yaml"));
    assert!(bundle.has_cleared("staging"));
    assert!(!bundle.has_cleared("production"));
    assert!(bundle.was_blocked_by("staging"));
    assert_eq!(
        bundle.approval_for("production").unwrap().actor,
        "carol@acme.example"
    );
    assert!(bundle.approval_for("staging").is_none());
    assert_eq!(
        bundle.image_digests().collect::<Vec<_>>(),
        ["sha256:3f1e8f6c2a1b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6"]
    );
}

#[test]
fn gate() {
    let gate: Gate = round_trip(include_str!("../tests/data/gate.yaml"));
    assert_eq!(gate.current_bundle(), Some("shop-9f8c1a2b3c4d"));
    assert!(gate.admission_for("shop").unwrap().require_approval);
    assert!(gate.admission_for("other").is_none());
    let status = gate.status.unwrap();
    assert_eq!(status.health.unwrap().status, Health::Progressing);
    assert_eq!(
        status.history[1].verified,
        Some(false),
        "an explicit verified: false survives"
    );
}

#[test]
fn passage() {
    let passage: Passage = round_trip(include_str!("../tests/data/passage.yaml"));
    assert_eq!(passage.phase(), PassagePhase::Failed);
    assert!(passage.is_terminal());
    let status = passage.status.unwrap();
    assert_eq!(status.steps[3].phase, StepPhase::Failed);
    assert_eq!(
        status.evidence.unwrap().risk,
        Some(0),
        "an explicit risk: 0 survives"
    );
}

#[test]
fn gate_with_targets_and_waves() {
    use crate::{CountOrPercent, SelectorOperator};
    let gate: Gate = round_trip(include_str!("../tests/data/gate-fanout.yaml"));
    let targets = gate.spec.targets.unwrap();
    let cluster = targets.list[0].cluster_ref.as_ref().unwrap();
    assert_eq!(cluster.name, "eu-1");
    assert_eq!(cluster.key.as_deref(), Some("value.yaml"));
    assert!(targets.list[1].cluster_ref.is_none());
    let selector = targets.selector.unwrap();
    assert_eq!(
        selector.match_expressions[1].operator,
        SelectorOperator::DoesNotExist
    );
    let waves = gate.spec.rollout.unwrap().waves;
    assert_eq!(
        waves[1].max_concurrency,
        Some(CountOrPercent::Text("25%".into()))
    );
    assert_eq!(waves[1].max_failures, Some(CountOrPercent::Count(1)));
}

#[test]
fn passage_with_a_rollout() {
    use crate::{RolloutPhase, TargetPhase};
    let passage: Passage = round_trip(include_str!("../tests/data/passage-fanout.yaml"));
    let rollout = passage.status.unwrap().rollout.unwrap();
    assert_eq!(rollout.phase, RolloutPhase::Halted);
    assert_eq!(rollout.targets[0].wave, 0, "an absent wave is the first");
    assert_eq!(rollout.targets[1].phase, TargetPhase::Failed);
    assert_eq!(rollout.accepted[0].targets, ["eu-3"]);
}

#[test]
fn objects_without_targets_read_and_write_as_before() {
    // The fan-out fields are absent, not empty, on every object that does not use them.
    let gate: Gate = round_trip(include_str!("../tests/data/gate.yaml"));
    assert!(gate.spec.targets.is_none() && gate.spec.rollout.is_none());
    let passage: Passage = round_trip(include_str!("../tests/data/passage.yaml"));
    assert!(passage.status.unwrap().rollout.is_none());
}

#[test]
fn empty_status_and_absent_phase() {
    // Go always writes non-pointer structs, so `status: {}` is common; a Passage nobody
    // has reconciled has no phase and counts as Pending.
    let passage: Passage = round_trip(
        r#"
apiVersion: hecate.dev/v1alpha1
kind: Passage
metadata: {name: dev-abcde, namespace: shop}
spec:
  gate: dev
  bundle: shop-0151d1d6c4cf
  steps: [{uses: flux-reconcile}]
status: {}
"#,
    );
    assert_eq!(passage.phase(), PassagePhase::Pending);
    assert!(!passage.is_terminal());
}

#[test]
fn unknown_enum_values_are_rejected() {
    // The schema forbids them; a reader that silently mapped one to something else
    // would misreport state.
    let err = serde_json::from_value::<Health>(json!("Sideways")).unwrap_err();
    assert!(err.to_string().contains("Sideways"), "{err}");
}

#[test]
fn phase_terminality() {
    use PassagePhase as P;
    let terminal: Vec<P> = P::ALL.into_iter().filter(|p| p.is_terminal()).collect();
    assert_eq!(terminal, [P::Succeeded, P::Failed, P::Aborted]);
    for (phase, terminal) in [
        (StepPhase::Pending, false),
        (StepPhase::Running, false),
        (StepPhase::Succeeded, true),
        (StepPhase::Failed, true),
        (StepPhase::Skipped, true),
        (StepPhase::Aborted, true),
    ] {
        assert_eq!(phase.is_terminal(), terminal, "{phase:?}");
        assert_eq!(serde_json::to_value(phase).unwrap(), json!(phase.as_str()));
    }
    for phase in P::ALL {
        assert_eq!(serde_json::to_value(phase).unwrap(), json!(phase.as_str()));
    }
}
