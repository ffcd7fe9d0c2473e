//! The tool catalogue: each tool's stable name, title, description (written for a
//! model choosing what to call), input and output schemas, and the Kubernetes
//! permission that calling it takes.
//!
//! There is no `approve` tool, in any configuration, and nothing here can add one:
//! see [`NO_APPROVE`].

use std::sync::Arc;

use hecate_ops::model::CrossingPreview;
use hecate_ops::{
    Aborted, BundleDiff, Delivery, Evidence, Explanation, FluxReconciled, FluxSuspended,
    GateTargets, Operation, Overview, Promoted, RolledBack, RolloutAsked,
};
use hecate_types::{Gate, Passage};
use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::Value;

use crate::schema::{
    AbortArgs, ApprovalQueue, AuditTrail, BundleArgs, BundleList, DeliveryArgs, DiffArgs,
    FluxObjectArgs, FluxResourceList, GateArgs, GateList, GateName, InNamespace, NoArguments,
    PassageFilter, PassageList, PassageName, PreflightList, PromoteArgs, RetryArgs, RollbackArgs,
    consts_as_enums,
};

/// Why there is no `approve` tool. Approval is the second pair of eyes; an agent that
/// could give it would let the one person driving the agent be both pairs.
pub const NO_APPROVE: &str = "There is no approve tool, and no setting adds one. Approval \
    is a segregation-of-duties (four-eyes) control: a person other than the one who \
    promotes must approve. An agent that could approve would let the one person driving \
    it be both, while every audit record still showed two. Approvals stay with people: \
    `hecate approve`, the web UI, or Fides.";

/// Every tool this server can offer. The names are stable interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// `list_gates`
    ListGates,
    /// `get_gate`
    GetGate,
    /// `why_stuck`
    WhyStuck,
    /// `list_bundles`
    ListBundles,
    /// `list_passages`
    ListPassages,
    /// `get_passage`
    GetPassage,
    /// `audit`
    Audit,
    /// `approvals`
    Approvals,
    /// `delivery_metrics`
    DeliveryMetrics,
    /// `diff_bundles`
    DiffBundles,
    /// `evidence`
    Evidence,
    /// `overview`
    Overview,
    /// `promote`
    Promote,
    /// `preview_crossing`
    PreviewCrossing,
    /// `rollback`
    Rollback,
    /// `abort`
    Abort,
    /// `rollout_targets`
    RolloutTargets,
    /// `retry_targets`
    RetryTargets,
    /// `preflight`
    Preflight,
    /// `flux_resources`
    FluxResources,
    /// `suspend_flux`
    SuspendFlux,
    /// `resume_flux`
    ResumeFlux,
    /// `reconcile_flux`
    ReconcileFlux,
}

impl ToolName {
    /// The tools that only read; always offered.
    pub const READ: [Self; 15] = [
        Self::ListGates,
        Self::GetGate,
        Self::WhyStuck,
        Self::ListBundles,
        Self::ListPassages,
        Self::GetPassage,
        Self::Audit,
        Self::Evidence,
        Self::Overview,
        Self::Preflight,
        Self::FluxResources,
        Self::Approvals,
        Self::DeliveryMetrics,
        Self::DiffBundles,
        Self::RolloutTargets,
    ];

    /// The tools that write; offered only with `--allow-writes`: crossings (promote,
    /// rollback, abort, retrying a halted rollout's targets) and the Flux objects a
    /// Gate depends on (suspend, resume, reconcile). Accepting a rollout's failures is
    /// not one: it overrides the failure budget the Gate's owners set, a judgement left
    /// to people (DECISION 158). A crossing's preview writes nothing, but asks the
    /// right to promote and is how an agent looks before it promotes: offered with
    /// promote.
    pub const WRITE: [Self; 8] = [
        Self::Promote,
        Self::PreviewCrossing,
        Self::Rollback,
        Self::Abort,
        Self::RetryTargets,
        Self::SuspendFlux,
        Self::ResumeFlux,
        Self::ReconcileFlux,
    ];

