//! Reaching Flux objects: the cluster to read from (the controller's own, or a remote
//! one through a kubeconfig kept in a Secret, under the key Flux's
//! `kubeConfig.secretRef` reads — the one named, else `value`, else `value.yaml` —
//! a Secret that opts in, DECISION 147)
//! and the API resource a kind is served as, found through discovery — plurals are
//! never guessed.
//!
//! Both are cached: remote clients by the SHA-256 of their kubeconfig, so a rotated
//! kubeconfig gets a fresh client and an unchanged one is not rebuilt on every
//! reconcile — unless its credential came from an `exec` plugin (where the operator
//! allows them, [`FluxAccess::allowing_exec`]) and expires within
//! [`REFRESH_BEFORE`]: then the plugin runs again; resolved kinds per cluster, so a
//! check costs one GET per object. A kind
//! the controller watches in its own cluster ([`FluxAccess::follow`]) is read from the
//! watch's store instead, at no request: an idle fleet of Gates watching Flux costs
//! the API server nothing. The `flux` checker and the `flux-*` steps share one
//! [`FluxAccess`].

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use hecate_ops::kubeconfig::{Connection, Exec};
use hecate_sources::secrets::SecretUse;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::discovery::Scope;
use kube::runtime::reflector::{ObjectRef, Store};
use sha2::{Digest as _, Sha256};

use super::config::{ClusterSecret, Target};

/// How long a remote cluster may take to accept a connection, and to answer: a remote
/// cluster that is down must not hold a Gate's reconcile for minutes.
const REMOTE_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REMOTE_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How long before an `exec` plugin's token expires it is asked for a new one: longer
/// than a reconcile takes, so no request goes out with a token about to lapse.
pub const REFRESH_BEFORE: Duration = Duration::from_secs(5 * 60);

/// Clients and resolved kinds for reading Flux objects, shared by every check.
pub struct FluxAccess {
    local: kube::Client,
    exec: Exec,
    remotes: Mutex<HashMap<String, Connection>>,
    kinds: Mutex<HashMap<KindKey, (ApiResource, Scope)>>,
    /// The local cluster's kinds this controller watches, and what each watch holds.
    followed: Mutex<HashMap<Gvk, (ApiResource, Store<DynamicObject>)>>,
}

/// (group, version, kind)
type Gvk = (String, String, String);

/// A cluster to read from.
#[derive(Clone)]
pub struct Cluster {
    /// Empty for the local cluster, else the kubeconfig's SHA-256 in hex.
    id: String,
    client: kube::Client,
}

/// (cluster id, group, version, kind)
type KindKey = (String, String, String, String);

/// Why a remote cluster cannot be reached.
#[derive(thiserror::Error, Debug)]
pub enum ClusterError {
    /// The Secret could not be read (absent, forbidden, the API server unreachable) or
    /// may not be used: it has not opted in (DECISION 147). The message names it.
    #[error("{0}")]
    Secret(String),
    /// The Secret holds no usable kubeconfig, or one the controller will not use.
    #[error("the kubeconfig in Secret {namespace}/{secret} cannot be used: {problem}")]
    Kubeconfig {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        secret: String,
        /// What is wrong with it.
        problem: String,
    },
}

impl FluxAccess {
    /// Access through `local`, the controller's own client, with empty caches.
    pub fn new(local: kube::Client) -> Self {
        Self {
            local,
            exec: Exec::Refused,
            remotes: Mutex::default(),
            kinds: Mutex::default(),
            followed: Mutex::default(),
        }
    }

    /// Runs the `exec` plugins of kubeconfigs for tokens, where `exec` allows it (the
    /// operator's `--insecure-kubeconfig-exec`).
    #[must_use]
    pub fn allowing_exec(mut self, exec: Exec) -> Self {
        self.exec = exec;
        self
    }

    /// Reads `resource`'s objects in the local cluster from `store`, which a watch of
    /// every namespace keeps, rather than with a GET each.
    pub fn follow(&self, resource: &ApiResource, store: Store<DynamicObject>) {
        let key = gvk(&resource.group, &resource.version, &resource.kind);
        lock(&self.followed).insert(key, (resource.clone(), store));
    }

    /// Whether objects of `target`'s kind in the local cluster are read from a watch.
    pub fn follows(&self, target: &Target) -> bool {
        lock(&self.followed).contains_key(&target_gvk(target))
    }

