//! One Gate reconcile (spec controller.md §2.2): record the newest finished crossing,
//! assess health, judge every admitted Bundle, decide what to do next, prune old
//! Passages, write the status.
//!
//! The decisions are pure functions (`hecate_ops::rules`, [`super::advance`],
//! [`super::ready`], [`super::health_change`], [`super::record`],
//! [`super::retention`]); this is the I/O around them, performing what they return. A
//! Gate's status is written whole with its resourceVersion, so a reconcile that raced
//! another write fails and is retried rather than overwriting it; Bundle statuses,
//! which people write too (approvals), are read-modify-written with a retry on
//! conflict.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use hecate_ops::rules::eligibility;
use hecate_ops::rules::gate::obstacle;
use hecate_ops::rules::passage as passage_rule;
use hecate_ops::rules::promotion::{new_passage, next_passage_name};
use hecate_ops::rules::standing::{self, Decision, Standing, crossing_message};
use hecate_ops::rules::verification;
use hecate_ops::rules::{NamespaceSnapshot, explain, notice, rollback, rollout};
use hecate_types::{
    Bundle, BundleStatus, Gate, GateStatus, Passage, PassagePhase, VerificationPhase,
    VerificationStatus, wellknown,
};
use jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Resource as _, ResourceExt as _};

use super::advance;
use super::reads::Reads;
use super::ready::{self, Ready, Unverified};
use super::{health_change, record, retention};
use crate::condition::set_ready;
use crate::events::{self, Events};
use crate::metrics::Metrics;
use crate::notify::Outbox;
use crate::passage::attest::{self, Attested};
use crate::verify;
use hecate_steps::clock::Clock;
use hecate_steps::health;

/// How often a Gate is looked at when nothing wakes it: new Bundles, approvals and
/// finished crossings wake it at once; the tick catches health and windows.
pub const RESYNC: Duration = Duration::from_secs(60);

/// How often a Gate at rest is looked at: nothing under way or waiting on a poll,
/// healthy by checks a watch follows (or none) — nothing about it changes but by an
/// event that wakes it, so the look only covers an event missed (as controller-runtime's
/// resync period does). An idle fleet costs the API server no request per Gate.
pub const AT_REST_RESYNC: Duration = Duration::from_secs(10 * 60);

/// How old `status.health.observedAt` may grow before a reconcile that changed nothing
/// else writes the status anyway: the minute's tick refreshes it while a check is
/// polled, a burst of wakes in between does not write the same status again and again.
/// A Gate at rest is not rewritten just to say it looked: its report stands until an
/// event changes it.
pub const OBSERVED_AT_FRESH: Duration = Duration::from_secs(30);

/// The shortest wait for a verification's next look: a look due now is taken on the
/// next reconcile, not in a loop.
const MIN_LOOK_WAIT: Duration = Duration::from_secs(1);

/// What a Gate reconcile can fail with; the controller retries with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed.
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// The controller's view lags: the Passage it meant to create exists and finished.
    #[error("Passage {0} already exists and has finished; waiting for the view to catch up")]
    Stale(String),
}

impl Error {
    /// The kind of failure, for the failures metric: one of a fixed set.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Kube(error) => crate::backoff::kind(error),
            Self::Stale(_) => "stale",
        }
    }
}

/// When to look at the Gate again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// `None`: only when something changes (a suspended or invalid Gate).
    pub requeue_after: Option<Duration>,
}

/// Which crossing a Gate opens by itself, and what it carries for it.
#[derive(Clone, Copy)]
enum Opening<'s> {
    /// A new Bundle crossing.
    Promotion,
    /// A rollback undoing `undoing`.
    Rollback { undoing: &'s str, why: &'s str },
    /// A catch-up of `targets` with `rollout`, the crossing the Gate holds
    /// (DECISION 164).
    CatchUp {
        rollout: &'s str,
        targets: &'s [String],
        why: &'s str,
    },
}

