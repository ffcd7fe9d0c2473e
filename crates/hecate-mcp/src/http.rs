//! The streamable HTTP transport: rmcp's service, stateless and answering JSON, behind
//! guards that run in this order, each refusing before the next is consulted:
//!
//! 1. **Origin** — a request carrying an `Origin` not in `--allowed-origins` is refused
//!    (403) before anything else, so a web page can never drive the tools, nor learn
//!    anything from how the server answers.
//! 2. **Host** — a `Host` not in the allow-list is refused (403): DNS rebinding.
//! 3. **Method** — only `POST` carries MCP (405 otherwise; a CORS preflight from an
//!    allowed origin is answered).
//! 4. **Authentication** — with `--auth kubernetes`, a bearer token the cluster accepts
//!    (401 otherwise); the caller rides on the request to the tool call, which is
//!    authorised as them.
//! 5. **Body** — one JSON-RPC message as a JSON object, at most 4 MiB: invalid JSON is a
//!    parse error (`-32700`), an array (a batch) or a message without a method an
//!    invalid request (`-32600`), as JSON-RPC answers them.
//!
//! Every refusal — the guards', and rmcp's own (a wrong `Content-Type` or `Accept`, an
//! unknown `MCP-Protocol-Version`) — is a JSON-RPC error body, never plain text, and
//! quotes a client's input only to a short prefix.
//!
//! [`serve`] runs the application with time limits: a client has
//! [`Timeouts::header_read`] to send a request's headers (and a kept-alive connection
//! may sit idle no longer), and [`Timeouts::body_read`] to send its body.
//!
//! Every path serves MCP (`/mcp` is the conventional one). There are no sessions and
//! no server-to-client stream: each POST is answered on its own, in either protocol
//! era — the stateless 2026-07-28 revision (`server/discover`, per-request `_meta`) or
//! the `initialize` handshake of the older ones, whose `MCP-Protocol-Version` header is
//! read per request. The header is echoed on the answer.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use rmcp::model::{ErrorCode, ProtocolVersion};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};

use crate::args::normalise_origin;
use crate::server::HecateMcp;
use hecate_access::Reviewer;
use hecate_access::quote::{bounded, quote};

/// The header carrying the protocol revision on each request after the handshake.
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// What `WWW-Authenticate` says on a 401.
const CHALLENGE: &str = "Bearer realm=\"hecate-mcp\"";
/// JSON-RPC "parse error".
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "invalid request".
const INVALID_REQUEST: i64 = -32600;
/// The largest request body read (as rmcp's own limit).
const MAX_BODY_BYTES: usize = 4 << 20;
/// JSON-RPC "internal error".
const INTERNAL_ERROR: i64 = -32603;
/// How long a refusal's message may be, in characters.
const MESSAGE_CHARS: usize = 300;
/// The most of a non-JSON refusal's body read to reword it.
const REWORDED_BYTES: usize = 64 << 10;

/// How long a client may take over a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// To send a request's headers, from the moment the server waits for them — so
    /// also how long a kept-alive connection may sit idle between requests.
    pub header_read: Duration,
    /// To send a request's body, once its headers are in.
    pub body_read: Duration,
}

impl Default for Timeouts {
    /// 10 s for headers (the reference's `ReadHeaderTimeout`); 30 s for a body, which
    /// is at most 4 MiB.
    fn default() -> Self {
        Self {
            header_read: Duration::from_secs(10),
            body_read: Duration::from_secs(30),
        }
    }
}

/// Serves `app` on `listener` within `timeouts` (hecate-access' [`serve`]: HTTP/1.1,
/// the header limit, graceful shutdown), until `shutdown` completes; then stops
/// accepting and returns once the connections in flight are done (the caller bounds
/// how long it waits for that). The body limit is the guards'.
///
/// [`serve`]: hecate_access::serve
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    timeouts: Timeouts,
    shutdown: impl Future<Output = ()>,
) {
    let app = app.layer(axum::Extension(timeouts));
    hecate_access::serve(listener, app, timeouts.header_read, shutdown).await;
}

