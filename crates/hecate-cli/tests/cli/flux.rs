//! `hecate preflight` and `hecate flux`: the Flux objects a Gate depends on (stand-in
//! Flux CRDs on the real API server, their status written as Flux would) and what
//! Fides' evidence gate would say (wiremock), in every format, with the documented
//! exit codes. Ops AC-128, AC-129, AC-145–151 as a person meets them.

use hecate_cli::exit;
use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Artifact, Bundle, BundleSpec, HealthCheck};
use kube::api::{Api, DynamicObject};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::MockServer;

use hecate_testenv::fides::{evidence_gate, knows_artifact, policy_check};

use crate::harness::*;

/// Gate `production` watching Kustomization `podinfo` (applied at `main@sha1:abc`) and
/// `not-created-yet`; `someone-elses` exists and is not watched.
async fn flux_setup(env: &TestEnv) -> Api<DynamicObject> {
    standins::install(&env.admin, &[KUSTOMIZATION])
        .await
        .unwrap();
    let objects: Api<DynamicObject> = Api::namespaced_with(
        env.admin.clone(),
        &env.namespace,
        &KUSTOMIZATION.api_resource(),
    );
    for name in ["podinfo", "someone-elses"] {
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": KUSTOMIZATION.api_version(),
            "kind": "Kustomization",
            "metadata": {"name": name, "namespace": env.namespace},
            "spec": {},
        }))
        .unwrap();
        objects.create(&Default::default(), &object).await.unwrap();
        standins::report_applied(
            &env.admin,
            KUSTOMIZATION,
            &env.namespace,
            name,
            "main@sha1:abc",
        )
        .await
        .unwrap();
    }
    let mut spec = gate_spec(&[], false);
    spec.watch = vec![HealthCheck {
        uses: "flux".into(),
        with: Some(json!({"resources": [
            {"kind": "Kustomization", "name": "podinfo"},
            {"kind": "Kustomization", "name": "not-created-yet"},
        ]})),
    }];
    gate(env, "production", spec).await;
    objects
}

async fn suspended(objects: &Api<DynamicObject>, name: &str) -> bool {
    let object = objects.get(name).await.unwrap();
    object
        .data
        .pointer("/spec/suspend")
        .and_then(Value::as_bool)
        == Some(true)
}

#[tokio::test]
async fn flux_lists_suspends_resumes_and_reconciles_what_the_gate_watches() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let objects = flux_setup(&env).await;

    // AC-145, AC-147: the table, and the same value as JSON.
    let table = hecate.run(Identity::Admin, &["flux", "production"]).await;
    assert_eq!(table.code, 0, "{table:?}");
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", table.stdout);
    assert!(lines[0].starts_with("OBJECT"), "{}", table.stdout);
    assert!(
        lines[1].starts_with("Kustomization/not-created-yet") && lines[1].contains("Missing"),
        "{}",
        table.stdout
    );
    assert!(
        lines[2].starts_with("Kustomization/podinfo")
            && lines[2].contains("Healthy")
            && lines[2].contains("main@sha1:abc"),
        "{}",
        table.stdout
    );
    assert!(!table.stdout.contains("someone-elses"));
    let listed = hecate
        .run(Identity::Admin, &["flux", "production", "-o", "json"])
        .await;
    // CLI #16: the JSON is ops' value, decoded back into its type.
    let resources: Vec<hecate_ops::FluxResource> = decoded(&listed);
    assert_eq!(resources.len(), 2);
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listed[1]["health"], "Healthy");
    assert_eq!(listed[0]["missing"], true);
    let yaml = hecate
        .run(Identity::Admin, &["flux", "production", "-o", "yaml"])
        .await;
    let yaml: Value = serde_yaml_ng::from_str(&yaml.stdout).unwrap();
    assert_eq!(yaml, listed, "YAML carries the same value as JSON");

    // AC-149: suspend and resume, as admin (who may patch Flux's objects).
    let suspend = hecate
        .run(
            Identity::Admin,
            &["flux", "suspend", "production", "Kustomization/podinfo"],
        )
        .await;
    assert_eq!(
        (suspend.code, suspend.stdout.as_str()),
        (
            0,
            "Kustomization/podinfo suspended: Flux leaves it alone until it is resumed\n"
        ),
        "{suspend:?}"
    );
    assert!(suspended(&objects, "podinfo").await);
    let resume = hecate
        .run(
            Identity::Admin,
            &[
                "flux",
                "resume",
                "production",
                "Kustomization/podinfo",
                "-o",
                "json",
            ],
        )
        .await;
    let answer: hecate_ops::FluxSuspended = written(&resume, "resume");
    assert!(!answer.suspended);
    let resumed: Value = serde_json::from_str(&resume.stdout).unwrap();
    assert_eq!(
        (
            resumed["action"].as_str(),
            resumed["suspended"].as_bool(),
            resumed["by"].as_str()
        ),
        (Some("resume"), Some(false), Some("admin"))
    );
    assert!(!suspended(&objects, "podinfo").await);

    // AC-150: the stamp printed is the one written.
    let reconcile = hecate
        .run(
            Identity::Admin,
            &[
                "flux",
                "reconcile",
                "production",
                "Kustomization/podinfo",
                "-o",
                "json",
            ],
        )
        .await;
    assert_eq!(reconcile.code, 0, "{reconcile:?}");
    let _: hecate_ops::FluxReconciled = written(&reconcile, "reconcile");
    let stamp = serde_json::from_str::<Value>(&reconcile.stdout).unwrap()["requestedAt"]
        .as_str()
        .unwrap()
        .to_string();
    let object = objects.get("podinfo").await.unwrap();
    assert_eq!(
        object.metadata.annotations.unwrap_or_default()["reconcile.fluxcd.io/requestedAt"],
        stamp
    );

    // AC-148: what the Gate does not watch is refused — exit 5, nothing changed.
    let refused = hecate
        .run(
            Identity::Admin,
            &[
                "flux",
                "suspend",
                "production",
                "Kustomization/someone-elses",
            ],
        )
        .await;
    assert_eq!(refused.code, i32::from(exit::REFUSED), "{refused:?}");
    assert_eq!(
        refused.stderr,
        "suspend refused: Kustomization \"someone-elses\" is not watched by Gate production — this only operates on what the Gate depends on\n"
    );
    assert!(!suspended(&objects, "someone-elses").await);

    // Not KIND/NAME: a usage error before anything is asked.
    let usage = hecate
        .run(
            Identity::Admin,
            &["flux", "suspend", "production", "podinfo"],
        )
        .await;
    assert_eq!(usage.code, i32::from(exit::USAGE), "{usage:?}");
    // A person without Flux rights is told the permission the command needs.
    let forbidden = hecate
        .run(
            Identity::Alice,
            &["flux", "suspend", "production", "Kustomization/podinfo"],
        )
        .await;
    assert_eq!(
        forbidden.code,
        i32::from(exit::COULD_NOT_TELL),
        "{forbidden:?}"
    );
    assert!(
        forbidden.stderr.ends_with(&format!(
            " — ask for a Role that grants at least patch kustomizations in {}\n",
            env.namespace
        )),
        "{}",
        forbidden.stderr
    );
    assert!(!suspended(&objects, "podinfo").await);
    // A Gate that is not there is a usage error for the read.
    let ghost = hecate.run(Identity::Alice, &["flux", "ghost"]).await;
    assert_eq!(ghost.code, i32::from(exit::USAGE), "{ghost:?}");
}

