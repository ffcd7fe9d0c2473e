//! `hecate verify` and `hecate evidence` with wiremock as Fides: exit codes are the
//! contract pipelines gate on, in every output format.

use hecate_cli::exit;
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{
    Artifact, Bundle, BundleSpec, EvidenceConfig, EvidenceRef, LocalSecretRef, Passage,
    PassagePhase, PassageSpec, PassageStatus, Step,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{header, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;

async fn crossing(env: &TestEnv, gate: &str, trail: &str) {
    let mut passage = env
        .create(Passage::new(
            &format!("{gate}-1"),
            PassageSpec {
                gate: gate.into(),
                bundle: "b1".into(),
                steps: vec![Step {
                    uses: "flux-wait".into(),
                    ..Step::default()
                }],
                ..PassageSpec::default()
            },
        ))
        .await;
    passage.status = Some(PassageStatus {
        phase: Some(PassagePhase::Succeeded),
        evidence: Some(EvidenceRef {
            trail: trail.into(),
            ..EvidenceRef::default()
        }),
        ..PassageStatus::default()
    });
    env.write_status(&passage).await;
}

async fn chain(fides: &MockServer, trail: &str, status: u16, body: Value) {
    Mock::given(path(format!("/api/v1/trails/{trail}/verify-chain")))
        .and(header("authorization", "Bearer k"))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .mount(fides)
        .await;
}

async fn verify(hecate: &Hecate, fides: &MockServer, args: &[&str]) -> Run {
    let uri = fides.uri();
    let mut all = vec!["verify", "--server", &uri, "--token", "k"];
    all.extend_from_slice(args);
    hecate.run(Identity::Alice, &all).await
}

#[tokio::test]
async fn verify_exits_with_the_worst_finding() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let fides = MockServer::start().await;
    crossing(&env, "dev", "aaaa1111-0000-4000-8000-00000000aaaa").await;
    crossing(&env, "production", "bbbb2222-0000-4000-8000-00000000bbbb").await;
    crossing(&env, "staging", "cccc3333-0000-4000-8000-00000000cccc").await;
    chain(
        &fides,
        "aaaa1111-0000-4000-8000-00000000aaaa",
        200,
        json!({"valid": true, "count": 5, "broken_at": -1}),
    )
    .await;
    chain(
        &fides,
        "bbbb2222-0000-4000-8000-00000000bbbb",
        200,
        json!({"valid": false, "count": 2, "broken_at": 1, "reason": "deletion"}),
    )
    .await;
    chain(
        &fides,
        "cccc3333-0000-4000-8000-00000000cccc",
        200,
        json!({"valid": true, "count": 0, "broken_at": -1}),
    )
    .await;

    // A broken chain outranks a trail with nothing on it (the reference let 4 win).
    let run = verify(&hecate, &fides, &["b1"]).await;
    assert_eq!(run.code, i32::from(exit::CHAIN_BROKEN), "{run:?}");
    assert_eq!(run.stdout.matches('✓').count(), 1);
    assert_eq!(run.stdout.matches('✗').count(), 1);
    for gate in ["dev", "production", "staging"] {
        assert!(run.stdout.contains(gate), "{}", run.stdout);
    }
    for format in ["json", "yaml"] {
        let structured = verify(&hecate, &fides, &["b1", "-o", format]).await;
        assert_eq!(
            structured.code,
            i32::from(exit::CHAIN_BROKEN),
            "{format}: the format never changes the verdict"
        );
        assert!(structured.stdout.contains("production"));
    }
    let json = verify(&hecate, &fides, &["b1", "-o", "json"]).await;
    // CLI #16: ops' reports, decoded back into their type (the exit, 3, is above).
    let typed: Vec<hecate_ops::VerifyReport> = decoded(&Run {
        code: 0,
        stdout: json.stdout.clone(),
        stderr: String::new(),
    });
    assert_eq!(typed.len(), 3);
    let reports: Vec<Value> = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(reports[1]["gate"], "production");
    assert_eq!(
        (
            reports[1]["valid"].as_bool(),
            reports[1]["brokenAt"].as_i64(),
            reports[1]["reason"].as_str()
        ),
        (Some(false), Some(1), Some("deletion"))
    );
    let yaml = verify(&hecate, &fides, &["b1", "-o", "yaml"]).await;
    let from_yaml: Vec<Value> = serde_yaml_ng::from_str(&yaml.stdout).unwrap();
    assert_eq!(from_yaml, reports);
    assert!(yaml.stdout.contains("attestations:"));
}

#[tokio::test]
async fn each_finding_has_its_exit_code() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    const TRAIL: &str = "91b2ffff-0000-4000-8000-00000000abcd";
    crossing(&env, "production", TRAIL).await;
    let cases = [
        (
            200,
            json!({"valid": true, "count": 14, "broken_at": -1, "external_anchor": {"anchored": true, "head_matches": true, "anchored_at": "2026-08-09T11:02:00Z"}}),
            exit::OK,
            "anchored 2026-08-09",
        ),
        (
            200,
            json!({"valid": false, "count": 9, "broken_at": 6, "reason": "content_hash does not match the recorded entry"}),
            exit::CHAIN_BROKEN,
            "BROKEN at entry 6",
        ),
        (
            200,
            json!({"valid": true, "count": 3, "broken_at": -1}),
            exit::OK,
            "not externally anchored",
        ),
        (
            200,
            json!({"valid": true, "count": 0, "broken_at": -1}),
            exit::NOTHING_RECORDED,
            "no attestations",
        ),
        (
            200,
            json!({"valid": true, "count": 3, "broken_at": -1, "external_anchor": {"anchored": true, "head_matches": false, "anchored_at": "2026-08-01T00:00:00Z"}}),
            exit::OK,
            "different chain head",
        ),
        (401, json!("unauthorized"), exit::COULD_NOT_TELL, "401"),
    ];
    for (status, body, code, text) in cases {
        let fides = MockServer::start().await;
        chain(&fides, TRAIL, status, body).await;
        let run = verify(&hecate, &fides, &["b1"]).await;
        assert_eq!(run.code, i32::from(code), "{text}: {run:?}");
        assert!(
            run.stdout.contains(text)
                && run.stdout.contains("production")
                && run.stdout.contains("91b2ffff"),
            "{}",
            run.stdout
        );
        if status == 401 {
            assert!(
                !run.stdout.contains("BROKEN"),
                "an unreachable Fides is not tampering"
            );
        }
    }
}

