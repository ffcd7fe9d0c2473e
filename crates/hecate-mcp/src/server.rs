//! [`HecateMcp`]: the MCP server handler. It lists the tools this configuration offers
//! and answers `tools/call` by decoding the arguments, authorising the caller (with
//! `--auth kubernetes`), calling hecate-ops, and formatting what ops answered. Nothing
//! here judges a Gate, a Bundle or a Passage.
//!
//! Three kinds of "no", kept apart:
//! - a call of a tool this server does not offer (`approve` above all, or a write tool
//!   on a read-only server) is a JSON-RPC error (`-32602`): there is nothing to call;
//! - an answer a model should read and act on — arguments that do not fit the tool's
//!   input schema or are not Kubernetes names, not found, refused by the rules, not
//!   permitted, Kubernetes or Fides unreachable — is a tool result with `isError: true`,
//!   a sentence in `content` and [`Problem`] in `structuredContent`. Bad arguments
//!   are among them because a model only sees tool results: told what was wrong, it
//!   can correct the call (surfaces §5.3 #102, #126; MCP 2025-11-25, SEP-1303);
//! - everything else is a result with the answer in both.

use std::borrow::Cow;
use std::sync::Arc;

use axum::http::request::Parts;
use hecate_ops::model::RollbackAsked;
use hecate_ops::{
    DiffAgainst, Error as OpsError, Ops, Promoted, RolledBack, Scope, YourTurn, rules,
};
use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{MaybeSendFuture, RequestContext, RoleServer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use hecate_access::quote::{bounded, quote};
use hecate_access::{Caller, Denied, ReviewError, Reviewer};
use hecate_types::names::{is_dns_label, is_dns_subdomain};

use crate::args::Writes;
use crate::render;
use crate::schema::{
    AbortArgs, ApprovalQueue, AuditTrail, BundleArgs, BundleList, DeliveryArgs, DiffArgs, GateArgs,
    GateList, GateName, InNamespace, Lacking, Missing, NoArguments, PassageFilter, PassageList,
    PassageName, Problem, ProblemClass, PromoteArgs, RetryArgs, RollbackArgs,
};
use crate::tools::{self, ToolName};

/// The name the server gives in `serverInfo`.
pub const SERVER_NAME: &str = "hecate";

const INSTRUCTIONS_COMMON: &str = "Hecate moves releases between environments on \
Kubernetes. A Beacon watches artifact sources and emits Bundles: immutable, \
content-addressed sets of artifact versions. A Gate is an environment with the rules for \
entering it (which Bundles, after which upstream Gates, who must approve, when). A Passage \
is one attempt to move one Bundle through one Gate, kept as the record. Hecate moves \
releases by writing to git and letting Flux apply them; it never applies anything to the \
cluster itself. To answer why something has not deployed, call why_stuck: it applies the \
same rules as the controller, so do not assemble your own answer from the other tools.";

const INSTRUCTIONS_READ_ONLY: &str = "This server is read-only: it cannot promote, \
roll back, approve or abort anything. Never say or imply that you did; give the person the command \
that would (why_stuck names it).";

const INSTRUCTIONS_WRITES: &str = "This server can promote, roll back and abort. It can never \
approve, and no setting changes that: approval is a segregation-of-duties control that \
belongs to people. A Bundle waiting for approval must be handed to a person. A refusal is \
the rules' answer: report it; do not retry it, and do not route around it through another \
Gate.";

/// What the server needs besides ops: its default namespace and whether (and as whom)
/// it writes.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The namespace of calls that name none.
    pub namespace: String,
    /// Whether `promote` and `abort` are offered, and who they record.
    pub writes: Writes,
}

/// The MCP server: one per process (stdio) or one shared by every HTTP request.
#[derive(Clone)]
pub struct HecateMcp {
    inner: Arc<Inner>,
}

struct Inner {
    ops: Ops,
    settings: Settings,
    /// Present with `--auth kubernetes`: every call is authorised as its caller.
    reviewer: Option<Reviewer>,
    /// Without `--auth`: the client of the identity the server acts as (the
    /// kubeconfig's), which is then its own caller — asked what it may read.
    itself: Option<kube::Client>,
}

/// How long a message quoting a decoder or a service may be, in characters.
const MESSAGE_CHARS: usize = 300;

