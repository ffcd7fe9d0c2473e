//! Plain-data fixtures for the rules' tests, after the spec's shared fixtures (§11.0).

use hecate_types::{
    Admission, Bundle, BundleApproval, BundleOrigin, BundleSpec, BundleStatus, Condition,
    ConditionStatus, EvidenceRef, Gate, GateCrossing, GateOccupant, GateSpec, GateStatus, Health,
    HealthReport, Passage, PassagePhase, PassageSpec, PassageStatus, PassageTemplate, Step,
    StepPhase, StepStatus, Time, Window,
};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

pub(crate) const NS: &str = "acme";

/// The ops fixtures' clock: Tuesday 2026-08-11 12:00 UTC.
pub(crate) fn t0() -> Timestamp {
    "2026-08-11T12:00:00Z".parse().unwrap()
}

/// The gate fixtures' clock: Monday 2026-08-10 12:00 UTC.
pub(crate) fn g0() -> Timestamp {
    "2026-08-10T12:00:00Z".parse().unwrap()
}

pub(crate) fn at(t: &str) -> Timestamp {
    t.parse().unwrap()
}

pub(crate) fn minutes(base: Timestamp, m: i64) -> Time {
    Time(base + SignedDuration::from_mins(m))
}

fn meta(name: &str, created: Time) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(NS.into()),
        creation_timestamp: Some(created),
        ..ObjectMeta::default()
    }
}

/// A manual Gate admitting Beacon `app`, with one step (`flux-wait`), no windows.
pub(crate) fn gate(name: &str) -> Gate {
    let mut gate = Gate::new(
        name,
        GateSpec {
            admits: vec![admits("app", &[])],
            passage: Some(PassageTemplate {
                steps: vec![step("flux-wait")],
            }),
            ..GateSpec::default()
        },
    );
    gate.metadata = meta(name, Time(t0()));
    gate
}

pub(crate) fn admits(beacon: &str, after: &[&str]) -> Admission {
    Admission {
        from: BundleOrigin {
            beacon: beacon.into(),
        },
        after: after.iter().map(|s| s.to_string()).collect(),
        require_approval: false,
        approvals: None,
    }
}

/// `gate` with `steps` as its crossing's steps.
pub(crate) fn gate_with_steps(mut gate: Gate, steps: Vec<Step>) -> Gate {
    gate.spec.passage = Some(hecate_types::PassageTemplate { steps });
    gate
}

/// A step called `uses`, with the smallest `with:` it takes when it is one of the
/// catalogue's.
pub(crate) fn step(uses: &str) -> Step {
    Step {
        uses: uses.into(),
        with: crate::catalogue::Step::named(uses).map(crate::catalogue::Step::example),
        ..Step::default()
    }
}

pub(crate) fn window(schedule: &str, duration: &str) -> Window {
    Window {
        schedule: schedule.into(),
        duration: duration.into(),
        ..Window::default()
    }
}

pub(crate) fn with_current(mut gate: Gate, bundle: &str) -> Gate {
    gate.status.get_or_insert_with(GateStatus::default).current = Some(GateOccupant {
        bundle: bundle.into(),
        digest: String::new(),
        passage: format!(
            "{}-{bundle}",
            gate.metadata.name.clone().unwrap_or_default()
        ),
        entered_at: Time(t0()),
        actor: String::new(),
        verified: None,
    });
    gate
}

pub(crate) fn with_health(mut gate: Gate, status: Health, issues: &[&str]) -> Gate {
    gate.status.get_or_insert_with(GateStatus::default).health = Some(HealthReport {
        status,
        issues: issues.iter().map(|s| s.to_string()).collect(),
        details: None,
        observed_at: None,
        since: None,
    });
    gate
}

pub(crate) fn with_condition(
    mut gate: Gate,
    status: ConditionStatus,
    reason: &str,
    message: &str,
) -> Gate {
    gate.status
        .get_or_insert_with(GateStatus::default)
        .conditions
        .push(Condition {
            type_: "Ready".into(),
            status,
            observed_generation: 1,
            last_transition_time: Time(t0()),
            reason: reason.into(),
            message: message.into(),
        });
    gate
}

