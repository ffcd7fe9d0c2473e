//! `evidence-gate` and attestation on finish (spec controller.md §3.11, §5.16;
//! fides.md §4.2–4.4, §5.3): a real API server holding the Gates, Secrets, Bundles and
//! Passages, read as the controller's own identity under its deployed ClusterRole, and
//! wiremock as Fides. The step is called directly (its reasons, their order, the hold
//! against the Passage's start), the Passage reconciler runs whole crossings (the
//! verdict on the Passage, the attestation, once), and the controller process crosses
//! a Gate by itself with `--fides-server`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use hecate_controller::events::Events;
use hecate_controller::metrics::Metrics;
use hecate_controller::passage::PassageReconciler;
use hecate_controller::verify::{self, Subject, Verifier, VerifyError};
use hecate_ops::rules::verification::{Look, Seen};
use hecate_steps::clock::SystemClock;
use hecate_steps::evidence::EvidenceGate;
use hecate_steps::health;
use hecate_steps::runner::{Progress, Runner, StepContext, StepError, StepResult};
use hecate_steps::{Tools, runners};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{
    Artifact, Bundle, BundleSpec, EvidenceConfig, EvidenceRef, Gate, GateSpec, LocalSecretRef,
    Passage, PassagePhase, Step, StepPhase, Time, Verification, VerificationPhase,
};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{any, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};
use hecate_steps::reason::Reason;

const ENV: &str = "7f3a1c2e-0000-4000-8000-000000009b04";
const TRAIL: &str = "91b2ffff-0000-4000-8000-00000000abcd";
const DIGEST: &str = "sha256:abcdef0123456789";
const SHA: &str = "abcdef0123456789";
const TOKEN: &str = "fides-key";
const PERSON: &str = "olaf@acme.example";

// The calls, as `METHOD path`.
const COMPLIANCE: &str = "GET /api/v1/compliance";
const SEARCH: &str = "GET /api/v1/search/artifacts";
const ATTESTATIONS: &str = "POST /api/v1/attestations";
const ARTIFACTS: &str = "POST /api/v1/artifacts";

fn allowlist() -> String {
    format!("GET /api/v1/environments/{ENV}/allowlist")
}
fn policy_check() -> String {
    format!("GET /api/v1/environments/{ENV}/policy-check")
}
fn approvals() -> String {
    format!("POST /api/v1/trails/{TRAIL}/approvals")
}
fn change_gate() -> String {
    format!("GET /api/v1/trails/{TRAIL}/change-gate")
}

/// Fake Fides answering as a clean crossing would: compliant, allowlisted, a known
/// trail, policy met, the deployer counted, the change approved at risk 5.
async fn fake_fides() -> MockServer {
    let fides = MockServer::start().await;
    let answers = [
        (COMPLIANCE.to_string(), 200, json!({"compliant": true})),
        (allowlist(), 200, json!({"approved": true})),
        (
            SEARCH.to_string(),
            200,
            json!([{"sha256": SHA, "trail_id": TRAIL}]),
        ),
        (policy_check(), 200, json!({"compliant": true})),
        (
            approvals(),
            201,
            json!({"status": "approved", "kind": "session"}),
        ),
        (
            change_gate(),
            200,
            json!({"recommendation": "approve", "approved": true, "risk_score": 5, "risk_level": "low"}),
        ),
        (ARTIFACTS.to_string(), 201, Value::Null),
        (ATTESTATIONS.to_string(), 201, json!({})),
    ];
    for (call, status, body) in answers {
        let (verb, at) = call.split_once(' ').unwrap();
        let mut response = ResponseTemplate::new(status);
        if !body.is_null() {
            response = response.set_body_json(body);
        }
        Mock::given(method(verb))
            .and(path(at))
            .respond_with(response)
            .with_priority(10)
            .mount(&fides)
            .await;
    }
    fides
}

/// Makes `call` answer `status` with `body` from now on, over the defaults.
async fn answer(fides: &MockServer, call: &str, status: u16, body: Value) {
    let (verb, at) = call.split_once(' ').unwrap();
    Mock::given(method(verb))
        .and(path(at))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .with_priority(1)
        .mount(fides)
        .await;
}

/// Every call Fides received, as `METHOD path`, each checked for the Secret's token.
async fn calls(fides: &MockServer) -> Vec<String> {
    let requests = fides.received_requests().await.unwrap();
    for request in &requests {
        assert_eq!(
            request.headers.get("authorization").unwrap(),
            &format!("Bearer {TOKEN}"),
            "{}",
            request.url
        );
    }
    requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect()
}

/// The JSON bodies Fides received for `call`.
async fn bodies(fides: &MockServer, call: &str) -> Vec<Value> {
    let (verb, at) = call.split_once(' ').unwrap();
    fides
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == verb && r.url.path() == at)
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// A Secret holding `token`.
fn secret(name: &str, token: &str) -> Secret {
    hecate_testenv::fixtures::usable_secret(name, &[("token", token)])
}

/// Gate evidence bound to the test environment with Secret `credentials`; no server,
/// unless given: the process's default serves.
fn evidence(credentials: &str, server: &str) -> EvidenceConfig {
    EvidenceConfig {
        fides_environment: ENV.into(),
        server_url: server.into(),
        credentials_ref: Some(LocalSecretRef {
            name: credentials.into(),
        }),
    }
}

/// A Gate admitting Beacon `app`, crossing with `steps` (none: the harness's), bound
/// to Fides or not. (Passages are created with their own steps in most tests.)
fn gate(steps: Vec<Step>, auto: bool, evidence: Option<EvidenceConfig>) -> GateSpec {
    let mut spec = gate_spec(auto, &[], false);
    if !steps.is_empty() {
        spec.passage.as_mut().unwrap().steps = steps;
    }
    spec.evidence = evidence;
    spec
}

