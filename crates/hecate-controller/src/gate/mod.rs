//! The Gate controller (spec controller.md §2): each Gate records its crossings,
//! watches its health, publishes which Bundles may cross, and — when automatic —
//! opens the next crossing by itself.
//!
//! - [`advance`]: what the Gate does next, and where it then stands (pure);
//! - [`ready`]: what its `Ready` condition says, from that or from what stopped it
//!   (pure);
//! - [`health_change`]: what a newly assessed health means — the report, the Event,
//!   the time spent degraded (pure);
//! - [`record`]: recording a finished crossing, once (pure);
//! - [`retention`]: which old Passages go;
//! - [`reads`]: where a reconcile reads Passages and Bundles;
//! - [`reconcile`]: one reconcile, the I/O around the decisions;
//! - [`wakes`]: which Gates a change of a Passage or a Bundle wakes;
//! - [`controller`]: what wakes a Gate, on kube-runtime.

pub mod advance;
pub mod controller;
pub mod health_change;
pub mod reads;
pub mod ready;
pub mod reconcile;
pub mod record;
pub mod retention;
pub mod wakes;

pub use reconcile::{AT_REST_RESYNC, Error, GateReconciler, Outcome, RESYNC, Written};
