//! TokenReviews and SubjectAccessReviews, asked through a server's own client (which
//! needs `create` on `tokenreviews` and `subjectaccessreviews`) and cached briefly.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use hecate_ops::{Operation, Permission};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec, SubjectAccessReview,
    SubjectAccessReviewSpec,
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

impl Caller {
    /// The caller as ops' rules count people: an approval policy counts the groups
    /// the cluster reported here, never a name typed in.
    pub fn person(&self) -> hecate_ops::Person {
        hecate_ops::Person {
            name: self.username.clone(),
            groups: self.groups.clone(),
        }
    }
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
        if self.namespace.is_empty() {
            write!(
                f,
                "{} may not {} cluster-wide",
                self.username, self.permission
            )?;
        } else {
            write!(
                f,
                "{} may not {} in {}",
                self.username, self.permission, self.namespace
            )?;
        }
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

    /// Which of `operations` `caller` may perform in `namespace`, in their order: each
    /// distinct permission asked once (many operations share one), all at once. This
    /// is advice for a surface deciding what to offer, so every answer — a write's
    /// too — is cached as a read's is; the write itself is still asked afresh
    /// ([`Self::authorize`]) when it is made.
    pub async fn advise(
        &self,
        caller: &Caller,
        operations: impl IntoIterator<Item = Operation>,
        namespace: &str,
    ) -> Result<Vec<(Operation, bool)>, ReviewError> {
        let operations: Vec<Operation> = operations.into_iter().collect();
        let mut permissions: Vec<Permission> = Vec::new();
        for permission in operations.iter().map(|o| o.permission()) {
            if !permissions.contains(&permission) {
                permissions.push(permission);
            }
        }
        let asked = permissions.into_iter().map(|permission| async move {
            let key = (caller.clone(), permission, namespace.to_string());
            let review = self.review_access(caller, permission, namespace);
            let (decision, known) = self.reads.get_or_fetch(key, review).await?;
            self.observe(Review::Access, known);
            Ok::<_, ReviewError>((permission, decision.allowed))
        });
        let answers = futures::future::try_join_all(asked).await?;
        Ok(operations
            .into_iter()
            .map(|operation| {
                let permission = operation.permission();
                let allowed = answers.iter().any(|(p, a)| *p == permission && *a);
                (operation, allowed)
            })
            .collect())
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

    /// As [`Reviewer::check`], about one object by name (a SubjectAccessReview with
    /// its `name`), e.g. `bind` on one ClusterRole. Always asked afresh.
    pub async fn check_named(
        &self,
        caller: &Caller,
        operation: Operation,
        namespace: &str,
        name: &str,
    ) -> Result<Result<(), Denied>, ReviewError> {
        self.observe(Review::Access, false);
        let mut asked = attributes(operation.permission(), namespace);
        asked.name = Some(name.to_string());
        let decision = self.review(caller, asked).await?;
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
        self.review(caller, attributes(permission, namespace)).await
    }

    async fn review(
        &self,
        caller: &Caller,
        asked: ResourceAttributes,
    ) -> Result<Decision, ReviewError> {
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(caller.username.clone()),
                groups: Some(caller.groups.clone()),
                resource_attributes: Some(asked),
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

    /// Of `candidates`, the namespaces `caller` may read — asked with the overview's
    /// permission (`list gates`): once cluster-wide, and only when that is refused,
    /// for each namespace, all at once. A refusal drops the namespace silently; a
    /// review that fails fails the whole answer.
    pub async fn visible_namespaces(
        &self,
        caller: &Caller,
        candidates: Vec<String>,
    ) -> Result<Vec<String>, ReviewError> {
        visible(candidates, |namespace| async move {
            self.authorize(caller, Operation::Namespaces, &namespace)
                .await
                .map(|decision| decision.allowed)
        })
        .await
    }
}

/// Of `candidates`, the namespaces the identity `client` acts as may read — judged as
/// [`Reviewer::visible_namespaces`] judges a caller's (the overview's permission,
/// cluster-wide first, then all at once, a refusal dropping the namespace), with
/// SelfSubjectAccessReviews, which
/// every authenticated identity may create. For a surface acting as its own user (the
/// MCP server over stdio, with the person's kubeconfig).
pub async fn visible_to_itself(
    client: &kube::Client,
    candidates: Vec<String>,
) -> Result<Vec<String>, ReviewError> {
    let permission = Operation::Namespaces.permission();
    visible(candidates, |namespace| async move {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(attributes(permission, &namespace)),
                ..SelfSubjectAccessReviewSpec::default()
            },
            ..SelfSubjectAccessReview::default()
        };
        let answer = Api::<SelfSubjectAccessReview>::all(client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| ReviewError {
                context: "asking the cluster what this identity may do".into(),
                message: e.to_string(),
            })?;
        let status = answer.status.unwrap_or_default();
        Ok(status.allowed && status.denied != Some(true))
    })
    .await
}

/// The candidates `allowed` says yes to, asked all at once; in their order.
/// Of `candidates`, those `allowed` answers yes for. Asked cluster-wide (`""`) first:
/// a review without a namespace asks about every namespace, so someone who may read
/// them all costs one review instead of one per namespace (at 200 namespaces, 200
/// reviews every few seconds of a busy Overview).
async fn visible<F, Fut>(candidates: Vec<String>, allowed: F) -> Result<Vec<String>, ReviewError>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<bool, ReviewError>>,
{
    if candidates.is_empty() || allowed(String::new()).await? {
        return Ok(candidates);
    }
    let checks = candidates.into_iter().map(|namespace| {
        let asked = allowed(namespace.clone());
        async move { Ok::<_, ReviewError>(asked.await?.then_some(namespace)) }
    });
    let visible = futures::future::try_join_all(checks).await?;
    Ok(visible.into_iter().flatten().collect())
}

/// What a review asks about: `permission` in `namespace` (empty: cluster-wide).
fn attributes(permission: Permission, namespace: &str) -> ResourceAttributes {
    ResourceAttributes {
        namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
        group: Some(permission.group.into()),
        resource: Some(permission.resource.into()),
        subresource: (!permission.subresource.is_empty()).then(|| permission.subresource.into()),
        verb: Some(permission.verb.into()),
        ..ResourceAttributes::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_wide_refusal_says_so() {
        let denied = Denied {
            username: "alice".into(),
            permission: Operation::Grant.permission(),
            namespace: String::new(),
            reason: String::new(),
        };
        assert_eq!(
            denied.to_string(),
            "alice may not create clusterrolebindings cluster-wide"
        );
    }

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
