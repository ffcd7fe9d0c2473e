//! `git-pull-request` and `commit-status` (spec §5.6, §5.7): the steps that talk to a
//! git host's API (GitHub or GitLab) rather than to the repository.

use serde::Deserialize;

use super::StepConfig;
use super::fields::{
    Deferred, GoDuration, HttpUrl, SecretRef, Textual, blank_is_unset, checkout, inside_work_dir,
};

/// A git host whose API the steps speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// GitHub or GitHub Enterprise Server.
    Github,
    /// GitLab, hosted or self-managed.
    Gitlab,
}

impl Textual for Provider {
    fn from_text(text: &str) -> Result<Self, String> {
        match text {
            "github" => Ok(Provider::Github),
            "gitlab" => Ok(Provider::Gitlab),
            _ => Err(format!("{text:?} is not one of github, gitlab")),
        }
    }
}

/// `git-pull-request`: open (or find) a pull request and, by default, wait until it is
/// merged.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GitPullRequestConfig {
    /// The Secret with the host API token (spec §5.2).
    pub credentials_ref: SecretRef,
    /// The checkout used to infer `repo` and `base`; blank = `repo`.
    #[serde(default)]
    pub path: String,
    /// The repository URL; blank = the checkout's `origin`.
    #[serde(default)]
    pub repo: String,
    /// The host kind; unset = inferred from the repository's host.
    #[serde(default, deserialize_with = "blank_is_unset")]
    pub provider: Option<Deferred<Provider>>,
    /// The API root, for self-hosted instances; unset = the public API.
    #[serde(default, rename = "baseURL", deserialize_with = "blank_is_unset")]
    pub base_url: Option<Deferred<HttpUrl>>,
    /// The branch with the changes; blank = `hecate/<passage name>`.
    #[serde(default)]
    pub head: String,
    /// The branch to merge into; blank = the checkout's current branch.
    #[serde(default)]
    pub base: String,
    /// The title; blank = one naming the Bundle and the Gate.
    #[serde(default)]
    pub title: String,
    /// The description.
    #[serde(default)]
    pub body: String,
    /// Labels to put on it.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Keep the step running until the pull request is merged.
    #[serde(default = "yes")]
    pub wait_for_merge: bool,
    /// How often to look while waiting; unset = one minute.
    #[serde(default, deserialize_with = "blank_is_unset")]
    pub poll_interval: Option<Deferred<GoDuration>>,
}

impl GitPullRequestConfig {
    /// The checkout directory, relative to the work directory.
    pub fn checkout(&self) -> &str {
        checkout(&self.path)
    }

    /// How often to look while waiting for the merge.
    pub fn poll_interval(&self) -> Deferred<GoDuration> {
        self.poll_interval.clone().unwrap_or(GoDuration::secs(60))
    }
}

impl StepConfig for GitPullRequestConfig {
    fn check(&self) -> Result<(), String> {
        self.credentials_ref.check("credentialsRef")?;
        inside_work_dir("path", &self.path)
    }
}

/// The state a commit status reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitState {
    /// The crossing is under way.
    Pending,
    /// The crossing landed.
    Success,
    /// The crossing failed.
    Failure,
}

impl Textual for CommitState {
    fn from_text(text: &str) -> Result<Self, String> {
        match text {
            "Pending" => Ok(CommitState::Pending),
            "Success" => Ok(CommitState::Success),
            "Failure" => Ok(CommitState::Failure),
            _ => Err(format!("{text:?} is not one of Pending, Success, Failure")),
        }
    }
}

/// `commit-status`: report the crossing on a commit, usually with `if: always`.
///
/// The reference never validates this step's configuration when judging a Gate (its
/// quirk Q9); here it is decoded and checked like every other step.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommitStatusConfig {
    /// The Secret with the host API token (spec §5.2).
    pub credentials_ref: SecretRef,
    /// The commit to report on; blank = the checkout's HEAD.
    #[serde(default)]
    pub sha: String,
    /// The checkout to read `sha` and `repo` from; blank = `repo`.
    #[serde(default)]
    pub path: String,
    /// The repository URL; blank = the checkout's `origin`.
    #[serde(default)]
    pub repo: String,
    /// The host kind; unset = inferred from the repository's host.
    #[serde(default, deserialize_with = "blank_is_unset")]
    pub provider: Option<Deferred<Provider>>,
    /// The API root, for self-hosted instances; unset = the public API.
    #[serde(default, rename = "baseURL", deserialize_with = "blank_is_unset")]
    pub base_url: Option<Deferred<HttpUrl>>,
    /// The name of the check; blank = `hecate/<gate>`.
    #[serde(default)]
    pub context: String,
    /// The state to report; unset = what happened (`Failure` when the Passage has
    /// failed, else `Success`).
    #[serde(default, deserialize_with = "blank_is_unset")]
    pub state: Option<Deferred<CommitState>>,
    /// The one-line summary; blank = one saying whether the Bundle crossed.
    #[serde(default)]
    pub description: String,
    /// Where the status links to.
    #[serde(default, rename = "targetURL", deserialize_with = "blank_is_unset")]
    pub target_url: Option<Deferred<HttpUrl>>,
}

