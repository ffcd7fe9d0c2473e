//! The forge steps (spec §5.6, §5.7): `git-pull-request` opens (or finds) a pull
//! request — a merge request on GitLab — and by default waits until it is merged;
//! `commit-status` reports the crossing on a commit. Both speak a forge's REST API,
//! GitHub's or GitLab's, rather than git.
//!
//! What they share lives here and in [`repo`] and `client`:
//!
//! - the repository comes from `repo:` or the checkout's `origin` remote (read with
//!   the git steps' helpers; no checkout when one is needed is `WorkDirLost`), and is
//!   parsed from either URL form, GitLab's nested groups included;
//! - the kind of forge is `provider:` or inferred from the public hosts' names; the API
//!   root is `baseURL:` or the public one;
//! - the host API token comes from the `credentialsRef` Secret: a GitHub App's
//!   installation token (from the process's shared cache) when the Secret holds an
//!   App's key, else `token`, else `password`;
//! - an answer maps to the reasons: 401/403 `ProviderAuthFailed` (terminal), 404
//!   `ProviderFailed` (terminal), anything else `ProviderFailed` (retryable). Minting an
//!   App token that fails is un-coded and retryable, as the spec has it.
//!
//! Both steps are re-entrant (spec §3.7): `git-pull-request` looks for the pull request
//! before it opens one, and `commit-status` posting the same state again is success.

mod client;
mod commit_status;
mod git_pull_request;
pub mod repo;

pub use client::Forge;
pub use commit_status::CommitStatus;
pub use git_pull_request::GitPullRequest;

use super::config::fields::Deferred;
use super::runner::{StepContext, StepError};

/// A value that must be known by now: expressions are substituted before a step runs,
/// so one left over is a configuration mistake.
fn known<'c, T>(value: &'c Deferred<T>, what: &str) -> Result<&'c T, StepError> {
    value.known().ok_or_else(|| {
        StepError::config(format!("{what} is still an expression after substitution"))
    })
}

/// How the Bundle is called in a title or a description: its alias when it has one.
fn bundle_name(ctx: &StepContext<'_>) -> String {
    let alias = ctx.bundle.spec.alias.trim();
    if alias.is_empty() {
        ctx.bundle.metadata.name.clone().unwrap_or_default()
    } else {
        alias.to_string()
    }
}

/// `value` trimmed, or `default` when blank.
fn or_default(value: &str, default: impl FnOnce() -> String) -> String {
    let value = value.trim();
    if value.is_empty() {
        default()
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use hecate_ops::catalogue::Step;

    use super::*;
    use crate::runner::Runner;

    /// A client for an API server that is not there: naming the steps needs none.
    fn no_cluster() -> kube::Client {
        let config = kube::Config::new("http://127.0.0.1:1".parse().expect("a URL"));
        kube::Client::try_from(config).expect("a client")
    }

    #[tokio::test]
    async fn the_runners_carry_their_registered_names() {
        let forge = Forge::new(no_cluster(), hecate_sources::git::AppTokens::default());
        let runners: [Box<dyn Runner>; 2] = [
            Box::new(GitPullRequest::new(forge.clone())),
            Box::new(CommitStatus::new(forge)),
        ];
        let names = runners.map(|runner| runner.name());
        assert_eq!(names, ["git-pull-request", "commit-status"]);
        for name in names {
            assert!(Step::named(name).is_some(), "{name} is not a built-in step");
        }
    }

    #[test]
    fn blank_means_the_default() {
        for (value, want) in [("", "d"), ("  ", "d"), (" main ", "main")] {
            assert_eq!(or_default(value, || "d".to_string()), want, "{value:?}");
        }
    }
}
