//! `hecate-mcp` against a real API server, through rmcp's own client: over the stdio
//! framing in-process and as the built binary, over HTTP in both protocol eras, with
//! and without Kubernetes authentication.

// In tests a panic is the failure report, so unwrapping is how expectations are stated.
#![allow(clippy::unwrap_used)]

mod auth;
mod binary;
mod calls;
mod catalogue;
mod deploy;
mod evidence;
mod flux;
mod hardening;
mod harness;
mod http;
