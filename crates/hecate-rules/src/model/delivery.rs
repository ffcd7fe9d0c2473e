//! How well a namespace delivers: the four DORA figures per Gate and for the pipeline's
//! last stage, and the crossings they rest on (DECISION 138). Judged in
//! [`crate::rules::delivery`] from the records Explain already reads.

use hecate_types::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A namespace's delivery figures over a period.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The namespace.
    pub namespace: String,
    /// The start of the period asked for.
    pub since: Time,
    /// The end of the period: when the figures were judged.
    pub until: Time,
    /// Each Gate's figures, upstream first.
    pub gates: Vec<GateDelivery>,
    /// The figures of the pipeline's last stage (where releases end up), its Gates'
    /// crossings taken together; absent when one Gate was asked for, or the namespace
    /// has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<PipelineDelivery>,
}

/// One Gate's figures.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateDelivery {
    /// The Gate.
    pub gate: String,
    /// Its stage in the pipeline (0: takes Bundles straight from Beacons).
    pub stage: usize,
    /// What the figures cover.
    pub reach: Reach,
    /// The four figures.
    #[serde(flatten)]
    pub figures: Figures,
    /// The crossings of the period the figures rest on, oldest first: what a plot
    /// draws.
    pub crossings: Vec<DeliveredCrossing>,
}

/// The figures of the pipeline's last stage.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PipelineDelivery {
    /// The Gates of the last stage, by name.
    pub gates: Vec<String>,
    /// What the figures cover: the earliest of those Gates' reaches.
    pub reach: Reach,
    /// The four figures, over those Gates' crossings together.
    #[serde(flatten)]
    pub figures: Figures,
}

/// How far back the records behind a set of figures reach. A Gate keeps its newest
/// `spec.retain` finished Passages (and those its history names); older crossings are
/// gone, and the figures say so instead of pretending.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reach {
    /// Where the figures start: the period's start, or later — the first record (the
    /// Gate's creation, or an older crossing of it still kept), or the oldest crossing
    /// still kept where older ones may have been collected.
    pub from: Time,
    /// Whether crossings of the period may have been collected already (the Gate
    /// keeps as many finished Passages as it retains): the figures reach back to
    /// `from` only.
    pub partial: bool,
    /// The oldest crossing still kept, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_kept: Option<Time>,
}

/// The four figures, each with how many records it rests on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    /// From the commit (where its Beacon recorded the time; else the Bundle's
    /// emission) to its crossing into the Gate.
    pub lead_time: LeadTime,
    /// Deployments (crossings that entered the Gate) per day and per week.
    pub deployment_frequency: DeploymentFrequency,
    /// Crossings that failed, were aborted, failed verification or were rolled back,
    /// over all crossings.
    pub change_failure_rate: ChangeFailureRate,
    /// From a failed change to the next successful crossing.
    pub time_to_restore: TimeToRestore,
    /// What to make of figures that rest on few crossings, in words; empty when they
    /// rest on ten or more, or on none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub caution: String,
}

/// Lead time for changes over the period's deployments (crossings that entered the
/// Gate, whatever came after).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LeadTime {
    /// How many deployments it rests on (those whose Bundle is still kept).
    pub crossings: usize,
    /// The median, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_seconds: Option<u64>,
    /// The 90th percentile (nearest rank), in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_seconds: Option<u64>,
    /// Where the time went, summed over those crossings.
    pub parts: LeadTimeParts,
}

/// A lead time split into what it was spent on; the parts add up to the whole.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LeadTimeParts {
    /// From the commit to the Bundle's emission — building, tagging, publishing, the
    /// Beacon's next look — where the Beacon recorded the commit's time (DECISION
    /// 140); 0 where it did not, and lead time starts at the emission.
    #[serde(default)]
    pub emission_seconds: u64,
    /// Until the Gates upstream cleared the Bundle (their crossing and verification).
    pub upstream_seconds: u64,
    /// Then until the approval the Gate asks for was given.
    pub approval_seconds: u64,
    /// Then, while every promotion window was closed.
    pub window_seconds: u64,
    /// Then, the rest of the wait before the steps ran: a person to promote, a
    /// crossing ahead of it.
    pub queued_seconds: u64,
    /// Running the crossing's steps.
    pub steps_seconds: u64,
}

