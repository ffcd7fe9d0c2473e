//! Objects for the tests, created through the API server (statuses through the status
//! subresource, as a controller writes them).

use std::time::Duration;

use hecate_testenv::TestEnv;
use hecate_types::{
    Admission, Artifact, Bundle, BundleApproval, BundleOrigin, BundleSpec, BundleStatus, Gate,
    GateCrossing, GateSpec, Passage, PassagePhase, PassageSpec, PassageStatus, PassageTemplate,
    Step, Time,
};

pub(crate) fn gate_spec(after: &[&str], require_approval: bool) -> GateSpec {
    GateSpec {
        admits: vec![Admission {
            from: BundleOrigin {
                beacon: "app".into(),
            },
            after: after.iter().map(|s| s.to_string()).collect(),
            require_approval,
        }],
        passage: Some(PassageTemplate {
            steps: vec![Step {
                uses: "flux-wait".into(),
                ..Step::default()
            }],
        }),
        ..GateSpec::default()
    }
}

pub(crate) async fn gate(env: &TestEnv, name: &str, spec: GateSpec) -> Gate {
    env.create(Gate::new(name, spec)).await
}

pub(crate) fn bundle_spec() -> BundleSpec {
    BundleSpec {
        beacon: "app".into(),
        artifacts: vec![Artifact::image(
            "ghcr.io/acme/app",
            "1.0.0",
            "sha256:abcdef0123456789",
        )],
        ..BundleSpec::default()
    }
}

/// Creates Bundles in the order given, a second apart, so that creation time (which
/// the API server sets, to the second) orders them.
pub(crate) async fn bundles_in_order(env: &TestEnv, names: &[&str]) -> Vec<Bundle> {
    let mut created = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(1100)).await;
        }
        created.push(env.create(Bundle::new(name, bundle_spec())).await);
    }
    created
}

pub(crate) fn now() -> Time {
    Time(jiff::Timestamp::now())
}

pub(crate) async fn set_bundle_status(
    env: &TestEnv,
    mut bundle: Bundle,
    cleared: &[&str],
    approved_for: &[(&str, &str)],
) -> Bundle {
    bundle.status = Some(BundleStatus {
        cleared: cleared
            .iter()
            .map(|g| GateCrossing {
                gate: g.to_string(),
                passage: format!("{g}-x"),
                at: now(),
                actor: String::new(),
                reason: String::new(),
            })
            .collect(),
        approved_for: approved_for
            .iter()
            .map(|(g, actor)| BundleApproval {
                gate: g.to_string(),
                actor: actor.to_string(),
                at: now(),
            })
            .collect(),
        ..BundleStatus::default()
    });
    env.write_status(&bundle).await
}

pub(crate) async fn passage(
    env: &TestEnv,
    name: &str,
    gate: &str,
    bundle: &str,
    phase: PassagePhase,
) -> Passage {
    let mut passage = env
        .create(Passage::new(
            name,
            PassageSpec {
                gate: gate.into(),
                bundle: bundle.into(),
                steps: vec![Step {
                    uses: "flux-wait".into(),
                    ..Step::default()
                }],
                ..PassageSpec::default()
            },
        ))
        .await;
    passage.status = Some(PassageStatus {
        phase: Some(phase),
        message: format!("{phase:?}"),
        ..PassageStatus::default()
    });
    env.write_status(&passage).await
}
