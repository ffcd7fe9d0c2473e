//! The routes: one table ([`ROUTES`]) from which the router, the OpenAPI document
//! ([`crate::openapi`]) and the tests that every route is served and documented are
//! all built. Each row names the [`Operation`] the route performs; the handler
//! authenticates (the `Caller` extractor), authorises that operation as the caller
//! (hecate-access), calls hecate-ops with the server's client, and answers JSON.
//! Nothing here judges.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequestParts, MatchedPath, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post, put};
use axum::{Extension, Json, Router};
use futures::{Stream, StreamExt as _, stream};
use hecate_access::quote::{bounded, quote};
use hecate_ops::model::{
    AcceptFailuresRequest, ApproveRequest, PromoteRequest, RejectRequest, RollbackAsked,
    RollbackRequest,
};
use hecate_ops::{Operation, Scope};
use hecate_types::names::{self, is_dns_label, is_dns_subdomain};
use schemars::{JsonSchema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// The most of a decoder's message (which may quote the input) an answer repeats.
const MESSAGE_CHARS: usize = 160;
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
    /// `PUT`.
    Put,
}

impl Method {
    /// Lower-case, as OpenAPI keys operations.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::Post => "post",
            Self::Put => "put",
        }
    }

    /// Whether the method changes something (its body must be JSON, its cookie
    /// credential same-origin).
    pub fn writes(self) -> bool {
        !matches!(self, Self::Get)
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
    /// A caller allowed the operation cluster-wide.
    Cluster(Operation),
    /// Any authenticated caller, asking about themselves (what they may do in the
    /// path's namespace): never refused for want of a permission.
    Caller,
}