/// Arguments that do not fit the tool, in words: a [`Problem`] the model can correct.
struct Invalid(String);

impl From<Invalid> for Problem {
    fn from(invalid: Invalid) -> Self {
        Problem::new(ProblemClass::InvalidArguments, invalid.0)
    }
}

fn invalid(message: impl Into<String>) -> Invalid {
    Invalid(message.into())
}

impl HecateMcp {
    /// A server answering with `ops`. With a `reviewer`, every tool call must come
    /// from an authenticated caller (the HTTP layer puts it on the request) and is
    /// authorised as them.
    pub fn new(ops: Ops, settings: Settings, reviewer: Option<Reviewer>) -> Self {
        Self {
            inner: Arc::new(Inner {
                ops,
                settings,
                reviewer,
                itself: None,
            }),
        }
    }

    /// The same server, knowing that without `--auth` it acts as the identity of
    /// `client`: what that identity may read bounds what `overview` lists, as a
    /// caller's access bounds it with `--auth` (the binary always says).
    #[must_use]
    pub fn acting_as(self, client: kube::Client) -> Self {
        let inner = &self.inner;
        Self {
            inner: Arc::new(Inner {
                ops: inner.ops.clone(),
                settings: inner.settings.clone(),
                reviewer: inner.reviewer.clone(),
                itself: Some(client),
            }),
        }
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    fn writes(&self) -> bool {
        self.inner.settings.writes != Writes::Off
    }

    /// The instructions sent in `initialize` and `server/discover`.
    pub fn instructions(&self) -> String {
        let specific = if self.writes() {
            INSTRUCTIONS_WRITES
        } else {
            INSTRUCTIONS_READ_ONLY
        };
        format!("{INSTRUCTIONS_COMMON}\n\n{specific}")
    }

    /// The tools offered, sorted by name.
    pub fn tools(&self) -> Vec<Tool> {
        tools::offered(self.writes())
            .into_iter()
            .map(ToolName::tool)
            .collect()
    }

    /// The tool called `name`, if this configuration offers it.
    fn offered(&self, name: &str) -> Option<ToolName> {
        ToolName::from_name(name).filter(|tool| !tool.writes() || self.writes())
    }

    /// Answers one `tools/call`.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        caller: Option<&Caller>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(tool) = self.offered(name) else {
            let hint = match name {
                "approve" => format!(" {}", tools::NO_APPROVE),
                "promote" | "rollback" | "abort" => {
                    " This server is read-only: it was started without --allow-writes.".into()
                }
                _ => String::new(),
            };
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}.{hint}", shown_tool_name(name)),
                None,
            ));
        };
        if self.inner.reviewer.is_some() && caller.is_none() {
            // The HTTP layer authenticates before any call reaches here; a call without
            // a caller means it was bypassed, and must not run as the server.
            return Err(ErrorData::internal_error(
                "this server authorises every call as its caller, and this call has none",
                None,
            ));
        }
        let arguments = Value::Object(arguments.unwrap_or_default());
        let call = Call {
            server: self,
            tool,
            caller,
        };
        // Each tool with its arguments decoded; arguments that do not decode are the
        // answer instead.
        macro_rules! with_arguments {
            ($tool:ident) => {
                match decode(tool, arguments) {
                    Ok(arguments) => call.$tool(arguments).await,
                    Err(invalid) => problem_result(&invalid.into()),
                }
            };
        }
        Ok(match tool {
            ToolName::ListGates => with_arguments!(list_gates),
            ToolName::GetGate => with_arguments!(get_gate),
            ToolName::WhyStuck => with_arguments!(why_stuck),
            ToolName::ListBundles => with_arguments!(list_bundles),
            ToolName::ListPassages => with_arguments!(list_passages),
            ToolName::GetPassage => with_arguments!(get_passage),
            ToolName::Audit => with_arguments!(audit),
            ToolName::Approvals => with_arguments!(approvals),
            ToolName::DeliveryMetrics => with_arguments!(delivery_metrics),
            ToolName::DiffBundles => with_arguments!(diff_bundles),
            ToolName::Evidence => with_arguments!(evidence),
            ToolName::Overview => with_arguments!(overview),
            ToolName::Promote => with_arguments!(promote),
            ToolName::PreviewCrossing => with_arguments!(preview_crossing),
            ToolName::Rollback => with_arguments!(rollback),
            ToolName::Abort => with_arguments!(abort),
            ToolName::RolloutTargets => with_arguments!(rollout_targets),
            ToolName::RetryTargets => with_arguments!(retry_targets),
            ToolName::Preflight => with_arguments!(preflight),
            ToolName::FluxResources => with_arguments!(flux_resources),
            ToolName::SuspendFlux => with_arguments!(suspend_flux),
            ToolName::ResumeFlux => with_arguments!(resume_flux),
            ToolName::ReconcileFlux => with_arguments!(reconcile_flux),
        })
    }
}

