//! What waits on a person: the Overview's list of things to act on (DECISION 141).
//!
//! Explain already judges each Gate; this reads its answer for what only a person can
//! settle — an approval, a rejection to withdraw, a failure to look at or roll back —
//! and adds the one judgement Explain does not make: whether a crossing has run too
//! long. That one depends on the clock, so it is split in two: [`Pending`] gathers,
//! once per namespace version, what the answer follows from; [`Pending::at`] decides at
//! a given instant, cheaply, for every Overview served.

use std::collections::HashMap;

use hecate_types::{Bundle, Gate, Passage, PassagePhase, Time, VerificationPhase, duration};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;

use super::eligibility::{self, Code, created_at};
use super::snapshot::NamespaceSnapshot;
use super::version;
use super::window::length;
use crate::model::{Attention, AttentionKind, BlockerKind, Explanation, Remedy};

/// How many of a Gate's finished crossings its usual time is taken from.
const USUAL_OF: usize = 10;
/// How many finished crossings it takes before a Gate has a usual time.
const USUAL_FROM: usize = 3;
/// With no usual time to compare with, a crossing running this long is too long.
const LONG_WITHOUT_HISTORY: SignedDuration = SignedDuration::from_mins(10);
/// A crossing is too long when it has run more than twice its usual time and at
/// least this much more: a one-second crossing taking three seconds is not news.
const SLACK: SignedDuration = SignedDuration::from_mins(1);

/// A namespace's things to act on that do not depend on the clock, and its running
/// crossings, which are judged at the instant an Overview is asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pending {
    settled: Vec<Attention>,
    running: Vec<Running>,
}

/// A crossing in progress, with what tells whether it runs too long.
#[derive(Clone, Debug, PartialEq)]
struct Running {
    namespace: String,
    gate: String,
    bundle: String,
    passage: String,
    started: Timestamp,
    /// The median of the Gate's recent successful crossings, when it has enough.
    usual: Option<SignedDuration>,
    /// The step in progress, its timeout in words, and when that runs out.
    deadline: Option<(String, String, Timestamp)>,
}

impl Pending {
    /// What in `snapshot` waits on a person, its Gates explained by `explained`.
    pub fn gather<'a>(
        snapshot: &'a NamespaceSnapshot,
        explained: impl IntoIterator<Item = (&'a Gate, &'a Explanation)>,
    ) -> Self {
        let namespace = snapshot.namespace();
        let bundles: HashMap<&str, &Bundle> = snapshot
            .bundles()
            .filter_map(|b| Some((b.metadata.name.as_deref()?, b)))
            .collect();
        let mut settled = Vec::new();
        let mut running = Vec::new();
        for (gate, explanation) in explained {
            let name = gate.name_any();
            for blocker in &explanation.blockers {
                if !matches!(
                    blocker.kind,
                    BlockerKind::PassageFailed | BlockerKind::VerificationFailed
                ) {
                    continue;
                }
                let passage = failed_passage(snapshot, &name, blocker.kind);
                settled.push(Attention {
                    kind: AttentionKind::Failed,
                    namespace: namespace.to_string(),
                    gate: name.clone(),
                    bundle: passage.map(|p| p.spec.bundle.clone()),
                    passage: passage.map(|p| p.name_any()),
                    since: passage.and_then(|p| failed_at(p, blocker.kind)),
                    detail: blocker.detail.clone(),
                    action: blocker.action.clone(),
                    due: None,
                });
            }
            settled.extend(scheduled(namespace, gate, explanation, &bundles));
            let current = explanation
                .current
                .as_deref()
                .and_then(|c| bundles.get(c).copied());
            settled.extend(people_wait(namespace, gate, explanation, &bundles, current));
            if let Some(passage) = snapshot.passages_of(&name).find(|p| !p.is_terminal()) {
                running.extend(Running::of(namespace, snapshot, passage));
            }
        }
        Self { settled, running }
    }

    /// Everything that waits on a person at `now`, most pressing first.
    pub fn at(&self, now: Timestamp) -> impl Iterator<Item = Attention> + '_ {
        self.settled
            .iter()
            .cloned()
            .chain(self.running.iter().filter_map(move |r| r.too_long(now)))
    }
}

