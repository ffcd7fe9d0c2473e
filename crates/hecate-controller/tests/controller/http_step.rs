//! `http` (spec controller.md §5.15) called directly: wiremock as the endpoint, a real
//! API server for the Secrets `secretHeaders` read (as the controller's own identity
//! under its deployed ClusterRole). Every reason the step can give, with its
//! terminal flag, and the output kept on failure.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use hecate_steps::http::Http;
use hecate_steps::runner::{Runner, StepContext, StepError, StepResult};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Bundle, BundleSpec};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::process::eventually;
use hecate_steps::reason::Reason;

/// A client for an API server that is not there: for configurations that read no
/// Secret.
fn no_cluster() -> kube::Client {
    let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
    kube::Client::try_from(config).unwrap()
}

/// The step as the tests' world needs it: its servers listen on loopback, which an
/// operator allows with `--allow-local-http`.
fn on_loopback(client: kube::Client) -> Http {
    let reach = hecate_steps::reach::Reach {
        local: true,
        ..Default::default()
    };
    Http::reaching(client, reach)
}

/// Runs `step` with `config` as `with:` in namespace `namespace`.
async fn run(step: &Http, namespace: &str, config: Value) -> Result<StepResult, StepError> {
    let bundle = Bundle::new("app-0123456789ab", BundleSpec::default());
    let outputs = BTreeMap::new();
    let ctx = StepContext {
        namespace,
        gate: "dev",
        passage: "dev-1",
        bundle: &bundle,
        actor: "controller",
        work_dir: Path::new("/nonexistent"),
        config,
        outputs: &outputs,
        attempt: 0,
        failed: false,
        traceparent: "",
        started_at: "2026-12-01T02:00:00Z".parse::<Timestamp>().unwrap(),
    };
    step.run(&ctx).await
}

/// The reason and terminal flag of a failure, and its output.
fn refused(result: Result<StepResult, StepError>) -> (Reason, bool, Option<Value>, String) {
    let error = result.expect_err("the step should fail");
    (error.reason, error.terminal, error.output, error.message)
}

/// The only request `server` received.
async fn the_request(server: &MockServer) -> Request {
    let mut requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    requests.remove(0)
}

