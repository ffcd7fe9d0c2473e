//! What is in the environment while a rollout is under way: the Gate's occupant, per
//! target — "v1.4.0 on 3 of 5 targets; eu-2 failed" — judged here once, for the Gate's
//! status, Explain, the CLI and the UI alike.

use hecate_types::{RolloutPhase, RolloutStatus};
use jiff::Timestamp;

use super::listed;
use super::plan::Plan;
use super::step::{Records, next};

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
    /// Those whose crossing failed, and counts.
    pub failed: Vec<String>,
    /// Those whose crossing failed, and a person accepted it.
    pub accepted: Vec<String>,
}

/// `version`'s standing across the targets of `plan`, from its rollout's record, at
/// `now` (a target past its deadline has failed).
pub fn occupancy(version: &str, plan: &Plan, status: &RolloutStatus, now: Timestamp) -> Occupancy {
    let records = Records::of(plan, status, now);
    let pick = |keep: &dyn Fn(&str) -> bool| -> Vec<String> {
        plan.targets()
            .filter(|t| keep(t))
            .map(str::to_string)
            .collect()
    };
    Occupancy {
        version: version.to_string(),
        phase: next(plan, status, now).decision.phase(),
        of: plan.targets().count(),
        on: pick(&|t| records.succeeded(t)),
        crossing: pick(&|t| records.under_way(t)),
        failed: pick(&|t| records.failed(t) && !records.accepted(t)),
        accepted: pick(&|t| records.failed(t) && records.accepted(t)),
    }
}

impl Occupancy {
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
            words.push_str(&format!("; {} failed", listed(&self.failed)));
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
