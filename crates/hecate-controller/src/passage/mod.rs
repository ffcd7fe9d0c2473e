//! The Passage controller (spec controller.md §3): a Passage is one crossing — a list
//! of steps run against git, the cluster, registries and HTTP endpoints — resumable
//! after a restart and kept afterwards as the record.
//!
//! - [`reconcile`]: one reconcile, the I/O around `hecate_steps`' engine (which
//!   advances the steps and bounds what a status holds);
//! - `rollout`: a crossing of a Gate that spans targets — a record per target, each
//!   target's steps run by the same engine, in the waves ops' rule says;
//! - [`attest`]: recording a crossing in Fides — when it finishes, and its verification's
//!   verdict;
//! - [`controller`]: what wakes a Passage, on kube-runtime;
//! - [`wake`]: waking a waiting step when the object it waits for changes (`flux-wait`'s
//!   `Wake`).

pub mod attest;
pub mod controller;
pub mod reconcile;
mod rollout;
pub mod wake;

pub use reconcile::{Error, Outcome, PassageReconciler};
