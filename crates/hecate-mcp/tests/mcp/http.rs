//! The streamable HTTP transport: both protocol eras through rmcp's client, and what
//! only raw HTTP can show — the guards' order, the protocol header, 202 and 405.

use std::time::Duration;

use hecate_mcp::HecateMcp;
use hecate_mcp::http::Guards;
use hecate_ops::Ops;
use hecate_testenv::{Identity, TestEnv};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::harness::*;

const MODERN_META: &str = "2026-07-28";

fn modern(method: &str, params: serde_json::Value) -> serde_json::Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN_META,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

#[tokio::test]
async fn both_protocol_eras_over_http() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let base = http(server(&env, None).await, loopback_guards()).await;
    let mut answers = Vec::new();
    for era in [Era::Legacy, Era::Modern] {
        let client = http_client(&base, era, None).await;
        let names = tool_names(&client).await;
        assert_eq!(names.len(), 15, "{era:?}: {names:?}");
        let answer = result(&client, "why_stuck", json!({"gate": "production"})).await;
        answers.push(structured(&answer));
        let refused = call(&client, "teleport", json!({})).await.unwrap_err();
        assert_eq!(error_code(&refused), -32602, "{era:?}");
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0]["state"], "Blocked");
}

/// Over HTTP the server answers from the watch-backed cache (`run::cached`, what
/// `hecate-mcp --listen` serves with): once it has listed, a tool call costs the API
/// server nothing, and answers what a direct read answers.
#[tokio::test]
async fn over_http_tool_calls_read_the_cache() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let (recording, log) = env
        .endpoint()
        .recording_client(Identity::Admin)
        .await
        .unwrap();
    // The watches run on their own client, so the log holds only what calls ask for.
    let (ops, cache) = hecate_mcp::run::cached(Ops::new(recording), env.admin.clone());
    tokio::time::timeout(Duration::from_secs(30), cache.ready())
        .await
        .expect("the cache lists every kind within 30 s");
    let base = http(
        HecateMcp::new(ops, settings(&env, None), None),
        loopback_guards(),
    )
    .await;
    let mcp = http_client(&base, Era::Legacy, None).await;
    let cached = structured(&result(&mcp, "why_stuck", json!({"gate": "production"})).await);
    assert_eq!(log.requests(), Vec::<String>::new(), "no request per call");

    let direct = piped(server(&env, None).await, Era::Legacy).await;
    let answer = structured(&result(&direct, "why_stuck", json!({"gate": "production"})).await);
    assert_eq!(cached, answer);
    assert_eq!(cached["gate"], "production");
}

#[tokio::test]
async fn the_protocol_version_header_is_honoured() {
    let env = TestEnv::new().await;
    let base = http(server(&env, None).await, loopback_guards()).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});

    // A legacy client names its revision in the header after the handshake: the
    // answer is in that revision's shape (no `resultType`), and the header is echoed.
    let legacy = post(&base, &list, &[("mcp-protocol-version", "2025-06-18")]).await;
    assert_eq!(legacy.status, 200, "{}", legacy.body);
    assert_eq!(legacy.headers["mcp-protocol-version"], "2025-06-18");
    assert!(
        legacy.json()["result"].get("resultType").is_none(),
        "{}",
        legacy.body
    );
    assert_eq!(
        legacy.json()["result"]["tools"].as_array().unwrap().len(),
        15
    );

    // The stateless revision: header and `_meta` agree.
    let current = post(
        &base,
        &modern("tools/list", json!({})),
        &[
            ("mcp-protocol-version", MODERN_META),
            ("mcp-method", "tools/list"),
        ],
    )
    .await;
    assert_eq!(current.status, 200, "{}", current.body);
    assert_eq!(current.json()["result"]["resultType"], "complete");
    assert_eq!(current.headers["mcp-protocol-version"], MODERN_META);

    // A revision nobody speaks is refused, not echoed and ignored.
    let unknown = post(&base, &list, &[("mcp-protocol-version", "1999-01-01")]).await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    assert!(unknown.body.contains("1999-01-01"), "{}", unknown.body);

    // server/discover answers the supported revisions, newest first.
    let discover = post(
        &base,
        &modern("server/discover", json!({})),
        &[
            ("mcp-protocol-version", MODERN_META),
            ("mcp-method", "server/discover"),
        ],
    )
    .await;
    assert_eq!(discover.status, 200, "{}", discover.body);
    let result = &discover.json()["result"];
    assert_eq!(result["supportedVersions"][0], MODERN_META);
    assert!(
        result["instructions"]
            .as_str()
            .unwrap()
            .contains("why_stuck"),
        "{result:#}"
    );
}