impl Guard {
    /// The operation the route performs, if it is one.
    pub fn operation(self) -> Option<Operation> {
        match self {
            Self::Open | Self::Caller => None,
            Self::Visible(operation) | Self::Namespaced(operation) | Self::Cluster(operation) => {
                Some(operation)
            }
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
        path: ns!("/rights"),
        guard: Guard::Caller,
        summary: "What the caller may do here: every operation with its permission, whether the cluster allows it, and the shipped role that grants it",
        query: &[],
        handler: || get(crate::rights::rights),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::Rights>),
    },
    Route {
        method: Method::Get,
        path: ns!("/gates"),
        guard: Guard::Namespaced(Operation::ListGates),
        summary: "The Gates, by name, each with its stage in the pipeline",
        query: &[],
        handler: || get(gates),
        request: None,
        answer: Answer::Json(list::<hecate_ops::StagedGate>),
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
        method: Method::Get,
        path: ns!("/gates/{name}/you"),
        guard: Guard::Namespaced(Operation::Explain),
        summary: "What the caller's own promote of each Bundle the Gate could take would meet: refused and why (the one who approved it may not also cross it), or not — promote's judgement, before the click",
        query: &[],
        handler: || get(your_crossings),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::YourCrossings>),
    },
    Route {
        method: Method::Post,
        path: ns!("/gates/{name}/promote"),
        guard: Guard::Namespaced(Operation::Promote),
        summary: "Start a crossing; the caller is the actor. Answers the created Passage; with dryRun=true creates nothing and answers what the crossing would do: promote's judgement for the caller (refused, with the code promote would answer, or not) and each step with its with: resolved (issue 55)",
        query: &["dryRun"],
        handler: || post(promote),
        request: Some(schema::<PromoteRequest>),
        answer: Answer::Json(promoted),
    },
    Route {
        method: Method::Post,
        path: ns!("/gates/{name}/rollback"),
        guard: Guard::Namespaced(Operation::Rollback),
        summary: "Go back: cross a Bundle the Gate verified before again (by default the newest earlier one), undoing its latest crossing; the caller is the actor. Answers the created Passage",
        query: &[],
        handler: || post(rollback),
        request: Some(schema::<RollbackRequest>),
        answer: Answer::Json(schema::<hecate_types::Passage>),
    },
    Route {
        method: Method::Get,
        path: ns!("/gates/{name}/targets"),
        guard: Guard::Namespaced(Operation::Targets),
        summary: "Where the Gate's latest rollout stands on each of its targets, by wave: phase, attempt, step, revision and why a target failed; `rollout` is absent until a rollout has begun",
        query: &[],
        handler: || get(targets),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::GateTargets>),
    },
    Route {
        method: Method::Get,
        path: ns!("/gates/{name}/notifications"),
        guard: Guard::Namespaced(Operation::Notifications),
        summary: "Who is told about the Gate (the namespace's Notifiers that hear it, and whether each delivers) and what they sent, newest first",
        query: &[],
        handler: || get(notifications),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::Notifications>),
    },
    Route {
        method: Method::Get,
        path: ns!("/gates/{name}/preflight"),
        guard: Guard::Namespaced(Operation::Preflight),
        summary: "Would Fides' evidence gate let each eligible Bundle through",
        query: &[],
        handler: || get(preflight),
        request: None,
        answer: Answer::Json(list::<hecate_ops::Preflight>),
    },
    Route {
        method: Method::Get,
        path: ns!("/gates/{name}/flux"),
        guard: Guard::Namespaced(Operation::FluxResources),
        summary: "The Flux objects the Gate's own watch names, as they stand",
        query: &[],
        handler: || get(flux),
        request: None,
        answer: Answer::Json(list::<hecate_ops::FluxResource>),
    },
    Route {
        method: Method::Post,
        path: ns!("/gates/{name}/flux/suspend"),
        guard: Guard::Namespaced(Operation::SuspendFlux),
        summary: "Suspend or resume a Flux object the Gate watches (needs patch on Flux's kustomizations)",
        query: &[],
        handler: || post(flux_suspend),
        request: Some(schema::<FluxSuspendRequest>),
        answer: Answer::Json(schema::<hecate_ops::FluxSuspended>),
    },
    Route {
        method: Method::Post,
        path: ns!("/gates/{name}/flux/reconcile"),
        guard: Guard::Namespaced(Operation::ReconcileFlux),
        summary: "Ask Flux to reconcile an object the Gate watches now (needs patch on Flux's kustomizations)",
        query: &[],
        handler: || post(flux_reconcile),
        request: Some(schema::<FluxObjectRequest>),
        answer: Answer::Json(schema::<hecate_ops::FluxReconciled>),
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
        method: Method::Get,
        path: ns!("/bundles/{name}/diff"),
        guard: Guard::Namespaced(Operation::GetBundle),
        summary: "What changed from another Bundle to this one: their artifacts side by side and the commits between them, newest first (going back: the commits undone), as the Beacon recorded them. `against` names a Gate (what it runs now) or a Bundle, a Gate when one has the name; without it, the Beacon's previous Bundle",
        query: &["against"],
        handler: || get(diff),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::BundleDiff>),
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
        method: Method::Post,
        path: ns!("/bundles/{name}/reject"),
        guard: Guard::Namespaced(Operation::Reject),
        summary: "Say no to the Bundle for one Gate, with a reason; it holds the Bundle there until withdrawn. The caller is the one who rejects",
        query: &[],
        handler: || post(reject),
        request: Some(schema::<RejectRequest>),
        answer: Answer::Json(schema::<hecate_ops::Rejected>),
    },
    Route {
        method: Method::Post,
        path: ns!("/bundles/{name}/withdraw-rejection"),
        guard: Guard::Namespaced(Operation::WithdrawRejection),
        summary: "Withdraw the rejections holding the Bundle from one Gate that the caller may withdraw: their own, or any when the Gate's approval policy names them",
        query: &[],
        handler: || post(withdraw_rejection),
        request: Some(schema::<ApproveRequest>),
        answer: Answer::Json(schema::<hecate_ops::Withdrawn>),
    },
    Route {
        method: Method::Get,
        path: ns!("/approvals"),
        guard: Guard::Namespaced(Operation::Approvals),
        summary: "The Bundles waiting on a person for a Gate — approvals missing, or a rejection standing — each with its progress against the Gate's policy and what the caller's own approval would do",
        query: &[],
        handler: || get(approvals),
        request: None,
        answer: Answer::Json(list::<hecate_ops::QueuedApproval>),
    },
    Route {
        method: Method::Get,
        path: ns!("/metrics"),
        guard: Guard::Namespaced(Operation::Delivery),
        summary: "How well releases are delivered: lead time, deployment frequency, change failure rate and time to restore, per Gate and where releases end up, over `since` (30d, 2w, 12h; 30 days when absent); `gate` asks for one Gate's",
        query: &["gate", "since"],
        handler: || get(delivery),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::Delivery>),
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
        method: Method::Post,
        path: ns!("/passages/{name}/retry"),
        guard: Guard::Namespaced(Operation::RetryTargets),
        summary: "Ask a halted rollout to cross its failed targets again; the caller is the one who asked, kept on the record",
        query: &[],
        handler: || post(retry),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::RolloutAsked>),
    },
    Route {
        method: Method::Post,
        path: ns!("/passages/{name}/accept-failures"),
        guard: Guard::Namespaced(Operation::AcceptFailures),
        summary: "Accept the failures that halted a rollout, for a reason, so it goes on; who, when and why are kept on the record",
        query: &[],
        handler: || post(accept_failures),
        request: Some(schema::<AcceptFailuresRequest>),
        answer: Answer::Json(schema::<hecate_ops::RolloutAsked>),
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
    Route {
        method: Method::Get,
        path: "/api/v1alpha1/settings",
        guard: Guard::Visible(Operation::Settings),
        summary: "The installation as the caller sees it: who they are, the Fides servers and clusters their Gates use (each probed), telemetry, the home cluster",
        query: &[],
        handler: || get(crate::settings::settings),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::settings::Settings>),
    },
    Route {
        method: Method::Get,
        path: "/api/v1alpha1/rbac/grants",
        guard: Guard::Cluster(Operation::ListGrants),
        summary: "Who holds the roles Hecate grants (needs list on clusterrolebindings)",
        query: &[],
        handler: || get(crate::settings::grants),
        request: None,
        answer: Answer::Json(schema::<hecate_ops::settings::Grants>),
    },
    Route {
        method: Method::Post,
        path: "/api/v1alpha1/rbac/grants",
        guard: Guard::Cluster(Operation::Grant),
        summary: "Grant a user or group one of Hecate's roles cluster-wide (needs create on clusterrolebindings); granting again answers created: false",
        query: &[],
        handler: || post(crate::settings::grant),
        request: Some(schema::<crate::settings::GrantBody>),
        answer: Answer::Json(schema::<hecate_ops::settings::Granted>),
    },
    Route {
        method: Method::Post,
        path: ns!("/clusters"),
        guard: Guard::Namespaced(Operation::ConnectCluster),
        summary: "Connect a remote cluster: its kubeconfig kept as a Secret labelled hecate.dev/cluster=true (needs create on secrets); an existing one has its kubeconfig replaced",
        query: &[],
        handler: || post(crate::settings::connect_cluster),
        request: Some(schema::<crate::settings::ClusterBody>),
        answer: Answer::Json(schema::<hecate_ops::settings::ClusterConnected>),
    },
    Route {
        method: Method::Put,
        path: ns!("/gates/{name}/evidence"),
        guard: Guard::Namespaced(Operation::SetGateEvidence),
        summary: "Set the Gate's evidence settings (needs update on gates); Flux restores a Gate applied from git",
        query: &[],
        handler: || put(crate::settings::set_evidence),
        request: Some(schema::<crate::settings::EvidenceBody>),
        answer: Answer::Json(schema::<hecate_ops::settings::EvidenceSet>),
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
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::guard::admit,
        ))
        .layer(axum::middleware::from_fn(crate::guard::json_errors))
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
    let method = request.method().clone();
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
        // Anyone may ask: the detail (addresses, identities) goes to the log only.
        Ok(Err(error)) => {
            tracing::warn!(%error, "readiness: the Kubernetes API did not answer /readyz");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the Kubernetes API is not ready",
            )
            .into_response()
        }
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
    pub(crate) caller: Caller,
    pub(crate) operation: Operation,
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
            "{} is not a valid object name",
            quote(name)
        )))
    }
}