fn evidence_gate(with: Value) -> Step {
    Step {
        uses: "evidence-gate".into(),
        alias: "evidence".into(),
        with: Some(with),
        ..Step::default()
    }
}

fn bundle_of(images: &[(&str, &str)]) -> BundleSpec {
    BundleSpec {
        beacon: "app".into(),
        artifacts: images
            .iter()
            .map(|&(repo, digest)| Artifact::image(repo, "6.5.0", digest))
            .collect(),
        ..BundleSpec::default()
    }
}

/// Fixture F-step: Gate `production` bound to Fides environment [`ENV`] with Secret
/// `fides`; Bundle `podinfo-abc123` pinning one image at [`DIGEST`]; a client as the
/// controller.
struct Fixture {
    h: Harness,
    client: kube::Client,
    bundle: Bundle,
}

async fn fixture() -> Fixture {
    let h = Harness::new().await;
    h.env.create(secret("fides", TOKEN)).await;
    create_gate(
        &h,
        "production",
        gate(
            vec![evidence_gate(json!({"gates": ["assert"]}))],
            false,
            Some(evidence("fides", "")),
        ),
    )
    .await;
    let bundle = h
        .env
        .create(Bundle::new(
            "podinfo-abc123",
            BundleSpec {
                digest: "sha256:bbbb".into(),
                ..bundle_of(&[("ghcr.io/acme/api", DIGEST)])
            },
        ))
        .await;
    let client = as_controller(&h.env).await;
    Fixture { h, client, bundle }
}

/// A client as the controller, once its deployed role lets it read Gates and Secrets.
async fn as_controller(env: &TestEnv) -> kube::Client {
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    let client = env.client(Identity::HecateController).await;
    let secrets = Api::<Secret>::namespaced(client.clone(), &env.namespace);
    let gates = Api::<Gate>::namespaced(client.clone(), &env.namespace);
    // RBAC reaches the authorizer a moment after it is written.
    eventually(Duration::from_secs(10), "the controller's role", || async {
        (secrets.get_opt("fides").await.is_ok() && gates.get_opt("production").await.is_ok())
            .then_some(())
    })
    .await;
    client
}

impl Fixture {
    /// Runs the step once for Gate `production`, Fides at `server` by default.
    async fn run(&self, server: &str, with: Value) -> Result<StepResult, StepError> {
        self.run_as(
            server,
            "production",
            &self.bundle,
            PERSON,
            Timestamp::now(),
            with,
        )
        .await
    }

    async fn run_as(
        &self,
        server: &str,
        gate: &str,
        bundle: &Bundle,
        actor: &str,
        started_at: Timestamp,
        with: Value,
    ) -> Result<StepResult, StepError> {
        let step = EvidenceGate::new(self.client.clone(), Some(server.into()));
        let outputs = BTreeMap::new();
        let context = StepContext {
            namespace: &self.h.env.namespace,
            gate,
            passage: "production-abc123",
            bundle,
            actor,
            work_dir: Path::new("/nonexistent"),
            config: with,
            outputs: &outputs,
            attempt: 0,
            failed: false,
            traceparent: "",
            started_at,
        };
        step.run(&context).await
    }

    /// A Passage reconciler as the controller, with every step, Fides at `server` by
    /// default.
    fn reconciler(&self, server: &str) -> PassageReconciler {
        let tools = Tools {
            fides_server: Some(server.into()),
            ..crate::process::test_world_tools(self.client.clone())
        };
        PassageReconciler {
            client: self.client.clone(),
            clock: Arc::new(SystemClock),
            steps: runners(&tools).unwrap(),
            verifiers: hecate_controller::verify::Verifiers::new(),
            events: Events::new(self.client.clone(), "passage-controller", None),
            metrics: Arc::new(Metrics::new()),
            work_root: std::env::temp_dir().join("hecate-evidence-steps"),
            fides_server: Some(server.into()),
            tracing: hecate_controller::telemetry::Tracing::off(),
        }
    }

    /// Creates Passage `name` crossing Gate `gate` with `steps`, asked for by `actor`,
    /// as promote would: the Gate's template is set to `steps` first (a Passage runs
    /// only its Gate's own steps).
    async fn passage(&self, name: &str, gate: &str, actor: &str, steps: Vec<Step>) {
        let gates = self.h.env.api::<Gate>();
        gates
            .patch(
                gate,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"passage": {"steps": steps}}})),
            )
            .await
            .unwrap();
        let gate = gates.get(gate).await.unwrap();
        self.h
            .env
            .create(hecate_ops::rules::promotion::new_passage(
                &gate,
                &self.bundle,
                actor,
                name,
                Timestamp::now(),
            ))
            .await;
    }

    async fn reconcile(&self, reconciler: &PassageReconciler, name: &str) -> Passage {
        reconciler
            .reconcile_named(&self.h.env.namespace, name)
            .await
            .unwrap();
        self.h.env.api::<Passage>().get(name).await.unwrap()
    }

    /// The reasons of the Events about Passages that mention attestation.
    async fn attestation_events(&self) -> Vec<String> {
        self.h
            .events()
            .await
            .into_iter()
            .filter_map(|e| e.reason)
            .filter(|r| r.contains("Attestation"))
            .collect()
    }
}

fn refusal(result: Result<StepResult, StepError>) -> StepError {
    match result {
        Ok(result) => panic!("the step did not fail: {result:?}"),
        Err(error) => error,
    }
}

fn contains_all(text: &str, words: &[&str]) {
    for word in words {
        assert!(text.contains(word), "{text:?} does not mention {word:?}");
    }
}

