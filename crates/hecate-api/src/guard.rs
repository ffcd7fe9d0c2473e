//! What every request passes before its handler, and how the server's own refusals
//! are worded:
//!
//! - [`admit`]: a method the server knows (405 otherwise); for a write under `/api`,
//!   a JSON body (415 otherwise: a cross-site form or `text/plain` POST is a "simple"
//!   request a browser sends without asking), from the server's own pages when the
//!   credential is the session cookie (403 otherwise: cross-site request forgery),
//!   from a caller the cluster knows (401, the body unread), and read whole within
//!   `Limits::body_read` (408) and 1 MiB (413) before the handler runs;
//! - [`json_errors`]: refusals made below the handlers (axum's extractors and method
//!   routing) answered with the API's JSON error body, never plain text, in fixed
//!   words that quote nothing of the request.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts as _, MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use hecate_access::quote::quote;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::routes::{MAX_BODY_BYTES, ROUTES};
use crate::state::AppState;

/// The methods the server answers at all; any other is refused before routing.
const KNOWN: [Method; 7] = [
    Method::GET,
    Method::HEAD,
    Method::POST,
    Method::PUT,
    Method::PATCH,
    Method::DELETE,
    Method::OPTIONS,
];

fn is_api(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// Whether a row of the route table takes this method on this path.
fn routed(request: &Request) -> bool {
    let Some(path) = request.extensions().get::<MatchedPath>() else {
        return false;
    };
    ROUTES.iter().any(|route| {
        route.path == path.as_str()
            && route
                .method
                .as_str()
                .eq_ignore_ascii_case(request.method().as_str())
    })
}

fn writes(method: &Method) -> bool {
    [Method::POST, Method::PUT, Method::PATCH, Method::DELETE].contains(method)
}

/// The checks before a handler (see the module's description).
pub(crate) async fn admit(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if !KNOWN.contains(request.method()) {
        return ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "the server does not answer that method",
        )
        .into_response();
    }
    if !writes(request.method()) || !is_api(request.uri().path()) || !routed(&request) {
        // Not a write the table serves: the router answers (405 for a method the
        // route does not take, 404 for no route).
        return next.run(request).await;
    }
    if !is_json(request.headers()) {
        return ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a write's body must be JSON, sent as Content-Type: application/json (`{}` when there is nothing to say)",
        )
        .into_response();
    }
    if let Some(credential) = crate::auth::credential(request.headers())
        && credential.from_cookie
        && let Err(why) = same_origin(request.headers())
    {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "a write signed in by the session cookie must come from this server's own pages ({why}); send the token as Authorization: Bearer instead"
            ),
        )
        .into_response();
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return closing(too_large());
    }
    let (mut parts, body) = request.into_parts();
    // Who is calling before reading what they send: a stranger's body is never
    // buffered (the review is cached; the handler's own costs nothing more).
    if let Err(refusal) = Caller::from_request_parts(&mut parts, &state).await {
        return closing(refusal);
    }
    let body = match tokio::time::timeout(state.limits.body_read, read(body)).await {
        Ok(Ok(body)) => body,
        Ok(Err(refusal)) => return closing(refusal),
        Err(_) => {
            return closing(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {}s",
                    state.limits.body_read.as_secs_f32()
                ),
            ));
        }
    };
    next.run(Request::from_parts(parts, Body::from(body))).await
}

/// The body, whole, unless it is larger than the server accepts.
async fn read(body: Body) -> Result<Bytes, ApiError> {
    let mut stream = body.into_data_stream();
    let mut read = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|_| ApiError::bad_request("the request body could not be read"))?;
        if read.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large());
        }
        read.extend_from_slice(&chunk);
    }
    Ok(read.into())
}

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "the request body is larger than 1 MiB",
    )
}

/// A refusal after which the connection is closed: the rest of the body is unread.
fn closing(refusal: ApiError) -> Response {
    let mut response = refusal.into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// `application/json`, with or without parameters (`; charset=utf-8`).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether a browser says the request comes from a page of this server: the Fetch
/// metadata (`Sec-Fetch-Site: same-origin`) when sent, else the `Origin`'s host and
/// port equal to the `Host` the request was sent to. Neither: not shown, refused.
fn same_origin(headers: &HeaderMap) -> Result<(), String> {
    let text = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("?"));
    if let Some(site) = text("sec-fetch-site") {
        return if site == "same-origin" {
            Ok(())
        } else {
            Err(format!("Sec-Fetch-Site is {}", quote(site)))
        };
    }
    let Some(origin) = text(header::ORIGIN.as_str()) else {
        return Err("it has neither Sec-Fetch-Site nor Origin".into());
    };
    let host = text(header::HOST.as_str()).unwrap_or_default();
    let authority = origin.split_once("://").map(|(_, authority)| authority);
    if authority.is_some_and(|a| !host.is_empty() && a.eq_ignore_ascii_case(host)) {
        Ok(())
    } else {
        Err(format!("Origin {} is not this server", quote(origin)))
    }
}

/// Answers the server's own refusals (no such method, a path that is not UTF-8, a body
/// too large, …) on the API's routes with the JSON error body, in fixed words.
pub(crate) async fn json_errors(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let api = is_api(path) || matches!(path, "/healthz" | "/readyz" | "/metrics");
    let response = next.run(request).await;
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !api || json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let message = match status {
        StatusCode::BAD_REQUEST => {
            "the request could not be read: the path, query or headers are malformed (names are lower-case DNS names, in UTF-8)"
        }
        StatusCode::METHOD_NOT_ALLOWED => {
            "this route does not answer that method; the Allow header lists those it does"
        }
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is larger than 1 MiB",
        StatusCode::REQUEST_TIMEOUT => "the request took too long to arrive",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "the request body must be JSON",
        _ => status.canonical_reason().unwrap_or("the request failed"),
    };
    let mut answer = ApiError::new(status, message).into_response();
    for name in [header::ALLOW, header::CONNECTION, header::RETRY_AFTER] {
        if let Some(value) = response.headers().get(&name) {
            answer.headers_mut().insert(name, value.clone());
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    header::HeaderName::from_static(k),
                    HeaderValue::from_static(v),
                )
            })
            .collect()
    }

    #[test]
    fn json_is_recognised_with_parameters() {
        assert!(is_json(&headers(&[("content-type", "application/json")])));
        assert!(is_json(&headers(&[(
            "content-type",
            "Application/JSON; charset=utf-8"
        )])));
        for other in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ] {
            assert!(!is_json(&headers(&[("content-type", other)])), "{other}");
        }
        assert!(!is_json(&HeaderMap::new()));
    }

    #[test]
    fn same_origin_is_judged_by_fetch_metadata_then_origin() {
        let ok = |pairs| same_origin(&headers(pairs)).is_ok();
        assert!(ok(&[("sec-fetch-site", "same-origin")]));
        assert!(!ok(&[
            ("sec-fetch-site", "cross-site"),
            ("origin", "http://h"),
            ("host", "h")
        ]));
        assert!(ok(&[
            ("origin", "https://hecate.example"),
            ("host", "hecate.example")
        ]));
        assert!(ok(&[
            ("origin", "http://127.0.0.1:8080"),
            ("host", "127.0.0.1:8080")
        ]));
        assert!(!ok(&[
            ("origin", "https://evil.example"),
            ("host", "hecate.example")
        ]));
        assert!(!ok(&[("origin", "null"), ("host", "hecate.example")]));
        assert!(!ok(&[("host", "hecate.example")]));
    }
}
