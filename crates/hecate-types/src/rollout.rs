//! Fan-out: one Gate spanning many places (DECISION 151). A Gate's `spec.targets`
//! names where its release goes — places listed one by one, connected clusters chosen
//! by label, or both — and `spec.rollout` in what waves; the Passage that crosses it
//! records each target's own crossing in `status.rollout`.
//!
//! Every field here is Hecate's own and optional: a Gate without `targets` is one
//! place, as the reference knows it, and its Passages carry no `rollout`. What the
//! fields mean — which targets there are, which wave each is in, what the budgets
//! allow, what a rollout does next — is judged in hecate-ops (`rules::rollout`); this
//! module holds the shapes and the one rule that belongs to the data itself, how a
//! label selector matches labels.

use std::collections::BTreeMap;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::limits::{
    MAX_ACTOR_CHARS, MAX_REASON_CODE_CHARS, MAX_REVISION_CHARS, MAX_ROLLOUT_MESSAGE_BYTES,
    MAX_ROLLOUT_REQUESTS, MAX_SELECTOR_TERMS, MAX_TARGET_MESSAGE_BYTES, MAX_TARGET_NAME,
    MAX_TARGET_VARS, MAX_TARGETS, MAX_WAVES,
};
use crate::schema::is_zero;
use crate::{Health, Time, Var, VerificationPhase};

/// The places a Gate's release goes: each listed one, and each connected cluster the
/// selector matches. Either or both; listed targets come first, in their order, then
/// the selected clusters by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Targets {
    /// Places named one by one, each with its own cluster and values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_TARGETS))]
    pub list: Vec<Target>,
    /// The clusters connected to the namespace (Secrets labelled
    /// `hecate.dev/cluster: "true"`) whose labels match: each a target named after its
    /// Secret. `{}` matches every connected cluster. A cluster that comes to match
    /// later is brought to what the Gate runs; one that stops is no longer waited on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// One place a Gate's release goes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// The target's name: in the Passage's record, in waves' `names`, and in
    /// expressions as `target.name`. A Secret name of at most 63 characters.
    #[schemars(
        length(min = 1, max = MAX_TARGET_NAME),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub name: String,
    /// The Secret holding the kubeconfig of the cluster this target is; absent: the
    /// cluster Hecate runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_ref: Option<ClusterSecretRef>,
    /// Values this target's crossing reads as `vars.<name>`, over the Gate's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_TARGET_VARS))]
    pub vars: Vec<Var>,
}

/// A Secret in the Gate's namespace holding a cluster's kubeconfig, in the shape of
/// Flux's `kubeConfig.secretRef` (`fluxcd/pkg/apis/meta.SecretKeyReference`), so a
/// Secret written for Flux serves as it is (DECISION 154).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ClusterSecretRef {
    /// Name of the Secret.
    pub name: String,
    /// The key holding the kubeconfig; absent: `value`, else `value.yaml`, as Flux
    /// reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253), regex(pattern = r"^[-._a-zA-Z0-9]+$"))]
    pub key: Option<String>,
}

/// A label query, as Kubernetes writes one: every `matchLabels` pair and every
/// `matchExpressions` requirement must hold. An empty selector matches everything.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must be present with these values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = MAX_SELECTOR_TERMS))]
    pub match_labels: BTreeMap<String, String>,
    /// Requirements on labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_SELECTOR_TERMS))]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One requirement of a label selector: `key` `operator` `values`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct LabelSelectorRequirement {
    /// The label.
    #[schemars(length(min = 1, max = 317))]
    pub key: String,
    /// How the label relates to `values`.
    pub operator: SelectorOperator,
    /// The values `In` and `NotIn` compare with; empty for `Exists` and
    /// `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_SELECTOR_TERMS), inner(length(max = 63)))]
    pub values: Vec<String>,
}

/// How a label relates to a requirement's values.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum SelectorOperator {
    /// The label is present with one of the values.
    #[default]
    In,
    /// The label is absent, or present with none of the values.
    NotIn,
    /// The label is present, whatever its value.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