    /// The tool's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ListGates => "list_gates",
            Self::GetGate => "get_gate",
            Self::WhyStuck => "why_stuck",
            Self::ListBundles => "list_bundles",
            Self::ListPassages => "list_passages",
            Self::GetPassage => "get_passage",
            Self::Audit => "audit",
            Self::Approvals => "approvals",
            Self::DeliveryMetrics => "delivery_metrics",
            Self::DiffBundles => "diff_bundles",
            Self::Evidence => "evidence",
            Self::Overview => "overview",
            Self::Promote => "promote",
            Self::PreviewCrossing => "preview_crossing",
            Self::Rollback => "rollback",
            Self::Abort => "abort",
            Self::RolloutTargets => "rollout_targets",
            Self::RetryTargets => "retry_targets",
            Self::Preflight => "preflight",
            Self::FluxResources => "flux_resources",
            Self::SuspendFlux => "suspend_flux",
            Self::ResumeFlux => "resume_flux",
            Self::ReconcileFlux => "reconcile_flux",
        }
    }

    /// The tool called `name`, if there is one by that name at all.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::READ
            .into_iter()
            .chain(Self::WRITE)
            .find(|tool| tool.as_str() == name)
    }

    /// The operation it performs: what a caller must be allowed, in the namespace it
    /// acts on (the same permission the HTTP API asks for the same read).
    pub fn operation(self) -> Operation {
        match self {
            Self::ListGates => Operation::ListGates,
            Self::GetGate => Operation::GetGate,
            Self::WhyStuck => Operation::Explain,
            Self::ListBundles => Operation::ListBundles,
            Self::ListPassages => Operation::ListPassages,
            Self::GetPassage => Operation::GetPassage,
            Self::Audit => Operation::Audit,
            Self::Approvals => Operation::Approvals,
            Self::DeliveryMetrics => Operation::Delivery,
            // Read as the Bundle is (the API's diff route asks the same).
            Self::DiffBundles => Operation::GetBundle,
            Self::Evidence => Operation::Evidence,
            Self::Overview => Operation::Overview,
            // A preview is asked as promote: it says what that right would do.
            Self::Promote | Self::PreviewCrossing => Operation::Promote,
            Self::Rollback => Operation::Rollback,
            Self::Abort => Operation::Abort,
            Self::RolloutTargets => Operation::Targets,
            Self::RetryTargets => Operation::RetryTargets,
            Self::Preflight => Operation::Preflight,
            Self::FluxResources => Operation::FluxResources,
            Self::SuspendFlux | Self::ResumeFlux => Operation::SuspendFlux,
            Self::ReconcileFlux => Operation::ReconcileFlux,
        }
    }

    /// Whether it writes.
    pub fn writes(self) -> bool {
        self.operation().writes()
    }

    fn title(self) -> &'static str {
        match self {
            Self::ListGates => "List Gates",
            Self::GetGate => "Get a Gate",
            Self::WhyStuck => "Why is a Gate stuck?",
            Self::ListBundles => "List Bundles",
            Self::ListPassages => "List Passages",
            Self::GetPassage => "Get a Passage",
            Self::Audit => "Audit trail",
            Self::Approvals => "Bundles waiting on a person",
            Self::DeliveryMetrics => "How well releases are delivered",
            Self::DiffBundles => "What changed between two Bundles",
            Self::Evidence => "Compliance evidence for a Bundle",
            Self::Overview => "Overview of every namespace",
            Self::Promote => "Promote a Bundle",
            Self::PreviewCrossing => "What would crossing a Gate do?",
            Self::Rollback => "Roll a Gate back",
            Self::Abort => "Abort a crossing",
            Self::RolloutTargets => "Where a rollout stands on each target",
            Self::RetryTargets => "Retry a halted rollout's failed targets",
            Self::Preflight => "Would evidence let it cross?",
            Self::FluxResources => "Flux objects a Gate depends on",
            Self::SuspendFlux => "Suspend a Flux object",
            Self::ResumeFlux => "Resume a Flux object",
            Self::ReconcileFlux => "Reconcile a Flux object now",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Self::ListGates => {
                "Every Gate (environment) in a namespace, by name, with its state \
                 (Crossing, Ready, Blocked, Idle, Failed), the Bundle it runs now, its health, \
                 a one-line summary and what blocks it. The starting point: call this first to \
                 learn which Gates exist."
            }
            Self::GetGate => {
                "One Gate in full: which Beacons' Bundles it admits and after which upstream \
                 Gates, whether approval is required, its promotion windows, its steps, and its \
                 status as the controller last wrote it. For what a Gate's rules are; for why \
                 nothing is crossing it, call why_stuck instead."
            }
            Self::WhyStuck => {
                "Why a Gate is not crossing — the tool for \"why hasn't it deployed?\". \
                 Answers the Gate's state and a summary, and each blocker as a typed kind \
                 (UpstreamNotCleared, AwaitingApproval, WindowClosed, PassageFailed, \
                 StepWaiting, ChangeHeld, Unhealthy, Suspended, …) with the specifics and the \
                 exact command that would remove it; plus the Bundles that could cross now and \
                 those waiting, each with why. Use this rather than assembling an answer from \
                 the other tools: it applies the same rules the controller does."
            }
            Self::ListBundles => {
                "The Bundles in a namespace, newest first. A Bundle is an immutable, \
                 content-addressed set of artifact versions (images, charts, commits) that a \
                 Beacon emitted; it is the unit that moves through Gates. Each shows its \
                 artifacts, digest and the Gates it is approved for; `spec.alias` is its \
                 version for people (`v1.3.0`), and a commit artifact carries its subject, \
                 author, time and the commits it brings. For what changed between two, \
                 call diff_bundles."
            }
            Self::ListPassages => {
                "The Passages in a namespace, newest first, optionally only those through one \
                 Gate and/or of one Bundle. A Passage is one attempt to move one Bundle through \
                 one Gate, kept as the record: its phase, who asked, each step's outcome, and \
                 after a crossing that landed its verification (`status.verification`: \
                 Verifying, Verified, or Failed and why)."
            }
            Self::GetPassage => {
                "One Passage with each step's phase, reason, message and outputs, and after a \
                 successful crossing its verification (`status.verification`): Verifying, \
                 Verified, or Failed and why, with each verifier's passes in a row, failures, \
                 looks that could not judge, last value, and last and next look. For finding \
                 which step of a crossing failed and why, where a running crossing is, or \
                 whether what crossed has been shown to work."
            }
            Self::Audit => {
                "What happened in a namespace, newest first: crossings that landed, crossings \
                 that failed or were aborted, crossings in progress, approvals and aborts — each \
                 with when, which Gate and Bundle, the content digest, and who caused it."
            }
            Self::Approvals => {
                "The Bundles in a namespace waiting on a person for a Gate: approvals the \
                 Gate asks for still missing, or a rejection standing. Each shows how far its \
                 approvals have come against the Gate's policy (\"1 of 2 from \
                 release-managers; carol approved\"), whose approvals do not count and why, \
                 and the rejection with its reason. Approving is for people, never for an \
                 agent: tell the person who may give it (why_stuck's fix names them)."
            }
            Self::DeliveryMetrics => {
                "The four DORA figures of a namespace over a period, per Gate and for the \
                 pipeline's last stage (where releases end up): lead time from the commit \
                 where the Beacon recorded its time (median and p90, and where the time \
                 went: emission, upstream, approval, window, queued, steps), \
                 deployment frequency, change failure rate (failed, aborted, failed \
                 verification, rolled back) and time to restore. Each figure says how many \
                 crossings it rests on, and `reach` how far back the kept records go. For \
                 \"how long does a change take to reach production\" and \"how often does \
                 production break\"."
            }
            Self::DiffBundles => {
                "What a Bundle changes compared with another: each artifact's version on \
                 both sides (added, removed, changed or the same), the commits between them \
                 newest first with subject, author and time, and `direction` — `forward`, or \
                 `back` when moving to it is a rollback (the commits listed are then those \
                 it undoes). `against` names a Gate (compared with what it runs now) or a \
                 Bundle; without it, the Bundle its Beacon emitted before. Each Bundle's \
                 `version` is its name for people (`v1.3.0`). `gap` says when the list may \
                 be incomplete. For \"what would this release change in production?\" and \
                 \"what does rolling back undo?\"."
            }
            Self::Evidence => {
                "The compliance record for a Bundle's artifact from Fides: the change gate's \
                 verdict (controls, attestations, approvals, segregation of duties), an ITSM \
                 change request if one is attested, and the approvals Hecate recorded. When \
                 there is nothing to show, `unavailable` says why."
            }
            Self::Overview => {
                "Every namespace the caller may read that holds Gates, each Gate at a glance \
                 (state, summary, blockers, health, current Bundle), each namespace's recent \
                 Bundles with the Gates each has cleared, failed or is crossing (timeline; a \
                 crossing of a Gate that verifies is marked Verified, Verifying with its \
                 progress, or Failed with why), \
                 totals, and two weeks of daily crossings and failures. For a question about \
                 the whole estate; for one namespace, list_gates is enough."
            }
            Self::Promote => {
                "Open a Passage that moves a Bundle through a Gate. The same rules as every \
                 other path apply — upstream Gates cleared, approval given by someone else, \
                 window open, nothing else crossing — so call why_stuck first if unsure. A \
                 refusal is the rules' answer: report it; do not retry it or route around it \
                 through another Gate. Returns the Passage's name; follow it with get_passage."
            }
            Self::PreviewCrossing => {
                "Before promoting: what crossing a Gate with a Bundle would do, creating \
                 nothing. `refused` is promote's own answer for the caller now (the same \
                 code promote would give: AwaitingApproval, WindowClosed, AlreadyCrossing, \
                 …; absent when it would start). `steps` lists each step the crossing would \
                 run, in order, with its `with:` resolved against the Bundle and the Gate's \
                 vars (a value that reads an earlier step's output stays as written and the \
                 step `awaits` it), whether it runs (`runs`, absent when its `if:` is decided \
                 as the crossing goes), what it does beyond the crossing's own directory \
                 (`effect`: WorkDir, Pushes, Forge, Cluster, Calls, Evidence) and a \
                 `problem` where an expression fails on this Bundle. Call it before promote \
                 to tell a person what will happen; a refusal here is the rules' answer."
            }
            Self::Rollback => {
                "Open a Passage that takes a Gate back to a Bundle it verified before, undoing \
                 its latest crossing: `to` names the Bundle (one the Gate held and whose \
                 verification there did not fail); without it, the newest earlier Bundle the \
                 Gate verified. On a Gate that spans targets, `targets` (`failed`, `all`, or \
                 names) rolls back only those targets of its last finished rollout, to what \
                 they ran before it; the Gate keeps what it holds. The same rules as promote \
                 apply — window open, nothing else crossing, approvals — so call why_stuck \
                 first if unsure. A refusal \
                 (NothingToRollBackTo, NotVerifiedHere, …) is the rules' answer: report it; \
                 do not retry it. Returns the Passage's name and the crossing it undoes; \
                 follow it with get_passage."
            }
            Self::Abort => {
                "Ask a running Passage to stop. Its remaining steps are marked aborted and the \
                 Passage is kept as the record; work already done (a pushed commit, say) is not \
                 undone. Refused for a Passage that has already finished."
            }
            Self::RolloutTargets => {
                "For a Gate that spans several targets (clusters): where its latest \
                 rollout stands on each, by wave — phase (Pending, Running, Verifying, \
                 Succeeded, Failed, Aborted), attempt, step, pushed and applied \
                 revision, health, verification, and why a target failed. `now` sums it \
                 up (\"2 of 5 on v1.3.0, 1 failed\"). `rollout` is absent until a \
                 rollout has begun; `spansTargets` false means the Gate is one place. For \
                 \"which clusters has this release reached?\" and \"where did it fail?\"."
            }
            Self::RetryTargets => {
                "Ask a rollout that halted (its failure budget spent) to cross its failed \
                 targets again, from their first step; the rest of the rollout then goes \
                 on. Kept on the Passage in the caller's name and carried out once by the \
                 controller. Refused unless the rollout is halted on failed targets. \
                 Accepting the failures instead is for people (`hecate accept-failures`), \
                 never for an agent: it overrides the Gate's failure budget."
            }
            Self::Preflight => {
                "Before promoting through a Gate that checks evidence in Fides: for each Bundle \
                 the Gate lists as eligible, whether Fides' policy check for the Gate's \
                 environment would let it through (`compliant`), and if not which attestation \
                 types are `missing` for which `policies`. When it cannot be told, `unknown` \
                 says why and `compliant` is false. Empty when the Gate does not gate on \
                 evidence or nothing is eligible."
            }
            Self::FluxResources => {
                "The Flux objects (Kustomizations, HelmReleases, sources) a Gate's own health \
                 watch names, each with its health, applied revision, whether it is \
                 suspended, the last reconcile request Flux handled, and `missing` when it is \
                 not in the cluster; one in a connected cluster has `cluster` and is as the \
                 controller last assessed it. For \"is Flux the reason this environment is \
                 unhealthy?\"."
            }
            Self::SuspendFlux => {
                "Suspend a Flux object a Gate depends on (one flux_resources lists): Flux stops \
                 reconciling it until it is resumed. Only objects the Gate's own watch names \
                 can be operated; anything else is refused. Needs patch on Flux's objects."
            }
            Self::ResumeFlux => {
                "Resume a suspended Flux object a Gate depends on (one flux_resources lists), \
                 so Flux reconciles it again. Refused for objects the Gate does not watch."
            }
            Self::ReconcileFlux => {
                "Ask Flux to reconcile a Flux object a Gate depends on now, instead of at its \
                 next interval. Answers the `requestedAt` stamp; flux_resources shows the same \
                 value as `lastHandled` once Flux has done it. Refused for objects the Gate \
                 does not watch."
            }
        }
    }

    fn schemas(self) -> (Arc<JsonObject>, Arc<JsonObject>) {
        fn pair<I: JsonSchema + 'static, O: JsonSchema + 'static>()
        -> (Arc<JsonObject>, Arc<JsonObject>) {
            // A derived struct's schema is always an object; should that ever change,
            // an empty object schema still lets the tool be listed.
            let mut input = schema_for_input::<I>().unwrap_or_default().as_ref().clone();
            // Some clients insist on `properties`, even when there are none.
            input
                .entry("properties")
                .or_insert_with(|| Value::Object(JsonObject::new()));
            let mut output = Value::Object(schema_for_output::<O>().as_ref().clone());
            consts_as_enums(&mut output);
            let output = match output {
                Value::Object(output) => output,
                _ => JsonObject::new(),
            };
            (Arc::new(input), Arc::new(output))
        }
        match self {
            Self::ListGates => pair::<InNamespace, GateList>(),
            Self::GetGate => pair::<GateName, Gate>(),
            Self::WhyStuck => pair::<GateArgs, Explanation>(),
            Self::ListBundles => pair::<InNamespace, BundleList>(),
            Self::ListPassages => pair::<PassageFilter, PassageList>(),
            Self::GetPassage => pair::<PassageName, Passage>(),
            Self::Audit => pair::<InNamespace, AuditTrail>(),
            Self::Approvals => pair::<InNamespace, ApprovalQueue>(),
            Self::DeliveryMetrics => pair::<DeliveryArgs, Delivery>(),
            Self::DiffBundles => pair::<DiffArgs, BundleDiff>(),
            Self::Evidence => pair::<BundleArgs, Evidence>(),
            Self::Overview => pair::<NoArguments, Overview>(),
            Self::Promote => pair::<PromoteArgs, Promoted>(),
            Self::PreviewCrossing => pair::<PromoteArgs, CrossingPreview>(),
            Self::Rollback => pair::<RollbackArgs, RolledBack>(),
            Self::Abort => pair::<AbortArgs, Aborted>(),
            Self::RolloutTargets => pair::<GateArgs, GateTargets>(),
            Self::RetryTargets => pair::<RetryArgs, RolloutAsked>(),
            Self::Preflight => pair::<GateArgs, PreflightList>(),
            Self::FluxResources => pair::<GateArgs, FluxResourceList>(),
            Self::SuspendFlux | Self::ResumeFlux => pair::<FluxObjectArgs, FluxSuspended>(),
            Self::ReconcileFlux => pair::<FluxObjectArgs, FluxReconciled>(),
        }
    }

    fn annotations(self) -> ToolAnnotations {
        let annotations = ToolAnnotations::with_title(self.title()).open_world(false);
        match self {
            Self::Promote | Self::Rollback => annotations
                .read_only(false)
                .destructive(false)
                .idempotent(false),
            Self::Abort => annotations
                .read_only(false)
                .destructive(true)
                .idempotent(true),
            // Each call is a new request on the record, carried out once.
            Self::RetryTargets => annotations
                .read_only(false)
                .destructive(false)
                .idempotent(false),
            Self::SuspendFlux | Self::ResumeFlux => annotations
                .read_only(false)
                .destructive(false)
                .idempotent(true),
            // Each call writes a new request stamp, and Flux reconciles again.
            Self::ReconcileFlux => annotations
                .read_only(false)
                .destructive(false)
                .idempotent(false),
            _ => annotations.read_only(true),
        }
    }

    /// The tool as `tools/list` describes it.
    pub fn tool(self) -> Tool {
        let (input, output) = self.schemas();
        Tool::new(self.as_str(), self.description(), input)
            .with_title(self.title())
            .with_raw_output_schema(output)
            .with_annotations(self.annotations())
    }
}

