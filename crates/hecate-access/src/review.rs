//! TokenReviews and SubjectAccessReviews, asked through a server's own client (which
//! needs `create` on `tokenreviews` and `subjectaccessreviews`) and cached briefly.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use hecate_ops::{Operation, Permission};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use sha2::{Digest as _, Sha256};

use crate::cache::Cache;

const TOKEN_TTL: Duration = Duration::from_secs(10);
const READ_ACCESS_TTL: Duration = Duration::from_secs(5);

/// A caller the cluster vouched for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Caller {
    /// The username the cluster gave.
    pub username: String,
    /// Their groups.
    pub groups: Vec<String>,
}

/// The cluster could not be asked.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{context}: {message}")]
pub struct ReviewError {
    context: String,
    message: String,
}

/// The cluster's answer to "may they?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether they may.
    pub allowed: bool,
    /// The authoriser's reason, when it gave one.
    pub reason: String,
}

/// A caller refused an operation: who, which permission, where, and the authoriser's
/// reason. Its `Display` is the one sentence every surface answers with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denied {
    /// Who was refused.
    pub username: String,
    /// The permission they lack.
    pub permission: Permission,
    /// Where.
    pub namespace: String,
    /// The authoriser's reason; may be empty.
    pub reason: String,
}

/// `<user> may not <verb> <resource>[/<sub>] in <ns>[: <reason>]`.
impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} may not {} in {}",
            self.username, self.permission, self.namespace
        )?;
        if !self.reason.is_empty() {
            write!(f, ": {}", self.reason)?;
        }
        Ok(())
    }
}

/// Which review a cache lookup was for, as told to an observer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Review {
    /// A TokenReview: who a token belongs to.
    Token,
    /// A SubjectAccessReview: what a caller may do.
    Access,
}

/// Told of every lookup: which review, and whether the answer was known already (a
/// write's access review is never known).
type Observer = Arc<dyn Fn(Review, bool) + Send + Sync>;

/// Asks the cluster about callers.
#[derive(Clone)]
pub struct Reviewer {
    client: kube::Client,
    audiences: Vec<String>,
    tokens: Arc<Cache<[u8; 32], Option<Caller>>>,
    reads: Arc<Cache<(Caller, Permission, String), Decision>>,
    observer: Option<Observer>,
}

impl Reviewer {
    /// A reviewer asking through `client`; `audiences` are asked of every TokenReview
    /// (empty: the API server's own).
    pub fn new(client: kube::Client, audiences: Vec<String>) -> Self {
        Self {
            client,
            audiences,
            tokens: Arc::new(Cache::new(TOKEN_TTL)),
            reads: Arc::new(Cache::new(READ_ACCESS_TTL)),
            observer: None,
        }
    }

    /// The same reviewer, telling `observer` of each lookup (a server's metrics count
    /// cache hits and misses with it).
    #[must_use]
    pub fn observed(mut self, observer: impl Fn(Review, bool) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    fn observe(&self, review: Review, known: bool) {
        if let Some(observer) = &self.observer {
            observer(review, known);
        }
    }

    /// Who `token` belongs to, or `None` when the cluster does not know it.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Caller>, ReviewError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let (caller, known) = self
            .tokens
            .get_or_fetch(key, self.review_token(token))
            .await?;
        self.observe(Review::Token, known);
        Ok(caller)
    }

    async fn review_token(&self, token: &str) -> Result<Option<Caller>, ReviewError> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_string()),
                audiences: (!self.audiences.is_empty()).then(|| self.audiences.clone()),
            },
            ..TokenReview::default()
        };
        let answer = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| ReviewError {
                context: "asking the cluster who the caller is".into(),
                message: e.to_string(),
            })?;
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

    /// Whether `caller` may perform `operation` in `namespace` (empty: cluster-wide).
    /// Reads' answers are cached briefly; a write is always asked afresh, so a revoked
    /// promoter cannot promote.
    pub async fn authorize(
        &self,
        caller: &Caller,
        operation: Operation,
        namespace: &str,
    ) -> Result<Decision, ReviewError> {
        let permission = operation.permission();
        if operation.writes() {
            self.observe(Review::Access, false);
            return self.review_access(caller, permission, namespace).await;
        }
        let key = (caller.clone(), permission, namespace.to_string());
        let review = self.review_access(caller, permission, namespace);
        let (decision, known) = self.reads.get_or_fetch(key, review).await?;
        self.observe(Review::Access, known);
        Ok(decision)
    }

    /// `Ok` when `caller` may perform `operation` in `namespace`; the refusal, worded
    /// for every surface alike, when not.
    pub async fn check(
        &self,
        caller: &Caller,
        operation: Operation,
        namespace: &str,
    ) -> Result<Result<(), Denied>, ReviewError> {
        let decision = self.authorize(caller, operation, namespace).await?;
        Ok(if decision.allowed {
            Ok(())
        } else {
            Err(Denied {
                username: caller.username.clone(),
                permission: operation.permission(),
                namespace: namespace.to_string(),
                reason: decision.reason,
            })
        })
    }

    async fn review_access(
        &self,
        caller: &Caller,
        permission: Permission,
        namespace: &str,
    ) -> Result<Decision, ReviewError> {
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(caller.username.clone()),
                groups: Some(caller.groups.clone()),
                resource_attributes: Some(ResourceAttributes {
                    namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
                    group: Some(permission.group.into()),
                    resource: Some(permission.resource.into()),
                    subresource: (!permission.subresource.is_empty())
                        .then(|| permission.subresource.into()),
                    verb: Some(permission.verb.into()),
                    ..ResourceAttributes::default()
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let answer = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| ReviewError {
                context: format!("asking the cluster what {} may do", caller.username),
                message: e.to_string(),
            })?;
        let status = answer.status.unwrap_or_default();
        Ok(Decision {
            allowed: status.allowed && status.denied != Some(true),
            reason: status.reason.unwrap_or_default(),
        })
    }

    /// Of `candidates`, the namespaces `caller` may read — each asked with the
    /// overview's permission (`list gates`), all at once. A refusal drops the
    /// namespace silently; a review that fails fails the whole answer.
    pub async fn visible_namespaces(
        &self,
        caller: &Caller,
        candidates: Vec<String>,
    ) -> Result<Vec<String>, ReviewError> {
        let checks = candidates.into_iter().map(|namespace| async move {
            let decision = self
                .authorize(caller, Operation::Namespaces, &namespace)
                .await?;
            Ok::<_, ReviewError>(decision.allowed.then_some(namespace))
        });
        let visible = futures::future::try_join_all(checks).await?;
        Ok(visible.into_iter().flatten().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_who_what_and_where() {
        let denied = Denied {
            username: "ci-bot".into(),
            permission: Operation::Approve.permission(),
            namespace: "shop".into(),
            reason: String::new(),
        };
        assert_eq!(
            denied.to_string(),
            "ci-bot may not update bundles/status in shop"
        );
        let with_reason = Denied {
            permission: Operation::ListGates.permission(),
            reason: "no RBAC policy matched".into(),
            ..denied
        };
        assert_eq!(
            with_reason.to_string(),
            "ci-bot may not list gates in shop: no RBAC policy matched"
        );
    }
}
