//! Which wave each target is in, and what each wave allows.
//!
//! - A target goes in the first wave that selects it, by name or by its cluster's
//!   labels; a wave without `targets` takes every target no earlier wave took.
//! - Targets no wave selects go in a last wave of their own ([`WaveKind::Rest`]),
//!   tolerating no failure, all at once: a cluster that joins with labels nobody
//!   foresaw is reached last — after every canary — and never left out.
//! - No waves at all: one wave of every target ([`WaveKind::Whole`]), tolerating no
//!   failure, as a Gate that is one place fails with its one crossing.
//! - `maxFailures` as a percentage of the wave rounds **down** ("10%" of 5 targets is
//!   none): a failure budget errs towards stopping. Open Cluster Management rounds it
//!   up; we differ on purpose (DECISION 151). `maxConcurrency` as a percentage rounds
//!   up, to at least one, as OCM's does: a rollout always moves.
//! - A wave that names targets and selects none is a problem: the waves say what goes
//!   first, and a canary wave that selects nothing would silently send the release
//!   everywhere at once. A name no target has is a problem too, unless the Gate
//!   selects clusters by label (the cluster may have left, or not joined yet).

use std::collections::BTreeSet;
use std::time::Duration;

use hecate_types::limits::MAX_WAVES;
use hecate_types::names::is_dns_label;
use hecate_types::{CountOrPercent, Rollout, Targets, Wave, duration as go_duration};

use super::targets::{ResolvedTarget, selector_problems};

/// How much of a wave a number or a percentage allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// So many targets.
    Count(u32),
    /// So many percent of the wave's targets, 0 to 100.
    Percent(u32),
}

impl Budget {
    /// `value` read: a number of targets (written as a number or as digits), or a
    /// whole percentage up to 100 (`"25%"`).
    pub fn parse(value: &CountOrPercent) -> Result<Self, String> {
        match value {
            CountOrPercent::Count(n) => u32::try_from(*n)
                .map(Self::Count)
                .map_err(|_| format!("{n} is not a number of targets: 0 or more")),
            CountOrPercent::Text(text) => {
                let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
                let percent = text.strip_suffix('%');
                let number = percent.unwrap_or(text);
                let parsed = digits(number).then(|| number.parse::<u32>().ok()).flatten();
                match (percent, parsed) {
                    (Some(_), Some(p)) if p <= 100 => Ok(Self::Percent(p)),
                    (None, Some(n)) => Ok(Self::Count(n)),
                    _ => Err(format!(
                        "{text:?} is neither a number of targets nor a whole percentage up to 100% (\"25%\")"
                    )),
                }
            }
        }
    }

    /// How many of a wave of `size` may fail: a percentage rounds down.
    pub fn failures(self, size: usize) -> usize {
        match self {
            Self::Count(n) => usize::try_from(n).unwrap_or(usize::MAX),
            Self::Percent(p) => size.saturating_mul(p as usize) / 100,
        }
    }

    /// How many of a wave of `size` cross at once: a percentage rounds up; at least
    /// one, at most the wave.
    pub fn concurrency(self, size: usize) -> usize {
        let n = match self {
            Self::Count(n) => usize::try_from(n).unwrap_or(usize::MAX),
            Self::Percent(p) => size.saturating_mul(p as usize).div_ceil(100),
        };
        n.clamp(1, size.max(1))
    }
}

/// Where a planned wave came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveKind {
    /// One of `spec.rollout.waves`.
    Listed,
    /// The last wave, of the targets no listed wave selects.
    Rest,
    /// The one wave of every target, when the Gate lists none.
    Whole,
}

/// One wave as the rollout follows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedWave {
    /// Its number, counted from 0: its place in `spec.rollout.waves`; the last wave
    /// comes after them all. What a target's record says as `wave`.
    pub index: usize,
    /// Where it came from.
    pub kind: WaveKind,
    /// Its name, where the Gate gives one.
    pub name: String,
    /// Its targets, in the Gate's order.
    pub targets: Vec<String>,
    /// How many cross at once.
    pub max_concurrency: usize,
    /// How many may fail before the rollout halts.
    pub max_failures: usize,
    /// How long it stays healthy after its last success before the next wave.
    pub min_success_time: Duration,
    /// How long one target may take from its start; `None`: no limit.
    pub progress_deadline: Option<Duration>,
}

impl PlannedWave {
    /// The wave for people: "wave 1 (canary)", "wave 2", "the last wave", "the one
    /// wave".
    pub fn label(&self) -> String {
        match (self.kind, self.name.is_empty()) {
            (WaveKind::Listed, true) => format!("wave {}", self.index + 1),
            (WaveKind::Listed, false) => format!("wave {} ({})", self.index + 1, self.name),
            (WaveKind::Rest, _) => "the last wave (targets no wave selects)".into(),
            (WaveKind::Whole, _) => "the one wave".into(),
        }
    }