/// What the guards check.
#[derive(Clone, Default)]
pub struct Guards {
    /// Allowed browser origins, normalised (`scheme://host[:port]`). Empty: every
    /// request that carries an `Origin` is refused.
    pub allowed_origins: Vec<String>,
    /// Allowed `Host` values (`host` or `host:port`, lower-case). Empty: any.
    pub allowed_hosts: Vec<String>,
    /// With `--auth kubernetes`: who reviews bearer tokens.
    pub reviewer: Option<Reviewer>,
}

/// The HTTP application: the guards in front of the MCP service.
pub fn router(server: HecateMcp, guards: Guards) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        // The guards below check Host and Origin, in the order documented above.
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .fallback_service(service)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(guards),
            guard,
        ))
}

/// A JSON-RPC error answer that belongs to no request (the body was never read).
fn refusal(status: StatusCode, code: i64, message: impl Into<String>) -> Response {
    refusal_to(
        status,
        &Value::Null,
        json!({"code": code, "message": message.into()}),
    )
}

/// A JSON-RPC error answer to the request `id` (`null` when it is not known).
fn refusal_to(status: StatusCode, id: &Value, error: Value) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": error,
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn guard(State(guards): State<Arc<Guards>>, mut request: Request, next: Next) -> Response {
    // 1. Origin, before anything else.
    let origin = match request.headers().get(header::ORIGIN) {
        None => None,
        Some(value) if origin_allowed(value, &guards.allowed_origins) => Some(value.clone()),
        Some(value) => {
            let shown = quote(&String::from_utf8_lossy(value.as_bytes()));
            tracing::warn!(origin = %shown, "refused a request from an origin not allowed");
            return refusal(
                StatusCode::FORBIDDEN,
                INVALID_REQUEST,
                format!(
                    "origin not allowed: requests from {shown} are refused (see --allowed-origins)"
                ),
            );
        }
    };
    let version = request.headers().get(PROTOCOL_VERSION).cloned();
    let admitted = match admit(&guards, &mut request, origin.is_some()).await {
        Ok(()) => one_message(request).await,
        Err(refused) => Err(refused),
    };
    let mut response = match admitted {
        Ok((request, id)) => as_json_rpc(next.run(request).await, &id, version.as_ref()).await,
        Err(refused) => refused,
    };
    let headers = response.headers_mut();
    if let Some(version) = version {
        headers.entry(PROTOCOL_VERSION).or_insert(version);
    }
    if let Some(origin) = origin {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("mcp-protocol-version, www-authenticate"),
        );
    }
    response
}

/// Guards 2 to 4: Host, method, authentication. On success the request carries the
/// authenticated caller, if there is one.
async fn admit(guards: &Guards, request: &mut Request, has_origin: bool) -> Result<(), Response> {
    if !host_allowed(request, &guards.allowed_hosts) {
        return Err(refusal(
            StatusCode::FORBIDDEN,
            INVALID_REQUEST,
            "host not allowed: this server does not answer to that Host (see --allowed-hosts)",
        ));
    }
    match *request.method() {
        Method::POST => {}
        Method::OPTIONS if has_origin => return Err(preflight()),
        _ => {
            let mut refused = refusal(
                StatusCode::METHOD_NOT_ALLOWED,
                INVALID_REQUEST,
                "this server has no server-to-client stream and no sessions: POST each request",
            );
            refused
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            return Err(refused);
        }
    }
    if let Some(reviewer) = &guards.reviewer {
        let authorization = request.headers().get(header::AUTHORIZATION);
        let token = authorization
            .and_then(|value| value.to_str().ok())
            .and_then(hecate_access::bearer_token)
            .map(str::to_string);
        let Some(token) = token else {
            return Err(unauthenticated(
                "unauthenticated: send Authorization: Bearer <a token the Kubernetes API server accepts>",
            ));
        };
        match reviewer.authenticate(&token).await {
            Ok(Some(caller)) => {
                request.extensions_mut().insert(caller);
            }
            Ok(None) => {
                return Err(unauthenticated(
                    "unauthenticated: the Kubernetes API server does not accept this token",
                ));
            }
            Err(e) => {
                // The review's error names this server's identity and its RBAC: logged,
                // never told to a caller who is not yet known.
                tracing::error!(error = %e, "could not review a caller's token");
                return Err(refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    INTERNAL_ERROR,
                    "could not ask the Kubernetes API server who the caller is; try again later",
                ));
            }
        }
    }
    Ok(())
}

