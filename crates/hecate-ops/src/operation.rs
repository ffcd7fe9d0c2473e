//! The operation catalogue: every read and action a surface performs, and the one
//! Kubernetes permission each needs of its caller.
//!
//! The HTTP API and the MCP server authorise a caller with a SubjectAccessReview for
//! [`Operation::permission`]; the CLI, which acts with the caller's own credentials,
//! uses it to say what a refusal means. One table, so a surface cannot ask for a
//! different permission than another for the same read (`docs/DECISIONS.md`, "Reads
//! are authorised on the resource read").
//!
//! Reads are authorised on the resource actually read: a single Gate (or its
//! explanation) needs `get gates`, the Bundle list `list bundles`, and so on. What
//! spans a namespace — its visibility, the overview, the audit trail, the event
//! stream — needs `list gates`, the reference's read permission. Writes keep the
//! reference's verbs (`design.md`, surfaces §2.6) — promote is `create passages`,
//! approve `update bundles/status`, poll `update beacons`, so four-eyes approval is
//! enforceable by RBAC alone — but for abort, which is asked as what it does, a merge
//! patch: `patch passages`. The shipped promoter role grants no `update` of a Passage
//! (`docs/DECISIONS.md`, "Promoters create and patch, never update").

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

/// Something a caller asks Hecate to do. Serialised by its name in camelCase
/// (`promote`, `suspendFlux`), a stable key (`GET …/rights` answers with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Operation {
    /// Which namespaces hold Hecate objects the caller may read.
    Namespaces,
    /// Every visible Gate at a glance.
    Overview,
    /// The Gates of a namespace.
    ListGates,
    /// One Gate.
    GetGate,
    /// Why a Gate is where it is.
    Explain,
    /// A Gate's targets and the rollout across them.
    Targets,
    /// The Bundles of a namespace.
    ListBundles,
    /// One Bundle.
    GetBundle,
    /// The Bundles waiting on a person for a Gate: approvals missing, or a "no".
    Approvals,
    /// A Bundle's evidence in Fides.
    Evidence,
    /// Checking a Bundle's recorded trail.
    Verify,
    /// The Passages of a namespace.
    ListPassages,
    /// One Passage.
    GetPassage,
    /// The Beacons of a namespace.
    ListBeacons,
    /// One Beacon.
    GetBeacon,
    /// What happened in a namespace.
    Audit,
    /// How well a namespace delivers: lead time, deployment frequency, change failure
    /// rate and time to restore.
    Delivery,
    /// Following changes in a namespace.
    Watch,
    /// Who is told about a namespace's releases, and what was sent (DECISION 166).
    Notifications,
    /// Starting a crossing.
    Promote,
    /// Crossing a Gate's earlier Bundle again, undoing its latest crossing.
    Rollback,
    /// Approving a Bundle for a Gate.
    Approve,
    /// Saying no to a Bundle for a Gate.
    Reject,
    /// Withdrawing a "no".
    WithdrawRejection,
    /// Stopping a crossing.
    Abort,
    /// Crossing the failed targets of a halted rollout again (DECISION 157).
    RetryTargets,
    /// Accepting the failures that halted a rollout, so it goes on (DECISION 157).
    AcceptFailures,
    /// Asking a Beacon to look now.
    Poll,
    /// Whether Fides' evidence gate would let each eligible Bundle through.
    Preflight,
    /// The Flux objects a Gate depends on, as they stand.
    FluxResources,
    /// Suspending or resuming a Flux object a Gate depends on.
    SuspendFlux,
    /// Asking Flux to reconcile an object a Gate depends on now.
    ReconcileFlux,
    /// The settings page: the Fides servers and clusters a namespace's Gates use
    /// (asked per namespace, like the overview).
    Settings,
    /// Who holds the roles Hecate grants (cluster-wide).
    ListGrants,
    /// Granting a person or group one of Hecate's roles (cluster-wide).
    Grant,
    /// Binding one named ClusterRole: the API server's own escalation check, asked
    /// of a grant's caller, since the server does the binding.
    BindRole,
    /// Storing a remote cluster's kubeconfig as a Secret.
    ConnectCluster,
    /// Changing a Gate's evidence settings.
    SetGateEvidence,
}

