//! Gate: an environment, and the threshold a Bundle must cross to enter it.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::{free_form, is_false, is_zero};
use crate::{Condition, Health, HealthCheck, LocalSecretRef, Rollout, Step, Targets, Time, Var};

/// What a Gate admits, when, and what crossing it involves. There is no pipeline
/// object: the pipeline is what the Gates' `admits[].after` lists say.
// Each printcolumn(...) repeats the same keys, which clippy reads as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "hecate.dev",
    version = "v1alpha1",
    kind = "Gate",
    namespaced,
    status = "GateStatus",
    shortname = "gt",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Gate is an environment and the rules for entering it: which Beacons' Bundles it \
           admits and after which upstream Gates, whether a person must approve, when \
           crossings may start, and the steps that move a Bundle in.",
    printcolumn(
        name = "Current",
        type_ = "string",
        json_path = ".status.current.bundle"
    ),
    printcolumn(name = "Health", type_ = "string", json_path = ".status.health.status"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct GateSpec {
    /// The classes of Bundle this Gate accepts.
    #[schemars(length(min = 1))]
    pub admits: Vec<Admission>,
    /// The steps every crossing runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passage: Option<PassageTemplate>,
    /// Health checks of the environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watch: Vec<HealthCheck>,
    /// Checks that must pass after a crossing before the Bundle counts as cleared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_VERIFICATIONS))]
    pub verify: Vec<Verification>,
    /// Cross eligible Bundles without being asked.
    #[serde(default, skip_serializing_if = "is_false")]
    pub auto: bool,
    /// When crossings may start (and, with `deny`, when they may not).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<Window>,
    /// Start no new crossings; running ones finish.
    #[serde(default, skip_serializing_if = "is_false")]
    pub suspend: bool,
    /// Values step expressions read as `vars.<name>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vars: Vec<Var>,
    /// How many finished Passages to keep; unset keeps 20, `0` keeps all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub retain: Option<i32>,
    /// The Fides environment that records and judges crossings of this Gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceConfig>,
    /// What the Gate does when a crossing fails or its verification says no. Hecate's
    /// own addition (DECISION 139).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<RollbackPolicy>,
    /// The places this environment spans — listed, or connected clusters chosen by
    /// label — each crossed in its own right by every crossing of the Gate. Unset: the
    /// Gate is one place, as before. Hecate's own addition (DECISION 151).
    ///
    /// ```yaml
    /// targets:
    ///   list:
    ///   - name: eu-1
    ///     clusterRef: {name: eu-1}
    ///     vars: [{name: region, value: eu}]
    ///   selector:
    ///     matchLabels: {tier: prod}
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Targets>,
    /// In what waves a crossing reaches the targets, how many at once, and how many
    /// may fail. Unset: one wave of every target, tolerating no failure. Hecate's own
    /// addition (DECISION 151).
    ///
    /// ```yaml
    /// rollout:
    ///   waves:
    ///   - name: canary
    ///     targets: {selector: {matchLabels: {tier: canary}}}
    ///     minSuccessTime: 30m
    ///   - name: rest
    ///     maxConcurrency: 25%
    ///     maxFailures: 1
    ///     progressDeadline: 20m
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<Rollout>,
}

/// What a Gate does when a crossing fails or its verification says no.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct RollbackPolicy {
    /// Cross the last verified Bundle again, as actor `controller`, without being
    /// asked. An automatic rollback that itself fails is not rolled back.
    #[serde(default, skip_serializing_if = "is_false")]
    pub auto: bool,
}

/// One class of Bundle a Gate accepts.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Admission {
    /// The Beacon whose Bundles this covers.
    pub from: BundleOrigin,
    /// Gates a Bundle must have cleared first. Empty: an entry point of the pipeline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// A person must approve each Bundle for this Gate before it may cross.
    #[serde(default, skip_serializing_if = "is_false")]
    pub require_approval: bool,
    /// Who must approve each Bundle before it may cross: how many people, from which
    /// groups, for how long an approval counts, and who never counts. Stricter than
    /// `requireApproval` (which it implies); Hecate's own addition (DECISION 137).
    ///
    /// Two release managers and carol, approvals lasting a day, never the author or
    /// anyone who promoted the Bundle through an earlier Gate:
    ///
    /// ```yaml
    /// approvals:
    ///   required:
    ///   - count: 2
    ///     groups: [release-managers]
    ///   - count: 1
    ///     users: [carol]
    ///   expireAfter: 24h
    ///   excludeAuthor: true
    ///   excludeUpstreamPromoters: true
    /// ```
    ///
    /// Two people from sre, or one from release-managers:
    ///
    /// ```yaml
    /// approvals:
    ///   anyOf:
    ///   - required: [{count: 2, groups: [sre]}]
    ///   - required: [{count: 1, groups: [release-managers]}]
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<ApprovalPolicy>,
}

/// Who must approve a Bundle for one admission of a Gate. Every rule in `required`
/// must hold, each counting distinct people; the one who asks for the crossing never
/// counts, whatever the policy says.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalPolicy {
    /// Rules that must all hold. One approval counts toward each rule whose people it
    /// is from. Neither this nor `anyOf` given: one approval, from anyone allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_APPROVAL_RULES))]
    pub required: Vec<ApprovalRule>,
    /// Alternatives, one of which must hold as well ("two from sre, or one from
    /// release-managers"): each a set of rules that must all hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_APPROVAL_RULES))]
    pub any_of: Vec<ApprovalAlternative>,
    /// How long an approval counts, as a Go duration (`24h`, `90m`); unset: for ever.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(regex(pattern = r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"))]
    pub expire_after: String,
    /// The Bundle's author (its commit's author, where its Beacon records one) cannot
    /// approve it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub exclude_author: bool,
    /// No one who promoted the Bundle through an earlier Gate counts as an approver
    /// here: one person cannot carry a release through alone.
    #[serde(default, skip_serializing_if = "is_false")]
    pub exclude_upstream_promoters: bool,
}

