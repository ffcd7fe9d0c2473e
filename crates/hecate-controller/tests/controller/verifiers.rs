//! The `prometheus` and `http` verifiers called directly, one look at a time.
//!
//! `prometheus` asks a real Prometheus (Debian's, installed by `cargo xtask test`): each
//! test starts its own on a free loopback port, scraping every second an exporter the
//! test controls, and counts the queries each look costs from Prometheus' own metrics.
//! Only the bearer-token test stands wiremock in for Prometheus, to see the header. The
//! `http` verifier asks wiremock, under the same reach rules as the `http` step.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hecate_controller::verify::{HttpVerifier, PrometheusVerifier, Subject, Verifier, VerifyError};
use hecate_ops::rules::verification::{Look, Seen};
use hecate_steps::reach::Reach;
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Gate, GateSpec, Passage, PassageSpec};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::process::eventually;

/// How long a Prometheus has to start, or a change to reach its answers.
const PATIENCE: Duration = Duration::from_secs(30);

/// A client for an API server that is not there: for looks that read no Secret.
pub(crate) fn no_cluster() -> kube::Client {
    let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
    kube::Client::try_from(config).unwrap()
}

/// A loopback port nothing listens on (just now).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// One look by `verifier` with `with`, at a crossing in `namespace`, and how long it
/// took.
async fn look_timed(
    verifier: &dyn Verifier,
    namespace: &str,
    with: &Value,
) -> (Result<Look, VerifyError>, Duration) {
    let mut gate = Gate::new("staging", GateSpec::default());
    gate.metadata.namespace = Some(namespace.into());
    let passage = Passage::new("staging-1", PassageSpec::default());
    let now = Timestamp::now();
    let subject = Subject {
        namespace,
        gate: &gate,
        passage: &passage,
        started: now,
        now,
    };
    let began = Instant::now();
    let look = verifier.look(Some(with), &subject).await;
    (look, began.elapsed())
}

pub(crate) async fn look(verifier: &dyn Verifier, with: &Value) -> Result<Look, VerifyError> {
    look_timed(verifier, "shop", with).await.0
}

/// An exporter: serves `/metrics` in Prometheus' text format, with what the test sets.
#[derive(Clone)]
struct Exporter(Arc<Mutex<String>>);

impl Respond for Exporter {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let text = self.0.lock().unwrap().clone();
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/plain; version=0.0.4")
            .set_body_string(text)
    }
}

impl Exporter {
    /// Serves `text` on a new loopback server; returns the server too.
    async fn serving(text: &str) -> (Self, MockServer) {
        let exporter = Self(Arc::new(Mutex::new(text.to_string())));
        let server = MockServer::start().await;
        Mock::given(path("/metrics"))
            .respond_with(exporter.clone())
            .mount(&server)
            .await;
        (exporter, server)
    }

    fn set(&self, text: &str) {
        *self.0.lock().unwrap() = text.to_string();
    }
}

