//! Servers and clients for the tests: the server in-process over an in-memory pipe
//! (the stdio transport's framing, without a process) or over HTTP on loopback, rmcp's
//! own client in either protocol era, and the pipeline the tests look at.

use std::time::Duration;

use hecate_access::Reviewer;
use hecate_mcp::args::Writes;
use hecate_mcp::http::{Guards, Timeouts, router, serve};
use hecate_mcp::{HecateMcp, Settings};
use hecate_ops::Ops;
pub(crate) use hecate_testenv::fixtures::*;
pub(crate) use hecate_testenv::rbac::grant_deployed_roles;
use hecate_testenv::{Identity, TestEnv};
use hecate_types::PassagePhase;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, JsonObject, ProtocolVersion, Tool,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt as _, RoleClient, ServiceExt as _};
use serde_json::Value;

/// A connected MCP client.
pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

/// How the client opens the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Era {
    /// The `initialize` handshake, at 2025-06-18.
    Legacy,
    /// `server/discover` and per-request `_meta`, at 2026-07-28.
    Modern,
}

fn lifecycle(era: Era) -> (ClientConfig, ClientLifecycleMode) {
    let mut config = ClientConfig::default();
    match era {
        Era::Legacy => {
            config.protocol_version = ProtocolVersion::V_2025_06_18;
            (config, ClientLifecycleMode::Initialize)
        }
        Era::Modern => (
            config,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    }
}

/// The server's settings for the test's namespace: read-only, or writing as
/// `mcp:<actor>`.
pub(crate) fn settings(env: &TestEnv, actor: Option<&str>) -> Settings {
    Settings {
        namespace: env.namespace.clone(),
        writes: actor.map_or(Writes::Off, |a| Writes::As(format!("mcp:{a}"))),
    }
}

/// A server acting as `admin`.
pub(crate) async fn server(env: &TestEnv, actor: Option<&str>) -> HecateMcp {
    HecateMcp::new(Ops::new(env.admin.clone()), settings(env, actor), None)
}

/// `server` and a client connected over an in-memory pipe with the stdio transport's
/// framing (newline-delimited JSON-RPC).
pub(crate) async fn piped(server: HecateMcp, era: Era) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let (config, mode) = lifecycle(era);
    config
        .serve_with_lifecycle(client_end, mode)
        .await
        .unwrap_or_else(|e| panic!("connecting over the pipe ({era:?}): {e}"))
}

/// `server` behind the HTTP guards on a free loopback port, served as the binary
/// serves it (with its time limits); its base URL.
pub(crate) async fn http(server: HecateMcp, guards: Guards) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = router(server, guards);
    tokio::spawn(serve(
        listener,
        app,
        Timeouts::default(),
        std::future::pending(),
    ));
    base
}

/// The guards `hecate-mcp --listen 127.0.0.1:…` runs with by default.
pub(crate) fn loopback_guards() -> Guards {
    Guards {
        allowed_origins: vec![],
        allowed_hosts: ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec(),
        reviewer: None,
    }
}

/// A client over HTTP, with a bearer token when given.
pub(crate) async fn http_client(base: &str, era: Era, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let (client, mode) = lifecycle(era);
    client
        .serve_with_lifecycle(transport, mode)
        .await
        .unwrap_or_else(|e| panic!("connecting over HTTP ({era:?}): {e}"))
}

/// `tools/call`.
pub(crate) async fn call(
    client: &Client,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, ServiceError> {
    let arguments: JsonObject = match arguments {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, not {other}"),
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
        .await
}

/// `tools/call` that must succeed as a call; the result (which may be an error result).
pub(crate) async fn result(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    call(client, tool, arguments)
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// A result's text content.
pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A successful result's structured content.
pub(crate) fn structured(result: &CallToolResult) -> Value {
    assert_ne!(
        result.is_error,
        Some(true),
        "an error result: {}",
        text(result)
    );
    result
        .structured_content
        .clone()
        .expect("structured content")
}

/// The names of the tools a client is offered.
pub(crate) async fn tool_names(client: &Client) -> Vec<String> {
    tools(client)
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// The tools a client is offered.
pub(crate) async fn tools(client: &Client) -> Vec<Tool> {
    client.list_all_tools().await.unwrap()
}

/// The JSON-RPC error code of a failed call.
pub(crate) fn error_code(error: &ServiceError) -> i32 {
    match error {
        ServiceError::McpError(data) => data.code.0,
        other => panic!("not a JSON-RPC error: {other}"),
    }
}

/// dev (automatic) → staging → production (approval required); Bundles b1 (cleared
/// dev and staging, crossed dev as Passage dev-1) and b2 (cleared dev), b2 created
/// a second after b1 so that "newest first" is the same on every run.
pub(crate) async fn pipeline(env: &TestEnv) {
    let mut dev = gate_spec(&[], false);
    dev.auto = true;
    gate(env, "dev", dev).await;
    gate(env, "staging", gate_spec(&["dev"], false)).await;
    gate(env, "production", gate_spec(&["staging"], true)).await;
    let b1 = bundle(env, "b1").await;
    bundle_status(env, b1, &["dev", "staging"], &[]).await;
    passage(env, "dev-1", "dev", "b1", PassagePhase::Succeeded).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let b2 = bundle(env, "b2").await;
    bundle_status(env, b2, &["dev"], &[]).await;
}

/// A server as `hecate-mcp --listen … --auth kubernetes [--allow-writes]` runs it: its
/// own identity `hecate-api`, every caller reviewed. Its base URL.
pub(crate) async fn authenticated_http(env: &TestEnv, writes: bool) -> String {
    let client = env.client(Identity::HecateApi).await;
    let reviewer = Reviewer::new(client.clone(), Vec::new());
    let settings = Settings {
        namespace: env.namespace.clone(),
        writes: if writes {
            Writes::AsCaller
        } else {
            Writes::Off
        },
    };
    let server = HecateMcp::new(Ops::new(client), settings, Some(reviewer.clone()));
    let guards = Guards {
        reviewer: Some(reviewer),
        ..loopback_guards()
    };
    http(server, guards).await
}

/// A bearer token of the test control plane.
pub(crate) fn token(env: &TestEnv, who: Identity) -> String {
    env.endpoint().tokens[&who].clone()
}

/// Raw HTTP, for what rmcp's client will not send.
pub(crate) struct Raw {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: String,
}

impl Raw {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// POSTs a JSON-RPC body as an MCP client would, with extra headers.
pub(crate) async fn post(base: &str, body: &Value, headers: &[(&str, &str)]) -> Raw {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send(request).await
}

pub(crate) async fn send(request: reqwest::RequestBuilder) -> Raw {
    let response = request.send().await.unwrap();
    Raw {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: response.text().await.unwrap(),
    }
}

/// `value` matches the output schema tool `name` advertises in `tools`.
pub(crate) fn valid(tools: &[rmcp::model::Tool], name: &str, value: &Value) {
    let tool = tools.iter().find(|t| t.name == name).unwrap();
    let schema = Value::Object(tool.output_schema.as_deref().cloned().unwrap());
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{value:#}");
}
