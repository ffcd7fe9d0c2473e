//! `hecate-api` against a real API server with real identities: authentication,
//! authorisation as the caller, every route, the event stream, the OpenAPI document
//! and the deployment manifests.

// In tests a panic is the failure report, so unwrapping is how expectations are stated.
#![allow(clippy::unwrap_used)]

mod access;
mod approvals;
mod cached;
mod delivery;
mod deploy;
mod diff;
mod flux;
mod hardening;
mod harness;
mod oidc;
mod oidc_browser;
mod preview;
mod rollback;
mod routes;
mod schemathesis;
mod settings;
mod ui;
mod ui_approvals;
mod ui_attention;
mod ui_axe;
mod ui_browser;
mod ui_crossing;
mod ui_delivery;
mod ui_diff;
mod ui_fan_out;
mod ui_flux;
mod ui_graph;
mod ui_notify;
mod ui_pages;
mod ui_passage;
mod ui_rights;
mod ui_rollback;
mod ui_settings;
mod ui_timeline;
mod ui_verification;
mod watch;
