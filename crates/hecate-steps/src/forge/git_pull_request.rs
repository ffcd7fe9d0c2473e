//! `git-pull-request` (spec §5.6): a pull request (GitLab: merge request) from `head`
//! into `base`, and by default a wait until someone merges it.
//!
//! "Ensure", never "create": the step looks for an open pull request for `head` first,
//! opens one only when there is none, and when the forge answers that one already
//! exists (GitHub 422 "already exists", GitLab 409) — a race, or its own earlier answer
//! lost in a crash — looks again. While waiting, each call reads the pull request again
//! and answers `Running` after `pollInterval`; a call after the first also finds the
//! pull request once it is merged or closed (no longer open), rather than opening a
//! second one for a merged branch.
//!
//! Labels: GitLab takes them when the merge request is opened. GitHub takes them in a
//! separate, best-effort call, made when this step opened the pull request or first
//! found it, never on later polls (a label someone removes stays removed); a refusal
//! is noted in the message and does not fail the step.

use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::Method;
use serde_json::{Value, json};

use super::client::{Failure, Host, Target};
use super::{Forge, bundle_name, known, or_default};
use crate::Tools;
use crate::config::host::Provider;
use crate::git::checkout_facts;
use crate::reason::Reason;
use crate::runner::{StepContext, StepError, StepKind, StepResult};

/// The `git-pull-request` step.
pub struct GitPullRequest {
    forge: Forge,
}

impl GitPullRequest {
    /// Talks to forges through `forge`.
    pub fn new(forge: Forge) -> Self {
        Self { forge }
    }

    async fn ensure_merged(
        &self,
        ctx: &StepContext<'_>,
        settings: crate::config::host::GitPullRequestConfig,
    ) -> Result<StepResult, StepError> {
        let poll: Duration = known(&settings.poll_interval(), "pollInterval")?
            .0
            .try_into()
            .map_err(|_| StepError::config("pollInterval must be longer than zero"))?;
        let (repo, base) = if settings.repo.trim().is_empty() || settings.base.trim().is_empty() {
            let facts = checkout_facts(ctx, settings.checkout()).await?;
            let repo = or_default(&settings.repo, || facts.origin.unwrap_or_default());
            let base = or_default(&settings.base, || facts.branch.unwrap_or_default());
            if repo.is_empty() {
                return Err(StepError::config(format!(
                    "the checkout at {:?} has no origin remote; set repo",
                    settings.checkout()
                )));
            }
            if base.is_empty() {
                return Err(StepError::config(format!(
                    "the checkout at {:?} is on no branch; set base",
                    settings.checkout()
                )));
            }
            (repo, base)
        } else {
            (
                settings.repo.trim().to_string(),
                settings.base.trim().to_string(),
            )
        };
        let request = Request {
            head: or_default(&settings.head, || format!("hecate/{}", ctx.passage)),
            base,
            title: or_default(&settings.title, || {
                format!("Promote {} to {}", bundle_name(ctx), ctx.gate)
            }),
            body: settings.body.clone(),
            labels: settings
                .labels
                .iter()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect(),
        };
        let target = Target::resolve(
            &repo,
            settings.provider.as_ref(),
            settings.base_url.as_ref(),
        )?;
        let host = self
            .forge
            .connect(ctx.namespace, &settings.credentials_ref.name, target)
            .await?;

        let (pr, how) = ensure(&host, &request, ctx.attempt).await?;
        let mut message = match how {
            How::Created => format!("opened {}", pr.url),
            How::Found => format!("found {}", pr.url),
            How::Raced => format!("found {}, opened meanwhile", pr.url),
        };
        let labelled_now = matches!(how, How::Created | How::Raced) || ctx.attempt == 0;
        if host.provider() == Provider::Github
            && !request.labels.is_empty()
            && labelled_now
            && pr.state == State::Open
            && let Err(failure) = label(&host, pr.number, &request.labels).await
        {
            let error = failure.step_error("labelling the pull request");
            tracing::warn!(url = %pr.url, error = %error.message, "labels not added");
            message.push_str(&format!(" (labels not added: {})", error.message));
        }
        let mut output = json!({
            "number": pr.number,
            "url": pr.url,
            "state": pr.state.as_str(),
            "branch": request.head,
        });
        if !settings.wait_for_merge {
            return Ok(StepResult::done(message, output));
        }

        // Read again rather than trust the list: its entries can lag, and this answer
        // decides the crossing.
        let pr = get(&host, pr.number)
            .await
            .map_err(|f| f.step_error("reading the pull request"))?;
        output["state"] = json!(pr.state.as_str());
        match pr.state {
            State::Merged => match pr.sha {
                Some(sha) => {
                    output["sha"] = json!(sha);
                    Ok(StepResult::done(
                        format!("{} merged as {}", pr.url, short(&sha)),
                        output,
                    ))
                }
                None => Err(StepError::retryable(
                    Reason::ProviderFailed,
                    format!("{} is merged, but the forge names no merge commit", pr.url),
                )
                .with_output(output)),
            },
            State::Closed => Err(StepError::terminal(
                Reason::PullRequestClosed,
                format!(
                    "{} was closed without being merged; the crossing ends here",
                    pr.url
                ),
            )
            .with_output(output)),
            State::Open => Ok(StepResult {
                output: Some(output),
                ..StepResult::waiting(format!("{message}; waiting for it to be merged"), poll)
            }),
        }
    }
}