/// The tools offered, sorted by name: the read tools, and the write tools when
/// `writes` is on.
pub fn offered(writes: bool) -> Vec<ToolName> {
    let mut tools: Vec<ToolName> = ToolName::READ.to_vec();
    if writes {
        tools.extend(ToolName::WRITE);
    }
    tools.sort_by_key(|tool| tool.as_str());
    tools
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_approve_is_not_one() {
        for tool in ToolName::READ.into_iter().chain(ToolName::WRITE) {
            assert_eq!(ToolName::from_name(tool.as_str()), Some(tool));
        }
        assert_eq!(ToolName::from_name("approve"), None);
        assert!(
            offered(true)
                .iter()
                .all(|t| !t.as_str().contains("approve"))
        );
        assert!(NO_APPROVE.contains("segregation-of-duties"));
    }

    #[test]
    fn only_crossings_and_flux_objects_are_written() {
        assert_eq!(ToolName::WRITE.len(), 8);
        assert!(ToolName::WRITE.iter().all(|t| t.writes()));
        assert!(ToolName::READ.iter().all(|t| !t.writes()));
        assert_eq!(
            ToolName::WRITE.map(|t| t.operation().permission().to_string()),
            [
                "create passages",
                // A preview asks promote's right.
                "create passages",
                "create passages",
                "patch passages",
                "patch passages",
                "patch kustomizations",
                "patch kustomizations",
                "patch kustomizations"
            ]
        );
        assert_eq!(offered(false).len(), 15);
        assert_eq!(offered(true).len(), 23);
        // Accepting a rollout's failures overrides the Gate's budget: for people only.
        assert!(offered(true).iter().all(|t| !t.as_str().contains("accept")));
    }

    #[test]
    fn every_input_schema_is_a_closed_object() {
        for tool in ToolName::READ.into_iter().chain(ToolName::WRITE) {
            let described = tool.tool();
            let input = &described.input_schema;
            assert_eq!(
                input.get("type"),
                Some(&serde_json::json!("object")),
                "{tool:?}"
            );
            assert_eq!(
                input.get("additionalProperties"),
                Some(&serde_json::json!(false)),
                "{tool:?}"
            );
            // Optional arguments are left out, never sent as null.
            let properties = input.get("properties").and_then(|p| p.as_object());
            for (name, property) in properties.into_iter().flatten() {
                assert!(property.get("default").is_none(), "{tool:?}.{name}");
            }
            let output = described.output_schema.unwrap_or_default();
            assert_eq!(
                output.get("type"),
                Some(&serde_json::json!("object")),
                "{tool:?}"
            );
        }
    }
}
