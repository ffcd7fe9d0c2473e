//! What a hostile or careless client meets (issue 21): slow and idle connections are
//! cut off, failures are stable sentences without the Kubernetes client's dumps,
//! every refusal over HTTP is a JSON-RPC error, bad input is quoted short, and a
//! namespace-limited identity gets an overview of what it may read.

use std::process::Stdio;
use std::time::{Duration, Instant};

use hecate_mcp::HecateMcp;
use hecate_mcp::http::{Guards, Timeouts, router, serve};
use hecate_ops::Ops;
use hecate_testenv::{Identity, TestEnv};
use pretty_assertions::assert_eq;
use rmcp::model::{ClientConfig, ProtocolVersion};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt as _};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::harness::*;

/// A megabyte of input.
fn megabyte() -> String {
    "a".repeat(1 << 20)
}

/// `server` served as `hecate-mcp --listen` serves it, with `timeouts`; its address.
async fn served(server: HecateMcp, guards: Guards, timeouts: Timeouts) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let app = router(server, guards);
    tokio::spawn(serve(listener, app, timeouts, std::future::pending()));
    address
}

/// Reads until the server closes the connection (or resets it); what it sent, and
/// when it closed. Panics if it is still open after `limit`.
async fn until_closed(stream: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout_at((started + limit).into(), stream.read(&mut buffer)).await {
            Err(_) => panic!(
                "the connection is still open after {limit:?}; received {:?}",
                String::from_utf8_lossy(&received)
            ),
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
        }
    }
    (
        String::from_utf8_lossy(&received).into_owned(),
        started.elapsed(),
    )
}

/// Issue 21 #3: a client that sends nothing, or its headers a line at a time, or its
/// body a byte at a time, is cut off within the limits instead of holding a
/// connection for as long as it likes.
#[tokio::test]
async fn i21_3_slow_and_idle_clients_are_cut_off() {
    let env = TestEnv::new().await;
    let timeouts = Timeouts {
        header_read: Duration::from_secs(1),
        body_read: Duration::from_secs(2),
    };
    let address = served(server(&env, None).await, loopback_guards(), timeouts).await;
    let limit = Duration::from_secs(4);

    // Idle: connected, saying nothing.
    let mut idle = TcpStream::connect(&address).await.unwrap();
    let (_, after) = until_closed(&mut idle, limit).await;
    assert!(
        after >= Duration::from_millis(900),
        "closed after {after:?}"
    );

    // Headers a line every 300 ms, never finished.
    let mut slow = TcpStream::connect(&address).await.unwrap();
    let writer = async {
        slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .unwrap();
        let started = Instant::now();
        while started.elapsed() < limit {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if slow.write_all(b"X-Slow: 1\r\n").await.is_err() {
                return started.elapsed();
            }
            // A closed connection shows on reading before a write fails.
            let mut probe = [0u8; 1];
            if let Ok(Ok(0) | Err(_)) =
                tokio::time::timeout(Duration::from_millis(1), slow.read(&mut probe)).await
            {
                return started.elapsed();
            }
        }
        panic!("slow headers still accepted after {limit:?}");
    };
    let after = writer.await;
    assert!(after < Duration::from_secs(3), "cut off after {after:?}");

    // A body a byte every 300 ms: answered 408 when the body limit passes.
    let mut dribble = TcpStream::connect(&address).await.unwrap();
    dribble
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{",
        )
        .await
        .unwrap();
    let (mut reader, mut writer) = dribble.into_split();
    let dribbling = tokio::spawn(async move {
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if writer.write_all(b" ").await.is_err() {
                break;
            }
        }
    });
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\r\n\r\n") {
        match tokio::time::timeout(limit, reader.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => answer.extend_from_slice(&buffer[..n]),
            Err(_) => panic!("a dribbled body is still being read after {limit:?}"),
        }
    }
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(3));
    dribbling.abort();

    // A client that is not slow is served as before.
    let base = format!("http://{address}");
    let ping = post(
        &base,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        &[],
    )
    .await;
    assert_eq!(ping.status, 200, "{}", ping.body);
}