// ---------------------------------------------------------------------------------
// The step

#[tokio::test]
async fn only_the_selected_checks_ask_fides() {
    let f = fixture().await;
    let fides = fake_fides().await;
    let done = f
        .run(&fides.uri(), json!({"gates": ["assert", "allowlist"]}))
        .await
        .unwrap();
    assert_eq!(done.progress, Progress::Succeeded);
    assert_eq!(done.message, "assert and allowlist cleared");
    assert_eq!(done.evidence, None, "no verdict, no trail looked up");
    assert_eq!(calls(&fides).await, [COMPLIANCE.to_string(), allowlist()]);
    let requests = fides.received_requests().await.unwrap();
    assert_eq!(
        requests[0].url.query(),
        Some("policy=&sha256=abcdef0123456789")
    );
    assert_eq!(requests[1].url.query(), Some("sha=abcdef0123456789"));
}

#[tokio::test]
async fn all_four_checks_run_in_order_and_the_verdict_goes_on_the_passage() {
    let f = fixture().await;
    let fides = fake_fides().await;
    let done = f
        .run(
            &fides.uri(),
            json!({"gates": ["change", "policy", "allowlist", "assert"], "policy": "prod"}),
        )
        .await
        .unwrap();
    assert_eq!(done.progress, Progress::Succeeded);
    assert_eq!(done.message, "change approved, risk 5 (low)");
    assert_eq!(
        calls(&fides).await,
        [
            COMPLIANCE.to_string(),
            allowlist(),
            SEARCH.to_string(),
            policy_check(),
            approvals(),
            change_gate(),
        ],
        "digest checks first, then the trail, the policy, the deployer and the verdict"
    );
    assert_eq!(
        done.output,
        Some(json!({"trail": TRAIL, "verdict": "approve", "risk": 5, "artifactsReported": 0}))
    );
    assert_eq!(
        done.evidence,
        Some(EvidenceRef {
            trail: TRAIL.into(),
            verdict: "approve".into(),
            risk: Some(5),
            ..EvidenceRef::default()
        })
    );
    let requests = fides.received_requests().await.unwrap();
    assert_eq!(
        requests[0].url.query(),
        Some("policy=prod&sha256=abcdef0123456789")
    );
    assert_eq!(requests[3].url.query(), Some(&*format!("trail={TRAIL}")));
}

#[tokio::test]
async fn each_refusal_stops_the_checks_after_it() {
    let f = fixture().await;
    let all = json!({"gates": ["assert", "allowlist", "policy", "change"]});
    let words = |list: &[&str]| list.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let cases = [
        (
            "a non-compliant artifact",
            COMPLIANCE.into(),
            json!({"compliant": false, "violations": ["no SBOM", "critical CVE"]}),
            Reason::NotCompliant,
            words(&[DIGEST, "no SBOM; critical CVE"]),
            1,
        ),
        (
            "an artifact not approved for the environment",
            allowlist(),
            json!({"approved": false}),
            Reason::NotAllowlisted,
            words(&[
                "fides allowlist add",
                &format!("--env {ENV}"),
                &format!("--sha {SHA}"),
                "--reason",
            ]),
            2,
        ),
        (
            "an artifact Fides has never seen",
            SEARCH.into(),
            json!([]),
            Reason::NoEvidence,
            words(&["no record of", DIGEST]),
            3,
        ),
        (
            "an environment policy that is not met",
            policy_check(),
            json!({"compliant": false, "results": [
                {"policy": "production-requires-sbom", "applies": true, "missing": ["sbom"]},
                {"policy": "eu-ai-act", "applies": false, "missing": ["risk-assessment"]},
            ]}),
            Reason::NotCompliant,
            words(&["production-requires-sbom (missing sbom)"]),
            4,
        ),
    ];
    for (case, call, body, reason, words, asked) in cases {
        let fides = fake_fides().await;
        answer(&fides, &call, 200, body).await;
        let error = refusal(f.run(&fides.uri(), all.clone()).await);
        assert_eq!((error.reason, error.terminal), (reason, true), "{case}");
        for word in &words {
            assert!(error.message.contains(word), "{case}: {}", error.message);
        }
        assert!(!error.message.contains("eu-ai-act"), "{}", error.message);
        let calls = calls(&fides).await;
        assert_eq!(calls.len(), asked, "{case}: {calls:?}");
        assert_eq!(calls.last(), Some(&call), "{case}: stops at the refusal");
        assert_eq!(error.evidence, None, "{case}: there is no verdict yet");
    }
}

#[tokio::test]
async fn a_bundle_without_image_digests_has_no_evidence() {
    let f = fixture().await;
    let fides = fake_fides().await;
    let commits =
        f.h.env
            .create(Bundle::new(
                "commits-only",
                BundleSpec {
                    beacon: "app".into(),
                    artifacts: vec![Artifact::commit("https://github.com/acme/app", "0123abcd")],
                    ..BundleSpec::default()
                },
            ))
            .await;
    let error = refusal(
        f.run_as(
            &fides.uri(),
            "production",
            &commits,
            PERSON,
            Timestamp::now(),
            json!({"gates": ["assert"]}),
        )
        .await,
    );
    assert_eq!((error.reason, error.terminal), (Reason::NoEvidence, true));
    contains_all(&error.message, &["no image digests", "commits-only"]);
    assert_eq!(calls(&fides).await, Vec::<String>::new());
}