/// Guard 5: the body is one JSON-RPC message, read within [`Timeouts::body_read`].
/// rmcp would answer anything else in plain text; a client deserves the JSON-RPC error
/// codes. On success, the request with its body, and the message's `id` (`null` for a
/// notification).
async fn one_message(request: Request) -> Result<(Request, Value), Response> {
    let too_large = || {
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            "the request body is over 4 MiB",
        )
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES) {
        return Err(too_large());
    }
    let timeout = request
        .extensions()
        .get::<Timeouts>()
        .copied()
        .unwrap_or_default()
        .body_read;
    let (parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(timeout, read_body(body)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(BodyError::TooLarge)) => return Err(too_large()),
        Ok(Err(BodyError::Read(e))) => {
            tracing::debug!(error = %e, "could not read a request body");
            return Err(refusal(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                "Parse error: the body could not be read",
            ));
        }
        Err(_) => {
            let mut refused = refusal(
                StatusCode::REQUEST_TIMEOUT,
                INVALID_REQUEST,
                format!(
                    "the request body did not arrive within {} s",
                    timeout.as_secs_f32()
                ),
            );
            refused
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return Err(refused);
        }
    };
    let invalid = |message: &str| refusal(StatusCode::BAD_REQUEST, INVALID_REQUEST, message);
    match serde_json::from_slice::<Value>(&bytes) {
        Err(e) => Err(refusal(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            bounded(&format!("Parse error: {e}"), MESSAGE_CHARS),
        )),
        Ok(Value::Array(_)) => Err(invalid(
            "Invalid request: batches are not supported; POST one JSON-RPC message at a time",
        )),
        Ok(Value::Object(message))
            if message.contains_key("method")
                || message.contains_key("result")
                || message.contains_key("error") =>
        {
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            // rmcp cannot decode such a request and answers −32601 naming the method,
            // as if `tools/call` did not exist.
            let params = message.get("params");
            let arguments = params.and_then(|p| p.get("arguments"));
            let invalid_params = |message: &str| {
                refusal_to(
                    StatusCode::BAD_REQUEST,
                    &id,
                    json!({"code": ErrorCode::INVALID_PARAMS.0, "message": message}),
                )
            };
            // rmcp names an unknown method whole in its −32601; no method is this long.
            if let Some(method) = message.get("method").and_then(Value::as_str)
                && method.len() > 128
            {
                return Err(refusal_to(
                    StatusCode::OK,
                    &id,
                    json!({
                        "code": ErrorCode::METHOD_NOT_FOUND.0,
                        "message": format!("Method not found: {}", quote(method)),
                    }),
                ));
            }
            if params.is_some_and(|p| !p.is_object() && !p.is_null()) {
                return Err(invalid_params(
                    "Invalid params: params must be a JSON object",
                ));
            }
            if message.get("method").and_then(Value::as_str) == Some("tools/call") {
                if !params
                    .and_then(|p| p.get("name"))
                    .is_some_and(Value::is_string)
                {
                    return Err(invalid_params(
                        "Invalid params: tools/call names the tool to call in `name`",
                    ));
                }
                if arguments.is_some_and(|a| !a.is_object() && !a.is_null()) {
                    return Err(invalid_params(
                        "Invalid params: a tool's arguments must be a JSON object",
                    ));
                }
            }
            Ok((Request::from_parts(parts, Body::from(bytes)), id))
        }
        Ok(Value::Object(_)) => Err(invalid("Invalid request: no method")),
        Ok(_) => Err(invalid(
            "Invalid request: a JSON-RPC message is a JSON object",
        )),
    }
}

/// Why a body was not read.
enum BodyError {
    /// It grew past [`MAX_BODY_BYTES`] (whatever its framing: a chunked body declares
    /// no length).
    TooLarge,
    /// The connection failed.
    Read(axum::Error),
}

