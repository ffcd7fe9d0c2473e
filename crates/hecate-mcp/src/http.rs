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
//! Every path serves MCP (`/mcp` is the conventional one). There are no sessions and
//! no server-to-client stream: each POST is answered on its own, in either protocol
//! era — the stateless 2026-07-28 revision (`server/discover`, per-request `_meta`) or
//! the `initialize` handshake of the older ones, whose `MCP-Protocol-Version` header is
//! read per request. The header is echoed on the answer.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

use crate::args::normalise_origin;
use crate::server::HecateMcp;
use hecate_access::Reviewer;

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
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message.into()},
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
            let shown = String::from_utf8_lossy(value.as_bytes()).into_owned();
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
        Ok(request) => next.run(request).await,
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
        let Some(token) = bearer_token(request.headers()) else {
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
                tracing::error!(error = %e, "could not review a caller's token");
                return Err(refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    INTERNAL_ERROR,
                    format!("could not authenticate the caller: {e}"),
                ));
            }
        }
    }
    Ok(())
}

/// Guard 5: the body is one JSON-RPC message. rmcp would answer anything else with a
/// plain-text 415; a client deserves the JSON-RPC error codes.
async fn one_message(request: Request) -> Result<Request, Response> {
    let too_large = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|length| length > MAX_BODY_BYTES);
    if too_large {
        return Err(refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            "the request body is over 4 MiB",
        ));
    }
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|e| {
            refusal(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                format!("Parse error: the body could not be read: {e}"),
            )
        })?;
    let invalid = |message: &str| refusal(StatusCode::BAD_REQUEST, INVALID_REQUEST, message);
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Err(e) => Err(refusal(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            format!("Parse error: {e}"),
        )),
        Ok(serde_json::Value::Array(_)) => Err(invalid(
            "Invalid request: batches are not supported; POST one JSON-RPC message at a time",
        )),
        Ok(serde_json::Value::Object(message))
            if message.contains_key("method")
                || message.contains_key("result")
                || message.contains_key("error") =>
        {
            Ok(Request::from_parts(parts, axum::body::Body::from(bytes)))
        }
        Ok(serde_json::Value::Object(_)) => Err(invalid("Invalid request: no method")),
        Ok(_) => Err(invalid(
            "Invalid request: a JSON-RPC message is a JSON object",
        )),
    }
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

/// The bearer token of `Authorization: Bearer <token>`.
fn bearer_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_string())
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
    fn bearer_tokens_are_read() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer_token(&headers), None);
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  abc "),
        );
        assert_eq!(bearer_token(&headers).as_deref(), Some("abc"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer_token(&headers), None);
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
