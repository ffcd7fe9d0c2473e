//! The Beacon controller (spec controller.md §1): each Beacon resolves its watch entries
//! to concrete versions and, whenever the whole set changes, emits a Bundle named by
//! its content — the unit every Gate admits and every Passage moves.
//!
//! - [`semver`]: versions and ranges as the reference reads them (pure);
//! - [`select`]: choosing one tag (pure);
//! - [`decide`]: what a poll's answers come to (pure);
//! - [`emit`]: the Bundle a poll emits, and its idempotent creation;
//! - [`retention`]: which old Bundles go;
//! - [`source`]: the one trait every watch kind resolves through, and its failures;
//! - [`resolver`]: the built-in sources — [`git`], [`image`] and [`chart`] (over the
//!   controller's registry client, [`hecate_sources::oci`]), [`provider`] — with [`credentials`];
//! - [`reconcile`]: one reconcile, the I/O around the decisions;
//! - [`controller`]: what wakes a Beacon, on kube-runtime.

pub mod chart;
pub mod controller;
pub mod credentials;
pub mod decide;
pub mod emit;
pub mod git;
pub mod image;
pub mod provider;
pub mod reconcile;
pub mod resolver;
pub mod retention;
pub mod select;
pub mod semver;
pub mod source;

pub use reconcile::{BeaconReconciler, Error, Outcome};
pub use resolver::Resolver;
pub use source::{Class, Occasion, ResolveError, Source};