/// MCP #113, decided against the spec: when the `MCP-Protocol-Version` header and
/// the body's `_meta` revision disagree, the request is refused — HTTP 400, JSON-RPC
/// −32020 (header mismatch) naming both — rather than served at the body's revision.
/// The 2026-07-28 revision requires the two to match (SEP-2575), and rmcp enforces it.
/// A `_meta` revision without the header is refused the same way. Nothing is done:
/// a refused promote opens no Passage.
#[tokio::test]
async fn mcp113_the_header_and_the_body_must_agree() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let base = http(server(&env, Some("ada")).await, loopback_guards()).await;
    let promote = modern(
        "tools/call",
        json!({"name": "promote", "arguments": {"gate": "staging", "bundle": "b2"}}),
    );
    for header in [Some("1999-01-01"), Some("2025-06-18"), None] {
        for (body, method, name) in [
            (modern("tools/list", json!({})), "tools/list", None),
            (promote.clone(), "tools/call", Some("promote")),
        ] {
            // Everything else in order: only the revision disagrees.
            let mut headers = vec![("mcp-method", method)];
            headers.extend(name.map(|n| ("mcp-name", n)));
            headers.extend(header.map(|h| ("mcp-protocol-version", h)));
            let answer = post(&base, &body, &headers).await;
            assert_eq!(answer.status, 400, "{header:?}: {}", answer.body);
            let error = &answer.json()["error"];
            assert_eq!(error["code"], -32020, "{header:?}: {}", answer.body);
            let message = error["message"].as_str().unwrap();
            match header {
                Some(header) => assert_eq!(
                    message,
                    format!(
                        "MCP-Protocol-Version header ({header}) does not match request _meta protocolVersion ({MODERN_META})"
                    )
                ),
                None => assert!(
                    message.contains("requires MCP-Protocol-Version header"),
                    "{message}"
                ),
            }
        }
    }
    let passages = env
        .api::<hecate_types::Passage>()
        .list(&Default::default())
        .await
        .unwrap()
        .items;
    assert_eq!(passages.len(), 1, "only the pipeline's dev-1: {passages:?}");
    // Agreeing, the same promote is served.
    let agreed = post(
        &base,
        &promote,
        &[
            ("mcp-protocol-version", MODERN_META),
            ("mcp-method", "tools/call"),
            ("mcp-name", "promote"),
        ],
    )
    .await;
    assert_eq!(agreed.status, 200, "{}", agreed.body);
    assert_eq!(
        agreed.json()["result"]["structuredContent"]["passage"],
        "staging-1",
        "{}",
        agreed.body
    );
}

#[tokio::test]
async fn notifications_get_202_and_no_body() {
    let env = TestEnv::new().await;
    let base = http(server(&env, None).await, loopback_guards()).await;
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = post(&base, &notification, &[]).await;
    assert_eq!(answer.status, 202);
    assert_eq!(answer.body, "");
}

#[tokio::test]
async fn there_is_no_stream_to_get() {
    let env = TestEnv::new().await;
    let base = http(server(&env, None).await, loopback_guards()).await;
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let answer = send(
            reqwest::Client::new()
                .request(method.clone(), format!("{base}/mcp"))
                .header("accept", "text/event-stream"),
        )
        .await;
        assert_eq!(answer.status, 405, "{method}");
        assert_eq!(answer.headers["allow"], "POST");
        assert_eq!(answer.json()["error"]["code"], -32600);
        assert!(answer.body.contains("POST each request"), "{}", answer.body);
    }
}

#[tokio::test]
async fn malformed_messages_get_json_rpc_errors() {
    let env = TestEnv::new().await;
    let base = http(server(&env, None).await, loopback_guards()).await;
    for (body, code) in [
        ("{not json", -32700),
        (
            "[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]",
            -32600,
        ),
        ("{\"jsonrpc\": \"2.0\", \"id\": 1}", -32600),
        ("42", -32600),
    ] {
        let answer = send(
            reqwest::Client::new()
                .post(format!("{base}/mcp"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body),
        )
        .await;
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        assert_eq!(
            answer.json()["error"]["code"],
            code,
            "{body}: {}",
            answer.body
        );
    }
    let unknown = post(
        &base,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}),
        &[],
    )
    .await;
    assert_eq!(unknown.json()["error"]["code"], -32601, "{}", unknown.body);
}