    /// `target` as the local cluster's watch holds it: `None` when `cluster` is remote,
    /// its kind is not watched, or the watch has not listed yet; `Some(None)` when the
    /// watch holds no such object.
    pub fn watched(&self, cluster: &Cluster, target: &Target) -> Option<Option<DynamicObject>> {
        if !cluster.id.is_empty() {
            return None;
        }
        let (resource, store) = lock(&self.followed).get(&target_gvk(target)).cloned()?;
        futures::FutureExt::now_or_never(store.wait_until_ready())?.ok()?;
        let key = ObjectRef::new_with(&target.name, resource).within(&target.namespace);
        Some(store.get(&key).map(|object| object.as_ref().clone()))
    }

    /// The cluster to read from: the local one, or the one whose kubeconfig is in
    /// Secret `secret` of `namespace` (read through the local cluster).
    pub async fn cluster(
        &self,
        secret: Option<&ClusterSecret>,
        namespace: &str,
    ) -> Result<Cluster, ClusterError> {
        let Some(secret) = secret else {
            return Ok(Cluster {
                id: String::new(),
                client: self.local.clone(),
            });
        };
        let unusable = |problem: String| ClusterError::Kubeconfig {
            namespace: namespace.to_string(),
            secret: secret.name.clone(),
            problem,
        };
        let stored = hecate_sources::secrets::read_as(
            &self.local,
            namespace,
            &secret.name,
            SecretUse::Kubeconfig,
        )
        .await
        .map_err(ClusterError::Secret)?;
        let bytes =
            hecate_ops::kubeconfig::pick(&stored, secret.key.as_deref()).map_err(unusable)?;
        let id = hex::encode(Sha256::digest(bytes));
        let fresh = |connection: &Connection| {
            connection.expires_at.is_none_or(|at| {
                jiff::Timestamp::now()
                    + jiff::SignedDuration::try_from(REFRESH_BEFORE).unwrap_or_default()
                    < at
            })
        };
        if let Some(connection) = lock(&self.remotes).get(&id).filter(|c| fresh(c)) {
            return Ok(Cluster {
                id,
                client: connection.client.clone(),
            });
        }
        // Its problems in our words: the Secret's text never reaches a status or an Event.
        let connection = hecate_ops::kubeconfig::connect(
            bytes,
            REMOTE_CONNECT_TIMEOUT,
            REMOTE_READ_TIMEOUT,
            self.exec,
        )
        .await
        .map_err(unusable)?;
        let client = connection.client.clone();
        lock(&self.remotes).insert(id.clone(), connection);
        Ok(Cluster { id, client })
    }

    /// An API for `target`'s kind in `cluster`, resolved through discovery the first
    /// time and from the cache after that.
    pub async fn api(
        &self,
        cluster: &Cluster,
        target: &Target,
    ) -> Result<Api<DynamicObject>, kube::Error> {
        let key = kind_key(cluster, target);
        let cached = lock(&self.kinds).get(&key).cloned();
        let (resource, scope) = match cached {
            Some(resolved) => resolved,
            None => {
                let (resource, capabilities) =
                    kube::discovery::pinned_kind(&cluster.client, &target.gvk()).await?;
                let resolved = (resource, capabilities.scope);
                lock(&self.kinds).insert(key, resolved.clone());
                resolved
            }
        };
        let client = cluster.client.clone();
        Ok(match scope {
            Scope::Namespaced => Api::namespaced_with(client, &target.namespace, &resource),
            Scope::Cluster => Api::all_with(client, &resource),
        })
    }

    /// Drops what discovery said about `target`'s kind, so that the next read asks
    /// again: after a "not found", the kind may no longer be served at that version.
    pub fn forget_kind(&self, cluster: &Cluster, target: &Target) {
        lock(&self.kinds).remove(&kind_key(cluster, target));
    }
}

impl Cluster {
    /// The client that reaches this cluster, for writes such as `flux-reconcile`'s.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }
}

fn gvk(group: &str, version: &str, kind: &str) -> Gvk {
    (group.to_string(), version.to_string(), kind.to_string())
}

fn target_gvk(target: &Target) -> Gvk {
    gvk(&target.group, &target.version, &target.kind)
}

fn kind_key(cluster: &Cluster, target: &Target) -> KindKey {
    (
        cluster.id.clone(),
        target.group.clone(),
        target.version.clone(),
        target.kind.clone(),
    )
}

/// The caches hold plain data, valid whatever a panicking holder was doing.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A Kubernetes error in a sentence: the API server's own message for an answer
/// (`kube::Error`'s Display adds the whole Status struct), the chain of causes for a
/// failure to get one (the outermost says only "client error (Connect)").
pub fn describe(error: &kube::Error) -> String {
    if let kube::Error::Api(status) = error {
        return format!("{} ({} {})", status.message, status.code, status.reason);
    }
    hecate_types::error_chain(error)
}