/// A tool name a client sent, as a refusal names it: as sent when it could be a tool's
/// name (at most 128 of `[A-Za-z0-9_.-]`), else quoted to a short prefix.
fn shown_tool_name(name: &str) -> String {
    let plain = name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if plain { name.to_string() } else { quote(name) }
}

/// The tool's arguments, or the problem naming what does not match its schema (an
/// unknown field, a missing one, a wrong type).
fn decode<T: DeserializeOwned>(tool: ToolName, arguments: Value) -> Result<T, Invalid> {
    serde_json::from_value(arguments).map_err(|e| {
        // The decoder's sentence may quote the input (a field's name, a value): whole,
        // it could be a megabyte.
        invalid(format!(
            "invalid arguments for {}: {}; see its inputSchema",
            tool.as_str(),
            bounded(&e.to_string(), MESSAGE_CHARS)
        ))
    })
}

/// A checked object name, or the problem with it.
fn name_argument(key: &str, value: &str) -> Result<String, Invalid> {
    if is_dns_subdomain(value) {
        Ok(value.to_string())
    } else if value.is_empty() {
        Err(invalid(format!("{key} is required")))
    } else {
        Err(invalid(format!(
            "{key} {} is not a Kubernetes object name (lower-case letters, digits, '-' and '.')",
            quote(value)
        )))
    }
}

/// One tool call in progress.
struct Call<'a> {
    server: &'a HecateMcp,
    tool: ToolName,
    caller: Option<&'a Caller>,
}

/// What a tool answers before it is a result: a value, or a problem to report.
type Answer<T> = Result<T, Problem>;

