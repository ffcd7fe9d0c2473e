//! The settings routes (surfaces spec §2.9–2.10): `GET /settings`, the role grants,
//! connecting a cluster and a Gate's evidence settings. Each write checks its input
//! (400, nothing changed), then asks whether the caller may (the route's
//! [`Operation`], a SubjectAccessReview as them: 403), and only then writes with the
//! server's own identity — which has the RBAC for it only when the chart's
//! `api.settings.writable` is on (otherwise the write fails, 500). What a probe means
//! and what a write may say is hecate-ops'; this module renders.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hecate_access::quote::bounded;
use hecate_ops::Operation;
use hecate_ops::rules::settings::{EvidenceUpdate, GrantRequest, check_cluster};
use hecate_ops::settings::{Environment, SettingsIdentity};
use hecate_types::names;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::routes::Asked;
use crate::state::AppState;

/// A user or group name: something besides whitespace, no control characters.
const SUBJECT_PATTERN: &str =
    r"^[^\u0000-\u001f\u007f]*[^\s\u0000-\u001f\u007f][^\u0000-\u001f\u007f]*$";
/// An http or https URL, or nothing.
const URL_PATTERN: &str = r"^(https?://[^\s\u0000-\u001f\u007f]+)?$";
/// A Fides environment: a UUID, as the Gate's CRD requires.
const UUID_PATTERN: &str =
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

/// The largest grant or evidence body (a kubeconfig may be up to 1 MiB, the
/// server's limit for every body).
const SMALL_BODY: usize = 64 << 10;
/// The most of a decoder's message an answer repeats.
const MESSAGE_CHARS: usize = 160;

/// A settings write's body: JSON of `T` (unknown fields refused), at most `limit`
/// bytes; an empty body is a 400, as is anything undecodable.
fn body<T: DeserializeOwned>(body: &Bytes, limit: usize) -> Result<T, ApiError> {
    if body.len() > limit {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than {} KiB", limit >> 10),
        ));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request(
            "the request body is not the expected JSON: it is empty",
        ));
    }
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the request body is not the expected JSON: {}",
            bounded(&e.to_string(), MESSAGE_CHARS)
        ))
    })
}

/// `GET /api/v1alpha1/settings`: what the caller sees of the installation — the
/// Fides servers and clusters the Gates they may read use, each probed.
pub(crate) async fn settings(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<hecate_ops::settings::Settings>, ApiError> {
    let candidates = state.ops.namespaces().await?;
    let visible = state
        .reviewer
        .visible_namespaces(&caller, candidates)
        .await?;
    let identity = SettingsIdentity {
        name: caller.username,
        groups: caller.groups,
    };
    Ok(Json(
        state
            .ops
            .settings(
                &visible,
                identity,
                env!("CARGO_PKG_VERSION"),
                &Environment::from_process(),
            )
            .await?,
    ))
}

/// `GET /api/v1alpha1/rbac/grants`.
pub(crate) async fn grants(
    State(state): State<AppState>,
    asked: Asked,
) -> Result<Response, ApiError> {
    asked.allowed(&state, "").await?;
    Ok(Json(state.ops.grants().await?).into_response())
}

/// `POST /api/v1alpha1/rbac/grants`: who, as what, gets which role.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
// Required, though missing reads as empty: either way the answer is a 400.
#[schemars(extend("required" = ["subject", "role"]))]
pub(crate) struct GrantBody {
    /// The user or group.
    #[serde(default)]
    #[schemars(length(min = 1, max = 253), regex(pattern = SUBJECT_PATTERN))]
    subject: String,
    /// `User` (also when empty or absent) or `Group`.
    #[serde(default)]
    #[schemars(regex(pattern = "^(User|Group)?$"))]
    kind: String,
    /// One of `hecate-viewer`, `hecate-promoter`, `hecate-approver`,
    /// `hecate-flux-operator`.
    #[serde(default)]
    #[schemars(extend("enum" = ["hecate-viewer", "hecate-promoter", "hecate-approver", "hecate-flux-operator"]))]
    role: String,
}

pub(crate) async fn grant(
    State(state): State<AppState>,
    asked: Asked,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let request: GrantBody = body(&bytes, SMALL_BODY)?;
    let grant = GrantRequest::check(&request.subject, &request.kind, &request.role)
        .map_err(ApiError::bad_request)?;
    asked.allowed(&state, "").await?;
    // Binding a role needs `bind` on it (Kubernetes' escalation check): asked of the
    // caller, because the server, which does the binding, holds it for every
    // grantable role.
    state
        .reviewer
        .check_named(&asked.caller, Operation::BindRole, "", grant.role)
        .await??;
    Ok(Json(state.ops.grant(&grant, &asked.caller.username).await?).into_response())
}

/// `POST {ns}/clusters`: a remote cluster's kubeconfig, kept as the Secret `name`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("required" = ["name", "kubeconfig"]))]
pub(crate) struct ClusterBody {
    /// The Secret's name.
    #[serde(default)]
    #[schemars(length(min = 1, max = 253), regex(pattern = names::DNS_SUBDOMAIN_PATTERN))]
    name: String,
    /// The kubeconfig, as YAML or JSON text.
    #[serde(default)]
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    kubeconfig: String,
}

pub(crate) async fn connect_cluster(
    State(state): State<AppState>,
    asked: Asked,
    Path(ns): Path<String>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let request: ClusterBody = body(&bytes, usize::MAX)?;
    check_cluster(&request.name, &request.kubeconfig).map_err(ApiError::bad_request)?;
    asked.admit(&state, &ns, None).await?;
    Ok(Json(
        state
            .ops
            .connect_cluster(
                &ns,
                request.name.trim(),
                &request.kubeconfig,
                &asked.caller.username,
            )
            .await?,
    )
    .into_response())
}

/// `PUT {ns}/gates/{name}/evidence`: the Gate's Fides settings.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("required" = ["fidesEnvironment"]))]
pub(crate) struct EvidenceBody {
    /// The Fides server; empty: the one the server and controller are configured
    /// with.
    #[serde(default, rename = "serverURL")]
    #[schemars(length(max = 2048), regex(pattern = URL_PATTERN))]
    server_url: String,
    /// The Fides environment's UUID.
    #[serde(default)]
    #[schemars(regex(pattern = UUID_PATTERN))]
    fides_environment: String,
    /// The Secret holding the Fides API key (key `token`); absent or empty leaves
    /// the Gate's as it is.
    #[serde(default)]
    credentials_ref: Option<CredentialsRef>,
}

/// `{"name": "<secret>"}`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CredentialsRef {
    /// The Secret's name.
    #[serde(default)]
    #[schemars(length(min = 1, max = 253), regex(pattern = names::DNS_SUBDOMAIN_PATTERN))]
    name: String,
}

pub(crate) async fn set_evidence(
    State(state): State<AppState>,
    asked: Asked,
    Path((ns, name)): Path<(String, String)>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let request: EvidenceBody = body(&bytes, SMALL_BODY)?;
    let update = EvidenceUpdate {
        server_url: request.server_url,
        fides_environment: request.fides_environment,
        credentials_ref: request.credentials_ref.map(|r| r.name).unwrap_or_default(),
    }
    .check()
    .map_err(ApiError::bad_request)?;
    asked.admit(&state, &ns, Some(&name)).await?;
    Ok(Json(state.ops.set_gate_evidence(&ns, &name, &update).await?).into_response())
}