/// Issue 21 #5: when the Kubernetes API fails or refuses the server's own identity,
/// a caller reads a stable sentence — what was being done — and never the client
/// library's `Status { … }` dump, which names the server's identity and its RBAC.
/// The detail goes to the log.
#[tokio::test]
async fn i21_5_failures_are_stable_sentences_without_dumps() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    pipeline(&env).await;
    let leaks = |said: &str| {
        ["Status {", "ApiError", "ci-bot", "system:"]
            .into_iter()
            .filter(|leak| said.contains(leak))
            .collect::<Vec<_>>()
    };

    // Callers are reviewed by the API server's identity, but the server reads as
    // ci-bot, who may read nothing.
    let reviewer = hecate_access::Reviewer::new(env.client(Identity::HecateApi).await, Vec::new());
    let server = HecateMcp::new(
        Ops::new(env.client(Identity::CiBot).await),
        settings(&env, None),
        Some(reviewer.clone()),
    );
    let guards = Guards {
        reviewer: Some(reviewer),
        ..loopback_guards()
    };
    let base = http(server, guards).await;
    let alice = http_client(&base, Era::Legacy, Some(&token(&env, Identity::Alice))).await;
    let answer = result(&alice, "why_stuck", json!({"gate": "production"})).await;
    assert_eq!(answer.is_error, Some(true));
    let said = text(&answer);
    assert_eq!(leaks(&said), Vec::<&str>::new(), "{said}");
    assert!(
        said.contains("this server's own Kubernetes credentials may not do that"),
        "{said}"
    );
    let problem = answer.structured_content.unwrap()["error"].clone();
    assert_eq!(problem["class"], "Forbidden", "{problem}");
    assert_eq!(leaks(&problem.to_string()), Vec::<&str>::new());

    // A token the server cannot review (ci-bot may not create TokenReviews): the
    // unauthenticated caller learns nothing about the server.
    let blind = hecate_access::Reviewer::new(env.client(Identity::CiBot).await, Vec::new());
    let server = HecateMcp::new(
        Ops::new(env.client(Identity::CiBot).await),
        settings(&env, None),
        Some(blind.clone()),
    );
    let guards = Guards {
        reviewer: Some(blind),
        ..loopback_guards()
    };
    let base = http(server, guards).await;
    let refused = post(
        &base,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        &[("authorization", "Bearer some-token")],
    )
    .await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.json()["error"]["code"], -32603);
    assert_eq!(leaks(&refused.body), Vec::<&str>::new(), "{}", refused.body);

    // Over stdio the identity is the person's own: the API server's sentence (which
    // names the permission) is kept, the dump is not.
    let own = HecateMcp::new(
        Ops::new(env.client(Identity::CiBot).await),
        settings(&env, None),
        None,
    );
    let client = piped(own, Era::Legacy).await;
    let said = text(&result(&client, "why_stuck", json!({"gate": "production"})).await);
    // Explain reads the Gate, Bundles and Passages at once; whichever is refused first.
    assert!(
        said.contains("the Kubernetes API server refused") && said.contains("cannot "),
        "{said}"
    );
    assert!(!said.contains("Status {"), "{said}");
    assert!(!said.contains("ApiError"), "{said}");
}

