//! Passage retention (spec controller.md §2.10): a Gate keeps its newest `spec.retain`
//! finished Passages (default 20, 0 keeps all) and every Passage it still names — the
//! running one, the one behind its occupant, those behind its history. Deleting old
//! Passages is also what lets old Bundles go: Passages protect the Bundles they name.

use std::collections::HashSet;

use hecate_ops::rules::eligibility::newest_first;
use hecate_types::{Gate, Passage, wellknown};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams};

/// The names of the Gate's Passages to delete: finished ones it does not name, beyond
/// the newest `retain`.
pub fn to_collect(gate: &Gate, passages: &[Passage]) -> Vec<String> {
    let Some(retain) = gate.retained_passages() else {
        return Vec::new();
    };
    let mut named: HashSet<&str> = HashSet::new();
    if let Some(status) = &gate.status {
        named.insert(status.active_passage.as_str());
        named.extend(status.current.iter().map(|c| c.passage.as_str()));
        named.extend(status.history.iter().map(|c| c.passage.as_str()));
    }
    let gate_name = gate.name_any();
    let mut candidates: Vec<&Passage> = passages
        .iter()
        .filter(|p| p.labels().get(wellknown::LABEL_GATE) == Some(&gate_name) && p.is_terminal())
        .filter(|p| !named.contains(p.name_any().as_str()))
        .collect();
    if candidates.len() <= retain {
        return Vec::new();
    }
    candidates.sort_by(|a, b| newest_first(*a, *b));
    candidates[retain..].iter().map(|p| p.name_any()).collect()
}

/// Deletes the Passages [`to_collect`] names; returns how many went. Failures are
/// logged: retention must never stop a Gate from deciding.
pub async fn collect(client: &kube::Client, gate: &Gate, passages: &[Passage]) -> usize {
    let namespace = gate.namespace().unwrap_or_default();
    let api = Api::<Passage>::namespaced(client.clone(), &namespace);
    let mut deleted = 0;
    for name in to_collect(gate, passages) {
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => deleted += 1,
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => {
                tracing::warn!(gate = %gate.name_any(), passage = %name, %error, "could not collect an old Passage")
            }
        }
    }
    deleted
}

#[cfg(test)]
mod tests {
    //! Spec ops-and-rules.md §11.6 (AC-063 – AC-071): `p-i` created G0 + i minutes.

    use hecate_types::{
        GateOccupant, GateSpec, GateStatus, PassagePhase, PassageSpec, PassageStatus, Time,
    };
    use jiff::{SignedDuration, Timestamp};
    use kube::api::ObjectMeta;
    use pretty_assertions::assert_eq;

    use super::*;

    fn g0() -> Timestamp {
        "2026-08-10T12:00:00Z".parse().expect("a time")
    }

    fn passage(name: &str, gate: &str, minute: i64, phase: PassagePhase) -> Passage {
        Passage {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some([(wellknown::LABEL_GATE.to_string(), gate.to_string())].into()),
                creation_timestamp: Some(Time(g0() + SignedDuration::from_mins(minute))),
                ..ObjectMeta::default()
            },
            spec: PassageSpec {
                gate: gate.into(),
                ..PassageSpec::default()
            },
            status: Some(PassageStatus {
                phase: Some(phase),
                ..PassageStatus::default()
            }),
        }
    }

    fn finished(n: usize, phase: PassagePhase) -> Vec<Passage> {
        (0..n)
            .map(|i| passage(&format!("p-{i:02}"), "staging", i as i64, phase))
            .collect()
    }

    fn staging(retain: Option<i32>, status: GateStatus) -> Gate {
        let mut gate = Gate::new(
            "staging",
            GateSpec {
                retain,
                ..GateSpec::default()
            },
        );
        gate.status = Some(status);
        gate
    }

    fn occupant(passage: &str) -> GateOccupant {
        GateOccupant {
            bundle: "b".into(),
            digest: String::new(),
            passage: passage.into(),
            entered_at: Time(g0()),
            actor: String::new(),
            verified: None,
        }
    }

    /// The names that stay.
    fn kept(gate: &Gate, passages: &[Passage]) -> Vec<String> {
        let gone = to_collect(gate, passages);
        passages
            .iter()
            .map(|p| p.name_any())
            .filter(|name| !gone.contains(name))
            .collect()
    }

    #[test]
    fn ac063_the_newest_are_kept_up_to_the_limit() {
        let passages = finished(10, PassagePhase::Succeeded);
        let gate = staging(Some(3), GateStatus::default());
        assert_eq!(to_collect(&gate, &passages).len(), 7);
        assert_eq!(kept(&gate, &passages), ["p-07", "p-08", "p-09"]);
    }

    #[test]
    fn ac064_retain_zero_keeps_everything() {
        let passages = finished(30, PassagePhase::Succeeded);
        assert!(to_collect(&staging(Some(0), GateStatus::default()), &passages).is_empty());
    }

    #[test]
    fn ac065_unset_retain_keeps_twenty() {
        let passages = finished(25, PassagePhase::Succeeded);
        assert_eq!(
            to_collect(&staging(None, GateStatus::default()), &passages).len(),
            5
        );
    }

    #[test]
    fn ac066_unfinished_passages_are_never_collected() {
        let mut passages = finished(5, PassagePhase::Failed);
        passages.push(passage("running", "staging", 0, PassagePhase::Running));
        passages.push(passage("pending", "staging", 0, PassagePhase::Pending));
        let mut kept = kept(&staging(Some(1), GateStatus::default()), &passages);
        kept.sort();
        assert_eq!(kept, ["p-04", "pending", "running"]);
    }

    #[test]
    fn ac067_ac068_ac069_passages_the_gate_names_survive() {
        let passages = finished(10, PassagePhase::Succeeded);
        let status = GateStatus {
            current: Some(occupant("p-00")),
            history: vec![occupant("p-01"), occupant("p-02")],
            active_passage: "p-03".into(),
            ..GateStatus::default()
        };
        let mut kept = kept(&staging(Some(1), status), &passages);
        kept.sort();
        assert_eq!(kept, ["p-00", "p-01", "p-02", "p-03", "p-09"]);
    }

    #[test]
    fn ac070_collection_is_scoped_to_the_gate() {
        let mut passages = finished(5, PassagePhase::Succeeded);
        passages.push(passage(
            "other-gate",
            "production",
            0,
            PassagePhase::Succeeded,
        ));
        let kept = kept(&staging(Some(1), GateStatus::default()), &passages);
        assert!(kept.contains(&"other-gate".to_string()), "{kept:?}");
        assert_eq!(kept.len(), 2);
    }

    #[test]
    fn ac071_collection_reports_how_many_go() {
        let passages = finished(12, PassagePhase::Succeeded);
        assert_eq!(
            to_collect(&staging(Some(2), GateStatus::default()), &passages).len(),
            10
        );
    }
}
