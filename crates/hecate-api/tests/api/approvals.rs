//! Approval policies over HTTP, as real identities (DECISION 137): the groups that
//! count are the ones the cluster's TokenReview reports for each caller — carol and
//! dave are release managers in the test PKI, bob is not and promoted the Bundle
//! through staging — and the queue, approve, reject and withdraw answer alike.

use hecate_testenv::Identity::{Alice, Bob, Carol, Dave};
use hecate_testenv::RELEASE_MANAGERS;
use hecate_testenv::fixtures::{cleared_by, gate, release_managers_spec};

use crate::harness::Server;

/// Production after staging asking two release managers (never an upstream promoter),
/// Bundle b1 cleared through staging by bob (the server grants everyone as deployed).
async fn world(server: &Server) {
    gate(&server.env, "production", release_managers_spec("")).await;
    cleared_by(&server.env, "b1", &["staging"], "bob").await;
}

const QUEUE: &str = "/api/v1alpha1/namespaces/{ns}/approvals";
const APPROVE: &str = "/api/v1alpha1/namespaces/{ns}/bundles/b1/approve";
const REJECT: &str = "/api/v1alpha1/namespaces/{ns}/bundles/b1/reject";
const WITHDRAW: &str = "/api/v1alpha1/namespaces/{ns}/bundles/b1/withdraw-rejection";
const FOR_PRODUCTION: &str = r#"{"gate":"production"}"#;

#[tokio::test]
async fn the_policy_counts_the_groups_the_cluster_reports() {
    let server = Server::start().await;
    world(&server).await;

    // Before anyone approves: what each person's approval would do.
    let you = |answer: &crate::harness::Answer| answer.json()[0]["you"].clone();
    let queue = server.get(QUEUE, Some(Carol)).await;
    assert_eq!(queue.status, 200, "{}", queue.body);
    assert_eq!(
        queue.json()[0]["progress"]["summary"],
        "0 of 2 from release-managers"
    );
    assert_eq!(you(&queue)["canApprove"], true);
    let bob = server.get(QUEUE, Some(Bob)).await;
    assert_eq!(you(&bob)["canApprove"], false);
    assert_eq!(you(&bob)["notCounted"], "UpstreamPromoter");
    assert_eq!(
        you(&bob)["whyNot"],
        "you promoted it through an earlier Gate"
    );

    // bob may approve as far as RBAC goes, but he would not count: refused with the
    // reason, nothing recorded. The policy narrows who counts, never who may act.
    server
        .env
        .grant(Bob, &["update"], &["bundles/status"])
        .await;
    hecate_testenv::rbac::await_access(&server.env, Bob, "update", "bundles", "status").await;
    let refused = server.post(APPROVE, Some(Bob), Some(FOR_PRODUCTION)).await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert_eq!(refused.json()["code"], "NotAnApprover");

    let carol = server
        .post(APPROVE, Some(Carol), Some(FOR_PRODUCTION))
        .await;
    assert_eq!(carol.status, 200, "{}", carol.body);
    assert_eq!(
        carol.json()["progress"]["summary"],
        "1 of 2 from release-managers; carol approved"
    );
    let recorded = server
        .get("/api/v1alpha1/namespaces/{ns}/bundles/b1", Some(Carol))
        .await;
    assert_eq!(
        recorded.json()["status"]["approvals"][0]["groups"],
        serde_json::json!([RELEASE_MANAGERS, "system:authenticated"]),
        "the groups the TokenReview reported"
    );
    // Explain says what is missing, and whose approval would give it.
    let explain = server
        .get(
            "/api/v1alpha1/namespaces/{ns}/gates/production/explain",
            Some(Alice),
        )
        .await;
    let blocker = &explain.json()["blockers"][0];
    assert_eq!(blocker["kind"], "AwaitingApproval");
    assert_eq!(
        blocker["action"]["from"],
        serde_json::json!([RELEASE_MANAGERS])
    );

    let dave = server.post(APPROVE, Some(Dave), Some(FOR_PRODUCTION)).await;
    assert_eq!(dave.status, 200, "{}", dave.body);
    assert_eq!(dave.json()["progress"]["satisfied"], true);
    let queue = server.get(QUEUE, Some(Carol)).await;
    assert_eq!(queue.json(), serde_json::json!([]), "nothing waits now");
}

