//! Promote's judgement: may this person start this crossing now, and the Passage that
//! would record it — asked before the click too ([`your_crossings`]).
//!
//! A crossing requested by hand is judged by the same eligibility and windows as an
//! automatic one, plus what only a request needs (an actor, one crossing at a time);
//! it may retry a failed crossing or roll back to an older Bundle, which the controller
//! never does by itself.

use std::collections::{BTreeMap, HashMap};

use hecate_types::{Bundle, Gate, Passage, PassageSpec, wellknown};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt as _;

use super::gate::{self, Obstacle};
use super::refusal::{Refusal, RefusalCode};
use super::snapshot::NamespaceSnapshot;
use super::window;
use super::{actions, eligibility};
use crate::model::{Person, YourCrossing, YourCrossings};

/// Whether `actor` may start a crossing of `bundle` through `gate` at `now`, given
/// the Gate's Passages (any order). The checks run in the reference's order, so the
/// first reason a person hits is the one every implementation gives.
pub fn judge(
    gate: &Gate,
    bundle: &Bundle,
    passages: &[&Passage],
    actor: &str,
    kind: CrossingKind,
    now: Timestamp,
) -> Result<(), Refusal> {
    actions::judge_actor(actor, "a crossing")?;
    judge_crossing(
        gate,
        gate::obstacle(gate),
        bundle,
        passages,
        Some(actor),
        kind,
        now,
    )
}

/// What `person` would meet if they promoted each of `eligible` — the Bundles the
/// Gate's explanation lists as eligible, in its order — through `gate` at `now`: each
/// judged by [`judge`] itself, over the Gate's Passages in `snapshot`, so a page that
/// disables a Cross button and the promote it would send can never disagree. What
/// differs from one person to another is their own approval, which never counts for
/// them (`SelfApproved`, DECISION 137); the rest is what promote refuses anyone.
pub fn your_crossings(
    snapshot: &NamespaceSnapshot,
    gate: &Gate,
    eligible: &[String],
    person: &Person,
    now: Timestamp,
) -> YourCrossings {
    let gate_name = gate.name_any();
    let passages: Vec<&Passage> = snapshot.passages_of(&gate_name).collect();
    let bundles: HashMap<&str, &Bundle> = snapshot
        .bundles()
        .filter_map(|b| Some((b.metadata.name.as_deref()?, b)))
        .collect();
    let rollback = |to| {
        judge_rollback(
            gate,
            snapshot.all_bundles(),
            &passages,
            &person.name,
            to,
            now,
        )
    };
    // Each rollback target the Gate held (its occupant, then its history, each once)
    // whose Bundle still exists.
    let mut held = std::collections::HashSet::new();
    let rollbacks = gate
        .status
        .iter()
        .flat_map(|s| s.current.iter().chain(&s.history))
        .filter(|o| held.insert(o.bundle.as_str()) && bundles.contains_key(o.bundle.as_str()))
        .map(|o| YourCrossing {
            bundle: o.bundle.clone(),
            refused: rollback(Some(&o.bundle)).err(),
        })
        .collect();
    YourCrossings {
        actor: person.name.clone(),
        bundles: eligible
            .iter()
            .filter_map(|name| bundles.get(name.as_str()))
            .map(|bundle| YourCrossing {
                bundle: bundle.name_any(),
                refused: judge(
                    gate,
                    bundle,
                    &passages,
                    &person.name,
                    CrossingKind::Promotion,
                    now,
                )
                .err(),
            })
            .collect(),
        rollbacks,
        rollback: rollback(None).err(),
        gate: gate_name,
    }
}

/// What `actor` would meet asking for a rollback of `gate` to `to` — `None`: to the
/// target the server chooses — at `now`: the rules `Ops::rollback` applies, in its
/// order (the Gate alone, the target, then the crossing as a rollback), over the
/// namespace's `bundles` and the Gate's `passages`.
pub fn judge_rollback(
    gate: &Gate,
    bundles: &[Bundle],
    passages: &[&Passage],
    actor: &str,
    to: Option<&str>,
    now: Timestamp,
) -> Result<(), Refusal> {
    judge_gate(gate)?;
    let plan = actions::judge_rollback(gate, bundles, to)?;
    let bundle = bundles
        .iter()
        .find(|b| b.metadata.name.as_deref() == Some(plan.bundle.as_str()))
        .ok_or_else(|| {
            Refusal::new(
                RefusalCode::NothingToRollBackTo,
                format!(
                    "{} would roll back to {}, which no longer exists",
                    gate.name_any(),
                    plan.bundle
                ),
            )
        })?;
    judge(gate, bundle, passages, actor, CrossingKind::Rollback, now)
}

/// What a crossing is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrossingKind {
    /// Moving a Bundle in.
    Promotion,
    /// Going back to a Bundle the Gate verified before
    /// ([`super::rollback`]): the same rules, except that it may be the Gate's current
    /// occupant — crossing it again restores what a failed crossing half-changed.
    Rollback,
    /// Bringing some of the Gate's targets to the Bundle it holds (DECISION 164): the
    /// same rules, except that it is the Gate's current occupant — and must be.
    CatchUp,
}

impl CrossingKind {
    /// What `passage` is for: a rollback when it says it undoes a crossing; else a
    /// catch-up when it reaches only some targets.
    pub fn of(passage: &Passage) -> Self {
        if super::rollback::rollback_of(passage).is_some() {
            Self::Rollback
        } else if passage.spec.is_partial() {
            Self::CatchUp
        } else {
            Self::Promotion
        }
    }
}

