//! A release carried dev → staging → production for real (spec controller.md §10.1,
//! §10.3): a Beacon watching a git repository, three Gates whose steps clone, edit,
//! commit and push a fleet repository, wait for a stand-in Flux Kustomization the test
//! drives as Flux would, and call a loopback receiver — with `hecate-controller`
//! running as its own process and people acting through `hecate`. And one Gate asked
//! about through every surface's binary (`surfaces`): the same typed fixes from each.
//!
//! The binaries are the workspace's own (`cargo test --workspace` builds them before
//! any test runs); a test run for this crate alone says how to build them.

// In tests a panic is the failure report, so unwrapping is how expectations are stated.
#![allow(clippy::unwrap_used)]

mod fan_out;
mod fleet;
mod real_flux;
mod scenario;
mod surfaces;
