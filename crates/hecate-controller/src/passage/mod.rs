//! The Passage controller (spec controller.md §3): a Passage is one crossing — a list
//! of steps run against git, the cluster, registries and HTTP endpoints — resumable
//! after a restart and kept afterwards as the record.
//!
//! - [`engine`]: advancing the steps, the state machine (steps behind the
//!   [`crate::steps::runner::Runner`] trait);
//! - [`bounds`]: what a status may hold, so that it can always be recorded;
//! - [`reconcile`]: one reconcile, the I/O around the engine;
//! - [`attest`]: recording a finished crossing in Fides;
//! - [`trace`]: the crossing's trace ID, traceparent and spans (OpenTelemetry), as data;
//! - [`controller`]: what wakes a Passage, on kube-runtime;
//! - [`wake`]: waking a waiting step when the object it waits for changes.

pub mod attest;
pub mod bounds;
pub mod controller;
pub mod engine;
pub mod reconcile;
pub mod trace;
pub mod wake;

#[cfg(test)]
mod tests;

pub use reconcile::{Error, Outcome, PassageReconciler};
