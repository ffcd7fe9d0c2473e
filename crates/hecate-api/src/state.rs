//! What every handler shares.

use std::sync::Arc;

use hecate_ops::Ops;

use crate::auth::AuthCaches;
use crate::metrics::Metrics;

/// The server's shared state: ops over its own client, and the caches and metrics.
#[derive(Clone)]
pub struct AppState {
    pub(crate) ops: Ops,
    pub(crate) client: kube::Client,
    pub(crate) caches: Arc<AuthCaches>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) audiences: Vec<String>,
}

impl AppState {
    /// The server's metrics.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// State over `client` (the server's own identity); `audiences` are asked of every
    /// TokenReview (empty: the API server's own).
    pub fn new(client: kube::Client, audiences: Vec<String>) -> Self {
        Self {
            ops: Ops::new(client.clone()),
            client,
            caches: Arc::new(AuthCaches::new()),
            metrics: Arc::new(Metrics::new()),
            audiences,
        }
    }
}
