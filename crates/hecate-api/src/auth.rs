//! Who is calling, for axum: the [`Caller`] extractor (a bearer token, reviewed by
//! hecate-access' [`Reviewer`](hecate_access::Reviewer)) and how access answers map to
//! HTTP. What a caller may do is asked in [`crate::routes`], as the route table says.
//!
//! Every `/api` request carries a bearer token (`Authorization: Bearer`, the scheme
//! in any case) or the `hecate_session` cookie; a cookie-signed write must come from
//! the server's own pages (`crate::guard`). A review the cluster cannot answer is
//! logged and answered with a fixed sentence ([`REVIEW_FAILED`]). Reviews are cached
//! and asked once per key however many requests arrive together (hecate-access); the
//! metrics count the hits and misses.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
pub use hecate_access::Caller;
use hecate_access::{Denied, ReviewError};

use crate::error::ApiError;
use crate::state::AppState;

/// The cookie the UI keeps its token in.
pub const SESSION_COOKIE: &str = "hecate_session";

/// A request's credential, and whether it came from the session cookie (a browser
/// sends cookies with requests other sites start: such writes must prove they come
/// from the server's own pages).
pub(crate) struct Credential {
    pub(crate) token: String,
    pub(crate) from_cookie: bool,
}

/// The credential of a request: the `Authorization: Bearer` header (the scheme in any
/// case), else the `hecate_session` cookie. The header wins.
pub(crate) fn credential(headers: &HeaderMap) -> Option<Credential> {
    if let Some(token) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(hecate_access::bearer_token)
    {
        return Some(Credential {
            token: token.to_string(),
            from_cookie: false,
        });
    }
    crate::oidc::cookie(headers, SESSION_COOKIE).map(|token| Credential {
        token,
        from_cookie: true,
    })
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let credential = credential(&parts.headers).ok_or_else(ApiError::unauthenticated)?;
        state
            .reviewer
            .authenticate(&credential.token)
            .await?
            .ok_or_else(ApiError::unauthenticated)
    }
}

/// A review the cluster could not answer (unreachable, or the server's own identity
/// refused the TokenReview or SubjectAccessReview): the detail — which names the
/// server's identity and its RBAC — goes to the log; the caller, who may not even be
/// authenticated, gets a fixed sentence.
impl From<ReviewError> for ApiError {
    fn from(error: ReviewError) -> Self {
        tracing::error!(%error, "a TokenReview or SubjectAccessReview failed");
        Self::internal(REVIEW_FAILED)
    }
}

/// What a caller is told when the cluster could not be asked about them.
pub const REVIEW_FAILED: &str =
    "the server could not ask the cluster who is calling or what they may do; try again later";

impl From<Denied> for ApiError {
    fn from(denied: Denied) -> Self {
        Self::new(StatusCode::FORBIDDEN, denied.to_string())
    }
}
