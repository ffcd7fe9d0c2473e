//! `flux-reconcile` (spec §5.13): ask Flux to reconcile objects now, as `flux
//! reconcile` does — by setting `reconcile.fluxcd.io/requestedAt` on each of them.
//!
//! The value is the Passage's start time, not the time of the call: a step that runs
//! again after a restart writes the same value, which changes nothing and rings no
//! controller twice. Objects are reached through the same clients, clusters and
//! resolved kinds as the `flux` health check, and refused on the same rules.

use std::sync::Arc;

use futures::future::BoxFuture;
use jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use super::runner::{StepContext, StepError, StepKind, StepResult};
use crate::Tools;
use crate::flux::access::{FluxAccess, describe};
use crate::reason::Reason;

/// The annotation Flux controllers watch for "reconcile now".
pub const REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";

/// The `flux-reconcile` step.
pub struct FluxReconcile {
    access: Arc<FluxAccess>,
    refuse_cross_namespace: bool,
}

impl FluxReconcile {
    /// Writes through `access`; refuses objects in other namespaces unless allowed.
    pub fn new(access: Arc<FluxAccess>, refuse_cross_namespace: bool) -> Self {
        Self {
            access,
            refuse_cross_namespace,
        }
    }
}

/// The annotation's value: `started` in RFC 3339 in UTC, with as many fractional
/// digits as it has (Go's `RFC3339Nano`, which Flux's own CLI writes).
pub fn requested_at(started: Timestamp) -> String {
    started.to_string()
}

impl StepKind for FluxReconcile {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::FluxReconcile;
    const REACHES_CLUSTERS: bool = true;
    type With = crate::config::flux::FluxReconcileConfig;

    fn build(tools: &Tools) -> Self {
        Self::new(tools.flux.access().clone(), tools.refuse_cross_namespace)
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        _with: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(async move {
            let check = super::flux_wait::targets(ctx, self.refuse_cross_namespace)?;
            // A remote cluster out of reach is worth another crossing: un-coded,
            // retryable (the spec names no reason: `Unknown`).
            let cluster = self
                .access
                .cluster(check.cluster_secret.as_ref(), ctx.namespace)
                .await
                .map_err(|e| StepError::retryable(Reason::Unknown, e.to_string()))?;
            let value = requested_at(ctx.started_at);
            let patch = json!({"metadata": {"annotations": {REQUESTED_AT: value}}});
            let params = PatchParams::default();
            for target in &check.targets {
                let key = target.key();
                let api = self
                    .access
                    .api(&cluster, target)
                    .await
                    .map_err(|e| refused(&key, &e))?;
                if let Err(error) = api
                    .patch(&target.name, &params, &Patch::Merge(&patch))
                    .await
                {
                    if matches!(&error, kube::Error::Api(s) if s.code == 404) {
                        self.access.forget_kind(&cluster, target);
                    }
                    return Err(refused(&key, &error));
                }
            }
            let count = check.targets.len();
            Ok(StepResult::done(
                format!(
                    "asked Flux to reconcile {count} object{}",
                    if count == 1 { "" } else { "s" }
                ),
                json!({ "requestedAt": value, "resources": count }),
            ))
        })
    }
}

/// What a failed discovery or patch of `key` means for the crossing.
fn refused(key: &str, error: &kube::Error) -> StepError {
    let why = describe(error);
    match error {
        kube::Error::Api(status) if status.code == 404 => {
            StepError::config(format!("{key}: not found ({why})"))
        }
        kube::Error::Discovery(_) => StepError::config(format!("{key}: kind not served ({why})")),
        kube::Error::Api(status) if status.code == 403 => {
            StepError::terminal(Reason::FluxPatchFailed, format!("{key}: {why}"))
        }
        _ => StepError::retryable(Reason::FluxPatchFailed, format!("{key}: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_the_passage_start_in_utc_with_its_own_precision() {
        let whole: Timestamp = "2026-12-01T04:33:06Z".parse().expect("a time");
        assert_eq!(requested_at(whole), "2026-12-01T04:33:06Z");
        let fraction: Timestamp = "2026-12-01T05:33:06.120+01:00".parse().expect("a time");
        assert_eq!(requested_at(fraction), "2026-12-01T04:33:06.12Z");
    }
}
