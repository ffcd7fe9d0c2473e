//! What a caller may do in a namespace: the operation catalogue, each operation
//! answered as the cluster answered its permission, with the shipped role that would
//! grant it. A surface shows who is signed in and what they may do, and disables what
//! they may not, naming the role to ask for — the cluster still decides each write
//! when it is made.

use schemars::JsonSchema;
use serde::Serialize;

use crate::operation::{Operation, Permission};

/// The operations asked about in a namespace: every one of the catalogue but those
/// asked cluster-wide, reads first.
pub fn namespaced() -> impl Iterator<Item = Operation> {
    Operation::ALL.into_iter().filter(|o| !o.cluster_wide())
}

/// One operation and whether the caller may perform it here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Right {
    /// The operation (`promote`, `approve`, `suspendFlux`, …).
    pub operation: Operation,
    /// Whether the cluster allows it.
    pub allowed: bool,
    /// Whether it changes anything.
    pub writes: bool,
    /// The permission it needs.
    pub permission: Permission,
    /// The shipped role that grants it; absent where none does.
    #[serde(skip_serializing_if = "str::is_empty")]
    #[schemars(default)]
    pub role: &'static str,
}

/// What a caller may do in one namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rights {
    /// Who asked, as the cluster named them.
    pub user: String,
    /// Where.
    pub namespace: String,
    /// Whether they may read the namespace at all (its Gates: what the overview, the
    /// namespace list and the event stream need).
    pub reads: bool,
    /// The writes they may perform here, by operation name, in the catalogue's order.
    pub may: Vec<Operation>,
    /// Every namespaced operation of the catalogue, with the answer.
    pub operations: Vec<Right>,
}

impl Rights {
    /// The answer from each operation's decision, in the catalogue's order.
    pub fn new(
        user: impl Into<String>,
        namespace: impl Into<String>,
        decided: impl IntoIterator<Item = (Operation, bool)>,
    ) -> Self {
        let operations: Vec<Right> = decided
            .into_iter()
            .map(|(operation, allowed)| Right {
                operation,
                allowed,
                writes: operation.writes(),
                permission: operation.permission(),
                role: operation.role().unwrap_or_default(),
            })
            .collect();
        let reads = operations
            .iter()
            .any(|r| r.operation == Operation::Namespaces && r.allowed);
        let may = operations
            .iter()
            .filter(|r| r.writes && r.allowed)
            .map(|r| r.operation)
            .collect();
        Self {
            user: user.into(),
            namespace: namespace.into(),
            reads,
            may,
            operations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_promoter_reads_and_may_promote_and_abort() {
        let promoter = [
            Operation::Namespaces,
            Operation::ListGates,
            Operation::Promote,
            Operation::Abort,
        ];
        let rights = Rights::new(
            "bob",
            "shop",
            namespaced().map(|o| (o, promoter.contains(&o))),
        );
        assert!(rights.reads);
        assert_eq!(rights.may, [Operation::Promote, Operation::Abort]);
        assert_eq!(rights.operations.len(), namespaced().count());
        let approve = rights
            .operations
            .iter()
            .find(|r| r.operation == Operation::Approve)
            .map(|r| (r.allowed, r.role));
        assert_eq!(approve, Some((false, "hecate-approver")));
        assert!(
            !namespaced().any(|o| o.cluster_wide()),
            "only a namespace's operations"
        );
        let json = serde_json::to_value(&rights).ok();
        assert_eq!(
            json.as_ref().map(|j| j["may"].clone()),
            Some(serde_json::json!(["promote", "abort"]))
        );
    }

    #[test]
    fn someone_without_a_role_reads_nothing() {
        let rights = Rights::new("ci-bot", "default", namespaced().map(|o| (o, false)));
        assert!(!rights.reads);
        assert!(rights.may.is_empty());
    }
}