/// A Prometheus of this test's own: its port, its storage, killed when dropped.
struct Prometheus {
    child: Child,
    address: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts one scraping `target` (`host:port`) every second and waits until it is
    /// ready.
    async fn scraping(target: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: app\n    static_configs:\n      \
                 - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let log = dir.path().join("prometheus.log");
        let listen = format!("127.0.0.1:{}", free_port());
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={listen}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("starting prometheus ({e}): `cargo xtask test` installs Debian's")
            });
        let prometheus = Self {
            child,
            address: format!("http://{listen}"),
            log,
            _dir: dir,
        };
        let ready = format!("{}/-/ready", prometheus.address);
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok(answer) = reqwest::get(&ready).await
                && answer.status().is_success()
            {
                return prometheus;
            }
            assert!(
                Instant::now() < deadline,
                "prometheus not ready within {PATIENCE:?}: {}",
                std::fs::read_to_string(&prometheus.log).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A `prometheus` verification of this server.
    fn with(&self, query: &str, success_if: &str) -> Value {
        json!({"address": self.address, "query": query, "successIf": success_if})
    }

    /// The instant queries this server has answered, by its own metrics.
    async fn queries_answered(&self) -> f64 {
        let metrics = reqwest::get(format!("{}/metrics", self.address))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        metrics
            .lines()
            .filter(|line| {
                line.starts_with("prometheus_http_requests_total{")
                    && line.contains("handler=\"/api/v1/query\"")
            })
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Looks until one sees `seen` (a scrape must land first); returns that look.
async fn look_until(verifier: &PrometheusVerifier, with: &Value, seen: Seen) -> Look {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let look = look(verifier, with).await.unwrap();
        if look.seen == seen {
            return look;
        }
        assert!(
            Instant::now() < deadline,
            "no {seen:?} within {PATIENCE:?}; last: {look:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn a_query_passes_below_its_threshold_and_fails_above_it_at_one_query_a_look() {
    let (exporter, app) = Exporter::serving("app_errors_ratio 0.002\n").await;
    let prometheus = Prometheus::scraping(&app.address().to_string()).await;
    let verifier = PrometheusVerifier::new(no_cluster(), on_loopback());
    let with = prometheus.with("app_errors_ratio", "result < 0.01");

    let passed = look_until(&verifier, &with, Seen::Pass).await;
    assert_eq!(passed.value, "0.002");
    assert_eq!(passed.message, "the query gave 0.002; result < 0.01 holds");

    // One look is one query.
    let before = prometheus.queries_answered().await;
    let (again, took) = look_timed(&verifier, "shop", &with).await;
    assert_eq!(again.unwrap().seen, Seen::Pass);
    // Prometheus counts a request once it has answered it: a moment after.
    let queries = eventually(Duration::from_secs(5), "the query counted", || async {
        let answered = prometheus.queries_answered().await - before;
        (answered > 0.0).then_some(answered)
    })
    .await;
    assert_eq!(queries, 1.0);
    eprintln!("one look against a real Prometheus: 1 query, {took:?}");

    exporter.set("app_errors_ratio 0.2\n");
    let failed = look_until(&verifier, &with, Seen::Fail).await;
    assert_eq!(failed.value, "0.2");
    assert_eq!(
        failed.message,
        "the query gave 0.2; result < 0.01 does not hold"
    );
}

#[tokio::test]
async fn no_data_and_a_query_prometheus_rejects_cannot_judge() {
    let (_exporter, app) = Exporter::serving("app_errors_ratio 0.002\n").await;
    let prometheus = Prometheus::scraping(&app.address().to_string()).await;
    let verifier = PrometheusVerifier::new(no_cluster(), on_loopback());
    // Data is there for what is scraped: what follows is not for want of a scrape.
    look_until(
        &verifier,
        &prometheus.with("app_errors_ratio", "result < 1"),
        Seen::Pass,
    )
    .await;

    let missing = look(
        &verifier,
        &prometheus.with("app_latency_seconds", "result < 1"),
    )
    .await
    .unwrap();
    assert_eq!(missing.seen, Seen::Inconclusive, "{missing:?}");
    assert_eq!(missing.message, "no data: the query matched no series");

    let malformed = look(
        &verifier,
        &prometheus.with("sum(rate(app_errors_ratio[5m])", "result < 1"),
    )
    .await
    .unwrap();
    assert_eq!(malformed.seen, Seen::Inconclusive, "{malformed:?}");
    assert!(
        malformed
            .message
            .starts_with("Prometheus refused the query (bad_data): ")
            && malformed.message.contains("parse error"),
        "{malformed:?}"
    );

    let range = look(
        &verifier,
        &prometheus.with("app_errors_ratio[1m]", "result < 1"),
    )
    .await
    .unwrap();
    assert_eq!(range.seen, Seen::Inconclusive, "{range:?}");
    assert!(
        range.message.starts_with("range queries are not supported"),
        "{range:?}"
    );

    let nan = look(&verifier, &prometheus.with("0/0", "result < 1"))
        .await
        .unwrap();
    assert_eq!((nan.seen, nan.value.as_str()), (Seen::Inconclusive, "NaN"));
}

#[tokio::test]
async fn a_prometheus_that_is_down_cannot_judge() {
    let verifier = PrometheusVerifier::new(no_cluster(), on_loopback());
    let address = format!("http://127.0.0.1:{}", free_port());
    let with = json!({"address": address, "query": "up", "successIf": "result == 1"});
    let (error, took) = look_timed(&verifier, "shop", &with).await;
    let error = error.unwrap_err();
    assert!(
        matches!(&error, VerifyError::Unanswered(message)
                 if message.starts_with(&format!("Prometheus at {address}: could not connect"))),
        "{error:?}"
    );
    eprintln!("a look at a closed port: {took:?}");
}

use hecate_testenv::fixtures::usable_secret as secret;

#[tokio::test]
async fn the_bearer_token_is_read_from_a_secret_in_the_gates_namespace() {
    let env = TestEnv::new().await;
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    env.create(secret(
        "prometheus-token",
        &[("token", "s3cret\n"), ("other", "t0ken")],
    ))
    .await;
    let client = env.client(Identity::HecateController).await;
    let secrets = Api::<Secret>::namespaced(client.clone(), &env.namespace);
    // RBAC reaches the authorizer a moment after it is written.
    eventually(Duration::from_secs(10), "the controller's role", || async {
        secrets.get_opt("prometheus-token").await.ok().flatten()
    })
    .await;

    let server = MockServer::start().await;
    let answer = json!({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"job": "a"}, "value": [1_767_000_000.5, "1"]},
        {"metric": {"job": "b"}, "value": [1_767_000_000.5, "0"]},
    ]}});
    for token in ["s3cret", "t0ken"] {
        Mock::given(method("GET"))
            .and(path("/api/v1/query"))
            .and(query_param("query", "up"))
            .and(header("authorization", format!("Bearer {token}").as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_json(&answer))
            .mount(&server)
            .await;
    }
    let verifier = PrometheusVerifier::new(client, on_loopback());
    let with = |secret_ref: Value| {
        json!({"address": server.uri(), "query": "up", "successIf": "result == 1",
               "secretRef": secret_ref})
    };

    let (passed, _) = look_timed(
        &verifier,
        &env.namespace,
        &with(json!({"name": "prometheus-token"})),
    )
    .await;
    let passed = passed.unwrap();
    assert_eq!(passed.seen, Seen::Pass, "{passed:?}");
    assert_eq!(
        passed.message,
        "the query gave 1 (the first of 2 series); result == 1 holds"
    );
    let (other_key, _) = look_timed(
        &verifier,
        &env.namespace,
        &with(json!({"name": "prometheus-token", "key": "other"})),
    )
    .await;
    assert_eq!(other_key.unwrap().seen, Seen::Pass);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2, "one request a look");

    let (absent, _) = look_timed(&verifier, &env.namespace, &with(json!({"name": "nope"}))).await;
    let absent = absent.unwrap_err();
    assert!(
        matches!(&absent, VerifyError::Config { problem, .. } if problem.contains("does not exist")),
        "{absent:?}"
    );
    let (no_key, _) = look_timed(
        &verifier,
        &env.namespace,
        &with(json!({"name": "prometheus-token", "key": "bearer"})),
    )
    .await;
    let no_key = no_key.unwrap_err();
    assert_eq!(
        no_key.to_string(),
        "prometheus verification: Secret prometheus-token has no \"bearer\""
    );
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        2,
        "no token, no request"
    );
}

