//! The routes: one table ([`ROUTES`]) from which the router, the OpenAPI document
//! ([`crate::openapi`]) and the tests that every route is served and documented are
//! all built. Each row names the [`Operation`] the route performs; the handler
//! authenticates (the `Caller` extractor), authorises that operation as the caller
//! (hecate-access), calls hecate-ops with the server's client, and answers JSON.
//! Nothing here judges.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{FromRequestParts, MatchedPath, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Extension, Json, Router};
use futures::{Stream, StreamExt as _, stream};
use hecate_ops::{Operation, Scope};
use hecate_types::names::{is_dns_label, is_dns_subdomain};
use schemars::{JsonSchema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// How long an event stream lives before it asks the client to reconnect (and be
/// authorised again).
const STREAM_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// An HTTP method of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
}

impl Method {
    /// Lower-case, as OpenAPI keys operations.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::Post => "post",
        }
    }
}

/// Who may call a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Anyone: the server's own health.
    Open,
    /// Any authenticated caller; what it answers is filtered to the namespaces the
    /// caller may perform the operation in.
    Visible(Operation),
    /// A caller allowed the operation in the path's namespace.
    Namespaced(Operation),
}

impl Guard {
    /// The operation the route performs, if it is one.
    pub fn operation(self) -> Option<Operation> {
        match self {
            Self::Open => None,
            Self::Visible(operation) | Self::Namespaced(operation) => Some(operation),
        }
    }
}

/// Writes a JSON Schema of an answer or a body into the document being built.
pub(crate) type SchemaFn = fn(&mut SchemaGenerator) -> Value;

/// What a route answers with, for the document.
#[derive(Clone, Copy)]
pub(crate) enum Answer {
    /// JSON of this schema.
    Json(SchemaFn),
    /// `text/event-stream`.
    EventStream,
}

/// One route: how it is served, who may call it, and how it is documented.
pub struct Route {
    /// The method.
    pub method: Method,
    /// The path template, `{ns}` and `{name}` the parameters.
    pub path: &'static str,
    /// Who may call it, and the operation it performs.
    pub guard: Guard,
    /// One line for the document.
    pub summary: &'static str,
    /// Query parameters it understands (all optional strings).
    pub query: &'static [&'static str],
    pub(crate) handler: fn() -> MethodRouter<AppState>,
    pub(crate) request: Option<SchemaFn>,
    pub(crate) answer: Answer,
}

fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Value {
    serde_json::to_value(generator.subschema_for::<T>()).unwrap_or(Value::Null)
}

fn list<T: JsonSchema>(generator: &mut SchemaGenerator) -> Value {
    json!({"type": "array", "items": schema::<T>(generator)})
}

fn health(_: &mut SchemaGenerator) -> Value {
    json!({"type": "object", "properties": {"status": {"type": "string"}, "version": {"type": "string"}}})
}

macro_rules! ns {
    ($rest:literal) => {
        concat!("/api/v1alpha1/namespaces/{ns}", $rest)
    };
}