#[tokio::test]
async fn configuration_mistakes_are_terminal_and_ask_fides_nothing() {
    let f = fixture().await;
    let fides = fake_fides().await;
    create_gate(&f.h, "dev", gate(vec![], false, None)).await;
    create_gate(
        &f.h,
        "staging",
        gate(vec![], false, Some(evidence("absent", ""))),
    )
    .await;
    let cases = [
        ("dev", json!({"gates": ["allowlist"]}), "fidesEnvironment"),
        ("staging", json!({"gates": ["assert"]}), "absent"),
        ("production", json!({"gates": []}), "gates must select"),
        ("production", json!({"gates": ["vibes"]}), "\"vibes\""),
        (
            "production",
            json!({"gates": ["assert"], "maxrisk": 4}),
            "unknown field `maxrisk`",
        ),
        ("nowhere", json!({"gates": ["assert"]}), "nowhere"),
    ];
    for (gate, with, word) in cases {
        let error = refusal(
            f.run_as(
                &fides.uri(),
                gate,
                &f.bundle,
                PERSON,
                Timestamp::now(),
                with,
            )
            .await,
        );
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::InvalidConfig, true),
            "{gate}: {}",
            error.message
        );
        contains_all(&error.message, &[word]);
    }
    assert_eq!(calls(&fides).await, Vec::<String>::new());
}

#[tokio::test]
async fn the_person_crossing_is_recorded_as_deployer_before_the_verdict_the_controller_is_not() {
    let f = fixture().await;
    let change = json!({"gates": ["change"]});
    for (actor, recorded) in [(PERSON, true), ("controller", false), ("", false)] {
        let fides = fake_fides().await;
        let done = f
            .run_as(
                &fides.uri(),
                "production",
                &f.bundle,
                actor,
                Timestamp::now(),
                change.clone(),
            )
            .await
            .unwrap();
        assert_eq!(done.progress, Progress::Succeeded, "{actor:?}");
        let calls = calls(&fides).await;
        let expected: Vec<String> = if recorded {
            vec![SEARCH.into(), approvals(), change_gate()]
        } else {
            vec![SEARCH.into(), change_gate()]
        };
        assert_eq!(calls, expected, "{actor:?}");
        if recorded {
            assert_eq!(
                bodies(&fides, &approvals()).await,
                [json!({
                    "role": "deployer",
                    "on_behalf_of": PERSON,
                    "reason": format!("crossing Gate production in {}", f.h.env.namespace),
                })]
            );
        }
    }
}

#[tokio::test]
async fn a_deployer_fides_will_not_count_fails_the_crossing_rather_than_waiting() {
    let f = fixture().await;
    let fides = fake_fides().await;
    answer(
        &fides,
        &approvals(),
        201,
        json!({"status": "approved", "kind": "service"}),
    )
    .await;
    let error = refusal(f.run(&fides.uri(), json!({"gates": ["change"]})).await);
    assert_eq!(
        (error.reason, error.terminal),
        (Reason::InvalidConfig, true)
    );
    contains_all(
        &error.message,
        &["FIDES_DELEGATED_APPROVAL_ENABLED", "Admin", PERSON],
    );
    assert!(!calls(&fides).await.contains(&change_gate()));
}

#[tokio::test]
async fn a_held_change_waits_every_poll_interval_then_gives_up_after_hold_timeout() {
    let f = fixture().await;
    let fides = fake_fides().await;
    answer(
        &fides,
        &change_gate(),
        200,
        json!({"recommendation": "hold", "approved": false, "risk_score": 30, "risk_level": "medium",
               "missing_evidence": [{"control": "CC6.1", "name": "Change approval", "reasons": ["missing sbom"]}]}),
    )
    .await;
    let with = json!({"gates": ["change"], "pollInterval": "30s", "holdTimeout": "1h"});
    let held = EvidenceRef {
        trail: TRAIL.into(),
        verdict: "hold".into(),
        risk: Some(30),
        blockers: vec!["missing evidence for CC6.1 Change approval (missing sbom)".into()],
        url: String::new(),
    };

    let started = Timestamp::now() - SignedDuration::from_mins(59);
    let waiting = f
        .run_as(
            &fides.uri(),
            "production",
            &f.bundle,
            PERSON,
            started,
            with.clone(),
        )
        .await
        .unwrap();
    assert_eq!(waiting.progress, Progress::Running);
    assert_eq!(waiting.retry_after, Some(Duration::from_secs(30)));
    contains_all(&waiting.message, &["holding", "risk 30", "missing sbom"]);
    assert_eq!(waiting.evidence.as_ref(), Some(&held));
    assert_eq!(waiting.output.as_ref().unwrap()["verdict"], "hold");

    let started = Timestamp::now() - SignedDuration::from_hours(3);
    let error = refusal(
        f.run_as(&fides.uri(), "production", &f.bundle, PERSON, started, with)
            .await,
    );
    assert_eq!((error.reason, error.terminal), (Reason::ChangeHeld, true));
    contains_all(&error.message, &["holdTimeout", "3h", "missing sbom"]);
    assert_eq!(
        error.evidence.as_deref(),
        Some(&held),
        "the verdict stays visible"
    );
    // The deployer is recorded on every look (an upsert in Fides).
    assert_eq!(bodies(&fides, &approvals()).await.len(), 2);
}

#[tokio::test]
async fn a_risk_above_max_risk_refuses_even_an_approved_change() {
    let f = fixture().await;
    let fides = fake_fides().await;
    answer(
        &fides,
        &change_gate(),
        200,
        json!({"recommendation": "approve", "approved": true, "risk_score": 60, "risk_level": "high",
               "summary": "Two controls waived."}),
    )
    .await;
    let error = refusal(
        f.run(&fides.uri(), json!({"gates": ["change"], "maxRisk": 40}))
            .await,
    );
    assert_eq!((error.reason, error.terminal), (Reason::NotCompliant, true));
    contains_all(&error.message, &["60", "40", "Two controls waived."]);
    let evidence = error.evidence.unwrap();
    assert_eq!(
        (evidence.verdict.as_str(), evidence.risk),
        ("approve", Some(60))
    );

    let done = f
        .run(&fides.uri(), json!({"gates": ["change"], "maxRisk": 60}))
        .await
        .unwrap();
    assert_eq!(
        done.progress,
        Progress::Succeeded,
        "at the limit is within it"
    );
}