impl Asked {
    /// Checks the names in the path and the caller's access to the operation in the
    /// namespace: 400, 403, or on.
    /// Whether the caller may perform the operation in `ns` (empty: cluster-wide):
    /// 403, or on.
    pub(crate) async fn allowed(&self, state: &AppState, ns: &str) -> Result<(), ApiError> {
        state
            .reviewer
            .check(&self.caller, self.operation, ns)
            .await??;
        Ok(())
    }

    pub(crate) async fn admit(
        &self,
        state: &AppState,
        ns: &str,
        name: Option<&str>,
    ) -> Result<(), ApiError> {
        if !is_dns_label(ns) {
            return Err(ApiError::bad_request(format!(
                "{} is not a valid namespace name",
                quote(ns)
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
        ApiError::bad_request(format!(
            "the request body is not the expected JSON: {}",
            bounded(&e.to_string(), MESSAGE_CHARS)
        ))
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
    Ok(Json(state.ops.staged_gates(&ns).await?).into_response())
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
    Ok(Json(state.ops.explain_shared(&ns, &name).await?).into_response())
}

/// `GET …/gates/{name}/targets`.
async fn targets(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.targets(&ns, &name).await?).into_response())
}

/// `GET …/gates/{name}/notifications`.
async fn notifications(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.notifications(&ns, Some(&name)).await?).into_response())
}

/// `GET …/gates/{name}/you`: read as the Gate's explanation is, judged for the
/// caller (their groups included, as approve records them).
async fn your_crossings(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    let yours = state
        .ops
        .your_crossings(&ns, &name, &asked.caller.person())
        .await?;
    Ok(Json(yours).into_response())
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

/// `?against=` on a Bundle's diff: a Gate or a Bundle.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DiffQuery {
    against: Option<String>,
}

/// `GET …/bundles/{name}/diff`: read as the Bundle is (DECISION 140).
async fn diff(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    query: Result<Query<DiffQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let query = understood(query)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    // Empty reads as absent, as elsewhere: the Beacon's previous Bundle.
    let against = match query.against.filter(|a| !a.is_empty()) {
        Some(against) => {
            check_name(&against)?;
            hecate_ops::DiffAgainst::Named(against)
        }
        None => hecate_ops::DiffAgainst::Previous,
    };
    Ok(Json(state.ops.diff(&ns, &name, against).await?).into_response())
}

/// A query string decoded, or a 400 saying what is not understood.
fn understood<T>(query: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    query.map(|Query(query)| query).map_err(|e| {
        ApiError::bad_request(format!(
            "the query is not understood: {}",
            bounded(&e.body_text(), MESSAGE_CHARS)
        ))
    })
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
    filter: Result<Query<PassageFilter>, QueryRejection>,
) -> Result<Response, ApiError> {
    let filter = understood(filter)?;
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

/// `?gate=&since=` on the delivery figures.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeliveryQuery {
    gate: Option<String>,
    since: Option<String>,
}

async fn delivery(
    State(state): State<AppState>,
    asked: Asked,
    Path(ns): Path<String>,
    query: Result<Query<DeliveryQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let query = understood(query)?;
    let period = hecate_ops::rules::delivery::period_or_default(query.since.as_deref())
        .map_err(|e| ApiError::bad_request(format!("since: {}", bounded(&e, MESSAGE_CHARS))))?;
    let gate = query.gate.filter(|g| !g.is_empty());
    asked.admit(&state, &ns, gate.as_deref()).await?;
    Ok(Json(state.ops.delivery(&ns, gate.as_deref(), period).await?).into_response())
}

async fn approvals(
    State(state): State<AppState>,
    asked: Asked,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, None).await?;
    let queue = state
        .ops
        .approval_queue(&ns, &asked.caller.person())
        .await?;
    Ok(Json(queue).into_response())
}