/// A plain string enum of the names (OpenAPI 3.0, which the API's document is, has no
/// `const`: a `oneOf` of documented constants would match every string).
impl JsonSchema for Operation {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Operation".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<serde_json::Value> = Self::ALL
            .iter()
            .filter_map(|o| serde_json::to_value(o).ok())
            .collect();
        schemars::json_schema!({
            "description": "An operation of the catalogue, by name (`promote`, `suspendFlux`, …).",
            "type": "string",
            "enum": names,
        })
    }
}

/// A Kubernetes permission: a verb on a resource (and perhaps a subresource) of an
/// API group, as a SubjectAccessReview asks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
pub struct Permission {
    /// The verb, e.g. `create`.
    pub verb: &'static str,
    /// The API group: `hecate.dev`, or Flux's for operating Flux objects.
    pub group: &'static str,
    /// The resource (plural), e.g. `passages`.
    pub resource: &'static str,
    /// The subresource, e.g. `status`; absent when none.
    #[serde(skip_serializing_if = "is_empty")]
    // Optional in the schema too: absent is how "none" is sent.
    #[schemars(default)]
    pub subresource: &'static str,
}

fn is_empty(text: &&str) -> bool {
    text.is_empty()
}

impl Permission {
    /// `patch` on Flux Kustomizations: what operating any Flux object a Gate depends
    /// on needs, whatever its kind (surfaces spec §2.6, `operateFlux`).
    const FLUX_PATCH: Self = Self {
        verb: "patch",
        group: "kustomize.toolkit.fluxcd.io",
        resource: "kustomizations",
        subresource: "",
    };

    /// `verb` on ClusterRoleBindings: listing and granting Hecate's roles.
    const fn rbac(verb: &'static str) -> Self {
        Self {
            verb,
            group: "rbac.authorization.k8s.io",
            resource: "clusterrolebindings",
            subresource: "",
        }
    }

    const fn hecate(verb: &'static str, resource: &'static str) -> Self {
        Self {
            verb,
            group: hecate_types::GROUP,
            resource,
            subresource: "",
        }
    }

    /// `resource` or `resource/subresource`.
    pub fn resource_path(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }
}

/// `verb resource[/subresource]`, as refusals word it: `update bundles/status`.
impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.verb, self.resource_path())
    }
}

impl Operation {
    /// Every operation, reads first.
    pub const ALL: [Self; 38] = [
        Self::Namespaces,
        Self::Overview,
        Self::ListGates,
        Self::GetGate,
        Self::Explain,
        Self::Targets,
        Self::ListBundles,
        Self::GetBundle,
        Self::Approvals,
        Self::Evidence,
        Self::Verify,
        Self::ListPassages,
        Self::GetPassage,
        Self::ListBeacons,
        Self::GetBeacon,
        Self::Audit,
        Self::Delivery,
        Self::Watch,
        Self::Notifications,
        Self::Preflight,
        Self::FluxResources,
        Self::Settings,
        Self::ListGrants,
        Self::Promote,
        Self::Rollback,
        Self::Approve,
        Self::Reject,
        Self::WithdrawRejection,
        Self::Abort,
        Self::RetryTargets,
        Self::AcceptFailures,
        Self::Poll,
        Self::SuspendFlux,
        Self::ReconcileFlux,
        Self::Grant,
        Self::BindRole,
        Self::ConnectCluster,
        Self::SetGateEvidence,
    ];