impl StepKind for GitPullRequest {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::GitPullRequest;
    type With = crate::config::host::GitPullRequestConfig;

    fn build(tools: &Tools) -> Self {
        Self::new(crate::forge::Forge::new(
            tools.client.clone(),
            tools.app_tokens.clone(),
        ))
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        settings: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(self.ensure_merged(ctx, settings))
    }
}

/// The pull request the step wants.
struct Request {
    head: String,
    base: String,
    title: String,
    body: String,
    labels: Vec<String>,
}

/// How [`ensure`] came by the pull request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    /// It was there already.
    Found,
    /// This call opened it.
    Created,
    /// Opening it was refused as a duplicate, and the second look found it.
    Raced,
}

/// Where a pull request has got to (the `state` output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Open,
    Merged,
    Closed,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::Open => "Open",
            State::Merged => "Merged",
            State::Closed => "Closed",
        }
    }
}

/// A pull request as the step needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PullRequest {
    /// GitHub's number, GitLab's per-project `iid`.
    number: u64,
    /// Its web page.
    url: String,
    state: State,
    /// The commit that landed, once merged.
    sha: Option<String>,
}

impl PullRequest {
    /// Reads a pull request (GitHub) or merge request (GitLab) from the forge's JSON.
    ///
    /// GitHub: merged when `merged` is true or `merged_at` is set (list entries carry
    /// only the latter); the commit is `merge_commit_sha`, which is only meaningful
    /// once merged. GitLab: `merged`, `opened`/`locked` (open), else closed; the commit
    /// is `merge_commit_sha`, else `squash_commit_sha` (a squash merge), else `sha` (a
    /// fast-forward merge lands the branch's own head).
    fn parse(provider: Provider, value: &Value) -> Result<Self, Failure> {
        let text = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let (number, url, state, sha) = match provider {
            Provider::Github => {
                let merged = value.get("merged").and_then(Value::as_bool) == Some(true)
                    || text("merged_at").is_some();
                let state = if merged {
                    State::Merged
                } else if text("state").as_deref() == Some("open") {
                    State::Open
                } else {
                    State::Closed
                };
                (
                    value.get("number").and_then(Value::as_u64),
                    text("html_url"),
                    state,
                    text("merge_commit_sha"),
                )
            }
            Provider::Gitlab => {
                let state = match text("state").as_deref() {
                    Some("merged") => State::Merged,
                    Some("opened" | "locked") => State::Open,
                    _ => State::Closed,
                };
                let sha = text("merge_commit_sha")
                    .or_else(|| text("squash_commit_sha"))
                    .or_else(|| text("sha"));
                (
                    value.get("iid").and_then(Value::as_u64),
                    text("web_url"),
                    state,
                    sha,
                )
            }
        };
        let number = number.ok_or_else(|| {
            Failure::unusable("the forge described a pull request without its number".into())
        })?;
        Ok(Self {
            number,
            url: url.unwrap_or_else(|| format!("#{number}")),
            state,
            sha: sha.filter(|_| state == State::Merged),
        })
    }
}

