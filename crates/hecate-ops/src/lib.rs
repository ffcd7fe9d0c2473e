//! The operations layer: the one place Hecate's rules live.
//!
//! Every surface — the `hecate` CLI, the `hecate-api` server, the `hecate-mcp` server
//! and the web UI — calls this crate and formats what it returns; none of them decides
//! anything itself. Three implementations of a rule are three subtly different
//! products.
//!
//! - [`rules`] is pure — it is the `hecate-rules` crate, which cannot do I/O —:
//!   eligibility ([`rules::eligibility`]), promotion windows
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
//!
//! # Example
//!
//! A bot that explains a Gate and acts on what stands in its way by the blockers'
//! types, never by their words (`examples/explain_gate.rs` is the whole program):
//!
//! ```no_run
//! use hecate_ops::{BlockerKind, Ops, Remedy};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let ops = Ops::new(kube::Client::try_default().await?);
//! let explanation = ops.explain("shop", "production").await?;
//! println!("{}: {}", explanation.state.as_str(), explanation.summary);
//! for blocker in &explanation.blockers {
//!     match (blocker.kind, &blocker.action) {
//!         (BlockerKind::NotApproved, Some(Remedy::Approve { gate, bundle, .. })) => {
//!             ops.approve("shop", bundle, gate, "release-bot").await?;
//!         }
//!         (BlockerKind::WindowClosed, _) => println!("wait until {:?}", blocker.until),
//!         _ => println!("{}: {}", blocker.detail, blocker.fix),
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! The same judgement needs no cluster: [`rules::explain::explain`] over objects
//! already in hand, at an instant of the caller's choosing.
//!
//! ```
//! use hecate_ops::rules::{self, NamespaceSnapshot};
//! use hecate_ops::{BlockerKind, Remedy};
//! use hecate_types::{Gate, GateSpec};
//!
//! let gate = Gate::new("dev", GateSpec::default()); // no steps yet
//! let snapshot = NamespaceSnapshot::new("shop", vec![gate.clone()], vec![], vec![]);
//! let explanation = rules::explain::explain(&snapshot, &gate, jiff::Timestamp::now());
//! assert_eq!(explanation.blockers[0].kind, BlockerKind::NoPassage);
//! assert_eq!(
//!     explanation.blockers[0].action,
//!     Some(Remedy::AddSteps { gate: "dev".into() })
//! );
//! ```

mod actions;
mod cache;
mod error;
mod evidence;
mod flux;
pub mod json_store;
pub mod kubeconfig;
pub mod lenient;
pub mod operation;
mod ops;
mod preflight;
pub mod rights;
pub mod settings;
mod watch;

/// The rules, their answers and the catalogue of what a Gate can name live in the pure
/// `hecate-rules` crate; they are named from here (`hecate_ops::rules`, …).
pub use hecate_rules::{catalogue, model, rules};

pub use cache::Cache;
pub use error::{Action, Error, Kind, Result};
pub use evidence::{dial_fides, dial_fides_trusting};
/// The Fides client a caller builds for [`Ops::verify_bundle`] and [`Ops::verify_trail`]
/// (only what the surfaces need of hecate-fides, not the whole crate).
pub use hecate_fides::{Client as FidesClient, Config as FidesConfig};
pub use model::{
    Aborted, Alternative, ApprovalProgress, Approved, Attention, AttentionKind, AuditEntry,
    AuditKind, Blocker, BlockerKind, ChainState, CrossingVerification, Delivery, Evidence,
    Explanation, FluxReconciled, FluxResource, FluxSuspended, GateTargets, Notifications,
    NotifierSummary, Overview, Person, Polled, Preflight, Promoted, QueuedApproval, Rejected,
    Remedy, RolledBack, RolloutAsked, RolloutNow, RolloutRecord, SentNotice, StagedGate, State,
    TargetFailure, Uncounted, VerifyReport, Waiting, WindowHold, Withdrawn, YourCrossing,
    YourCrossings, YourTurn,
};
pub use model::{ArtifactChange, ArtifactKind, BundleDiff, BundleRef, CommitGap, DiffDirection};
pub use operation::{Operation, Permission};
pub use ops::{Clock, DiffAgainst, Ops, Scope, TimedExplanations};
pub use rights::{Right, Rights};
pub use rules::refusal::RefusalCode;
pub use watch::Change;
