//! Approvals recorded in Fides, evidence assembly and chain checks: a real API server,
//! and wiremock as Fides. Spec ops §11.10, §11.13, AC-160; fides §6 cases 76–87.

use hecate_ops::{ChainState, Error, Ops, RefusalCode};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{
    Artifact, Bundle, BundleSpec, EvidenceConfig, EvidenceRef, LocalSecretRef, Passage,
    PassagePhase, PassageSpec, PassageStatus, Step, Time, VerificationPhase, VerificationStatus,
    VerifierStatus,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, method, path, path_regex, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::fixtures::*;

const ENV: &str = "7f3a1c2e-0000-4000-8000-000000009b04";
const TRAIL: &str = "91b2ffff-0000-4000-8000-00000000abcd";
const DIGEST: &str = "sha256:abcdef0123456789";

/// Fixture F-ops: a Gate bound to the fake Fides, its credentials Secret, and Bundle
/// b1 pinning an image digest (or none).
async fn setup(env: &TestEnv, fides: &MockServer, digest: Option<&str>) {
    let mut spec = gate_spec(&[], false);
    spec.evidence = Some(EvidenceConfig {
        fides_environment: ENV.into(),
        server_url: fides.uri(),
        credentials_ref: Some(LocalSecretRef {
            name: "fides".into(),
        }),
    });
    gate(env, "staging", spec).await;
    env.create(hecate_testenv::fixtures::usable_secret(
        "fides",
        &[("token", "t0ken")],
    ))
    .await;
    let artifacts = match digest {
        Some(digest) => vec![Artifact::image("ghcr.io/acme/app", "1.0.0", digest)],
        None => vec![Artifact::commit(
            "https://github.com/acme/app",
            "0123456789abcdef",
        )],
    };
    env.create(Bundle::new(
        "b1",
        BundleSpec {
            beacon: "app".into(),
            artifacts,
            ..BundleSpec::default()
        },
    ))
    .await;
}

fn knows_the_trail(trail: Option<&str>) -> Mock {
    let rows = trail.map_or(
        json!([]),
        |t| json!([{"sha256": "abcdef0123456789", "trail_id": t}]),
    );
    Mock::given(method("GET"))
        .and(path("/api/v1/search/artifacts"))
        .and(query_param("sha", "abcdef0123456789"))
        .respond_with(ResponseTemplate::new(200).set_body_json(rows))
}

async fn approved_for_staging(env: &TestEnv) -> bool {
    let bundle: Bundle = env.api().get("b1").await.unwrap();
    bundle.approval_for("staging").is_some()
}

async fn bearer_everywhere(fides: &MockServer) -> Vec<wiremock::Request> {
    let requests = fides.received_requests().await.unwrap();
    for request in &requests {
        assert_eq!(
            request.headers.get("authorization").unwrap(),
            "Bearer t0ken",
            "{}",
            request.url
        );
    }
    requests
}

#[tokio::test]
async fn ac108_an_approval_is_recorded_in_fides_first() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(Some(TRAIL)).expect(1).mount(&fides).await;
    Mock::given(method("POST"))
        .and(path(format!("/api/v1/trails/{TRAIL}/approvals")))
        .and(body_partial_json(
            json!({"role": "approver", "on_behalf_of": "olaf@acme.example"}),
        ))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(json!({"status": "approved", "kind": "session"})),
        )
        .expect(1)
        .mount(&fides)
        .await;
    Ops::new(env.admin.clone())
        .approve(&env.namespace, "b1", "staging", "olaf@acme.example")
        .await
        .unwrap();
    assert!(approved_for_staging(&env).await);
    let requests = bearer_everywhere(&fides).await;
    let body: Value = serde_json::from_slice(&requests[1].body).unwrap();
    assert_eq!(
        body["reason"],
        format!("approved for Gate staging in {}", env.namespace)
    );
}

