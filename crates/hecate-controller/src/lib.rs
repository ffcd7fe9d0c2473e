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
//! - [`passage`]: the Passage engine — one step per call, its record written after
//!   each — and its controller;
//! - [`beacon`]: the Beacon controller — sources, tag selection, Bundle emission;
//! - [`health`]: health checkers (`flux`) and the pure evaluation of a Flux object;
//! - [`verify`]: verification after a crossing (`flagger`);
//! - [`steps`]: each built-in step's strict configuration, and the Gate-time check;
//! - [`reach`]: which addresses a step's HTTP request may reach (never the controller's
//!   own listeners; this host's addresses only with `--allow-local-http`);
//! - the process: [`Args`] and [`run`] (start-up order: logs, the CRD skew check in
//!   [`crd_check`], Flux discovery warnings in [`flux_api`], tracing from `OTEL_*` in
//!   [`telemetry`], metrics and probes, leader election in [`lease`], the controllers
//!   until SIGTERM), [`scope`] (namespace-label shards), [`metrics`], [`events`],
//!   [`condition`], [`predicate`], [`clock`], [`ready`], [`unreadable`] (objects that do
//!   not decode, reported on themselves).
//!
//! The expression language of `if:`, `with:` and `successIf` is a crate of its own,
//! `hecate-expr`, which does no I/O. How steps and Beacons reach their sources is
//! another, `hecate-sources`: the git CLI and git credentials (spec §5.2), the one
//! registry client and registry credentials, the one trust of every outbound client
//! (registries, chart repositories, the `http` and forge steps, Fides, OTLP) and the one
//! reader of the Secrets steps and Beacons name; it knows nothing of this crate.

mod args;
pub mod backoff;
pub mod beacon;
pub mod clock;
pub mod condition;
pub mod crd_check;
pub mod events;
pub mod flux_api;
pub mod gate;
pub mod health;
pub mod lease;
pub mod metrics;
pub mod passage;
pub mod predicate;
pub mod reach;
pub mod ready;
mod run;
pub mod scope;
mod serve;
pub mod steps;
pub mod telemetry;
pub mod unreadable;
pub mod verify;

pub use args::{Args, BindAddress, LogFormat};
pub use run::run;
