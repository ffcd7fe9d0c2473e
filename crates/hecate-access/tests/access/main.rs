//! hecate-access as its surfaces use it, against a real API server: the HTTP API and
//! the MCP server give one caller the same answer for the same read, and both ask the
//! cluster once for a burst of requests carrying a token they have not seen.

#![allow(clippy::unwrap_used, missing_docs)]

use hecate_access::Reviewer;
use hecate_mcp::args::Writes;
use hecate_mcp::http::{Guards, router};
use hecate_mcp::{HecateMcp, Settings};
use hecate_ops::Ops;
use hecate_testenv::fixtures::{bundle, gate, gate_spec};
use hecate_testenv::rbac::{await_access, grant_deployed_roles};
use hecate_testenv::{Identity, RequestLog, TestEnv};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, ObjectMeta, PostParams};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Serves `app` on a free loopback port; its base URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// The HTTP API as `hecate-api` runs it (without the cache), acting as `hecate-api`
/// through `client`.
async fn api_server(client: kube::Client) -> String {
    serve(hecate_api::router(hecate_api::AppState::new(
        client,
        vec![],
    )))
    .await
}

/// The MCP server as `hecate-mcp --listen … --auth kubernetes` runs it, acting as
/// `hecate-api` through `client`.
async fn mcp_server(env: &TestEnv, client: kube::Client) -> String {
    let reviewer = Reviewer::new(client.clone(), Vec::new());
    let settings = Settings {
        namespace: env.namespace.clone(),
        writes: Writes::Off,
    };
    let server = HecateMcp::new(Ops::new(client), settings, Some(reviewer.clone()));
    serve(router(
        server,
        Guards {
            allowed_origins: vec![],
            allowed_hosts: vec![],
            reviewer: Some(reviewer),
        },
    ))
    .await
}

/// An MCP JSON-RPC request over HTTP with a bearer token: (status, body).
async fn mcp(base: &str, token: &str, body: &Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    status_and_json(response).await
}

async fn status_and_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}")),
    )
}

fn tool_call(tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

async fn api_get(base: &str, path: &str, token: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .get(format!("{base}{path}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    status_and_json(response).await
}

/// The same caller, the same reads, through both surfaces: allowed by both where RBAC
/// allows it, refused by both — in the same words, naming the same permission —
/// where it does not. ci-bot may only `list bundles`.
#[tokio::test]
async fn the_api_and_the_mcp_server_answer_a_caller_alike() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    env.grant(Identity::CiBot, &["list"], &["bundles"]).await;
    await_access(&env, Identity::CiBot, "list", "bundles", "").await;
    let server = env.client(Identity::HecateApi).await;
    let (api, mcp_base) = (
        api_server(server.clone()).await,
        mcp_server(&env, server).await,
    );
    let token = env.endpoint().tokens[&Identity::CiBot].clone();
    let ns = &env.namespace;

    // Explain / why_stuck need `get gates`: both refuse.
    let (status, refused) = api_get(
        &api,
        &format!("/api/v1alpha1/namespaces/{ns}/gates/staging/explain"),
        &token,
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    let sentence = format!("ci-bot may not get gates in {ns}");
    assert_eq!(refused["error"], sentence.as_str());
    let (status, answer) = mcp(
        &mcp_base,
        &token,
        &tool_call("why_stuck", json!({"gate": "staging"})),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    let problem = &result["structuredContent"]["error"];
    assert_eq!(problem["class"], "Forbidden");
    assert_eq!(problem["message"], sentence.as_str());
    assert_eq!(
        problem["permission"],
        json!({"verb": "get", "group": "hecate.dev", "resource": "gates", "namespace": ns})
    );

    // The Bundle list needs `list bundles`, which ci-bot has: both answer it.
    let (status, bundles) = api_get(
        &api,
        &format!("/api/v1alpha1/namespaces/{ns}/bundles"),
        &token,
    )
    .await;
    assert_eq!(status, 200, "{bundles}");
    assert_eq!(bundles[0]["metadata"]["name"], "b1");
    let (_, answer) = mcp(&mcp_base, &token, &tool_call("list_bundles", json!({}))).await;
    assert_ne!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["bundles"][0]["metadata"]["name"],
        "b1"
    );

    // The audit trail needs `list gates`: both refuse, naming it.
    let (status, refused) = api_get(
        &api,
        &format!("/api/v1alpha1/namespaces/{ns}/audit"),
        &token,
    )
    .await;
    assert_eq!(status, 403);
    let (_, answer) = mcp(&mcp_base, &token, &tool_call("audit", json!({}))).await;
    assert_eq!(
        answer["result"]["structuredContent"]["error"]["message"],
        refused["error"]
    );
    assert_eq!(
        refused["error"],
        format!("ci-bot may not list gates in {ns}").as_str()
    );
}

/// A token neither server has seen: a fresh ServiceAccount token.
async fn new_token(env: &TestEnv, name: &str) -> String {
    let accounts: Api<ServiceAccount> = Api::namespaced(env.admin.clone(), &env.namespace);
    accounts
        .create(
            &PostParams::default(),
            &ServiceAccount {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    ..ObjectMeta::default()
                },
                ..ServiceAccount::default()
            },
        )
        .await
        .unwrap();
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: vec![],
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .unwrap()
        .status
        .unwrap()
        .token
}

/// How many TokenReviews the server's client sent the API server.
fn token_reviews(log: &RequestLog) -> usize {
    log.requests()
        .iter()
        .filter(|r| r.starts_with("POST /apis/authentication.k8s.io/v1/tokenreviews"))
        .count()
}

/// Twenty requests at once with one token neither server has seen: each server asks
/// the cluster once; the others wait for that answer (the single-flight cache).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_with_a_new_token_costs_each_server_one_token_review() {
    let env = TestEnv::new().await;
    // The servers' own identity may review tokens once its binding is in force; left
    // to the other test, a burst that ran first was refused (403) on a loaded machine.
    grant_deployed_roles(&env).await;
    let endpoint = env.endpoint();

    let (client, log) = endpoint
        .recording_client(Identity::HecateApi)
        .await
        .unwrap();
    let api = api_server(client).await;
    let token = new_token(&env, "burst-api").await;
    let answers = futures::future::join_all(
        (0..20).map(|_| api_get(&api, "/api/v1alpha1/namespaces", &token)),
    )
    .await;
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "{answers:?}"
    );
    assert_eq!(token_reviews(&log), 1, "{:?}", log.requests());

    let (client, log) = endpoint
        .recording_client(Identity::HecateApi)
        .await
        .unwrap();
    let mcp_base = mcp_server(&env, client).await;
    let token = new_token(&env, "burst-mcp").await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let answers = futures::future::join_all((0..20).map(|_| mcp(&mcp_base, &token, &list))).await;
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "{answers:?}"
    );
    assert_eq!(token_reviews(&log), 1, "{:?}", log.requests());
}