/// A "no" goes on the artifact's trail after the cluster's record (DECISION 137): an
/// attestation naming the Gate, the person and the reason; its withdrawal too. When
/// Fides cannot take it, the "no" stands anyway and the answer says why.
#[tokio::test]
async fn a_rejection_and_its_withdrawal_are_attested_in_fides() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(Some(TRAIL)).mount(&fides).await;
    Mock::given(method("POST"))
        .and(path("/api/v1/attestations"))
        .and(body_partial_json(json!({
            "trail_id": TRAIL,
            "type_name": "hecate-rejection",
            "artifact_sha256": "abcdef0123456789",
        })))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({})))
        .expect(1)
        .mount(&fides)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/v1/attestations"))
        .and(body_partial_json(
            json!({"type_name": "hecate-rejection-withdrawn"}),
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({})))
        .expect(1)
        .mount(&fides)
        .await;
    let ops = Ops::new(env.admin.clone());
    let rejected = ops
        .reject(&env.namespace, "b1", "staging", "carol", "not this week")
        .await
        .unwrap();
    assert_eq!(rejected.fides.unwrap().trail, TRAIL);
    let requests = bearer_everywhere(&fides).await;
    let attested = requests
        .iter()
        .find(|r| r.url.path() == "/api/v1/attestations")
        .unwrap();
    let body: Value = serde_json::from_slice(&attested.body).unwrap();
    let payload: Value = serde_json::from_str(body["payload"].as_str().unwrap()).unwrap();
    assert_eq!(
        (
            payload["gate"].as_str(),
            payload["by"].as_str(),
            payload["reason"].as_str()
        ),
        (Some("staging"), Some("carol"), Some("not this week"))
    );
    let withdrawn = ops
        .withdraw_rejection(&env.namespace, "b1", "staging", "carol")
        .await
        .unwrap();
    assert_eq!(withdrawn.fides.unwrap().trail, TRAIL);

    // Fides answers nothing useful: the "no" still holds, and says Fides did not take it.
    fides.verify().await;
    fides.reset().await;
    let rejected = ops
        .reject(&env.namespace, "b1", "staging", "dave", "a second look")
        .await
        .unwrap();
    assert!(rejected.recorded);
    let record = rejected.fides.unwrap();
    assert!(
        record.trail.is_empty() && !record.problem.is_empty(),
        "{record:?}"
    );
    let b1: Bundle = env.api().get("b1").await.unwrap();
    assert!(b1.rejections_for("staging").any(|r| !r.is_withdrawn()));
}

#[tokio::test]
async fn ac109_a_fides_failure_writes_nothing() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(Some(TRAIL)).expect(1).mount(&fides).await;
    Mock::given(path_regex("/approvals$"))
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .expect(1)
        .mount(&fides)
        .await;
    let error = Ops::new(env.admin.clone())
        .approve(&env.namespace, "b1", "staging", "olaf")
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Fides { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("recording the approval in Fides: fides: POST"),
        "{error}"
    );
    assert!(!approved_for_staging(&env).await);
}

#[tokio::test]
async fn ac110_an_artifact_fides_never_saw_is_refused() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(None).expect(1).mount(&fides).await;
    let error = Ops::new(env.admin.clone())
        .approve(&env.namespace, "b1", "staging", "olaf")
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Refused {
                code: RefusalCode::NoFidesTrail,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains("did not report the artifact"),
        "{error}"
    );
    assert!(!approved_for_staging(&env).await);
}

#[tokio::test]
async fn an_approval_fides_will_not_count_is_refused() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(Some(TRAIL)).expect(1).mount(&fides).await;
    Mock::given(path_regex("/approvals$"))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(json!({"status": "approved", "kind": "service"})),
        )
        .expect(1)
        .mount(&fides)
        .await;
    let error = Ops::new(env.admin.clone())
        .approve(&env.namespace, "b1", "staging", "olaf@acme.example")
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Refused {
                code: RefusalCode::ApprovalNotCounted,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("FIDES_DELEGATED_APPROVAL_ENABLED"),
        "{error}"
    );
    assert!(!approved_for_staging(&env).await);
}

#[tokio::test]
async fn a_bundle_without_an_image_digest_cannot_be_approved_on_an_evidence_gate() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, None).await;
    let error = Ops::new(env.admin.clone())
        .approve(&env.namespace, "b1", "staging", "olaf")
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Refused {
                code: RefusalCode::NoImageDigest,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(bearer_everywhere(&fides).await.len(), 0);
}