/// Issue 50, item 6: a Gate author who may not read Secrets named one in `secretRef`,
/// and the controller sent it to her server. A Secret is used only once it opts in
/// (`hecate.dev/usable=true`, DECISION 147): before that the look cannot judge, says
/// which label to add, and sends nothing.
#[tokio::test]
async fn a_token_is_sent_only_from_a_secret_that_opts_in() {
    let env = TestEnv::new().await;
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    env.create(hecate_testenv::fixtures::unlabelled_secret(
        "database",
        &[("token", "n0t-for-prometheus")],
    ))
    .await;
    let client = env.client(Identity::HecateController).await;
    let secrets = Api::<Secret>::namespaced(client.clone(), &env.namespace);
    eventually(Duration::from_secs(10), "the controller's role", || async {
        secrets.get_opt("database").await.ok().flatten()
    })
    .await;
    let server = MockServer::start().await;
    let answer = json!({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"job": "a"}, "value": [1_767_000_000.5, "1"]},
    ]}});
    Mock::given(path("/api/v1/query"))
        .respond_with(ResponseTemplate::new(200).set_body_json(&answer))
        .mount(&server)
        .await;
    let verifier = PrometheusVerifier::new(client, on_loopback());
    let with = json!({"address": server.uri(), "query": "up", "successIf": "result == 1",
                      "secretRef": {"name": "database"}});

    let (refused, _) = look_timed(&verifier, &env.namespace, &with).await;
    let refused = refused.unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!(
            "prometheus verification: credentials Secret database in namespace {ns} is not \
             labelled hecate.dev/usable=true: Hecate uses a Secret that a Gate or Beacon names \
             only once it opts in (kubectl -n {ns} label secret database hecate.dev/usable=true)",
            ns = env.namespace
        )
    );
    assert!(
        server.received_requests().await.unwrap().is_empty(),
        "nothing is sent"
    );

    hecate_testenv::fixtures::set_usable(&env, "database", true).await;
    let (passed, _) = look_timed(&verifier, &env.namespace, &with).await;
    assert_eq!(passed.unwrap().seen, Seen::Pass);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        "Bearer n0t-for-prometheus"
    );
}