#[tokio::test]
async fn a_get_or_a_post_is_sent_as_configured_and_the_answer_recorded() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .and(header("x-team", "payments"))
        .respond_with(ResponseTemplate::new(200).set_body_string(r#"{"n":3,"ok":true}"#))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/hook"))
        .and(header("content-type", "application/json"))
        .and(body_json(json!({"gate": "dev", "n": 1})))
        .respond_with(ResponseTemplate::new(202).set_body_string("queued"))
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .and(path("/hook"))
        .and(header("content-type", "application/vnd.acme+json"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&server)
        .await;
    let step = on_loopback(no_cluster());

    // No body: GET. The JSON answer is parsed into `json`.
    let config =
        json!({"url": format!("{}/health", server.uri()), "headers": {"X-Team": "payments"}});
    let done = run(&step, "ns", config).await.unwrap();
    assert_eq!(
        done.output,
        Some(json!({
            "status": 200,
            "body": r#"{"n":3,"ok":true}"#,
            "truncated": false,
            "json": {"ok": true, "n": 3},
        }))
    );
    assert!(done.message.contains("answered 200"), "{}", done.message);

    // A body: POST, as JSON. A body that is not JSON has no `json` output.
    let config = json!({"url": format!("{}/hook", server.uri()), "body": {"gate": "dev", "n": 1}});
    let done = run(&step, "ns", config).await.unwrap();
    assert_eq!(
        done.output,
        Some(json!({"status": 202, "body": "queued", "truncated": false}))
    );

    // A method in any case is upper-cased; a Content-Type of one's own is kept.
    let config = json!({
        "url": format!("{}/hook", server.uri()),
        "method": "put",
        "headers": {"Content-Type": "application/vnd.acme+json"},
        "body": [1, 2],
    });
    let done = run(&step, "ns", config).await.unwrap();
    assert_eq!(done.output.unwrap()["status"], json!(204));
}

#[tokio::test]
async fn a_long_answer_is_kept_to_its_first_4_kib() {
    let server = MockServer::start().await;
    Mock::given(path("/big"))
        .respond_with(ResponseTemplate::new(200).set_body_string("x".repeat(10_000)))
        .mount(&server)
        .await;
    Mock::given(path("/exact"))
        .respond_with(ResponseTemplate::new(200).set_body_string("y".repeat(4096)))
        .mount(&server)
        .await;
    let step = on_loopback(no_cluster());

    let done = run(&step, "ns", json!({"url": format!("{}/big", server.uri())}))
        .await
        .unwrap();
    let output = done.output.unwrap();
    assert_eq!(output["body"].as_str().unwrap().len(), 4096);
    assert_eq!(output["truncated"], json!(true));

    let done = run(
        &step,
        "ns",
        json!({"url": format!("{}/exact", server.uri())}),
    )
    .await
    .unwrap();
    let output = done.output.unwrap();
    assert_eq!(output["body"].as_str().unwrap().len(), 4096);
    assert_eq!(output["truncated"], json!(false));
}

#[tokio::test]
async fn a_refused_status_is_terminal_below_500_and_forgivable_from_500() {
    let server = MockServer::start().await;
    for (at, status) in [("/busy", 503), ("/gone", 404), ("/ok", 200)] {
        Mock::given(path(at))
            .respond_with(ResponseTemplate::new(status).set_body_json(json!({"at": at})))
            .mount(&server)
            .await;
    }
    let step = on_loopback(no_cluster());
    let url = |at: &str| format!("{}{at}", server.uri());

    let (reason, terminal, output, message) =
        refused(run(&step, "ns", json!({"url": url("/busy")})).await);
    assert_eq!((reason, terminal), (Reason::HttpFailed, false));
    assert!(message.contains("answered 503"), "{message}");
    // The answer is recorded even though the step failed.
    assert_eq!(output.unwrap()["json"], json!({"at": "/busy"}));

    let (reason, terminal, output, _) =
        refused(run(&step, "ns", json!({"url": url("/gone")})).await);
    assert_eq!((reason, terminal), (Reason::HttpFailed, true));
    assert_eq!(output.unwrap()["status"], json!(404));

    // expectStatus replaces "any 2xx", in both directions.
    let done = run(
        &step,
        "ns",
        json!({"url": url("/gone"), "expectStatus": [404, 410]}),
    )
    .await
    .unwrap();
    assert_eq!(done.output.unwrap()["status"], json!(404));
    let (reason, terminal, _, _) = refused(
        run(
            &step,
            "ns",
            json!({"url": url("/ok"), "expectStatus": [201]}),
        )
        .await,
    );
    assert_eq!((reason, terminal), (Reason::HttpFailed, true));
}

#[tokio::test]
async fn success_if_judges_the_answer_and_a_broken_one_is_a_configuration_mistake() {
    let server = MockServer::start().await;
    Mock::given(path("/smoke"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"healthy": false, "version": "1.2"})),
        )
        .mount(&server)
        .await;
    let step = on_loopback(no_cluster());
    let url = format!("{}/smoke", server.uri());
    let with = |success_if: &str| json!({"url": url, "successIf": success_if});

    let done = run(
        &step,
        "ns",
        with("status == 200 && json.version startsWith '1.' && body contains 'healthy'"),
    )
    .await
    .unwrap();
    assert_eq!(done.output.unwrap()["status"], json!(200));

    let (reason, terminal, output, message) = refused(run(&step, "ns", with("json.healthy")).await);
    assert_eq!((reason, terminal), (Reason::HttpFailed, true));
    assert!(message.contains("does not hold"), "{message}");
    assert_eq!(output.unwrap()["json"]["healthy"], json!(false));

    // A condition that cannot give true or false is a configuration mistake; the
    // answer it was asked about is still recorded.
    for broken in [
        "json.version",      // not a boolean
        "json.absent.field", // reads through null
    ] {
        let (reason, terminal, output, message) = refused(run(&step, "ns", with(broken)).await);
        assert_eq!(
            (reason, terminal),
            (Reason::InvalidConfig, true),
            "{broken}: {message}"
        );
        assert!(message.starts_with("successIf:"), "{broken}: {message}");
        assert!(output.is_some(), "{broken}: the answer is still recorded");
    }
    let asked = server.received_requests().await.unwrap().len();

    // One that does not compile is refused before any request (and at Gate time).
    for broken in [
        "gate == 'dev'", // only status, body and json exist here
        "status ==",     // does not parse
    ] {
        let (reason, terminal, output, message) = refused(run(&step, "ns", with(broken)).await);
        assert_eq!(
            (reason, terminal),
            (Reason::InvalidConfig, true),
            "{broken}: {message}"
        );
        assert!(message.contains("successIf"), "{broken}: {message}");
        assert_eq!(output, None, "{broken}: nothing was sent");
    }
    assert_eq!(server.received_requests().await.unwrap().len(), asked);
}