    /// The permission a caller needs for it, in the namespace it acts on.
    pub const fn permission(self) -> Permission {
        match self {
            Self::Namespaces
            | Self::Overview
            | Self::ListGates
            | Self::Audit
            | Self::Delivery
            | Self::Watch
            | Self::Settings => Permission::hecate("list", "gates"),
            Self::GetGate
            | Self::Explain
            | Self::Targets
            | Self::Preflight
            | Self::FluxResources => Permission::hecate("get", "gates"),
            Self::ListBundles | Self::Approvals => Permission::hecate("list", "bundles"),
            Self::GetBundle | Self::Evidence | Self::Verify => Permission::hecate("get", "bundles"),
            Self::ListPassages => Permission::hecate("list", "passages"),
            Self::GetPassage => Permission::hecate("get", "passages"),
            Self::ListBeacons => Permission::hecate("list", "beacons"),
            Self::GetBeacon => Permission::hecate("get", "beacons"),
            Self::Notifications => Permission::hecate("list", "notifiers"),
            // A rollback is a crossing like any other: it creates a Passage.
            Self::Promote | Self::Rollback => Permission::hecate("create", "passages"),
            // A "no" and its withdrawal are written where approvals are, by the
            // same people.
            Self::Approve | Self::Reject | Self::WithdrawRejection => Permission {
                subresource: "status",
                ..Permission::hecate("update", "bundles")
            },
            // What abort sends: a merge patch of `spec.abort` (surfaces quirk: the
            // reference asks `update`, which the promoter role no longer grants).
            // A retry or an acceptance is a request appended to the Passage's
            // `spec.rollout`, in the asker's name, as abort's is.
            Self::Abort | Self::RetryTargets | Self::AcceptFailures => {
                Permission::hecate("patch", "passages")
            }
            Self::Poll => Permission::hecate("update", "beacons"),
            Self::SuspendFlux | Self::ReconcileFlux => Permission::FLUX_PATCH,
            Self::ListGrants => Permission::rbac("list"),
            Self::Grant => Permission::rbac("create"),
            Self::BindRole => Permission {
                verb: "bind",
                group: "rbac.authorization.k8s.io",
                resource: "clusterroles",
                subresource: "",
            },
            Self::ConnectCluster => Permission {
                verb: "create",
                group: "",
                resource: "secrets",
                subresource: "",
            },
            Self::SetGateEvidence => Permission::hecate("update", "gates"),
        }
    }

    /// Whether it changes anything. A write's access is always asked afresh.
    pub const fn writes(self) -> bool {
        matches!(
            self,
            Self::Promote
                | Self::Rollback
                | Self::Approve
                | Self::Reject
                | Self::WithdrawRejection
                | Self::Abort
                | Self::RetryTargets
                | Self::AcceptFailures
                | Self::Poll
                | Self::SuspendFlux
                | Self::ReconcileFlux
                | Self::Grant
                | Self::BindRole
                | Self::ConnectCluster
                | Self::SetGateEvidence
        )
    }

