//! Preflight: asking Fides, before anyone promotes, whether the evidence gate would
//! let each of a Gate's eligible Bundles through (ops spec §10.2).

use hecate_types::Bundle;
use kube::ResourceExt as _;

use crate::error::Result;
use crate::model::Preflight;
use crate::ops::Ops;
use crate::rules::preflight::{self, Unknown};

impl Ops {
    /// One verdict per Bundle the Gate lists as eligible (`status.eligible`, the
    /// controller's list, in its order): would Fides' policy check for the Gate's
    /// environment let it through? `[]` for a Gate that does not gate on evidence
    /// (no `evidence` or no `fidesEnvironment`) or has nothing eligible — Fides is not
    /// asked then. Never fails for Fides' sake: what could not be found out is each
    /// verdict's `unknown`. Requests: the Gate and its admitted Beacons' Bundles (one LIST), then per
    /// Bundle a trail lookup and a policy check in Fides, all at once.
    pub async fn preflight(&self, namespace: &str, gate: &str) -> Result<Vec<Preflight>> {
        let gate = self.gate(namespace, gate).await?;
        let Some(environment) = gate
            .spec
            .evidence
            .as_ref()
            .map(|e| e.fides_environment.trim().to_string())
            .filter(|e| !e.is_empty())
        else {
            return Ok(Vec::new());
        };
        let eligible: Vec<String> = gate
            .status
            .as_ref()
            .map(|s| s.eligible.clone())
            .unwrap_or_default();
        if eligible.is_empty() {
            return Ok(Vec::new());
        }
        let fides = match self.dial_fides(&gate).await {
            Ok(fides) => fides,
            Err(e) => {
                let cause = match e {
                    crate::Error::Fides { message, .. } => message,
                    other => other.to_string(),
                };
                return Ok(eligible
                    .iter()
                    .map(|b| preflight::verdict(b, Err(Unknown::Unreachable(cause.clone()))))
                    .collect());
            }
        };
        // Eligible Bundles come from the Beacons the Gate admits: one (narrowed) LIST
        // of those, as Explain reads them; a Bundle it lacks (or a failed LIST) is
        // unknown.
        let bundles: Vec<Bundle> = self
            .bundles_admitted_by(namespace, &gate)
            .await
            .unwrap_or_default();
        let verdicts = eligible.iter().map(|name| {
            let bundle = bundles.iter().find(|b| b.name_any() == *name);
            let (fides, environment) = (&fides, environment.as_str());
            async move {
                let answer = async {
                    let bundle = bundle.ok_or(Unknown::Unreadable)?;
                    let digest = bundle.image_digests().next().ok_or(Unknown::NoDigest)?;
                    let trail = fides
                        .trail_for_artifact(digest)
                        .await
                        .map_err(|e| Unknown::TrailLookup(e.to_string()))?
                        .ok_or(Unknown::NoTrail)?;
                    fides
                        .policy_check(environment, &trail)
                        .await
                        .map_err(|e| Unknown::PolicyCheck(e.to_string()))
                };
                preflight::verdict(name, answer.await)
            }
        });
        Ok(futures::future::join_all(verdicts).await)
    }
}
