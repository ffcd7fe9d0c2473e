//! The rules against the spec's acceptance cases (§11), over plain data.

mod eligibility;
mod explain;
mod overview;
mod window;