#[tokio::test]
async fn an_endpoint_that_does_not_answer_is_unreachable_and_forgivable() {
    let server = MockServer::start().await;
    Mock::given(path("/slow"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(5)))
        .mount(&server)
        .await;
    let step = on_loopback(no_cluster());

    let (reason, terminal, output, message) =
        refused(run(&step, "ns", json!({"url": "http://127.0.0.1:1/hook"})).await);
    assert_eq!((reason, terminal), (Reason::HttpUnreachable, false));
    assert!(message.contains("could not connect"), "{message}");
    assert_eq!(output, None, "there was no answer to record");

    let started = std::time::Instant::now();
    let config = json!({"url": format!("{}/slow", server.uri()), "timeout": "300ms"});
    let (reason, terminal, _, message) = refused(run(&step, "ns", config).await);
    assert_eq!((reason, terminal), (Reason::HttpUnreachable, false));
    assert!(message.contains("no answer in time"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the timeout was not kept"
    );

    // An answer cut off mid-body: the status came, the body did not.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request).await;
        let _ = socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this")
            .await;
        // Dropped: the connection closes 91 bytes short.
    });
    let (reason, terminal, _, message) =
        refused(run(&step, "ns", json!({"url": format!("http://{at}/cut")})).await);
    assert_eq!(
        (reason, terminal),
        (Reason::HttpUnreachable, false),
        "{message}"
    );
    assert!(message.contains("reading the answer"), "{message}");
}

#[tokio::test]
async fn configuration_mistakes_are_terminal_and_send_nothing() {
    let server = MockServer::start().await;
    let step = on_loopback(no_cluster());
    let url = format!("{}/hook", server.uri());
    for (config, words) in [
        (json!({"url": url, "notAKey": 1}), "unknown field `notAKey`"),
        (json!({"url": "ftp://example.com/x"}), "http"),
        (json!({}), "url"),
        (json!({"url": url, "method": "GE T"}), "not an HTTP method"),
        (json!({"url": url, "timeout": "soon"}), "timeout"),
        (json!({"url": url, "expectStatus": [99]}), "expectStatus"),
        // Headers that cannot be sent are mistakes too, not an unreachable endpoint.
        (
            json!({"url": url, "headers": {"Bad Header": "x"}}),
            "not a header name",
        ),
        (
            json!({"url": url, "headers": {"X-Two": "a\nb"}}),
            "not a header value",
        ),
        (
            json!({"url": url, "secretHeaders": [{"name": "Authorization"}]}),
            "secretRef",
        ),
    ] {
        let (reason, terminal, _, message) = refused(run(&step, "ns", config.clone()).await);
        assert_eq!(
            (reason, terminal),
            (Reason::InvalidConfig, true),
            "{config}: {message}"
        );
        assert!(message.contains(words), "{config}: {message}");
    }
    assert!(server.received_requests().await.unwrap().is_empty());
}

use hecate_testenv::fixtures::usable_secret as secret;