#[tokio::test]
async fn nothing_recorded_and_unusable_invocations() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let fides = MockServer::start().await;
    let none = verify(&hecate, &fides, &["b1"]).await;
    assert_eq!(
        (none.code, none.stdout.as_str()),
        (
            i32::from(exit::NOTHING_RECORDED),
            "b1 has no recorded evidence: no crossing of it wrote a Fides trail\n"
        )
    );
    let none_json = verify(&hecate, &fides, &["b1", "-o", "json"]).await;
    assert_eq!(
        (none_json.code, none_json.stdout.trim()),
        (i32::from(exit::NOTHING_RECORDED), "[]")
    );

    for args in [
        vec!["verify", "some-bundle"],
        vec!["verify", "--token", "k", "some-bundle"],
        vec![
            "verify",
            "--server",
            "https://f.test",
            "--token",
            "k",
            "--trail",
            "t",
            "b",
        ],
        vec!["verify", "--server", "https://f.test", "--token", "k"],
        vec![
            "verify",
            "--server",
            "https://f.test",
            "--token",
            "k",
            "a",
            "b",
        ],
    ] {
        let run = output(
            binary(std::path::Path::new(env!("CARGO_BIN_EXE_hecate")))
                .env_remove("FIDES_SERVER_URL")
                .env_remove("FIDES_TOKEN")
                .args(&args)
                .output()
                .await
                .unwrap(),
        );
        assert_eq!(run.code, i32::from(exit::USAGE), "{args:?}: {run:?}");
    }
}

#[tokio::test]
async fn a_single_trail_needs_no_cluster() {
    let fides = MockServer::start().await;
    chain(
        &fides,
        "t-1",
        200,
        json!({"valid": true, "count": 2, "broken_at": -1}),
    )
    .await;
    let run = output(
        binary(std::path::Path::new(env!("CARGO_BIN_EXE_hecate")))
            .args(["verify", "--trail", "t-1"])
            .env("FIDES_SERVER_URL", fides.uri())
            .env("FIDES_TOKEN", "k")
            .output()
            .await
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "✓ trail t\n  chain valid: 2 attestations, not externally anchored\n"
    );
}

#[tokio::test]
async fn evidence_prints_the_verdict_or_why_there_is_none() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    env.create(Bundle::new(
        "b1",
        BundleSpec {
            beacon: "app".into(),
            artifacts: vec![Artifact::image(
                "ghcr.io/acme/app",
                "1.0.0",
                "sha256:abcdef0123456789",
            )],
            ..BundleSpec::default()
        },
    ))
    .await;
    let none = hecate.run(Identity::Alice, &["evidence", "b1"]).await;
    assert_eq!(none.code, 0, "{none:?}");
    assert!(
        none.stdout
            .contains("none: no Gate in this namespace records evidence in Fides"),
        "{}",
        none.stdout
    );

    let fides = MockServer::start().await;
    let mut spec = gate_spec(&[], false);
    spec.evidence = Some(EvidenceConfig {
        fides_environment: "7f3a1c2e-0000-4000-8000-000000009b04".into(),
        server_url: fides.uri(),
        credentials_ref: Some(LocalSecretRef {
            name: "fides".into(),
        }),
    });
    gate(&env, "production", spec).await;
    env.create(hecate_testenv::fixtures::usable_secret(
        "fides",
        &[("token", "t0ken")],
    ))
    .await;
    // Reading the credentials Secret is ops' business, with the caller's rights:
    // alice may not read Secrets here, admin may.
    Mock::given(path("/api/v1/search/artifacts")).respond_with(ResponseTemplate::new(200).set_body_json(json!([{"sha256": "abcdef0123456789", "trail_id": "91b2ffff-0000-4000-8000-00000000abcd"}]))).mount(&fides).await;
    Mock::given(path("/api/v1/trails/91b2ffff-0000-4000-8000-00000000abcd/change-gate")).respond_with(ResponseTemplate::new(200).set_body_json(json!({"recommendation": "approve", "approved": true, "risk_score": 5, "risk_level": "low"}))).mount(&fides).await;
    Mock::given(path("/api/v1/search/attestations"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&fides)
        .await;
    let denied = hecate.run(Identity::Alice, &["evidence", "b1"]).await;
    assert_eq!(denied.code, i32::from(exit::COULD_NOT_TELL), "{denied:?}");
    assert!(
        denied.stderr.contains("reading Secret"),
        "{}",
        denied.stderr
    );
    let run = hecate
        .run(Identity::Admin, &["evidence", "b1", "-o", "json"])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let evidence: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(evidence["trail"], "91b2ffff-0000-4000-8000-00000000abcd");
    assert_eq!(evidence["verdict"]["recommendation"], "approve");
    assert_eq!(evidence["gate"], "production");
}
