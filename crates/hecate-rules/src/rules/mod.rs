//! The rules: pure functions over snapshots of the cluster, with `now` passed in.
//!
//! Nothing here does I/O, reads a clock or can fail for want of a network, so every
//! rule is tested with plain data in milliseconds. `hecate_ops::Ops` fetches the
//! snapshots and calls these.

pub mod actions;
pub mod approval;
pub mod attention;
pub mod audit;
pub mod change;
pub mod delivery;
pub mod diff;
pub mod eligibility;
pub mod env;
pub mod explain;
pub mod flux;
pub mod flux_watch;
pub mod gate;
pub mod notice;
pub mod overview;
pub mod passage;
pub mod pipeline;
pub mod preflight;
pub mod preview;
pub mod promotion;
pub mod refusal;
pub mod rollback;
pub mod rollout;
pub mod settings;
pub mod snapshot;
pub mod standing;
pub mod steps;
pub mod timeline;
pub mod verification;
pub mod verify;
pub mod version;
pub mod window;

pub use snapshot::NamespaceSnapshot;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests;
