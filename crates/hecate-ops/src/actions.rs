//! The actions: promote, approve, abort, poll — and the audit trail they leave.
//!
//! Every write is safe when many callers act at once: the API server arbitrates
//! (a Passage name everyone computes alike; status updates conditional on the
//! resourceVersion read, retried on conflict), never a read-then-write race.

use std::ops::ControlFlow;
use std::time::Duration;

use hecate_types::{
    Beacon, Bundle, BundleApproval, BundleStatus, Gate, Passage, PolicyApproval, Rejection, Time,
    wellknown,
};
use kube::ResourceExt as _;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

use crate::error::{Action, Error, Kind, Result};
use crate::model::{
    Aborted, Approved, CrossingPreview, Person, Polled, Rejected, RolloutAsked, Withdrawn,
};
use crate::ops::Ops;
use crate::rules;
use crate::rules::approval::{self, Asked};
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
        self.cross(Crossing {
            action: Action::Promote,
            namespace,
            gate: &gate,
            bundle,
            actor,
            rollback_of: None,
            targets: &[],
        })
        .await
    }

    /// What `actor` crossing `gate` with `bundle` would do, asked before the crossing
    /// (issue 55): promote's own judgement for them — refused with the code the real
    /// promote would answer, or not — and the steps as they would run, each `with:`
    /// resolved against the Bundle and the Gate's vars ([`rules::preview`]). Creates
    /// nothing: the requests promote makes — a GET of the Gate and of the Bundle, a
    /// LIST of the Gate's Passages — and, when the rules would let it start, the API
    /// server's dry run of the Passage's create, which judges this client's right to
    /// create it and the CRD's schema as the real create would.
    ///
    /// A Gate or Bundle that is not there is [`Error::NotFound`], as for promote.
    pub async fn preview(
        &self,
        namespace: &str,
        gate: &str,
        bundle: &str,
        actor: &str,
    ) -> Result<CrossingPreview> {
        let gate: Gate = self.get(Kind::Gate, namespace, gate).await?;
        let (bundle, passages) = self.crossing_reads(namespace, &gate, bundle).await?;
        let passages: Vec<&Passage> = passages.iter().collect();
        let now = self.now();
        let passage = rules::preview::passage(&gate, &bundle, &passages, actor, now);
        let mut preview = rules::preview::of(&gate, &bundle, &passage, &passages, now);
        if preview.refused.is_some() {
            return Ok(preview);
        }
        // The API server's own dry run of the create: whoever this client is must be
        // allowed to create the Passage, and the Passage must be one the CRD takes —
        // judged as promote's create would be, persisting nothing.
        let dry_run = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        match self
            .api::<Passage>(namespace)
            .create(&dry_run, &passage)
            .await
        {
            Ok(_) => Ok(preview),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                preview.refused = Some(crossing_taken(&gate, &passage));
                Ok(preview)
            }
            Err(source) => Err(Error::Kubernetes {
                context: "creating Passage (a dry run)".into(),
                source,
            }),
        }
    }

    /// Rolls `gate` back, on behalf of `actor`: crosses again `to` — a Bundle the Gate
    /// verified before — or, without one, the newest earlier Bundle the Gate verified
    /// ([`rules::rollback::target`]), and says which Passage records it.
    ///
    /// A promotion in all but two things, judged by the same rules and leaving the same
    /// audit trail: the Bundle may be the Gate's current occupant (crossing it again
    /// restores what a failed crossing half-changed), and the Passage names the
    /// crossing it undoes — the current occupant's — in
    /// [`wellknown::ANNOTATION_ROLLBACK_OF`]. Refused, creating nothing, when the Gate
    /// holds no Bundle or has nothing to go back to
    /// ([`RefusalCode::NothingToRollBackTo`]), or when `to` is not a Bundle it verified
    /// before ([`RefusalCode::NotVerifiedHere`]).
    ///
    /// ```no_run
    /// use hecate_ops::RolledBack;
    /// # async fn run(ops: hecate_ops::Ops) -> hecate_ops::Result<()> {
    /// let passage = ops.rollback("shop", "staging", None, "olaf").await?;
    /// let rolled = RolledBack::from(&passage);
    /// println!("back to {} as {}, undoing {}", rolled.bundle, rolled.passage, rolled.rollback_of);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn rollback(
        &self,
        namespace: &str,
        gate: &str,
        to: Option<&str>,
        actor: &str,
    ) -> Result<Passage> {
        let refused = |refusal| Error::refused(Action::Rollback, refusal);
        let gate = self.gate_to_roll_back(namespace, gate, actor).await?;
        let bundles = match to {
            Some(_) => Vec::new(),
            None => self.bundles(namespace).await?,
        };
        let plan = rules::actions::judge_rollback(&gate, &bundles, to).map_err(refused)?;
        self.cross(rollback(namespace, &gate, &plan, actor)).await
    }

    /// Gate `gate`, once who asks and what the Gate alone decides allow a rollback of
    /// it — in promote's order.
    async fn gate_to_roll_back(&self, namespace: &str, gate: &str, actor: &str) -> Result<Gate> {
        let refused = |refusal| Error::refused(Action::Rollback, refusal);
        rules::actions::judge_actor(actor, "a rollback").map_err(refused)?;
        let gate: Gate = self.get(Kind::Gate, namespace, gate).await?;
        rules::promotion::judge_gate(&gate).map_err(refused)?;
        Ok(gate)
    }

    /// Rolls some of `gate`'s targets back, on behalf of `actor` (DECISION 163): those
    /// `asked` of its newest rollout — the failed ones, every one it reached, or those
    /// named — cross back to what they ran before it
    /// ([`rules::actions::judge_rollback_targets`]), in a Passage of those targets
    /// alone that names the rollout it undoes. What the Gate holds does not change.
    /// Refused while the rollout is under way (stop it first), and as any rollback is.
    pub async fn rollback_targets(
        &self,
        namespace: &str,
        gate: &str,
        asked: &rules::rollout::RollBack,
        actor: &str,
    ) -> Result<Passage> {
        let refused = |refusal| Error::refused(Action::Rollback, refusal);
        let gate = self.gate_to_roll_back(namespace, gate, actor).await?;
        let gate_name = gate.name_any();
        let (bundles, mut passages) = futures::try_join!(
            self.bundles(namespace),
            self.passages_matching(namespace, Some(&gate_name), None)
        )?;
        passages.sort_by(rules::eligibility::passages_newest_first);
        let plan = rules::actions::judge_rollback_targets(&gate, &passages, &bundles, asked)
            .map_err(refused)?;
        // The Bundle and the Passages are read already: open it with them.
        let bundle = bundles
            .iter()
            .find(|b| b.name_any() == plan.bundle)
            .ok_or_else(|| crate::ops::not_found(Kind::Bundle, namespace, &plan.bundle))?;
        self.open(rollback(namespace, &gate, &plan, actor), bundle, &passages)
            .await
    }

    /// Starts `crossing` once the Gate alone has been judged: reads the Bundle and the
    /// Gate's Passages, then [`Self::open`]s it.
    async fn cross(&self, crossing: Crossing<'_>) -> Result<Passage> {
        let (bundle, passages) = self
            .crossing_reads(crossing.namespace, crossing.gate, crossing.bundle)
            .await?;
        self.open(crossing, &bundle, &passages).await
    }

    /// What a crossing of `gate` with `bundle` is judged over: the Bundle and the
    /// Gate's Passages, read together — a crossing and its preview alike.
    async fn crossing_reads(
        &self,
        namespace: &str,
        gate: &Gate,
        bundle: &str,
    ) -> Result<(Bundle, Vec<Passage>)> {
        let gate_name = gate.name_any();
        futures::try_join!(
            self.get::<Bundle>(Kind::Bundle, namespace, bundle),
            self.passages_matching(namespace, Some(&gate_name), None)
        )
    }

    /// Judges `crossing` of `bundle`, given the Gate's `passages`, by promote's rules
    /// for what the Passage it would create is ([`rules::promotion::CrossingKind::of`]),
    /// and creates that Passage under the name everyone computes alike — refused as
    /// already crossing when another took it.
    async fn open(
        &self,
        crossing: Crossing<'_>,
        bundle: &Bundle,
        passages: &[Passage],
    ) -> Result<Passage> {
        let Crossing {
            action,
            namespace,
            gate,
            actor,
            rollback_of,
            targets,
            ..
        } = crossing;
        let refused = |refusal| Error::refused(action, refusal);
        let gate_name = gate.name_any();
        let passages: Vec<&Passage> = passages.iter().collect();
        let name = rules::promotion::next_passage_name(&gate_name, &passages);
        let mut passage = rules::promotion::new_passage(gate, bundle, actor, &name, self.now());
        passage.spec.targets = targets.to_vec();
        if let Some(undone) = rollback_of {
            passage.annotations_mut().insert(
                wellknown::ANNOTATION_ROLLBACK_OF.to_string(),
                undone.to_string(),
            );
        }
        let kind = rules::promotion::CrossingKind::of(&passage);
        rules::promotion::judge(gate, bundle, &passages, actor, kind, self.now())
            .map_err(refused)?;
        match self
            .api::<Passage>(namespace)
            .create(&PostParams::default(), &passage)
            .await
        {
            Ok(created) => Ok(created),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                Err(Error::refused(action, crossing_taken(gate, &passage)))
            }
            Err(source) => Err(Error::Kubernetes {
                context: "creating Passage".into(),
                source,
            }),
        }
    }

    /// Records that `approver` approves `bundle` for `gate` — that Gate only:
    /// approving for staging must never approve for production.
    ///
    /// Refuses a Bundle the Gate does not admit (an approval that could never be used
    /// is a mistake worth saying so). Under an approval policy, refuses someone whose
    /// approval would not count (no rule names them or a group of theirs, or the
    /// policy excludes them as the author or an upstream promoter: DECISION 137);
    /// `approver`'s groups are what the cluster reported for them. Idempotent: without
    /// a policy, an approval already recorded for the Gate, by anyone, stands and is
    /// returned; under one, the approver's own approval that still counts does.
    /// Approvals of one Bundle at once — for different Gates, or by several people
    /// for one — are all recorded: each update is conditional on the version it read,
    /// and a caller that loses the race reads again.
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
        approver: impl Into<Person>,
    ) -> Result<Approved> {
        let approver: Person = approver.into();
        let refused = |refusal| Error::refused(Action::Approve, refusal);
        rules::actions::judge_actor(&approver.name, "an approval").map_err(refused)?;
        let (gate, current) = self.gate_and_bundle(namespace, gate, bundle).await?;
        rules::actions::judge_approval(&gate, &current).map_err(refused)?;
        let gate_name = gate.name_any();
        let asked = asked(&gate, &current);
        let approved = |approved_by: &str, recorded, bundle: &Bundle| Approved {
            namespace: namespace.to_string(),
            bundle: bundle.name_any(),
            gate: gate_name.clone(),
            approved_by: approved_by.to_string(),
            recorded,
            progress: match asked {
                Asked::Policy(_) => approval::judge(asked, &gate_name, bundle, None, self.now()),
                _ => None,
            },
        };
        if let Asked::Policy(_) = asked {
            rules::actions::judge_policy_approval(asked, &gate_name, &current, &approver)
                .map_err(refused)?;
            if counts_already(asked, &gate_name, &current, &approver.name, self.now()) {
                return Ok(approved(&approver.name, false, &current));
            }
        } else if let Some(existing) = current.approval_for(&gate_name) {
            return Ok(approved(&existing.actor.clone(), false, &current));
        }
        self.record_approval_evidence(&gate, &current, &approver.name)
            .await?;
        let now = self.now();
        self.change_bundle_status(namespace, current, "recording approval", |bundle| {
            if let Asked::Policy(_) = asked {
                if counts_already(asked, &gate_name, bundle, &approver.name, now) {
                    return ControlFlow::Break(approved(&approver.name, false, bundle));
                }
                let status = bundle.status.get_or_insert_with(BundleStatus::default);
                // One approval per person and Gate: a fresh one replaces an expired one.
                status
                    .approvals
                    .retain(|a| !(a.gate == gate_name && a.actor == approver.name));
                status.approvals.push(PolicyApproval {
                    gate: gate_name.clone(),
                    actor: approver.name.clone(),
                    groups: approver.groups.clone(),
                    at: Time(now),
                });
                // The reference's record: this Gate's approval is complete.
                let complete = approval::judge(asked, &gate_name, bundle, None, now)
                    .is_some_and(|p| p.satisfied);
                if complete && bundle.approval_for(&gate_name).is_none() {
                    bundle
                        .status
                        .get_or_insert_with(BundleStatus::default)
                        .approved_for
                        .push(BundleApproval {
                            gate: gate_name.clone(),
                            actor: approver.name.clone(),
                            at: Time(now),
                        });
                }
            } else {
                if let Some(existing) = bundle.approval_for(&gate_name) {
                    let by = existing.actor.clone();
                    return ControlFlow::Break(approved(&by, false, bundle));
                }
                bundle
                    .status
                    .get_or_insert_with(BundleStatus::default)
                    .approved_for
                    .push(BundleApproval {
                        gate: gate_name.clone(),
                        actor: approver.name.clone(),
                        at: Time(now),
                    });
            }
            ControlFlow::Continue(approved(&approver.name, true, bundle))
        })
        .await
    }

    /// Records `rejecter`'s "no" to `bundle` for `gate`, with their `reason`: it holds
    /// the Bundle there — for the controller, promote and Explain alike — until
    /// withdrawn ([`Ops::withdraw_rejection`]). Anyone who may approve may reject; a
    /// rejection needs a reason and a Bundle the Gate admits. Idempotent: the caller's
    /// own standing rejection stands and is returned.
    pub async fn reject(
        &self,
        namespace: &str,
        bundle: &str,
        gate: &str,
        rejecter: impl Into<Person>,
        reason: &str,
    ) -> Result<Rejected> {
        let rejecter: Person = rejecter.into();
        let refused = |refusal| Error::refused(Action::Reject, refusal);
        rules::actions::judge_actor(&rejecter.name, "a rejection").map_err(refused)?;
        let reason = rules::actions::judge_reason(reason).map_err(refused)?;
        let (gate, current) = self.gate_and_bundle(namespace, gate, bundle).await?;
        rules::actions::judge_approval(&gate, &current).map_err(refused)?;
        let gate_name = gate.name_any();
        let asked = asked(&gate, &current);
        let answer = |reason: &str, recorded| Rejected {
            namespace: namespace.to_string(),
            bundle: current.name_any(),
            gate: gate_name.clone(),
            rejected_by: rejecter.name.clone(),
            reason: reason.to_string(),
            recorded,
            fides: None,
        };
        let now = self.now();
        let mut rejected = self
            .change_bundle_status(
                namespace,
                current.clone(),
                "recording the rejection",
                |bundle| {
                    let status = bundle.status.get_or_insert_with(BundleStatus::default);
                    if let Some(standing) = status.rejections.iter().find(|r| {
                        r.gate == gate_name
                            && r.actor == rejecter.name
                            && approval::stands(asked, r)
                    }) {
                        return ControlFlow::Break(answer(&standing.reason, false));
                    }
                    rules::actions::make_room(&mut status.rejections);
                    status.rejections.push(Rejection {
                        gate: gate_name.clone(),
                        actor: rejecter.name.clone(),
                        at: Time(now),
                        reason: reason.clone(),
                        withdrawn_by: String::new(),
                        withdrawn_at: None,
                        withdrawn_groups: Vec::new(),
                    });
                    ControlFlow::Continue(answer(&reason, true))
                },
            )
            .await?;
        if rejected.recorded {
            rejected.fides = self
                .record_rejection_evidence(&gate, &current, &rejecter.name, &reason, false)
                .await;
        }
        Ok(rejected)
    }

    /// Withdraws the rejections holding `bundle` from `gate` that `person` may
    /// withdraw: their own, and — when the Gate's approval policy names them — every
    /// one. The record stays, marked withdrawn, for the audit trail. Withdrawing when
    /// nothing stands changes nothing.
    pub async fn withdraw_rejection(
        &self,
        namespace: &str,
        bundle: &str,
        gate: &str,
        person: impl Into<Person>,
    ) -> Result<Withdrawn> {
        let person: Person = person.into();
        let refused = |refusal| Error::refused(Action::Reject, refusal);
        rules::actions::judge_actor(&person.name, "a withdrawal").map_err(refused)?;
        let (gate, current) = self.gate_and_bundle(namespace, gate, bundle).await?;
        let gate_name = gate.name_any();
        let answer = |rejections_of: Vec<String>| Withdrawn {
            namespace: namespace.to_string(),
            bundle: current.name_any(),
            gate: gate_name.clone(),
            withdrawn_by: person.name.clone(),
            rejections_of,
            fides: None,
        };
        let asked = asked(&gate, &current);
        if approval::standing_rejection(asked, &gate_name, &current).is_none() {
            return Ok(answer(Vec::new()));
        }
        rules::actions::judge_withdrawal(asked, &gate, &current, &person).map_err(refused)?;
        let named = approval::may_withdraw_all(asked, &person);
        let now = self.now();
        let mut withdrawn = self
            .change_bundle_status(
                namespace,
                current.clone(),
                "withdrawing the rejection",
                |bundle| {
                    let mut withdrawn = Vec::new();
                    for rejection in bundle
                        .status
                        .iter_mut()
                        .flat_map(|s| s.rejections.iter_mut())
                        .filter(|r| r.gate == gate_name && approval::stands(asked, r))
                        .filter(|r| named || r.actor == person.name)
                    {
                        rejection.withdrawn_by = person.name.clone();
                        rejection.withdrawn_at = Some(Time(now));
                        rejection.withdrawn_groups = person.groups.clone();
                        withdrawn.push(rejection.actor.clone());
                    }
                    if withdrawn.is_empty() {
                        ControlFlow::Break(answer(withdrawn))
                    } else {
                        ControlFlow::Continue(answer(withdrawn))
                    }
                },
            )
            .await?;
        if !withdrawn.rejections_of.is_empty() {
            let whose = format!("{}'s rejection", withdrawn.rejections_of.join(", "));
            withdrawn.fides = self
                .record_rejection_evidence(&gate, &current, &person.name, &whose, true)
                .await;
        }
        Ok(withdrawn)
    }

    /// Writes `current`'s status as `change` leaves it, conditional on the version
    /// read; on a conflict (someone else wrote the Bundle since), reads it again and
    /// asks `change` again. `change` answers `Break` when nothing needs writing (the
    /// answer as it stands), `Continue` with the answer once written.
    async fn change_bundle_status<T>(
        &self,
        namespace: &str,
        mut current: Bundle,
        context: &str,
        mut change: impl FnMut(&mut Bundle) -> ControlFlow<T, T>,
    ) -> Result<T> {
        let name = current.name_any();
        let api = self.api::<Bundle>(namespace);
        for attempt in 0..APPROVAL_ATTEMPTS {
            if attempt > 0 {
                current = self.get(Kind::Bundle, namespace, &name).await?;
            }
            let mut updated = current.clone();
            let answer = match change(&mut updated) {
                ControlFlow::Break(answer) => return Ok(answer),
                ControlFlow::Continue(answer) => answer,
            };
            match api
                .replace_status(&name, &PostParams::default(), &updated)
                .await
            {
                Ok(_) => return Ok(answer),
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    // Someone else wrote the Bundle's status since we read it. Back off a
                    // little (spread by attempt) and read again.
                    tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt + 1))).await;
                }
                Err(source) => {
                    return Err(Error::Kubernetes {
                        context: context.into(),
                        source,
                    });
                }
            }
        }
        Err(Error::Kubernetes {
            context: context.into(),
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

    /// Asks the rollout `passage` to cross its failed targets again (DECISION 157):
    /// a request in `actor`'s name on its spec, carried out by the controller.
    pub async fn retry(&self, namespace: &str, passage: &str, actor: &str) -> Result<RolloutAsked> {
        self.ask_of_rollout(
            namespace,
            passage,
            actor,
            rules::actions::RolloutAsk::Retry,
            "",
        )
        .await
    }

    /// Accepts the failures that halted the rollout `passage`, for `reason`, so it goes
    /// on (DECISION 157): kept on the record with who and when.
    pub async fn accept_failures(
        &self,
        namespace: &str,
        passage: &str,
        actor: &str,
        reason: &str,
    ) -> Result<RolloutAsked> {
        self.ask_of_rollout(
            namespace,
            passage,
            actor,
            rules::actions::RolloutAsk::Accept,
            reason,
        )
        .await
    }

    async fn ask_of_rollout(
        &self,
        namespace: &str,
        passage: &str,
        actor: &str,
        ask: rules::actions::RolloutAsk,
        reason: &str,
    ) -> Result<RolloutAsked> {
        use rules::actions::RolloutAsk;
        let action = match ask {
            RolloutAsk::Retry => Action::Retry,
            RolloutAsk::Accept => Action::Accept,
        };
        let refused = |refusal| Error::refused(action, refusal);
        rules::actions::judge_actor(actor, "a request of a rollout").map_err(refused)?;
        let current: Passage = self.get(Kind::Passage, namespace, passage).await?;
        rules::actions::judge_rollout_ask(&current, ask, reason).map_err(refused)?;
        let mut asked = current.spec.rollout.clone().unwrap_or_default();
        let request = hecate_types::RolloutRequest {
            by: actor.to_string(),
            at: hecate_types::Time(self.now()),
            reason: reason.trim().to_string(),
        };
        match ask {
            RolloutAsk::Retry => asked.retries.push(request),
            RolloutAsk::Accept => asked.acceptances.push(request),
        }
        // Guarded by the version read: two people asking at once both land, one
        // after the other, or the second is told to ask again.
        let patch = json!({
            "metadata": {"resourceVersion": current.resource_version()},
            "spec": {"rollout": asked},
        });
        self.api::<Passage>(namespace)
            .patch(passage, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(Error::kubernetes(format!(
                "asking Passage {passage}'s rollout"
            )))?;
        Ok(RolloutAsked {
            namespace: namespace.to_string(),
            passage: passage.to_string(),
            gate: current.spec.gate.clone(),
            asked: action.to_string(),
            by: actor.to_string(),
        })
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

/// A crossing asked for by hand: a promotion, or a rollback undoing the crossing of
/// the Passage `rollback_of`.
struct Crossing<'a> {
    action: Action,
    namespace: &'a str,
    gate: &'a Gate,
    bundle: &'a str,
    actor: &'a str,
    rollback_of: Option<&'a str>,
    /// Which of the Gate's targets it reaches; empty: every one (DECISION 163).
    targets: &'a [String],
}

/// The crossing a rollback `plan` of `gate` is, asked by `actor`.
fn rollback<'a>(
    namespace: &'a str,
    gate: &'a Gate,
    plan: &'a rules::actions::RollbackPlan,
    actor: &'a str,
) -> Crossing<'a> {
    Crossing {
        action: Action::Rollback,
        namespace,
        gate,
        bundle: &plan.bundle,
        actor,
        rollback_of: Some(&plan.undoing),
        targets: &plan.targets,
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

/// What `gate`'s admission of `bundle` asks of approvals.
fn asked<'a>(gate: &'a Gate, bundle: &Bundle) -> Asked<'a> {
    gate.admission_for(&bundle.spec.beacon)
        .map_or(Asked::Nothing, Asked::of)
}

/// Whether `actor` approved `bundle` for `gate` in a way the policy still counts at
/// `now`.
fn counts_already(
    asked: Asked<'_>,
    gate: &str,
    bundle: &Bundle,
    actor: &str,
    now: jiff::Timestamp,
) -> bool {
    approval::judge(asked, gate, bundle, None, now).is_some_and(|progress| {
        progress
            .rules
            .iter()
            .any(|rule| rule.approved_by.iter().any(|a| a == actor))
    })
}

impl Ops {
    /// The Gate and the Bundle an approval, a rejection or a withdrawal is about: the
    /// Gate first, so a missing Gate is what is reported (the reference's order).
    async fn gate_and_bundle(
        &self,
        namespace: &str,
        gate: &str,
        bundle: &str,
    ) -> Result<(Gate, Bundle)> {
        let gate: Gate = self.get(Kind::Gate, namespace, gate).await?;
        let bundle: Bundle = self.get(Kind::Bundle, namespace, bundle).await?;
        Ok((gate, bundle))
    }
}

/// Why a crossing whose Passage name another took at the same moment does not start:
/// the API server answered the create (or its dry run) 409.
fn crossing_taken(gate: &Gate, passage: &Passage) -> Refusal {
    Refusal::new(
        RefusalCode::AlreadyCrossing,
        format!(
            "another crossing of {} started at the same moment, as Passage {}",
            gate.name_any(),
            passage.name_any()
        ),
    )
}