/// `?dryRun=true` on promote: what the crossing would do, creating nothing.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PromoteQuery {
    #[serde(rename = "dryRun")]
    dry_run: Option<bool>,
}

/// Promote's answer: the Passage it created, or, asked to dry-run, the preview.
fn promoted(generator: &mut SchemaGenerator) -> Value {
    json!({"oneOf": [
        schema::<hecate_types::Passage>(generator),
        schema::<hecate_ops::model::CrossingPreview>(generator),
    ]})
}

async fn promote(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    query: Result<Query<PromoteQuery>, QueryRejection>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let query = understood(query)?;
    let request: PromoteRequest = strict_body(&body)?;
    // A preview needs the right to promote: it says what that right would do.
    asked.admit(&state, &ns, Some(&name)).await?;
    if request.bundle.is_empty() {
        return Err(ApiError::bad_request(
            "promote needs a bundle: {\"bundle\": \"<name>\"}",
        ));
    }
    check_name(&request.bundle)?;
    if query.dry_run == Some(true) {
        let preview = state
            .ops
            .preview(&ns, &name, &request.bundle, &asked.caller.username)
            .await?;
        return Ok(Json(preview).into_response());
    }
    // A REST create answers the created object (docs/DECISIONS.md).
    let passage = state
        .ops
        .promote(&ns, &name, &request.bundle, &asked.caller.username)
        .await?;
    Ok(Json(passage).into_response())
}

