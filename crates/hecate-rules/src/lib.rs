//! Hecate's rules and the answers they give — pure, so each has one answer.
//!
//! Every rule Hecate applies — which Bundles a Gate admits, whether a window is open,
//! whose approval counts, where a Gate stands, what a rollout does next, what a person
//! is told — is a function here over Kubernetes objects already in hand, with `now`
//! passed in. Nothing here holds a client, reads a clock, spawns a task or opens a
//! socket: `cargo xtask check-layers` fails the build if this crate takes a dependency
//! that does I/O (kube beyond its derive, tokio, reqwest, Fides' client). `hecate-ops`
//! fetches the objects (one LIST per kind, or its watch-fed cache), calls these rules
//! and acts on what they say; it re-exports both modules as `hecate_ops::rules` and
//! `hecate_ops::model`, which is how every other crate names them.
//!
//! - [`rules`]: the judgements, each module one rule or one composition of them
//!   ([`rules::standing`] is where a Gate stands; Explain, promote's refusals, the
//!   controller's `Ready` and every surface render it).
//! - [`catalogue`]: what a Gate can name — steps, verifiers, health checkers — each
//!   with its typed `with:`, which ops judges before a crossing and the runtimes
//!   decode with.
//! - [`model`]: the answers' shapes — serde and JSON Schema types whose keys and codes
//!   are stable interface.
//!
//! This is linkerd2's `policy-controller/core` beside its index and runtime: the
//! boundary between deciding and doing is a crate boundary, so it is a compile error to
//! cross it.

pub mod catalogue;
pub mod model;
pub mod rules;
