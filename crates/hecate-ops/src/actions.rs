//! The actions: promote, approve, abort, poll — and the audit trail they leave.
//!
//! Every write is safe when many callers act at once: the API server arbitrates
//! (a Passage name everyone computes alike; status updates conditional on the
//! resourceVersion read, retried on conflict), never a read-then-write race.

use std::time::Duration;

use hecate_types::{Beacon, Bundle, BundleApproval, BundleStatus, Gate, Passage, Time, wellknown};
use kube::ResourceExt as _;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

use crate::error::{Action, Error, Kind, Result};
use crate::model::{Aborted, Approved, Polled};
use crate::ops::Ops;
use crate::rules;
use crate::rules::refusal::{Refusal, RefusalCode};

/// How many times an approval re-reads and retries after losing a race.
const APPROVAL_ATTEMPTS: u32 = 32;

impl Ops {
    /// Starts a crossing of `bundle` through `gate`, on behalf of `actor`, and says
    /// which Passage records it.
    ///
    /// Judged exactly as an automatic crossing would be (eligibility, windows), plus
    /// what only a request needs: an actor, and one crossing per Gate at a time. A
    /// person may retry a crossing that failed, or roll back to an older eligible
    /// Bundle. A refusal creates nothing.
    ///
    /// Of several promotions of one Gate at once, exactly one starts: each names its
    /// Passage `<gate>-<n>` from the same reading, and the API server lets only the
    /// first create that name; the others are refused as already crossing.
    ///
    /// ```no_run
    /// use hecate_ops::{Error, Promoted, RefusalCode};
    /// # async fn run(ops: hecate_ops::Ops) -> hecate_ops::Result<()> {
    /// match ops.promote("shop", "staging", "shop-9f8c1a2b3c4d", "release-bot").await {
    ///     Ok(passage) => println!("crossing as {}", Promoted::from(&passage).passage),
    ///     Err(Error::Refused { code: RefusalCode::AlreadyCrossing, reason, .. }) => {
    ///         println!("later: {reason}");
    ///     }
    ///     Err(other) => return Err(other),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn promote(
        &self,
        namespace: &str,
        gate: &str,
        bundle: &str,
        actor: &str,
    ) -> Result<Passage> {
        let refused = |refusal| Error::refused(Action::Promote, refusal);
        // In the reference's order: who asks, the Gate, what the Gate alone decides,
        // then the Bundle and the rules.
        rules::actions::judge_actor(actor, "a crossing").map_err(refused)?;
        let gate: Gate = self.get(Kind::Gate, namespace, gate).await?;
        rules::promotion::judge_gate(&gate).map_err(refused)?;
        let gate_name = gate.name_any();
        let (bundle, passages) = futures::try_join!(
            self.get::<Bundle>(Kind::Bundle, namespace, bundle),
            self.passages_matching(namespace, Some(&gate_name), None)
        )?;
        let passages: Vec<&Passage> = passages.iter().collect();
        rules::promotion::judge(&gate, &bundle, &passages, actor, self.now()).map_err(refused)?;

        let name = rules::promotion::next_passage_name(&gate_name, &passages);
        let passage = rules::promotion::new_passage(&gate, &bundle, actor, &name, self.now());
        match self
            .api::<Passage>(namespace)
            .create(&PostParams::default(), &passage)
            .await
        {
            Ok(created) => Ok(created),
            Err(kube::Error::Api(status)) if status.code == 409 => Err(Error::refused(
                Action::Promote,
                Refusal::new(
                    RefusalCode::AlreadyCrossing,
                    format!(
                        "another crossing of {} started at the same moment, as Passage {name}",
                        gate.name_any()
                    ),
                ),
            )),
            Err(source) => Err(Error::Kubernetes {
                context: "creating Passage".into(),
                source,
            }),
        }
    }

    /// Records that `actor` approves `bundle` for `gate` — that Gate only: approving
    /// for staging must never approve for production.
    ///
    /// Refuses a Bundle the Gate does not admit (an approval that could never be used
    /// is a mistake worth saying so). Idempotent: an approval already recorded for the
    /// Gate, by anyone, stands and is returned. Approvals of one Bundle for different
    /// Gates at once are all recorded: each update is conditional on the version it
    /// read, and a caller that loses the race reads again.
    ///
    /// ```no_run
    /// # async fn run(ops: hecate_ops::Ops) -> hecate_ops::Result<()> {
    /// let approved = ops.approve("shop", "shop-9f8c1a2b3c4d", "production", "carol").await?;
    /// if !approved.recorded {
    ///     println!("already approved by {}", approved.approved_by);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn approve(
        &self,
        namespace: &str,
        bundle: &str,
        gate: &str,
        actor: &str,
    ) -> Result<Approved> {
        let refused = |refusal| Error::refused(Action::Approve, refusal);
        rules::actions::judge_actor(actor, "an approval").map_err(refused)?;
        let gate: Gate = self.get(Kind::Gate, namespace, gate).await?;
        let mut current: Bundle = self.get(Kind::Bundle, namespace, bundle).await?;
        rules::actions::judge_approval(&gate, &current).map_err(refused)?;
        let gate_name = gate.name_any();
        let approved = |approval: &BundleApproval, recorded| Approved {
            namespace: namespace.to_string(),
            bundle: bundle.to_string(),
            gate: gate_name.clone(),
            approved_by: approval.actor.clone(),
            recorded,
        };
        if let Some(existing) = current.approval_for(&gate_name) {
            return Ok(approved(existing, false));
        }
        self.record_approval_evidence(&gate, &current, actor)
            .await?;

        let api = self.api::<Bundle>(namespace);
        for attempt in 0..APPROVAL_ATTEMPTS {
            if attempt > 0 {
                current = self.get(Kind::Bundle, namespace, bundle).await?;
                if let Some(existing) = current.approval_for(&gate_name) {
                    return Ok(approved(existing, false));
                }
            }
            let approval = BundleApproval {
                gate: gate_name.clone(),
                actor: actor.into(),
                at: Time(self.now()),
            };
            let mut updated = current.clone();
            updated
                .status
                .get_or_insert_with(BundleStatus::default)
                .approved_for
                .push(approval.clone());
            match api
                .replace_status(bundle, &PostParams::default(), &updated)
                .await
            {
                Ok(_) => return Ok(approved(&approval, true)),
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    // Someone else wrote the Bundle's status since we read it. Back off a
                    // little (spread by attempt) and read again.
                    tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt + 1))).await;
                }
                Err(source) => {
                    return Err(Error::Kubernetes {
                        context: "recording approval".into(),
                        source,
                    });
                }
            }
        }
        Err(Error::Kubernetes {
            context: "recording approval".into(),
            source: kube::Error::Api(Box::new(kube::core::Status::failure(
                &format!("the Bundle kept changing; gave up after {APPROVAL_ATTEMPTS} attempts"),
                "Conflict",
            ))),
        })
    }

    /// Asks a running crossing to stop, on behalf of `actor`.
    ///
    /// Sets `spec.abort` and never deletes: the Passage is the record that a crossing
    /// was started and stopped. Records who aborted, and when, in annotations (the
    /// reference forgets the actor). A merge patch without a resourceVersion, so it
    /// cannot conflict with the controller's status writes. Aborting an aborted
    /// Passage again changes nothing.
    pub async fn abort(&self, namespace: &str, passage: &str, actor: &str) -> Result<Aborted> {
        let refused = |refusal| Error::refused(Action::Abort, refusal);
        rules::actions::judge_actor(actor, "an abort").map_err(refused)?;
        let current: Passage = self.get(Kind::Passage, namespace, passage).await?;
        rules::actions::judge_abort(&current).map_err(refused)?;
        if current.spec.abort {
            return Ok(aborted(namespace, &current));
        }
        let at = self.now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        let patch = json!({
            "metadata": {"annotations": {wellknown::ANNOTATION_ABORTED_BY: actor, wellknown::ANNOTATION_ABORTED_AT: at}},
            "spec": {"abort": true},
        });
        let patched: Passage = self
            .api::<Passage>(namespace)
            .patch(passage, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(Error::kubernetes("aborting Passage"))?;
        Ok(aborted(namespace, &patched))
    }

    /// Asks a Beacon to look at its sources now rather than at its next interval, the
    /// way Flux users already do: a fresh token in `reconcile.fluxcd.io/requestedAt`
    /// (Unix nanoseconds, so two polls in one second differ). Other annotations are
    /// kept. A suspended Beacon would acknowledge and look at nothing, so that is
    /// refused.
    pub async fn poll(&self, namespace: &str, beacon: &str) -> Result<Polled> {
        let current: Beacon = self.get(Kind::Beacon, namespace, beacon).await?;
        rules::actions::judge_poll(&current).map_err(|r| Error::refused(Action::Poll, r))?;
        let token = self.now().as_nanosecond().to_string();
        let patch = json!({"metadata": {"annotations": {wellknown::ANNOTATION_RECONCILE_REQUESTED_AT: token}}});
        self.api::<Beacon>(namespace)
            .patch(beacon, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(Error::kubernetes(format!("asking Beacon {beacon} to poll")))?;
        Ok(Polled {
            namespace: namespace.to_string(),
            beacon: beacon.to_string(),
            requested_at: token,
        })
    }
}

/// An abort's answer from the Passage as stored: who aborted it is whoever the record
/// says, so asking again reports the first abort's actor, not the caller's.
fn aborted(namespace: &str, passage: &Passage) -> Aborted {
    Aborted {
        namespace: namespace.to_string(),
        passage: passage.name_any(),
        gate: passage.spec.gate.clone(),
        bundle: passage.spec.bundle.clone(),
        aborted: true,
        aborted_by: passage
            .annotations()
            .get(wellknown::ANNOTATION_ABORTED_BY)
            .filter(|actor| !actor.is_empty())
            .cloned(),
    }
}
