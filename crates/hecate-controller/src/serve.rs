//! The controller's two small HTTP endpoints: Prometheus metrics, and the probes a
//! kubelet asks (`/healthz`: the process answers; `/readyz`: it has started its
//! controllers).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::metrics::Metrics;

/// Serves `/metrics` on `addr` until the process ends.
pub(crate) async fn metrics(addr: SocketAddr, metrics: Arc<Metrics>) -> anyhow::Result<SocketAddr> {
    let app = Router::new()
        .route("/metrics", get(encode))
        .with_state(metrics);
    spawn(addr, app, "metrics").await
}

/// Serves `/healthz` and `/readyz` on `addr` until the process ends.
pub(crate) async fn probes(addr: SocketAddr, ready: Arc<AtomicBool>) -> anyhow::Result<SocketAddr> {
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readiness))
        .with_state(ready);
    spawn(addr, app, "probes").await
}

async fn spawn(addr: SocketAddr, app: Router, what: &'static str) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("serving {what} on {addr}"))?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, what, "an endpoint stopped serving");
        }
    });
    tracing::info!(addr = %bound, what, "serving");
    Ok(bound)
}

async fn encode(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.encode(),
    )
}

async fn readiness(State(ready): State<Arc<AtomicBool>>) -> impl IntoResponse {
    if ready.load(Ordering::Relaxed) {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "starting")
    }
}