/// The whole body, at most [`MAX_BODY_BYTES`].
async fn read_body(body: Body) -> Result<Bytes, BodyError> {
    let mut stream = body.into_data_stream();
    let mut collected = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(BodyError::Read)?;
        if chunk.len() > MAX_BODY_BYTES - collected.len() {
            return Err(BodyError::TooLarge);
        }
        collected.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(collected))
}

/// When the `MCP-Protocol-Version` header names a revision this server does not
/// speak, the refusal the protocol describes: JSON-RPC −32022 with the supported
/// revisions and, quoted short, the one requested.
fn unknown_revision(header: Option<&HeaderValue>, id: &Value) -> Option<Response> {
    let requested = String::from_utf8_lossy(header?.as_bytes()).into_owned();
    if ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .any(|known| known.as_str() == requested)
    {
        return None;
    }
    let mut supported: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .map(ProtocolVersion::as_str)
        .collect();
    supported.sort_by(|a, b| b.cmp(a));
    Some(refusal_to(
        StatusCode::BAD_REQUEST,
        id,
        json!({
            "code": ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0,
            "message": format!(
                "Unsupported protocol version: MCP-Protocol-Version {} is not one this server speaks",
                quote(&requested)
            ),
            "data": {"supported": supported, "requested": bounded(&requested, 64)},
        }),
    ))
}

/// rmcp's answer as a client of JSON-RPC expects it: a refusal in plain text (a wrong
/// `Content-Type` or `Accept`, an unknown protocol revision in `version`) becomes a
/// JSON-RPC error to request `id`, in our words where we know the status; a JSON
/// refusal keeps its body with the message bounded (it may quote the request).
/// Successes pass unchanged.
async fn as_json_rpc(response: Response, id: &Value, version: Option<&HeaderValue>) -> Response {
    let status = response.status();
    if status.is_success() || status.is_redirection() {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, REWORDED_BYTES)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    if is_json && let Ok(mut answer) = serde_json::from_str::<Value>(&text) {
        if let Some(message) = answer.pointer_mut("/error/message").filter(|m| {
            m.as_str()
                .is_some_and(|m| m.chars().count() > MESSAGE_CHARS)
        }) {
            *message = Value::String(bounded(message.as_str().unwrap_or_default(), MESSAGE_CHARS));
        }
        let mut parts = parts;
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::from(answer.to_string()));
    }
    if status == StatusCode::BAD_REQUEST
        && let Some(refused) = unknown_revision(version, id)
    {
        return refused;
    }
    // rmcp answers a JSON message that fits no request of its method (a `tools/call`
    // without a name, say) with the 415 of a wrong Content-Type.
    if status == StatusCode::UNSUPPORTED_MEDIA_TYPE && !text.starts_with("Unsupported Media Type") {
        let detail = text
            .trim()
            .trim_start_matches("fail to deserialize request body");
        return refusal_to(
            StatusCode::BAD_REQUEST,
            id,
            json!({
                "code": ErrorCode::INVALID_PARAMS.0,
                "message": format!(
                    "Invalid params: the message does not fit its method:{}",
                    bounded(detail, MESSAGE_CHARS)
                ),
            }),
        );
    }
    let message = match status {
        StatusCode::NOT_ACCEPTABLE => {
            "Not acceptable: send Accept: application/json, text/event-stream".to_string()
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            "Unsupported media type: send the JSON-RPC message as Content-Type: application/json"
                .to_string()
        }
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is over 4 MiB".to_string(),
        // What broke inside is the log's to know, not the caller's.
        status if status.is_server_error() => {
            tracing::warn!(%status, detail = %bounded(text.trim(), MESSAGE_CHARS), "the MCP service failed a request");
            "the server could not answer this request; its log says why".to_string()
        }
        _ => bounded(text.trim(), MESSAGE_CHARS),
    };
    let code = if status.is_server_error() {
        INTERNAL_ERROR
    } else {
        INVALID_REQUEST
    };
    let mut answer = refusal_to(status, id, json!({"code": code, "message": message}));
    for name in [header::ALLOW, header::WWW_AUTHENTICATE] {
        if let Some(value) = parts.headers.get(&name) {
            answer.headers_mut().insert(name, value.clone());
        }
    }
    answer
}

