//! The test environment, tested: a real API server that stores our kinds faithfully,
//! validates them with our schemas, enforces RBAC for real identities, and never
//! leaves processes behind; clusters of their own, each with its own Flux, connected
//! as users connect them; and the Helm chart it installs Hecate as users do.

// In tests a panic is the failure report, so unwrapping is how expectations are stated.
#![allow(clippy::unwrap_used)]

mod chart;
mod cleanup;
mod cluster;
mod clusters;
mod identities;
mod kinds;
mod validation;
