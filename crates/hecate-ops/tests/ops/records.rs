//! What people write cannot forge what the rules trust (#50, DECISION 148): the
//! records policy the chart ships (`deploy/rbac/records-policy.yaml`), in force on
//! the test control plane, with the chart's user roles. Everyone here writes as
//! themselves, with their own credentials, as the CLI does; only the administrator
//! (the controller's stand-in) is trusted.

use std::time::{Duration, Instant};

use hecate_ops::{Ops, Person};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Bundle, Gate, Passage};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::Status;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::fixtures::*;

/// `who` as the cluster says they are (the CLI asks a SelfSubjectReview).
fn as_cluster_says(who: Identity) -> Person {
    let mut groups: Vec<String> = who.groups().iter().map(|g| g.to_string()).collect();
    groups.push("system:authenticated".into());
    Person {
        name: who.username().into(),
        groups,
    }
}

/// Production asking two release managers; b1 cleared staging by bob; ci-bot may
/// approve (the chart's hecate-approver) but is no release manager.
async fn world(env: &TestEnv) {
    hecate_testenv::rbac::grant_deployed_roles(env).await;
    env.create(k8s_openapi::api::rbac::v1::RoleBinding {
        metadata: kube::api::ObjectMeta {
            name: Some("ci-bot-approver".into()),
            ..Default::default()
        },
        role_ref: k8s_openapi::api::rbac::v1::RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "hecate-approver".into(),
        },
        subjects: Some(vec![hecate_testenv::rbac::subject(Identity::CiBot)]),
    })
    .await;
    hecate_testenv::rbac::await_access(env, Identity::CiBot, "patch", "bundles", "status").await;
    gate(env, "production", release_managers_spec("")).await;
    cleared_by(env, "b1", &["staging"], "bob").await;
}

/// b1 as it is now.
async fn b1(env: &TestEnv) -> Bundle {
    env.api::<Bundle>().get("b1").await.unwrap()
}

/// A merge patch of b1's status as `who`: the API server's refusal, if any.
async fn patch_status(env: &TestEnv, who: Identity, patch: Value) -> Result<(), Status> {
    let bundles: Api<Bundle> = Api::namespaced(env.client(who).await, &env.namespace);
    match bundles
        .patch_status("b1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(refusal)) => Err(*refusal),
        Err(other) => panic!("patching b1's status: {other}"),
    }
}

fn refused_by_policy(answer: Result<(), Status>, says: &str) {
    let refusal = answer.expect_err("the records policy refuses it");
    assert_eq!(refusal.code, 403, "{refusal:?}");
    assert!(
        refusal.message.contains("ValidatingAdmissionPolicy") && refusal.message.contains(says),
        "{}",
        refusal.message
    );
}

