//! `--auth kubernetes`: who an HTTP caller is (a TokenReview of their bearer token)
//! and what they may do (a SubjectAccessReview as them, per tool call) — as the
//! cluster decides. The server's own credentials only carry out what the caller was
//! allowed, and the actor of a write is the caller.
//!
//! Answers are remembered briefly, so a client's burst of requests costs one review:
//! tokens for 10 seconds (keyed by a hash, never the token), reads' access for 5
//! seconds. Writes' access is always asked afresh, so a revoked promoter cannot
//! promote.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use sha2::{Digest as _, Sha256};

use crate::tools::Access;

const TOKEN_TTL: Duration = Duration::from_secs(10);
const READ_ACCESS_TTL: Duration = Duration::from_secs(5);
const CACHE_CAPACITY: usize = 4096;

/// A caller the cluster vouched for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Caller {
    /// The username the cluster gave.
    pub username: String,
    /// Their groups.
    pub groups: Vec<String>,
}

/// The cluster could not be asked.
#[derive(Debug, thiserror::Error)]
#[error("{context}: {source}")]
pub struct ReviewError {
    context: String,
    #[source]
    source: kube::Error,
}

/// The cluster's answer to "may they?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether they may.
    pub allowed: bool,
    /// The authoriser's reason, when it gave one.
    pub reason: String,
}

/// Asks the cluster about callers, through the server's own client (which needs
/// `create` on `tokenreviews` and `subjectaccessreviews`).
#[derive(Clone)]
pub struct Reviewer {
    client: kube::Client,
    tokens: Arc<TtlCache<[u8; 32], Option<Caller>>>,
    reads: Arc<TtlCache<(Caller, Access, String), Decision>>,
}

impl Reviewer {
    /// A reviewer asking through `client`.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            tokens: Arc::new(TtlCache::new(TOKEN_TTL)),
            reads: Arc::new(TtlCache::new(READ_ACCESS_TTL)),
        }
    }

    /// Who `token` belongs to, or `None` when the cluster does not know it.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Caller>, ReviewError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(known) = self.tokens.get(&key) {
            return Ok(known);
        }
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_string()),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let answer = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|source| ReviewError {
                context: "asking the cluster who the caller is".into(),
                source,
            })?;
        let status = answer.status.unwrap_or_default();
        let caller = if status.authenticated == Some(true) {
            let user = status.user.unwrap_or_default();
            user.username
                .filter(|u| !u.is_empty())
                .map(|username| Caller {
                    username,
                    groups: user.groups.unwrap_or_default(),
                })
        } else {
            None
        };
        self.tokens.put(key, caller.clone());
        Ok(caller)
    }

    /// Whether `caller` may have `access` in `namespace` (empty: cluster-wide).
    pub async fn authorize(
        &self,
        caller: &Caller,
        access: Access,
        namespace: &str,
        writes: bool,
    ) -> Result<Decision, ReviewError> {
        let key = (caller.clone(), access, namespace.to_string());
        if !writes && let Some(known) = self.reads.get(&key) {
            return Ok(known);
        }
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(caller.username.clone()),
                groups: Some(caller.groups.clone()),
                resource_attributes: Some(ResourceAttributes {
                    namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
                    group: Some(hecate_types::GROUP.into()),
                    resource: Some(access.resource.into()),
                    verb: Some(access.verb.into()),
                    ..ResourceAttributes::default()
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let answer = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|source| ReviewError {
                context: format!("asking the cluster what {} may do", caller.username),
                source,
            })?;
        let status = answer.status.unwrap_or_default();
        let decision = Decision {
            allowed: status.allowed && status.denied != Some(true),
            reason: status.reason.unwrap_or_default(),
        };
        if !writes {
            self.reads.put(key, decision.clone());
        }
        Ok(decision)
    }
}

/// A small map whose entries expire; bounded, so a flood of distinct keys cannot grow
/// it without limit.
struct TtlCache<K, V> {
    entries: Mutex<HashMap<K, (V, Instant)>>,
    ttl: Duration,
}

impl<K: Hash + Eq, V: Clone> TtlCache<K, V> {
    fn new(ttl: Duration) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            ttl,
        }
    }

    fn get(&self, key: &K) -> Option<V> {
        let entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        entries
            .get(key)
            .filter(|(_, at)| at.elapsed() < self.ttl)
            .map(|(value, _)| value.clone())
    }

    fn put(&self, key: K, value: V) {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if entries.len() >= CACHE_CAPACITY {
            let ttl = self.ttl;
            entries.retain(|_, (_, at)| at.elapsed() < ttl);
            if entries.len() >= CACHE_CAPACITY {
                entries.clear();
            }
        }
        entries.insert(key, (value, Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire() {
        let cache = TtlCache::new(Duration::from_millis(20));
        cache.put(1, "one");
        assert_eq!(cache.get(&1), Some("one"));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(cache.get(&1), None);
    }

    #[test]
    fn the_cache_is_bounded() {
        let cache = TtlCache::new(Duration::from_secs(60));
        for n in 0..(CACHE_CAPACITY + 10) {
            cache.put(n, n);
        }
        let len = cache
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len();
        assert!(len <= CACHE_CAPACITY);
    }
}
