//! Whether a Passage is its Gate's own crossing: what the controller judges before it
//! runs a Passage's first step, and again before every later one.
//!
//! A Passage asks "cross this Gate with this Bundle by its rules", however it was made
//! — `hecate promote`, the Gate's own automatic crossing, the reference's CLI, or a
//! person with `create passages` and `kubectl`. Whoever may write a Passage may not
//! choose what it runs (docs/DECISIONS.md, "A Passage runs only its Gate's own
//! steps"):
//!
//! - **Before it starts**, it must carry exactly what its Gate's template gives — the
//!   steps and vars, compared as JSON values, and the labels the Gate finds its
//!   crossings by — and be a crossing promote would allow: the Gate's own obstacles,
//!   the Bundle's eligibility, one crossing at a time, and the windows as they were
//!   when it was asked for ([`judge_start`]).
//! - **Once started**, its record stands (a Gate edited later changes nothing), but only
//!   with the spec it started with: any change except an abort stops it
//!   ([`judge_resume`]).
//! - **Once finished**, a Gate counts it as its own crossing only if it still names that
//!   Gate and its spec is the one the controller finished ([`is_record_of`]).
//! - **Always**, before and while it runs, it must be a crossing the controller can
//!   record: no more steps than one crossing may run, and a spec that leaves room for
//!   its status ([`judge_size`]). The CRDs bound the steps, but a Passage written under
//!   an older or looser CRD (the reference's has no bound) may have any number.
//!
//! Pure, like every rule: the controller reads the Gate, the Bundle and the Gate's
//! Passages and passes in its own step check.

use std::cmp::Ordering;

use hecate_types::limits::{MAX_PASSAGE_BYTES, MAX_PASSAGE_STATUS_BYTES, MAX_STEPS};
use hecate_types::{Bundle, Gate, Passage, StepPhase, wellknown};
use jiff::Timestamp;
use kube::ResourceExt as _;

use super::gate::{self, gate_steps};
use super::promotion;
use super::refusal::{Refusal, RefusalCode};
use crate::model::{LeftBehind, Remedy};

/// Whether `passage` has started: its first step has been run (the engine writes
/// `status.startedAt` with the first step's outcome, and only the controller writes a
/// status).
pub fn started(passage: &Passage) -> bool {
    passage
        .status
        .as_ref()
        .is_some_and(|s| s.started_at.is_some())
}

/// The step that pushes a crossing's commit (hecate-steps' `GitPush::USES`; its
/// output, `{branch, sha, pushed}`, is documented in STEPS.md).
const GIT_PUSH: &str = "git-push";

