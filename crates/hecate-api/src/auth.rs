//! Who is calling, and what they may do — as the cluster decides.
//!
//! Every `/api` request carries a bearer token (or the `hecate_session` cookie the
//! UI sets); a TokenReview asks the API server who it belongs to. Each action is then
//! put to the API server as a SubjectAccessReview for that user and their groups. The
//! server's own credentials never decide what a caller may see or do.
//!
//! TokenReviews are cached for 10 seconds (bounded, by a hash of the token, answers
//! both ways) and asked once however many requests arrive together, so a page load —
//! or a burst of a thousand — costs at most one. Reads' access reviews are cached the
//! same way for 5 seconds; writes are always asked afresh.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use sha2::{Digest as _, Sha256};
use tokio::sync::OnceCell;

use crate::error::ApiError;
use crate::state::AppState;

const TOKEN_TTL: Duration = Duration::from_secs(10);
const READ_ACCESS_TTL: Duration = Duration::from_secs(5);
const CACHE_CAPACITY: usize = 4096;
/// The cookie the UI keeps its token in.
pub const SESSION_COOKIE: &str = "hecate_session";

/// The authenticated caller.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Caller {
    /// The username the cluster gave.
    pub username: String,
    /// Their groups.
    pub groups: Vec<String>,
}

/// What a caller asks to do, as one SubjectAccessReview each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read anything in a namespace: `list gates`.
    Read,
    /// Start a crossing: `create passages`.
    Promote,
    /// Approve: `update bundles/status`.
    Approve,
    /// Abort: `update passages`.
    Abort,
    /// Poll a Beacon: `update beacons`.
    Poll,
}

impl Access {
    /// (verb, resource, subresource), all in `hecate.dev`.
    fn attributes(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Self::Read => ("list", "gates", ""),
            Self::Promote => ("create", "passages", ""),
            Self::Approve => ("update", "bundles", "status"),
            Self::Abort => ("update", "passages", ""),
            Self::Poll => ("update", "beacons", ""),
        }
    }
}

/// An answer (once fetched) and when it was first asked for.
type Entry<V> = (Arc<OnceCell<V>>, Instant);

/// A small time-limited cache with a size bound, that asks once per key: callers
/// arriving while an answer is being fetched wait for it instead of asking again.
pub(crate) struct Cache<K, V> {
    entries: Mutex<HashMap<K, Entry<V>>>,
    ttl: Duration,
}

impl<K: std::hash::Hash + Eq + Clone, V: Clone> Cache<K, V> {
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            ttl,
        }
    }

    /// The answer for `key` and whether it was known already; `fetch` runs only when
    /// no live entry has (or is getting) one. A failed fetch is not remembered.
    async fn get_or_fetch<E>(
        &self,
        key: K,
        fetch: impl Future<Output = Result<V, E>>,
    ) -> Result<(V, bool), E> {
        let cell = {
            let mut entries = self
                .entries
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let ttl = self.ttl;
            match entries.get(&key) {
                Some((cell, at)) if at.elapsed() < ttl => cell.clone(),
                _ => {
                    if entries.len() >= CACHE_CAPACITY {
                        entries.retain(|_, (_, at)| at.elapsed() < ttl);
                        if entries.len() >= CACHE_CAPACITY {
                            entries.clear();
                        }
                    }
                    let cell = Arc::new(OnceCell::new());
                    entries.insert(key, (cell.clone(), Instant::now()));
                    cell
                }
            }
        };
        if let Some(known) = cell.get() {
            return Ok((known.clone(), true));
        }
        let mut fetched = false;
        let value = cell
            .get_or_try_init(|| {
                fetched = true;
                fetch
            })
            .await?;
        Ok((value.clone(), !fetched))
    }
}

/// The caches the server keeps between requests.
pub(crate) struct AuthCaches {
    tokens: Cache<[u8; 32], Option<Caller>>,
    reads: Cache<(Caller, String), (bool, String)>,
}

impl AuthCaches {
    pub(crate) fn new() -> Self {
        Self {
            tokens: Cache::new(TOKEN_TTL),
            reads: Cache::new(READ_ACCESS_TTL),
        }
    }
}

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
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let (caller, known) = state
            .caches
            .tokens
            .get_or_fetch(key, review_token(state, token))
            .await?;
        state.metrics.token_cache(known);
        caller.ok_or_else(ApiError::unauthenticated)
    }
}

/// Asks the cluster who `token` belongs to: `None` when no one.
async fn review_token(state: &AppState, token: String) -> Result<Option<Caller>, ApiError> {
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: Some(token),
            audiences: (!state.audiences.is_empty()).then(|| state.audiences.clone()),
        },
        ..TokenReview::default()
    };
    let answer = Api::<TokenReview>::all(state.client.clone())
        .create(&PostParams::default(), &review)
        .await
        .map_err(|e| ApiError::internal(format!("asking the cluster who the caller is: {e}")))?;
    let status = answer.status.unwrap_or_default();
    if status.authenticated != Some(true) {
        return Ok(None);
    }
    let user = status.user.unwrap_or_default();
    Ok(user
        .username
        .filter(|u| !u.is_empty())
        .map(|username| Caller {
            username,
            groups: user.groups.unwrap_or_default(),
        }))
}

/// Asks the cluster whether `caller` may do `access` in `namespace`; 403 naming who may
/// not do what where, when not.
pub(crate) async fn authorize(
    state: &AppState,
    caller: &Caller,
    access: Access,
    namespace: &str,
) -> Result<(), ApiError> {
    let (allowed, reason) = if access == Access::Read {
        let key = (caller.clone(), namespace.to_string());
        let review = review_access(state, caller, access, namespace);
        let (answer, known) = state.caches.reads.get_or_fetch(key, review).await?;
        state.metrics.access_cache(known);
        answer
    } else {
        state.metrics.access_cache(false);
        review_access(state, caller, access, namespace).await?
    };
    if allowed {
        Ok(())
    } else {
        Err(forbidden(caller, access, namespace, &reason))
    }
}

/// One SubjectAccessReview: whether `caller` may, and the authoriser's reason.
async fn review_access(
    state: &AppState,
    caller: &Caller,
    access: Access,
    namespace: &str,
) -> Result<(bool, String), ApiError> {
    let (verb, resource, subresource) = access.attributes();
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(caller.username.clone()),
            groups: Some(caller.groups.clone()),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(namespace.into()),
                group: Some(hecate_types::GROUP.into()),
                resource: Some(resource.into()),
                subresource: (!subresource.is_empty()).then(|| subresource.into()),
                verb: Some(verb.into()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let answer = Api::<SubjectAccessReview>::all(state.client.clone())
        .create(&PostParams::default(), &review)
        .await
        .map_err(|e| {
            ApiError::internal(format!(
                "asking the cluster what {} may do: {e}",
                caller.username
            ))
        })?;
    let status = answer.status.unwrap_or_default();
    let allowed = status.allowed && status.denied != Some(true);
    Ok((allowed, status.reason.unwrap_or_default()))
}

fn forbidden(caller: &Caller, access: Access, namespace: &str, reason: &str) -> ApiError {
    let (verb, resource, subresource) = access.attributes();
    let resource = if subresource.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}/{subresource}")
    };
    let mut message = format!(
        "{} may not {verb} {resource} in {namespace}",
        caller.username
    );
    if !reason.is_empty() {
        message.push_str(&format!(": {reason}"));
    }
    ApiError::new(StatusCode::FORBIDDEN, message)
}
