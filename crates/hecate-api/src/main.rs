//! `hecate-api`: the HTTP API over the operations layer, and the web UI.
//!
//! It serves the surfaces that cannot hold a kubeconfig — the web UI, dashboards,
//! bots, CI jobs — authenticating every caller with a TokenReview and authorising each
//! action with a SubjectAccessReview, so the cluster decides who may do what. It is a
//! transport over `hecate-ops`: it formats, never decides. The routes arrive with the
//! API work; for now it answers `--help` and `--version` only.

use clap::Parser;

/// The Hecate HTTP API server.
#[derive(Parser)]
#[command(name = "hecate-api", version)]
struct Args {}

fn main() {
    let Args {} = Args::parse();
}