/// Everything a Gate reconcile needs.
pub struct GateReconciler<R> {
    /// The client it writes with.
    pub client: kube::Client,
    /// Where it reads Passages and Bundles.
    pub reads: R,
    /// Where it reads the time.
    pub clock: Arc<dyn Clock>,
    /// The health checkers.
    pub health: health::Checkers,
    /// The verifiers.
    pub verifiers: verify::Verifiers,
    /// Where Events go.
    pub events: Events,
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// The resourceVersion of each Gate's last status write by this reconciler.
    pub written: Written,
    /// `--fides-server`: the Fides a Gate's evidence uses when it names none (for
    /// attesting a crossing's verification once it is final).
    pub fides_server: Option<String>,
    /// Where a Gate's notices go, when someone listens (DECISION 166).
    pub outbox: Outbox,
}

/// The resourceVersion each Gate's status was last written at, by Gate (namespace,
/// name). A reconcile may skip writing a status that changed nothing only when the
/// Gate it read is no older than that write: a copy the view has not brought up to
/// date yet could match what was decided and still differ from what is stored.
#[derive(Clone, Default)]
pub struct Written(Arc<Mutex<Versions>>);

/// A resourceVersion by Gate (namespace, name).
type Versions = HashMap<(String, String), String>;

impl Written {
    fn versions(&self) -> MutexGuard<'_, Versions> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn key(gate: &Gate) -> (String, String) {
        (gate.namespace().unwrap_or_default(), gate.name_any())
    }

    /// Whether `gate`, as read, is at least as new as the last write of its status
    /// (or there was none).
    fn is_current(&self, gate: &Gate) -> bool {
        self.versions()
            .get(&Self::key(gate))
            .is_none_or(|version| gate.metadata.resource_version.as_ref() == Some(version))
    }

    fn record(&self, gate: &Gate, version: Option<String>) {
        let key = Self::key(gate);
        match version {
            Some(version) => self.versions().insert(key, version),
            None => self.versions().remove(&key),
        };
    }
}

/// Forgets what a [`GateReconciler`] keeps of a Gate once the Gate is deleted: its
/// health series and its last status write.
pub struct Forgetter {
    metrics: Arc<Metrics>,
    written: Written,
    outbox: Outbox,
}

impl Forgetter {
    /// Forgets `gate`, which was deleted.
    pub fn gate(&self, gate: &Gate) {
        self.forget(&gate.namespace().unwrap_or_default(), &gate.name_any());
    }

    /// Forgets the Gate `name` of `namespace`, which no longer exists.
    pub fn forget(&self, namespace: &str, name: &str) {
        self.metrics.forget_gate(namespace, name);
        self.outbox.forget(namespace, name);
        self.written
            .versions()
            .remove(&(namespace.to_string(), name.to_string()));
    }
}

impl<R: Reads> GateReconciler<R> {
    /// What forgets a deleted Gate's per-Gate state; the controller calls it when its
    /// watch sees the Gate go.
    pub fn forgetter(&self) -> Forgetter {
        Forgetter {
            metrics: self.metrics.clone(),
            written: self.written.clone(),
            outbox: self.outbox.clone(),
        }
    }

    /// Reconciles the Gate `name` in `namespace`, reading it first. A Gate that no
    /// longer exists is not an error: what is kept of it is forgotten.
    pub async fn reconcile_named(&self, namespace: &str, name: &str) -> Result<Outcome, Error> {
        match Api::<Gate>::namespaced(self.client.clone(), namespace)
            .get_opt(name)
            .await?
        {
            Some(gate) => self.reconcile(&gate).await,
            None => {
                self.forgetter().forget(namespace, name);
                Ok(Outcome {
                    requeue_after: None,
                })
            }
        }
    }