impl CommitStatusConfig {
    /// The checkout directory, relative to the work directory.
    pub fn checkout(&self) -> &str {
        checkout(&self.path)
    }
}

impl StepConfig for CommitStatusConfig {
    fn check(&self) -> Result<(), String> {
        self.credentials_ref.check("credentialsRef")?;
        inside_work_dir("path", &self.path)
    }
}

fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use jiff::SignedDuration;
    use serde_json::json;

    use super::super::fields::{Deferred, GoDuration};
    use super::super::test_support::{accepted, accepts, refuses};
    use super::{CommitState, Provider};

    #[test]
    fn git_pull_request() {
        let pr: super::GitPullRequestConfig = accepted(
            "git-pull-request",
            json!({"credentialsRef": {"name": "gh"}}),
        );
        assert!(pr.wait_for_merge);
        assert_eq!(
            pr.poll_interval(),
            Deferred::Known(GoDuration(SignedDuration::from_mins(1)))
        );
        assert_eq!(pr.provider, None);
        assert_eq!(pr.checkout(), "repo");

        let pr: super::GitPullRequestConfig = accepted(
            "git-pull-request",
            json!({"credentialsRef": {"name": "gh"}, "repo": "git@gitlab.com:a/b/c.git",
                   "provider": "gitlab", "baseURL": "https://gitlab.example/api/v4",
                   "head": "h", "base": "main", "title": "t", "body": "b",
                   "labels": ["promotion"], "waitForMerge": false, "pollInterval": "30s"}),
        );
        assert_eq!(pr.provider, Some(Deferred::Known(Provider::Gitlab)));
        assert!(!pr.wait_for_merge);

        // Blank means unset; expressions are judged when the Passage runs.
        accepts(
            "git-pull-request",
            json!({"credentialsRef": {"name": "gh"}, "provider": "", "baseURL": "",
                   "pollInterval": ""}),
        );
        accepts(
            "git-pull-request",
            json!({"credentialsRef": {"name": "gh"}, "provider": "${{ vars.host }}",
                   "baseURL": "${{ vars.api }}", "pollInterval": "${{ vars.every }}"}),
        );

        refuses(
            "git-pull-request",
            json!({}),
            &["missing field `credentialsRef`"],
        );
        refuses(
            "git-pull-request",
            json!({"credentialsRef": {"name": "gh"}, "from": "a", "into": "b"}),
            &["unknown field `from`"],
        );
        refuses(
            "git-pull-request",
            json!({"credentialsRef": {"name": "gh"}, "provider": "bitbucket"}),
            &["provider", "bitbucket", "github, gitlab"],
        );
        refuses(
            "git-pull-request",
            json!({"credentialsRef": {"name": "gh"}, "baseURL": "api.github.com"}),
            &["baseURL", "http://"],
        );
        refuses(
            "git-pull-request",
            json!({"credentialsRef": {"name": "gh"}, "pollInterval": "1 minute"}),
            &["pollInterval", "invalid duration"],
        );
        refuses(
            "git-pull-request",
            json!({"credentialsRef": {"name": "gh"}, "labels": "promotion"}),
            &["labels"],
        );
    }

    #[test]
    fn commit_status() {
        let status: super::CommitStatusConfig =
            accepted("commit-status", json!({"credentialsRef": {"name": "gh"}}));
        assert_eq!(status.state, None);
        assert_eq!(status.checkout(), "repo");

        let status: super::CommitStatusConfig = accepted(
            "commit-status",
            json!({"credentialsRef": {"name": "gh"}, "sha": "abc", "repo": "https://github.com/o/r",
                   "provider": "github", "baseURL": "https://ghe.example/api/v3",
                   "context": "hecate/dev", "state": "Pending", "description": "d",
                   "targetURL": "https://hecate.example/passages/x"}),
        );
        assert_eq!(status.state, Some(Deferred::Known(CommitState::Pending)));
        accepts(
            "commit-status",
            json!({"credentialsRef": {"name": "gh"},
                   "state": "${{ failed ? 'Failure' : 'Success' }}",
                   "targetURL": "${{ vars.ui }}/passages/${{ passage }}"}),
        );

        refuses(
            "commit-status",
            json!({"state": "Success"}),
            &["missing field `credentialsRef`"],
        );
        refuses(
            "commit-status",
            json!({"credentialsRef": {"name": "gh"}, "stat": "Success"}),
            &["unknown field `stat`"],
        );
        refuses(
            "commit-status",
            json!({"credentialsRef": {"name": "gh"}, "state": "success"}),
            &["state", "Pending, Success, Failure"],
        );
        refuses(
            "commit-status",
            json!({"credentialsRef": {"name": "gh"}, "provider": "gitea"}),
            &["provider"],
        );
        refuses(
            "commit-status",
            json!({"credentialsRef": {"name": "gh"}, "targetURL": "hecate.example"}),
            &["targetURL"],
        );
        refuses(
            "commit-status",
            json!({"credentialsRef": {"name": "gh"}, "path": "../x"}),
            &["path"],
        );
    }
}