/// The rules of a crossing once someone has asked for it, in promote's order: what the
/// Gate alone decides (`obstacle`, as the caller judged it — [`gate::obstacle`] for
/// people, the controller's full step check for itself), the Bundle's eligibility
/// (an approval by `promoter` does not count; a rollback may cross the current
/// occupant again), one crossing at a time (`passages`: the
/// other crossings of the Gate that come first), then the windows at `now`. Promote
/// judges a request with it, and the controller a Passage before it starts
/// ([`super::passage::judge_start`]), so a crossing asked for by hand and one asked for
/// by writing a Passage meet the same rules.
pub fn judge_crossing(
    gate: &Gate,
    obstacle: Option<Obstacle>,
    bundle: &Bundle,
    passages: &[&Passage],
    promoter: Option<&str>,
    kind: CrossingKind,
    now: Timestamp,
) -> Result<(), Refusal> {
    refuse_obstacle(gate, obstacle)?;
    let candidates = eligibility::evaluate(gate, std::iter::once(bundle), promoter, now);
    let Some(candidate) = candidates.first() else {
        return Err(actions::not_admitted(gate, bundle));
    };
    if kind == CrossingKind::CatchUp && gate.current_bundle() != Some(bundle.name_any().as_str()) {
        return Err(Refusal::new(
            RefusalCode::InvalidTargets,
            format!(
                "a crossing of some targets brings them to what {} holds, not {}: a new Bundle crosses every target",
                gate.name_any(),
                bundle.name_any()
            ),
        ));
    }
    if let Some(why) = &candidate.blocked
        && !(kind != CrossingKind::Promotion && why.code == eligibility::Code::AlreadyCurrent)
    {
        return Err(Refusal::new(why.code.into(), why.reason.clone()));
    }
    if let Some(active) = passages.iter().find(|p| !p.is_terminal()) {
        return Err(Refusal::new(
            RefusalCode::AlreadyCrossing,
            format!(
                "Passage {} is already crossing {}",
                active.name_any(),
                active.spec.bundle
            ),
        ));
    }
    let windows = window::judge(&gate.spec.windows, now);
    if !windows.allowed {
        return Err(Refusal::new(
            RefusalCode::WindowClosed,
            windows.reason_with_until(),
        ));
    }
    Ok(())
}

/// What the Gate alone decides, before any Bundle is looked at ([`gate::obstacle`]:
/// suspended, steps that cannot run, no steps) — the blocker Explain shows, as a
/// refusal.
pub fn judge_gate(gate: &Gate) -> Result<(), Refusal> {
    refuse_obstacle(gate, gate::obstacle(gate))
}

/// `obstacle`, if there is one, as a refusal.
fn refuse_obstacle(gate: &Gate, obstacle: Option<Obstacle>) -> Result<(), Refusal> {
    let name = gate.name_any();
    match obstacle {
        None => Ok(()),
        Some(Obstacle::Suspended) => Err(Refusal::new(
            RefusalCode::Suspended,
            format!("Gate {name} is suspended"),
        )),
        Some(Obstacle::InvalidSteps(problems)) => Err(Refusal::new(
            RefusalCode::InvalidSteps,
            format!(
                "Gate {name} names what cannot run: {}",
                problems.replace('\n', "; ")
            ),
        )),
        Some(Obstacle::NoSteps) => Err(Refusal::new(
            RefusalCode::NoSteps,
            format!("Gate {name} has no steps"),
        )),
    }
}

/// The name of the Gate's next Passage: `<gate>-<n>`, one more than the highest such
/// number among its Passages. Everyone who reads the same Passages computes the same
/// name, so of several crossings requested at once the API server lets exactly one be
/// created — the others find the name taken.
pub fn next_passage_name(gate: &str, passages: &[&Passage]) -> String {
    let prefix = format!("{gate}-");
    let highest = passages
        .iter()
        .filter_map(|p| {
            p.metadata
                .name
                .as_deref()?
                .strip_prefix(&prefix)?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    format!("{gate}-{}", highest + 1)
}

/// The Passage a crossing creates: the Gate's steps and vars copied (so editing the
/// Gate never changes a crossing under way), the actor, and the labels selecting it
/// by Gate and Bundle. No owner reference: deleting a Gate must not delete the record
/// of what crossed it. The Gate's generation is noted beside the creation time, so that
/// a Passage refused because the Gate changed before it started can say so
/// ([`super::passage`]).
pub fn new_passage(
    gate: &Gate,
    bundle: &Bundle,
    actor: &str,
    name: &str,
    now: jiff::Timestamp,
) -> Passage {
    let labels = BTreeMap::from([
        (wellknown::LABEL_GATE.to_string(), gate.name_any()),
        (wellknown::LABEL_BUNDLE.to_string(), bundle.name_any()),
    ]);
    Passage {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: gate.namespace(),
            labels: Some(labels),
            annotations: Some({
                let mut annotations = super::eligibility::created_annotation(now);
                if let Some(generation) = gate.metadata.generation {
                    annotations.insert(
                        wellknown::ANNOTATION_GATE_GENERATION.to_string(),
                        generation.to_string(),
                    );
                }
                annotations
            }),
            ..ObjectMeta::default()
        },
        spec: PassageSpec {
            gate: gate.name_any(),
            bundle: bundle.name_any(),
            steps: gate
                .spec
                .passage
                .as_ref()
                .map(|p| p.steps.clone())
                .unwrap_or_default(),
            vars: gate.spec.vars.clone(),
            actor: actor.into(),
            abort: false,
            rollout: None,
            targets: Vec::new(),
        },
        status: None,
    }
}