    /// Reconciles `gate` as read.
    pub async fn reconcile(&self, gate: &Gate) -> Result<Outcome, Error> {
        let now = self.clock.now();
        let namespace = gate.namespace().unwrap_or_default();
        let mut status = gate.status.clone().unwrap_or_default();
        status.observed_generation = gate.metadata.generation.unwrap_or_default();
        if let Some(requested) = gate
            .annotations()
            .get(wellknown::ANNOTATION_RECONCILE_REQUESTED_AT)
        {
            status.last_handled_reconcile_at = requested.clone();
        }

        let obstacle = obstacle(gate);
        if let Some(stop) = obstacle.as_ref().and_then(ready::stop) {
            status.eligible.clear();
            set(&mut status, &stop.ready, now);
            if let Some(kind) = stop.event {
                self.events
                    .publish(&gate.object_ref(&()), kind, &stop.ready.message)
                    .await;
            }
            self.write_status(gate, status, now, false).await?;
            return Ok(Outcome {
                requeue_after: None,
            });
        }

        let mut passages = self.reads.passages(&namespace, &gate.name_any()).await?;
        self.supersede(gate, &mut passages, now).await?;
        let mut active = newest(&passages, |p| !p.is_terminal()).cloned();
        // Only a finished crossing that is this Gate's own is recorded: labels (how the
        // Passages were found) are metadata any promoter may patch (ops' rule).
        let gate_name = gate.name_any();
        // A copy: recording it adds what its verification says now, which the
        // rollback judgement below reads.
        let mut latest = newest(&passages, |p| {
            p.is_terminal() && passage_rule::is_record_of(p, &gate_name)
        })
        .cloned();
        let mut bundles = self.reads.bundles(&namespace).await?;
        let unverified = match latest.as_mut() {
            Some(latest) => {
                self.record(gate, &mut status, latest, &mut bundles, now)
                    .await?
            }
            None => None,
        };
        let followed = self.assess_health(gate, &mut status, &passages, now).await;

        // The controller's view may not hold a Passage it (or a person) just created:
        // ask the API server before treating the Gate as free (spec §0.5, Q13).
        if active.is_none()
            && !status.active_passage.is_empty()
            && !passages
                .iter()
                .any(|p| p.name_any() == status.active_passage)
        {
            active = Api::<Passage>::namespaced(self.client.clone(), &namespace)
                .get_opt(&status.active_passage)
                .await?
                .filter(|p| !p.is_terminal());
        }

        // Judge with what this reconcile just recorded (a new occupant is AlreadyCurrent).
        let mut judged = gate.clone();
        judged.status = Some(status.clone());
        let candidates = eligibility::evaluate(&judged, &bundles, None, now);
        status.eligible = eligibility::eligible(&candidates)
            .iter()
            .map(|b| b.name_any())
            .collect();

        // A failed crossing (or one whose verification said no) on a Gate that rolls
        // back by itself is undone before anything else moves: once, never a loop.
        let automatic = latest
            .as_ref()
            .filter(|_| active.is_none())
            .and_then(|latest| rollback::automatic(&judged, latest, &passages, &bundles));
        let catch_up = match active {
            None => self.catch_up(&judged, &passages, &bundles).await?,
            Some(_) => None,
        };
        let decision = standing::next_move(
            &judged,
            obstacle.as_ref(),
            active.as_ref(),
            &candidates,
            &bundles,
            standing::Due {
                rollback: automatic,
                catch_up,
            },
            now,
        );
        let standing = match decision {
            Decision::Open(bundle) => {
                self.open(gate, bundle, &passages, Opening::Promotion)
                    .await?
            }
            Decision::RollBack {
                bundle,
                undoing,
                why,
            } => {
                let rollback = Opening::Rollback {
                    undoing: &undoing,
                    why: &why,
                };
                self.open(gate, bundle, &passages, rollback).await?
            }
            Decision::CatchUp {
                bundle,
                rollout,
                targets,
                why,
            } => {
                let catch_up = Opening::CatchUp {
                    rollout: &rollout,
                    targets: &targets,
                    why: &why,
                };
                self.open(gate, bundle, &passages, catch_up).await?
            }
            Decision::Stand(standing) => standing,
        };
        // A verification that knows when it looks next wakes the Gate then (a soak at
        // its end); one that does not is looked at on the tick.
        let next_look = match &unverified {
            Some(Unverified::Verifying { next_look, .. }) => Some(*next_look),
            _ => None,
        };
        let at_rest = advance::at_rest(
            &standing,
            next_look.is_some_and(|at| at.is_none()),
            status.health.as_ref().map(|health| health.status),
            followed,
        );
        let mut requeue_after = if at_rest { AT_REST_RESYNC } else { RESYNC };
        if let Some(wait) = next_look
            .flatten()
            .map(|at| until(now, at).unwrap_or(Duration::ZERO))
        {
            requeue_after = requeue_after.min(wait.max(MIN_LOOK_WAIT));
        }
        status.active_passage.clear();
        status.evidence = None;
        match &standing {
            Standing::Crossing { passage, .. } => {
                // A Passage under way lends the Gate its evidence; one just opened has none.
                status.evidence = active
                    .as_ref()
                    .and_then(|p| p.status.as_ref())
                    .and_then(|s| s.evidence.clone());
                status.active_passage = passage.clone();
            }
            Standing::WindowClosed { reopens, .. } => {
                if let Some(wait) = reopens.and_then(|at| until(now, at)) {
                    requeue_after = requeue_after.min(wait);
                }
            }
            Standing::CannotOpen(_) | Standing::Idle(_) | Standing::CrossingFailed(_) => {}
        }
        set(
            &mut status,
            &ready::ready(&standing, unverified.as_ref()),
            now,
        );

        judged.status = Some(status.clone());
        retention::collect(&self.client, &judged, &passages).await;
        self.write_status(gate, status, now, at_rest).await?;
        self.tell(judged, bundles, passages, now);
        Ok(Outcome {
            requeue_after: Some(requeue_after),
        })
    }