#[tokio::test]
async fn ac111_a_gate_without_evidence_never_touches_fides() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    env.create(Bundle::new(
        "b1",
        BundleSpec {
            beacon: "app".into(),
            artifacts: vec![Artifact::image("r", "t", DIGEST)],
            ..BundleSpec::default()
        },
    ))
    .await;
    Ops::new(env.admin.clone())
        .approve(&env.namespace, "b1", "staging", "olaf")
        .await
        .unwrap();
    assert!(approved_for_staging(&env).await);
    assert_eq!(fides.received_requests().await.unwrap().len(), 0);
}

/// A Gate's author chose where its Fides token goes (`serverURL`), so the token is read
/// only from a Secret that opts in — whoever asks, even someone who may read it
/// (DECISION 147).
#[tokio::test]
async fn a_fides_token_is_sent_only_from_a_secret_that_opts_in() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    hecate_testenv::fixtures::set_usable(&env, "fides", false).await;
    let ops = Ops::new(env.admin.clone());
    for error in [
        ops.evidence(&env.namespace, "b1").await.unwrap_err(),
        ops.approve(&env.namespace, "b1", "staging", "olaf")
            .await
            .unwrap_err(),
    ] {
        assert!(matches!(error, Error::Fides { .. }), "{error}");
        assert!(
            error.to_string().contains(&format!(
                "credentials Secret fides in namespace {} is not labelled hecate.dev/usable=true",
                env.namespace
            )),
            "{error}"
        );
    }
    assert!(fides.received_requests().await.unwrap().is_empty());
    assert!(!approved_for_staging(&env).await);

    hecate_testenv::fixtures::set_usable(&env, "fides", true).await;
    knows_the_trail(Some(TRAIL)).expect(1).mount(&fides).await;
    Mock::given(path_regex("/approvals$"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"status": "approved"})))
        .expect(1)
        .mount(&fides)
        .await;
    ops.approve(&env.namespace, "b1", "staging", "olaf")
        .await
        .unwrap();
    assert!(approved_for_staging(&env).await);
    assert_eq!(bearer_everywhere(&fides).await.len(), 2);
}

#[tokio::test]
async fn ac160_credentials_are_required_to_reach_fides() {
    let env = TestEnv::new().await;
    let mut spec = gate_spec(&[], false);
    spec.evidence = Some(EvidenceConfig {
        fides_environment: ENV.into(),
        server_url: "http://127.0.0.1:9".into(),
        credentials_ref: None,
    });
    gate(&env, "staging", spec).await;
    env.create(Bundle::new(
        "b1",
        BundleSpec {
            beacon: "app".into(),
            artifacts: vec![Artifact::image("r", "t", DIGEST)],
            ..BundleSpec::default()
        },
    ))
    .await;
    let ops = Ops::new(env.admin.clone());
    let error = ops.evidence(&env.namespace, "b1").await.unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("reaching Fides: the Gate has no evidence.credentialsRef"),
        "{error}"
    );
    let error = ops
        .approve(&env.namespace, "b1", "staging", "olaf")
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("reaching Fides to record the approval:"),
        "{error}"
    );
}

fn held_verdict() -> Value {
    json!({"trail_id":"t","recommendation":"hold","approved":false,"risk_score":45,"risk_level":"medium","passed":["CC8.1"],"failed":[{"control":"CC7.2","name":"Vulnerability scanning","reasons":["failed vuln-scan"]}],"missing_evidence":[],"waived":[],"attestations":{"total":4,"non_compliant":1},"approvals":{"count":1,"human_approvers":1,"four_eyes":false,"approvers":["olaf@acme.example"],"deployers":[]},"segregation_of_duties":{"committer":"olaf@acme.example","approvers":["olaf@acme.example"],"deployers":[],"compliant":false,"violations":["committer and approver are the same person"]},"summary":"Controls failed."})
}

fn change_gate(body: Value) -> Mock {
    Mock::given(method("GET"))
        .and(path(format!("/api/v1/trails/{TRAIL}/change-gate")))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
}

