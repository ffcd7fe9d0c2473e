//! Text renderings: pure functions of a value, a style and the time, so every table
//! is snapshot-tested exactly.

use hecate_ops::model::{BundleRef, DiffDirection, Notifications};
use hecate_ops::model::{
    ChangeFailureRate, DeploymentFrequency, Figures, LeadTime, LeadTimeParts, Reach, TimeToRestore,
};
use hecate_ops::rules::{change, rollback, verification, version};
use hecate_ops::{
    Aborted, Approved, AuditEntry, AuditKind, BundleDiff, ChainState, Delivery, Evidence,
    Explanation, FluxReconciled, FluxResource, FluxSuspended, GateTargets, Polled, Preflight,
    Promoted, QueuedApproval, Rejected, RolledBack, RolloutAsked, StagedGate, State, VerifyReport,
    Withdrawn,
};
use hecate_types::{
    ArtifactRef, Beacon, Bundle, ConditionStatus, Health, NoticeOutcome, Passage, PassagePhase,
    TargetPhase, Time, VerificationPhase, WatchSourceRef,
};
use jiff::Timestamp;
use kube::ResourceExt as _;
use serde::Serialize;

use crate::output::{Cell, Colour, Columns, Style, Table};

mod names;
mod preview;

pub(crate) use preview::preview;

/// What a write command did, for scripts: ops' answer under the action's name, the
/// same object in every format (`{"action": "promote", …Promoted}`).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub(crate) struct Written<'a, T> {
    /// `promote`, `approve`, `abort` or `poll`.
    pub(crate) action: &'static str,
    /// What ops answered.
    #[serde(flatten)]
    pub(crate) answer: &'a T,
}

/// `promote`'s line.
pub(crate) fn promoted(promoted: &Promoted) -> String {
    format!(
        "crossing {} through {} as {}\n",
        promoted.bundle, promoted.gate, promoted.passage
    )
}

/// `rollback`'s line: where the Gate goes back to, and the crossing it undoes.
pub(crate) fn rolled_back(rolled_back: &RolledBack) -> String {
    let which = if rolled_back.targets.is_empty() {
        String::new()
    } else {
        format!("'s {}", rolled_back.targets.join(", "))
    };
    format!(
        "rolling back {}{which} to {} as Passage {} (undoing {})\n",
        rolled_back.gate, rolled_back.bundle, rolled_back.passage, rolled_back.rollback_of
    )
}

/// `approve`'s line: recorded now, or found already there; under an approval policy,
/// where the Bundle stands after it.
pub(crate) fn approved(approved: &Approved) -> String {
    let mut line = if approved.recorded {
        format!(
            "{} approved for {} by {}",
            approved.bundle, approved.gate, approved.approved_by
        )
    } else {
        format!(
            "{} was already approved for {} by {}",
            approved.bundle, approved.gate, approved.approved_by
        )
    };
    if let Some(progress) = &approved.progress {
        line.push_str(&format!(" ({})", progress.summary));
    }
    line.push('\n');
    line
}

/// `reject`'s line.
pub(crate) fn rejected(rejected: &Rejected) -> String {
    let verb = if rejected.recorded {
        "rejected"
    } else {
        "had already rejected"
    };
    format!(
        "{} {verb} {} for {}: {}; it is held there until withdrawn\n",
        rejected.rejected_by, rejected.bundle, rejected.gate, rejected.reason
    )
}

/// `reject --withdraw`'s line.
pub(crate) fn withdrawn(withdrawn: &Withdrawn) -> String {
    if withdrawn.rejections_of.is_empty() {
        return format!(
            "no rejection holds {} from {}\n",
            withdrawn.bundle, withdrawn.gate
        );
    }
    format!(
        "{} withdrew the rejection of {} for {} by {}\n",
        withdrawn.withdrawn_by,
        withdrawn.bundle,
        withdrawn.gate,
        withdrawn.rejections_of.join(", ")
    )
}

/// `hecate approvals`: each Bundle waiting on a person, where its approvals stand,
/// and what the caller's own approval would do — ops' judgement, in words.
pub(crate) fn approvals(
    queue: &[QueuedApproval],
    namespace: &str,
    columns: Columns,
    style: &Style,
) -> String {
    if queue.is_empty() {
        return format!("nothing is waiting for an approval in {namespace}\n");
    }
    let mut table = Table::new(&["GATE", "VERSION", "BUNDLE", "PROGRESS", "YOU"]);
    for entry in queue {
        let you = &entry.you;
        let (words, colour) = if entry.progress.rejected.is_some() {
            if you.can_withdraw {
                (
                    "may withdraw the rejection".to_string(),
                    Some(Colour::Yellow),
                )
            } else {
                ("rejected".to_string(), Some(Colour::Red))
            }
        } else if you.approved {
            ("approved".to_string(), Some(Colour::Green))
        } else if you.can_approve {
            ("your approval counts".to_string(), Some(Colour::Cyan))
        } else {
            (format!("would not count: {}", you.why_not), None)
        };
        table.row(vec![
            Cell::plain(entry.gate.clone()),
            Cell::plain(or_dash(Some(&entry.version))),
            Cell::plain(entry.bundle.clone()),
            Cell::plain(entry.progress.summary.clone()),
            Cell::styled(words, style, colour),
        ]);
    }
    let mut out = table.render(style, columns);
    // Where an approval sends each Gate's crossings, once a Gate (issue 52).
    let mut said: Vec<&str> = Vec::new();
    for entry in queue.iter().filter(|e| !e.reach.is_empty()) {
        if !said.contains(&entry.gate.as_str()) {
            said.push(&entry.gate);
            out.push_str(&format!("{}: crosses {}\n", entry.gate, entry.reach));
        }
    }
    // Said where the decision is made: an approval into a frozen window waits (#53).
    let mut said: Vec<&str> = Vec::new();
    for entry in queue {
        let Some(held) = &entry.held else { continue };
        if said.contains(&entry.gate.as_str()) {
            continue;
        }
        said.push(&entry.gate);
        let then = if held.unattended {
            "; an approval that completes it waits, then it crosses by itself, unattended"
        } else {
            "; it crosses only when asked, once they open"
        };
        out.push_str(&format!(
            "{}: {}{then}\n",
            style.paint(Colour::Yellow, &entry.gate),
            held.reason
        ));
    }
    out
}

/// `abort`'s line.
pub(crate) fn aborted(aborted: &Aborted) -> String {
    format!(
        "asked {} to stop; the controller marks its remaining steps aborted\n",
        aborted.passage
    )
}