    /// Offers what `gate` has to tell, as judged with what this reconcile read and
    /// wrote, when a Notifier hears its namespace: nothing is judged for nobody.
    fn tell(&self, gate: Gate, bundles: Vec<Bundle>, passages: Vec<Passage>, now: Timestamp) {
        let namespace = gate.namespace().unwrap_or_default();
        if !self.outbox.hears(&namespace) {
            return;
        }
        let name = gate.name_any();
        let snapshot = NamespaceSnapshot::new(namespace.clone(), vec![gate], bundles, passages);
        let Some(gate) = snapshot.gate(&name) else {
            return;
        };
        let explanation = explain::explain(&snapshot, gate, now);
        let notices = notice::of_gate(&snapshot, gate, &explanation, now);
        self.outbox.offer(&namespace, &name, notices);
    }

    /// Records the outcome of the newest finished Passage, once (spec §2.4). Returns
    /// why a successful crossing is not verified, if it is not.
    async fn record(
        &self,
        gate: &Gate,
        status: &mut GateStatus,
        passage: &mut Passage,
        bundles: &mut Vec<Bundle>,
        now: Timestamp,
    ) -> Result<Option<Unverified>, Error> {
        let namespace = gate.namespace().unwrap_or_default();
        let gate_name = gate.name_any();
        let api = Api::<Bundle>::namespaced(self.client.clone(), &namespace);
        // The view's copy is enough to see a crossing already recorded (the usual case:
        // every reconcile looks at the newest finished Passage); a stale copy only
        // costs a conflict, which re-reads. A Bundle the view lacks is asked for.
        let bundle = match bundles.iter().find(|b| b.name_any() == passage.spec.bundle) {
            Some(bundle) => bundle.clone(),
            None => match api.get_opt(&passage.spec.bundle).await? {
                Some(bundle) => bundle,
                None => return Ok(None),
            },
        };
        match passage.phase() {
            PassagePhase::Failed | PassagePhase::Aborted => {
                let (blocked, known) = update_bundle(&api, bundle, |s| {
                    record::record_blocked(s, &gate_name, passage, now)
                })
                .await?;
                remember(bundles, known);
                if blocked {
                    let why = passage
                        .status
                        .as_ref()
                        .map(|s| s.message.as_str())
                        .unwrap_or_default();
                    self.events
                        .publish(
                            &gate.object_ref(&()),
                            events::CROSSING_FAILED,
                            &format!(
                                "{} did not cross ({}): {why}",
                                passage.spec.bundle,
                                passage.name_any()
                            ),
                        )
                        .await;
                }
                Ok(None)
            }
            PassagePhase::Succeeded => {
                record::record_occupant(status, &bundle, passage, now);
                let verification = self.verify(gate, passage, &bundle, now).await?;
                passage
                    .status
                    .get_or_insert_with(Default::default)
                    .verification = Some(verification.clone());
                let passage = &*passage;
                match verification.phase {
                    VerificationPhase::Verifying => {
                        // Words a look does not change: the Gate's status is not
                        // rewritten for every look (the progress is the Passage's).
                        return Ok(Some(Unverified::Verifying {
                            next_look: verification::next_look(&verification),
                            message: verification::waiting_on(&passage.name_any(), &verification),
                        }));
                    }
                    VerificationPhase::Failed => {
                        record::mark_verified(status, false);
                        let why = verification.message;
                        let (unverified, known) = update_bundle(&api, bundle, |s| {
                            record::record_unverified(s, &gate_name, passage, &why, now)
                        })
                        .await?;
                        remember(bundles, known);
                        if unverified {
                            self.events
                                .publish(
                                    &gate.object_ref(&()),
                                    events::VERIFICATION_FAILED,
                                    &format!(
                                        "{} crossed by {} and was not verified: {why}",
                                        passage.spec.bundle,
                                        passage.name_any()
                                    ),
                                )
                                .await;
                        }
                        return Ok(Some(Unverified::Failed(why)));
                    }
                    // Cut short by the crossing under way, which the Gate records next.
                    VerificationPhase::Superseded => return Ok(None),
                    VerificationPhase::Verified => {}
                }
                if !gate.spec.verify.is_empty() {
                    record::mark_verified(status, true);
                }
                let (cleared, known) = update_bundle(&api, bundle, |s| {
                    record::record_cleared(s, &gate_name, passage, now)
                })
                .await?;
                remember(bundles, known);
                if cleared {
                    self.events
                        .publish(
                            &gate.object_ref(&()),
                            events::BUNDLE_CROSSED,
                            &format!("{} crossed by {}", passage.spec.bundle, passage.name_any()),
                        )
                        .await;
                }
                Ok(None)
            }
            PassagePhase::Pending | PassagePhase::Running => Ok(None),
        }
    }

