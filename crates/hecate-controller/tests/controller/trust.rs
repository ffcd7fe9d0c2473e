//! Every outbound client of the controller trusts the platform's CA certificates
//! (`SSL_CERT_FILE`/`SSL_CERT_DIR`), as Beacons do (docs/DECISIONS.md 68): a crossing
//! whose `http` step calls a server behind a private CA succeeds once the controller is
//! given that CA, and the attestation on finish reaches a Fides behind the same CA.

use std::time::Duration;

use hecate_testenv::https::{Https, Reply};
use hecate_types::{EvidenceConfig, LocalSecretRef, Passage, PassagePhase, Step, StepPhase};
use serde_json::json;

use crate::git_steps::secret;
use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

/// The Fides search a finished crossing asks (the trail of the Bundle's image).
const FIDES_SEARCH: &str = "/api/v1/search/artifacts?sha=";

#[tokio::test]
async fn the_http_step_and_fides_trust_the_ca_in_ssl_cert_file() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    let server = Https::start(|request| {
        if request.path == "/hook" {
            Reply::ok("{\"ok\":true}").header("content-type", "application/json")
        } else if request.path.starts_with(FIDES_SEARCH) {
            Reply::ok("[]").header("content-type", "application/json")
        } else {
            Reply::status(404)
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.crt");
    std::fs::write(&ca, server.ca_pem()).unwrap();
    let _controller =
        Controller::start_with_env(&h.env, &ns, &[], &[("SSL_CERT_FILE", ca.to_str().unwrap())])
            .await;

    h.env.create(secret("fides", &[("token", "t0k3n")])).await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "http".into(),
        alias: "hook".into(),
        with: Some(json!({"url": server.url("/hook"), "body": {"gate": "${{ gate }}"}})),
        ..Step::default()
    }];
    spec.evidence = Some(EvidenceConfig {
        fides_environment: "7f3a1c2e-0000-4000-8000-000000009b05".into(),
        server_url: server.url("/"),
        credentials_ref: Some(LocalSecretRef {
            name: "fides".into(),
        }),
    });
    create_gate(&h, "dev", spec).await;
    bundle(&h.env, "b1").await;

    let finished: Passage = eventually(Duration::from_secs(30), "dev-1 finished", || async {
        h.env
            .api::<Passage>()
            .get_opt("dev-1")
            .await
            .unwrap()
            .filter(|p| p.phase().is_terminal())
    })
    .await;
    // The attestation on finish asked Fides for the Bundle's trail over the same TLS.
    eventually(Duration::from_secs(10), "Fides asked", || async {
        server
            .served()
            .iter()
            .any(|(request, status)| request.path.starts_with(FIDES_SEARCH) && *status == 200)
            .then_some(())
    })
    .await;
    let status = finished.status.clone().unwrap();
    assert_eq!(
        (finished.phase(), status.steps[0].phase),
        (PassagePhase::Succeeded, StepPhase::Succeeded),
        "{}: {}",
        status.message,
        status.steps[0].message
    );
    assert_eq!(
        status.steps[0].output.as_ref().unwrap()["status"],
        json!(200)
    );
}
