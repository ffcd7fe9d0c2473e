//! What is in the environment while a rollout is under way: the Gate's occupant, per
//! target — "v1.4.0 on 3 of 5 targets; eu-2 failed" — judged here once, for the Gate's
//! status, Explain, the CLI and the UI alike.

use hecate_types::{RolloutPhase, RolloutStatus};
use jiff::Timestamp;

use super::listed;
use super::plan::Plan;
use super::step::{FailedTarget, Records, next};

/// Where one Bundle stands across a Gate's targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// The Bundle's version, as people call it.
    pub version: String,
    /// Where its rollout stands.
    pub phase: RolloutPhase,
    /// How many targets the Gate spans now.
    pub of: usize,
    /// The present targets it is on: crossed (and verified, where the Gate verifies).
    pub on: Vec<String>,
    /// Those crossing now.
    pub crossing: Vec<String>,
    /// Those whose crossing failed, and counts: each where and why.
    pub failed: Vec<FailedTarget>,
    /// Those whose crossing failed, and a person accepted it.
    pub accepted: Vec<String>,
}

/// `version`'s standing across the targets of `plan`, from its rollout's record, at
/// `now` (a target past its deadline has failed): what the controller judges with.
pub fn occupancy(version: &str, plan: &Plan, status: &RolloutStatus, now: Timestamp) -> Occupancy {
    let phase = next(plan, status, now).decision.phase();
    standing(
        version,
        phase,
        plan.targets(),
        &Records::of(plan, status, now),
    )
}

/// `version`'s standing from its rollout's record alone, as the controller last wrote
/// it — its phase, its present targets — for whoever reads the Passage without the
/// Gate's clusters: Explain, the CLI, the UI.
pub fn recorded(version: &str, status: &RolloutStatus) -> Occupancy {
    let present = status
        .targets
        .iter()
        .filter(|r| r.departed_at.is_none())
        .map(|r| r.name.as_str());
    standing(version, status.phase, present, &Records::recorded(status))
}

fn standing<'a>(
    version: &str,
    phase: RolloutPhase,
    targets: impl Iterator<Item = &'a str>,
    records: &Records<'_>,
) -> Occupancy {
    let mut occupancy = Occupancy {
        version: version.to_string(),
        phase,
        of: 0,
        on: Vec::new(),
        crossing: Vec::new(),
        failed: Vec::new(),
        accepted: Vec::new(),
    };
    for target in targets {
        occupancy.of += 1;
        if records.succeeded(target) {
            occupancy.on.push(target.to_string());
        } else if records.under_way(target) {
            occupancy.crossing.push(target.to_string());
        } else if records.failed(target) && records.accepted(target) {
            occupancy.accepted.push(target.to_string());
        } else if records.failed(target) {
            occupancy.failed.push(records.failure(target));
        }
    }
    occupancy
}

impl Occupancy {
    /// The names of the targets whose failure counts.
    pub fn failed_names(&self) -> Vec<String> {
        self.failed.iter().map(|f| f.name.clone()).collect()
    }

    /// In words: "v1.4.0 on 3 of 5 targets; eu-2 failed", "v1.4.0 on all 5
    /// targets", "v1.4.0 on 1 of 5 targets; eu-2 and eu-3 crossing".
    pub fn words(&self) -> String {
        let on = self.on.len();
        let mut words = match (on == self.of, self.of) {
            (true, 1) => format!("{} on its one target", self.version),
            (true, _) => format!("{} on all {} targets", self.version, self.of),
            (false, 1) => format!("{} on 0 of 1 target", self.version),
            (false, of) => format!("{} on {on} of {of} targets", self.version),
        };
        if !self.failed.is_empty() {
            words.push_str(&format!("; {} failed", listed(&self.failed_names())));
        }
        if !self.accepted.is_empty() {
            words.push_str(&format!("; {} failed (accepted)", listed(&self.accepted)));
        }
        if !self.crossing.is_empty() {
            words.push_str(&format!("; {} crossing", listed(&self.crossing)));
        }
        if self.phase == RolloutPhase::Halted {
            words.push_str("; halted");
        }
        words
    }
}
