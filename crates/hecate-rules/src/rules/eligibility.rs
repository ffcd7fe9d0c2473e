//! Whether a Bundle may cross a Gate: admission, upstream clearance, approval.
//!
//! One pure function, [`evaluate`], is the single source of truth: Explain, Promote
//! and (later) the controller all judge through it. It deliberately ignores
//! everything else a caller may also care about — suspension, steps, windows, an
//! active Passage, earlier failures, health — so that each caller adds exactly the
//! checks its situation needs (spec §2.6).

use std::cmp::Ordering;

use hecate_types::{Bundle, Gate, wellknown};
use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::approval::{self, Asked};
use crate::model::ApprovalProgress;

/// Why a Bundle may not cross a Gate. Stable strings: surfaces and scripts branch on
/// them.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum Code {
    /// It is the Gate's current occupant already.
    AlreadyCurrent,
    /// It has not cleared every Gate its admission lists in `after`.
    UpstreamNotCleared,
    /// The admission requires an approval for this Gate and there is none — or, under
    /// an approval policy, not yet the approvals the policy asks for.
    AwaitingApproval,
    /// The only approval for this Gate was given by the person now asking to promote
    /// it. Someone else must approve: an approval a promoter can grant themselves is
    /// not an approval. (Under a policy: it would hold, but for the promoter's own.)
    SelfApproved,
    /// Someone said no to it for this Gate, and the "no" stands.
    Rejected,
}

impl Code {
    /// The code as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AlreadyCurrent => "AlreadyCurrent",
            Self::UpstreamNotCleared => "UpstreamNotCleared",
            Self::AwaitingApproval => "AwaitingApproval",
            Self::SelfApproved => "SelfApproved",
            Self::Rejected => "Rejected",
        }
    }
}

/// A Bundle the Gate admits, and whether it may cross.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate<'a> {
    /// The Bundle.
    pub bundle: &'a Bundle,
    /// `None` when it may cross; otherwise why not.
    pub blocked: Option<Ineligible>,
}

/// Why a candidate may not cross.
#[derive(Clone, Debug, PartialEq)]
pub struct Ineligible {
    /// The stable code.
    pub code: Code,
    /// The reason in words, short enough for a table cell.
    pub reason: String,
    /// Where its approvals stand, when approvals (or a rejection) are what hold it.
    pub approvals: Option<ApprovalProgress>,
}

impl Ineligible {
    fn new(code: Code, reason: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
            approvals: None,
        }
    }
}

impl Candidate<'_> {
    /// Whether the Bundle may cross.
    pub fn is_eligible(&self) -> bool {
        self.blocked.is_none()
    }
}

/// The Beacons whose Bundles `gate` admits, by name. [`evaluate`] judges no other
/// Bundle (nor, through it, does Explain), so a reader may fetch only Bundles whose
/// `spec.beacon` is one of these and get the same answer.
pub fn admitted_beacons(gate: &Gate) -> std::collections::BTreeSet<&str> {
    gate.spec
        .admits
        .iter()
        .map(|admission| admission.from.beacon.as_str())
        .collect()
}

/// Judges every Bundle the Gate admits, in input order. Bundles from Beacons the Gate
/// does not admit are left out altogether (they are not "ineligible").
///
/// `promoter`, when given, is who is asking for the crossing: an approval recorded by
/// that same person does not count. Without one (Explain, the controller) every
/// approval for the Gate counts that the admission's policy counts at `now` (an
/// approval policy's approvals may expire; [`approval::judge`]).
pub fn evaluate<'a>(
    gate: &Gate,
    bundles: impl IntoIterator<Item = &'a Bundle>,
    promoter: Option<&str>,
    now: Timestamp,
) -> Vec<Candidate<'a>> {
    bundles
        .into_iter()
        .filter_map(|bundle| {
            let admission = gate.admission_for(&bundle.spec.beacon)?;
            Some(Candidate {
                bundle,
                blocked: judge(gate, admission, bundle, promoter, now),
            })
        })
        .collect()
}

