//! Fides: the compliance-evidence service Hecate reports to and gates on.
//!
//! This crate will hold the Fides HTTP client (reqwest over rustls), the shapes of
//! the data Fides exchanges (trails, artifacts, attestations, change-gate verdicts),
//! and the pure verification of a trail's tamper-evident hash chain. It knows nothing
//! of Kubernetes: `hecate-ops` decides when to call Fides and what the answers mean.
//!
//! It is empty until the Fides work lands; see `docs/ARCHITECTURE.md`.