/// `targets`: the Gate's rollout in a line or two, then a row per target, by wave.
pub(crate) fn targets(
    targets: &GateTargets,
    now: Timestamp,
    columns: Columns,
    style: &Style,
) -> String {
    let Some(rollout) = &targets.rollout else {
        return if targets.spans_targets {
            format!(
                "{} names targets; no crossing has reached them yet\n",
                targets.gate
            )
        } else {
            format!(
                "{} is one place: it names no targets (spec.targets)\n",
                targets.gate
            )
        };
    };
    let named = |r: &hecate_ops::RolloutRecord| {
        if r.version == r.bundle {
            r.bundle.clone()
        } else {
            format!("{} ({})", r.version, r.bundle)
        }
    };
    let name = named(rollout);
    let mut out = format!(
        "{}: {name} by {}, {}{}\n",
        style.paint(Colour::Bold, &targets.gate),
        rollout.passage,
        style.paint(
            rollout_colour(&rollout.now.phase).unwrap_or(Colour::Bold),
            &rollout.now.phase
        ),
        if rollout.active { "" } else { " (finished)" },
    );
    out.push_str(&format!("{}\n", rollout.now.occupancy));
    if !rollout.now.message.is_empty() {
        out.push_str(&format!("{}\n", rollout.now.message));
    }
    out.push('\n');
    let mut header = vec![
        "WAVE", "TARGET", "PHASE", "ATTEMPT", "STEP", "REVISION", "AGE",
    ];
    if columns.wide() {
        header.extend(["APPLIED", "HEALTH", "VERIFICATION", "MESSAGE"]);
    }
    let mut table = Table::new(&header);
    for target in &rollout.targets {
        let started = target.phase != TargetPhase::Pending;
        let step = if started && (target.current_step > 0 || target.phase.is_under_way()) {
            // People count steps from 1.
            let mut step = (target.current_step + 1).to_string();
            if !target.reason.is_empty() {
                step.push_str(&format!(" ({})", target.reason));
            }
            step
        } else if !target.reason.is_empty() {
            target.reason.clone()
        } else {
            "-".to_string()
        };
        let mut row = vec![
            Cell::plain((target.wave + 1).to_string()),
            Cell::plain(target.name.clone()),
            Cell::styled(target.phase.as_str(), style, target_colour(target.phase)),
            Cell::plain(if target.attempt > 0 {
                target.attempt.to_string()
            } else {
                "-".to_string()
            }),
            Cell::plain(step),
            Cell::plain(short_revision(&target.pushed_revision)),
            Cell::plain(if started {
                age(target.started_at.as_ref(), now)
            } else {
                "-".to_string()
            }),
        ];
        if columns.wide() {
            row.extend([
                Cell::plain(short_revision(&target.applied_revision)),
                Cell::plain(target.health.map_or("-", Health::as_str)),
                Cell::plain(target.verification.map_or("-", |v| v.as_str())),
                Cell::plain(or_dash(Some(&target.message))),
            ]);
        }
        table.row(row);
    }
    out.push_str(&table.render(style, columns));
    if rollout.omitted_targets > 0 {
        out.push_str(&format!(
            "({} departed targets' records left out)\n",
            rollout.omitted_targets
        ));
    }
    for fix in &targets.fixes {
        out.push_str(&format!("→ {}\n", fix.fix));
    }
    if !rollout.since.is_empty() {
        out.push_str("\nSince, crossings of some targets:\n");
    }
    for later in &rollout.since {
        let kind = later.kind_of_some();
        let names: Vec<&str> = later.targets.iter().map(|t| t.name.as_str()).collect();
        out.push_str(&format!(
            "  {}: {kind} of {} to {}, {}\n",
            later.passage,
            names.join(", "),
            named(later),
            style.paint(
                rollout_colour(&later.now.phase).unwrap_or(Colour::Bold),
                &later.now.phase
            ),
        ));
    }
    out
}

/// A revision as people read one: a commit's first 12 characters (Flux writes
/// `main@sha1:<sha>`; the part after the last `:`), a digest's alike.
fn short_revision(revision: &str) -> String {
    if revision.is_empty() {
        return "-".to_string();
    }
    let (prefix, id) = match revision.rsplit_once(':') {
        Some((prefix, id)) => (format!("{prefix}:"), id),
        None => (String::new(), revision),
    };
    format!("{prefix}{}", id.chars().take(12).collect::<String>())
}

fn rollout_colour(phase: &str) -> Option<Colour> {
    match phase {
        "Progressing" => Some(Colour::Cyan),
        "Halted" => Some(Colour::Red),
        "Completed" | "Accepted" => Some(Colour::Green),
        _ => None,
    }
}

fn target_colour(phase: TargetPhase) -> Option<Colour> {
    match phase {
        TargetPhase::Running | TargetPhase::Verifying => Some(Colour::Cyan),
        TargetPhase::Succeeded => Some(Colour::Green),
        TargetPhase::Failed => Some(Colour::Red),
        TargetPhase::Aborted => Some(Colour::Yellow),
        TargetPhase::Pending => None,
    }
}

/// `retry`'s and `accept-failures`' line.
pub(crate) fn rollout_asked(asked: &RolloutAsked) -> String {
    match asked.asked.as_str() {
        "retry" => format!(
            "asked {} to cross its failed targets again; the controller starts them in its next round\n",
            asked.passage
        ),
        _ => format!(
            "accepted the failures that halted {}, in {}'s name; its later waves go on\n",
            asked.passage, asked.by
        ),
    }
}

/// `poll`'s line.
pub(crate) fn polled(polled: &Polled) -> String {
    format!(
        "asked Beacon {} to look now (token {})\n",
        polled.beacon, polled.requested_at
    )
}

fn state_colour(state: State) -> Option<Colour> {
    match state {
        State::Crossing => Some(Colour::Cyan),
        State::Ready => Some(Colour::Green),
        State::Blocked => Some(Colour::Yellow),
        State::Failed => Some(Colour::Red),
        State::Idle => None,
    }
}

fn health_colour(health: Health) -> Option<Colour> {
    match health {
        Health::Healthy => Some(Colour::Green),
        Health::Progressing => Some(Colour::Cyan),
        Health::Degraded => Some(Colour::Red),
        Health::Unknown => Some(Colour::Yellow),
        Health::NotApplicable => Some(Colour::Dim),
    }
}

fn or_dash(value: Option<&str>) -> String {
    value.filter(|v| !v.is_empty()).unwrap_or("-").to_string()
}

/// `hecate status`, with the version of each Gate's current Bundle (Explain's
/// `versions`). Wide, before the summary: how many Bundles could
/// cross, the crossing under way, and what kinds of thing stand in the way.
pub(crate) fn status(
    explanations: &[Explanation],
    all_namespaces: bool,
    namespace: &str,
    columns: Columns,
    style: &Style,
) -> String {
    if explanations.is_empty() {
        return if all_namespaces {
            "no Gates in any namespace you may read\n".into()
        } else {
            format!("no Gates in {namespace}\n")
        };
    }
    let mut header = vec!["GATE", "STATE", "CURRENT", "VERSION", "HEALTH"];
    if columns.wide() {
        header.extend(["ELIGIBLE", "CROSSING", "BLOCKERS"]);
    }
    header.push("SUMMARY");
    if all_namespaces {
        header.insert(0, "NAMESPACE");
    }
    let mut table = Table::new(&header);
    for gate in explanations {
        // A Gate that has not reported its health is `Unknown`, as in the Overview.
        let health = gate.health.unwrap_or(Health::Unknown);
        let mut row = vec![
            Cell::plain(gate.gate.clone()),
            Cell::styled(gate.state.as_str(), style, state_colour(gate.state)),
            Cell::plain(or_dash(gate.current.as_deref())),
        ];
        row.push(version_cell(&gate.versions, gate.current.as_deref()));
        row.push(Cell::styled(health.as_str(), style, health_colour(health)));
        if columns.wide() {
            let kinds: Vec<&str> = gate.blockers.iter().map(|b| b.kind.as_str()).collect();
            row.extend([
                Cell::plain(gate.eligible.len().to_string()),
                Cell::plain(or_dash(gate.crossing.as_ref().map(|c| c.passage.as_str()))),
                Cell::plain(or_dash(Some(&kinds.join(",")))),
            ]);
        }
        row.push(Cell::plain(gate.summary.clone()));
        if all_namespaces {
            row.insert(0, Cell::plain(gate.namespace.clone()));
        }
        table.row(row);
    }
    table.render(style, columns)
}

/// How many eligible or waiting Bundles a table shows; `-o json` has them all.
const LIST_LIMIT: usize = 8;