/// The rules in order; the first that fails decides.
fn judge(
    gate: &Gate,
    admission: &hecate_types::Admission,
    bundle: &Bundle,
    promoter: Option<&str>,
    now: Timestamp,
) -> Option<Ineligible> {
    let gate_name = gate.metadata.name.as_deref().unwrap_or_default();
    if gate.current_bundle().is_some() && gate.current_bundle() == bundle.metadata.name.as_deref() {
        return Some(Ineligible::new(
            Code::AlreadyCurrent,
            "already in this Gate",
        ));
    }
    let missing: Vec<&str> = admission
        .after
        .iter()
        .filter(|upstream| !bundle.has_cleared(upstream))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        // A crossing whose verification said no is said as such: the Bundle will never
        // clear that Gate, where one not cleared yet may (DECISION 139). The code stays
        // the reference's.
        let reason = match missing
            .iter()
            .find_map(|upstream| bundle.failed_verification(upstream))
        {
            Some(failed) => format!("not verified in {}: {}", failed.gate, failed.reason),
            None => format!("has not cleared {}", missing.join(", ")),
        };
        return Some(Ineligible::new(Code::UpstreamNotCleared, reason));
    }
    let asked = Asked::of(admission);
    let progress = approval::judge(asked, gate_name, bundle, promoter, now)?;
    if progress.satisfied {
        return None;
    }
    let (code, reason) = if let Some(rejected) = &progress.rejected {
        (
            Code::Rejected,
            format!("rejected by {}: {}", rejected.by, rejected.reason),
        )
    } else if promoter.is_some()
        && approval::judge(asked, gate_name, bundle, None, now).is_some_and(|p| p.satisfied)
    {
        let reason = match asked {
            // The reference's one approval, given by the one now asking.
            Asked::One => format!(
                "approved only by {}, who cannot also promote it",
                promoter.unwrap_or_default()
            ),
            _ => format!(
                "{} approved it and cannot also promote it ({})",
                promoter.unwrap_or_default(),
                progress.summary
            ),
        };
        (Code::SelfApproved, reason)
    } else {
        let reason = match asked {
            Asked::One => "awaiting approval".to_string(),
            _ => format!("awaiting approval: {}", progress.summary),
        };
        (Code::AwaitingApproval, reason)
    };
    Some(Ineligible {
        code,
        reason,
        approvals: Some(progress),
    })
}

/// The eligible candidates' Bundles, newest first (ties by name).
pub fn eligible<'a>(candidates: &[Candidate<'a>]) -> Vec<&'a Bundle> {
    let mut eligible: Vec<&Bundle> = candidates
        .iter()
        .filter(|c| c.is_eligible())
        .map(|c| c.bundle)
        .collect();
    eligible.sort_by(|a, b| newest_first(*a, *b));
    eligible
}

/// The eligible Bundles of a Gate as people are told of them (issue 51): those that
/// would move it forward, and those only a rollback would take. Every count a
/// surface or the Gate's condition gives is one of these, never `eligible` whole.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Queue<'a> {
    /// Eligible and newer than the current occupant ([`is_ahead`]), newest first:
    /// what could cross as new work.
    pub ahead: Vec<&'a Bundle>,
    /// Eligible and not newer: what the Gate "could be rolled back to".
    pub older: Vec<&'a Bundle>,
}

impl<'a> Queue<'a> {
    /// The eligible `candidates`, split by the Gate's `current` occupant.
    pub fn of(candidates: &[Candidate<'a>], current: Option<&Bundle>) -> Self {
        let (ahead, older) = eligible(candidates)
            .into_iter()
            .partition(|bundle| is_ahead(bundle, current));
        Self { ahead, older }
    }

    /// The newest Bundle ahead when a crossing of it already failed here (or its
    /// verification said no here): what a person is told instead of "ready to
    /// cross" — automation never retries it, and a person retries it knowingly.
    pub fn failed_here(&self, gate: &str) -> Option<&'a Bundle> {
        self.ahead
            .first()
            .copied()
            .filter(|newest| failed_here(newest, gate))
    }
}

/// Whether a crossing of `bundle` through `gate` failed, or its verification said no.
pub fn failed_here(bundle: &Bundle, gate: &str) -> bool {
    bundle.was_blocked_by(gate) || bundle.failed_verification(gate).is_some()
}

/// What an automatic Gate does next, or why it does nothing: the one judgement the
/// controller acts on and Explain describes.
#[derive(Clone, Debug, PartialEq)]
pub enum AutoNext<'a> {
    /// Cross this Bundle: the newest eligible, newer than the current occupant.
    Cross(&'a Bundle),
    /// The newest eligible Bundle is newer than the current occupant, but a crossing
    /// of it already failed here: automatic crossings never retry a failure.
    FailedHere(&'a Bundle),
    /// No eligible Bundle is newer than the current occupant (automatic crossings
    /// only move forward; older ones may be rolled back to by hand).
    NothingNewer {
        /// What keeps the newer Bundles out, when there are any.
        held_back: Option<String>,
    },
    /// No Bundle is eligible.
    NoneEligible,
}

/// What an automatic Gate does next ([`AutoNext`]). A failure here matters only for a
/// Bundle the Gate would otherwise take: an older Bundle that failed once is history,
/// not a reason to call the Gate failed.
pub fn auto_next<'a>(
    gate_name: &str,
    candidates: &[Candidate<'a>],
    current: Option<&Bundle>,
) -> AutoNext<'a> {
    let Some(newest) = eligible(candidates).first().copied() else {
        return AutoNext::NoneEligible;
    };
    if !is_ahead(newest, current) {
        let newer: Vec<Candidate<'a>> = candidates
            .iter()
            .filter(|c| is_ahead(c.bundle, current))
            .cloned()
            .collect();
        return AutoNext::NothingNewer {
            held_back: held_back(&newer),
        };
    }
    // A crossing that failed here, or whose verification said no, is never retried by
    // automation: after a rollback, the Bundle it undid stays undone.
    if failed_here(newest, gate_name) {
        return AutoNext::FailedHere(newest);
    }
    AutoNext::Cross(newest)
}

