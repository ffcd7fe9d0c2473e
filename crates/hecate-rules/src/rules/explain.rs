//! Explain: why a Gate is where it is, as typed blockers, most actionable first.
//!
//! The stages, first match wins: what the Gate alone decides ([`gate::obstacle`]:
//! suspended, steps invalid, no steps); a crossing in progress (across a Gate's
//! targets, where its rollout stands, from the Passage's record); otherwise judge the
//! candidates — eligibility and windows come from their own modules, never restated
//! here. Each blocker's fix is a typed [`Remedy`], put in words by the model.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use hecate_types::{
    Bundle, Gate, Health, Passage, PassagePhase, StepPhase, Time, VerificationPhase,
};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;

use super::approval;
use super::change;
use super::eligibility::{self, AutoNext, Candidate, Code, Queue};
use super::gate::{self, Obstacle};
use super::snapshot::NamespaceSnapshot;
use super::{passage, rollout, standing, verification, window};
use crate::model::{
    Blocker, BlockerKind, CrossingNow, Explanation, FailedBefore, Outcome, Remedy, State, StepNow,
    Waiting,
};

/// How long a Passage may wait to be started before Explain says so. The controller
/// starts a Passage as soon as it is created (it wakes on the create, and a waiting
/// step frees its worker at once), so two minutes without a start means no controller
/// is acting on this namespace — not running, not leading, or sharded elsewhere.
pub const STALL_AFTER: SignedDuration = SignedDuration::from_secs(120);

/// Until when [`explain`] at `now` gives the same answer over the same objects: time
/// enters an explanation through the Gate's windows (each described as it stands, so
/// until the next one opens or closes) and through a crossing that has not started (it
/// is said to be stalled [`STALL_AFTER`] its creation). `None`: nothing changes with
/// time — or not within the horizon [`window::judge`] looks over.
pub fn unchanged_until(
    snapshot: &NamespaceSnapshot,
    gate: &Gate,
    now: Timestamp,
) -> Option<Timestamp> {
    // Each window's words change at its next edge, and once when that edge comes
    // near enough to be named by its weekday alone.
    let windows = window::describe(&gate.spec.windows, now)
        .into_iter()
        .filter_map(|w| w.next.map(|t| t.0))
        .flat_map(|next| {
            let near = next
                .checked_sub(window::WEEKDAY_ONLY)
                .ok()
                .filter(|near| *near > now);
            std::iter::once(next).chain(near)
        });
    let stall = snapshot
        .passages_of(&gate.name_any())
        .find(|p| !p.is_terminal())
        .and_then(|p| stalls_at(p).filter(|at| *at > now));
    // An approval that stops counting changes what its Bundle is waiting for.
    let expiry = approval::next_expiry(gate, snapshot.bundles(), now);
    windows.chain(stall).chain(expiry).min()
}

/// When a Passage that has not started counts as stalled (`None`: it has started, or
/// its creation time is unknown).
fn stalls_at(passage: &Passage) -> Option<Timestamp> {
    let started = passage
        .status
        .as_ref()
        .is_some_and(|s| s.started_at.is_some());
    if started || passage.phase() != PassagePhase::Pending {
        return None;
    }
    eligibility::created_at(passage).and_then(|c| c.checked_add(STALL_AFTER).ok())
}

/// Explains `gate` (one of `snapshot`'s Gates) at `now`.
pub fn explain(snapshot: &NamespaceSnapshot, gate: &Gate, now: Timestamp) -> Explanation {
    let mut x = judged(snapshot, gate, now);
    x.versions = versions(snapshot, &x);
    x
}

/// How many Bundles an Explanation names the versions of: a Gate may list hundreds of
/// older Bundles to roll back to, and every answer is serialised per request.
const MAX_VERSIONS: usize = 64;