#[tokio::test]
async fn secret_headers_are_read_when_sent_override_plain_ones_and_stay_out_of_the_record() {
    let env = TestEnv::new().await;
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    env.create(secret(
        "hook",
        &[
            ("token", "s3cret-token"),
            ("api-key", "k-123"),
            ("blank", ""),
        ],
    ))
    .await;
    let client = env.client(Identity::HecateController).await;
    let secrets = Api::<Secret>::namespaced(client.clone(), &env.namespace);
    // RBAC reaches the authorizer a moment after it is written.
    eventually(Duration::from_secs(10), "the controller's role", || async {
        secrets.get_opt("hook").await.ok().flatten()
    })
    .await;
    let server = MockServer::start().await;
    Mock::given(path("/hook"))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&server)
        .await;
    let step = on_loopback(client);
    let url = format!("{}/hook", server.uri());

    let config = json!({
        "url": url,
        "headers": {"Authorization": "plain, overridden", "X-Plain": "yes"},
        "secretHeaders": [
            {"name": "Authorization", "prefix": "Bearer ", "secretRef": {"name": "hook"}},
            {"name": "X-Api-Key", "secretRef": {"name": "hook"}, "key": "api-key"},
        ],
    });
    let done = run(&step, &env.namespace, config).await.unwrap();
    let request = the_request(&server).await;
    let sent = |name: &str| -> Vec<String> {
        request
            .headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(sent("authorization"), ["Bearer s3cret-token"]);
    assert_eq!(sent("x-api-key"), ["k-123"]);
    assert_eq!(sent("x-plain"), ["yes"]);
    let recorded = format!("{} {}", done.message, done.output.unwrap());
    assert!(!recorded.contains("s3cret"), "{recorded}");

    // A missing Secret, a missing key and an empty value are configuration mistakes,
    // found before anything is sent.
    for (secret, key) in [("absent", "token"), ("hook", "nokey"), ("hook", "blank")] {
        let config = json!({
            "url": url,
            "secretHeaders": [{"name": "X-Key", "secretRef": {"name": secret}, "key": key}],
        });
        let (reason, terminal, _, message) = refused(run(&step, &env.namespace, config).await);
        assert_eq!(
            (reason, terminal),
            (Reason::InvalidConfig, true),
            "{secret}/{key}: {message}"
        );
        assert!(message.contains(secret), "{message}");
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

/// Issue 50, item 6: a Gate author who may not read Secrets named one in
/// `secretHeaders`, and the controller sent it to her server. A Secret is used only
/// once it opts in (`hecate.dev/usable=true`, DECISION 147): before that the step fails
/// `InvalidConfig` naming the label to add, and sends nothing.
#[tokio::test]
async fn secret_headers_come_only_from_a_secret_that_opts_in() {
    let env = TestEnv::new().await;
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    env.create(hecate_testenv::fixtures::unlabelled_secret(
        "payments",
        &[("api-key", "n0t-for-the-hook")],
    ))
    .await;
    let client = env.client(Identity::HecateController).await;
    let secrets = Api::<Secret>::namespaced(client.clone(), &env.namespace);
    eventually(Duration::from_secs(10), "the controller's role", || async {
        secrets.get_opt("payments").await.ok().flatten()
    })
    .await;
    let server = MockServer::start().await;
    Mock::given(path("/hook"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let step = on_loopback(client);
    let config = json!({
        "url": format!("{}/hook", server.uri()),
        "secretHeaders": [{"name": "X-Api-Key", "secretRef": {"name": "payments"}, "key": "api-key"}],
    });

    let (reason, terminal, _, message) = refused(run(&step, &env.namespace, config.clone()).await);
    assert_eq!(
        (reason, terminal),
        (Reason::InvalidConfig, true),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "credentials Secret payments in namespace {ns} is not labelled hecate.dev/usable=true",
            ns = env.namespace
        )) && message.contains("label secret payments hecate.dev/usable=true"),
        "{message}"
    );
    assert!(!message.contains("n0t-for"), "{message}");
    assert!(
        server.received_requests().await.unwrap().is_empty(),
        "nothing is sent"
    );

    hecate_testenv::fixtures::set_usable(&env, "payments", true).await;
    run(&step, &env.namespace, config).await.unwrap();
    assert_eq!(
        the_request(&server).await.headers.get("x-api-key").unwrap(),
        "n0t-for-the-hook"
    );
}

#[tokio::test]
async fn secret_headers_never_follow_a_redirect_to_another_origin() {
    let env = TestEnv::new().await;
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    env.create(secret("hook", &[("api-key", "k-123")])).await;
    let client = env.client(Identity::HecateController).await;
    let secrets = Api::<Secret>::namespaced(client.clone(), &env.namespace);
    eventually(Duration::from_secs(10), "the controller's role", || async {
        secrets.get_opt("hook").await.ok().flatten()
    })
    .await;
    let elsewhere = MockServer::start().await;
    Mock::given(path("/collect"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&elsewhere)
        .await;
    let server = MockServer::start().await;
    Mock::given(path("/away"))
        .respond_with(
            ResponseTemplate::new(302)
                .insert_header("location", format!("{}/collect", elsewhere.uri()).as_str()),
        )
        .mount(&server)
        .await;
    Mock::given(path("/moved"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/hook"))
        .mount(&server)
        .await;
    Mock::given(path("/hook"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let step = on_loopback(client);
    let with_secret = |url: String| {
        json!({
            "url": url,
            "secretHeaders": [{"name": "X-Api-Key", "secretRef": {"name": "hook"}, "key": "api-key"}],
        })
    };

    // Another origin: not followed, so the secret goes nowhere but where it was meant.
    let (reason, terminal, _, message) = refused(
        run(
            &step,
            &env.namespace,
            with_secret(format!("{}/away", server.uri())),
        )
        .await,
    );
    assert_eq!((reason, terminal), (Reason::HttpFailed, true), "{message}");
    assert!(message.contains("another origin"), "{message}");
    assert!(elsewhere.received_requests().await.unwrap().is_empty());

    // The same origin: followed, the secret with it.
    run(
        &step,
        &env.namespace,
        with_secret(format!("{}/moved", server.uri())),
    )
    .await
    .unwrap();
    let hook: Vec<Request> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == "/hook")
        .collect();
    assert_eq!(hook.len(), 1);
    assert_eq!(hook[0].headers.get("x-api-key").unwrap(), "k-123");

    // Without secret headers a redirect elsewhere is followed as before.
    run(
        &step,
        &env.namespace,
        json!({"url": format!("{}/away", server.uri())}),
    )
    .await
    .unwrap();
    assert_eq!(elsewhere.received_requests().await.unwrap().len(), 1);
}

/// Issue 30: an `http` step read the controller's own metrics on loopback. This
/// host's addresses are the operator's to open (`--allow-local-http`), and the
/// controller's own listeners stay closed either way — asked directly, or reached by a
/// redirect.
#[tokio::test]
async fn this_hosts_addresses_need_the_operators_flag_and_the_controllers_own_never_open() {
    let server = MockServer::start().await;
    Mock::given(path("/hook"))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&server)
        .await;
    // Stands in for the controller's metrics listener.
    let own = MockServer::start().await;
    Mock::given(path("/metrics"))
        .respond_with(ResponseTemplate::new(200).set_body_string("secret_metric 1"))
        .mount(&own)
        .await;
    Mock::given(path("/to-own"))
        .respond_with(
            ResponseTemplate::new(302)
                .insert_header("location", format!("{}/metrics", own.uri()).as_str()),
        )
        .mount(&server)
        .await;
    let port = server.address().port();

    // The flags' defaults: no loopback, however it is spelt.
    let strict = Http::new(no_cluster());
    for url in [
        format!("{}/hook", server.uri()),
        format!("http://localhost:{port}/hook"),
        format!("http://[::ffff:127.0.0.1]:{port}/hook"),
        format!("http://0.0.0.0:{port}/hook"),
    ] {
        let (reason, terminal, _, message) = refused(run(&strict, "ns", json!({"url": url})).await);
        assert_eq!((reason, terminal), (Reason::NotAllowed, true), "{message}");
        assert!(message.contains("--allow-local-http"), "{message}");
    }
    assert!(server.received_requests().await.unwrap().is_empty());

    // With the flag loopback answers, but not where the controller itself listens.
    let reach = hecate_steps::reach::Reach {
        local: true,
        own: vec![*own.address()],
    };
    let lenient = Http::reaching(no_cluster(), reach);
    run(
        &lenient,
        "ns",
        json!({"url": format!("{}/hook", server.uri())}),
    )
    .await
    .unwrap();
    for url in [
        format!("{}/metrics", own.uri()),
        format!("http://localhost:{}/metrics", own.address().port()),
        format!("{}/to-own", server.uri()),
    ] {
        let (reason, terminal, output, message) =
            refused(run(&lenient, "ns", json!({"url": url})).await);
        assert_eq!((reason, terminal), (Reason::NotAllowed, true), "{message}");
        assert!(
            message.contains("the controller itself serves"),
            "{message}"
        );
        assert!(!message.contains("secret_metric"), "{message}");
        assert_eq!(output, None, "{message}");
    }
    assert!(own.received_requests().await.unwrap().is_empty());
}
