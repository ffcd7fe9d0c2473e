//! `commit-status` (spec §5.7): the crossing reported on a commit, as a GitHub commit
//! status or a GitLab pipeline status, under one name per Gate (`hecate/<gate>`), so
//! Gates reporting on the same commit do not overwrite each other. Meant for
//! `if: always`: unless `state` says otherwise, it reports `Failure` when the crossing
//! has already failed and `Success` otherwise.
//!
//! The commit and the repository come from `sha` and `repo`, or from the checkout an
//! earlier step left. Posting the same state again is success: GitHub keeps the newest
//! status per name, and GitLab's refusal to move a status to the state it is already
//! in (400 "Cannot transition status") means it is already there.

use futures::future::BoxFuture;
use reqwest::Method;
use serde_json::json;

use super::client::Target;
use super::repo::{DESCRIPTION_LIMIT, truncate};
use super::{Forge, bundle_name, known, or_default};
use crate::Tools;
use crate::config::host::{CommitState, Provider};
use crate::git::checkout_facts;
use crate::reason::Reason;
use crate::runner::{StepContext, StepError, StepKind, StepResult};

/// The `commit-status` step.
pub struct CommitStatus {
    forge: Forge,
}

impl CommitStatus {
    /// Talks to forges through `forge`.
    pub fn new(forge: Forge) -> Self {
        Self { forge }
    }

    async fn report(
        &self,
        ctx: &StepContext<'_>,
        settings: crate::config::host::CommitStatusConfig,
    ) -> Result<StepResult, StepError> {
        let state = match &settings.state {
            Some(state) => *known(state, "state")?,
            None if ctx.failed => CommitState::Failure,
            None => CommitState::Success,
        };
        let (sha, repo) = if settings.sha.trim().is_empty() || settings.repo.trim().is_empty() {
            let facts = checkout_facts(ctx, settings.checkout())
                .await
                .map_err(|mut error| {
                    if error.reason == Reason::WorkDirLost {
                        error
                            .message
                            .push_str("; set sha and repo to report without a checkout");
                    }
                    error
                })?;
            let sha = or_default(&settings.sha, || facts.head.unwrap_or_default());
            let repo = or_default(&settings.repo, || facts.origin.unwrap_or_default());
            if sha.is_empty() {
                return Err(StepError::terminal(
                    Reason::GitFailed,
                    format!("the checkout at {:?} has no commit", settings.checkout()),
                ));
            }
            if repo.is_empty() {
                return Err(StepError::config(format!(
                    "the checkout at {:?} has no origin remote; set repo",
                    settings.checkout()
                )));
            }
            (sha, repo)
        } else {
            (
                settings.sha.trim().to_string(),
                settings.repo.trim().to_string(),
            )
        };
        let context = or_default(&settings.context, || format!("hecate/{}", ctx.gate));
        let description = or_default(&settings.description, || {
            let bundle = bundle_name(ctx);
            match state {
                CommitState::Pending => format!("{bundle} is crossing {}", ctx.gate),
                CommitState::Success => format!("{bundle} crossed {}", ctx.gate),
                CommitState::Failure => format!("{bundle} did not cross {}", ctx.gate),
            }
        });
        let target_url = settings
            .target_url
            .as_ref()
            .map(|url| known(url, "targetURL").map(|url| url.0.clone()))
            .transpose()?;
        let target = Target::resolve(
            &repo,
            settings.provider.as_ref(),
            settings.base_url.as_ref(),
        )?;
        let host = self
            .forge
            .connect(ctx.namespace, &settings.credentials_ref.name, target)
            .await?;

        let (word, name_key) = match (host.provider(), state) {
            (Provider::Github, CommitState::Failure) => ("failure", "context"),
            (Provider::Gitlab, CommitState::Failure) => ("failed", "name"),
            (Provider::Github, CommitState::Pending) => ("pending", "context"),
            (Provider::Gitlab, CommitState::Pending) => ("pending", "name"),
            (Provider::Github, CommitState::Success) => ("success", "context"),
            (Provider::Gitlab, CommitState::Success) => ("success", "name"),
        };
        let mut body = json!({
            "state": word,
            name_key: context,
            "description": truncate(&description, DESCRIPTION_LIMIT),
        });
        if let Some(url) = target_url {
            body["target_url"] = json!(url);
        }
        let url = host.url(&["statuses", &sha], &[]);
        let output = json!({"state": state_text(state), "sha": sha, "context": context});
        let short = sha.get(..8).unwrap_or(&sha);
        match host.send(Method::POST, url, Some(&body)).await {
            Ok(_) => Ok(StepResult::done(
                format!("reported {} on {short} as {context}", state_text(state)),
                output,
            )),
            Err(failure)
                if host.provider() == Provider::Gitlab
                    && failure.says(400, "Cannot transition status") =>
            {
                Ok(StepResult::done(
                    format!("{context} on {short} is already {}", state_text(state)),
                    output,
                ))
            }
            Err(failure) => Err(failure
                .step_error("reporting the commit status")
                .with_output(output)),
        }
    }
}

impl StepKind for CommitStatus {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::CommitStatus;
    type With = crate::config::host::CommitStatusConfig;

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
        Box::pin(self.report(ctx, settings))
    }
}

/// The `state` output: the configuration's own words.
fn state_text(state: CommitState) -> &'static str {
    match state {
        CommitState::Pending => "Pending",
        CommitState::Success => "Success",
        CommitState::Failure => "Failure",
    }
}