#[tokio::test]
async fn an_outage_may_heal_a_refused_token_will_not() {
    let f = fixture().await;
    for (status, terminal) in [(503, false), (500, false), (401, true), (403, true)] {
        let fides = MockServer::start().await;
        Mock::given(any())
            .respond_with(ResponseTemplate::new(status).set_body_string("refused"))
            .mount(&fides)
            .await;
        let error = refusal(f.run(&fides.uri(), json!({"gates": ["assert"]})).await);
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::EvidenceUnavailable, terminal),
            "{status}: {}",
            error.message
        );
        contains_all(&error.message, &[&status.to_string(), "refused"]);
    }
    // Nobody listening.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let error = refusal(f.run(&closed, json!({"gates": ["assert"]})).await);
    assert_eq!(
        (error.reason, error.terminal),
        (Reason::EvidenceUnavailable, false),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn the_gates_own_server_wins_over_the_default() {
    let f = fixture().await;
    let (default, own) = (fake_fides().await, fake_fides().await);
    create_gate(
        &f.h,
        "eu",
        gate(vec![], false, Some(evidence("fides", &own.uri()))),
    )
    .await;
    f.run_as(
        &default.uri(),
        "eu",
        &f.bundle,
        PERSON,
        Timestamp::now(),
        json!({"gates": ["assert"]}),
    )
    .await
    .unwrap();
    assert_eq!(calls(&own).await, [COMPLIANCE]);
    assert_eq!(calls(&default).await, Vec::<String>::new());
}

#[tokio::test]
async fn the_bundles_artifacts_are_reported_to_the_trail_only_when_asked() {
    let f = fixture().await;
    let two =
        f.h.env
            .create(Bundle::new(
                "podinfo-two",
                bundle_of(&[
                    ("ghcr.io/acme/api", DIGEST),
                    ("ghcr.io/acme/worker", "sha256:beef00"),
                ]),
            ))
            .await;
    let run = |fides: String, with: Value| {
        let two = two.clone();
        let f = &f;
        async move {
            f.run_as(&fides, "production", &two, PERSON, Timestamp::now(), with)
                .await
                .unwrap()
        }
    };

    let fides = fake_fides().await;
    let done = run(
        fides.uri(),
        json!({"gates": ["change"], "reportArtifacts": true}),
    )
    .await;
    assert_eq!(done.output.unwrap()["artifactsReported"], 2);
    assert_eq!(
        calls(&fides).await,
        [
            SEARCH.to_string(),
            ARTIFACTS.into(),
            ARTIFACTS.into(),
            approvals(),
            change_gate(),
        ],
        "reported once the trail is known, before the verdict"
    );
    assert_eq!(
        bodies(&fides, ARTIFACTS).await,
        [
            json!({"sha256": SHA, "trail_id": TRAIL, "name": "ghcr.io/acme/api", "type": "container-image"}),
            json!({"sha256": "beef00", "trail_id": TRAIL, "name": "ghcr.io/acme/worker", "type": "container-image"}),
        ]
    );

    let fides = fake_fides().await;
    run(fides.uri(), json!({"gates": ["change"]})).await;
    assert!(!calls(&fides).await.contains(&ARTIFACTS.to_string()));
}

// ---------------------------------------------------------------------------------
// Crossings and their attestation

/// An `http` step calling `url`; `condition` as its `if:`.
fn call(alias: &str, url: &str, condition: &str) -> Step {
    Step {
        uses: "http".into(),
        alias: alias.into(),
        condition: condition.into(),
        with: Some(json!({"url": url, "body": {}})),
        ..Step::default()
    }
}

/// A receiver for `http` steps answering `status`.
async fn receiver(status: u16) -> MockServer {
    let receiver = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(status))
        .mount(&receiver)
        .await;
    receiver
}

/// The one attestation Fides received: its body, and its payload decoded.
async fn the_attestation(fides: &MockServer) -> (Value, Value) {
    let mut bodies = bodies(fides, ATTESTATIONS).await;
    assert_eq!(bodies.len(), 1, "exactly one attestation: {bodies:#?}");
    let body = bodies.remove(0);
    let payload = serde_json::from_str(body["payload"].as_str().unwrap()).unwrap();
    (body, payload)
}

