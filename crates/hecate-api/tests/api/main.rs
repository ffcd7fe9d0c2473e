//! `hecate-api` against a real API server with real identities: authentication,
//! authorisation as the caller, every route, the event stream, the OpenAPI document
//! and the deployment manifests.

// In tests a panic is the failure report, so unwrapping is how expectations are stated.
#![allow(clippy::unwrap_used)]

mod access;
mod cached;
mod deploy;
mod harness;
mod routes;
mod ui;
mod ui_browser;
mod ui_pages;
mod watch;