/// What an aborted `passage` left behind: the commit its last `git-push` that
/// succeeded pushed (`pushed: true` in its recorded output), still on that branch —
/// an abort stops the steps after a push, not the push. `None` for a Passage that was
/// not aborted, or whose record shows no push.
pub fn left_behind(passage: &Passage) -> Option<LeftBehind> {
    let status = passage.status.as_ref()?;
    if status.phase != Some(hecate_types::PassagePhase::Aborted) {
        return None;
    }
    let output = status
        .steps
        .iter()
        .rev()
        .filter(|step| step.uses == GIT_PUSH && step.phase == StepPhase::Succeeded)
        .find_map(|step| step.output.as_ref())?;
    let text = |key: &str| {
        output
            .get(key)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if output.get("pushed").and_then(serde_json::Value::as_bool) != Some(true) {
        return None;
    }
    Some(LeftBehind {
        passage: passage.name_any(),
        bundle: passage.spec.bundle.clone(),
        branch: text("branch")?,
        commit: text("sha")?,
    })
}

/// Whether `passage` was asked to stop: aborted (`spec.abort`), or its deletion asked
/// for while something else's finalizer keeps it. Either ends it, running nothing more.
pub fn asked_to_stop(passage: &Passage) -> bool {
    passage.spec.abort || passage.metadata.deletion_timestamp.is_some()
}

/// Whether the controller can run `passage` and record what it does: at most
/// [`MAX_STEPS`] steps (one status entry each), and metadata and spec, as JSON, leaving
/// [`MAX_PASSAGE_STATUS_BYTES`] of the [`MAX_PASSAGE_BYTES`] a Passage is recorded in.
/// Judged before a Passage starts and before each later step, whoever made it.
pub fn judge_size(passage: &Passage) -> Result<(), Refusal> {
    let name = passage.name_any();
    let steps = passage.spec.steps.len();
    if steps > MAX_STEPS {
        return Err(Refusal::new(
            RefusalCode::TooManySteps,
            format!(
                "Passage {name} has {steps} steps, more than the {MAX_STEPS} one crossing may run and record, so none of them runs; a Gate may have at most {MAX_STEPS} steps: shorten Gate {}'s and promote again",
                passage.spec.gate
            ),
        ));
    }
    let room = MAX_PASSAGE_BYTES - MAX_PASSAGE_STATUS_BYTES;
    let bytes = spec_bytes(passage);
    if bytes > room {
        return Err(Refusal::new(
            RefusalCode::TooLarge,
            format!(
                "Passage {name} takes {bytes} bytes before its status, more than the {room} that leave room for one (a Passage is recorded in at most {MAX_PASSAGE_BYTES}), so none of its steps runs: make Gate {}'s steps smaller and promote again",
                passage.spec.gate
            ),
        ));
    }
    Ok(())
}

/// The size of `passage` without its status, in bytes of JSON, as the controller writes
/// it (the API server's own field bookkeeping aside).
fn spec_bytes(passage: &Passage) -> usize {
    let mut bare = passage.clone();
    bare.status = None;
    bare.metadata.managed_fields = None;
    serde_json::to_vec(&bare).map_or(usize::MAX, |json| json.len())
}

/// Why `passage` stops when the API server would not store its status (`why`, in its
/// words) after a step ran: the step's outcome cannot be recorded, and running it again
/// would repeat what it did, so the crossing ends here.
pub fn unrecordable(passage: &Passage, why: &str) -> Refusal {
    Refusal::new(
        RefusalCode::TooLarge,
        format!(
            "Passage {}'s status could not be recorded ({why}), so it stops here, before another step runs; what its last step did may be missing from the record",
            passage.name_any()
        ),
    )
}

/// Whether `passage`, not yet started, may start now: `gate` is the Gate its
/// `spec.gate` names in its namespace (`None`: there is none), `bundle` its Bundle,
/// `passages` the Gate's Passages (any order; `passage` itself among them or not).
/// What the Gate names is judged by [`gate::obstacle`] (the catalogue's checks).
/// Windows are judged at the
/// Passage's `creationTimestamp` — when the API server says it was asked for, as
/// promote and the Gate judged them — else at `now`.
///
/// The checks, first refusal wins: its size ([`judge_size`]); the Gate exists; the
/// Passage is what its template makes ([`judge_made_from`]); then promote's rules
/// ([`promotion::judge_crossing`]),
/// with the Passage's actor as the promoter (an approval they gave themselves does not
/// count) and, as "already crossing", only the other crossings that come first
/// ([`comes_first`]).
pub fn judge_start(
    passage: &Passage,
    gate: Option<&Gate>,
    bundle: &Bundle,
    passages: &[&Passage],
    now: Timestamp,
) -> Result<(), Refusal> {
    judge_size(passage)?;
    let Some(gate) = gate else {
        return Err(Refusal::new(
            RefusalCode::NoGate,
            format!(
                "Passage {} names Gate {}, and there is no Gate by that name in {}; none of its steps ran",
                passage.name_any(),
                passage.spec.gate,
                passage.namespace().unwrap_or_default()
            ),
        ));
    };
    judge_made_from(passage, gate)?;
    let ahead: Vec<&Passage> = passages
        .iter()
        .copied()
        .filter(|other| comes_first(other, passage))
        .collect();
    let asked_at = passage
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |t| t.0);
    let actor = passage.spec.actor.as_str();
    let obstacle = gate::obstacle(gate);
    promotion::judge_crossing(
        gate,
        obstacle,
        bundle,
        &ahead,
        (!actor.is_empty()).then_some(actor),
        promotion::CrossingKind::of(passage),
        asked_at,
    )
}

/// Whether `passage` is what `gate`'s template makes of a crossing ([`promotion::new_passage`]):
/// the same steps and vars as the Gate has now, compared as JSON values (so key order,
/// and a default written out or left out, make no difference), and labels naming the
/// Gate and the Bundle its spec names (the Gate finds its crossings by label).
///
/// A Passage whose steps or vars differ is `GateChanged` when it says it was made from
/// an earlier generation of the Gate (`hecate.dev/gate-generation`, which promote and
/// the Gate write), else `NotGateTemplate`; either way nothing of it runs, and the
/// remedy is to promote (again).
pub fn judge_made_from(passage: &Passage, gate: &Gate) -> Result<(), Refusal> {
    let name = passage.name_any();
    let gate_name = gate.name_any();
    let labels = passage.labels();
    let label = |key: &str| labels.get(key).map(String::as_str).unwrap_or_default();
    let (label_gate, label_bundle) = (label(wellknown::LABEL_GATE), label(wellknown::LABEL_BUNDLE));
    if passage.spec.gate != gate_name
        || label_gate != passage.spec.gate
        || label_bundle != passage.spec.bundle
    {
        return Err(Refusal::new(
            RefusalCode::NotGateTemplate,
            format!(
                "Passage {name} is labelled for Gate {label_gate:?} and Bundle {label_bundle:?} but crosses Gate {} with Bundle {}: a Gate finds its crossings by these labels, so they must agree; none of its steps ran",
                passage.spec.gate, passage.spec.bundle
            ),
        ));
    }
    let Some(difference) = difference(passage, gate) else {
        return Ok(());
    };
    let fix = Remedy::Promote {
        gate: gate_name.clone(),
        bundle: passage.spec.bundle.clone(),
    }
    .fix(&passage.namespace().unwrap_or_default());
    let made_from = passage
        .annotations()
        .get(wellknown::ANNOTATION_GATE_GENERATION)
        .and_then(|g| g.parse::<i64>().ok());
    match (made_from, gate.metadata.generation) {
        (Some(then), Some(now)) if then < now => Err(Refusal::new(
            RefusalCode::GateChanged,
            format!(
                "Gate {gate_name} changed after Passage {name} was asked for (generation {then}, now {now}): {difference}, so none of its steps ran. Promote again to cross with the Gate as it is: {fix}"
            ),
        )),
        _ => Err(Refusal::new(
            RefusalCode::NotGateTemplate,
            format!(
                "Passage {name} does not carry Gate {gate_name}'s own template: {difference}. A Passage runs only its Gate's steps, so none of its steps ran. To cross {gate_name}, promote: {fix}"
            ),
        )),
    }
}