/// How each Bundle `x` names reads for people ([`super::version::of`]): the current
/// one, the crossing, those waiting to cross and those that cannot, then older ones up
/// to [`MAX_VERSIONS`] — so that no surface needs the Bundles themselves to say
/// "v1.3.0".
fn versions(snapshot: &NamespaceSnapshot, x: &Explanation) -> BTreeMap<String, String> {
    let named: BTreeSet<&str> = x
        .current
        .iter()
        .map(String::as_str)
        .chain(x.crossing.iter().map(|c| c.bundle.as_str()))
        .chain(
            x.eligible[..x.ahead.min(x.eligible.len())]
                .iter()
                .map(String::as_str),
        )
        .chain(x.waiting.iter().map(|w| w.bundle.as_str()))
        .chain(x.eligible.iter().map(String::as_str))
        .take(MAX_VERSIONS)
        .collect();
    if named.is_empty() {
        return BTreeMap::new();
    }
    snapshot
        .bundles()
        .filter_map(|b| {
            let name = b.metadata.name.as_deref()?;
            named
                .contains(name)
                .then(|| (name.to_string(), super::version::of(b)))
        })
        .collect()
}

fn judged(snapshot: &NamespaceSnapshot, gate: &Gate, now: Timestamp) -> Explanation {
    let name = gate.name_any();
    let namespace = snapshot.namespace().to_string();
    let status = gate.status.as_ref();
    let mut x = Explanation {
        gate: name.clone(),
        namespace: namespace.clone(),
        state: State::Idle,
        summary: String::new(),
        blockers: Vec::new(),
        current: gate.current_bundle().map(str::to_string),
        eligible: Vec::new(),
        ahead: 0,
        waiting: Vec::new(),
        health: status.and_then(|s| s.health.as_ref()).map(|h| h.status),
        evidence: None,
        crossing: None,
        failed_before: Vec::new(),
        windows: window::describe(&gate.spec.windows, now),
        // Whatever stands in the way: what the environment's branch holds is a fact.
        versions: BTreeMap::new(),
        left_behind: snapshot
            .passages_of(&name)
            .next()
            .and_then(passage::left_behind),
    };

    if let Some(obstacle) = gate::obstacle(gate) {
        x.state = State::Blocked;
        let (summary, blocker) = match obstacle {
            Obstacle::Suspended => (
                "the Gate is suspended: no crossing will start until it is resumed",
                Blocker::new(
                    BlockerKind::Suspended,
                    "the Gate is suspended",
                    Some(Remedy::Resume { gate: name }),
                    &namespace,
                ),
            ),
            Obstacle::InvalidSteps(problems) => (
                "the Gate's steps do not validate, so it will not start a Passage",
                Blocker::new(
                    BlockerKind::InvalidSteps,
                    problems,
                    Some(Remedy::FixSteps { gate: name }),
                    &namespace,
                ),
            ),
            Obstacle::NoSteps => (
                "the Gate has no steps, so a crossing would have nothing to run",
                Blocker::new(
                    BlockerKind::NoPassage,
                    "the Gate lists no steps",
                    Some(Remedy::AddSteps { gate: name }),
                    &namespace,
                ),
            ),
        };
        x.summary = summary.into();
        x.blockers.push(blocker);
        return x;
    }

    let passages: Vec<&Passage> = snapshot.passages_of(&name).collect();
    let active = passages.iter().find(|p| !p.is_terminal()).copied();
    let candidates = eligibility::evaluate(gate, snapshot.bundles(), None, now);
    // As the controller finds it: a deleted occupant counts as none.
    let current = gate
        .current_bundle()
        .and_then(|current| snapshot.bundles().find(|b| b.name_any() == current));
    for candidate in &candidates {
        // What is crossing now is neither eligible nor waiting: it is on its way.
        if active.is_some_and(|p| candidate.bundle.metadata.name.as_deref() == Some(&p.spec.bundle))
        {
            continue;
        }
        match &candidate.blocked {
            None => {
                x.eligible.push(candidate.bundle.name_any());
                // Only these are waiting to cross; older ones are there to roll back to.
                x.ahead += usize::from(eligibility::is_ahead(candidate.bundle, current));
            }
            Some(why) if why.code == Code::AlreadyCurrent => {} // the occupant is the goal, not a problem
            Some(why) => {
                let bundle = candidate.bundle.name_any();
                let upstream = (why.code == Code::UpstreamNotCleared)
                    .then(|| upstream_verification(snapshot, gate, candidate.bundle))
                    .flatten();
                let action = match why.code {
                    Code::AwaitingApproval => Some(Remedy::Approve {
                        gate: name.clone(),
                        bundle: bundle.clone(),
                        from: why
                            .approvals
                            .as_ref()
                            .map(approval::missing_from)
                            .unwrap_or_default(),
                    }),
                    Code::Rejected => Some(Remedy::WithdrawRejection {
                        gate: name.clone(),
                        bundle: bundle.clone(),
                        by: approval::withdrawers(gate, candidate.bundle),
                    }),
                    // Being verified upstream, or refused there by a verifier: no
                    // crossing upstream would help.
                    Code::UpstreamNotCleared if upstream.is_some() => None,
                    Code::UpstreamNotCleared => {
                        first_uncleared(gate, candidate.bundle).map(|upstream| {
                            Remedy::PromoteUpstream {
                                gate: upstream,
                                bundle: bundle.clone(),
                            }
                        })
                    }
                    Code::AlreadyCurrent | Code::SelfApproved => None,
                };
                let (reason, until) = match &upstream {
                    Some(Upstream::Verifying {
                        gate: upstream,
                        progress,
                        until,
                    }) => (
                        format!("being verified in {upstream}: {progress}"),
                        until.map(Time),
                    ),
                    _ => (why.reason.clone(), None),
                };
                // Under `requireApproval` alone, "awaiting approval" says it all, as
                // it always has; a policy's progress, or a "no", says more.
                let policy = gate
                    .admission_for(&candidate.bundle.spec.beacon)
                    .is_some_and(|a| a.approvals.is_some());
                x.waiting.push(Waiting {
                    bundle,
                    reason,
                    until,
                    kind: Some(why.code),
                    action,
                    approvals: why
                        .approvals
                        .clone()
                        .filter(|p| policy || p.rejected.is_some()),
                });
            }
        }
    }
    x.failed_before = failed_before(&x.eligible, &passages);
    // A crossing in progress: what the Bundles could do comes after it, so they are
    // listed, but nothing else is judged until it ends.
    if let Some(active) = active {
        let version = snapshot
            .bundles()
            .find(|b| b.metadata.name.as_deref() == Some(&active.spec.bundle))
            .map_or_else(|| active.spec.bundle.clone(), super::version::of);
        crossing(&mut x, active, &version, now);
        return x;
    }
    x.blockers
        .extend(last_failure(&namespace, passages.first().copied()));
    x.blockers.extend(failed_verification(
        &name,
        &namespace,
        passages.first().copied(),
    ));
    x.blockers.extend(health_blocker(gate));
    judge(&mut x, gate, &candidates, current, now);
    if let Some(failure) = x.blockers.iter().find(|b| {
        matches!(
            b.kind,
            BlockerKind::PassageFailed | BlockerKind::VerificationFailed
        )
    }) {
        x.state = State::Failed;
        x.summary = failure.detail.clone();
    }
    x
}

