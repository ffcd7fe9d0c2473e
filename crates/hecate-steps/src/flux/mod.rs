//! The Flux client the `flux` health checker and the `flux-*` steps share (spec
//! controller.md §6), and that checker. What "healthy" means for one Flux object is
//! ops' rule ([`hecate_ops::rules::flux`]); this module reads the objects it judges.
//!
//! - [`config`] decodes and validates a check's objects (kinds, versions, namespaces);
//!   pure, and the `flux-reconcile` and `flux-wait` steps validate theirs with it;
//! - [`access`] reaches the objects: the local cluster or a remote one through a
//!   kubeconfig Secret, kinds resolved through discovery; both cached;
//! - [`checker`] is the `flux` checker: it reads the objects and hands them to the rule.

pub mod access;
pub mod checker;
/// The `flux` checker's configuration — the catalogue's, which ops judges a Gate by.
pub use hecate_ops::catalogue::flux as config;

#[cfg(test)]
mod fixtures;

pub use access::FluxAccess;
pub use checker::FluxChecker;
