//! What every handler shares.

use std::sync::Arc;

use hecate_access::{Review, Reviewer};
use hecate_ops::{Cache, Ops};

use crate::limits::{Limits, Streams};
use crate::metrics::Metrics;

/// The server's shared state: ops over its own client, who reviews callers, and the
/// metrics.
#[derive(Clone)]
pub struct AppState {
    pub(crate) ops: Ops,
    pub(crate) cache: Option<Cache>,
    pub(crate) client: kube::Client,
    pub(crate) reviewer: Reviewer,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) limits: Limits,
    pub(crate) streams: Arc<Streams>,
    /// Browsers sign in through an OIDC provider (`/auth/*`), as `/auth/config` tells
    /// the web UI.
    pub(crate) oidc_sign_in: bool,
}

impl AppState {
    /// The server's metrics.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// State over `client` (the server's own identity); `audiences` are asked of every
    /// TokenReview (empty: the API server's own). Reads go to the API server each
    /// time, so a read sees every write acknowledged before it.
    pub fn new(client: kube::Client, audiences: Vec<String>) -> Self {
        let metrics = Arc::new(Metrics::new());
        let counted = metrics.clone();
        let reviewer =
            Reviewer::new(client.clone(), audiences).observed(move |review, known| match review {
                Review::Token => counted.token_cache(known),
                Review::Access => counted.access_cache(known),
            });
        Self {
            ops: Ops::new(client.clone()),
            cache: None,
            client,
            reviewer,
            metrics,
            limits: Limits::default(),
            streams: Arc::new(Streams::default()),
            oidc_sign_in: false,
        }
    }

    /// The same state on a server that signs browsers in through an OIDC provider
    /// ([`crate::oidc::Oidc::router`] serves its routes): `/auth/config` says so.
    #[must_use]
    pub fn with_oidc_sign_in(mut self) -> Self {
        self.oidc_sign_in = true;
        self
    }

    /// The same state with other limits (timeouts, event streams).
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits the server keeps.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The same state running kubeconfigs' `exec` plugins in Settings' probe of
    /// connected clusters (see `Ops::with_kubeconfig_exec`).
    #[must_use]
    pub fn with_kubeconfig_exec(mut self, exec: hecate_ops::kubeconfig::Exec) -> Self {
        self.ops = self.ops.with_kubeconfig_exec(exec);
        self
    }

    /// The same state with a default Fides server for Gates that name none.
    #[must_use]
    pub fn with_fides_server(mut self, server: String) -> Self {
        self.ops = self.ops.with_fides_server(server);
        self
    }

    /// The same state answering reads from a watch-backed cache, as the server does:
    /// no API server request per read, answers a watch's latency (milliseconds)
    /// behind writes. Starts the watches on the current Tokio runtime; until they
    /// have listed once, reads go to the API server and `/readyz` says not ready.
    #[must_use]
    pub fn cached(mut self) -> Self {
        let (cache, driver) = Cache::start(self.client.clone());
        tokio::spawn(driver);
        self.ops = self.ops.with_cache(cache.clone());
        self.cache = Some(cache);
        self
    }
}