impl LabelSelector {
    /// Whether `labels` satisfy every term, as the Kubernetes API server judges a
    /// selector. A requirement whose values contradict its operator (`In` with none)
    /// matches nothing here; ops reports it as a problem of the Gate.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(key, value)| labels.get(key) == Some(value))
            && self.match_expressions.iter().all(|r| r.matches(labels))
    }
}

impl LabelSelectorRequirement {
    /// Whether `labels` satisfy this requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            SelectorOperator::In => value.is_some_and(|v| self.values.contains(v)),
            SelectorOperator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            SelectorOperator::Exists => value.is_some(),
            SelectorOperator::DoesNotExist => value.is_none(),
        }
    }
}

/// In what order a Gate's targets receive a release: waves, each starting once the one
/// before has finished within its budget and stayed healthy for its
/// `minSuccessTime`. No waves: one wave of every target.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Rollout {
    /// The waves, in order. A target goes in the first wave that selects it; targets
    /// no wave selects go in a last wave of their own, after every listed one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_WAVES))]
    pub waves: Vec<Wave>,
}

/// One wave of a rollout: which targets, how many at once, how many may fail, how long
/// it must stay healthy, and how long each target may take.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Wave {
    /// A name for people: `canary`, `eu`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(
        length(max = crate::names::DNS_LABEL_MAX),
        regex(pattern = crate::names::DNS_LABEL_PATTERN)
    )]
    pub name: String,
    /// The targets in this wave, by name or by their cluster's labels; absent: every
    /// target no earlier wave took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<WaveTargets>,
    /// How many of the wave's targets cross at once: a number, or a percentage of the
    /// wave (rounded up, at least one). Unset: all at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<CountOrPercent>,
    /// How many of the wave's targets may fail before the rollout halts: a number, or
    /// a percentage of the wave (rounded down). Unset: none — every wave, the first
    /// (the canary) above all, tolerates no failure unless told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failures: Option<CountOrPercent>,
    /// How long the wave must stay healthy after its last target succeeded before the
    /// next wave starts, as a Go duration (`10m`, `1h`). Unset: at once.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(regex(pattern = r"^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$"))]
    pub min_success_time: String,
    /// How long one target's crossing may take, from its start, before it counts as
    /// failed, as a Go duration; `None` or unset: no limit.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(regex(pattern = r"^(None|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$"))]
    pub progress_deadline: String,
}

/// Which targets a wave holds: those it names and those whose cluster's labels its
/// selector matches.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct WaveTargets {
    /// Targets by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_TARGETS), inner(length(max = MAX_TARGET_NAME)))]
    pub names: Vec<String>,
    /// Targets whose cluster's labels match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// A number, or a percentage as `"25%"` (Kubernetes' int-or-string): `maxConcurrency`
/// and `maxFailures`. A string of digits (`"3"`) is a number too, as Open Cluster
/// Management reads it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(untagged)]
pub enum CountOrPercent {
    /// A number of targets.
    Count(i64),
    /// `"25%"`, or digits.
    Text(String),
}

impl JsonSchema for CountOrPercent {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CountOrPercent".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "x-kubernetes-int-or-string": true,
            "pattern": "^((100|[0-9]{1,2})%|[0-9]+)$",
        })
    }
}

impl fmt::Display for CountOrPercent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Count(n) => write!(f, "{n}"),
            Self::Text(text) => f.write_str(text),
        }
    }
}

/// Where a rollout stands, on its Passage.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum RolloutPhase {
    /// Waves are crossing, or waiting to.
    #[default]
    Progressing,
    /// More targets failed than a wave's budget allows: no later wave starts, what
    /// succeeded stays, and a person decides (retry, roll back, or accept).
    Halted,
    /// Every wave finished within its budget: the Bundle clears the Gate.
    Completed,
    /// Every wave finished, some only because a person accepted their failures (named
    /// in `accepted`): the Bundle clears the Gate, and the record says who let it.
    Accepted,
}

