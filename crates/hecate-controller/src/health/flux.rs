//! Judging one Flux-style object from its status (spec controller.md §6.3). The rule
//! lives in ops' rules ([`hecate_ops::rules::flux`]), so the `flux` health checker,
//! the `flux-wait` step and ops' list of the Flux objects a Gate depends on call "healthy"
//! the same thing.

pub use hecate_ops::rules::flux::{Evaluation, applied_revision, evaluate, revision_matches};
