//! Who is calling, for axum: the [`Caller`] extractor (a bearer token, reviewed by
//! hecate-access' [`Reviewer`](hecate_access::Reviewer)) and how access answers map to
//! HTTP. What a caller may do is asked in [`crate::routes`], as the route table says.
//!
//! Every `/api` request carries a bearer token (or the `hecate_session` cookie the
//! UI sets). Reviews are cached and asked once per key however many requests arrive
//! together (hecate-access); the metrics count the hits and misses.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
pub use hecate_access::Caller;
use hecate_access::{Denied, ReviewError};

use crate::error::ApiError;
use crate::state::AppState;

/// The cookie the UI keeps its token in.
pub const SESSION_COOKIE: &str = "hecate_session";

/// The bearer token of a request: the `Authorization: Bearer` header, else the
/// `hecate_session` cookie. The header wins.
pub(crate) fn bearer_token(parts: &Parts) -> Option<String> {
    if let Some(value) = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        && let Some(token) = value.strip_prefix("Bearer ")
    {
        let token = token.trim();
        return (!token.is_empty()).then(|| token.to_string());
    }
    parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.trim().to_string())
        .filter(|t| !t.is_empty())
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let token = bearer_token(parts).ok_or_else(ApiError::unauthenticated)?;
        state
            .reviewer
            .authenticate(&token)
            .await?
            .ok_or_else(ApiError::unauthenticated)
    }
}

impl From<ReviewError> for ApiError {
    fn from(error: ReviewError) -> Self {
        Self::internal(error.to_string())
    }
}

impl From<Denied> for ApiError {
    fn from(denied: Denied) -> Self {
        Self::new(StatusCode::FORBIDDEN, denied.to_string())
    }
}