/// How `passage` differs from `gate`'s template, in words; `None` when it does not.
fn difference(passage: &Passage, gate: &Gate) -> Option<String> {
    let ours = gate_steps(gate);
    let theirs = &passage.spec.steps;
    if json(theirs) != json(ours) {
        if theirs.len() != ours.len() {
            return Some(format!(
                "it has {} steps where the Gate has {}",
                theirs.len(),
                ours.len()
            ));
        }
        let i = theirs
            .iter()
            .zip(ours)
            .position(|(a, b)| json(a) != json(b))
            .unwrap_or_default();
        return Some(format!(
            "its steps[{i}] ({}) is not the Gate's steps[{i}] ({})",
            theirs[i].uses, ours[i].uses
        ));
    }
    (json(&passage.spec.vars) != json(&gate.spec.vars))
        .then(|| "its vars are not the Gate's".to_string())
}

/// A value as JSON: the canonical form two copies of a template are compared in.
fn json(value: &(impl serde::Serialize + ?Sized)) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_default()
}

/// Whether `other` comes before `passage` among its Gate's crossings: another
/// non-terminal Passage that has started, or that was created first (by
/// `creationTimestamp`, which the API server sets, then by name). Of two asked for at
/// once the first goes ahead and the second is refused as already crossing — never
/// both; and a Passage that will be refused itself still holds a later one back, as an
/// active crossing holds back promote.
pub fn comes_first(other: &Passage, passage: &Passage) -> bool {
    if other.name_any() == passage.name_any() || other.is_terminal() {
        return false;
    }
    if started(other) {
        return true;
    }
    let created = |p: &Passage| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
    match created(other).cmp(&created(passage)) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => other.name_any() < passage.name_any(),
    }
}

/// Whether `passage`, started, may go on: its spec must be the one it started with
/// — the controller wrote `status.observedGeneration` with every step it ran, and any
/// change of the spec moves `metadata.generation` — unless it was asked to stop
/// ([`asked_to_stop`]: an abort, or its deletion, which moves the generation too), which
/// always goes through (it runs nothing); and it must still be recordable
/// ([`judge_size`]). Steps that already ran stand.
pub fn judge_resume(passage: &Passage) -> Result<(), Refusal> {
    if asked_to_stop(passage) {
        return Ok(());
    }
    judge_size(passage)?;
    let observed = passage.status.as_ref().map_or(0, |s| s.observed_generation);
    let generation = passage.metadata.generation.unwrap_or_default();
    if observed == generation || asks_of_its_rollout(passage) {
        return Ok(());
    }
    Err(Refusal::new(
        RefusalCode::SpecChanged,
        format!(
            "Passage {}'s spec changed after it started (generation {observed}, now {generation}): only an abort may change a crossing under way, so it stops here; the steps that ran stand",
            passage.name_any()
        ),
    ))
}

/// Whether the spec of `passage`, a rollout under way, changed only in what people
/// may ask of it (`spec.rollout`'s requests, DECISION 157): the crossing its record
/// keeps is the one the spec still asks for.
fn asks_of_its_rollout(passage: &Passage) -> bool {
    passage
        .status
        .as_ref()
        .and_then(|s| s.rollout.as_ref())
        .is_some_and(|r| !r.crossing.is_empty() && r.crossing == passage.spec.crossing_digest())
}

/// What a refused Passage's `status.message` says: the stable code, then why.
pub fn refused_message(refusal: &Refusal) -> String {
    format!("refused ({}): {}", refusal.code, refusal.reason)
}

/// Whether the finished `passage` is a crossing of Gate `gate` the Gate may record: it
/// names that Gate in its spec as well as its label (labels are metadata, which anyone
/// who may patch a Passage — a promoter, to abort — may change), and its spec is the
/// one its last status was written for (a spec patched after it finished moves
/// `metadata.generation` past `status.observedGeneration`; a status written by hand
/// without one is taken as it is). A crossing of some of the Gate's targets
/// (DECISION 163) is never one: it brings those targets back to, or up to, what the
/// Gate holds without changing it.
pub fn is_record_of(passage: &Passage, gate: &str) -> bool {
    let observed = passage.status.as_ref().map_or(0, |s| s.observed_generation);
    passage.spec.gate == gate
        && !passage.spec.is_partial()
        && passage
            .labels()
            .get(wellknown::LABEL_GATE)
            .map(String::as_str)
            == Some(gate)
        && (observed == 0 || Some(observed) == passage.metadata.generation)
}
