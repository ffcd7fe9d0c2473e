//! The routes: each authenticates (the `Caller` extractor), authorises as the caller,
//! calls hecate-ops with the server's client, and answers JSON. Nothing here judges.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{MatchedPath, Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::{Stream, StreamExt as _, stream};
use hecate_ops::Scope;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::{Access, Caller, authorize};
use crate::error::ApiError;
use crate::state::AppState;

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// How long an event stream lives before it asks the client to reconnect (and be
/// authorised again).
const STREAM_LIFETIME: Duration = Duration::from_secs(30 * 60);
const API: &str = "/api/v1alpha1";

/// Every route of the server.
pub fn router(state: AppState) -> Router {
    let ns = format!("{API}/namespaces/{{ns}}");
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route(
            "/api/openapi.json",
            get(|| async { Json(crate::openapi::document()) }),
        )
        .route(&format!("{API}/namespaces"), get(namespaces))
        .route(&format!("{API}/overview"), get(overview))
        .route(&format!("{ns}/gates"), get(gates))
        .route(&format!("{ns}/gates/{{name}}"), get(gate))
        .route(&format!("{ns}/gates/{{name}}/explain"), get(explain))
        .route(&format!("{ns}/gates/{{name}}/promote"), post(promote))
        .route(&format!("{ns}/bundles"), get(bundles))
        .route(&format!("{ns}/bundles/{{name}}"), get(bundle))
        .route(&format!("{ns}/bundles/{{name}}/evidence"), get(evidence))
        .route(&format!("{ns}/bundles/{{name}}/approve"), post(approve))
        .route(&format!("{ns}/passages"), get(passages))
        .route(&format!("{ns}/passages/{{name}}"), get(passage))
        .route(&format!("{ns}/passages/{{name}}/abort"), post(abort))
        .route(&format!("{ns}/beacons"), get(beacons))
        .route(&format!("{ns}/beacons/{{name}}"), get(beacon))
        .route(&format!("{ns}/beacons/{{name}}/poll"), post(poll))
        .route(&format!("{ns}/audit"), get(audit))
        .route(&format!("{ns}/watch"), get(watch))
        .route("/api", get(api_not_found).post(api_not_found))
        .route(
            "/api/{*rest}",
            get(api_not_found)
                .post(api_not_found)
                .put(api_not_found)
                .delete(api_not_found)
                .patch(api_not_found),
        )
        .merge(crate::ui::router())
        .layer(axum::middleware::from_fn_with_state(state.clone(), measure))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// Counts and times every request by its route template (never the raw path, which
/// would make one series per object).
async fn measure(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    state.metrics.request(
        &route,
        &method,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

async fn api_not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such API route")
}

async fn healthz() -> Json<serde_json::Value> {
    Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}))
}

/// Ready when the cache (if any) has listed everything and the API server answers its
/// own readiness check.
async fn readyz(State(state): State<AppState>) -> Response {
    if state.cache.as_ref().is_some_and(|cache| !cache.is_ready()) {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "still listing Gates, Bundles, Passages and Beacons",
        )
        .into_response();
    }
    let request = match axum::http::Request::get("/readyz").body(Vec::new()) {
        Ok(request) => request,
        Err(e) => return ApiError::internal(e.to_string()).into_response(),
    };
    match tokio::time::timeout(Duration::from_secs(5), state.client.request_text(request)).await {
        Ok(Ok(_)) => Json(json!({"status": "ok"})).into_response(),
        Ok(Err(e)) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the Kubernetes API is not ready: {e}"),
        )
        .into_response(),
        Err(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the Kubernetes API did not answer within 5s",
        )
        .into_response(),
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
        .into_response()
}

/// A namespace name: a DNS-1123 label.
fn check_namespace(ns: &str) -> Result<(), ApiError> {
    let ok = !ns.is_empty()
        && ns.len() <= 63
        && ns
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !ns.starts_with('-')
        && !ns.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "{ns:?} is not a valid namespace name"
        )))
    }
}