impl Call<'_> {
    fn ops(&self) -> &Ops {
        &self.server.inner.ops
    }

    /// The namespace a call acts in: its argument, else the server's.
    fn namespace(&self, given: Option<String>) -> Result<String, Invalid> {
        match given.filter(|ns| !ns.is_empty()) {
            None => Ok(self.server.inner.settings.namespace.clone()),
            Some(ns) if is_dns_label(&ns) => Ok(ns),
            Some(ns) => Err(invalid(format!(
                "namespace {} is not a Kubernetes namespace name",
                quote(&ns)
            ))),
        }
    }

    /// Whether the caller may use this tool in `namespace`: always, without
    /// `--auth kubernetes` (the cluster then judges the server's own credentials).
    async fn authorize(&self, namespace: &str) -> Answer<()> {
        let (Some(reviewer), Some(caller)) = (&self.server.inner.reviewer, self.caller) else {
            return Ok(());
        };
        reviewer
            .check(caller, self.tool.operation(), namespace)
            .await
            .map_err(|e| self.unavailable(&e))?
            .map_err(|denied| forbidden(&denied))
    }

    fn actor(&self) -> String {
        match (&self.server.inner.settings.writes, self.caller) {
            (Writes::AsCaller, Some(caller)) => caller.username.clone(),
            (Writes::As(actor), _) => actor.clone(),
            // Unreachable through `call` (write tools are not offered, or a caller is
            // required); an empty actor is refused by ops' NoActor rule regardless.
            _ => String::new(),
        }
    }

    async fn list_gates(&self, args: InNamespace) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            self.authorize(&namespace).await?;
            let overview = self
                .ops()
                .overview(&Scope::Namespaces(vec![namespace.clone()]))
                .await
                .map_err(|e| self.problem(&e))?;
            let gates = overview
                .namespaces
                .into_iter()
                .find(|n| n.namespace == namespace)
                .map(|n| n.gates.clone())
                .unwrap_or_default();
            Ok(GateList { namespace, gates })
        }
        .await;
        result(answer, render::gate_list)
    }

    async fn get_gate(&self, args: GateName) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let name = name_argument("name", &args.name)?;
            self.authorize(&namespace).await?;
            let gate = self.ops().gate(&namespace, &name).await;
            gate.map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::json)
    }

    async fn why_stuck(&self, args: GateArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let gate = name_argument("gate", &args.gate)?;
            self.authorize(&namespace).await?;
            self.ops()
                .explain(&namespace, &gate)
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::why_stuck)
    }

    async fn list_bundles(&self, args: InNamespace) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            self.authorize(&namespace).await?;
            let bundles = self
                .ops()
                .bundles(&namespace)
                .await
                .map_err(|e| self.problem(&e))?;
            Ok(BundleList { namespace, bundles })
        }
        .await;
        result(answer, render::json)
    }

    async fn list_passages(&self, args: PassageFilter) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let gate = match args.gate.filter(|g| !g.is_empty()) {
                Some(gate) => Some(name_argument("gate", &gate)?),
                None => None,
            };
            let bundle = match args.bundle.filter(|b| !b.is_empty()) {
                Some(bundle) => Some(name_argument("bundle", &bundle)?),
                None => None,
            };
            self.authorize(&namespace).await?;
            let passages = self
                .ops()
                .passages(&namespace, gate.as_deref(), bundle.as_deref())
                .await
                .map_err(|e| self.problem(&e))?;
            Ok(PassageList {
                namespace,
                passages,
            })
        }
        .await;
        result(answer, render::json)
    }

    async fn get_passage(&self, args: PassageName) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let name = name_argument("name", &args.name)?;
            self.authorize(&namespace).await?;
            let passage = self.ops().passage(&namespace, &name).await;
            passage.map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::json)
    }

    async fn audit(&self, args: InNamespace) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            self.authorize(&namespace).await?;
            let entries = self
                .ops()
                .audit(&namespace)
                .await
                .map_err(|e| self.problem(&e))?;
            Ok(AuditTrail { namespace, entries })
        }
        .await;
        result(answer, render::json)
    }

    async fn delivery_metrics(&self, args: DeliveryArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let period = rules::delivery::period_or_default(args.since.as_deref())
                .map_err(|e| invalid(format!("since: {e}")))?;
            let gate = match args.gate.filter(|g| !g.is_empty()) {
                Some(gate) => Some(name_argument("gate", &gate)?),
                None => None,
            };
            self.authorize(&namespace).await?;
            self.ops()
                .delivery(&namespace, gate.as_deref(), period)
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::json)
    }

    async fn diff_bundles(&self, args: DiffArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let bundle = name_argument("bundle", &args.bundle)?;
            let against = match args.against.filter(|a| !a.is_empty()) {
                Some(against) => DiffAgainst::Named(name_argument("against", &against)?),
                None => DiffAgainst::Previous,
            };
            self.authorize(&namespace).await?;
            self.ops()
                .diff(&namespace, &bundle, against)
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::json)
    }

    async fn approvals(&self, args: InNamespace) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            self.authorize(&namespace).await?;
            let viewer = self.caller.map(Caller::person).unwrap_or_default();
            let mut waiting = self
                .ops()
                .approval_queue(&namespace, &viewer)
                .await
                .map_err(|e| self.problem(&e))?;
            if self.caller.is_none() {
                // Nobody to say "you" of: an agent never approves.
                for entry in &mut waiting {
                    entry.you = YourTurn::default();
                }
            }
            Ok(ApprovalQueue { namespace, waiting })
        }
        .await;
        result(answer, render::json)
    }

    async fn evidence(&self, args: BundleArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let bundle = name_argument("bundle", &args.bundle)?;
            self.authorize(&namespace).await?;
            self.ops()
                .evidence(&namespace, &bundle)
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::json)
    }

    async fn overview(&self, _args: NoArguments) -> CallToolResult {
        let answer = async {
            let visible = self.visible_namespaces().await?;
            self.ops()
                .overview(&Scope::Namespaces(visible))
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::json)
    }

    /// The namespaces holding Hecate objects whose Gates the caller may list — with
    /// `--auth`, the authenticated caller; without, the identity the server acts as —
    /// judged by hecate-access as the HTTP API judges them. The candidates are what
    /// the server's identity can list cluster-wide; an identity limited to namespaces
    /// cannot, and its one candidate is the server's namespace.
    async fn visible_namespaces(&self) -> Answer<Vec<String>> {
        let candidates = match self.ops().namespaces().await {
            Ok(candidates) => candidates,
            Err(e) if is_forbidden(&e) => vec![self.server.inner.settings.namespace.clone()],
            Err(e) => return Err(self.problem(&e)),
        };
        let inner = &self.server.inner;
        let visible = match (&inner.reviewer, self.caller, &inner.itself) {
            (Some(reviewer), Some(caller), _) => {
                reviewer.visible_namespaces(caller, candidates).await
            }
            (None, _, Some(client)) => hecate_access::visible_to_itself(client, candidates).await,
            // A server built without saying who it acts as: what it could list.
            _ => Ok(candidates),
        };
        visible.map_err(|e| self.unavailable(&e))
    }

    /// A crossing's arguments, checked, once the caller may promote there:
    /// `(namespace, gate, bundle)`.
    async fn crossing(&self, args: PromoteArgs) -> Answer<(String, String, String)> {
        let namespace = self.namespace(args.namespace)?;
        let gate = name_argument("gate", &args.gate)?;
        let bundle = name_argument("bundle", &args.bundle)?;
        self.authorize(&namespace).await?;
        Ok((namespace, gate, bundle))
    }

    async fn promote(&self, args: PromoteArgs) -> CallToolResult {
        let answer = async {
            let (namespace, gate, bundle) = self.crossing(args).await?;
            self.ops()
                .promote(&namespace, &gate, &bundle, &self.actor())
                .await
                .map(|passage| Promoted::from(&passage))
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::promoted)
    }

    async fn preview_crossing(&self, args: PromoteArgs) -> CallToolResult {
        let answer = async {
            let (namespace, gate, bundle) = self.crossing(args).await?;
            self.ops()
                .preview(&namespace, &gate, &bundle, &self.actor())
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::preview)
    }

    async fn rollback(&self, args: RollbackArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let gate = name_argument("gate", &args.gate)?;
            let request = hecate_ops::model::RollbackRequest {
                to: args.to,
                targets: args.targets,
            };
            let asked = request.asked().map_err(|problem| invalid(problem.0))?;
            self.authorize(&namespace).await?;
            let ops = self.ops();
            match asked {
                RollbackAsked::Targets(which) => {
                    ops.rollback_targets(&namespace, &gate, &which, &self.actor())
                        .await
                }
                RollbackAsked::Gate(to) => {
                    ops.rollback(&namespace, &gate, to.as_deref(), &self.actor())
                        .await
                }
            }
            .map(|passage| RolledBack::from(&passage))
            .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::rolled_back)
    }

    async fn abort(&self, args: AbortArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let passage = name_argument("passage", &args.passage)?;
            self.authorize(&namespace).await?;
            self.ops()
                .abort(&namespace, &passage, &self.actor())
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::aborted)
    }

    async fn retry_targets(&self, args: RetryArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let passage = name_argument("passage", &args.passage)?;
            self.authorize(&namespace).await?;
            self.ops()
                .retry(&namespace, &passage, &self.actor())
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::rollout_asked)
    }

    async fn rollout_targets(&self, args: GateArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let gate = name_argument("gate", &args.gate)?;
            self.authorize(&namespace).await?;
            self.ops()
                .targets(&namespace, &gate)
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::targets)
    }
}

