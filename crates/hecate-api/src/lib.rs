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
//! - `guard`: what every request passes first (a known method; for writes a JSON
//!   body, same-origin when signed by the cookie, read within a time and size limit)
//!   and the JSON body of the refusals made below the handlers;
//! - [`Limits`]: header, body and idle timeouts, event-stream caps, re-authorisation;
//!   [`serve`]: HTTP/1.1 with those timeouts and graceful shutdown;
//! - `metrics`: Prometheus counters and histograms, every label from a fixed set;
//!   `ui`: the web UI's pages;
//! - [`oidc`]: browser sign-in through an OpenID Connect provider (`/auth/*`), the
//!   ID token then used as the bearer token.

pub mod auth;
pub mod error;
mod guard;
mod limits;
mod metrics;
pub mod oidc;
pub mod openapi;
mod rights;
pub mod routes;
mod server;
mod settings;
mod state;
mod ui;

pub use limits::Limits;
pub use metrics::Metrics;
pub use routes::router;
pub use server::{Args, LogFormat, run, serve};
pub use state::AppState;