/// Every documented route of the server, in the document's order.
pub const ROUTES: &[Route] = &[
    Route {
        method: Method::Get,
        path: "/healthz",
        guard: Guard::Open,
        summary: "Liveness: the server answers",
        query: &[],
        handler: || get(healthz),
        request: None,
        answer: Answer::Json(health),
    },
    Route {
        method: Method::Get,
        path: "/readyz",
        guard: Guard::Open,
        summary: "Readiness: the Kubernetes API answers",
        query: &[],
        handler: || get(readyz),
        request: None,
        answer: Answer::Json(health),
    },
    Route {
        method: Method::Get,
        path: "/api/v1alpha1/namespaces",
        guard: Guard::Visible(Operation::Namespaces),
        summary: "Namespaces holding Hecate objects that the caller may read",
        query: &[],
        handler: || get(namespaces),
        request: None,
        answer: Answer::Json(schema::<Namespaces>),
    },
    Route {
        method: Method::Get,
        path: "/api/v1alpha1/overview",
        guard: Guard::Visible(Operation::Overview),
        summary: "Every Gate the caller may read, at a glance",
        query: &[],
        handler: || get(overview),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::Overview>),
    },
    Route {
        method: Method::Get,
        path: ns!("/gates"),
        guard: Guard::Namespaced(Operation::ListGates),
        summary: "The Gates, by name",
        query: &[],
        handler: || get(gates),
        request: None,
        answer: Answer::Json(list::<hecate_types::Gate>),
    },
    Route {
        method: Method::Get,
        path: ns!("/gates/{name}"),
        guard: Guard::Namespaced(Operation::GetGate),
        summary: "One Gate",
        query: &[],
        handler: || get(gate),
        request: None,
        answer: Answer::Json(schema::<hecate_types::Gate>),
    },
    Route {
        method: Method::Get,
        path: ns!("/gates/{name}/explain"),
        guard: Guard::Namespaced(Operation::Explain),
        summary: "Why the Gate is where it is",
        query: &[],
        handler: || get(explain),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::Explanation>),
    },
    Route {
        method: Method::Post,
        path: ns!("/gates/{name}/promote"),
        guard: Guard::Namespaced(Operation::Promote),
        summary: "Start a crossing; the caller is the actor. Answers the created Passage",
        query: &[],
        handler: || post(promote),
        request: Some(schema::<PromoteRequest>),
        answer: Answer::Json(schema::<hecate_types::Passage>),
    },
    Route {
        method: Method::Get,
        path: ns!("/bundles"),
        guard: Guard::Namespaced(Operation::ListBundles),
        summary: "The Bundles, newest first",
        query: &[],
        handler: || get(bundles),
        request: None,
        answer: Answer::Json(list::<hecate_types::Bundle>),
    },
    Route {
        method: Method::Get,
        path: ns!("/bundles/{name}"),
        guard: Guard::Namespaced(Operation::GetBundle),
        summary: "One Bundle",
        query: &[],
        handler: || get(bundle),
        request: None,
        answer: Answer::Json(schema::<hecate_types::Bundle>),
    },
    Route {
        method: Method::Get,
        path: ns!("/bundles/{name}/evidence"),
        guard: Guard::Namespaced(Operation::Evidence),
        summary: "The Bundle's evidence in Fides",
        query: &[],
        handler: || get(evidence),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::Evidence>),
    },
    Route {
        method: Method::Post,
        path: ns!("/bundles/{name}/approve"),
        guard: Guard::Namespaced(Operation::Approve),
        summary: "Approve the Bundle for one Gate; the caller is the approver",
        query: &[],
        handler: || post(approve),
        request: Some(schema::<ApproveRequest>),
        answer: Answer::Json(schema::<hecate_ops::Approved>),
    },
    Route {
        method: Method::Get,
        path: ns!("/passages"),
        guard: Guard::Namespaced(Operation::ListPassages),
        summary: "The Passages, newest first; `gate` and `bundle` filter",
        query: &["gate", "bundle"],
        handler: || get(passages),
        request: None,
        answer: Answer::Json(list::<hecate_types::Passage>),
    },
    Route {
        method: Method::Get,
        path: ns!("/passages/{name}"),
        guard: Guard::Namespaced(Operation::GetPassage),
        summary: "One Passage",
        query: &[],
        handler: || get(passage),
        request: None,
        answer: Answer::Json(schema::<hecate_types::Passage>),
    },
    Route {
        method: Method::Post,
        path: ns!("/passages/{name}/abort"),
        guard: Guard::Namespaced(Operation::Abort),
        summary: "Ask a crossing to stop",
        query: &[],
        handler: || post(abort),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::Aborted>),
    },
    Route {
        method: Method::Get,
        path: ns!("/beacons"),
        guard: Guard::Namespaced(Operation::ListBeacons),
        summary: "The Beacons, by name",
        query: &[],
        handler: || get(beacons),
        request: None,
        answer: Answer::Json(list::<hecate_types::Beacon>),
    },
    Route {
        method: Method::Get,
        path: ns!("/beacons/{name}"),
        guard: Guard::Namespaced(Operation::GetBeacon),
        summary: "One Beacon",
        query: &[],
        handler: || get(beacon),
        request: None,
        answer: Answer::Json(schema::<hecate_types::Beacon>),
    },
    Route {
        method: Method::Post,
        path: ns!("/beacons/{name}/poll"),
        guard: Guard::Namespaced(Operation::Poll),
        summary: "Ask the Beacon to look now",
        query: &[],
        handler: || post(poll),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::Polled>),
    },
    Route {
        method: Method::Get,
        path: ns!("/audit"),
        guard: Guard::Namespaced(Operation::Audit),
        summary: "What happened, newest first",
        query: &[],
        handler: || get(audit),
        request: None,
        answer: Answer::Json(list::<hecate_ops::AuditEntry>),
    },
    Route {
        method: Method::Get,
        path: ns!("/watch"),
        guard: Guard::Namespaced(Operation::Watch),
        summary: "Server-sent events: `open`, then `changed` ({kind, namespace, name}) per change, `: ping` keep-alives, `reconnect` after 30 minutes",
        query: &[],
        handler: || get(watch),
        request: None,
        answer: Answer::EventStream,
    },
];