    /// The role the Helm chart ships (`templates/user-roles.yaml`) that grants it, for
    /// telling a refused person what to ask for; `None` where no shipped role does
    /// (the settings writes: a cluster administrator's).
    pub const fn role(self) -> Option<&'static str> {
        match self {
            Self::Promote
            | Self::Rollback
            | Self::Abort
            | Self::RetryTargets
            | Self::AcceptFailures => Some("hecate-promoter"),
            Self::Approve | Self::Reject | Self::WithdrawRejection => Some("hecate-approver"),
            Self::Poll => Some("hecate-poker"),
            Self::SuspendFlux | Self::ReconcileFlux => Some("hecate-flux-operator"),
            Self::ListGrants
            | Self::Grant
            | Self::BindRole
            | Self::ConnectCluster
            | Self::SetGateEvidence => None,
            _ => Some("hecate-viewer"),
        }
    }

    /// Whether it is asked cluster-wide (its namespace is empty) rather than in a
    /// namespace.
    pub const fn cluster_wide(self) -> bool {
        matches!(self, Self::ListGrants | Self::Grant | Self::BindRole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_but_flux_writes_has_a_hecate_permission() {
        let flux = [Operation::SuspendFlux, Operation::ReconcileFlux];
        let settings = [
            Operation::ListGrants,
            Operation::Grant,
            Operation::BindRole,
            Operation::ConnectCluster,
        ];
        for operation in Operation::ALL
            .into_iter()
            .filter(|o| !flux.contains(o) && !settings.contains(o))
        {
            let permission = operation.permission();
            assert_eq!(permission.group, "hecate.dev", "{operation:?}");
            assert!(
                ["gates", "bundles", "passages", "beacons", "notifiers"]
                    .contains(&permission.resource),
                "{operation:?}"
            );
            assert!(!permission.verb.is_empty(), "{operation:?}");
        }
        let mut sorted = Operation::ALL.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), Operation::ALL.len(), "each once");
    }

    #[test]
    fn writes_use_the_specs_verbs() {
        let writes: Vec<(Operation, String)> = Operation::ALL
            .into_iter()
            .filter(|o| o.writes())
            .map(|o| (o, o.permission().to_string()))
            .collect();
        assert_eq!(
            writes,
            [
                (Operation::Promote, "create passages".to_string()),
                (Operation::Rollback, "create passages".to_string()),
                (Operation::Approve, "update bundles/status".to_string()),
                (Operation::Reject, "update bundles/status".to_string()),
                (
                    Operation::WithdrawRejection,
                    "update bundles/status".to_string()
                ),
                (Operation::Abort, "patch passages".to_string()),
                (Operation::RetryTargets, "patch passages".to_string()),
                (Operation::AcceptFailures, "patch passages".to_string()),
                (Operation::Poll, "update beacons".to_string()),
                (Operation::SuspendFlux, "patch kustomizations".to_string()),
                (Operation::ReconcileFlux, "patch kustomizations".to_string()),
                (Operation::Grant, "create clusterrolebindings".to_string()),
                (Operation::BindRole, "bind clusterroles".to_string()),
                (Operation::ConnectCluster, "create secrets".to_string()),
                (Operation::SetGateEvidence, "update gates".to_string()),
            ]
        );
        // The settings writes ask the spec's groups (surfaces §2.6): RBAC's, and the
        // core group (empty) for Secrets.
        assert_eq!(
            Operation::Grant.permission().group,
            "rbac.authorization.k8s.io"
        );
        assert_eq!(Operation::ConnectCluster.permission().group, "");
        assert!(Operation::Grant.cluster_wide() && Operation::ListGrants.cluster_wide());
        assert!(!Operation::ConnectCluster.cluster_wide());
        // Operating Flux is asked in Flux's own group, never as a Hecate permission.
        for flux in [Operation::SuspendFlux, Operation::ReconcileFlux] {
            assert_eq!(flux.permission().group, "kustomize.toolkit.fluxcd.io");
        }
    }

    #[test]
    fn reads_only_get_or_list_the_resource_they_read() {
        for operation in Operation::ALL.into_iter().filter(|o| !o.writes()) {
            let permission = operation.permission();
            assert!(
                ["get", "list"].contains(&permission.verb),
                "{operation:?} reads"
            );
            assert_eq!(permission.subresource, "", "{operation:?}");
        }
        // What spans a namespace is `list gates`, the reference's read permission.
        for spanning in [
            Operation::Namespaces,
            Operation::Overview,
            Operation::Audit,
            Operation::Watch,
        ] {
            assert_eq!(spanning.permission().to_string(), "list gates");
        }
        assert_eq!(Operation::Explain.permission().to_string(), "get gates");
        assert_eq!(
            Operation::ListBundles.permission().to_string(),
            "list bundles"
        );
        assert_eq!(Operation::Evidence.permission().to_string(), "get bundles");
        assert_eq!(Operation::Preflight.permission().to_string(), "get gates");
        assert_eq!(
            Operation::FluxResources.permission().to_string(),
            "get gates"
        );
    }

    #[test]
    fn every_operation_names_the_shipped_role_that_grants_it() {
        // Reads: the viewer role; each write its own role, as the chart grants them.
        for operation in Operation::ALL.into_iter().filter(|o| !o.writes()) {
            let expected = (!operation.cluster_wide()).then_some("hecate-viewer");
            assert_eq!(operation.role(), expected, "{operation:?}");
        }
        assert_eq!(Operation::Promote.role(), Some("hecate-promoter"));
        assert_eq!(Operation::Rollback.role(), Some("hecate-promoter"));
        assert_eq!(Operation::Abort.role(), Some("hecate-promoter"));
        assert_eq!(Operation::Approve.role(), Some("hecate-approver"));
        assert_eq!(Operation::Poll.role(), Some("hecate-poker"));
        assert_eq!(Operation::SuspendFlux.role(), Some("hecate-flux-operator"));
        assert_eq!(Operation::Grant.role(), None);
        assert_eq!(
            serde_json::to_value(Operation::SuspendFlux).ok(),
            Some(serde_json::json!("suspendFlux"))
        );
        let schema = serde_json::to_value(schemars::schema_for!(Operation)).ok();
        let names = schema
            .as_ref()
            .and_then(|s| s["enum"].as_array())
            .map(Vec::len);
        assert_eq!(
            names,
            Some(Operation::ALL.len()),
            "a plain enum: {schema:?}"
        );
    }

    #[test]
    fn permissions_serialise_without_an_empty_subresource() {
        assert_eq!(
            serde_json::to_value(Operation::Explain.permission()).ok(),
            Some(serde_json::json!({"verb": "get", "group": "hecate.dev", "resource": "gates"}))
        );
        assert_eq!(
            serde_json::to_value(Operation::Approve.permission()).ok(),
            Some(
                serde_json::json!({"verb": "update", "group": "hecate.dev", "resource": "bundles", "subresource": "status"})
            )
        );
    }
}