#[tokio::test]
async fn a_rejection_over_http_and_who_may_lift_it() {
    let server = Server::start().await;
    world(&server).await;
    let bare = server.post(REJECT, Some(Carol), Some(FOR_PRODUCTION)).await;
    assert_eq!(bare.status, 409, "{}", bare.body);
    assert_eq!(bare.json()["code"], "NoReason");
    let rejected = server
        .post(
            REJECT,
            Some(Carol),
            Some(r#"{"gate":"production","reason":"the migration is not reversible"}"#),
        )
        .await;
    assert_eq!(rejected.status, 200, "{}", rejected.body);
    assert_eq!(rejected.json()["rejectedBy"], "carol");
    let queue = server.get(QUEUE, Some(Dave)).await;
    assert_eq!(
        queue.json()[0]["progress"]["rejected"]["reason"],
        "the migration is not reversible"
    );
    assert_eq!(
        queue.json()[0]["you"]["canWithdraw"],
        true,
        "dave is a release manager"
    );
    // Anything but what a rejection may say is refused before anything is read.
    let unknown = server
        .post(
            REJECT,
            Some(Carol),
            Some(r#"{"gate":"production","reason":"x","force":true}"#),
        )
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);

    let withdrawn = server
        .post(WITHDRAW, Some(Dave), Some(FOR_PRODUCTION))
        .await;
    assert_eq!(withdrawn.status, 200, "{}", withdrawn.body);
    assert_eq!(
        withdrawn.json()["rejectionsOf"],
        serde_json::json!(["carol"])
    );
    let audit = server
        .get("/api/v1alpha1/namespaces/{ns}/audit", Some(Alice))
        .await;
    let kinds: Vec<String> = audit
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["kind"].as_str().map(String::from))
        .collect();
    assert!(
        kinds.contains(&"rejected".to_string()) && kinds.contains(&"withdrawn".to_string()),
        "{kinds:?}"
    );
}

const YOU: &str = "/api/v1alpha1/namespaces/{ns}/gates/production/you";

/// The Gate page asks before the click whether the caller's own promote would be
/// refused (issue 34): carol approved b1, so hers is refused `SelfApproved` — the very
/// refusal promote answers her —, bob's is not; read as Explain is.
#[tokio::test]
async fn a_gate_says_whose_crossing_its_policy_would_refuse() {
    let server = Server::start().await;
    world(&server).await;
    for who in [Carol, Dave] {
        let approved = server.post(APPROVE, Some(who), Some(FOR_PRODUCTION)).await;
        assert_eq!(approved.status, 200, "{}", approved.body);
    }

    let carol = server.get(YOU, Some(Carol)).await;
    assert_eq!(carol.status, 200, "{}", carol.body);
    // production holds nothing yet: a rollback is refused everyone, the same words.
    let nothing_to_roll_back = serde_json::json!({"code": "NothingToRollBackTo",
        "reason": "Gate production holds no Bundle yet, so there is nothing to roll back"});
    let reason = "carol approved it and cannot also promote it (1 of 2 from release-managers; dave approved; carol's approval does not count (they are the one promoting it))";
    assert_eq!(
        carol.json(),
        serde_json::json!({"gate": "production", "actor": "carol", "bundles": [
            {"bundle": "b1", "refused": {"code": "SelfApproved", "reason": reason}},
        ], "rollback": nothing_to_roll_back})
    );
    // bob promoted it through staging, which keeps his approval from counting, not
    // him from crossing it.
    let bob = server.get(YOU, Some(Bob)).await;
    assert_eq!(
        bob.json(),
        serde_json::json!({"gate": "production", "actor": "bob", "bundles": [{"bundle": "b1"}],
            "rollback": nothing_to_roll_back})
    );
    // alice may read it, as she may read the Gate's explanation: her answer is hers.
    assert_eq!(server.get(YOU, Some(Alice)).await.json()["actor"], "alice");

    // What the page said is what promote answers, word for word.
    server.env.grant(Carol, &["create"], &["passages"]).await;
    hecate_testenv::rbac::await_access(&server.env, Carol, "create", "passages", "").await;
    let promoted = server
        .post(
            "/api/v1alpha1/namespaces/{ns}/gates/production/promote",
            Some(Carol),
            Some(r#"{"bundle":"b1"}"#),
        )
        .await;
    assert_eq!(promoted.status, 409, "{}", promoted.body);
    assert_eq!(promoted.json()["code"], "SelfApproved");
    assert!(
        promoted.json()["error"].as_str().unwrap().contains(reason),
        "{}",
        promoted.body
    );
}