/// Orders a list gathered from several namespaces: most pressing kind first, then the
/// oldest first (it has waited longest).
pub fn sort(attention: &mut [Attention]) {
    attention.sort_by(|a, b| {
        (a.kind, a.since.as_ref().map(|t| t.0), &a.namespace, &a.gate).cmp(&(
            b.kind,
            b.since.as_ref().map(|t| t.0),
            &b.namespace,
            &b.gate,
        ))
    });
}

/// The approval and the withdrawal a Gate's newest waiting Bundle needs, if any: only
/// Bundles ahead of what the Gate runs (older ones are there to roll back to, not
/// waiting on anyone).
fn people_wait(
    namespace: &str,
    gate_object: &Gate,
    explanation: &Explanation,
    bundles: &HashMap<&str, &Bundle>,
    current: Option<&Bundle>,
) -> Vec<Attention> {
    let gate = gate_object.metadata.name.as_deref().unwrap_or_default();
    let mut out: Vec<Attention> = Vec::new();
    for waiting in &explanation.waiting {
        let kind = match waiting.kind {
            Some(Code::AwaitingApproval) => AttentionKind::Approval,
            Some(Code::Rejected) => AttentionKind::Rejected,
            _ => continue,
        };
        if out.iter().any(|a| a.kind == kind) {
            continue;
        }
        let Some(bundle) = bundles.get(waiting.bundle.as_str()).copied() else {
            continue;
        };
        if !eligibility::is_ahead(bundle, current) {
            continue;
        }
        // Named by its version, as people know it (DECISION 140); `bundle` names it.
        let named = version::of(bundle);
        let named = if named.is_empty() {
            waiting.bundle.as_str()
        } else {
            named.as_str()
        };
        let detail = match &waiting.action {
            Some(Remedy::Approve { from, .. }) if !from.is_empty() => format!(
                "{named}: {}; an approval from {} would count",
                waiting.reason,
                from.join(" or ")
            ),
            Some(Remedy::WithdrawRejection { by, .. }) if !by.is_empty() => format!(
                "{named}: {}; {} may withdraw it",
                waiting.reason,
                by.join(" or ")
            ),
            _ => format!("{named}: {}", waiting.reason),
        };
        out.push(Attention {
            kind,
            namespace: namespace.to_string(),
            gate: gate.to_string(),
            bundle: Some(waiting.bundle.clone()),
            passage: None,
            since: waiting_since(bundle, gate_object).map(Time),
            detail,
            action: waiting.action.clone(),
            due: None,
        });
    }
    out
}

/// Since when `bundle` has waited at `gate`: once it cleared the last of the Gates
/// upstream of it (when the Gate has any), else since it was emitted — not since its
/// emission when it spent days upstream.
fn waiting_since(bundle: &Bundle, gate: &Gate) -> Option<Timestamp> {
    let upstream: Vec<&str> = gate
        .spec
        .admits
        .iter()
        .flat_map(|a| a.after.iter().map(String::as_str))
        .collect();
    let cleared = bundle
        .status
        .iter()
        .flat_map(|s| s.cleared.iter())
        .filter(|c| upstream.contains(&c.gate.as_str()))
        .map(|c| c.at.0)
        .max();
    created_at(bundle).into_iter().chain(cleared).max()
}

/// The Bundle an automatic Gate takes by itself once its window opens, when nothing
/// but the window holds it: Explain's `WindowClosed` over its newest eligible Bundle.
fn scheduled(
    namespace: &str,
    gate: &Gate,
    explanation: &Explanation,
    bundles: &HashMap<&str, &Bundle>,
) -> Option<Attention> {
    if !gate.spec.auto {
        return None;
    }
    let window = explanation
        .blockers
        .iter()
        .find(|b| b.kind == BlockerKind::WindowClosed)?;
    let newest = explanation.eligible.first()?;
    let named = bundles
        .get(newest.as_str())
        .map(|b| version::of(b))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| newest.clone());
    Some(Attention {
        kind: AttentionKind::Scheduled,
        namespace: namespace.to_string(),
        gate: gate.name_any(),
        bundle: Some(newest.clone()),
        passage: None,
        since: None,
        detail: format!(
            "{named}: crosses by itself, unattended, once the window lets it: {}",
            window.detail
        ),
        action: None,
        due: window.until.clone(),
    })
}