/// One alternative of an approval policy's `anyOf`: rules that must all hold.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ApprovalAlternative {
    /// The rules; every one must hold for this alternative to.
    #[schemars(length(min = 1, max = crate::limits::MAX_APPROVAL_RULES))]
    pub required: Vec<ApprovalRule>,
}

/// How many distinct people must approve, and who counts: members of any of `groups`
/// or any of `users`, as the cluster identified the approver when they approved;
/// neither given: anyone who may approve.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ApprovalRule {
    /// How many distinct people.
    #[schemars(range(min = 1, max = 100))]
    pub count: i32,
    /// Groups whose members count (the groups the cluster reports for the approver).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// People who count, by the username the cluster reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<String>,
}

/// Where admitted Bundles come from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct BundleOrigin {
    /// The Beacon's name, in the Gate's namespace.
    pub beacon: String,
}

/// The steps copied into every Passage of a Gate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PassageTemplate {
    /// The steps, run in order.
    #[schemars(length(min = 1, max = crate::limits::MAX_STEPS))]
    pub steps: Vec<Step>,
}

/// A check run after a crossing: a registered verifier and its configuration.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct Verification {
    /// The verifier to run, e.g. `flagger`.
    pub uses: String,
    /// The verifier's configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "free_form")]
    pub with: Option<serde_json::Value>,
}

/// A recurring period in which crossings may start — or, with `deny`, may not.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Window {
    /// A five-field cron expression (or a descriptor such as `@daily`): when the
    /// window opens.
    pub schedule: String,
    /// How long it stays open, as a Go duration (`8h`, `90m`).
    pub duration: String,
    /// The IANA time zone `schedule` is read in; empty means UTC.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub time_zone: String,
    /// A freeze: while open, no crossing may start.
    #[serde(default, skip_serializing_if = "is_false")]
    pub deny: bool,
}

/// Binds a Gate to a Fides environment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceConfig {
    /// The Fides environment's UUID. Explicit, because a guessed environment would
    /// check the wrong policy and still report success.
    #[schemars(regex(
        pattern = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    ))]
    pub fides_environment: String,
    /// The Fides server; empty uses the one the controller is configured with.
    #[serde(
        rename = "serverURL",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub server_url: String,
    /// A Secret whose `token` key holds the Fides API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<LocalSecretRef>,
}

/// What is in the environment, and how it is doing. Written by the controller.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateStatus {
    /// The `metadata.generation` last acted on.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// `Ready` and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The last `reconcile.fluxcd.io/requestedAt` token handled.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_handled_reconcile_at: String,
    /// The Bundle in the environment now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<GateOccupant>,
    /// The latest health assessment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthReport>,
    /// Bundles that may cross now, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eligible: Vec<String>,
    /// The Passage crossing now, if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub active_passage: String,
    /// Past occupants, newest first, at most ten; `history[0]` is `current`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<GateOccupant>,
    /// The change-gate verdict on the crossing in progress; absent when none is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceRef>,
}

/// A Bundle that entered a Gate's environment.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateOccupant {
    /// The Bundle.
    pub bundle: String,
    /// Its content digest when it entered.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
    /// The Passage that brought it in.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub passage: String,
    /// When the controller recorded the entry.
    pub entered_at: Time,
    /// Who asked for the crossing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub actor: String,
    /// Whether post-crossing verification passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
}

/// An assessment of an environment's health.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthReport {
    /// The worst result of all checks.
    pub status: Health,
    /// What is wrong, in words, one entry per problem.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<String>,
    /// Per-checker detail, keyed by the checker's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "free_form")]
    pub details: Option<serde_json::Value>,
    /// When this assessment was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<Time>,
    /// Since when `status` has had its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Time>,
}

/// A compliance record of a crossing, as Fides judged it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct EvidenceRef {
    /// The Fides trail id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub trail: String,
    /// The change gate's recommendation; anything but `approve` holds the crossing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub verdict: String,
    /// The risk score, 0–100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<i32>,
    /// Why the change gate withholds approval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blockers: Vec<String>,
    /// A link to the record.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
}

/// How many finished Passages a Gate keeps when `spec.retain` is unset (spec
/// controller.md §2.10).
pub const DEFAULT_PASSAGES_RETAINED: usize = 20;

impl Gate {
    /// How many finished Passages the Gate keeps: `spec.retain`, [`DEFAULT_PASSAGES_RETAINED`]
    /// when unset; `None` when it keeps all (`0`).
    pub fn retained_passages(&self) -> Option<usize> {
        match self.spec.retain {
            Some(0) => None,
            Some(n) => Some(usize::try_from(n).unwrap_or(0)),
            None => Some(DEFAULT_PASSAGES_RETAINED),
        }
    }

    /// Whether the Gate chooses targets by label among the clusters connected to its
    /// namespace (`spec.targets.selector`): what those clusters coming and going can
    /// change.
    pub fn selects_targets(&self) -> bool {
        self.spec
            .targets
            .as_ref()
            .is_some_and(|t| t.selector.is_some())
    }

    /// The admission that covers Bundles of the named Beacon: the first that names it.
    pub fn admission_for(&self, beacon: &str) -> Option<&Admission> {
        self.spec.admits.iter().find(|a| a.from.beacon == beacon)
    }

    /// The Bundle in the environment now, if any.
    pub fn current_bundle(&self) -> Option<&str> {
        self.status
            .as_ref()?
            .current
            .as_ref()
            .map(|c| c.bundle.as_str())
    }
}