/// An object name: a DNS-1123 subdomain.
fn check_name(name: &str) -> Result<(), ApiError> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "{name:?} is not a valid object name"
        )))
    }
}

/// Checks the names in the path and the caller's access in the namespace.
async fn admit(
    state: &AppState,
    caller: &Caller,
    access: Access,
    ns: &str,
    name: Option<&str>,
) -> Result<(), ApiError> {
    check_namespace(ns)?;
    if let Some(name) = name {
        check_name(name)?;
    }
    authorize(state, caller, access, ns).await
}

/// A JSON body with no fields other than `T`'s; empty counts as `{}`.
fn strict_body<T: DeserializeOwned + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!("the request body is not the expected JSON: {e}"))
    })
}

/// The namespaces holding Hecate objects that the caller may read.
async fn visible_namespaces(state: &AppState, caller: &Caller) -> Result<Vec<String>, ApiError> {
    let candidates = state.ops.namespaces().await?;
    let checks = candidates.into_iter().map(|ns| async move {
        match authorize(state, caller, Access::Read, &ns).await {
            Ok(()) => Ok(Some(ns)),
            Err(e) if e.status() == StatusCode::FORBIDDEN => Ok(None),
            Err(e) => Err(e),
        }
    });
    let results = futures::future::try_join_all(checks).await?;
    Ok(results.into_iter().flatten().collect())
}

/// `{"namespaces": [...]}`.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Namespaces {
    namespaces: Vec<String>,
}

async fn namespaces(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Namespaces>, ApiError> {
    Ok(Json(Namespaces {
        namespaces: visible_namespaces(&state, &caller).await?,
    }))
}

async fn overview(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<hecate_ops::Overview>, ApiError> {
    let visible = visible_namespaces(&state, &caller).await?;
    Ok(Json(state.ops.overview(&Scope::Namespaces(visible)).await?))
}

type Named = Path<(String, String)>;

async fn gates(
    State(state): State<AppState>,
    caller: Caller,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, None).await?;
    Ok(Json(state.ops.gates(&ns).await?).into_response())
}

async fn gate(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, Some(&name)).await?;
    Ok(Json(state.ops.gate(&ns, &name).await?).into_response())
}

async fn explain(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, Some(&name)).await?;
    Ok(Json(state.ops.explain(&ns, &name).await?).into_response())
}

async fn bundles(
    State(state): State<AppState>,
    caller: Caller,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, None).await?;
    Ok(Json(state.ops.bundles(&ns).await?).into_response())
}

async fn bundle(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, Some(&name)).await?;
    Ok(Json(state.ops.bundle(&ns, &name).await?).into_response())
}

async fn evidence(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, Some(&name)).await?;
    Ok(Json(state.ops.evidence(&ns, &name).await?).into_response())
}

/// `?gate=&bundle=` on the Passage list: exact matches on `spec.gate` and `spec.bundle`.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PassageFilter {
    gate: Option<String>,
    bundle: Option<String>,
}

async fn passages(
    State(state): State<AppState>,
    caller: Caller,
    Path(ns): Path<String>,
    filter: Result<Query<PassageFilter>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(filter) =
        filter.map_err(|e| ApiError::bad_request(format!("the query is not understood: {e}")))?;
    admit(&state, &caller, Access::Read, &ns, None).await?;
    let (gate, bundle) = (
        filter.gate.filter(|g| !g.is_empty()),
        filter.bundle.filter(|b| !b.is_empty()),
    );
    Ok(Json(
        state
            .ops
            .passages(&ns, gate.as_deref(), bundle.as_deref())
            .await?,
    )
    .into_response())
}

async fn passage(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, Some(&name)).await?;
    Ok(Json(state.ops.passage(&ns, &name).await?).into_response())
}

async fn beacons(
    State(state): State<AppState>,
    caller: Caller,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, None).await?;
    Ok(Json(state.ops.beacons(&ns).await?).into_response())
}

async fn beacon(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, Some(&name)).await?;
    Ok(Json(state.ops.beacon(&ns, &name).await?).into_response())
}