fn more(total: usize) -> String {
    if total > LIST_LIMIT {
        format!(" and {} more (-o json lists all)", total - LIST_LIMIT)
    } else {
        String::new()
    }
}

/// `hecate explain`.
pub(crate) fn explain(x: &Explanation, style: &Style) -> String {
    explain_at(x, style, Timestamp::now())
}

/// [`explain`] at `now`: ages and "in 1 day 3 h" are counted from it.
pub(crate) fn explain_at(x: &Explanation, style: &Style, now: Timestamp) -> String {
    let mut out = format!(
        "{} is {}\n{}\n",
        style.paint(Colour::Bold, &x.gate),
        style.paint(
            state_colour(x.state).unwrap_or(Colour::Bold),
            x.state.as_str()
        ),
        x.summary
    );
    if !x.blockers.is_empty() {
        out.push('\n');
        for blocker in &x.blockers {
            out.push_str(&format!(
                "  [{}] {}\n",
                style.paint(Colour::Yellow, blocker.kind.as_str()),
                blocker.detail
            ));
            if !blocker.fix.is_empty() {
                out.push_str(&format!(
                    "      → {}\n",
                    style.invocation.rewrite(&blocker.fix)
                ));
            }
            for other in &blocker.alternatives {
                out.push_str(&format!(
                    "      → or {}\n",
                    style.invocation.rewrite(&other.fix)
                ));
            }
        }
    }
    // A Bundle as people know it: its version, then its name.
    let named = |bundle: &str| match x.versions.get(bundle) {
        Some(version) if version != bundle => format!("{version} ({bundle})"),
        _ => bundle.to_string(),
    };
    let mut facts = Vec::new();
    if let Some(current) = &x.current {
        facts.push(format!("  current:  {}", named(current)));
    }
    if let Some(health) = x.health {
        facts.push(format!(
            "  health:   {}",
            style.paint(
                health_colour(health).unwrap_or(Colour::Bold),
                health.as_str()
            )
        ));
    }
    if let Some(crossing) = &x.crossing {
        let mut line = format!("  crossing: {}", crossing.passage);
        match &crossing.started_at {
            Some(started) => line.push_str(&format!(", started {} ago", age(Some(started), now))),
            None => line.push_str(&format!(
                ", created {} ago, not started",
                age(crossing.created_at.as_ref(), now)
            )),
        }
        facts.push(line);
        if let Some(step) = &crossing.step {
            let name = if step.alias.is_empty() {
                &step.uses
            } else {
                &step.alias
            };
            let mut line = format!("  step:     {name}");
            if step.started_at.is_some() {
                line.push_str(&format!(", running {}", age(step.started_at.as_ref(), now)));
            }
            // Ops says whether the count is looks at a wait or retries of a failure.
            line.push_str(&format!(", {}", step.invocations()));
            facts.push(line);
        }
        if let Some(rollout) = &crossing.rollout {
            facts.push(format!("  targets:  {}", rollout.occupancy));
            for failed in &rollout.failed {
                let at = failed
                    .step
                    .map(|s| format!(" at step {s}"))
                    .unwrap_or_default();
                let why = [failed.reason.as_str(), failed.message.as_str()]
                    .into_iter()
                    .filter(|w| !w.is_empty())
                    .collect::<Vec<_>>()
                    .join(": ");
                facts.push(format!("    {} failed{at}: {why}", failed.target));
            }
        }
    }
    if !x.eligible.is_empty() {
        // A Bundle whose last crossing of this Gate failed is marked before anyone
        // crosses it again.
        let shown: Vec<String> = x
            .eligible
            .iter()
            .take(LIST_LIMIT)
            .map(|b| {
                if x.failed_before.iter().any(|f| &f.bundle == b) {
                    format!("{} (failed here before)", named(b))
                } else {
                    named(b)
                }
            })
            .collect();
        facts.push(format!(
            "  eligible: {}{}",
            shown.join(", "),
            more(x.eligible.len())
        ));
    }
    for failed in x.failed_before.iter().take(LIST_LIMIT) {
        let when = failed
            .at
            .as_ref()
            .map(|t| format!(" {} ago", age(Some(t), now)))
            .unwrap_or_default();
        facts.push(format!(
            "  failed:   {} in {}{when}: {}",
            named(&failed.bundle),
            failed.passage,
            failed.reason
        ));
    }
    for window in &x.windows {
        let mut line = format!("  window:   {}", window.text);
        if let Some(next) = window.next.as_ref().filter(|t| t.0 > now) {
            line.push_str(&format!(
                " (in {})",
                hecate_ops::rules::window::length(next.0.duration_since(now))
            ));
        }
        facts.push(line);
    }
    for waiting in x.waiting.iter().take(LIST_LIMIT) {
        facts.push(format!(
            "  waiting:  {} — {}",
            named(&waiting.bundle),
            waiting.reason
        ));
    }
    if x.waiting.len() > LIST_LIMIT {
        facts.push(format!("            …{}", more(x.waiting.len())));
    }
    if !facts.is_empty() {
        out.push('\n');
        for fact in facts {
            out.push_str(&fact);
            out.push('\n');
        }
    }
    out
}