fn utc(time: Option<&Time>) -> String {
    time.unwrap().0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[tokio::test]
async fn a_finished_crossing_is_attested_once_with_every_step_even_after_a_restart() {
    let f = fixture().await;
    let fides = fake_fides().await;
    let hook = receiver(200).await;
    let url = format!("{}/hook", hook.uri());
    f.passage(
        "production-1",
        "production",
        PERSON,
        vec![call("notify", &url, ""), call("report", &url, "failed")],
    )
    .await;
    let reconciler = f.reconciler(&fides.uri());
    let done = f.reconcile(&reconciler, "production-1").await;
    let status = done.status.clone().unwrap();
    assert_eq!(status.phase, Some(PassagePhase::Succeeded));

    let (body, payload) = the_attestation(&fides).await;
    assert_eq!(
        body,
        json!({
            "trail_id": TRAIL,
            "artifact_sha256": SHA,
            "name": "promotion",
            "type_name": "promotion",
            "payload": body["payload"],
            "signed_by": PERSON,
        })
    );
    assert_eq!(
        payload,
        json!({
            "passage": "production-1",
            "namespace": f.h.env.namespace,
            "gate": "production",
            "bundle": "podinfo-abc123",
            "outcome": "Succeeded",
            "steps": [
                {"uses": "http", "phase": "Succeeded", "as": "notify", "message": format!("{url} answered 200")},
                {"uses": "http", "phase": "Skipped", "as": "report", "message": "condition \"failed\" was false"},
            ],
            "actor": PERSON,
            "message": "crossed production",
            "startedAt": utc(status.started_at.as_ref()),
            "finishedAt": utc(status.finished_at.as_ref()),
            "artifacts": [DIGEST],
            "bundleDigest": "sha256:bbbb",
        })
    );
    assert_eq!(
        calls(&fides).await,
        [SEARCH.to_string(), ATTESTATIONS.into()],
        "the trail of the first digest, then the attestation"
    );
    assert_eq!(
        status.evidence,
        Some(EvidenceRef {
            trail: TRAIL.into(),
            ..EvidenceRef::default()
        }),
        "the trail is on the Passage"
    );

    // Asked again, and asked by a new process: a finished crossing is left alone.
    f.reconcile(&reconciler, "production-1").await;
    f.reconcile(&f.reconciler(&fides.uri()), "production-1")
        .await;
    assert_eq!(bodies(&fides, ATTESTATIONS).await.len(), 1, "never twice");
    assert_eq!(f.attestation_events().await, Vec::<String>::new());
}

#[tokio::test]
async fn a_failed_crossing_is_attested_too() {
    let f = fixture().await;
    let fides = fake_fides().await;
    let hook = receiver(400).await;
    let url = format!("{}/deploy", hook.uri());
    f.passage(
        "production-1",
        "production",
        "",
        vec![call("deploy", &url, ""), call("after", &url, "")],
    )
    .await;
    let done = f
        .reconcile(&f.reconciler(&fides.uri()), "production-1")
        .await;
    assert_eq!(done.phase(), PassagePhase::Failed);
    let (body, payload) = the_attestation(&fides).await;
    assert_eq!(body["signed_by"], "hecate", "nobody asked: Hecate signs");
    assert_eq!(payload["outcome"], "Failed");
    assert_eq!(payload.get("actor"), None);
    assert_eq!(payload["steps"][0]["reason"], Reason::HttpFailed.as_str());
    assert_eq!(payload["steps"][1]["phase"], "Skipped");
    assert_eq!(
        payload["message"],
        done.status.unwrap().message.as_str(),
        "the crossing's own account"
    );
}

#[tokio::test]
async fn a_held_crossing_carries_its_verdict_then_fails_as_change_held_and_is_attested_on_that_trail()
 {
    let f = fixture().await;
    let fides = fake_fides().await;
    answer(
        &fides,
        &change_gate(),
        200,
        json!({"recommendation": "hold", "approved": false, "risk_score": 30, "risk_level": "medium"}),
    )
    .await;
    f.passage(
        "production-1",
        "production",
        PERSON,
        vec![evidence_gate(
            json!({"gates": ["change"], "pollInterval": "30s", "holdTimeout": "1h"}),
        )],
    )
    .await;
    let reconciler = f.reconciler(&fides.uri());
    let outcome = reconciler
        .reconcile_named(&f.h.env.namespace, "production-1")
        .await
        .unwrap();
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(30)));
    let mut waiting: Passage = f.h.env.api().get("production-1").await.unwrap();
    let status = waiting.status.clone().unwrap();
    assert_eq!(status.phase, Some(PassagePhase::Running));
    assert_eq!(status.steps[0].phase, StepPhase::Running);
    let held = EvidenceRef {
        trail: TRAIL.into(),
        verdict: "hold".into(),
        risk: Some(30),
        blockers: vec!["awaiting a human approval".into()],
        url: String::new(),
    };
    assert_eq!(status.evidence.as_ref(), Some(&held));
    assert_eq!(bodies(&fides, ATTESTATIONS).await.len(), 0, "not finished");

    // Two hours on: the Passage started before the hold timeout.
    let mut earlier = status;
    earlier.started_at = Some(Time(Timestamp::now() - SignedDuration::from_hours(2)));
    waiting.status = Some(earlier);
    f.h.env.write_status(&waiting).await;
    let failed = f.reconcile(&reconciler, "production-1").await;
    let status = failed.status.unwrap();
    assert_eq!(status.phase, Some(PassagePhase::Failed));
    assert_eq!(status.steps[0].reason, Reason::ChangeHeld.as_str());
    assert_eq!(status.steps[0].attempts, 2);
    assert_eq!(status.evidence.as_ref(), Some(&held), "the verdict is kept");

    let (body, payload) = the_attestation(&fides).await;
    assert_eq!(body["trail_id"], TRAIL);
    assert_eq!(payload["outcome"], "Failed");
    assert_eq!(payload["steps"][0]["reason"], Reason::ChangeHeld.as_str());
    assert_eq!(
        calls(&fides)
            .await
            .iter()
            .filter(|c| c.as_str() == SEARCH)
            .count(),
        2,
        "one lookup per look of the step; the attestation reuses the trail it was judged on"
    );
}

#[tokio::test]
async fn a_gate_without_evidence_is_not_attested() {
    let f = fixture().await;
    let fides = fake_fides().await;
    let hook = receiver(200).await;
    create_gate(&f.h, "dev", gate(vec![], false, None)).await;
    f.passage(
        "dev-1",
        "dev",
        PERSON,
        vec![call("notify", &hook.uri(), "")],
    )
    .await;
    let done = f.reconcile(&f.reconciler(&fides.uri()), "dev-1").await;
    assert_eq!(done.phase(), PassagePhase::Succeeded);
    assert_eq!(calls(&fides).await, Vec::<String>::new());
    assert_eq!(done.status.unwrap().evidence, None);
    assert_eq!(f.attestation_events().await, Vec::<String>::new());
}