/// The Passage a failure blocker is about: the Gate's newest, which failed or whose
/// verification said no.
fn failed_passage<'a>(
    snapshot: &'a NamespaceSnapshot,
    gate: &str,
    kind: BlockerKind,
) -> Option<&'a Passage> {
    snapshot.passages_of(gate).find(|p| match kind {
        BlockerKind::VerificationFailed => verification_failed(p).is_some(),
        _ => p.phase() == PassagePhase::Failed,
    })
}

fn verification_failed(passage: &Passage) -> Option<&hecate_types::VerificationStatus> {
    passage
        .status
        .as_ref()?
        .verification
        .as_ref()
        .filter(|v| v.phase == VerificationPhase::Failed)
}

/// When the failure happened: the crossing's end, or the verification's "no".
fn failed_at(passage: &Passage, kind: BlockerKind) -> Option<Time> {
    match kind {
        BlockerKind::VerificationFailed => verification_failed(passage)?.finished_at.clone(),
        _ => passage.status.as_ref()?.finished_at.clone(),
    }
}

impl Running {
    fn of(namespace: &str, snapshot: &NamespaceSnapshot, passage: &Passage) -> Option<Self> {
        let status = passage.status.as_ref()?;
        let started = status.started_at.as_ref()?.0;
        let mut finished: Vec<SignedDuration> = snapshot
            .passages_of(&passage.spec.gate)
            .filter(|p| p.phase() == PassagePhase::Succeeded)
            .filter_map(|p| {
                let s = p.status.as_ref()?;
                Some(
                    s.finished_at
                        .as_ref()?
                        .0
                        .duration_since(s.started_at.as_ref()?.0),
                )
            })
            .take(USUAL_OF)
            .collect();
        finished.sort_unstable();
        let usual = (finished.len() >= USUAL_FROM).then(|| finished[finished.len() / 2]);
        Some(Self {
            namespace: namespace.to_string(),
            gate: passage.spec.gate.clone(),
            bundle: passage.spec.bundle.clone(),
            passage: passage.name_any(),
            started,
            usual,
            deadline: deadline(passage),
        })
    }

    /// Whether, at `now`, this crossing has run past its step's timeout or far longer
    /// than usual — and if so, saying so.
    fn too_long(&self, now: Timestamp) -> Option<Attention> {
        let ran = now.duration_since(self.started);
        let detail = match (&self.deadline, self.usual) {
            (Some((step, timeout, at)), _) if now > *at => format!(
                "{} has run {}; its step {step} is past its timeout of {timeout}",
                self.passage,
                length(ran)
            ),
            (_, Some(usual)) if ran > usual * 2 + SLACK => format!(
                "{} has run {}; crossings of {} usually take {}",
                self.passage,
                length(ran),
                self.gate,
                length(usual)
            ),
            (_, None) if ran > LONG_WITHOUT_HISTORY => format!(
                "{} has run {}, with no finished crossing of {} to compare it with",
                self.passage,
                length(ran),
                self.gate
            ),
            _ => return None,
        };
        Some(Attention {
            kind: AttentionKind::Slow,
            namespace: self.namespace.clone(),
            gate: self.gate.clone(),
            bundle: Some(self.bundle.clone()),
            passage: Some(self.passage.clone()),
            since: Some(Time(self.started)),
            detail,
            action: Some(Remedy::InspectPassage {
                passage: self.passage.clone(),
            }),
            due: None,
        })
    }
}

/// The step in progress, its timeout as written, and when it runs out: the step's own
/// `timeout`, else a `timeout` in its `with` (as `flux-wait` takes one).
fn deadline(passage: &Passage) -> Option<(String, String, Timestamp)> {
    let status = passage.status.as_ref()?;
    let index = usize::try_from(status.current_step).ok()?;
    let step = passage.spec.steps.get(index)?;
    let started = status.steps.get(index)?.started_at.as_ref()?.0;
    let written = if step.timeout.is_empty() {
        step.with.as_ref()?.get("timeout")?.as_str()?.to_string()
    } else {
        step.timeout.clone()
    };
    let timeout = duration::parse(&written).ok()?;
    let name = if step.alias.is_empty() {
        step.uses.clone()
    } else {
        format!("{} ({})", step.alias, step.uses)
    };
    Some((name, written, started.checked_add(timeout).ok()?))
}
