//! The operations layer: the one place Hecate's rules live.
//!
//! Every surface — the `hecate` CLI, the `hecate-api` server, the `hecate-mcp` server
//! and the web UI — calls this crate and formats what it returns; none of them decides
//! anything itself. Three implementations of a rule are three subtly different
//! products.
//!
//! - [`rules`] is pure: eligibility ([`rules::eligibility`]), promotion windows
//!   ([`rules::window`]), Explain ([`rules::explain`]) and the Overview
//!   ([`rules::overview`]), judged over a [`rules::NamespaceSnapshot`] with `now`
//!   passed in.
//! - [`Ops`] is the thin shell over a `kube::Client`: it fetches a snapshot in a
//!   bounded number of requests (one LIST or GET per kind, never one per object) and
//!   hands it to the rules. A long-running server gives it a [`Cache`]
//!   ([`Ops::with_cache`]): reflectors keep the objects current and reads cost no
//!   requests, with the same rules over the same objects.
//! - [`model`] holds the answers' shapes ([`Explanation`], [`Overview`], …): serde and
//!   JSON Schema types every surface serialises unchanged.
//! - The actions — [`Ops::promote`], [`Ops::approve`], [`Ops::abort`], [`Ops::poll`] —
//!   are judged by the same rules and are safe when many callers act at once; each
//!   answers one model type ([`Promoted`], [`Approved`], [`Aborted`], [`Polled`]).
//! - [`operation`] names every read and action a surface performs and the Kubernetes
//!   permission each needs ([`Operation::permission`]): the one catalogue the surfaces
//!   authorise and word refusals by.
//! - [`Error`] tells apart a missing object ([`Error::NotFound`]), a rule saying no
//!   ([`Error::Refused`], with a stable [`RefusalCode`]) and a failure to reach
//!   Kubernetes or Fides.
//!
//! Only this crate reads or writes `hecate.dev` objects.

mod actions;
mod cache;
mod error;
mod evidence;
mod flux;
pub mod lenient;
pub mod model;
pub mod operation;
mod ops;
mod preflight;
pub mod rights;
pub mod rules;
pub mod settings;
mod watch;

pub use cache::Cache;
pub use error::{Action, Error, Kind, Result};
pub use evidence::{dial_fides, dial_fides_trusting};
/// The Fides client a caller builds for [`Ops::verify_bundle`] and [`Ops::verify_trail`]
/// (only what the surfaces need of hecate-fides, not the whole crate).
pub use hecate_fides::{Client as FidesClient, Config as FidesConfig};
pub use model::{
    Aborted, Approved, AuditEntry, AuditKind, Blocker, BlockerKind, ChainState, Evidence,
    Explanation, FluxReconciled, FluxResource, FluxSuspended, Overview, Polled, Preflight,
    Promoted, Remedy, StagedGate, State, VerifyReport, Waiting,
};
pub use operation::{Operation, Permission};
pub use ops::{Clock, Ops, Scope, TimedExplanations};
pub use rights::{Right, Rights};
pub use rules::refusal::RefusalCode;
pub use watch::Change;