async fn rollback(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: RollbackRequest = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    let asked_for = request
        .asked()
        .map_err(|problem| ApiError::bad_request(problem.0))?;
    // A REST create answers the created object, as promote does.
    let passage = match asked_for {
        RollbackAsked::Targets(which) => {
            state
                .ops
                .rollback_targets(&ns, &name, &which, &asked.caller.username)
                .await?
        }
        RollbackAsked::Gate(to) => {
            state
                .ops
                .rollback(&ns, &name, to.as_deref(), &asked.caller.username)
                .await?
        }
    };
    Ok(Json(passage).into_response())
}

async fn approve(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: ApproveRequest = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    one_gate(&request.gate, "an approval")?;
    Ok(Json(
        state
            .ops
            .approve(&ns, &name, &request.gate, asked.caller.person())
            .await?,
    )
    .into_response())
}

/// The one Gate a write about a Bundle (`what`: "an approval", …) is for: given, and
/// a name.
fn one_gate(gate: &str, what: &str) -> Result<(), ApiError> {
    if gate.is_empty() {
        return Err(ApiError::bad_request(format!(
            "{what} is for one Gate: {{\"gate\": \"<name>\"}}"
        )));
    }
    check_name(gate)
}

async fn reject(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: RejectRequest = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    one_gate(&request.gate, "a rejection")?;
    Ok(Json(
        state
            .ops
            .reject(
                &ns,
                &name,
                &request.gate,
                asked.caller.person(),
                &request.reason,
            )
            .await?,
    )
    .into_response())
}