#[tokio::test]
async fn attestation_problems_are_events_never_a_failed_crossing() {
    let f = fixture().await;
    let hook = receiver(200).await;
    create_gate(
        &f.h,
        "staging",
        gate(vec![], false, Some(evidence("absent", ""))),
    )
    .await;
    let never_seen = fake_fides().await;
    answer(&never_seen, SEARCH, 200, json!([])).await;
    let refusing = fake_fides().await;
    answer(&refusing, ATTESTATIONS, 500, json!("refused")).await;
    let cases = [
        ("staging", fake_fides().await, "AttestationFailed", "absent"),
        ("production", never_seen, "AttestationSkipped", DIGEST),
        ("production", refusing, "AttestationFailed", "500"),
    ];
    for (i, (gate, fides, reason, word)) in cases.into_iter().enumerate() {
        let name = format!("{gate}-{i}");
        f.passage(&name, gate, PERSON, vec![call("notify", &hook.uri(), "")])
            .await;
        let done = f.reconcile(&f.reconciler(&fides.uri()), &name).await;
        assert_eq!(done.phase(), PassagePhase::Succeeded, "{reason}");
        assert_eq!(done.status.unwrap().evidence, None, "{reason}: no trail");
        let event =
            f.h.events()
                .await
                .into_iter()
                .find(|e| {
                    e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name.as_str())
                        && e.reason.as_deref() == Some(reason)
                })
                .unwrap_or_else(|| panic!("no {reason} Event about {name}"));
        assert_eq!(event.type_.as_deref(), Some("Warning"));
        assert_eq!(event.action.as_deref(), Some("Attesting"));
        contains_all(event.note.as_deref().unwrap_or_default(), &[word]);
    }
}

#[tokio::test]
async fn the_controller_judges_a_crossing_by_its_evidence_and_attests_it() {
    let f = fixture().await;
    let fides = fake_fides().await;
    let ns = f.h.env.namespace.clone();
    join_shard(&f.h.env, &ns, &ns).await;
    let _controller =
        Controller::start(&f.h.env, &ns, &[&format!("--fides-server={}", fides.uri())]).await;
    create_gate(
        &f.h,
        "prod",
        gate(
            vec![evidence_gate(json!({"gates": ["assert", "change"]}))],
            true,
            Some(evidence("fides", "")),
        ),
    )
    .await;

    let done = eventually(Duration::from_secs(20), "prod-1 succeeded", || async {
        f.h.env
            .api::<Passage>()
            .get_opt("prod-1")
            .await
            .unwrap()
            .filter(|p| p.phase() == PassagePhase::Succeeded)
    })
    .await;
    assert_eq!(done.spec.actor, "controller");
    let evidence = eventually(Duration::from_secs(10), "the attestation", || async {
        let passage: Passage = f.h.env.api().get("prod-1").await.unwrap();
        let evidence = passage.status?.evidence?;
        (!bodies(&fides, ATTESTATIONS).await.is_empty()).then_some(evidence)
    })
    .await;
    assert_eq!(
        evidence,
        EvidenceRef {
            trail: TRAIL.into(),
            verdict: "approve".into(),
            risk: Some(5),
            ..EvidenceRef::default()
        }
    );
    let (body, payload) = the_attestation(&fides).await;
    assert_eq!(body["signed_by"], "controller");
    assert_eq!(payload["outcome"], "Succeeded");
    assert_eq!(
        payload["steps"],
        json!([{"uses": "evidence-gate", "phase": "Succeeded", "as": "evidence", "message": "change approved, risk 5 (low)"}])
    );
    assert_eq!(
        calls(&fides).await,
        [
            COMPLIANCE.to_string(),
            SEARCH.into(),
            change_gate(),
            ATTESTATIONS.into(),
        ],
        "no deployer for an automatic crossing; the attestation reuses the judged trail"
    );
    eventually(Duration::from_secs(10), "the Gate records it", || async {
        let bundle: Bundle = f.h.env.api().get("podinfo-abc123").await.unwrap();
        bundle.has_cleared("prod").then_some(())
    })
    .await;
}

// ---------------------------------------------------------------------------------
// A verification's verdict and its attestation (DECISION 139)

/// A `flagger` verifier saying whatever the test last set.
struct Says(std::sync::Mutex<Seen>);

impl Says {
    fn new(seen: Seen) -> Arc<Self> {
        Arc::new(Self(std::sync::Mutex::new(seen)))
    }
    fn set(&self, seen: Seen) {
        *self.0.lock().unwrap() = seen;
    }
}

impl Verifier for Says {
    fn name(&self) -> &str {
        "flagger"
    }
    fn look<'a>(
        &'a self,
        _config: Option<&'a Value>,
        _subject: &'a Subject<'a>,
    ) -> BoxFuture<'a, Result<Look, VerifyError>> {
        let seen = self.0.lock().unwrap().clone();
        Box::pin(async move {
            Ok(Look {
                seen,
                value: "0.001".into(),
                message: "Canary podinfo looked".into(),
            })
        })
    }
}

/// A Gate reconciler over the fixture's namespace asking `says`, with `server` as
/// `--fides-server`.
fn verifying_reconciler(f: &Fixture, says: &Arc<Says>, server: &str) -> Harness {
    let mut verifiers = verify::Verifiers::new();
    verifiers.register(says.clone()).unwrap();
    let mut h = f.h.sibling(health::Checkers::new(), verifiers);
    h.reconciler.fides_server = Some(server.into());
    h
}