/// Eligible Bundles whose latest Passage through this Gate failed (`passages` newest
/// first), in `eligible`'s order.
fn failed_before(eligible: &[String], passages: &[&Passage]) -> Vec<FailedBefore> {
    let mut latest: HashMap<&str, &Passage> = HashMap::new();
    for passage in passages {
        latest
            .entry(passage.spec.bundle.as_str())
            .or_insert(passage);
    }
    eligible
        .iter()
        .filter_map(|bundle| {
            let passage = latest.get(bundle.as_str())?;
            let outcome = Outcome::of(passage.status.as_ref().and_then(|s| s.phase));
            (outcome == Outcome::Failed).then(|| {
                let status = passage.status.as_ref();
                FailedBefore {
                    bundle: bundle.clone(),
                    passage: passage.name_any(),
                    outcome,
                    at: status.and_then(|s| s.finished_at.clone()),
                    reason: failure_words(passage),
                }
            })
        })
        .collect()
}

/// Why a failed Passage failed, in words: its failed step (with the step's reason code
/// and message), else its own message — in Explain, and in the notice that tells it
/// (DECISION 166).
pub fn failure_words(passage: &Passage) -> String {
    let status = passage.status.as_ref();
    let failed_step =
        status.and_then(|s| s.steps.iter().find(|step| step.phase == StepPhase::Failed));
    match failed_step {
        Some(step) => {
            let mut words = format!("failed at {}", step.uses);
            if !step.reason.is_empty() {
                words.push_str(&format!(" [{}]", step.reason));
            }
            if !step.message.is_empty() {
                words.push_str(&format!(": {}", step.message));
            }
            words
        }
        None => format!(
            "failed: {}",
            status
                .map(|s| s.message.as_str())
                .filter(|m| !m.is_empty())
                .unwrap_or("no reason recorded")
        ),
    }
}