impl RolloutPhase {
    /// The phase as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Progressing => "Progressing",
            Self::Halted => "Halted",
            Self::Completed => "Completed",
            Self::Accepted => "Accepted",
        }
    }

    /// Whether the rollout is over: `Completed` or `Accepted`. A halted one is not —
    /// a retry or an acceptance goes on with it.
    pub fn is_finished(self) -> bool {
        matches!(self, Self::Completed | Self::Accepted)
    }
}

/// How a rollout across a Gate's targets has got on: one record per target. Written
/// by the Gate's controller on the Passage; Hecate's own addition (DECISION 151).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    /// Where the rollout stands.
    pub phase: RolloutPhase,
    /// The wave under way, or the one that halted, counted from 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wave: i32,
    /// Where it stands, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_ROLLOUT_MESSAGE_BYTES))]
    pub message: String,
    /// One record per target, in the order of the plan. A target that left the Gate's
    /// targets after it started keeps its record, marked `departedAt`, while there is
    /// room: the present targets' records come first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_TARGETS))]
    pub targets: Vec<TargetStatus>,
    /// Records of departed targets left out to stay within the bound.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted_targets: i32,
    /// How many of the Passage's `spec.rollout.retries` the controller has carried
    /// out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries_done: i32,
    /// How many of its `spec.rollout.acceptances` the controller has carried out
    /// (an acceptance of a rollout that was not halted is carried out as refused, and
    /// said in `message`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub acceptances_done: i32,
    /// The crossing the rollout carries out ([`crate::PassageSpec::crossing_digest`]):
    /// a change of the spec that keeps it is a request, not another crossing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 64))]
    pub crossing: String,
    /// Failures people accepted so the rollout could go on: who, when, why, which.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_WAVES))]
    pub accepted: Vec<AcceptedFailures>,
}

/// What people asked of a rollout under way, on its Passage's spec (DECISION 157).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct RolloutRequests {
    /// Retries: each crosses again the targets that had failed when the controller
    /// carried it out; nothing that succeeded or is under way restarts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_ROLLOUT_REQUESTS))]
    pub retries: Vec<RolloutRequest>,
    /// Acceptances: each lets a halted rollout go on past the failures that halted
    /// it, kept on the record with who, when and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_ROLLOUT_REQUESTS))]
    pub acceptances: Vec<RolloutRequest>,
}

/// One request of a person.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct RolloutRequest {
    /// Who asked, as the cluster identified them (the records policy holds it to the
    /// writer's own name).
    #[schemars(length(min = 1, max = MAX_ACTOR_CHARS))]
    pub by: String,
    /// When.
    pub at: Time,
    /// Why, in their words; required to accept failures.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = crate::limits::MAX_REASON_CHARS))]
    pub reason: String,
}

/// Failures a person accepted, letting a halted rollout go on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AcceptedFailures {
    /// Who accepted, as the cluster identified them.
    #[schemars(length(min = 1, max = MAX_ACTOR_CHARS))]
    pub by: String,
    /// When.
    pub at: Time,
    /// Why, in their words.
    #[schemars(length(min = 1, max = crate::limits::MAX_REASON_CHARS))]
    pub reason: String,
    /// The failed targets accepted: failures that had happened by then.
    #[schemars(length(max = MAX_TARGETS), inner(length(max = MAX_TARGET_NAME)))]
    pub targets: Vec<String>,
}

/// Where one target's crossing is.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum TargetPhase {
    /// Its wave has not reached it.
    #[default]
    Pending,
    /// Running the Gate's steps.
    Running,
    /// The steps succeeded; the Gate's verifications are looking.
    Verifying,
    /// Crossed (and verified, where the Gate verifies).
    Succeeded,
    /// A step failed, its verification said no, or it passed its wave's
    /// `progressDeadline`.
    Failed,
    /// Stopped: the Passage was aborted, or the target left while crossing.
    Aborted,
}

