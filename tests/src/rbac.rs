//! RBAC as Hecate ships it (`deploy/`, the Helm chart rendered), for the tests, the
//! demo and the bench: the user ClusterRoles, the server's ClusterRole bound to the
//! static `hecate-api` identity, and people given roles in a namespace.

use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding, RoleRef, Subject};
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use serde::Deserialize as _;

use crate::{Identity, TestEnv, apply_manifest};

/// `hecate-viewer`, `hecate-promoter`, `hecate-approver`, `hecate-poker`.
const USER_ROLES: &str = include_str!("../../deploy/rbac/user-roles.yaml");
/// The server's Namespace, ServiceAccount, ClusterRole, binding, Deployment, Service.
const SERVER_MANIFEST: &str = include_str!("../../deploy/hecate-api/hecate-api.yaml");
/// The controller's ServiceAccount, ClusterRole, bindings, Lease Role, PodDisruptionBudget,
/// metrics Service and Deployment.
pub const CONTROLLER_MANIFEST: &str =
    include_str!("../../deploy/hecate-controller/hecate-controller.yaml");
const FIELD_MANAGER: &str = "hecate-testenv";

/// A `User` subject for `who`.
pub fn subject(who: Identity) -> Subject {
    Subject {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: "User".into(),
        name: who.username().into(),
        ..Subject::default()
    }
}

/// Installs the user ClusterRoles and the server's ClusterRole as deployed, and binds
/// the latter to the `hecate-api` identity (the server's Deployment binds it to its
/// ServiceAccount instead). Idempotent: server-side apply throughout.
pub async fn install_deployed_roles(admin: &kube::Client) -> anyhow::Result<()> {
    apply_manifest(admin, USER_ROLES, false).await?;
    let role = SERVER_MANIFEST
        .split("\n---\n")
        .find(|d| d.contains("kind: ClusterRole\n"))
        .context("the server's ClusterRole in deploy/hecate-api/hecate-api.yaml")?;
    apply_manifest(admin, role, false).await?;
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some("hecate-api-local".into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "hecate-api".into(),
        },
        subjects: Some(vec![subject(Identity::HecateApi)]),
    };
    Api::<ClusterRoleBinding>::all(admin.clone())
        .patch(
            "hecate-api-local",
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&binding),
        )
        .await?;
    Ok(())
}

/// Installs the controller's ClusterRole as deployed and binds it to the
/// `hecate-controller` identity, as the Deployment binds it to its ServiceAccount.
/// Idempotent.
pub async fn install_controller_role(admin: &kube::Client) -> anyhow::Result<()> {
    let role = CONTROLLER_MANIFEST
        .split("\n---\n")
        .find(|d| d.contains("kind: ClusterRole\n"))
        .context("the controller's ClusterRole in deploy/hecate-controller/")?;
    apply_manifest(admin, role, false).await?;
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some("hecate-controller-local".into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "hecate-controller".into(),
        },
        subjects: Some(vec![subject(Identity::HecateController)]),
    };
    Api::<ClusterRoleBinding>::all(admin.clone())
        .patch(
            "hecate-controller-local",
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&binding),
        )
        .await?;
    Ok(())
}

/// RBAC as deployed for a test: [`install_deployed_roles`], then alice a viewer, bob a
/// promoter, carol and dave approvers in the test's namespace (ci-bot nothing). Returns
/// once the cluster answers with the new bindings.
pub async fn grant_deployed_roles(env: &TestEnv) {
    install_deployed_roles(&env.admin)
        .await
        .expect("installing the deployed roles");
    for (people, role) in [
        (&[Identity::Alice][..], "hecate-viewer"),
        (&[Identity::Bob], "hecate-promoter"),
        (&[Identity::Carol, Identity::Dave], "hecate-approver"),
    ] {
        env.create(RoleBinding {
            metadata: ObjectMeta {
                name: Some(role.into()),
                ..ObjectMeta::default()
            },
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "ClusterRole".into(),
                name: role.into(),
            },
            subjects: Some(people.iter().map(|who| subject(*who)).collect()),
        })
        .await;
    }
    for (who, verb, resource, subresource) in [
        (Identity::HecateApi, "create", "passages", ""),
        (Identity::Alice, "list", "gates", ""),
        (Identity::Bob, "create", "passages", ""),
        (Identity::Carol, "update", "bundles", "status"),
        (Identity::Dave, "update", "bundles", "status"),
    ] {
        await_access(env, who, verb, resource, subresource).await;
    }
}