/// The Origin check comes first: with authentication on, a foreign page is refused
/// 403 without being asked for credentials, and its token (were it to send one) is
/// never reviewed.
#[tokio::test]
async fn a_foreign_origin_is_refused_before_anything_else() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    // The reviewer's own client records what it asks the API server: a TokenReview is
    // a POST to tokenreviews.
    let (reviewing, reviews) = env
        .endpoint()
        .recording_client(Identity::HecateApi)
        .await
        .unwrap();
    let token_reviews = || {
        reviews
            .requests()
            .iter()
            .filter(|request| request.contains("tokenreviews"))
            .count()
    };
    let reviewer = hecate_access::Reviewer::new(reviewing, Vec::new());
    let server = hecate_mcp::HecateMcp::new(
        hecate_ops::Ops::new(env.client(Identity::HecateApi).await),
        settings(&env, None),
        Some(reviewer.clone()),
    );
    let guards = Guards {
        allowed_origins: vec!["http://localhost:3000".into()],
        reviewer: Some(reviewer),
        ..loopback_guards()
    };
    let base = http(server, guards).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});

    let foreign = post(&base, &list, &[("origin", "https://evil.example")]).await;
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    assert_eq!(foreign.json()["error"]["code"], -32600);
    assert!(
        foreign.body.contains("origin not allowed"),
        "{}",
        foreign.body
    );
    assert!(foreign.headers.get("access-control-allow-origin").is_none());
    let alice = token(&env, Identity::Alice);
    let bearer = format!("Bearer {alice}");
    let with_token = post(
        &base,
        &list,
        &[
            ("origin", "https://evil.example"),
            ("authorization", &bearer),
        ],
    )
    .await;
    assert_eq!(with_token.status, 403);
    assert_eq!(
        token_reviews(),
        0,
        "the foreign page's token was never reviewed"
    );

    // An allowed origin (matched normalised) reaches authentication…
    let allowed = post(&base, &list, &[("origin", "HTTP://LocalHost:3000")]).await;
    assert_eq!(allowed.status, 401, "{}", allowed.body);
    // …and with a token, the tools, with CORS headers for the page.
    let served = post(
        &base,
        &list,
        &[
            ("origin", "http://localhost:3000"),
            ("authorization", &bearer),
        ],
    )
    .await;
    assert_eq!(served.status, 200, "{}", served.body);
    assert_eq!(
        served.headers["access-control-allow-origin"],
        "http://localhost:3000"
    );
    assert_eq!(served.headers["vary"], "Origin");
    assert_eq!(
        token_reviews(),
        1,
        "the same token from an allowed page is reviewed, so a review would have been seen"
    );
}

#[tokio::test]
async fn with_no_allowed_origins_every_origin_is_refused() {
    let env = TestEnv::new().await;
    let base = http(server(&env, None).await, loopback_guards()).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let from_page = post(&base, &list, &[("origin", "http://localhost:3000")]).await;
    assert_eq!(from_page.status, 403);
    let no_origin = post(&base, &list, &[]).await;
    assert_eq!(no_origin.status, 200, "{}", no_origin.body);
}

#[tokio::test]
async fn a_foreign_host_is_refused() {
    let env = TestEnv::new().await;
    let base = http(server(&env, None).await, loopback_guards()).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let rebound = post(&base, &list, &[("host", "evil.example")]).await;
    assert_eq!(rebound.status, 403, "{}", rebound.body);
    assert!(
        rebound.body.contains("host not allowed"),
        "{}",
        rebound.body
    );

    // Behind an ingress, its hostname is configured.
    let guards = Guards {
        allowed_hosts: vec!["mcp.example.com".into()],
        ..loopback_guards()
    };
    let base = http(server(&env, None).await, guards).await;
    let ingress = post(&base, &list, &[("host", "mcp.example.com")]).await;
    assert_eq!(ingress.status, 200, "{}", ingress.body);
    let direct = post(&base, &list, &[]).await;
    assert_eq!(direct.status, 403, "{}", direct.body);
}