async fn withdraw_rejection(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: ApproveRequest = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    one_gate(&request.gate, "a withdrawal")?;
    Ok(Json(
        state
            .ops
            .withdraw_rejection(&ns, &name, &request.gate, asked.caller.person())
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

async fn retry(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let NoFields {} = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.retry(&ns, &name, &asked.caller.username).await?).into_response())
}

async fn accept_failures(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: AcceptFailuresRequest = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(
        state
            .ops
            .accept_failures(&ns, &name, &asked.caller.username, &request.reason)
            .await?,
    )
    .into_response())
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

/// `GET …/watch`: server-sent events saying what changed in the namespace. `open`
/// first, once the changes are followed (every change after it is reported),
/// `changed` per change (kind, namespace, name — the client refetches), `: ping`
/// every 20 s, and `reconnect` after 30 minutes — or as soon as a periodic check finds
/// the caller may no longer read here — so the caller is authorised again.
///
/// The changes come from the server's watch-backed cache: a stream costs the API
/// server nothing. Streams are capped per caller and in all (429).
async fn watch(
    State(state): State<AppState>,
    asked: Asked,
    headers: axum::http::HeaderMap,
    Path(ns): Path<String>,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, None).await?;
    let slot = state.streams.admit(&asked.caller.username, &state.limits)?;
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
    let token = crate::auth::credential(&headers)
        .map(|c| c.token)
        .unwrap_or_default();
    let revoked = Box::pin(revoked(state.clone(), token, asked, ns));
    let deadline = Box::pin(tokio::time::sleep(STREAM_LIFETIME));
    let end = futures::future::select(deadline, revoked);
    let events: std::pin::Pin<Box<dyn Stream<Item = Result<Event, Infallible>> + Send>> = Box::pin(
        stream::once(async move { open })
            .chain(changes.take_until(end))
            .chain(stream::once(async move { reconnect }))
            .map(move |event| {
                let _alive = (&guard, &slot);
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

/// Resolves when a stream's caller may no longer follow `ns`: every
/// `Limits::reauthorize_every`, the token is reviewed again (a deleted identity, an
/// expired token) and the operation authorised again (a revoked role). A review that
/// fails closes the stream too: the client reconnects and is asked afresh.
async fn revoked(state: AppState, token: String, asked: Asked, ns: String) {
    loop {
        tokio::time::sleep(state.limits.reauthorize_every).await;
        let allowed = match state.reviewer.authenticate(&token).await {
            Ok(Some(caller)) if caller.username == asked.caller.username => {
                match state.reviewer.check(&caller, asked.operation, &ns).await {
                    Ok(decision) => decision.is_ok(),
                    Err(error) => {
                        tracing::warn!(%error, "re-authorising an event stream failed");
                        false
                    }
                }
            }
            Ok(_) => false,
            Err(error) => {
                tracing::warn!(%error, "re-authenticating an event stream failed");
                false
            }
        };
        if !allowed {
            tracing::info!(
                user = %asked.caller.username,
                namespace = %ns,
                "closing an event stream: its caller may no longer read there"
            );
            return;
        }
    }
}

async fn preflight(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.preflight(&ns, &name).await?).into_response())
}

async fn flux(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
) -> Result<Response, ApiError> {
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.flux_resources(&ns, &name).await?).into_response())
}

/// `POST …/gates/{name}/flux/reconcile`: which Flux object.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FluxObjectRequest {
    /// Its kind, e.g. `Kustomization`.
    #[schemars(length(min = 1, max = 63))]
    kind: String,
    /// Its name.
    #[schemars(length(min = 1, max = 253), regex(pattern = names::DNS_SUBDOMAIN_PATTERN))]
    name: String,
}

/// `POST …/gates/{name}/flux/suspend`: which Flux object, and whether to suspend
/// (`true`) or resume (`false`) it.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FluxSuspendRequest {
    /// Its kind, e.g. `Kustomization`.
    #[schemars(length(min = 1, max = 63))]
    kind: String,
    /// Its name.
    #[schemars(length(min = 1, max = 253), regex(pattern = names::DNS_SUBDOMAIN_PATTERN))]
    name: String,
    /// Suspend (`true`) or resume (`false`).
    suspend: bool,
}

/// The kind and name a Flux action names: both required, the kind a plain
/// identifier, the name an object name.
fn flux_object(kind: &str, name: &str) -> Result<(), ApiError> {
    if kind.is_empty() || name.is_empty() {
        return Err(ApiError::bad_request("kind and name are required"));
    }
    if !hecate_ops::rules::flux_watch::is_kind(kind) {
        return Err(ApiError::bad_request(format!(
            "{} is not a kind",
            quote(kind)
        )));
    }
    check_name(name)
}

async fn flux_suspend(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: FluxSuspendRequest = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    flux_object(&request.kind, &request.name)?;
    Ok(Json(
        state
            .ops
            .set_flux_suspend(
                &ns,
                &name,
                &request.kind,
                &request.name,
                request.suspend,
                &asked.caller.username,
            )
            .await?,
    )
    .into_response())
}

async fn flux_reconcile(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Named,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: FluxObjectRequest = strict_body(&body)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    flux_object(&request.kind, &request.name)?;
    Ok(Json(
        state
            .ops
            .reconcile_flux(&ns, &name, &request.kind, &request.name)
            .await?,
    )
    .into_response())
}