/// The tool result for an answer: the value in `structuredContent` and `text` in
/// `content`; or the problem, as an error result.
fn result<T: Serialize>(answer: Answer<T>, text: impl Fn(&T) -> String) -> CallToolResult {
    match answer {
        Ok(value) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(text(&value))]);
            result.structured_content = Some(serde_json::to_value(&value).unwrap_or(Value::Null));
            result
        }
        Err(problem) => problem_result(&problem),
    }
}

/// A problem as an error result a model can read: the sentence and what to do about
/// it in `content`, the typed [`Problem`] in `structuredContent`.
pub fn problem_result(problem: &Problem) -> CallToolResult {
    let advice = match problem.class {
        ProblemClass::InvalidArguments => {
            "Nothing was asked of the cluster. Correct the arguments (the tool's inputSchema says what it takes) and call again."
        }
        ProblemClass::NotFound => {
            "Check the name (names are exact) and the namespace; the list_ tools show what exists."
        }
        ProblemClass::Refused => {
            "This is the rules' answer, not a failure: nothing was changed. Report it; do not retry it or route around it. why_stuck shows what stands in the way."
        }
        ProblemClass::Forbidden => {
            "The caller's Kubernetes RBAC does not allow this; a cluster administrator can grant it. Do not try to get around it with other tools."
        }
        ProblemClass::Unavailable => {
            "Nothing is known to have changed; trying again later may work."
        }
    };
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
        "{}\n{advice}",
        problem.message
    ))]);
    result.structured_content = Some(json!({ "error": problem }));
    result
}