    /// Ends as `Superseded` each undecided verification a newer crossing of `gate` cut
    /// short (ops' `verification::superseded`), on the Passage and in `passages`: it
    /// is never looked at again, and says so rather than "Verifying" for ever.
    async fn supersede(
        &self,
        gate: &Gate,
        passages: &mut [Passage],
        now: Timestamp,
    ) -> Result<(), Error> {
        let cut: Vec<(String, String)> = verification::superseded(passages, &gate.name_any())
            .into_iter()
            .map(|(passage, newer)| (passage.name_any(), newer))
            .collect();
        let api =
            Api::<Passage>::namespaced(self.client.clone(), &gate.namespace().unwrap_or_default());
        for (name, newer) in cut {
            let Some(passage) = passages.iter_mut().find(|p| p.name_any() == name) else {
                continue;
            };
            let Some(status) = passage
                .status
                .as_mut()
                .and_then(|s| s.verification.as_mut())
            else {
                continue;
            };
            verification::supersede(status, &newer, now);
            let patch = serde_json::json!({"status": {"verification": status}});
            api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
        Ok(())
    }

    /// The verification of `passage`, a successful crossing of `gate`, after the looks
    /// due now — written on the Passage when it changed, so the next reconcile carries
    /// it on and every surface reads it there. A Gate with nothing to verify writes
    /// nothing.
    ///
    /// On a Gate that binds Fides, the write that makes the verification final carries
    /// the resourceVersion read: only one reconcile's write can make it so, and that
    /// one — once it succeeded — attests the verdict, at most once and never retried
    /// (`passage::attest::verification`). A Gate without Fides writes as before.
    async fn verify(
        &self,
        gate: &Gate,
        passage: &Passage,
        bundle: &Bundle,
        now: Timestamp,
    ) -> Result<VerificationStatus, Error> {
        let verification = self.verifiers.advance(gate, passage, bundle, now).await;
        let recorded = passage
            .status
            .as_ref()
            .and_then(|s| s.verification.as_ref());
        if !gate.spec.verify.is_empty() && recorded != Some(&verification) {
            let decided =
                verification.phase.is_final() && !recorded.is_some_and(|r| r.phase.is_final());
            let claims = decided && gate.spec.evidence.is_some();
            let mut patch = serde_json::json!({"status": {"verification": verification}});
            if claims {
                patch["metadata"] =
                    serde_json::json!({"resourceVersion": passage.resource_version()});
            }
            Api::<Passage>::namespaced(self.client.clone(), &gate.namespace().unwrap_or_default())
                .patch_status(
                    &passage.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await?;
            if claims {
                self.attest(gate, passage, bundle, &verification).await;
            }
        }
        Ok(verification)
    }

    /// Records the final `verification` of `passage` in the Fides `gate` binds; says so
    /// in an Event on the Passage when it cannot (as its `promotion` attestation does).
    /// Never fails: the verdict stands either way.
    async fn attest(
        &self,
        gate: &Gate,
        passage: &Passage,
        bundle: &Bundle,
        verification: &VerificationStatus,
    ) {
        let default_server = self.fides_server.as_deref().unwrap_or_default();
        let attested = attest::verification(
            &self.client,
            default_server,
            gate,
            passage,
            bundle,
            verification,
        )
        .await;
        let (kind, why) = match attested {
            Attested::NotAsked | Attested::Recorded(_) => return,
            Attested::Skipped(why) => (events::ATTESTATION_SKIPPED, why),
            Attested::Failed(why) => (events::ATTESTATION_FAILED, why),
        };
        self.events
            .publish(&passage.object_ref(&()), kind, &why)
            .await;
    }

    /// Assesses what the Gate watches, plus what the crossing behind its occupant
    /// handed it (spec §2.6, Q4), and records a change of state.
    async fn assess_health(
        &self,
        gate: &Gate,
        status: &mut GateStatus,
        passages: &[Passage],
        now: Timestamp,
    ) -> bool {
        let namespace = gate.namespace().unwrap_or_default();
        let name = gate.name_any();
        let mut checks = gate.spec.watch.clone();
        if let Some(current) = &status.current
            && let Some(passage) = passages
                .iter()
                .find(|p| p.name_any() == current.passage && p.phase() == PassagePhase::Succeeded)
            && let Some(passage_status) = &passage.status
        {
            checks.extend(passage_status.watch.iter().cloned());
        }
        let assessment = self.health.assess(&checks, &namespace, now).await;
        self.metrics
            .set_gate_health(&namespace, &name, assessment.status);
        let (report, change) = health_change::judge(status.health.as_ref(), assessment, now);
        if let Some(change) = change {
            if let Some(seconds) = change.degraded_seconds {
                self.metrics.observe_degraded(&namespace, &name, seconds);
            }
            self.events
                .publish(&gate.object_ref(&()), change.event, &change.note)
                .await;
        }
        status.health = Some(report);
        self.health.followed(&checks)
    }

    /// The catch-up crossing `gate` is due, if it spans targets and some joined
    /// after the rollout of what it holds (ops' [`rollout::view::catch_up`]), with
    /// the Bundle it crosses.
    async fn catch_up<'b>(
        &self,
        gate: &Gate,
        passages: &[Passage],
        bundles: &'b [Bundle],
    ) -> Result<Option<(&'b Bundle, rollout::view::CatchUp)>, Error> {
        let occupant = gate.status.as_ref().and_then(|s| s.current.as_ref());
        let (true, Some(occupant)) = (gate.spec.targets.is_some(), occupant) else {
            return Ok(None);
        };
        let clusters = if gate.selects_targets() {
            let namespace = gate.namespace().unwrap_or_default();
            self.reads.clusters(&namespace).await?
        } else {
            Vec::new()
        };
        // Targets that cannot be followed are the Gate's problem, said where its
        // crossings are; nothing is caught up meanwhile.
        let Ok(Some(span)) = rollout::span(&gate.spec, &clusters) else {
            return Ok(None);
        };
        let mut newest_first: Vec<&Passage> = passages.iter().collect();
        newest_first.sort_by(|a, b| eligibility::passages_newest_first(a, b));
        let Some(due) = rollout::view::catch_up(&span.plan, &occupant.passage, &newest_first)
        else {
            return Ok(None);
        };
        Ok(bundles
            .iter()
            .find(|b| b.name_any() == due.bundle)
            .map(|bundle| (bundle, due)))
    }

    /// Opens a Passage for `bundle` as actor `controller`, built and named exactly as
    /// `hecate promote` builds it, so that a person's promote racing this yields one
    /// Passage — a rollback or a catch-up as `opening` says. The Gate then stands
    /// crossing it, or — the API server refusing it — unable to open.
    async fn open(
        &self,
        gate: &Gate,
        bundle: &Bundle,
        passages: &[Passage],
        opening: Opening<'_>,
    ) -> Result<Standing, Error> {
        let namespace = gate.namespace().unwrap_or_default();
        let api = Api::<Passage>::namespaced(self.client.clone(), &namespace);
        let all: Vec<&Passage> = passages.iter().collect();
        let name = next_passage_name(&gate.name_any(), &all);
        let mut passage = new_passage(
            gate,
            bundle,
            wellknown::ACTOR_CONTROLLER,
            &name,
            self.clock.now(),
        );
        match opening {
            Opening::Rollback { undoing, .. } => {
                passage
                    .annotations_mut()
                    .insert(wellknown::ANNOTATION_ROLLBACK_OF.into(), undoing.into());
            }
            Opening::CatchUp {
                rollout, targets, ..
            } => {
                passage
                    .annotations_mut()
                    .insert(wellknown::ANNOTATION_CATCH_UP_OF.into(), rollout.into());
                passage.spec.targets = targets.to_vec();
            }
            Opening::Promotion => {}
        }
        match api.create(&PostParams::default(), &passage).await {
            Ok(created) => {
                let (kind, message) = match opening {
                    Opening::Rollback { why, .. } => {
                        (events::ROLLBACK_STARTED, format!("{name}: {why}"))
                    }
                    Opening::CatchUp { why, .. } => {
                        (events::PASSAGE_STARTED, format!("{name}: {why}"))
                    }
                    Opening::Promotion => (
                        events::PASSAGE_STARTED,
                        format!("{name} crosses {}", bundle.name_any()),
                    ),
                };
                self.events
                    .publish(&gate.object_ref(&()), kind, &message)
                    .await;
                Ok(crossing(&created))
            }
            // Someone else took the name first: a person's promote, or this view is
            // behind. Either way there is exactly one Passage by that name.
            Err(kube::Error::Api(status)) if status.code == 409 => {
                match api.get_opt(&name).await? {
                    Some(existing) if !existing.is_terminal() => Ok(crossing(&existing)),
                    _ => Err(Error::Stale(name)),
                }
            }
            Err(kube::Error::Api(status)) if matches!(status.code, 400 | 403 | 422) => {
                Ok(Standing::CannotOpen(format!(
                    "could not create Passage {name}: {}",
                    status.message
                )))
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Writes the Gate's status whole, with the resourceVersion it was read at —
    /// unless it is what is stored already, but for a recent `health.observedAt` (any
    /// `observedAt` for a Gate `at_rest`).
    async fn write_status(
        &self,
        gate: &Gate,
        status: GateStatus,
        now: Timestamp,
        at_rest: bool,
    ) -> Result<(), Error> {
        if gate
            .status
            .as_ref()
            .is_some_and(|stored| unchanged(stored, &status, now, at_rest))
            && self.written.is_current(gate)
        {
            return Ok(());
        }
        let mut object = gate.clone();
        object.status = Some(status);
        let written =
            Api::<Gate>::namespaced(self.client.clone(), &gate.namespace().unwrap_or_default())
                .replace_status(&gate.name_any(), &PostParams::default(), &object)
                .await?;
        self.written.record(gate, written.metadata.resource_version);
        Ok(())
    }
}

/// Whether writing `status` over `stored` would change nothing but a
/// `health.observedAt` younger than [`OBSERVED_AT_FRESH`] — or, `at_rest`, nothing but
/// `health.observedAt`.
pub fn unchanged(stored: &GateStatus, status: &GateStatus, now: Timestamp, at_rest: bool) -> bool {
    let observed = |s: &GateStatus| s.health.as_ref().and_then(|h| h.observed_at.clone());
    let fresh = at_rest
        || observed(stored).is_some_and(|at| {
            until(at.0, now).is_some_and(|age| age < OBSERVED_AT_FRESH) || at.0 >= now
        });
    if !fresh {
        return false;
    }
    let mut status = status.clone();
    if let Some(health) = status.health.as_mut() {
        health.observed_at = observed(stored);
    }
    &status == stored
}

/// Sets the Gate's `Ready` condition to `ready`, for the generation it observed.
fn set(status: &mut GateStatus, ready: &Ready, now: Timestamp) {
    set_ready(
        &mut status.conditions,
        ready.ready,
        ready.reason,
        &ready.message,
        status.observed_generation,
        now,
    );
}

/// A Gate crossing `passage`, just opened (or found opened by someone else).
fn crossing(passage: &Passage) -> Standing {
    Standing::Crossing {
        passage: passage.name_any(),
        message: crossing_message(passage),
    }
}

/// The newest Passage (by creation, ties by name) that `keep` accepts.
fn newest(passages: &[Passage], keep: impl Fn(&Passage) -> bool) -> Option<&Passage> {
    passages
        .iter()
        .filter(|p| keep(p))
        .min_by(|a, b| eligibility::newest_first(*a, *b))
}

/// How long from `now` until `at`, if `at` is in the future.
fn until(now: Timestamp, at: Timestamp) -> Option<Duration> {
    Duration::try_from(at.duration_since(now)).ok()
}

/// Puts `known` in `bundles` in place of its older copy, so the rest of the reconcile
/// judges with what was just recorded (a failure just recorded is never crossed again).
fn remember(bundles: &mut Vec<Bundle>, known: Bundle) {
    match bundles
        .iter_mut()
        .find(|b| b.name_any() == known.name_any())
    {
        Some(old) => *old = known,
        None => bundles.push(known),
    }
}

/// Read-modify-writes a Bundle's status: `edit` says whether it changed anything; a
/// conflict (a person approving at the same moment) re-reads and tries again. Answers
/// whether it wrote, and the Bundle as last known (written, or re-read).
async fn update_bundle(
    api: &Api<Bundle>,
    mut bundle: Bundle,
    edit: impl Fn(&mut BundleStatus) -> bool,
) -> Result<(bool, Bundle), Error> {
    const ATTEMPTS: usize = 5;
    for _ in 0..ATTEMPTS {
        let mut status = bundle.status.clone().unwrap_or_default();
        if !edit(&mut status) {
            return Ok((false, bundle));
        }
        bundle.status = Some(status);
        match api
            .replace_status(&bundle.name_any(), &PostParams::default(), &bundle)
            .await
        {
            Ok(written) => return Ok((true, written)),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                bundle = api.get(&bundle.name_any()).await?;
            }
            Err(error) => return Err(error.into()),
        }
    }
    Err(Error::Kube(kube::Error::Api(Box::new(
        kube::core::Status::failure("the Bundle kept changing under the write", "Conflict")
            .with_code(409),
    ))))
}

#[cfg(test)]
mod tests {
    use hecate_types::{GateOccupant, Health, HealthReport, Time};
    use jiff::SignedDuration;

    use super::*;

    fn at(minute: i64, second: i64) -> Timestamp {
        let g0: Timestamp = "2026-08-10T12:00:00Z".parse().expect("a time");
        g0 + SignedDuration::from_mins(minute) + SignedDuration::from_secs(second)
    }

    fn status(observed: Timestamp) -> GateStatus {
        GateStatus {
            active_passage: "dev-1".into(),
            health: Some(HealthReport {
                status: Health::Healthy,
                issues: Vec::new(),
                details: None,
                observed_at: Some(Time(observed)),
                since: Some(Time(at(0, 0))),
            }),
            ..GateStatus::default()
        }
    }

    #[test]
    fn a_status_that_changed_nothing_but_a_recent_observation_is_not_written_again() {
        let stored = status(at(1, 0));
        assert!(unchanged(&stored, &status(at(1, 10)), at(1, 10), false));
        assert!(
            !unchanged(&stored, &status(at(1, 30)), at(1, 30), false),
            "an observation {OBSERVED_AT_FRESH:?} old is refreshed"
        );
        assert!(
            unchanged(&stored, &status(at(30, 0)), at(30, 0), true),
            "a Gate at rest is not rewritten to say it looked"
        );
        let mut moved = status(at(1, 10));
        moved.current = Some(GateOccupant {
            bundle: "app-1".into(),
            digest: String::new(),
            passage: "dev-1".into(),
            entered_at: Time(at(1, 10)),
            actor: String::new(),
            verified: None,
        });
        assert!(
            !unchanged(&stored, &moved, at(1, 10), false),
            "anything else"
        );
        assert!(
            !unchanged(&stored, &moved, at(1, 10), true),
            "anything else, at rest too"
        );
        let mut unobserved = stored.clone();
        unobserved.health = None;
        assert!(!unchanged(
            &unobserved,
            &status(at(1, 10)),
            at(1, 10),
            false
        ));
    }
}