/// Raw HTTP/1.1 on `address`: `head` (request line and headers, without the blank
/// line), then `chunks` of body. The answer's status and body.
async fn raw(address: &str, head: &str, chunks: &[&[u8]]) -> (u16, String) {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream
        .write_all(format!("{head}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    for chunk in chunks {
        // The server may answer (and stop reading) before the body is all sent.
        if stream.write_all(chunk).await.is_err() {
            break;
        }
    }
    let (answer, _) = until_closed(&mut stream, Duration::from_secs(10)).await;
    let status = answer
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    (status, body)
}

/// Issue 21 #7: the rejections rmcp makes itself — a wrong `Content-Type`, an
/// `Accept` without JSON and SSE, a protocol revision nobody speaks — are JSON-RPC
/// errors like the guards' own, and a chunked body over 4 MiB is 413, not a parse
/// error.
#[tokio::test]
async fn i21_7_every_refusal_over_http_is_a_json_rpc_error() {
    let env = TestEnv::new().await;
    let base = http(server(&env, None).await, loopback_guards()).await;
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}).to_string();
    let client = reqwest::Client::new();
    let ask = |content_type: &str, accept: &str, version: Option<&str>| {
        let mut request = client
            .post(format!("{base}/mcp"))
            .header("content-type", content_type)
            .header("accept", accept)
            .body(ping.clone());
        if let Some(version) = version {
            request = request.header("mcp-protocol-version", version);
        }
        send(request)
    };
    let json_rpc = |raw: &Raw| -> Value {
        assert!(
            raw.headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{:?}",
            raw.headers
        );
        let answer = raw.json();
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        answer["error"].clone()
    };

    let media = ask("text/plain", "application/json, text/event-stream", None).await;
    assert_eq!(media.status, 415, "{}", media.body);
    let error = json_rpc(&media);
    assert_eq!(error["code"], -32600, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("application/json"),
        "{error}"
    );

    let accept = ask("application/json", "text/html", None).await;
    assert_eq!(accept.status, 406, "{}", accept.body);
    let error = json_rpc(&accept);
    assert_eq!(error["code"], -32600, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("text/event-stream"),
        "{error}"
    );

    // A message that fits no request of its method: invalid params, not a media type.
    let nameless = post(
        &base,
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"arguments": {}}}),
        &[],
    )
    .await;
    assert_eq!(nameless.status, 400, "{}", nameless.body);
    let error = json_rpc(&nameless);
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(nameless.json()["id"], 9, "{}", nameless.body);

    let version = ask(
        "application/json",
        "application/json, text/event-stream",
        Some("1999-01-01"),
    )
    .await;
    assert_eq!(version.status, 400, "{}", version.body);
    let error = json_rpc(&version);
    assert_eq!(error["code"], -32022, "{error}");
    assert_eq!(error["data"]["requested"], "1999-01-01");
    assert_eq!(error["data"]["supported"][0], "2026-07-28", "{error}");

    // 4 MiB and a little more, in chunks, with no Content-Length.
    let address = base.trim_start_matches("http://");
    let mebibyte = vec![b' '; 1 << 20];
    let chunk = format!("{:x}\r\n", mebibyte.len());
    let mut body: Vec<&[u8]> = Vec::new();
    for _ in 0..5 {
        body.extend([chunk.as_bytes(), &mebibyte[..], b"\r\n"]);
    }
    body.push(b"0\r\n\r\n");
    let (status, answer) = raw(
        address,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Transfer-Encoding: chunked",
        &body,
    )
    .await;
    assert_eq!(status, 413, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
}

