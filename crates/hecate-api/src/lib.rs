//! `hecate-api`: the HTTP API over the operations layer, for the surfaces that cannot
//! hold a kubeconfig — the web UI, dashboards, bots, CI jobs.
//!
//! It is a transport over `hecate-ops`: what it answers and what `hecate` prints cannot
//! disagree, because both are the same ops call. The cluster decides who may do what:
//! every `/api` request is authenticated with a TokenReview and every action authorised
//! with a SubjectAccessReview as the caller ([`auth`]); the actor recorded for a write
//! is always the authenticated user, never a field of the body.
//!
//! - [`routes`]: the route table, handlers, body and name validation, the SSE watch;
//! - [`error`]: `{"error", "status"[, "code"]}` bodies and status mapping;
//! - [`openapi`]: the OpenAPI document, from the handlers' own types;
//! - `metrics`: Prometheus counters and histograms; `ui`: the web UI's pages.

pub mod auth;
pub mod error;
mod metrics;
pub mod openapi;
pub mod routes;
mod server;
mod state;
mod ui;

pub use metrics::Metrics;
pub use routes::router;
pub use server::{Args, LogFormat, run};
pub use state::AppState;