    /// A wave of `targets` with the defaults: all at once, no failure, no soak, no
    /// deadline.
    fn of(index: usize, kind: WaveKind, targets: Vec<String>) -> Self {
        let size = targets.len();
        Self {
            index,
            kind,
            name: String::new(),
            targets,
            max_concurrency: size.max(1),
            max_failures: 0,
            min_success_time: Duration::ZERO,
            progress_deadline: None,
        }
    }
}

/// The waves a rollout follows, in order; every present target in exactly one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// The waves, in order. A listed wave that selects nothing is left out only when
    /// it takes "the rest" (no `targets`) and nothing is left.
    pub waves: Vec<PlannedWave>,
}

impl Plan {
    /// The wave `target` is in.
    pub fn wave_of(&self, target: &str) -> Option<&PlannedWave> {
        self.waves
            .iter()
            .find(|w| w.targets.iter().any(|t| t == target))
    }

    /// Whether `target` is among the Gate's targets now.
    pub fn has(&self, target: &str) -> bool {
        self.wave_of(target).is_some()
    }

    /// The plan a crossing of `names` alone follows (DECISION 163): those of them
    /// present, in their waves and order, each wave at most as wide as before and
    /// tolerating no failure — every target of such a crossing was asked for by
    /// name; waves left empty are dropped.
    pub fn only(&self, names: &[String]) -> Plan {
        let waves = self
            .waves
            .iter()
            .filter_map(|wave| {
                let targets: Vec<String> = wave
                    .targets
                    .iter()
                    .filter(|t| names.contains(t))
                    .cloned()
                    .collect();
                (!targets.is_empty()).then(|| PlannedWave {
                    max_concurrency: wave.max_concurrency.min(targets.len()).max(1),
                    max_failures: 0,
                    targets,
                    ..wave.clone()
                })
            })
            .collect();
        Plan { waves }
    }

    /// Every present target, wave by wave.
    pub fn targets(&self) -> impl Iterator<Item = &str> {
        self.waves
            .iter()
            .flat_map(|w| w.targets.iter().map(String::as_str))
    }
}

/// Why a Gate's waves cannot be followed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanProblem {
    /// `spec.rollout` on a Gate without `spec.targets`.
    #[error("rollout: waves need spec.targets; without targets the Gate is one place")]
    WithoutTargets,
    /// More waves than a rollout has.
    #[error("rollout.waves: {count} waves, more than the {MAX_WAVES} a rollout has")]
    TooManyWaves {
        /// How many there are.
        count: usize,
    },
    /// A wave's name is not a name.
    #[error(
        "rollout.waves[{index}].name: {name:?} is not a wave name: lower-case letters, digits and '-', at most 63"
    )]
    BadWaveName {
        /// The wave.
        index: usize,
        /// The name as written.
        name: String,
    },
    /// Two waves share a name.
    #[error("rollout.waves: two waves are called {name}")]
    DuplicateWaveName {
        /// The name.
        name: String,
    },
    /// A field of a wave cannot be read.
    #[error("rollout.waves[{index}].{field}: {problem}")]
    BadField {
        /// The wave.
        index: usize,
        /// The field, as the Gate spells it.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// A wave names a target the Gate does not have (and the Gate selects none by
    /// label, which could bring it).
    #[error(
        "rollout.waves[{index}].targets.names: {name} is not one of the Gate's targets; the targets are {known}"
    )]
    UnknownTarget {
        /// The wave.
        index: usize,
        /// The name.
        name: String,
        /// The Gate's targets, in a sentence.
        known: String,
    },
    /// A wave that names targets selects none an earlier wave has not taken.
    #[error(
        "rollout.waves[{index}].targets: selects no target that an earlier wave has not taken; the rollout would go on without it"
    )]
    EmptyWave {
        /// The wave.
        index: usize,
    },
}

