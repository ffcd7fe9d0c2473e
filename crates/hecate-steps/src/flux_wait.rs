//! `flux-wait` (spec §5.14): wait until Flux objects (or anything following Flux's
//! status conventions) are healthy, at an expected revision if one is given, judged by
//! the same `flux` checker a Gate's health uses. Once healthy, the step hands the Gate
//! that very check, so the Gate keeps watching what the crossing waited for. While it
//! waits, a change to any of its objects wakes it at once; its timer is the fallback.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use hecate_types::{Health, HealthCheck};
use jiff::Timestamp;
use kube::core::GroupVersionKind;
use serde_json::json;

use super::runner::{StepContext, StepError, StepKind, StepResult};
use crate::Tools;
use crate::flux::FluxChecker;
use crate::flux::config::{FluxCheck, FluxConfig};
use crate::reason::Reason;

/// What wakes a waiting `flux-wait` the moment one of its objects changes (the
/// controller's watches). A step nobody wakes still looks again on its own timer.
pub trait Wake: Send + Sync {
    /// Wake Passage `passage` of `namespace` the next time object `name` of kind `gvk`
    /// in `object_namespace` changes. Called before the step looks at the object, so a
    /// change between the look and this call is not missed.
    fn wait_for(
        &self,
        gvk: &GroupVersionKind,
        object_namespace: &str,
        name: &str,
        namespace: &str,
        passage: &str,
    );

    /// The Passage no longer waits for this object (it found it ready).
    fn forget(
        &self,
        gvk: &GroupVersionKind,
        object_namespace: &str,
        name: &str,
        namespace: &str,
        passage: &str,
    );
}

/// Wakes nobody: every wait ends on the step's own timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerOnly;

impl Wake for TimerOnly {
    fn wait_for(&self, _: &GroupVersionKind, _: &str, _: &str, _: &str, _: &str) {}
    fn forget(&self, _: &GroupVersionKind, _: &str, _: &str, _: &str, _: &str) {}
}

/// The `flux-wait` step.
pub struct FluxWait {
    checker: Arc<FluxChecker>,
    refuse_cross_namespace: bool,
    wake: Arc<dyn Wake>,
}

impl FluxWait {
    /// Waits through `checker`, woken by `wake`; refuses objects in other namespaces
    /// unless allowed.
    pub fn new(
        checker: Arc<FluxChecker>,
        refuse_cross_namespace: bool,
        wake: Arc<dyn Wake>,
    ) -> Self {
        Self {
            checker,
            refuse_cross_namespace,
            wake,
        }
    }

    /// Asks to be woken when any of `check`'s objects changes (this cluster's only:
    /// remote clusters are not watched), or stops asking.
    fn wait(&self, check: &FluxCheck, ctx: &StepContext<'_>, waiting: bool) {
        if check.cluster_secret.is_some() {
            return;
        }
        for target in &check.targets {
            let gvk = target.gvk();
            let (ns, name) = (target.namespace.as_str(), target.name.as_str());
            if waiting {
                self.wake
                    .wait_for(&gvk, ns, name, ctx.namespace, ctx.passage);
            } else {
                self.wake.forget(&gvk, ns, name, ctx.namespace, ctx.passage);
            }
        }
    }
}

/// How long to wait before looking again: soon at first (most syncs finish in
/// seconds), then every 15 s, the reference's interval.
pub fn retry_after(attempt: u32) -> Duration {
    Duration::from_secs(1u64 << attempt.min(4)).min(Duration::from_secs(15))
}

impl StepKind for FluxWait {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::FluxWait;
    const REACHES_CLUSTERS: bool = true;
    type With = crate::config::flux::FluxWaitConfig;

    fn build(tools: &Tools) -> Self {
        Self::new(
            tools.flux.clone(),
            tools.refuse_cross_namespace,
            tools.wake.clone(),
        )
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        _with: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(async move {
            let check = targets(ctx, self.refuse_cross_namespace)?;
            // Before looking, so that a change right after the look still wakes it.
            self.wait(&check, ctx, true);
            let assessment = self
                .checker
                .assess(&check, ctx.namespace, Timestamp::now())
                .await;
            let still_waiting = matches!(assessment.health, Health::Progressing | Health::Unknown);
            if !still_waiting {
                self.wait(&check, ctx, false);
            }
            let output = json!({ "resources": assessment.resources });
            match assessment.health {
                Health::Healthy | Health::NotApplicable => Ok(StepResult {
                    watch: vec![HealthCheck {
                        uses: FluxChecker::NAME.into(),
                        with: Some(ctx.config.clone()),
                    }],
                    ..StepResult::done(
                        format!("{} healthy", objects(assessment.resources.len())),
                        output,
                    )
                }),
                Health::Degraded => Err(StepError::terminal(
                    Reason::FluxDegraded,
                    summary(&assessment.issues),
                )
                .with_output(output)),
                Health::Progressing | Health::Unknown => Ok(StepResult {
                    output: Some(output),
                    ..StepResult::waiting(summary(&assessment.issues), retry_after(ctx.attempt))
                }),
            }
        })
    }
}

/// The objects a Flux step names, with every default applied and the flux check's
/// rules (kinds, cross-namespace references) judged: shared by `flux-wait` and
/// `flux-reconcile`. A problem is `InvalidConfig`.
pub(crate) fn targets(
    ctx: &StepContext<'_>,
    refuse_cross_namespace: bool,
) -> Result<FluxCheck, StepError> {
    FluxConfig::decode(Some(&ctx.config))
        .and_then(|c| c.validate(ctx.namespace, refuse_cross_namespace))
        .map_err(|e| StepError::config(e.to_string()))
}

fn objects(n: usize) -> String {
    if n == 1 {
        "1 object".into()
    } else {
        format!("{n} objects")
    }
}

/// The first issue, and how many more there are.
fn summary(issues: &[String]) -> String {
    match issues {
        [] => "waiting".into(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_looks_soon_then_every_fifteen_seconds() {
        let waits: Vec<u64> = (0..7).map(|a| retry_after(a).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 15, 15, 15]);
    }

    #[test]
    fn the_message_is_the_first_issue_and_a_count() {
        assert_eq!(summary(&[]), "waiting");
        assert_eq!(summary(&["a".into()]), "a");
        assert_eq!(
            summary(&["a".into(), "b".into(), "c".into()]),
            "a (and 2 more)"
        );
    }
}