/// Waits until the API server enforces the records policy (it loads a new policy a
/// moment after it is created): ci-bot's forged clearing is refused. Should one get
/// through before then, the administrator puts b1 back as it was.
async fn await_policy(env: &TestEnv) {
    let before = b1(env).await;
    let forged = json!({"status": {"cleared": [
        {"gate": "staging", "actor": "bob", "at": "2026-12-01T00:00:00Z"},
        {"gate": "dev", "actor": "controller", "at": "2026-12-01T00:00:00Z"}
    ]}});
    let deadline = Instant::now() + Duration::from_secs(30);
    while patch_status(env, Identity::CiBot, forged.clone())
        .await
        .is_ok()
    {
        assert!(
            Instant::now() < deadline,
            "the records policy was never enforced"
        );
        let mut current = b1(env).await;
        current.status = before.status.clone();
        env.api::<Bundle>()
            .replace_status("b1", &PostParams::default(), &current)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn an_approver_cannot_forge_clearings_approvals_or_erase_rejections() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    world(&env).await;
    await_policy(&env).await;

    // A clearing that never happened, as the probe found it (#50 item 1).
    refused_by_policy(
        patch_status(
            &env,
            Identity::CiBot,
            json!({"status": {"cleared": [{"gate": "dev", "actor": "controller", "at": "2026-12-01T00:00:00Z"}]}}),
        )
        .await,
        "status.cleared",
    );
    // carol's and dave's approvals, written by ci-bot.
    refused_by_policy(
        patch_status(
            &env,
            Identity::CiBot,
            json!({"status": {"approvals": [
                {"gate": "production", "actor": "carol", "groups": ["release-managers"], "at": "2026-12-01T00:00:00Z"},
                {"gate": "production", "actor": "dave", "groups": ["release-managers"], "at": "2026-12-01T00:00:00Z"}
            ]}}),
        )
        .await,
        "in their own name",
    );
    // ci-bot's own, in a group the cluster does not give it.
    refused_by_policy(
        patch_status(
            &env,
            Identity::CiBot,
            json!({"status": {"approvals": [
                {"gate": "production", "actor": "ci-bot", "groups": ["release-managers"], "at": "2026-12-01T00:00:00Z"}
            ]}}),
        )
        .await,
        "groups the cluster gives them",
    );
    // The reference's record, in another's name.
    refused_by_policy(
        patch_status(
            &env,
            Identity::CiBot,
            json!({"status": {"approvedFor": [{"gate": "production", "actor": "carol", "at": "2026-12-01T00:00:00Z"}]}}),
        )
        .await,
        "approvedFor",
    );

    // carol and dave approve as the CLI does: their own credentials, their own groups.
    let as_carol = Ops::new(env.client(Identity::Carol).await);
    let as_dave = Ops::new(env.client(Identity::Dave).await);
    let as_ci_bot = Ops::new(env.client(Identity::CiBot).await);
    as_carol
        .reject(
            ns,
            "b1",
            "production",
            as_cluster_says(Identity::Carol),
            "not before the migration",
        )
        .await
        .unwrap();
    // Erasing carol's "no", or rewriting it.
    refused_by_policy(
        patch_status(
            &env,
            Identity::CiBot,
            json!({"status": {"rejections": null}}),
        )
        .await,
        "stays in the record",
    );
    let mut rewritten = b1(&env).await.status.unwrap().rejections;
    rewritten[0].reason = "fine by me".into();
    refused_by_policy(
        patch_status(
            &env,
            Identity::CiBot,
            json!({"status": {"rejections": rewritten}}),
        )
        .await,
        "a rejection records who gave it",
    );
    // Withdrawing it in carol's name.
    let mut in_her_name = b1(&env).await.status.unwrap().rejections;
    in_her_name[0].withdrawn_by = "carol".into();
    in_her_name[0].withdrawn_at = Some(now());
    refused_by_policy(
        patch_status(
            &env,
            Identity::CiBot,
            json!({"status": {"rejections": in_her_name}}),
        )
        .await,
        "only in their own name",
    );
    // In its own name the record takes it — and it changes nothing: ci-bot is no one
    // the policy names (nor is withdrawing through ops open to it).
    let mut in_its_name = b1(&env).await.status.unwrap().rejections;
    in_its_name[0].withdrawn_by = "ci-bot".into();
    in_its_name[0].withdrawn_at = Some(now());
    patch_status(
        &env,
        Identity::CiBot,
        json!({"status": {"rejections": in_its_name}}),
    )
    .await
    .unwrap();
    let explained = Ops::new(env.admin.clone())
        .explain(ns, "production")
        .await
        .unwrap();
    let held = serde_json::to_string(&explained.blockers).unwrap();
    assert!(held.contains("rejected by carol"), "{held}");
    let trail = Ops::new(env.admin.clone()).audit(ns).await.unwrap();
    let withdrawal = trail
        .iter()
        .find(|e| e.kind == hecate_ops::AuditKind::Withdrawn)
        .expect("the withdrawal is in the trail");
    assert_eq!(withdrawal.actor, "ci-bot");
    assert!(
        withdrawal.detail.contains("not theirs to withdraw"),
        "{}",
        withdrawal.detail
    );
    as_ci_bot
        .withdraw_rejection(ns, "b1", "production", as_cluster_says(Identity::CiBot))
        .await
        .unwrap_err();
    // dave, a release manager the policy names, may lift it — and does, as himself.
    let lifted = as_dave
        .withdraw_rejection(ns, "b1", "production", as_cluster_says(Identity::Dave))
        .await
        .unwrap();
    assert_eq!(lifted.rejections_of, ["carol"]);

    for who in [Identity::Carol, Identity::Dave] {
        let ops = Ops::new(env.client(who).await);
        let approved = ops
            .approve(ns, "b1", "production", as_cluster_says(who))
            .await
            .unwrap();
        assert!(approved.recorded);
    }
    let status = b1(&env).await.status.unwrap();
    let approvers: Vec<&str> = status.approvals.iter().map(|a| a.actor.as_str()).collect();
    assert_eq!(approvers, ["carol", "dave"]);
    // Nobody removes them.
    refused_by_policy(
        patch_status(
            &env,
            Identity::CiBot,
            json!({"status": {"approvals": null}}),
        )
        .await,
        "never remove another person",
    );
    // And nobody writes the status of a Gate, even with the right to (alice, given
    // every verb on gates/status here, as a careless Role might).
    env.grant(
        Identity::Alice,
        &["get", "update", "patch"],
        &["gates/status"],
    )
    .await;
    hecate_testenv::rbac::await_access(&env, Identity::Alice, "patch", "gates", "status").await;
    let gates: Api<Gate> = Api::namespaced(env.client(Identity::Alice).await, ns);
    let wrote = gates
        .patch_status(
            "production",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Idle"}})),
        )
        .await;
    match wrote {
        Err(kube::Error::Api(refusal)) => assert!(
            refusal
                .message
                .contains("only Hecate writes the status of gates"),
            "{}",
            refusal.message
        ),
        other => panic!("alice wrote a Gate's status: {other:?}"),
    }
}

#[tokio::test]
async fn a_passage_names_who_asked_for_it() {
    let env = TestEnv::new().await;
    let ns = &env.namespace;
    world(&env).await;
    await_policy(&env).await;
    let gate: Gate = env.api().get("production").await.unwrap();
    let bob = env.client(Identity::Bob).await;
    let passages: Api<Passage> = Api::namespaced(bob.clone(), ns);

    // The Gate's own template, asked for as the controller: as the probe found it.
    let mut forged = hecate_ops::rules::promotion::new_passage(
        &gate,
        &b1(&env).await,
        "controller",
        "production-1",
        jiff::Timestamp::now(),
    );
    match passages.create(&PostParams::default(), &forged).await {
        Err(kube::Error::Api(refusal)) => {
            assert_eq!(refusal.code, 403);
            assert!(
                refusal.message.contains("spec.actor must be bob"),
                "{}",
                refusal.message
            );
        }
        other => panic!("a Passage in the controller's name was created: {other:?}"),
    }
    // In his own name it is created, and its actor stays his.
    forged.spec.actor = "bob".into();
    passages
        .create(&PostParams::default(), &forged)
        .await
        .unwrap();
    let renamed = passages
        .patch(
            "production-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"actor": "controller"}})),
        )
        .await;
    match renamed {
        Err(kube::Error::Api(refusal)) => assert!(
            refusal.message.contains("does not change"),
            "{}",
            refusal.message
        ),
        other => panic!("the actor was changed: {other:?}"),
    }
    // What people ask of a rollout is in their own name, and stays (DECISION 157).
    let at = "2026-12-06T07:00:00Z";
    let ask = |by: &str| json!({"spec": {"rollout": {"retries": [{"by": by, "at": at}]}}});
    let forged_retry = passages
        .patch(
            "production-1",
            &PatchParams::default(),
            &Patch::Merge(ask("carol")),
        )
        .await;
    match forged_retry {
        Err(kube::Error::Api(refusal)) => assert!(
            refusal.message.contains("only in their own name"),
            "{}",
            refusal.message
        ),
        other => panic!("a retry in carol's name was written by bob: {other:?}"),
    }
    passages
        .patch(
            "production-1",
            &PatchParams::default(),
            &Patch::Merge(ask("bob")),
        )
        .await
        .unwrap();
    let erased = passages
        .patch(
            "production-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"rollout": {"retries": []}}})),
        )
        .await;
    assert!(erased.is_err(), "a request was taken back: {erased:?}");
    // Aborting it is still his to ask.
    Ops::new(bob)
        .abort(ns, "production-1", "bob")
        .await
        .unwrap();
}
