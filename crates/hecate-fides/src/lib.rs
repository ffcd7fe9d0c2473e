//! Fides: the compliance-evidence service Hecate reports to and gates on.
//!
//! - [`Client`]: one method per endpoint Hecate uses (verify a trail's chain, policy
//!   checks, allowlists, artifact trails, attestations, the change gate, approvals,
//!   ITSM change requests). Bearer token on every call, a 30 s limit, answers capped at
//!   1 MiB, no retries: errors say whether they are worth another try
//!   ([`Error::is_unavailable`]), a configuration problem ([`Error::is_auth`]) or a
//!   miss ([`Error::is_not_found`]).
//! - [`model`]: the data Fides exchanges, decoded leniently so servers of several
//!   versions work.
//! - [`chain`]: the tamper-evident hash chain, computed as Fides computes it (pure).
//!
//! Without its default `client` feature the crate is [`model`] and [`chain`] alone —
//! no HTTP, no I/O — which is what the pure `hecate-rules` takes.
//!
//! It knows nothing of Kubernetes: `hecate-ops` decides when to call Fides, with whose
//! credentials, and what the answers mean.

pub mod chain;
#[cfg(feature = "client")]
mod client;
#[cfg(feature = "client")]
mod error;
pub mod model;
#[cfg(feature = "client")]
mod probe;

#[cfg(feature = "client")]
pub use client::{Client, Config, DEFAULT_TIMEOUT, MAX_RESPONSE_BYTES, bare_digest};
#[cfg(feature = "client")]
pub use error::Error;
#[cfg(feature = "client")]
pub use probe::{Probe, Unanswered, probe};
/// A CA certificate a [`Client`] may trust besides the web PKI's ([`Client::trusting`]).
#[cfg(feature = "client")]
pub use reqwest::Certificate;