async fn audit(
    State(state): State<AppState>,
    caller: Caller,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, None).await?;
    Ok(Json(state.ops.audit(&ns).await?).into_response())
}

/// `POST …/gates/{name}/promote`.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PromoteRequest {
    /// The Bundle to move.
    #[serde(default)]
    bundle: String,
}

async fn promote(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: PromoteRequest = strict_body(&body)?;
    admit(&state, &caller, Access::Promote, &ns, Some(&name)).await?;
    if request.bundle.is_empty() {
        return Err(ApiError::bad_request(
            "promote needs a bundle: {\"bundle\": \"<name>\"}",
        ));
    }
    check_name(&request.bundle)?;
    // A REST create answers the created object (docs/DECISIONS.md).
    let promoted = state
        .ops
        .promote(&ns, &name, &request.bundle, &caller.username)
        .await?;
    Ok(Json(promoted.created).into_response())
}

/// `POST …/bundles/{name}/approve`.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApproveRequest {
    /// The Gate the approval is for; an approval is for one Gate only.
    #[serde(default)]
    gate: String,
}

async fn approve(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: ApproveRequest = strict_body(&body)?;
    admit(&state, &caller, Access::Approve, &ns, Some(&name)).await?;
    if request.gate.is_empty() {
        return Err(ApiError::bad_request(
            "an approval is for one Gate: {\"gate\": \"<name>\"}",
        ));
    }
    check_name(&request.gate)?;
    Ok(Json(
        state
            .ops
            .approve(&ns, &name, &request.gate, &caller.username)
            .await?,
    )
    .into_response())
}

/// A body with nothing in it (abort, poll): `{}` or empty.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct NoFields {}

async fn abort(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let NoFields {} = strict_body(&body)?;
    admit(&state, &caller, Access::Abort, &ns, Some(&name)).await?;
    Ok(Json(state.ops.abort(&ns, &name, &caller.username).await?).into_response())
}

async fn poll(
    State(state): State<AppState>,
    caller: Caller,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let NoFields {} = strict_body(&body)?;
    admit(&state, &caller, Access::Poll, &ns, Some(&name)).await?;
    Ok(Json(state.ops.poll(&ns, &name).await?).into_response())
}

/// `GET …/watch`: server-sent events saying what changed in the namespace, from
/// Kubernetes watches. `open` first, once the watches are listening (every change
/// after it is reported), `changed` per change (kind, namespace, name — the
/// client refetches), `: ping` every 20 s, and `reconnect` after 30 minutes so the
/// caller is authorised again.
async fn watch(
    State(state): State<AppState>,
    caller: Caller,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    admit(&state, &caller, Access::Read, &ns, None).await?;
    let guard = state.metrics.watch_stream();
    let open = Event::default()
        .event("open")
        .data(json!({"namespace": ns}).to_string());
    let reconnect = Event::default()
        .event("reconnect")
        .data(json!({"namespace": ns}).to_string());
    // Watching before `open` tells the client to read: nothing after it is missed.
    let changes = state.ops.changes(&Scope::Namespaces(vec![ns.clone()])).await?.map(|change| match change {
        Ok(change) => Event::default()
            .event("changed")
            .data(json!({"namespace": change.namespace, "kind": change.kind.to_string(), "name": change.name}).to_string()),
        Err(e) => Event::default().event("error").data(json!({"error": e.to_string()}).to_string()),
    });
    let deadline = tokio::time::sleep(STREAM_LIFETIME);
    let events: std::pin::Pin<Box<dyn Stream<Item = Result<Event, Infallible>> + Send>> = Box::pin(
        stream::once(async move { open })
            .chain(changes.take_until(deadline))
            .chain(stream::once(async move { reconnect }))
            .map(move |event| {
                let _alive = &guard;
                Ok(event)
            }),
    );
    let mut response = Sse::new(events)
        .keep_alive(
            KeepAlive::new()
                .interval(Duration::from_secs(20))
                .text("ping"),
        )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    headers.insert("x-accel-buffering", header::HeaderValue::from_static("no"));
    Ok(response)
}