/// Issue 21 #8: a megabyte sent as a tool's name, an argument's value, an argument's
/// name, or as the arguments themselves, comes back quoted to a short prefix — never
/// whole — over HTTP and over stdio.
#[tokio::test]
async fn i21_8_bad_input_is_quoted_short() {
    let env = TestEnv::new().await;
    let big = megabyte();
    let base = http(server(&env, None).await, loopback_guards()).await;
    let call = |params: Value| json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": params});
    for (what, params) in [
        ("a tool's name", json!({"name": big, "arguments": {}})),
        (
            "an argument's value",
            json!({"name": "why_stuck", "arguments": {"gate": big}}),
        ),
        (
            "a namespace",
            json!({"name": "list_gates", "arguments": {"namespace": big}}),
        ),
        (
            "an argument's name",
            json!({"name": "why_stuck", "arguments": {big.clone(): 1, "gate": "production"}}),
        ),
        (
            "the arguments",
            json!({"name": "why_stuck", "arguments": big}),
        ),
    ] {
        let answer = post(&base, &call(params), &[]).await;
        assert_eq!(
            answer.status,
            if what == "the arguments" { 400 } else { 200 },
            "{what}"
        );
        assert!(
            answer.body.len() < 4096,
            "{what}: {} bytes back: {}",
            answer.body.len(),
            hecate_access::quote::quote(&answer.body)
        );
        let answer = answer.json();
        let said = answer["error"]["message"]
            .as_str()
            .or(answer["result"]["content"][0]["text"].as_str())
            .unwrap_or_else(|| panic!("{what}: neither an error nor a result: {answer}"));
        if what == "the arguments" {
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            assert!(said.contains("must be a JSON object"), "{answer}");
        } else {
            assert!(
                said.contains("aaaa"),
                "{what}: names what it refused: {answer}"
            );
        }
    }

    // A method nobody has.
    let answer = post(
        &base,
        &json!({"jsonrpc": "2.0", "id": 8, "method": big}),
        &[],
    )
    .await;
    assert!(answer.body.len() < 1024, "{} bytes back", answer.body.len());
    assert_eq!(answer.json()["error"]["code"], -32601, "{}", answer.body);

    let client = piped(server(&env, None).await, Era::Modern).await;
    let unknown = crate::harness::call(&client, &big, json!({}))
        .await
        .unwrap_err();
    assert_eq!(error_code(&unknown), -32602);
    assert!(
        unknown.to_string().len() < 1024,
        "{} bytes",
        unknown.to_string().len()
    );
    let invalid = result(&client, "get_passage", json!({"name": big})).await;
    assert_eq!(invalid.is_error, Some(true));
    let said = text(&invalid);
    assert!(said.len() < 1024, "{} bytes", said.len());
    assert!(said.contains("(1048576 bytes)"), "{said}");
}

/// Issue 21 #9: without `--auth` the server acts as its kubeconfig's identity, and
/// `overview` lists the namespaces that identity may read — judged by hecate-access
/// as the HTTP API judges a caller's — instead of failing Forbidden on a cluster-wide
/// list. Alice may read only the test's namespace; ci-bot may read nothing.
#[tokio::test]
async fn i21_9_overview_for_a_namespace_limited_identity() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    pipeline(&env).await;
    let dir = tempfile::tempdir().unwrap();
    env.endpoint().write_kubeconfigs(dir.path()).unwrap();
    let namespaces = |overview: &Value| -> Vec<String> {
        overview["namespaces"]
            .as_array()
            .unwrap_or_else(|| panic!("{overview}"))
            .iter()
            .map(|n| n["namespace"].as_str().unwrap().to_string())
            .collect()
    };
    for (who, expected) in [
        ("alice", vec![env.namespace.clone()]),
        ("ci-bot", Vec::new()),
    ] {
        let kubeconfig = dir.path().join(format!("kubeconfig-{who}"));
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hecate-mcp"));
        command
            .args(["--kubeconfig", kubeconfig.to_str().unwrap()])
            .args(["--namespace", &env.namespace])
            .env_remove("KUBERNETES_SERVICE_HOST")
            .kill_on_drop(true);
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut config = ClientConfig::default();
        config.protocol_version = ProtocolVersion::V_2025_06_18;
        let client = config
            .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await
            .unwrap();
        let overview = structured(&result(&client, "overview", json!({})).await);
        assert_eq!(namespaces(&overview), expected, "{who}: {overview}");
        if who == "alice" {
            assert_eq!(
                overview["namespaces"][0]["gates"].as_array().unwrap().len(),
                3
            );
        }
        client.cancel().await.unwrap();
    }

    // In-process, the same judgement: a server told whom it acts as.
    let alice = env.client(Identity::Alice).await;
    let server =
        HecateMcp::new(Ops::new(alice.clone()), settings(&env, None), None).acting_as(alice);
    let client = piped(server, Era::Modern).await;
    let overview = structured(&result(&client, "overview", json!({})).await);
    assert_eq!(namespaces(&overview), vec![env.namespace.clone()]);
}