impl TargetPhase {
    /// The phase as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Running => "Running",
            Self::Verifying => "Verifying",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Aborted => "Aborted",
        }
    }

    /// Whether the target's crossing is over: `Succeeded`, `Failed` or `Aborted`.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Aborted)
    }

    /// Whether the target's crossing is under way: `Running` or `Verifying`.
    pub fn is_under_way(self) -> bool {
        matches!(self, Self::Running | Self::Verifying)
    }
}

/// One target's crossing: where it is, what it pushed, what Flux applied, how it is.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetStatus {
    /// The target, as `spec.targets` names it.
    #[schemars(length(min = 1, max = MAX_TARGET_NAME))]
    pub name: String,
    /// The wave it crossed in, counted from 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wave: i32,
    /// Where its crossing is.
    pub phase: TargetPhase,
    /// Which attempt this is: 1 the first, one more for each retry; 0 not started.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempt: i32,
    /// The index of the step in progress, or of the step that failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub current_step: i32,
    /// A PascalCase code for a failure: the step's reason (`GitRejected`), or
    /// `ProgressDeadlineExceeded`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_REASON_CODE_CHARS))]
    pub reason: String,
    /// The revision its steps pushed (a commit, a digest).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_REVISION_CHARS))]
    pub pushed_revision: String,
    /// The revision Flux last applied there (`lastAppliedRevision`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_REVISION_CHARS))]
    pub applied_revision: String,
    /// The target's health, as its checks last reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// Where its verification stands, where the Gate verifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationPhase>,
    /// When this attempt started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When it reached `Succeeded` (after verification, where the Gate verifies),
    /// `Failed` or `Aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// When it left the Gate's targets: from then on nothing waits on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub departed_at: Option<Time>,
    /// What it is doing or what happened, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_TARGET_MESSAGE_BYTES))]
    pub message: String,
    /// Its steps' records while its crossing is under way — what a new process
    /// resumes from, as a one-place crossing resumes from `status.steps`; dropped when
    /// it ends, leaving `currentStep`, `reason` and `message` (DECISION 155).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_STEPS))]
    pub steps: Vec<crate::StepStatus>,
    /// Its verification's record while it is verified — the Gate's `verify` run for
    /// this target once its steps succeeded, as a one-place crossing's
    /// `status.verification`; dropped when it ends, leaving `verification` and
    /// `message` (DECISION 162).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verifying: Option<crate::VerificationStatus>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn requirement(key: &str, operator: SelectorOperator, values: &[&str]) -> LabelSelector {
        LabelSelector {
            match_expressions: vec![LabelSelectorRequirement {
                key: key.into(),
                operator,
                values: values.iter().map(|v| v.to_string()).collect(),
            }],
            ..LabelSelector::default()
        }
    }

    #[test]
    fn selectors_match_as_kubernetes_judges_them() {
        use SelectorOperator::*;
        let eu_canary = labels(&[("region", "eu"), ("tier", "canary")]);
        let us = labels(&[("region", "us")]);
        let none = labels(&[]);
        let cases: [(LabelSelector, [bool; 3]); 8] = [
            (LabelSelector::default(), [true, true, true]),
            (
                LabelSelector {
                    match_labels: labels(&[("region", "eu")]),
                    ..LabelSelector::default()
                },
                [true, false, false],
            ),
            (
                requirement("region", In, &["eu", "us"]),
                [true, true, false],
            ),
            (requirement("region", NotIn, &["eu"]), [false, true, true]),
            (requirement("tier", Exists, &[]), [true, false, false]),
            (requirement("tier", DoesNotExist, &[]), [false, true, true]),
            // `In` with no values matches nothing (ops calls it a problem).
            (requirement("region", In, &[]), [false, false, false]),
            (
                LabelSelector {
                    match_labels: labels(&[("region", "eu")]),
                    match_expressions: requirement("tier", NotIn, &["canary"]).match_expressions,
                },
                [false, false, false],
            ),
        ];
        for (selector, expected) in cases {
            let got = [&eu_canary, &us, &none].map(|l| selector.matches(l));
            assert_eq!(got, expected, "{selector:?}");
        }
    }

    #[test]
    fn counts_and_percentages_read_as_kubernetes_writes_them() {
        let read = |json: &str| serde_json::from_str::<CountOrPercent>(json).unwrap();
        assert_eq!(read("3"), CountOrPercent::Count(3));
        assert_eq!(read(r#""25%""#), CountOrPercent::Text("25%".into()));
        assert_eq!(read(r#""3""#), CountOrPercent::Text("3".into()));
        assert_eq!(
            serde_json::to_string(&CountOrPercent::Count(2)).unwrap(),
            "2"
        );
        assert_eq!(CountOrPercent::Text("10%".into()).to_string(), "10%");
    }

    #[test]
    fn phases_are_written_as_named() {
        for phase in [
            RolloutPhase::Progressing,
            RolloutPhase::Halted,
            RolloutPhase::Completed,
            RolloutPhase::Accepted,
        ] {
            assert_eq!(
                serde_json::to_value(phase).unwrap(),
                serde_json::json!(phase.as_str())
            );
        }
        for phase in [
            TargetPhase::Pending,
            TargetPhase::Running,
            TargetPhase::Verifying,
            TargetPhase::Succeeded,
            TargetPhase::Failed,
            TargetPhase::Aborted,
        ] {
            assert_eq!(
                serde_json::to_value(phase).unwrap(),
                serde_json::json!(phase.as_str())
            );
            assert_eq!(
                phase.is_terminal(),
                matches!(
                    phase,
                    TargetPhase::Succeeded | TargetPhase::Failed | TargetPhase::Aborted
                )
            );
        }
    }

    /// A hundred targets fit (DECISION 151): the most records a rollout keeps, each
    /// with every bounded field at its bound, take less than the share of the
    /// Passage's status the rollout is given.
    #[test]
    fn the_most_records_fit_in_the_rollouts_share_of_the_status() {
        let at = Time("2026-08-11T12:00:00.123456789Z".parse().unwrap());
        let long = |n: usize| "x".repeat(n);
        let record = |i: usize| TargetStatus {
            name: format!("{}{i:03}", long(MAX_TARGET_NAME - 3)),
            wave: i32::try_from(MAX_WAVES).unwrap(),
            phase: TargetPhase::Verifying,
            attempt: 99,
            current_step: 99,
            reason: long(MAX_REASON_CODE_CHARS),
            pushed_revision: long(MAX_REVISION_CHARS),
            applied_revision: long(MAX_REVISION_CHARS),
            health: Some(Health::NotApplicable),
            verification: Some(VerificationPhase::Superseded),
            started_at: Some(at.clone()),
            finished_at: Some(at.clone()),
            departed_at: Some(at.clone()),
            message: long(MAX_TARGET_MESSAGE_BYTES),
            // A finished record keeps no steps nor verification record; those under
            // way share the room the steps' outputs have (DECISIONS 155, 162).
            steps: Vec::new(),
            verifying: None,
        };
        let status = RolloutStatus {
            phase: RolloutPhase::Progressing,
            wave: 9,
            message: long(MAX_ROLLOUT_MESSAGE_BYTES),
            targets: (0..MAX_TARGETS).map(record).collect(),
            omitted_targets: 1000,
            retries_done: i32::try_from(MAX_ROLLOUT_REQUESTS).unwrap(),
            acceptances_done: i32::try_from(MAX_ROLLOUT_REQUESTS).unwrap(),
            crossing: long(64),
            accepted: (0..MAX_WAVES)
                .map(|_| AcceptedFailures {
                    by: long(MAX_ACTOR_CHARS),
                    at: at.clone(),
                    reason: long(crate::limits::MAX_REASON_CHARS),
                    targets: vec![long(MAX_TARGET_NAME); MAX_TARGETS],
                })
                .collect(),
        };
        let bytes = serde_json::to_vec(&status).unwrap().len();
        assert!(
            bytes <= crate::limits::MAX_ROLLOUT_STATUS_BYTES,
            "{bytes} bytes, more than {}",
            crate::limits::MAX_ROLLOUT_STATUS_BYTES
        );
    }
}