/// The waves `targets` go in under `rollout` (`None`, or no waves: one wave of every
/// target), or every problem with them. `spec` says whether targets may come and go
/// by label, which makes a wave's unknown name no problem.
pub fn plan(
    rollout: Option<&Rollout>,
    spec: &Targets,
    targets: &[ResolvedTarget],
) -> Result<Plan, Vec<PlanProblem>> {
    let waves = rollout.map(|r| r.waves.as_slice()).unwrap_or_default();
    if waves.is_empty() {
        let all = targets.iter().map(|t| t.name.clone()).collect();
        return Ok(Plan {
            waves: vec![PlannedWave::of(0, WaveKind::Whole, all)],
        });
    }
    let mut problems = Vec::new();
    if waves.len() > MAX_WAVES {
        problems.push(PlanProblem::TooManyWaves { count: waves.len() });
    }
    let mut names = BTreeSet::new();
    let mut remaining: Vec<&ResolvedTarget> = targets.iter().collect();
    let mut planned = Vec::new();
    for (index, wave) in waves.iter().enumerate() {
        if !wave.name.is_empty() {
            if !is_dns_label(&wave.name) {
                problems.push(PlanProblem::BadWaveName {
                    index,
                    name: wave.name.clone(),
                });
            } else if !names.insert(wave.name.as_str()) {
                problems.push(PlanProblem::DuplicateWaveName {
                    name: wave.name.clone(),
                });
            }
        }
        check_names(index, wave, spec, targets, &mut problems);
        let (members, rest): (Vec<&ResolvedTarget>, Vec<&ResolvedTarget>) =
            remaining.into_iter().partition(|t| selects(wave, t));
        remaining = rest;
        if members.is_empty() {
            if wave.targets.is_some() {
                problems.push(PlanProblem::EmptyWave { index });
            }
            continue;
        }
        let members = members.into_iter().map(|t| t.name.clone()).collect();
        match planned_wave(index, wave, members) {
            Ok(planned_wave) => planned.push(planned_wave),
            Err(mut wave_problems) => problems.append(&mut wave_problems),
        }
    }
    if !remaining.is_empty() {
        let rest = remaining.into_iter().map(|t| t.name.clone()).collect();
        planned.push(PlannedWave::of(waves.len(), WaveKind::Rest, rest));
    }
    if problems.is_empty() {
        Ok(Plan { waves: planned })
    } else {
        Err(problems)
    }
}

/// Whether `wave` selects `target`: by name, by its cluster's labels, or — a wave
/// without `targets` — whatever is left.
fn selects(wave: &Wave, target: &ResolvedTarget) -> bool {
    let Some(chosen) = &wave.targets else {
        return true;
    };
    chosen.names.contains(&target.name)
        || chosen
            .selector
            .as_ref()
            .is_some_and(|s| s.matches(&target.labels))
}

/// The problems with the names and the selector `wave` chooses its targets by.
fn check_names(
    index: usize,
    wave: &Wave,
    spec: &Targets,
    targets: &[ResolvedTarget],
    problems: &mut Vec<PlanProblem>,
) {
    let Some(chosen) = &wave.targets else {
        return;
    };
    if let Some(selector) = &chosen.selector {
        problems.extend(selector_problems(selector).into_iter().map(|problem| {
            PlanProblem::BadField {
                index,
                field: "targets.selector",
                problem,
            }
        }));
    }
    // A Gate that selects clusters by label may name one that left or has not joined.
    if spec.selector.is_some() {
        return;
    }
    for name in &chosen.names {
        if !targets.iter().any(|t| t.name == *name) {
            let known: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
            problems.push(PlanProblem::UnknownTarget {
                index,
                name: name.clone(),
                known: super::listed(&known),
            });
        }
    }
}

/// `wave` of `members`, its budgets and times read, or what cannot be.
fn planned_wave(
    index: usize,
    wave: &Wave,
    members: Vec<String>,
) -> Result<PlannedWave, Vec<PlanProblem>> {
    let mut problems = Vec::new();
    let mut bad = |field: &'static str, problem: String| {
        problems.push(PlanProblem::BadField {
            index,
            field,
            problem,
        });
    };
    let size = members.len();
    let mut planned = PlannedWave::of(index, WaveKind::Listed, members);
    planned.name = wave.name.clone();
    if let Some(value) = &wave.max_concurrency {
        match Budget::parse(value) {
            Ok(Budget::Count(0) | Budget::Percent(0)) => {
                bad(
                    "maxConcurrency",
                    format!("{value} would start no target; at least 1"),
                );
            }
            Ok(budget) => planned.max_concurrency = budget.concurrency(size),
            Err(problem) => bad("maxConcurrency", problem),
        }
    }
    if let Some(value) = &wave.max_failures {
        match Budget::parse(value) {
            Ok(budget) => planned.max_failures = budget.failures(size),
            Err(problem) => bad("maxFailures", problem),
        }
    }
    match duration(&wave.min_success_time) {
        Ok(soak) => planned.min_success_time = soak.unwrap_or(Duration::ZERO),
        Err(problem) => bad("minSuccessTime", problem),
    }
    let deadline = wave.progress_deadline.trim();
    if deadline != "None" {
        match duration(deadline) {
            Ok(Some(Duration::ZERO)) => {
                bad(
                    "progressDeadline",
                    "0 fails every target at once; give a time, or None".into(),
                );
            }
            Ok(limit) => planned.progress_deadline = limit,
            Err(problem) => bad("progressDeadline", problem),
        }
    }
    if problems.is_empty() {
        Ok(planned)
    } else {
        Err(problems)
    }
}

/// A Go duration, `None` when empty; never negative.
fn duration(text: &str) -> Result<Option<Duration>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let parsed = go_duration::parse(text).map_err(|e| e.to_string())?;
    Duration::try_from(parsed)
        .map(Some)
        .map_err(|_| format!("{text} is negative"))
}
