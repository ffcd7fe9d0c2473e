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
//! reference's verbs exactly (`design.md`, surfaces §2.6): promote is `create
//! passages`, approve `update bundles/status`, abort `update passages`, poll `update
//! beacons` — so four-eyes approval is enforceable by RBAC alone.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

/// Something a caller asks Hecate to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    /// The Bundles of a namespace.
    ListBundles,
    /// One Bundle.
    GetBundle,
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
    /// Following changes in a namespace.
    Watch,
    /// Starting a crossing.
    Promote,
    /// Approving a Bundle for a Gate.
    Approve,
    /// Stopping a crossing.
    Abort,
    /// Asking a Beacon to look now.
    Poll,
}

/// A Kubernetes permission: a verb on a resource (and perhaps a subresource) of an
/// API group, as a SubjectAccessReview asks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
pub struct Permission {
    /// The verb, e.g. `create`.
    pub verb: &'static str,
    /// The API group, `hecate.dev`.
    pub group: &'static str,
    /// The resource (plural), e.g. `passages`.
    pub resource: &'static str,
    /// The subresource, e.g. `status`; absent when none.
    #[serde(skip_serializing_if = "is_empty")]
    pub subresource: &'static str,
}

fn is_empty(text: &&str) -> bool {
    text.is_empty()
}

impl Permission {
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
    pub const ALL: [Self; 19] = [
        Self::Namespaces,
        Self::Overview,
        Self::ListGates,
        Self::GetGate,
        Self::Explain,
        Self::ListBundles,
        Self::GetBundle,
        Self::Evidence,
        Self::Verify,
        Self::ListPassages,
        Self::GetPassage,
        Self::ListBeacons,
        Self::GetBeacon,
        Self::Audit,
        Self::Watch,
        Self::Promote,
        Self::Approve,
        Self::Abort,
        Self::Poll,
    ];

    /// The permission a caller needs for it, in the namespace it acts on.
    pub const fn permission(self) -> Permission {
        match self {
            Self::Namespaces | Self::Overview | Self::ListGates | Self::Audit | Self::Watch => {
                Permission::hecate("list", "gates")
            }
            Self::GetGate | Self::Explain => Permission::hecate("get", "gates"),
            Self::ListBundles => Permission::hecate("list", "bundles"),
            Self::GetBundle | Self::Evidence | Self::Verify => Permission::hecate("get", "bundles"),
            Self::ListPassages => Permission::hecate("list", "passages"),
            Self::GetPassage => Permission::hecate("get", "passages"),
            Self::ListBeacons => Permission::hecate("list", "beacons"),
            Self::GetBeacon => Permission::hecate("get", "beacons"),
            Self::Promote => Permission::hecate("create", "passages"),
            Self::Approve => Permission {
                subresource: "status",
                ..Permission::hecate("update", "bundles")
            },
            Self::Abort => Permission::hecate("update", "passages"),
            Self::Poll => Permission::hecate("update", "beacons"),
        }
    }

    /// Whether it changes anything. A write's access is always asked afresh.
    pub const fn writes(self) -> bool {
        matches!(
            self,
            Self::Promote | Self::Approve | Self::Abort | Self::Poll
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_a_hecate_permission() {
        for operation in Operation::ALL {
            let permission = operation.permission();
            assert_eq!(permission.group, "hecate.dev", "{operation:?}");
            assert!(
                ["gates", "bundles", "passages", "beacons"].contains(&permission.resource),
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
                (Operation::Approve, "update bundles/status".to_string()),
                (Operation::Abort, "update passages".to_string()),
                (Operation::Poll, "update beacons".to_string()),
            ]
        );
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