#[tokio::test]
async fn preflight_says_what_evidence_would_do() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let fides = MockServer::start().await;
    evidence_gate(&env, "production", &fides.uri(), &["b1", "b2"]).await;
    bundle(&env, "b1").await;
    env.create(Bundle::new(
        "b2",
        BundleSpec {
            beacon: "app".into(),
            artifacts: vec![Artifact::commit(
                "https://github.com/acme/app",
                "0123456789abcdef",
            )],
            ..BundleSpec::default()
        },
    ))
    .await;
    // Asked twice (table, then JSON): each mock expects exactly that.
    knows_artifact(&fides, "abcdef0123456789", 2).await;
    policy_check(
        &fides,
        json!({"compliant": false, "results": [
            {"policy": "change-control", "applies": true, "missing": ["servicenow-change"]},
            {"policy": "sox", "applies": true, "missing": ["servicenow-change", "sbom"]},
        ]}),
        2,
    )
    .await;
    let table = hecate
        .run(Identity::Admin, &["preflight", "production"])
        .await;
    assert_eq!(table.code, 0, "{table:?}");
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", table.stdout);
    assert!(
        lines[1].starts_with("b1")
            && lines[1].contains("would be refused")
            && lines[1].contains("needs sbom, servicenow-change — for change-control, sox"),
        "{}",
        table.stdout
    );
    assert!(
        lines[2].starts_with("b2")
            && lines[2].contains("unknown")
            && lines[2].contains("no image digest"),
        "{}",
        table.stdout
    );
    let json = hecate
        .run(Identity::Admin, &["preflight", "production", "-o", "json"])
        .await;
    let verdicts: Vec<hecate_ops::Preflight> = decoded(&json);
    assert_eq!(verdicts.len(), 2);
    assert_eq!(
        serde_json::from_str::<Value>(&json.stdout).unwrap(),
        json!([
            {"bundle": "b1", "compliant": false, "missing": ["sbom", "servicenow-change"], "policies": ["change-control", "sox"]},
            {"bundle": "b2", "compliant": false, "unknown": "pins no image digest, so there is no artifact to hold evidence about"},
        ])
    );
    // A Gate without evidence: nothing to check, [] as JSON, Fides not asked.
    gate(&env, "staging", gate_spec(&[], false)).await;
    let none = hecate
        .run(Identity::Alice, &["preflight", "staging", "-o", "json"])
        .await;
    assert_eq!((none.code, none.stdout.trim()), (0, "[]"), "{none:?}");
}