impl Call<'_> {
    /// What an ops failure means to a model, in a sentence of ours: a failure of the
    /// Kubernetes API (or of Fides) is logged whole and answered with what was being
    /// done, never with the client library's dump of the answer.
    fn problem(&self, error: &OpsError) -> Problem {
        let tool = self.tool.as_str();
        match error {
            OpsError::Kubernetes { context, source } => {
                tracing::warn!(tool, error = %error, "a tool call failed at the Kubernetes API");
                match source {
                    kube::Error::Api(status) if status.code == 403 => {
                        // Acting as itself (stdio), the identity is the person's own and
                        // the API server's sentence names the permission they lack.
                        // Acting for callers, it would name the server's identity.
                        let message = if self.server.inner.reviewer.is_some() {
                            format!(
                                "{context}: this server's own Kubernetes credentials may not do that; its operator must grant its role"
                            )
                        } else {
                            format!(
                                "{context}: the Kubernetes API server refused: {}",
                                bounded(&status.message, MESSAGE_CHARS)
                            )
                        };
                        Problem::new(ProblemClass::Forbidden, message)
                    }
                    kube::Error::Api(status) => Problem::new(
                        ProblemClass::Unavailable,
                        format!(
                            "{context}: the Kubernetes API server answered {} {}",
                            status.code,
                            bounded(&status.reason, 40)
                        ),
                    ),
                    _ => Problem::new(
                        ProblemClass::Unavailable,
                        format!("{context}: the Kubernetes API server could not be reached"),
                    ),
                }
            }
            OpsError::Watch { context, .. } => {
                tracing::warn!(tool, error = %error, "a tool call lost a watch");
                Problem::new(
                    ProblemClass::Unavailable,
                    format!("{context}: the watch on the Kubernetes API server was lost"),
                )
            }
            OpsError::Fides { .. } => {
                tracing::warn!(tool, error = %error, "a tool call failed at Fides");
                Problem::new(
                    ProblemClass::Unavailable,
                    bounded(&error.to_string(), MESSAGE_CHARS),
                )
            }
            _ => problem(error),
        }
    }

    /// The cluster could not be asked about the caller: logged whole, answered in a
    /// fixed sentence (the review's error names the server's identity and its RBAC).
    fn unavailable(&self, error: &ReviewError) -> Problem {
        tracing::warn!(tool = self.tool.as_str(), error = %error, "an access review failed");
        Problem::new(
            ProblemClass::Unavailable,
            "could not ask the Kubernetes API server what the caller may do; nothing was done"
                .into(),
        )
    }
}

/// Whether `error` is the Kubernetes API server's 403.
fn is_forbidden(error: &OpsError) -> bool {
    matches!(
        error,
        OpsError::Kubernetes { source: kube::Error::Api(status), .. } if status.code == 403
    )
}

/// What an ops answer that is not a failure means to a model: not found, refused.
fn problem(error: &OpsError) -> Problem {
    let mut problem = Problem::new(ProblemClass::Unavailable, error.to_string());
    match error {
        OpsError::NotFound {
            kind,
            namespace,
            name,
        } => {
            problem.class = ProblemClass::NotFound;
            problem.missing = Some(Missing {
                kind: kind.to_string(),
                name: name.clone(),
                namespace: namespace.clone(),
            });
        }
        OpsError::Refused { action, code, .. } => {
            problem.class = ProblemClass::Refused;
            problem.code = Some(*code);
            problem.action = Some(action.to_string());
        }
        _ => {}
    }
    problem
}