/// A Bundle of Beacon `beacon`, created `m` minutes after `base`.
pub(crate) fn bundle_of(name: &str, beacon: &str, base: Timestamp, m: i64) -> Bundle {
    let mut bundle = Bundle::new(
        name,
        BundleSpec {
            beacon: beacon.into(),
            artifacts: vec![hecate_types::Artifact::image(
                "ghcr.io/acme/app",
                "1.0.0",
                "",
            )],
            ..BundleSpec::default()
        },
    );
    bundle.metadata = meta(name, minutes(base, m));
    bundle
}

/// A Bundle of Beacon `app`, created `m` minutes after T0.
pub(crate) fn bundle(name: &str, m: i64) -> Bundle {
    bundle_of(name, "app", t0(), m)
}

pub(crate) fn crossing(gate: &str, reason: &str) -> GateCrossing {
    GateCrossing {
        gate: gate.into(),
        passage: format!("{gate}-abc123"),
        at: Time(t0()),
        actor: String::new(),
        reason: reason.into(),
    }
}

pub(crate) fn cleared(mut bundle: Bundle, gates: &[&str]) -> Bundle {
    let status = bundle.status.get_or_insert_with(BundleStatus::default);
    status.cleared.extend(gates.iter().map(|g| crossing(g, "")));
    bundle
}

pub(crate) fn blocked(mut bundle: Bundle, gate: &str, reason: &str) -> Bundle {
    bundle
        .status
        .get_or_insert_with(BundleStatus::default)
        .blocked
        .insert(0, crossing(gate, reason));
    bundle
}

pub(crate) fn approved(mut bundle: Bundle, gate: &str, actor: &str) -> Bundle {
    bundle
        .status
        .get_or_insert_with(BundleStatus::default)
        .approved_for
        .push(BundleApproval {
            gate: gate.into(),
            actor: actor.into(),
            at: Time(t0()),
        });
    bundle
}

/// `bundle` with `actor`'s standing rejection for `gate`.
pub(crate) fn rejected(mut bundle: Bundle, gate: &str, actor: &str, reason: &str) -> Bundle {
    bundle
        .status
        .get_or_insert_with(BundleStatus::default)
        .rejections
        .push(hecate_types::Rejection {
            gate: gate.into(),
            actor: actor.into(),
            at: Time(t0()),
            reason: reason.into(),
            withdrawn_by: String::new(),
            withdrawn_at: None,
            withdrawn_groups: Vec::new(),
        });
    bundle
}

/// A Passage `{gate}-{bundle}` created at T0 + `m` minutes, in `phase`.
pub(crate) fn passage(gate: &str, bundle: &str, phase: Option<PassagePhase>, m: i64) -> Passage {
    let name = format!("{gate}-{bundle}");
    let mut passage = Passage::new(
        &name,
        PassageSpec {
            gate: gate.into(),
            bundle: bundle.into(),
            steps: vec![step("flux-wait")],
            ..PassageSpec::default()
        },
    );
    passage.metadata = meta(&name, minutes(t0(), m));
    passage.status = Some(PassageStatus {
        phase,
        ..PassageStatus::default()
    });
    passage
}

pub(crate) fn with_steps(mut passage: Passage, steps: &[(&str, StepPhase, &str, &str)]) -> Passage {
    let status = passage.status.get_or_insert_with(PassageStatus::default);
    status.steps = steps
        .iter()
        .map(|(uses, phase, reason, message)| StepStatus {
            uses: uses.to_string(),
            phase: *phase,
            reason: reason.to_string(),
            message: message.to_string(),
            ..StepStatus::default()
        })
        .collect();
    passage
}

pub(crate) fn with_message(mut passage: Passage, message: &str) -> Passage {
    passage
        .status
        .get_or_insert_with(PassageStatus::default)
        .message = message.into();
    passage
}

pub(crate) fn with_evidence(
    mut passage: Passage,
    verdict: &str,
    risk: Option<i32>,
    blockers: &[&str],
) -> Passage {
    passage
        .status
        .get_or_insert_with(PassageStatus::default)
        .evidence = Some(EvidenceRef {
        trail: "aaaa1111-0000-0000-0000-000000000000".into(),
        verdict: verdict.into(),
        risk,
        blockers: blockers.iter().map(|s| s.to_string()).collect(),
        url: String::new(),
    });
    passage
}