/// What the tests' world needs: its servers listen on loopback, which an operator
/// allows with `--allow-local-http`.
fn on_loopback() -> Reach {
    Reach {
        local: true,
        ..Reach::default()
    }
}

/// The `http` verifier as the tests' world needs it ([`on_loopback`]).
fn http_on_loopback() -> HttpVerifier {
    HttpVerifier::new(no_cluster(), on_loopback())
}

#[tokio::test]
async fn the_http_verifier_passes_fails_and_cannot_judge_at_one_request_a_look() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/ready"))
        .and(header("x-probe", "hecate"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ready": true})))
        .mount(&server)
        .await;
    Mock::given(path("/broken"))
        .respond_with(ResponseTemplate::new(500).set_body_string("oops"))
        .mount(&server)
        .await;
    let verifier = http_on_loopback();
    let ready = format!("{}/ready", server.uri());

    let (passed, took) = look_timed(
        &verifier,
        "shop",
        &json!({"url": ready, "successIf": "json.ready == true",
                "headers": {"X-Probe": "hecate"}, "interval": "10s"}),
    )
    .await;
    let passed = passed.unwrap();
    assert_eq!(
        (passed.seen, passed.value.as_str()),
        (Seen::Pass, "HTTP 200")
    );
    assert_eq!(passed.message, format!("{ready} answered 200"));
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    eprintln!("one http look: 1 request, {took:?}");

    let not_ready = look(
        &verifier,
        &json!({"url": ready, "successIf": "json.ready == false",
                "headers": {"X-Probe": "hecate"}}),
    )
    .await
    .unwrap();
    assert_eq!(not_ready.seen, Seen::Fail);
    assert!(not_ready.message.contains("does not hold"), "{not_ready:?}");

    let broken = format!("{}/broken", server.uri());
    let failed = look(&verifier, &json!({"url": broken})).await.unwrap();
    assert_eq!(
        (failed.seen, failed.value.as_str()),
        (Seen::Fail, "HTTP 500")
    );
    assert_eq!(
        failed.message,
        format!("{broken} answered 500, not a 2xx status")
    );
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        3,
        "one request a look"
    );

    let closed = format!("http://127.0.0.1:{}/ready", free_port());
    let error = look(&verifier, &json!({"url": closed})).await.unwrap_err();
    assert!(
        matches!(&error, VerifyError::Unanswered(message)
                 if message.starts_with(&format!("{closed}: could not connect"))),
        "{error:?}"
    );

    let unnamed = look(&verifier, &json!({"interval": "1m"}))
        .await
        .unwrap_err();
    assert_eq!(unnamed.to_string(), "http verification: url is required");
}