/// The refusal for a caller the cluster does not allow: hecate-access' sentence
/// (who, which permission, where), and the permission as data.
fn forbidden(denied: &Denied) -> Problem {
    Problem {
        permission: Some(Lacking {
            permission: denied.permission,
            namespace: denied.namespace.clone(),
        }),
        ..Problem::new(ProblemClass::Forbidden, denied.to_string())
    }
}

/// The caller the HTTP layer authenticated, from the request's HTTP parts.
fn caller_of(context: &RequestContext<RoleServer>) -> Option<Caller> {
    context
        .extensions
        .get::<Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned()
}

impl ServerHandler for HecateMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions())
    }

    /// Every revision the SDK speaks, newest first: `server/discover` advertises them
    /// in this order, so a client reading the first entry gets the current one.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        let mut versions = ProtocolVersion::KNOWN_VERSIONS.to_vec();
        versions.sort_by(|a, b| b.as_str().cmp(a.as_str()));
        Cow::Owned(versions)
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        std::future::ready(Ok(ListToolsResult::with_all_items(self.tools())))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.offered(name).map(ToolName::tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = caller_of(&context);
        self.call(&request.name, request.arguments, caller.as_ref())
            .await
            .map(CallToolResponse::from)
    }
}

/// The Gate-level reads and the Flux writes of issue 19: preflight, the Flux objects a
/// Gate depends on, and suspending, resuming or reconciling one of them.
impl Call<'_> {
    async fn preflight(&self, args: GateArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let gate = name_argument("gate", &args.gate)?;
            self.authorize(&namespace).await?;
            let bundles = self
                .ops()
                .preflight(&namespace, &gate)
                .await
                .map_err(|e| self.problem(&e))?;
            Ok(crate::schema::PreflightList {
                namespace,
                gate,
                bundles,
            })
        }
        .await;
        result(answer, render::preflight)
    }

    async fn flux_resources(&self, args: GateArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let gate = name_argument("gate", &args.gate)?;
            self.authorize(&namespace).await?;
            let resources = self
                .ops()
                .flux_resources(&namespace, &gate)
                .await
                .map_err(|e| self.problem(&e))?;
            Ok(crate::schema::FluxResourceList {
                namespace,
                gate,
                resources,
            })
        }
        .await;
        result(answer, render::flux_resources)
    }

    async fn suspend_flux(&self, args: crate::schema::FluxObjectArgs) -> CallToolResult {
        self.set_flux_suspend(args, true).await
    }

    async fn resume_flux(&self, args: crate::schema::FluxObjectArgs) -> CallToolResult {
        self.set_flux_suspend(args, false).await
    }

    async fn set_flux_suspend(
        &self,
        args: crate::schema::FluxObjectArgs,
        suspend: bool,
    ) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let gate = name_argument("gate", &args.gate)?;
            let (kind, name) = flux_object(&args.kind, &args.name)?;
            self.authorize(&namespace).await?;
            self.ops()
                .set_flux_suspend(&namespace, &gate, &kind, &name, suspend, &self.actor())
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::flux_suspended)
    }

    async fn reconcile_flux(&self, args: crate::schema::FluxObjectArgs) -> CallToolResult {
        let answer = async {
            let namespace = self.namespace(args.namespace)?;
            let gate = name_argument("gate", &args.gate)?;
            let (kind, name) = flux_object(&args.kind, &args.name)?;
            self.authorize(&namespace).await?;
            self.ops()
                .reconcile_flux(&namespace, &gate, &kind, &name)
                .await
                .map_err(|e| self.problem(&e))
        }
        .await;
        result(answer, render::flux_reconciled)
    }
}

/// A Flux object's kind (a plain identifier) and name (an object name), checked.
fn flux_object(kind: &str, name: &str) -> Result<(String, String), Invalid> {
    if kind.is_empty() {
        return Err(invalid("kind is required".to_string()));
    }
    if !hecate_ops::rules::flux_watch::is_kind(kind) {
        return Err(invalid(format!(
            "kind {} is not a Kubernetes kind (letters and digits, e.g. Kustomization)",
            quote(kind)
        )));
    }
    Ok((kind.to_string(), name_argument("name", name)?))
}