/// Whether `bundle` is ahead of the Gate's `current` occupant: created after it
/// ([`created_at`]), or the Gate holds nothing. Only a Bundle ahead is one the Gate
/// moves forward to — automatically ([`auto_next`]) or as what "waiting to cross"
/// counts; an eligible Bundle that is not ahead is one to roll back to by hand.
pub fn is_ahead(bundle: &Bundle, current: Option<&Bundle>) -> bool {
    current.is_none_or(|current| created_at(bundle) > created_at(current))
}

/// The Bundle an automatic Gate crosses next, if any ([`auto_next`]).
pub fn next_auto<'a>(
    gate_name: &str,
    candidates: &[Candidate<'a>],
    current: Option<&Bundle>,
) -> Option<&'a Bundle> {
    match auto_next(gate_name, candidates, current) {
        AutoNext::Cross(next) => Some(next),
        _ => None,
    }
}

/// Newest first by creation time ([`created_at`]); equal times by name ascending, so
/// the order is the same on every call.
pub fn newest_first<K: kube::Resource>(a: &K, b: &K) -> Ordering {
    created_at(b)
        .cmp(&created_at(a))
        .then_with(|| a.meta().name.cmp(&b.meta().name))
}

/// Passages newest first by when they started — one not started yet by when it was
/// created, since it will start after every started one —, then by creation, then by
/// name. Creation alone misorders Passages made together (restored from a backup,
/// imported, written by a test) whose starts tell them apart.
pub fn passages_newest_first(a: &hecate_types::Passage, b: &hecate_types::Passage) -> Ordering {
    let start = |p: &hecate_types::Passage| {
        p.status
            .as_ref()
            .and_then(|s| s.started_at.as_ref())
            .map(|t| t.0)
            .or_else(|| created_at(p))
    };
    start(b).cmp(&start(a)).then_with(|| newest_first(a, b))
}

/// When an object was created, as precisely as known: its writer's
/// `hecate.dev/created-at` annotation (nanoseconds), else `creationTimestamp` (whole
/// seconds: two Bundles a Beacon emits within one second would otherwise tie, and the
/// newer one never cross by itself).
pub fn created_at<K: kube::Resource>(object: &K) -> Option<jiff::Timestamp> {
    let meta = object.meta();
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(wellknown::ANNOTATION_CREATED_AT))
        .and_then(|text| text.parse().ok())
        .or_else(|| meta.creation_timestamp.as_ref().map(|t| t.0))
}

/// The annotations that record `at` as an object's creation time.
pub fn created_annotation(at: jiff::Timestamp) -> std::collections::BTreeMap<String, String> {
    std::collections::BTreeMap::from([(
        wellknown::ANNOTATION_CREATED_AT.to_string(),
        at.to_string(),
    )])
}

/// Every reason that holds `candidates` back, commonest first, each with how many it
/// holds when there is more than one Bundle (`awaiting approval (1), has not cleared
/// staging (2)`); `None` for no candidates.
fn held_back(candidates: &[Candidate<'_>]) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for reason in candidates
        .iter()
        .filter_map(|c| c.blocked.as_ref().map(|why| why.reason.as_str()))
    {
        match counts.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => counts.push((reason, 1)),
        }
    }
    // Stable: equally common reasons keep the order they were met in.
    counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    match counts.as_slice() {
        [] => None,
        [(reason, _)] if candidates.len() == 1 => Some(reason.to_string()),
        _ => Some(
            counts
                .iter()
                .map(|(reason, n)| format!("{reason} ({n})"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    }
}

/// What a Gate with nothing eligible is waiting on, in words: that no admitted Beacon
/// has emitted a Bundle, or the commonest reason among the candidates, with how many
/// it holds back when that is not all of them (`awaiting approval (2 of 3 Bundles)`).
/// `None` when something is eligible. Equally common reasons: the first met wins.
pub fn waiting_on(candidates: &[Candidate<'_>]) -> Option<String> {
    if candidates.is_empty() {
        return Some("no Bundles from any admitted Beacon".into());
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for candidate in candidates {
        let reason = candidate.blocked.as_ref()?.reason.as_str();
        match counts.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => counts.push((reason, 1)),
        }
    }
    let (reason, n) = counts
        .iter()
        .fold(counts[0], |best, &c| if c.1 > best.1 { c } else { best });
    Some(if n == candidates.len() {
        reason.to_string()
    } else {
        format!("{reason} ({n} of {} Bundles)", candidates.len())
    })
}