#[tokio::test]
async fn the_http_verifier_reaches_only_what_http_steps_may() {
    let server = MockServer::start().await;
    Mock::given(path("/ready"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    // Without `--allow-local-http`, loopback is refused before any request.
    let verifier = HttpVerifier::new(no_cluster(), Reach::default());
    let error = look(
        &verifier,
        &json!({"url": format!("{}/ready", server.uri())}),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&error, VerifyError::Config { problem, .. } if problem.contains("--allow-local-http")),
        "{error:?}"
    );
    // The controller's own listeners are refused even with it.
    let own = Reach {
        local: true,
        own: vec![*server.address()],
    };
    let verifier = HttpVerifier::new(no_cluster(), own);
    let error = look(
        &verifier,
        &json!({"url": format!("{}/ready", server.uri())}),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&error, VerifyError::Config { problem, .. } if problem.contains("controller itself")),
        "{error:?}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_prometheus_verifier_reaches_only_what_http_steps_may() {
    let server = MockServer::start().await;
    let with = json!({"address": server.uri(), "query": "up", "successIf": "result > 0"});
    let verifier = PrometheusVerifier::new(no_cluster(), Reach::default());
    let error = look(&verifier, &with).await.unwrap_err();
    assert!(
        matches!(&error, VerifyError::Config { problem, .. } if problem.contains("--allow-local-http")),
        "{error:?}"
    );
    let own = Reach {
        local: true,
        own: vec![*server.address()],
    };
    let error = look(&PrometheusVerifier::new(no_cluster(), own), &with)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, VerifyError::Config { problem, .. } if problem.contains("controller itself")),
        "{error:?}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// A Gate that lists the most verifications it may, each asking for a look every
/// millisecond, sends no request at all: an interval under the floor is a look that
/// cannot judge, said as such on the crossing (#50; before, 10,000 requests a
/// crossing). Through the Gate reconciler, with the real `http` verifier.
#[tokio::test]
async fn verifications_that_look_too_often_are_refused_before_a_crossing() {
    use crate::harness::{Harness, auto_gate, bundle, create_gate, gate_spec};
    use hecate_steps::health;
    use hecate_types::{ConditionStatus, Verification};

    let server = MockServer::start().await;
    Mock::given(path("/ready"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let mut verifiers = hecate_controller::verify::Verifiers::new();
    verifiers.register(Arc::new(http_on_loopback())).unwrap();
    let h = Harness::with(health::Checkers::new(), verifiers).await;
    let mut spec = gate_spec(true, &[], false);
    spec.verify = (0..hecate_types::limits::MAX_VERIFICATIONS)
        .map(|_| Verification {
            uses: "http".into(),
            with: Some(json!({"url": format!("{}/ready", server.uri()), "interval": "1ms"})),
        })
        .collect();
    create_gate(&h, "staging", spec).await;
    auto_gate(&h, "production", &["staging"]).await;
    bundle(&h.env, "b1").await;
    h.reconcile("staging").await;
    // Judged before any crossing (DECISION 168): nothing crosses, nothing is sent.
    let ready = h.ready("staging").await;
    assert_eq!(
        (ready.status, ready.reason.as_str()),
        (ConditionStatus::False, "InvalidSteps")
    );
    assert!(
        ready.message.starts_with(
            "verify[0] (http): interval: 1ms is too often; looks are at least 5s apart"
        ),
        "{}",
        ready.message
    );
    assert!(h.passages().await.is_empty());
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
    assert!(
        h.bundle("b1")
            .await
            .status
            .unwrap_or_default()
            .cleared
            .is_empty()
    );
}