/// Gate `name`, bound to Fides (default server) or not, verified by `flagger`, and a
/// successful crossing of it by Passage `<name>-1`, which names `trail` (the one its
/// evidence was judged on, or its `promotion` attested on) when given.
async fn verified_gate(f: &Fixture, name: &str, fides: bool, trail: Option<&str>) -> Passage {
    let mut spec = gate(vec![], false, fides.then(|| evidence("fides", "")));
    spec.verify = vec![Verification {
        uses: "flagger".into(),
        with: Some(json!({"name": "podinfo"})),
    }];
    create_gate(&f.h, name, spec).await;
    let passage_name = format!("{name}-1");
    f.passage(&passage_name, name, PERSON, steps()).await;
    let mut passage: Passage = f.h.env.api().get(&passage_name).await.unwrap();
    if let Some(trail) = trail {
        passage.status.get_or_insert_with(Default::default).evidence = Some(EvidenceRef {
            trail: trail.into(),
            ..EvidenceRef::default()
        });
    }
    f.h.finish(&passage, PassagePhase::Succeeded, "crossed")
        .await
}

#[tokio::test]
async fn a_final_verification_is_attested_once_on_the_crossings_trail() {
    const PROMOTED_ON: &str = "aaaa1111-0000-4000-8000-00000000aaaa";
    let f = fixture().await;
    let fides = fake_fides().await;
    let says = Says::new(Seen::NotYet);
    let h = verifying_reconciler(&f, &says, &fides.uri());
    verified_gate(&f, "staging", true, Some(PROMOTED_ON)).await;

    // Undecided: nothing to attest.
    h.reconcile("staging").await;
    let passage: Passage = h.env.api().get("staging-1").await.unwrap();
    let undecided = passage.status.unwrap().verification.unwrap();
    assert_eq!(undecided.phase, VerificationPhase::Verifying);
    assert_eq!(calls(&fides).await, Vec::<String>::new());

    says.set(Seen::Pass);
    h.clock.advance(SignedDuration::from_secs(30));
    h.reconcile("staging").await;
    let passage: Passage = h.env.api().get("staging-1").await.unwrap();
    let verified = passage.status.unwrap().verification.unwrap();
    assert_eq!(verified.phase, VerificationPhase::Verified);
    assert!(h.bundle("podinfo-abc123").await.has_cleared("staging"));

    let (body, payload) = the_attestation(&fides).await;
    assert_eq!(
        body,
        json!({
            "trail_id": PROMOTED_ON,
            "artifact_sha256": SHA,
            "name": "verification",
            "type_name": "verification",
            "payload": body["payload"],
            "signed_by": "hecate",
        })
    );
    assert_eq!(
        payload,
        json!({
            "passage": "staging-1",
            "namespace": h.env.namespace,
            "gate": "staging",
            "bundle": "podinfo-abc123",
            "phase": "Verified",
            "verifiers": [
                {"uses": "flagger", "phase": "Verified", "passes": 1, "failures": 0, "lastValue": "0.001", "message": "Canary podinfo looked"},
            ],
            "message": "every verification passed",
            "startedAt": utc(verified.started_at.as_ref()),
            "finishedAt": utc(verified.finished_at.as_ref()),
        })
    );
    assert_eq!(
        calls(&fides).await,
        [ATTESTATIONS.to_string()],
        "the trail the crossing named: no lookup"
    );

    // Asked again, and asked by a new process: a final verdict is attested once.
    h.clock.advance(SignedDuration::from_secs(60));
    h.reconcile("staging").await;
    verifying_reconciler(&f, &says, &fides.uri())
        .reconcile("staging")
        .await;
    assert_eq!(bodies(&fides, ATTESTATIONS).await.len(), 1, "never twice");
    assert_eq!(f.attestation_events().await, Vec::<String>::new());
}

#[tokio::test]
async fn a_no_fides_cannot_take_is_an_event_and_a_gate_without_fides_asks_nothing() {
    let f = fixture().await;
    let fides = fake_fides().await;
    answer(&fides, ATTESTATIONS, 500, json!("refused")).await;
    let says = Says::new(Seen::Refused);
    let h = verifying_reconciler(&f, &says, &fides.uri());

    // A Gate that binds no Fides: its verdict goes nowhere but the cluster.
    verified_gate(&f, "dev", false, None).await;
    h.reconcile("dev").await;
    let passage: Passage = h.env.api().get("dev-1").await.unwrap();
    assert_eq!(
        passage.status.unwrap().verification.unwrap().phase,
        VerificationPhase::Failed
    );
    assert_eq!(calls(&fides).await, Vec::<String>::new());

    // One that does, with no trail named: the first digest's, looked up; Fides
    // refuses, which an Event says, and the "no" stands.
    verified_gate(&f, "staging", true, None).await;
    h.reconcile("staging").await;
    assert_eq!(
        calls(&fides).await,
        [SEARCH.to_string(), ATTESTATIONS.into()]
    );
    let unverified = h
        .bundle("podinfo-abc123")
        .await
        .status
        .unwrap_or_default()
        .unverified;
    assert!(
        unverified.iter().any(|u| u.passage == "staging-1"),
        "{unverified:?}"
    );
    assert_eq!(h.ready("staging").await.reason, "VerificationFailed");
    let event = h
        .events()
        .await
        .into_iter()
        .find(|e| {
            e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("staging-1")
                && e.reason.as_deref() == Some("AttestationFailed")
        })
        .expect("an AttestationFailed Event about staging-1");
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.action.as_deref(), Some("Attesting"));
    contains_all(
        event.note.as_deref().unwrap_or_default(),
        &["verification of staging-1", "Failed", "500"],
    );

    // Never retried.
    h.reconcile("staging").await;
    assert_eq!(bodies(&fides, ATTESTATIONS).await.len(), 1, "never retried");
}