impl LeadTimeParts {
    /// The whole lead time.
    pub fn total(&self) -> u64 {
        self.emission_seconds
            + self.upstream_seconds
            + self.approval_seconds
            + self.window_seconds
            + self.queued_seconds
            + self.steps_seconds
    }

    /// `self` and `other` added part by part.
    pub fn plus(self, other: Self) -> Self {
        Self {
            emission_seconds: self.emission_seconds + other.emission_seconds,
            upstream_seconds: self.upstream_seconds + other.upstream_seconds,
            approval_seconds: self.approval_seconds + other.approval_seconds,
            window_seconds: self.window_seconds + other.window_seconds,
            queued_seconds: self.queued_seconds + other.queued_seconds,
            steps_seconds: self.steps_seconds + other.steps_seconds,
        }
    }
}

/// Deployment frequency: deployments over the days the figures reach.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentFrequency {
    /// How many deployments it rests on.
    pub crossings: usize,
    /// The days it is counted over (from the reach's start to now, at least one).
    pub days: f64,
    /// Crossings per day.
    pub per_day: f64,
    /// Crossings per week.
    pub per_week: f64,
}

/// Change failure rate: failed changes over all finished crossings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeFailureRate {
    /// How many finished crossings it rests on.
    pub crossings: usize,
    /// How many of them count as failed changes.
    pub failed: usize,
    /// `failed / crossings`; absent when nothing crossed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// The failed changes by how they failed.
    pub by: FailureCounts,
}

/// Failed changes by how they failed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureCounts {
    /// A step failed.
    pub failed: usize,
    /// Someone stopped the crossing.
    pub aborted: usize,
    /// It crossed; its verification said no.
    pub unverified: usize,
    /// It crossed; an older Bundle crossed after it (rolled back).
    pub rolled_back: usize,
}

/// Time to restore: from a failed change to the next successful crossing.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimeToRestore {
    /// How many failures began in the period (a run of failed changes with no success
    /// between is one).
    pub failures: usize,
    /// How many of them were restored; the figures rest on these.
    pub restored: usize,
    /// The median time to restore, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_seconds: Option<u64>,
    /// The longest, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_seconds: Option<u64>,
    /// When the failure that is not restored yet began, if one is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_since: Option<Time>,
}

/// One finished crossing as the figures count it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveredCrossing {
    /// The Passage.
    pub passage: String,
    /// The Bundle it carried.
    pub bundle: String,
    /// When it finished.
    pub finished_at: Time,
    /// How it counts.
    pub outcome: DeliveryOutcome,
    /// Its lead time split into parts; absent for a crossing that did not enter the
    /// Gate, or whose Bundle is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_time: Option<LeadTimeParts>,
}

/// How a finished crossing counts. Every outcome but `succeeded` is a failed change.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DeliveryOutcome {
    /// It crossed and stood.
    Succeeded,
    /// A step failed.
    Failed,
    /// Someone stopped it.
    Aborted,
    /// It crossed; its verification said no.
    Unverified,
    /// It crossed; an older Bundle crossed after it.
    RolledBack,
}

impl DeliveryOutcome {
    /// Whether it is a failed change.
    pub fn is_failure(self) -> bool {
        self != Self::Succeeded
    }

    /// Whether the Bundle entered the Gate (a deployment happened).
    pub fn deployed(self) -> bool {
        matches!(self, Self::Succeeded | Self::Unverified | Self::RolledBack)
    }

    /// The stable word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Aborted => "aborted",
            Self::Unverified => "unverified",
            Self::RolledBack => "rolledBack",
        }
    }
}