/// How long ago, kubectl-style: `45s`, `12m`, `5h`, `3d`.
pub(crate) fn age(created: Option<&Time>, now: Timestamp) -> String {
    let Some(created) = created else {
        return "-".into();
    };
    let seconds = now.duration_since(created.0).as_secs().max(0);
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 120 * 60 => format!("{}m", s / 60),
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

fn empty(what: &str, namespace: &str) -> String {
    format!("no {what} in {namespace}\n")
}

/// `hecate gates`: by name, each with its stage in the pipeline (ops'; `cycle` when
/// its `after`s go round, so the number orders nothing). Wide: the steps of a
/// crossing, the crossing under way, how many Bundles are eligible, how many
/// promotion windows it has.
pub(crate) fn gates(
    gates: &[StagedGate],
    namespace: &str,
    now: Timestamp,
    columns: Columns,
    style: &Style,
) -> String {
    if gates.is_empty() {
        return empty("Gates", namespace);
    }
    let mut header = vec![
        "NAME", "STAGE", "ADMITS", "AUTO", "CURRENT", "HEALTH", "AGE",
    ];
    if columns.wide() {
        header.extend(["STEPS", "CROSSING", "ELIGIBLE", "WINDOWS"]);
    }
    let mut table = Table::new(&header);
    for StagedGate { gate, stage } in gates {
        let stage = if stage.cycle {
            format!("{} (cycle)", stage.index)
        } else {
            stage.index.to_string()
        };
        let admits: Vec<String> = gate
            .spec
            .admits
            .iter()
            .map(|a| {
                let mut text = a.from.beacon.clone();
                if !a.after.is_empty() {
                    text.push_str(&format!(" after {}", a.after.join("+")));
                }
                if a.require_approval {
                    text.push_str(" (approval)");
                }
                text
            })
            .collect();
        let health = gate
            .status
            .as_ref()
            .and_then(|s| s.health.as_ref())
            .map(|h| h.status);
        let mut flags = if gate.spec.auto {
            "yes".to_string()
        } else {
            "no".to_string()
        };
        if gate.spec.suspend {
            flags.push_str(" (suspended)");
        }
        let mut row = vec![
            Cell::plain(gate.name_any()),
            Cell::plain(stage),
            Cell::plain(admits.join(", ")),
            Cell::plain(flags),
            Cell::plain(or_dash(gate.current_bundle())),
            health.map_or_else(
                || Cell::plain("-"),
                |h| Cell::styled(h.as_str(), style, health_colour(h)),
            ),
            Cell::plain(age(gate.metadata.creation_timestamp.as_ref(), now)),
        ];
        if columns.wide() {
            let steps: Vec<&str> = gate
                .spec
                .passage
                .iter()
                .flat_map(|p| &p.steps)
                .map(|s| {
                    if s.alias.is_empty() {
                        &s.uses
                    } else {
                        &s.alias
                    }
                })
                .map(String::as_str)
                .collect();
            let status = gate.status.as_ref();
            row.extend([
                Cell::plain(or_dash(Some(&steps.join(",")))),
                Cell::plain(or_dash(status.map(|s| s.active_passage.as_str()))),
                Cell::plain(status.map_or(0, |s| s.eligible.len()).to_string()),
                Cell::plain(gate.spec.windows.len().to_string()),
            ]);
        }
        table.row(row);
    }
    table.render(style, columns)
}

/// Each Bundle's version for people, by name ([`version::of`]): what the tables that
/// name a Bundle show beside it.
pub(crate) type Versions = std::collections::BTreeMap<String, String>;

/// The versions of `bundles`, by name.
pub(crate) fn versions(bundles: &[Bundle]) -> Versions {
    bundles
        .iter()
        .map(|b| (b.name_any(), version::of(b)))
        .collect()
}

/// A Bundle's version from `versions`, or `-`.
fn version_cell(versions: &Versions, bundle: Option<&str>) -> Cell {
    Cell::plain(or_dash(
        bundle.and_then(|b| versions.get(b)).map(String::as_str),
    ))
}

/// An artifact in a line: `repo:tag`, `repo/name@version`, `repo@sha`.
fn artifact_words(artifact: &hecate_types::Artifact) -> Option<String> {
    Some(match artifact.get()? {
        ArtifactRef::Image(i) => format!(
            "{}:{}",
            i.repo,
            if i.tag.is_empty() { &i.digest } else { &i.tag }
        ),
        ArtifactRef::Chart(c) => format!(
            "{}{}@{}",
            c.repo,
            if c.name.is_empty() {
                String::new()
            } else {
                format!("/{}", c.name)
            },
            c.version
        ),
        ArtifactRef::Commit(c) => {
            format!("{}@{}", c.repo, c.sha.get(..12).unwrap_or(&c.sha))
        }
    })
}

/// `hecate bundles`: each with its version and what its commit says (DECISION 140).
/// Wide: its artifacts, the Gates it has cleared, been approved for (and by whom) and
/// been blocked by, and its commit's author.
pub(crate) fn bundles(
    bundles: &[Bundle],
    namespace: &str,
    now: Timestamp,
    columns: Columns,
    style: &Style,
) -> String {
    if bundles.is_empty() {
        return empty("Bundles", namespace);
    }
    let mut header = vec!["NAME", "BEACON", "VERSION", "AGE"];
    if columns.wide() {
        header.extend(["ARTIFACTS", "CLEARED", "APPROVED", "BLOCKED", "AUTHOR"]);
    }
    header.push("SUBJECT");
    let mut table = Table::new(&header);
    for bundle in bundles {
        let name = version::name(bundle);
        let mut row = vec![
            Cell::plain(bundle.name_any()),
            Cell::plain(bundle.spec.beacon.clone()),
            Cell::plain(or_dash(Some(&name.version))),
            Cell::plain(age(bundle.metadata.creation_timestamp.as_ref(), now)),
        ];
        if columns.wide() {
            let artifacts: Vec<String> = bundle
                .spec
                .artifacts
                .iter()
                .filter_map(artifact_words)
                .collect();
            let status = bundle.status.clone().unwrap_or_default();
            let gates = |crossings: &[hecate_types::GateCrossing]| {
                let gates: Vec<&str> = crossings.iter().map(|c| c.gate.as_str()).collect();
                Cell::plain(or_dash(Some(&gates.join(","))))
            };
            let approved: Vec<String> = status
                .approved_for
                .iter()
                .map(|a| format!("{} by {}", a.gate, a.actor))
                .collect();
            row.extend([
                Cell::plain(artifacts.join(", ")),
                gates(&status.cleared),
                Cell::plain(or_dash(Some(&approved.join(", ")))),
                gates(&status.blocked),
                Cell::plain(or_dash(Some(&name.author))),
            ]);
        }
        row.push(Cell::plain(or_dash(Some(&name.subject))));
        table.row(row);
    }
    table.render(style, columns)
}

/// `hecate diff`: the two Bundles and which way the one lies from the other, their
/// artifacts side by side, and the commits between them — ops' answer, in words.
/// Wide: the digests (or full SHAs) behind each version, and the commits' authors in
/// full.
pub(crate) fn diff(diff: &BundleDiff, columns: Columns, style: &Style) -> String {
    let named = |b: &BundleRef| {
        if b.version.is_empty() {
            b.name.clone()
        } else {
            format!("{} ({})", b.version, b.name)
        }
    };
    let mut out = format!("{}\n", style.paint(Colour::Bold, &named(&diff.to)));
    let runs = |from: &BundleRef| match &diff.gate {
        Some(gate) => format!("{}, what {gate} runs", named(from)),
        None => named(from),
    };
    out.push_str(&match (&diff.from, diff.direction) {
        (None, _) => match &diff.gate {
            Some(gate) => format!("{gate} holds no Bundle: everything is new\n"),
            None => "nothing before it: everything is new\n".to_string(),
        },
        (Some(from), DiffDirection::Same) => format!("the same as {}\n", runs(from)),
        (Some(from), DiffDirection::Forward) => format!("newer than {}\n", runs(from)),
        (Some(from), DiffDirection::Back) => format!(
            "{} {}: moving to it rolls back\n",
            style.paint(Colour::Yellow, "older than"),
            runs(from)
        ),
    });
    if let (Some(left), Some(gate)) = (&diff.left_behind, &diff.gate) {
        out.push_str(&format!(
            "{} {} holds {} from the aborted {} ({}): Flux applies it there until the next crossing, \
             whatever {gate}'s record says it runs\n",
            style.paint(Colour::Yellow, "but"),
            left.branch,
            version::short(&left.commit),
            left.passage,
            left.bundle,
        ));
    }
    if !diff.artifacts.is_empty() {
        let mut header = vec!["ARTIFACT", "CHANGE", "FROM", "TO"];
        if columns.wide() {
            header.extend(["FROM DIGEST", "TO DIGEST"]);
        }
        header.push("REPOSITORY");
        let mut table = Table::new(&header);
        for change in &diff.artifacts {
            let (words, colour) = match (&change.from, &change.to) {
                (None, _) => ("added", Some(Colour::Green)),
                (_, None) => ("removed", Some(Colour::Red)),
                _ if change.changed => ("changed", Some(Colour::Cyan)),
                _ => ("same", None),
            };
            let mut row = vec![
                Cell::plain(change.kind.as_str()),
                Cell::styled(words, style, colour),
                Cell::plain(or_dash(change.from.as_deref())),
                Cell::plain(or_dash(change.to.as_deref())),
            ];
            if columns.wide() {
                row.extend([
                    Cell::plain(or_dash(change.from_digest.as_deref())),
                    Cell::plain(or_dash(change.to_digest.as_deref())),
                ]);
            }
            let repo = if change.name.is_empty() {
                change.repo.clone()
            } else {
                format!("{}/{}", change.repo, change.name)
            };
            row.push(Cell::plain(repo));
            table.row(row);
        }
        out.push('\n');
        out.push_str(&table.render(style, columns));
    }
    let total = diff.commits.len() + diff.more_commits as usize;
    if total > 0 {
        out.push('\n');
        out.push_str(&match diff.direction {
            DiffDirection::Back => format!("{} undone:\n", commits_words(total)),
            _ => format!("{}:\n", commits_words(total)),
        });
        let mut table = Table::new(&["COMMIT", "WHEN", "AUTHOR", "SUBJECT"]);
        for commit in &diff.commits {
            let author = if columns.wide() {
                commit.author.clone()
            } else {
                // The name without the address, where there is one.
                commit
                    .author
                    .split_once(" <")
                    .map_or(commit.author.as_str(), |(name, _)| name)
                    .to_string()
            };
            table.row(vec![
                Cell::plain(version::short(&commit.sha)),
                Cell::plain(or_dash(
                    commit
                        .committed_at
                        .as_ref()
                        .map(|t| t.0.strftime("%Y-%m-%d %H:%M UTC").to_string())
                        .as_deref(),
                )),
                Cell::plain(or_dash(Some(&author))),
                Cell::plain(or_dash(Some(&commit.subject))),
            ]);
        }
        out.push_str(&table.render(style, columns));
        if diff.more_commits > 0 {
            out.push_str(&format!("… and {} more\n", diff.more_commits));
        }
    } else if diff.direction != DiffDirection::Same && diff.gap.is_none() {
        out.push_str("\nno commits recorded between them\n");
    }
    if let Some(gap) = diff.gap {
        out.push_str(&format!("\n{}\n", style.paint(Colour::Yellow, gap.words())));
    }
    out
}

fn commits_words(n: usize) -> String {
    if n == 1 {
        "1 commit".to_string()
    } else {
        format!("{n} commits")
    }
}

fn phase_colour(phase: PassagePhase) -> Option<Colour> {
    match phase {
        PassagePhase::Succeeded => Some(Colour::Green),
        PassagePhase::Failed => Some(Colour::Red),
        PassagePhase::Aborted => Some(Colour::Yellow),
        PassagePhase::Running | PassagePhase::Pending => Some(Colour::Cyan),
    }
}

/// The colour a verification's phase is shown in: cut short is neither pass nor no.
fn verification_colour(phase: VerificationPhase) -> Colour {
    match phase {
        VerificationPhase::Verified => Colour::Green,
        VerificationPhase::Failed => Colour::Red,
        VerificationPhase::Verifying => Colour::Cyan,
        VerificationPhase::Superseded => Colour::Yellow,
    }
}

/// A crossing's verification in the passages table: ops' one line, coloured by its
/// phase; `-` when the Passage has none (not crossed, or nothing to verify).
fn verification_cell(passage: &Passage, style: &Style) -> Cell {
    match passage
        .status
        .as_ref()
        .and_then(|s| s.verification.as_ref())
    {
        Some(record) => {
            let colour = verification_colour(record.phase);
            Cell::styled(verification::summary(record), style, Some(colour))
        }
        None => Cell::plain("-"),
    }
}

/// `hecate passages`: each with its Bundle's version (from `versions`) and how its
/// verification went, or is going, after a successful crossing (DECISION 139). Wide:
/// the step it is at (or failed at) of how many, how long it has run (or ran), and
/// what it says.
pub(crate) fn passages(
    passages: &[Passage],
    versions: &Versions,
    namespace: &str,
    now: Timestamp,
    columns: Columns,
    style: &Style,
) -> String {
    if passages.is_empty() {
        return empty("Passages", namespace);
    }
    let mut header = vec![
        "NAME", "GATE", "BUNDLE", "VERSION", "PHASE", "ACTOR", "AGE", "VERIFIED",
    ];
    if columns.wide() {
        header.extend(["STEP", "DURATION", "MESSAGE"]);
    }
    let mut table = Table::new(&header);
    for passage in passages {
        let phase = passage.phase();
        // A rollback names what it undid beside its phase (DECISION 153).
        let phase_words = match rollback::rollback_of(passage) {
            Some(undone) => format!("{} (rollback of {undone})", phase.as_str()),
            None => phase.as_str().to_string(),
        };
        let mut row = vec![
            Cell::plain(passage.name_any()),
            Cell::plain(passage.spec.gate.clone()),
            Cell::plain(passage.spec.bundle.clone()),
            version_cell(versions, Some(&passage.spec.bundle)),
            Cell::styled(phase_words, style, phase_colour(phase)),
            Cell::plain(or_dash(Some(&passage.spec.actor))),
            Cell::plain(age(passage.metadata.creation_timestamp.as_ref(), now)),
            verification_cell(passage, style),
        ];
        if columns.wide() {
            let status = passage.status.clone().unwrap_or_default();
            let steps = &passage.spec.steps;
            // The step in progress, or the first that failed (the last, once all ran).
            let at = usize::try_from(status.current_step)
                .unwrap_or(0)
                .min(steps.len().saturating_sub(1));
            let step = match steps.get(at) {
                Some(step) if status.started_at.is_some() => format!(
                    "{}/{} {}",
                    at + 1,
                    steps.len(),
                    if step.alias.is_empty() {
                        &step.uses
                    } else {
                        &step.alias
                    }
                ),
                _ => "-".to_string(),
            };
            let ran = status.started_at.as_ref().map_or_else(
                || "-".to_string(),
                |started| {
                    age(
                        Some(started),
                        status.finished_at.as_ref().map_or(now, |f| f.0),
                    )
                },
            );
            row.extend([
                Cell::plain(step),
                Cell::plain(ran),
                Cell::plain(status.message.clone()),
            ]);
        }
        table.row(row);
    }
    table.render(style, columns)
}

/// `hecate beacons`. Wide: how often it looks, when it last did, whether it is
/// suspended, and what its `Ready` condition says.
pub(crate) fn beacons(
    beacons: &[Beacon],
    namespace: &str,
    now: Timestamp,
    columns: Columns,
    style: &Style,
) -> String {
    if beacons.is_empty() {
        return empty("Beacons", namespace);
    }
    let mut header = vec!["NAME", "WATCHES", "LATEST", "READY", "AGE"];
    if columns.wide() {
        header.extend(["INTERVAL", "POLLED", "SUSPENDED", "MESSAGE"]);
    }
    let mut table = Table::new(&header);
    for beacon in beacons {
        let sources: Vec<String> = beacon
            .spec
            .watch
            .iter()
            .filter_map(|w| {
                Some(match w.get()? {
                    WatchSourceRef::Image(i) => i.repo.clone(),
                    WatchSourceRef::Chart(c) => c.repo.clone(),
                    WatchSourceRef::Git(g) => g.repo.clone(),
                    WatchSourceRef::Provider(p) => format!("provider {}", p.name),
                })
            })
            .collect();
        let status = beacon.status.as_ref();
        let condition = status.and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"));
        let ready = condition.map(|c| match c.status {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        });
        let mut row = vec![
            Cell::plain(beacon.name_any()),
            Cell::plain(sources.join(", ")),
            Cell::plain(or_dash(status.map(|s| s.latest_bundle.as_str()))),
            Cell::plain(or_dash(ready)),
            Cell::plain(age(beacon.metadata.creation_timestamp.as_ref(), now)),
        ];
        if columns.wide() {
            row.extend([
                Cell::plain(or_dash(beacon.spec.interval.as_deref())),
                Cell::plain(age(status.and_then(|s| s.last_polled.as_ref()), now)),
                Cell::plain(if beacon.spec.suspend { "yes" } else { "no" }),
                Cell::plain(condition.map(|c| c.message.clone()).unwrap_or_default()),
            ]);
        }
        table.row(row);
    }
    table.render(style, columns)
}

/// `hecate notifications`: a row per Notifier, then a row per notice it sent or is
/// sending. Wide: the Notifier's condition message, and each notice's error.
pub(crate) fn notifications(
    told: &Notifications,
    now: Timestamp,
    columns: Columns,
    style: &Style,
) -> String {
    if told.notifiers.is_empty() {
        let about = match &told.gate {
            Some(gate) => format!("{gate}'s releases"),
            None => "its releases".to_string(),
        };
        return format!(
            "No Notifiers in {}: nobody is told about {about} (docs/NOTIFICATIONS.md)\n",
            told.namespace
        );
    }
    let mut header = vec!["NOTIFIER", "TYPE", "READY", "HEARS"];
    if columns.wide() {
        header.push("MESSAGE");
    }
    let mut table = Table::new(&header);
    for notifier in &told.notifiers {
        let ready = match (notifier.suspended, notifier.ready) {
            (true, _) => "Suspended".to_string(),
            (false, None) => "-".to_string(),
            (false, Some(ready)) => format!(
                "{} ({})",
                if ready { "True" } else { "False" },
                notifier.reason
            ),
        };
        let colour = match notifier.ready {
            Some(false) => Some(Colour::Red),
            _ => None,
        };
        let mut row = vec![
            Cell::plain(notifier.name.clone()),
            Cell::plain(notifier.destination.clone()),
            Cell::styled(ready, style, colour),
            Cell::plain(notifier.hears.clone()),
        ];
        if columns.wide() {
            row.push(Cell::plain(notifier.message.clone()));
        }
        table.row(row);
    }
    let mut out = table.render(style, columns);
    out.push('\n');
    if told.sent.is_empty() {
        out.push_str("Nothing sent yet.\n");
        return out;
    }
    let mut header = vec![
        "WHEN", "NOTIFIER", "KIND", "GATE", "OUTCOME", "TRIES", "SUMMARY",
    ];
    if columns.wide() {
        header.extend(["PASSAGE", "ERROR"]);
    }
    let mut table = Table::new(&header);
    for sent in &told.sent {
        let gate = if sent.about_namespace == sent.namespace {
            sent.gate.clone()
        } else {
            format!("{}/{}", sent.about_namespace, sent.gate)
        };
        let colour = match sent.outcome {
            NoticeOutcome::Sent => None,
            NoticeOutcome::Retrying => Some(Colour::Yellow),
            NoticeOutcome::Failed => Some(Colour::Red),
        };
        let outcome = sent.outcome.as_str();
        let mut row = vec![
            Cell::plain(age(
                Some(sent.last_attempt.as_ref().unwrap_or(&sent.at)),
                now,
            )),
            Cell::plain(sent.notifier.clone()),
            Cell::plain(sent.kind.as_str()),
            Cell::plain(gate),
            Cell::styled(outcome, style, colour),
            Cell::plain(sent.attempts.to_string()),
            Cell::plain(sent.summary.clone()),
        ];
        if columns.wide() {
            row.extend([
                Cell::plain(or_dash(Some(sent.passage.as_str()))),
                Cell::plain(or_dash(Some(sent.error.as_str()))),
            ]);
        }
        table.row(row);
    }
    out.push_str(&table.render(style, columns));
    out
}

/// `hecate audit`. Wide, before the detail: the Passage, and whether the crossing's
/// evidence was verified.
pub(crate) fn audit(
    entries: &[AuditEntry],
    namespace: &str,
    columns: Columns,
    style: &Style,
) -> String {
    if entries.is_empty() {
        return format!("nothing has happened in {namespace} yet\n");
    }
    let mut header = vec!["WHEN", "WHAT", "GATE", "BUNDLE", "ACTOR"];
    if columns.wide() {
        header.extend(["PASSAGE", "VERIFIED"]);
    }
    header.push("DETAIL");
    let mut table = Table::new(&header);
    for entry in entries {
        let (what, colour) = match entry.kind {
            // A rollback says so, and what it undid (DECISION 153).
            AuditKind::Crossed if entry.rollback_of.is_some() => {
                ("rolled back", Some(Colour::Yellow))
            }
            AuditKind::Crossed => ("crossed", Some(Colour::Green)),
            AuditKind::Running if entry.rollback_of.is_some() => {
                ("rolling back", Some(Colour::Cyan))
            }
            // How it ended, in the words Passages use (ops' `outcome`).
            AuditKind::Refused => (
                entry.outcome.map_or("refused", |o| o.as_str()),
                Some(Colour::Red),
            ),
            AuditKind::Running => ("running", Some(Colour::Cyan)),
            AuditKind::Approved => ("approved", None),
            AuditKind::Aborted => ("aborted", Some(Colour::Yellow)),
            AuditKind::Rejected => ("rejected", Some(Colour::Red)),
            AuditKind::Withdrawn => ("withdrawn", None),
        };
        let mut detail = entry.detail.clone();
        if let Some(rollback) = &entry.rollback_of {
            detail = if detail.is_empty() {
                rollback.words()
            } else {
                format!("{}; {detail}", rollback.words())
            };
        }
        if let Some(evidence) = entry.evidence.as_ref().filter(|e| !e.trail.is_empty()) {
            let verdict = if evidence.verdict.is_empty() {
                String::new()
            } else {
                format!(" {}", evidence.verdict)
            };
            detail = format!(
                "{detail}{}fides{verdict} {}",
                if detail.is_empty() { "" } else { "; " },
                evidence.trail
            );
        }
        let mut row = vec![
            Cell::plain(entry.at.0.strftime("%Y-%m-%d %H:%M:%S").to_string()),
            Cell::styled(what, style, colour),
            Cell::plain(entry.gate.clone()),
            Cell::plain(or_dash(Some(&entry.bundle))),
            Cell::plain(or_dash(Some(&entry.actor))),
        ];
        if columns.wide() {
            row.extend([
                Cell::plain(or_dash(Some(&entry.passage))),
                Cell::plain(match entry.verified {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "-",
                }),
            ]);
        }
        row.push(Cell::plain(detail));
        table.row(row);
    }
    table.render(style, columns)
}

/// `hecate preflight`: one row per eligible Bundle — ready, would be refused (and
/// what it misses, for which policies), or unknown (and why). It has no more to show
/// wide.
pub(crate) fn preflight(
    verdicts: &[Preflight],
    gate: &str,
    columns: Columns,
    style: &Style,
) -> String {
    if verdicts.is_empty() {
        return format!(
            "nothing to check: {gate} has no eligible Bundles, or does not gate on evidence\n"
        );
    }
    let mut table = Table::new(&["BUNDLE", "EVIDENCE", "DETAIL"]);
    for verdict in verdicts {
        let (word, colour, detail) = if !verdict.unknown.is_empty() {
            ("unknown", Colour::Yellow, verdict.unknown.clone())
        } else if verdict.compliant {
            ("ready", Colour::Green, String::new())
        } else {
            let needs = if verdict.missing.is_empty() {
                "Fides says it is not compliant".to_string()
            } else {
                format!("needs {}", verdict.missing.join(", "))
            };
            let policies = if verdict.policies.is_empty() {
                String::new()
            } else {
                format!(" \u{2014} for {}", verdict.policies.join(", "))
            };
            (
                "would be refused",
                Colour::Red,
                format!("{needs}{policies}"),
            )
        };
        table.row(vec![
            Cell::plain(verdict.bundle.clone()),
            Cell::styled(word, style, Some(colour)),
            Cell::plain(detail),
        ]);
    }
    table.render(style, columns)
}

/// `hecate flux <gate>`: the Flux objects the Gate depends on — a CLUSTER column when
/// some are in connected clusters (as the controller last assessed them). Wide,
/// before the detail: each one's namespace, and the last reconcile request Flux
/// handled.
pub(crate) fn flux(
    resources: &[FluxResource],
    gate: &str,
    columns: Columns,
    style: &Style,
) -> String {
    if resources.is_empty() {
        return format!("Gate {gate} watches no Flux objects\n");
    }
    let remote = resources.iter().any(|r| !r.cluster.is_empty());
    let mut header = vec!["OBJECT"];
    if remote {
        header.push("CLUSTER");
    }
    header.extend(["HEALTH", "SUSPENDED", "REVISION"]);
    if columns.wide() {
        header.extend(["NAMESPACE", "HANDLED"]);
    }
    header.push("DETAIL");
    let mut table = Table::new(&header);
    for resource in resources {
        let (health, colour) = if resource.missing {
            ("Missing".to_string(), Some(Colour::Yellow))
        } else {
            (
                resource.health.as_str().to_string(),
                health_colour(resource.health),
            )
        };
        let mut row = vec![Cell::plain(format!("{}/{}", resource.kind, resource.name))];
        if remote {
            row.push(Cell::plain(if resource.cluster.is_empty() {
                "in-cluster".to_string()
            } else {
                resource.cluster.clone()
            }));
        }
        row.extend([
            Cell::styled(health, style, colour),
            // Whether a connected cluster's object is suspended is not recorded.
            Cell::styled(
                match (resource.cluster.is_empty(), resource.suspended) {
                    (false, _) => "-",
                    (true, true) => "yes",
                    (true, false) => "no",
                },
                style,
                resource.suspended.then_some(Colour::Yellow),
            ),
            Cell::plain(or_dash(Some(&resource.revision))),
        ]);
        if columns.wide() {
            row.extend([
                Cell::plain(resource.namespace.clone()),
                Cell::plain(or_dash(Some(&resource.last_handled))),
            ]);
        }
        row.push(Cell::plain(resource.detail.clone()));
        table.row(row);
    }
    table.render(style, columns)
}

/// `hecate flux suspend|resume`'s line.
pub(crate) fn flux_suspended(answer: &FluxSuspended) -> String {
    let done = if answer.suspended {
        "suspended: Flux leaves it alone until it is resumed"
    } else {
        "resumed: Flux reconciles it again"
    };
    format!("{}/{} {done}\n", answer.kind, answer.name)
}

/// `hecate flux reconcile`'s line.
pub(crate) fn flux_reconciled(answer: &FluxReconciled) -> String {
    format!(
        "asked Flux to reconcile {}/{} now (requestedAt {})\n",
        answer.kind, answer.name, answer.requested_at
    )
}

#[cfg(test)]
mod tests;

/// A trail id as people read it: the text before the first `-`, else the first eight
/// characters.
pub(crate) fn short_trail(id: &str) -> &str {
    match id.find('-') {
        Some(i) if i > 0 => &id[..i],
        _ => id.get(..8).filter(|_| id.len() > 8).unwrap_or(id),
    }
}

/// `hecate verify`.
pub(crate) fn verify(reports: &[VerifyReport], subject: &str, style: &Style) -> String {
    if reports.is_empty() {
        return format!(
            "{subject} has no recorded evidence: no crossing of it wrote a Fides trail\n"
        );
    }
    let mut out = String::new();
    for report in reports {
        let trail = short_trail(&report.trail);
        let place = if report.gate.is_empty() {
            format!("trail {trail}")
        } else {
            format!("{} (trail {trail})", report.gate)
        };
        let (mark, line) = match report.verdict {
            ChainState::CouldNotCheck => (style.paint(Colour::Yellow, "?"), report.reason.clone()),
            ChainState::Broken => (
                style.paint(Colour::Red, "✗"),
                format!(
                    "chain BROKEN at entry {}: {}",
                    report.broken_at.unwrap_or(-1),
                    report.reason
                ),
            ),
            ChainState::NothingRecorded => (
                style.paint(Colour::Yellow, "?"),
                "no attestations: the trail is empty, or does not exist".to_string(),
            ),
            ChainState::Valid => {
                let count = if report.attestations == 1 {
                    "1 attestation".to_string()
                } else {
                    format!("{} attestations", report.attestations)
                };
                let date = report.anchored_at.get(..10).unwrap_or(&report.anchored_at);
                let anchor = match report.anchored {
                    None => ", not externally anchored".to_string(),
                    Some(false) if date.is_empty() => ", not externally anchored".to_string(),
                    Some(false) => {
                        format!(", anchored {date} but the anchor covers a different chain head")
                    }
                    Some(true) => format!(", anchored {date}"),
                };
                (
                    style.paint(Colour::Green, "✓"),
                    format!("chain valid: {count}{anchor}"),
                )
            }
        };
        out.push_str(&format!("{mark} {place}\n  {line}\n"));
    }
    out
}

/// `hecate evidence`.
pub(crate) fn evidence(e: &Evidence, style: &Style) -> String {
    let mut out = format!(
        "{} in {}\n",
        style.paint(Colour::Bold, &e.bundle),
        e.namespace
    );
    let mut field = |name: &str, value: String| out.push_str(&format!("  {name:<10} {value}\n"));
    if !e.digest.is_empty() {
        field("digest:", e.digest.clone());
    }
    if !e.trail.is_empty() {
        field("trail:", format!("{} (Fides of Gate {})", e.trail, e.gate));
    }
    if !e.unavailable.is_empty() {
        field("evidence:", format!("none: {}", e.unavailable));
    }
    if let Some(verdict) = &e.verdict {
        let colour = if change::verdict_holds(verdict) {
            Colour::Yellow
        } else {
            Colour::Green
        };
        field(
            "verdict:",
            format!(
                "{}, risk {} ({})",
                style.paint(colour, &verdict.recommendation),
                verdict.risk_score,
                verdict.risk_level
            ),
        );
        for blocker in change::blockers(verdict) {
            field("", format!("- {blocker}"));
        }
        let approvals = &verdict.approvals;
        let mut who = approvals.approvers.clone();
        who.extend(
            approvals
                .deployers
                .iter()
                .map(|d| format!("{d} (deployer)")),
        );
        field(
            "approvals:",
            format!(
                "{} ({} by people, four eyes: {}){}",
                approvals.count,
                approvals.human_approvers,
                if approvals.four_eyes { "yes" } else { "no" },
                if who.is_empty() {
                    String::new()
                } else {
                    format!(": {}", who.join(", "))
                }
            ),
        );
        if let Some(sod) = &verdict.segregation_of_duties {
            let finding = if sod.compliant {
                "compliant".to_string()
            } else {
                format!("not compliant: {}", sod.violations.join("; "))
            };
            field("duties:", finding);
        }
        field(
            "evidence:",
            format!(
                "{} attestations, {} not compliant",
                verdict.attestations.total, verdict.attestations.non_compliant
            ),
        );
    }
    if let Some(change) = &e.change {
        field(
            "change:",
            format!("{} ({}, {})", change.number, change.state, change.approval),
        );
    }
    for approval in &e.approved_in {
        field(
            "approved:",
            format!(
                "for {} by {} at {}",
                approval.gate,
                approval.actor,
                approval.at.0.strftime("%Y-%m-%d %H:%M:%S")
            ),
        );
    }
    // The cluster's record of each crossing's verification, newest first (DECISION
    // 139): a line per crossing, one per verifier under it.
    for record in &e.verifications {
        let colour = verification_colour(record.phase);
        let when = match (
            record.phase.is_final(),
            &record.finished_at,
            &record.started_at,
        ) {
            (true, Some(at), _) => format!(" at {}", at.0.strftime("%Y-%m-%d %H:%M:%S")),
            (false, _, Some(at)) => format!(" since {}", at.0.strftime("%Y-%m-%d %H:%M:%S")),
            _ => String::new(),
        };
        let said = matches!(
            record.phase,
            VerificationPhase::Failed | VerificationPhase::Superseded
        );
        let why = if said && !record.message.is_empty() {
            format!(": {}", record.message)
        } else {
            String::new()
        };
        field(
            "verified:",
            format!(
                "{} ({}): {}{when}{why}",
                record.gate,
                record.passage,
                style.paint(colour, record.phase.as_str())
            ),
        );
        for verifier in &record.verifiers {
            field(
                "",
                format!(
                    "- {} {}: {}",
                    verifier.uses,
                    verifier.phase.as_str(),
                    verification::verifier_words(verifier)
                ),
            );
        }
    }
    out
}

/// `hecate metrics`: each Gate's four figures, the pipeline's, what they rest on and
/// where the time goes — ops' figures (DECISION 138), in words.
pub(crate) fn delivery(d: &Delivery, columns: Columns, style: &Style) -> String {
    if d.gates.is_empty() {
        return format!("no Gates in {}\n", d.namespace);
    }
    let mut header = vec![
        "GATE",
        "LEAD TIME",
        "DEPLOYMENTS",
        "FAILURE RATE",
        "TIME TO RESTORE",
    ];
    if columns.wide() {
        header.push("WHERE THE TIME GOES");
    }
    let mut table = Table::new(&header);
    for gate in &d.gates {
        let mut row = vec![Cell::plain(gate.gate.clone())];
        row.extend(figure_cells(&gate.figures, style));
        if columns.wide() {
            row.push(Cell::plain(time_goes(&gate.figures.lead_time.parts)));
        }
        table.row(row);
    }
    let mut out = table.render(style, columns);
    if let Some(pipeline) = &d.pipeline {
        let f = &pipeline.figures;
        out.push_str(&format!(
            "\nwhere releases end up ({}): {}; {}; {}; {}\n",
            pipeline.gates.join(", "),
            lead_words(&f.lead_time),
            frequency_words(&f.deployment_frequency),
            failure_words(&f.change_failure_rate),
            restore_words(&f.time_to_restore),
        ));
        out.push_str(&reach_words(
            &pipeline.reach,
            f.change_failure_rate.crossings,
        ));
        caution(&mut out, &f.caution);
        let parts = time_goes(&f.lead_time.parts);
        if parts != "-" {
            out.push_str(&format!("where the time goes: {parts}\n"));
        }
    } else if let [gate] = d.gates.as_slice() {
        out.push('\n');
        out.push_str(&reach_words(
            &gate.reach,
            gate.figures.change_failure_rate.crossings,
        ));
        caution(&mut out, &gate.figures.caution);
        let parts = time_goes(&gate.figures.lead_time.parts);
        if parts != "-" {
            out.push_str(&format!("where the time goes: {parts}\n"));
        }
    }
    out
}

/// Ops' caution about figures that rest on few crossings, on a line of its own.
fn caution(out: &mut String, caution: &str) {
    if !caution.is_empty() {
        out.push_str(caution);
        out.push('\n');
    }
}

/// "1m 35s", "30m", "1d 3h": the two largest units, as the UI writes them.
fn seconds(n: u64) -> String {
    let mut rest = n;
    let mut parts = Vec::new();
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] {
        if rest >= size {
            parts.push(format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    if parts.len() < 2 && (rest > 0 || parts.is_empty()) {
        parts.push(format!("{rest}s"));
    }
    parts.truncate(2);
    parts.join(" ")
}

fn figure_cells(f: &Figures, style: &Style) -> Vec<Cell> {
    let lead = &f.lead_time;
    let rate = &f.change_failure_rate;
    let restore = &f.time_to_restore;
    let rate_colour = match rate.rate {
        Some(r) if r > 0.0 => Some(Colour::Red),
        Some(_) => Some(Colour::Green),
        None => None,
    };
    vec![
        Cell::plain(match (lead.median_seconds, lead.p90_seconds) {
            (Some(median), Some(p90)) => format!("{} (p90 {})", seconds(median), seconds(p90)),
            _ => "-".into(),
        }),
        Cell::plain(format!(
            "{} ({}/day)",
            f.deployment_frequency.crossings, f.deployment_frequency.per_day
        )),
        Cell::styled(
            match rate.rate {
                Some(r) => format!("{}% of {}", (r * 100.0).round(), rate.crossings),
                None => "-".into(),
            },
            style,
            rate_colour,
        ),
        Cell::styled(
            match (restore.median_seconds, &restore.open_since) {
                (_, Some(_)) => "failing now".to_string(),
                (Some(median), None) => seconds(median),
                (None, None) => "-".into(),
            },
            style,
            restore.open_since.as_ref().map(|_| Colour::Red),
        ),
    ]
}

fn lead_words(lead: &LeadTime) -> String {
    match (lead.median_seconds, lead.p90_seconds) {
        (Some(median), Some(p90)) => format!(
            "lead time {} median, {} p90 over {} deployments",
            seconds(median),
            seconds(p90),
            lead.crossings
        ),
        _ => "no lead time yet".into(),
    }
}

fn frequency_words(f: &DeploymentFrequency) -> String {
    format!("{} deployments a day ({} a week)", f.per_day, f.per_week)
}

fn failure_words(rate: &ChangeFailureRate) -> String {
    match rate.rate {
        Some(r) => format!(
            "{}% of {} crossings failed",
            (r * 100.0).round(),
            rate.crossings
        ),
        None => "nothing crossed".into(),
    }
}

fn restore_words(restore: &TimeToRestore) -> String {
    let mut words = match restore.median_seconds {
        Some(median) => format!(
            "restored in {} (median of {})",
            seconds(median),
            restore.restored
        ),
        None if restore.failures == 0 => "no failures".into(),
        None => "nothing restored yet".into(),
    };
    if let Some(since) = &restore.open_since {
        words.push_str(&format!(
            ", failing since {}",
            since.0.strftime("%Y-%m-%d %H:%M UTC")
        ));
    }
    words
}

/// "from 14 crossings since 2026-11-03 10:00 UTC", and whether older ones are gone.
fn reach_words(reach: &Reach, crossings: usize) -> String {
    let mut line = format!(
        "figures from {crossings} crossings since {}",
        reach.from.0.strftime("%Y-%m-%d %H:%M UTC")
    );
    if reach.partial {
        line.push_str("; older crossings are no longer kept");
    }
    line.push('\n');
    line
}

/// "upstream 40%, approval 30%, steps 30%", or "-" when nothing has a lead time.
fn time_goes(parts: &LeadTimeParts) -> String {
    let total = parts.total();
    if total == 0 {
        return "-".into();
    }
    let shares = [
        ("emission", parts.emission_seconds),
        ("upstream", parts.upstream_seconds),
        ("approval", parts.approval_seconds),
        ("window", parts.window_seconds),
        ("queued", parts.queued_seconds),
        ("steps", parts.steps_seconds),
    ];
    shares
        .iter()
        .filter(|(_, s)| *s > 0)
        .map(|(name, s)| format!("{name} {}%", (*s as f64 * 100.0 / total as f64).round()))
        .collect::<Vec<_>>()
        .join(", ")
}
