//! What a Gate can name — its steps, verifiers and health checkers — listed once, each
//! with the type its `with:` decodes to and the checks that need no cluster.
//!
//! Ops judges a Gate against this before any crossing ([`crate::rules::gate`]: Explain's
//! blocker, promote's refusal, the controller's `Ready`), and the runtimes that carry
//! the names out — hecate-steps' runners, the controller's verifiers and checkers —
//! decode with these same types, so a Gate that passes is never read differently
//! mid-crossing. Adding a step, verifier or checker is a line here and its runner
//! there; the runners' registries are built from these enums by exhaustive matches, so
//! the two cannot drift (Kargo keeps configurations apart from runners in one registry
//! the same way).

pub mod checker;
pub mod config;
pub mod flux;
pub mod step;
pub mod verifier;

pub use checker::Checker;
pub use step::Step;
pub use verifier::Verifier;

/// The names of `all`, comma-separated: how a message lists what a Gate may name.
fn listed<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> String {
    all.iter().map(|t| name(*t)).collect::<Vec<_>>().join(", ")
}