fn unauthenticated(message: &str) -> Response {
    let mut response = refusal(StatusCode::UNAUTHORIZED, INVALID_REQUEST, message);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(CHALLENGE),
    );
    response
}

/// The answer to a CORS preflight from an allowed origin: POST, with the headers MCP
/// clients send.
fn preflight() -> Response {
    (
        StatusCode::NO_CONTENT,
        [
            (header::ACCESS_CONTROL_ALLOW_METHODS, "POST"),
            (
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                "authorization, content-type, accept, mcp-protocol-version, mcp-method, mcp-name, last-event-id",
            ),
            (header::ACCESS_CONTROL_MAX_AGE, "600"),
        ],
    )
        .into_response()
}

/// Whether a request's `Origin` is one of `allowed` (normalised alike).
fn origin_allowed(value: &HeaderValue, allowed: &[String]) -> bool {
    value
        .to_str()
        .ok()
        .and_then(|origin| normalise_origin(origin).ok())
        .is_some_and(|origin| allowed.contains(&origin))
}

/// Whether the request's `Host` (or, over HTTP/2, its authority) is allowed. An entry
/// without a port allows any port.
fn host_allowed(request: &Request, allowed: &[String]) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let authority = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    let Some((host, port)) = authority.as_deref().and_then(split_authority) else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|entry| split_authority(entry))
        .any(|(allowed_host, allowed_port)| {
            allowed_host.eq_ignore_ascii_case(&host) && allowed_port.is_none_or(|p| Some(p) == port)
        })
}

/// `host[:port]` → (host, port); IPv6 in brackets (or bare, without a port).
fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    let authority = authority.trim();
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            after => Some(after.strip_prefix(':')?.parse().ok()?),
        };
        return Some((host.to_ascii_lowercase(), port));
    }
    if authority.matches(':').count() > 1 {
        return Some((authority.to_ascii_lowercase(), None));
    }
    match authority.split_once(':') {
        Some((host, port)) => Some((host.to_ascii_lowercase(), Some(port.parse().ok()?))),
        None if authority.is_empty() => None,
        None => Some((authority.to_ascii_lowercase(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_split() {
        assert_eq!(
            split_authority("LocalHost:8085"),
            Some(("localhost".into(), Some(8085)))
        );
        assert_eq!(split_authority("[::1]:80"), Some(("::1".into(), Some(80))));
        assert_eq!(split_authority("::1"), Some(("::1".into(), None)));
        assert_eq!(
            split_authority("example.com"),
            Some(("example.com".into(), None))
        );
        assert_eq!(split_authority("example.com:x"), None);
        assert_eq!(split_authority(""), None);
    }

    #[test]
    fn hosts_are_matched_with_or_without_a_port() {
        let request = |host: &str| {
            Request::builder()
                .header(header::HOST, host)
                .body(axum::body::Body::empty())
                .unwrap_or_default()
        };
        let allowed = vec!["localhost".to_string(), "mcp.example.com:443".to_string()];
        assert!(host_allowed(&request("localhost:8085"), &allowed));
        assert!(host_allowed(&request("MCP.example.com:443"), &allowed));
        assert!(!host_allowed(&request("mcp.example.com:8443"), &allowed));
        assert!(!host_allowed(&request("evil.example"), &allowed));
        assert!(host_allowed(&request("evil.example"), &[]));
    }

    #[test]
    fn origins_compare_normalised() {
        let allowed = vec!["http://localhost:3000".to_string()];
        assert!(origin_allowed(
            &HeaderValue::from_static("http://localhost:3000"),
            &allowed
        ));
        assert!(origin_allowed(
            &HeaderValue::from_static("HTTP://LocalHost:3000"),
            &allowed
        ));
        assert!(!origin_allowed(
            &HeaderValue::from_static("https://evil.example"),
            &allowed
        ));
        assert!(!origin_allowed(&HeaderValue::from_static("null"), &allowed));
        assert!(!origin_allowed(
            &HeaderValue::from_static("http://localhost:3000"),
            &[]
        ));
    }
}