/// The pull request for `request.head`: the open one, else (on a call after the first)
/// the newest in any state, else a new one.
async fn ensure(
    host: &Host<'_>,
    request: &Request,
    attempt: u32,
) -> Result<(PullRequest, How), StepError> {
    const LOOKING: &str = "looking for the pull request";
    const OPENING: &str = "opening the pull request";
    if let Some(pr) = find(host, &request.head, true)
        .await
        .map_err(|f| f.step_error(LOOKING))?
    {
        return Ok((pr, How::Found));
    }
    // Waited on before: it may have been merged or closed since, and is no longer open.
    if attempt > 0
        && let Some(pr) = find(host, &request.head, false)
            .await
            .map_err(|f| f.step_error(LOOKING))?
    {
        return Ok((pr, How::Found));
    }
    match create(host, request).await {
        Ok(pr) => Ok((pr, How::Created)),
        Err(failure) if duplicate(host.provider(), &failure) => {
            match find(host, &request.head, true)
                .await
                .map_err(|f| f.step_error(LOOKING))?
            {
                Some(pr) => Ok((pr, How::Raced)),
                None => Err(failure.step_error(OPENING)),
            }
        }
        Err(failure) => Err(failure.step_error(OPENING)),
    }
}

/// Whether opening was refused because the pull request already exists.
fn duplicate(provider: Provider, failure: &Failure) -> bool {
    match provider {
        Provider::Github => failure.says(422, "already exists"),
        Provider::Gitlab => failure.status.is_some_and(|s| s.as_u16() == 409),
    }
}

/// The newest pull request from `head` into anything: only open ones when `open`.
async fn find(host: &Host<'_>, head: &str, open: bool) -> Result<Option<PullRequest>, Failure> {
    let url = match host.provider() {
        Provider::Github => {
            // Qualified by the owner: the branch is in the repository itself, not a fork.
            let qualified = format!("{}:{head}", host.repo().owner);
            host.url(
                &["pulls"],
                &[
                    ("state", if open { "open" } else { "all" }),
                    ("head", &qualified),
                    ("sort", "created"),
                    ("direction", "desc"),
                ],
            )
        }
        Provider::Gitlab => {
            let mut query = vec![
                ("source_branch", head),
                ("order_by", "created_at"),
                ("sort", "desc"),
            ];
            if open {
                query.insert(0, ("state", "opened"));
            }
            host.url(&["merge_requests"], &query)
        }
    };
    let answer = host.send(Method::GET, url, None).await?;
    let list = answer.as_array().ok_or_else(|| {
        Failure::unusable("the forge answered a search with something not a list".into())
    })?;
    list.first()
        .map(|first| PullRequest::parse(host.provider(), first))
        .transpose()
}

/// Opens the pull request.
async fn create(host: &Host<'_>, request: &Request) -> Result<PullRequest, Failure> {
    let (url, mut body) = match host.provider() {
        Provider::Github => (
            host.url(&["pulls"], &[]),
            json!({"title": request.title, "head": request.head, "base": request.base}),
        ),
        Provider::Gitlab => (
            host.url(&["merge_requests"], &[]),
            json!({
                "source_branch": request.head,
                "target_branch": request.base,
                "title": request.title,
            }),
        ),
    };
    if !request.body.trim().is_empty() {
        let key = match host.provider() {
            Provider::Github => "body",
            Provider::Gitlab => "description",
        };
        body[key] = json!(request.body);
    }
    if host.provider() == Provider::Gitlab && !request.labels.is_empty() {
        body["labels"] = json!(request.labels.join(","));
    }
    let answer = host.send(Method::POST, url, Some(&body)).await?;
    PullRequest::parse(host.provider(), &answer)
}