fn no_itsm_change() -> Mock {
    Mock::given(path("/api/v1/search/attestations"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
}

#[tokio::test]
async fn ac120_evidence_answers_who_allowed_it_and_why() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(Some(TRAIL)).expect(1).mount(&fides).await;
    change_gate(held_verdict()).expect(1).mount(&fides).await;
    no_itsm_change().expect(1).mount(&fides).await;
    let evidence = Ops::new(env.admin.clone())
        .evidence(&env.namespace, "b1")
        .await
        .unwrap();
    assert_eq!(
        (
            evidence.trail.as_str(),
            evidence.gate.as_str(),
            evidence.digest.as_str()
        ),
        (TRAIL, "staging", DIGEST)
    );
    let verdict = evidence.verdict.unwrap();
    assert_eq!(
        (verdict.risk_score, verdict.recommendation.as_str()),
        (45, "hold")
    );
    assert_eq!(
        hecate_ops::rules::change::blockers(&verdict),
        ["failing control CC7.2 Vulnerability scanning (failed vuln-scan)"]
    );
    assert!(!verdict.segregation_of_duties.unwrap().compliant);
    assert_eq!(verdict.attestations.total, 4);
    assert_eq!(evidence.unavailable, "");
    assert_eq!(evidence.change, None);
    bearer_everywhere(&fides).await;
}

#[tokio::test]
async fn ac121_to_ac123_evidence_says_why_there_is_none() {
    // No Gate records evidence in Fides.
    let env = TestEnv::new().await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    env.create(Bundle::new(
        "b1",
        BundleSpec {
            beacon: "app".into(),
            artifacts: vec![Artifact::image("r", "t", DIGEST)],
            ..BundleSpec::default()
        },
    ))
    .await;
    let ops = Ops::new(env.admin.clone());
    let none = ops.evidence(&env.namespace, "b1").await.unwrap();
    assert!(
        none.unavailable.contains("records evidence in Fides"),
        "{}",
        none.unavailable
    );
    assert_eq!(
        serde_json::to_value(&none).unwrap().get("verifications"),
        None,
        "no crossing verified: the answer is as it was"
    );

    // The Bundle pins no digest.
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, None).await;
    let no_digest = Ops::new(env.admin.clone())
        .evidence(&env.namespace, "b1")
        .await
        .unwrap();
    assert!(
        no_digest.unavailable.contains("no image digest"),
        "{}",
        no_digest.unavailable
    );
    assert_eq!(no_digest.gate, "staging");

    // Fides has never seen the artifact.
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(None).expect(1).mount(&fides).await;
    let unseen = Ops::new(env.admin.clone())
        .evidence(&env.namespace, "b1")
        .await
        .unwrap();
    assert!(
        unseen.unavailable.contains("did not report the artifact"),
        "{}",
        unseen.unavailable
    );
    assert_eq!(unseen.verdict, None);
}

#[tokio::test]
async fn ac124_evidence_fails_loudly_when_fides_is_down() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(Some(TRAIL)).expect(1).mount(&fides).await;
    Mock::given(path_regex("change-gate$"))
        .respond_with(ResponseTemplate::new(500))
        .expect(1)
        .mount(&fides)
        .await;
    let error = Ops::new(env.admin.clone())
        .evidence(&env.namespace, "b1")
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("reading the change-gate verdict: fides:"),
        "{error}"
    );
}

