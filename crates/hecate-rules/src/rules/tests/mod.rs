//! The rules against the spec's acceptance cases (§11), over plain data.

mod approval;
mod attention;
mod audit;
mod change;
mod delivery;
mod eligibility;
mod explain;
mod overview;
mod passage;
mod pipeline;
mod preview;
mod promotion;
mod rollback;
mod rollout;
mod standing;
mod steps;
mod timeline;
mod verification;
mod window;