/// Reads pull request `number`.
async fn get(host: &Host<'_>, number: u64) -> Result<PullRequest, Failure> {
    let number = number.to_string();
    let url = match host.provider() {
        Provider::Github => host.url(&["pulls", &number], &[]),
        Provider::Gitlab => host.url(&["merge_requests", &number], &[]),
    };
    let answer = host.send(Method::GET, url, None).await?;
    PullRequest::parse(host.provider(), &answer)
}

/// Adds `labels` to GitHub pull request `number` (labels live on its issue).
async fn label(host: &Host<'_>, number: u64, labels: &[String]) -> Result<(), Failure> {
    let number = number.to_string();
    let url = host.url(&["issues", &number, "labels"], &[]);
    host.send(Method::POST, url, Some(&json!({"labels": labels})))
        .await
        .map(drop)
}

/// The first eight characters of a SHA.
fn short(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn pull_requests_are_read_from_either_forge() {
        let pr = |number, url: &str, state, sha: Option<&str>| PullRequest {
            number,
            url: url.to_string(),
            state,
            sha: sha.map(str::to_string),
        };
        let cases = [
            (
                Provider::Github,
                json!({"number": 7, "html_url": "https://github.com/a/b/pull/7",
                       "state": "open", "merged": false, "merge_commit_sha": "test-merge"}),
                pr(7, "https://github.com/a/b/pull/7", State::Open, None),
            ),
            (
                Provider::Github,
                json!({"number": 7, "html_url": "u", "state": "closed", "merged": true,
                       "merge_commit_sha": "abc"}),
                pr(7, "u", State::Merged, Some("abc")),
            ),
            (
                // A list entry: no `merged`, only `merged_at`.
                Provider::Github,
                json!({"number": 7, "html_url": "u", "state": "closed",
                       "merged_at": "2026-12-01T02:00:00Z", "merge_commit_sha": "abc"}),
                pr(7, "u", State::Merged, Some("abc")),
            ),
            (
                Provider::Github,
                json!({"number": 7, "html_url": "u", "state": "closed", "merged": false,
                       "merged_at": null, "merge_commit_sha": "abc"}),
                pr(7, "u", State::Closed, None),
            ),
            (
                Provider::Gitlab,
                json!({"iid": 3, "id": 991, "web_url": "w", "state": "opened"}),
                pr(3, "w", State::Open, None),
            ),
            (
                Provider::Gitlab,
                json!({"iid": 3, "web_url": "w", "state": "locked"}),
                pr(3, "w", State::Open, None),
            ),
            (
                Provider::Gitlab,
                json!({"iid": 3, "web_url": "w", "state": "merged",
                       "merge_commit_sha": "m", "squash_commit_sha": "s", "sha": "h"}),
                pr(3, "w", State::Merged, Some("m")),
            ),
            (
                Provider::Gitlab,
                json!({"iid": 3, "web_url": "w", "state": "merged",
                       "merge_commit_sha": null, "squash_commit_sha": "s", "sha": "h"}),
                pr(3, "w", State::Merged, Some("s")),
            ),
            (
                Provider::Gitlab,
                json!({"iid": 3, "web_url": "w", "state": "merged",
                       "merge_commit_sha": null, "squash_commit_sha": null, "sha": "h"}),
                pr(3, "w", State::Merged, Some("h")),
            ),
            (
                Provider::Gitlab,
                json!({"iid": 3, "web_url": "w", "state": "closed", "sha": "h"}),
                pr(3, "w", State::Closed, None),
            ),
            (
                Provider::Gitlab,
                json!({"iid": 3, "state": "opened"}),
                pr(3, "#3", State::Open, None),
            ),
        ];
        for (provider, value, want) in cases {
            assert_eq!(
                PullRequest::parse(provider, &value).expect("parses"),
                want,
                "{value}"
            );
        }
        for (provider, value) in [
            (Provider::Github, json!({"html_url": "u", "state": "open"})),
            (Provider::Gitlab, json!({"number": 3, "state": "opened"})),
            (Provider::Github, json!("not an object")),
        ] {
            let error = PullRequest::parse(provider, &value)
                .expect_err("no number")
                .step_error("reading");
            assert_eq!(
                (error.reason, error.terminal),
                (Reason::ProviderFailed, false)
            );
        }
    }
}