/// Every route of the server: the table's, the server's own (`/metrics`, the
/// document), `/api` 404s, and the web UI.
pub fn router(state: AppState) -> Router {
    let mut router = Router::new();
    for route in ROUTES {
        let mut handler = (route.handler)();
        if let Some(operation) = route.guard.operation() {
            handler = handler.layer(Extension(operation));
        }
        router = router.route(route.path, handler);
    }
    router
        .route("/metrics", get(metrics))
        .route(
            "/api/openapi.json",
            get(|| async { Json(crate::openapi::document()) }),
        )
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

/// The caller and the operation the route table says the route performs.
pub(crate) struct Asked {
    caller: Caller,
    operation: Operation,
}

impl FromRequestParts<AppState> for Asked {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let operation = parts
            .extensions
            .get::<Operation>()
            .copied()
            .ok_or_else(|| ApiError::internal("this route has no operation in the table"))?;
        let caller = Caller::from_request_parts(parts, state).await?;
        Ok(Self { caller, operation })
    }
}

fn check_name(name: &str) -> Result<(), ApiError> {
    if is_dns_subdomain(name) {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "{name:?} is not a valid object name"
        )))
    }
}

impl Asked {
    /// Checks the names in the path and the caller's access to the operation in the
    /// namespace: 400, 403, or on.
    async fn admit(&self, state: &AppState, ns: &str, name: Option<&str>) -> Result<(), ApiError> {
        if !is_dns_label(ns) {
            return Err(ApiError::bad_request(format!(
                "{ns:?} is not a valid namespace name"
            )));
        }
        if let Some(name) = name {
            check_name(name)?;
        }
        state
            .reviewer
            .check(&self.caller, self.operation, ns)
            .await??;
        Ok(())
    }
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
    Ok(state
        .reviewer
        .visible_namespaces(caller, candidates)
        .await?)
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
    asked: Asked,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, None).await?;
    Ok(Json(state.ops.gates(&ns).await?).into_response())
}

async fn gate(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.gate(&ns, &name).await?).into_response())
}

async fn explain(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.explain(&ns, &name).await?).into_response())
}

async fn bundles(
    State(state): State<AppState>,
    asked: Asked,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, None).await?;
    Ok(Json(state.ops.bundles(&ns).await?).into_response())
}

async fn bundle(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.bundle(&ns, &name).await?).into_response())
}

async fn evidence(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
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
    asked: Asked,
    Path(ns): Path<String>,
    filter: Result<Query<PassageFilter>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(filter) =
        filter.map_err(|e| ApiError::bad_request(format!("the query is not understood: {e}")))?;
    asked.admit(&state, &ns, None).await?;
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
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.passage(&ns, &name).await?).into_response())
}

async fn beacons(
    State(state): State<AppState>,
    asked: Asked,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, None).await?;
    Ok(Json(state.ops.beacons(&ns).await?).into_response())
}

async fn beacon(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.beacon(&ns, &name).await?).into_response())
}

async fn audit(
    State(state): State<AppState>,
    asked: Asked,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, None).await?;
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
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: PromoteRequest = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    if request.bundle.is_empty() {
        return Err(ApiError::bad_request(
            "promote needs a bundle: {\"bundle\": \"<name>\"}",
        ));
    }
    check_name(&request.bundle)?;
    // A REST create answers the created object (docs/DECISIONS.md).
    let passage = state
        .ops
        .promote(&ns, &name, &request.bundle, &asked.caller.username)
        .await?;
    Ok(Json(passage).into_response())
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
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: ApproveRequest = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    if request.gate.is_empty() {
        return Err(ApiError::bad_request(
            "an approval is for one Gate: {\"gate\": \"<name>\"}",
        ));
    }
    check_name(&request.gate)?;
    Ok(Json(
        state
            .ops
            .approve(&ns, &name, &request.gate, &asked.caller.username)
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
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let NoFields {} = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.abort(&ns, &name, &asked.caller.username).await?).into_response())
}

async fn poll(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let NoFields {} = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.poll(&ns, &name).await?).into_response())
}

/// `GET …/watch`: server-sent events saying what changed in the namespace, from
/// Kubernetes watches. `open` first, once the watches are listening (every change
/// after it is reported), `changed` per change (kind, namespace, name — the
/// client refetches), `: ping` every 20 s, and `reconnect` after 30 minutes so the
/// caller is authorised again.
async fn watch(
    State(state): State<AppState>,
    asked: Asked,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, None).await?;
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