/// A crossing in progress: held by the change gate, waiting on a step, not started
/// long after it was asked for, its rollout halted, or just running. `version` is
/// its Bundle's, as people call it.
fn crossing(x: &mut Explanation, passage: &Passage, version: &str, now: Timestamp) {
    let bundle = &passage.spec.bundle;
    let name = passage.name_any();
    x.state = State::Crossing;
    x.summary = format!("crossing {bundle}");
    let status = passage.status.as_ref();
    let stalled = stalls_at(passage).is_some_and(|at| at <= now);
    let step_now = status
        .and_then(|s| s.steps.iter().find(|step| step.phase == StepPhase::Running))
        .map(|step| StepNow {
            uses: step.uses.clone(),
            alias: step.alias.clone(),
            started_at: step.started_at.clone(),
            attempts: step.attempts,
        });
    x.crossing = Some(CrossingNow {
        passage: name.clone(),
        bundle: bundle.clone(),
        created_at: eligibility::created_at(passage).map(Time),
        started_at: status.and_then(|s| s.started_at.clone()),
        stalled,
        step: step_now,
        rollout: None,
    });
    if stalled {
        let created = eligibility::created_at(passage)
            .map(|c| c.strftime("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_default();
        x.summary = format!("crossing {bundle}, but {name} has not started");
        x.blockers.push(Blocker::new(
            BlockerKind::NotStarted,
            format!(
                "{name} was created at {created} and has not started within {}: is hecate-controller running?",
                window::length(STALL_AFTER)
            ),
            Some(Remedy::CheckController),
            &x.namespace,
        ));
        return;
    }
    if stalls_at(passage).is_some() {
        x.summary = format!("crossing {bundle}: {name} is about to start");
        return;
    }
    x.evidence = status.and_then(|s| s.evidence.clone());
    if let Some(evidence) = x.evidence.as_ref().filter(|e| change::evidence_holds(e)) {
        let mut detail = format!("the change gate answered {}", evidence.verdict);
        if let Some(risk) = evidence.risk {
            detail.push_str(&format!(" (risk {risk}/100)"));
        }
        if !evidence.blockers.is_empty() {
            detail.push_str(&format!(": {}", evidence.blockers.join("; ")));
        }
        x.summary = format!("crossing {bundle}, held by the change gate");
        x.blockers.push(Blocker::new(
            BlockerKind::ChangeHeld,
            detail,
            Some(Remedy::ResolveInFides),
            &x.namespace,
        ));
        return;
    }
    if let Some(record) = status.and_then(|s| s.rollout.as_ref()) {
        rollout(x, &name, bundle, version, record);
        return;
    }
    let running = status.and_then(|s| {
        s.steps
            .iter()
            .enumerate()
            .find(|(_, step)| step.phase == StepPhase::Running)
    });
    if let Some((i, step)) = running {
        let mut detail = if step.message.is_empty() {
            step.uses.clone()
        } else {
            format!("{}: {}", step.uses, step.message)
        };
        // How long it may go on waiting: the step's own `timeout` (the engine's record
        // and spec are index for index), as written.
        if let Some(timeout) = passage
            .spec
            .steps
            .get(i)
            .map(|s| s.timeout.trim())
            .filter(|t| !t.is_empty())
        {
            detail.push_str(&format!(" (the step gives up {timeout} after it started)"));
        }
        x.summary = format!("crossing {bundle}, waiting on {detail}");
        x.blockers.push(Blocker::new(
            BlockerKind::StepWaiting,
            detail,
            None,
            &x.namespace,
        ));
    }
}

/// A crossing across the Gate's targets, from its record: where the Bundle is, and —
/// when failures passed a wave's budget — the halt with what a person may do: retry
/// the failed targets, accept their failures, or stop.
fn rollout(
    x: &mut Explanation,
    passage: &str,
    bundle: &str,
    version: &str,
    record: &hecate_types::RolloutStatus,
) {
    let occupancy = rollout::recorded(version, record);
    let failed = occupancy.failed_names();
    x.summary = format!("rolling {bundle} out: {}", occupancy.words());
    if occupancy.phase == hecate_types::RolloutPhase::Halted && !failed.is_empty() {
        let detail = match record.message.strip_prefix(rollout::step::HALTED) {
            Some(halt) => halt.to_string(),
            None => occupancy
                .failed
                .iter()
                .map(rollout::FailedTarget::words)
                .collect::<Vec<_>>()
                .join("; "),
        };
        x.blockers.push(
            Blocker::new(
                BlockerKind::RolloutHalted,
                detail,
                Some(Remedy::RetryTargets {
                    passage: passage.to_string(),
                    targets: failed.clone(),
                }),
                &x.namespace,
            )
            .or(
                vec![
                    Remedy::AcceptFailures {
                        passage: passage.to_string(),
                        targets: failed.clone(),
                    },
                    Remedy::RollbackTargets {
                        gate: x.gate.clone(),
                        passage: passage.to_string(),
                        targets: failed,
                    },
                    Remedy::Abort {
                        passage: passage.to_string(),
                    },
                ],
                &x.namespace,
            ),
        );
    }
    if let Some(crossing) = x.crossing.as_mut() {
        crossing.rollout = Some(rollout::view::now(version, record));
    }
}

/// The latest Passage, if it failed. An older failure followed by anything else, or
/// an abort, is history rather than a blocker.
fn last_failure(namespace: &str, latest: Option<&Passage>) -> Option<Blocker> {
    let passage = latest.filter(|p| p.phase() == PassagePhase::Failed)?;
    Some(Blocker::new(
        BlockerKind::PassageFailed,
        format!(
            "the last crossing of {} {}",
            passage.spec.bundle,
            failure_words(passage)
        ),
        Some(Remedy::InspectPassage {
            passage: passage.name_any(),
        }),
        namespace,
    ))
}

/// The newest crossing's verification said no: the Bundle is in the environment and
/// will not clear this Gate; rolling back is the fix on offer.
fn failed_verification(gate: &str, namespace: &str, latest: Option<&Passage>) -> Option<Blocker> {
    let passage = latest.filter(|p| p.phase() == PassagePhase::Succeeded)?;
    let verification = passage
        .status
        .as_ref()?
        .verification
        .as_ref()
        .filter(|v| v.phase == VerificationPhase::Failed)?;
    Some(Blocker::new(
        BlockerKind::VerificationFailed,
        format!(
            "{} crossed ({}) and was not verified: {}",
            passage.spec.bundle,
            passage.name_any(),
            verification.message
        ),
        Some(Remedy::Rollback { gate: gate.into() }),
        namespace,
    ))
}

/// What an upstream Gate's verification says of a Bundle that has not cleared it.
enum Upstream {
    /// It crossed and is being verified there: how far, and when that may end (a
    /// soak's end), if known.
    Verifying {
        gate: String,
        progress: String,
        until: Option<Timestamp>,
    },
    /// It crossed and its verification said no (the eligibility reason says so).
    Refused,
}

/// Where `bundle` stands in the verification of the first upstream Gate of `gate` it
/// has not cleared: being verified, refused, or neither (not crossed there yet).
fn upstream_verification(
    snapshot: &NamespaceSnapshot,
    gate: &Gate,
    bundle: &Bundle,
) -> Option<Upstream> {
    let upstream = first_uncleared(gate, bundle)?;
    if bundle.failed_verification(&upstream).is_some() {
        return Some(Upstream::Refused);
    }
    let name = bundle.name_any();
    let crossing = snapshot
        .passages_of(&upstream)
        .find(|p| p.spec.bundle == name && p.phase() == PassagePhase::Succeeded)?;
    let verification = crossing
        .status
        .as_ref()?
        .verification
        .as_ref()
        .filter(|v| v.phase == VerificationPhase::Verifying)?;
    Some(Upstream::Verifying {
        gate: upstream,
        progress: verification::progress(verification),
        until: verification::next_look(verification),
    })
}

/// Degraded or unknown health: it does not stop crossings, but it is usually what the
/// operator wants to know first.
fn health_blocker(gate: &Gate) -> Option<Blocker> {
    let health = gate.status.as_ref()?.health.as_ref()?;
    if !matches!(health.status, Health::Degraded | Health::Unknown) {
        return None;
    }
    let mut detail = format!("what this Gate watches is {}", health.status);
    if !health.issues.is_empty() {
        detail.push_str(&format!(": {}", health.issues.join("; ")));
    }
    Some(Blocker::new(BlockerKind::Unhealthy, detail, None, ""))
}

/// The first Gate in the Bundle's admission's `after` that it has not cleared.
fn first_uncleared(gate: &Gate, bundle: &Bundle) -> Option<String> {
    let admission = gate.admission_for(&bundle.spec.beacon)?;
    admission
        .after
        .iter()
        .find(|upstream| !bundle.has_cleared(upstream))
        .cloned()
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// An automatic Gate with eligible Bundles and an open window: what it will do next,
/// judged by the same rule the controller uses. It only moves forward and never
/// retries a Bundle that failed here, so "eligible" alone would promise crossings that
/// will not happen.
fn auto(x: &mut Explanation, candidates: &[Candidate<'_>], current: Option<&Bundle>, count: &str) {
    let name = x.gate.clone();
    match eligibility::auto_next(&name, candidates, current) {
        AutoNext::Cross(next) => {
            x.state = State::Ready;
            x.summary = format!(
                "{count} eligible; the Gate crosses automatically and will take {} next",
                next.name_any()
            );
        }
        AutoNext::FailedHere(newest) => failed_here(x, newest),
        AutoNext::NothingNewer { held_back } => {
            x.state = State::Idle;
            let newer = held_back.map_or_else(
                || "nothing newer than the current Bundle".to_string(),
                |why| format!("nothing newer can cross yet: {why}"),
            );
            x.summary = format!(
                "{newer}; {}",
                standing::could_be_rolled_back_to(x.eligible.len())
            );
        }
        AutoNext::NoneEligible => {}
    }
}

/// The newest eligible Bundle already failed here, or its verification said no here:
/// the Gate waits for someone to ask for it again (standing's words).
fn failed_here(x: &mut Explanation, newest: &Bundle) {
    let (name, namespace) = (x.gate.clone(), x.namespace.clone());
    let newest_name = newest.name_any();
    let failure = standing::failure_here(newest, &name);
    x.state = State::Blocked;
    x.summary = format!("{failure}; it is crossed again only when asked");
    let kind = if newest.failed_verification(&name).is_some() {
        BlockerKind::VerificationFailed
    } else {
        BlockerKind::PassageFailed
    };
    if !x.blockers.iter().any(|b| {
        matches!(
            b.kind,
            BlockerKind::PassageFailed | BlockerKind::VerificationFailed
        )
    }) {
        x.blockers.push(Blocker::new(
            kind,
            format!("{failure}; it is crossed again only when asked"),
            Some(Remedy::Promote {
                gate: name,
                bundle: newest_name,
            }),
            &namespace,
        ));
    }
}

/// State and summary from the candidates, windows and auto/manual, with the blockers
/// that follow from them.
fn judge(
    x: &mut Explanation,
    gate: &Gate,
    candidates: &[Candidate<'_>],
    current: Option<&Bundle>,
    now: Timestamp,
) {
    let name = &x.gate;
    let namespace = &x.namespace;
    // As the Gate's standing judges it: windows hold new work, manual or automatic;
    // older Bundles are there to roll back to, never "ready to cross".
    let queue = Queue::of(candidates, current);
    // Only older Bundles: nothing newer — unless newer ones wait for people, which
    // is what stands in the way (below).
    if queue.ahead.is_empty() && !queue.older.is_empty() && x.waiting.is_empty() {
        auto(x, candidates, current, "");
        return;
    }
    if !queue.ahead.is_empty() {
        let count = plural(queue.ahead.len(), "Bundle");
        let windows = window::judge(&gate.spec.windows, now);
        if !windows.allowed {
            let detail = windows.reason_in_words();
            x.state = State::Blocked;
            x.summary = format!("{count} could cross, but {detail}");
            x.blockers.push(Blocker {
                until: windows.next_change.map(Time),
                ..Blocker::new(
                    BlockerKind::WindowClosed,
                    detail,
                    Some(Remedy::Wait),
                    namespace,
                )
            });
        } else if !gate.spec.auto
            && let Some(failed) = queue.failed_here(name)
        {
            failed_here(x, failed);
        } else if !gate.spec.auto {
            let newest = &queue.ahead[0].name_any();
            x.state = State::Ready;
            x.summary = format!("{count} ready to cross; this Gate crosses only when asked");
            let approvers = candidates
                .iter()
                .find(|c| c.bundle.metadata.name.as_deref() == Some(newest.as_str()))
                .map(|c| approval::approvers(gate, c.bundle, now))
                .unwrap_or_default();
            let detail = if approvers.is_empty() {
                "this Gate crosses only when asked, and nobody has asked yet".to_string()
            } else {
                format!(
                    "this Gate crosses only when asked: someone other than {}, who approved {newest}, must ask",
                    approvers.join(" and ")
                )
            };
            // The one offered first should not fail the same way unannounced.
            let detail = match x.failed_before.iter().find(|f| &f.bundle == newest) {
                Some(failed) => format!(
                    "{detail} ({newest} {} here before, in {})",
                    failed.outcome.as_str(),
                    failed.passage
                ),
                None => detail,
            };
            x.blockers.push(Blocker::new(
                BlockerKind::Manual,
                detail,
                Some(Remedy::Promote {
                    gate: name.clone(),
                    bundle: newest.clone(),
                }),
                namespace,
            ));
        } else {
            auto(x, candidates, current, &count);
        }
        return;
    }
    if let Some(first) = x.waiting.first() {
        x.state = State::Blocked;
        x.summary = format!(
            "{} cannot cross: {}",
            plural(x.waiting.len(), "Bundle"),
            first.reason
        );
        // One blocker per kind, from the first (newest) Bundle waiting for it.
        let mut seen = Vec::new();
        let mut blockers = Vec::new();
        for waiting in &x.waiting {
            let kind = match waiting.kind {
                Some(Code::AwaitingApproval) => BlockerKind::NotApproved,
                Some(Code::UpstreamNotCleared) => BlockerKind::Upstream,
                Some(Code::Rejected) => BlockerKind::Rejected,
                _ => continue,
            };
            if seen.contains(&kind) {
                continue;
            }
            seen.push(kind);
            blockers.push(Blocker {
                until: waiting.until.clone(),
                ..Blocker::new(
                    kind,
                    format!("{}: {}", waiting.bundle, waiting.reason),
                    waiting.action.clone(),
                    namespace,
                )
            });
            if seen.len() == 3 {
                break;
            }
        }
        x.blockers.extend(blockers);
        return;
    }
    x.state = State::Idle;
    if candidates.is_empty() {
        x.summary = "no Bundle from any admitted Beacon yet".into();
        x.blockers.push(Blocker::new(
            BlockerKind::NoBundles,
            "none of the Beacons this Gate admits has emitted a Bundle",
            Some(Remedy::CheckBeacons),
            namespace,
        ));
    } else {
        x.summary = "nothing to do: everything admitted is already in this Gate".into();
    }
}