/// Waits until `who` may `verb` the `hecate.dev` `resource` (`/subresource`, unless
/// empty) in the test's namespace: the API server learns of new bindings from a watch.
pub async fn await_access(
    env: &TestEnv,
    who: Identity,
    verb: &str,
    resource: &str,
    subresource: &str,
) {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(who.username().into()),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(env.namespace.clone()),
                group: Some("hecate.dev".into()),
                resource: Some(resource.into()),
                subresource: (!subresource.is_empty()).then(|| subresource.into()),
                verb: Some(verb.into()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    for _ in 0..100 {
        let answer = Api::<SubjectAccessReview>::all(env.admin.clone())
            .create(&PostParams::default(), &review)
            .await
            .expect("a SubjectAccessReview");
        if answer.status.is_some_and(|s| s.allowed) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{who} never got {verb} {resource}");
}

/// The records policy as deployed (`deploy/rbac/records-policy.yaml`): what people may
/// write in Hecate's records.
const RECORDS_POLICY: &str = include_str!("../../deploy/rbac/records-policy.yaml");

/// Who writes Hecate's records as Hecate does on a test control plane: the static
/// identities the controller and hecate-api run as, and the administrator, who plays
/// the controller in the tests that write a status themselves.
pub const RECORD_WRITERS: [Identity; 3] = [
    Identity::Admin,
    Identity::HecateController,
    Identity::HecateApi,
];

/// A group whose members write Hecate's records as Hecate does on a test control
/// plane (as `recordsPolicy.trustedGroups` would): a test that runs the controller as
/// a user of its own — one per shard — adds it to that user.
pub const RECORD_WRITER_GROUP: &str = "hecate:test-controllers";

/// The records policy as deployed, trusting `writers` besides the chart's own
/// ServiceAccounts (as `recordsPolicy.trustedWriters` would), and the members of
/// [`RECORD_WRITER_GROUP`].
pub fn records_policy(writers: &[Identity]) -> anyhow::Result<String> {
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(RECORDS_POLICY) {
        let mut value = serde_json::Value::deserialize(document)?;
        if value["kind"] == "ValidatingAdmissionPolicy" {
            let condition = value["spec"]["matchConditions"]
                .get_mut(0)
                .context("the records policy's match condition")?;
            let expression = condition["expression"]
                .as_str()
                .context("the match condition's expression")?;
            let (head, list) = expression
                .split_once(" in ")
                .context("the match condition names the trusted writers")?;
            let list = list
                .strip_suffix(')')
                .context("the match condition's list of writers")?;
            let mut trusted: Vec<String> = serde_json::from_str(list)?;
            trusted.extend(writers.iter().map(|w| w.username().to_string()));
            condition["expression"] =
                format!("{head} in {})", serde_json::to_string(&trusted)?).into();
            let conditions = value["spec"]["matchConditions"]
                .as_array_mut()
                .context("the records policy's match conditions")?;
            conditions.push(serde_json::json!({
                "name": "not-in-a-trusted-group",
                "expression": format!(
                    "!request.userInfo.groups.exists(g, g == '{RECORD_WRITER_GROUP}')"
                ),
            }));
        }
        if !value.is_null() {
            documents.push(serde_yaml_ng::to_string(&value)?);
        }
    }
    Ok(documents.join("---\n"))
}

/// Installs the records policy on a test control plane, trusting [`RECORD_WRITERS`]:
/// every test's people write under it, as they would in an installation. (The API
/// server enforces a new policy a moment after it is created.)
pub async fn install_records_policy(admin: &kube::Client) -> anyhow::Result<()> {
    apply_manifest(admin, &records_policy(&RECORD_WRITERS)?, false).await?;
    Ok(())
}