#[tokio::test]
async fn ac125_to_ac127_the_itsm_change_is_best_effort() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(Some(TRAIL)).mount(&fides).await;
    change_gate(json!({"recommendation": "hold", "risk_score": 40}))
        .mount(&fides)
        .await;
    Mock::given(path("/api/v1/search/attestations"))
        .and(query_param("trail", TRAIL))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{"id": "a1", "type_name": "servicenow-change", "created_at": "2026-08-18T00:00:00Z"}])))
        .up_to_n_times(1)
        .expect(1)
        .mount(&fides)
        .await;
    Mock::given(path("/api/v1/attestations/a1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"is_compliant": true, "created_at": "2026-08-18T00:00:00Z", "payload": {"number": "CHG0033184", "state": "new", "approval": "not requested", "on_hold": false, "found": true}})))
        .expect(1)
        .mount(&fides)
        .await;
    let ops = Ops::new(env.admin.clone());
    let with_change = ops.evidence(&env.namespace, "b1").await.unwrap();
    let change = with_change.change.unwrap();
    assert_eq!(
        (change.number.as_str(), change.approval.as_str()),
        ("CHG0033184", "not requested")
    );
    assert_eq!(with_change.verdict.unwrap().recommendation, "hold");

    // The search now fails: the verdict still stands, the change is simply absent.
    Mock::given(path("/api/v1/search/attestations"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&fides)
        .await;
    let without = ops.evidence(&env.namespace, "b1").await.unwrap();
    assert_eq!(without.change, None);
    assert_eq!(without.verdict.unwrap().recommendation, "hold");
}

#[tokio::test]
async fn the_default_server_serves_gates_that_name_none() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    let mut gate: hecate_types::Gate = env.api().get("staging").await.unwrap();
    gate.spec.evidence.as_mut().unwrap().server_url = String::new();
    env.api::<hecate_types::Gate>()
        .replace("staging", &Default::default(), &gate)
        .await
        .unwrap();
    knows_the_trail(None).expect(1).mount(&fides).await;
    let ops = Ops::new(env.admin.clone()).with_fides_server(fides.uri());
    let evidence = ops.evidence(&env.namespace, "b1").await.unwrap();
    assert!(evidence.unavailable.contains("did not report the artifact"));
}

async fn crossing(env: &TestEnv, name: &str, gate: &str, trail: &str) {
    let mut passage = env
        .create(Passage::new(
            name,
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

#[tokio::test]
async fn every_recorded_chain_is_checked_and_the_worst_decides() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    crossing(
        &env,
        "staging-1",
        "staging",
        "cccc3333-0000-4000-8000-00000000cccc",
    )
    .await;
    crossing(
        &env,
        "production-1",
        "production",
        "bbbb2222-0000-4000-8000-00000000bbbb",
    )
    .await;
    crossing(&env, "dev-1", "dev", "aaaa1111-0000-4000-8000-00000000aaaa").await;
    passage(&env, "dev-0", "dev", "b1", PassagePhase::Failed).await; // no trail: not a crossing to check
    for (trail, body) in [
        (
            "aaaa1111-0000-4000-8000-00000000aaaa",
            json!({"valid": true, "count": 5, "broken_at": -1}),
        ),
        (
            "cccc3333-0000-4000-8000-00000000cccc",
            json!({"valid": true, "count": 5, "broken_at": -1, "external_anchor": {"anchored": true, "head_matches": true, "anchored_at": "2026-08-09T11:02:00Z"}}),
        ),
        (
            "bbbb2222-0000-4000-8000-00000000bbbb",
            json!({"valid": false, "count": 2, "broken_at": 1, "reason": "deletion"}),
        ),
    ] {
        Mock::given(path(format!("/api/v1/trails/{trail}/verify-chain")))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .expect(1)
            .mount(&fides)
            .await;
    }
    let client = hecate_ops::FidesClient::new(&hecate_ops::FidesConfig {
        base_url: fides.uri(),
        token: "t0ken".into(),
        timeout: None,
    })
    .unwrap();
    let ops = Ops::new(env.admin.clone());
    let reports = ops
        .verify_bundle(Some(&env.namespace), "b1", &client)
        .await
        .unwrap();
    let summary: Vec<(&str, ChainState)> = reports
        .iter()
        .map(|r| (r.gate.as_str(), r.verdict))
        .collect();
    assert_eq!(
        summary,
        [
            ("dev", ChainState::Valid),
            ("production", ChainState::Broken),
            ("staging", ChainState::Valid)
        ]
    );
    assert_eq!(reports[1].broken_at, Some(1));
    assert_eq!(reports[2].anchored, Some(true));
    assert_eq!(
        hecate_ops::rules::verify::overall(&reports),
        ChainState::Broken
    );
    assert!(
        ops.verify_bundle(Some(&env.namespace), "nothing-here", &client)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A succeeded crossing of `bundle` through `gate`, started `minute` minutes into the
/// day, whose verification (if any) says `phase`.
async fn verified(
    env: &TestEnv,
    name: &str,
    gate: &str,
    bundle: &str,
    minute: i64,
    phase: Option<VerificationPhase>,
) {
    let mut passage = passage(env, name, gate, bundle, PassagePhase::Succeeded).await;
    let at = |m: i64| {
        Some(Time(
            "2026-08-11T12:00:00Z".parse::<jiff::Timestamp>().unwrap()
                + jiff::SignedDuration::from_mins(m),
        ))
    };
    let status = passage.status.as_mut().unwrap();
    status.started_at = at(minute);
    status.finished_at = at(minute + 1);
    status.verification = phase.map(|phase| VerificationStatus {
        phase,
        started_at: at(minute + 1),
        finished_at: phase.is_final().then(|| at(minute + 6)).flatten(),
        message: match phase {
            VerificationPhase::Failed => "prometheus: error rate 0.2 is not below 0.01".into(),
            _ => String::new(),
        },
        verifiers: vec![VerifierStatus {
            uses: "prometheus".into(),
            phase,
            passes: i32::from(phase == VerificationPhase::Verified) * 3,
            failures: i32::from(phase == VerificationPhase::Failed) * 3,
            inconclusive: 0,
            last_value: "0.2".into(),
            last_look_at: at(minute + 6),
            next_look_at: None,
            message: String::new(),
            restarts: Vec::new(),
        }],
    });
    env.write_status(&passage).await;
}

/// What verification said of each crossing is the cluster's record: in the pack
/// newest first, from one LIST of the Bundle's Passages, even when Fides has nothing.
#[tokio::test]
async fn the_pack_carries_each_crossings_verification_fides_or_not() {
    let env = TestEnv::new().await;
    let fides = MockServer::start().await;
    setup(&env, &fides, Some(DIGEST)).await;
    knows_the_trail(None).expect(1).mount(&fides).await;
    verified(
        &env,
        "staging-1",
        "staging",
        "b1",
        0,
        Some(VerificationPhase::Verified),
    )
    .await;
    verified(&env, "production-1", "production", "b1", 30, None).await;
    verified(
        &env,
        "production-2",
        "production",
        "b1",
        60,
        Some(VerificationPhase::Failed),
    )
    .await;
    verified(
        &env,
        "staging-2",
        "staging",
        "b2",
        90,
        Some(VerificationPhase::Verified),
    )
    .await;

    let (client, log) = env
        .endpoint()
        .recording_client(Identity::Admin)
        .await
        .unwrap();
    let evidence = Ops::new(client)
        .evidence(&env.namespace, "b1")
        .await
        .unwrap();
    assert!(
        evidence.unavailable.contains("did not report the artifact"),
        "{}",
        evidence.unavailable
    );
    let said: Vec<(&str, &str, VerificationPhase)> = evidence
        .verifications
        .iter()
        .map(|v| (v.gate.as_str(), v.passage.as_str(), v.phase))
        .collect();
    assert_eq!(
        said,
        [
            ("production", "production-2", VerificationPhase::Failed),
            ("staging", "staging-1", VerificationPhase::Verified),
        ],
        "newest first; a crossing with nothing to verify, and another Bundle's, left out"
    );
    let failed = &evidence.verifications[0];
    assert_eq!(
        failed.message,
        "prometheus: error rate 0.2 is not below 0.01"
    );
    assert_eq!(
        failed.finished_at.as_ref().map(|t| t.0.to_string()),
        Some("2026-08-11T13:06:00Z".to_string())
    );
    assert_eq!(
        (
            failed.verifiers[0].uses.as_str(),
            failed.verifiers[0].failures,
            failed.verifiers[0].last_value.as_str()
        ),
        ("prometheus", 3, "0.2")
    );
    let json = serde_json::to_value(&evidence).unwrap();
    assert_eq!(json["verifications"][1]["verifiers"][0]["passes"], 3);
    assert_eq!(json["verifications"][0]["phase"], "Failed");

    let passages: Vec<String> = log
        .requests()
        .into_iter()
        .filter(|r| r.contains("/passages"))
        .collect();
    assert_eq!(
        passages,
        [format!(
            "GET /apis/hecate.dev/v1alpha1/namespaces/{}/passages?&fieldSelector=spec.bundle%3Db1",
            env.namespace
        )],
        "one LIST of the Bundle's Passages"
    );
}
