//! `hecate-controller`: the part of Hecate that moves releases (spec controller.md).
//!
//! People ask `hecate-ops`; the cluster's own loop is this crate, and it judges with the
//! same `hecate_ops::rules` — eligibility, windows, the Gate's obstacles, the step rule,
//! whether the change gate holds a change, the Passage a crossing creates and its name
//! — never a copy. Layered like the rest of
//! the workspace: pure decisions over data, a thin shell of I/O around them, a tiny
//! `main`.
//!
//! - [`gate`]: the Gate controller — record each finished crossing once, assess health,
//!   publish the eligible queue, open the next automatic crossing, prune old Passages;
//!   what it does next, its `Ready` condition and what a health change means are pure;
//! - [`passage`]: the Passage controller — the I/O around `hecate_steps`' engine (one
//!   step per call, its record written after each), attestation, and the watches that
//!   wake a waiting step;
//! - [`beacon`]: the Beacon controller — sources, tag selection, Bundle emission;
//! - [`verify`]: verification after a crossing (`flagger`);
//! - [`notify`]: telling people — what ops says a Gate has to tell, handed over by the
//!   Gate loop and sent by the Notifiers' own loop, the record in each Notifier's
//!   status;
//! - the process: [`Args`] and [`run`] (start-up order: logs, the CRD skew check in
//!   [`crd_check`], Flux discovery warnings in [`flux_api`], tracing from `OTEL_*` in
//!   [`telemetry`], metrics and probes, leader election in [`lease`], the controllers
//!   until SIGTERM), [`scope`] (namespace-label shards), [`metrics`], [`events`],
//!   [`condition`], [`predicate`], [`index`] (a store's objects by namespace), [`ready`], [`unreadable`] (objects that do not
//!   decode, reported on themselves).
//!
//! What a crossing does is a crate of its own, `hecate-steps`: the step contract, the
//! engine, the fifteen built-in steps and their configurations, the Flux client and
//! the health checkers, where a step's HTTP request may go, and the clock. This crate
//! gives it what it needs as values and implementations of its traits (the Lease as
//! the engine's `Fence`, the watches as `flux-wait`'s `Wake`). The expression
//! language is `hecate-expr`, which does no I/O; how steps and Beacons reach their
//! sources is `hecate-sources`. None of them knows this crate (`cargo xtask
//! check-layers`).

mod args;
pub mod backoff;
pub mod beacon;
pub mod condition;
pub mod crd_check;
pub mod events;
pub mod flux_api;
pub mod gate;
pub mod index;
pub mod lease;
pub mod metrics;
pub mod notify;
pub mod passage;
pub mod predicate;
mod run;
pub mod scope;
mod serve;
pub mod telemetry;
pub mod unreadable;
pub mod verify;

pub use args::{Args, BindAddress, LogFormat, LogLevel};
pub use run::run;
