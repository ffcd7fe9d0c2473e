//! `--auth kubernetes`: the server asks the cluster who each caller is and what they
//! may do, and writes as them. Users have the roles from `deploy/rbac` (alice viewer,
//! bob promoter, carol approver, ci-bot nothing); the server runs as `hecate-api`.

use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Bundle, Passage};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn an_unknown_or_missing_token_is_401() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    let base = authenticated_http(&env, false).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for headers in [
        &[][..],
        &[("authorization", "Bearer not-a-token-anyone-issued")],
        &[("authorization", "Basic YWxpY2U6cGFzc3dvcmQ=")],
    ] {
        let answer = post(&base, &list, headers).await;
        assert_eq!(answer.status, 401, "{headers:?}: {}", answer.body);
        assert_eq!(
            answer.headers["www-authenticate"],
            "Bearer realm=\"hecate-mcp\""
        );
        assert_eq!(answer.json()["error"]["code"], -32600);
        assert!(answer.body.contains("unauthenticated"), "{}", answer.body);
    }
    let alice = format!("Bearer {}", token(&env, Identity::Alice));
    let answer = post(&base, &list, &[("authorization", &alice)]).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test]
async fn a_caller_without_rbac_is_told_which_permission_is_missing() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    pipeline(&env).await;
    let base = authenticated_http(&env, false).await;
    let ci_bot = http_client(&base, Era::Legacy, Some(&token(&env, Identity::CiBot))).await;
    let answer = result(&ci_bot, "why_stuck", json!({"gate": "production"})).await;
    assert_eq!(answer.is_error, Some(true));
    let said = text(&answer);
    assert!(
        said.starts_with(&format!("ci-bot may not get gates in {}", env.namespace)),
        "{said}"
    );
    let problem = answer.structured_content.unwrap()["error"].clone();
    assert_eq!(problem["class"], "Forbidden");
    assert_eq!(
        problem["permission"],
        json!({"verb": "get", "group": "hecate.dev", "resource": "gates", "namespace": env.namespace})
    );

    let alice = http_client(&base, Era::Modern, Some(&token(&env, Identity::Alice))).await;
    let answer = result(&alice, "why_stuck", json!({"gate": "production"})).await;
    assert_eq!(structured(&answer)["state"], "Blocked");

    // The overview shows a caller only the namespaces they may read.
    let visible = |overview: serde_json::Value| -> bool {
        overview["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["namespace"] == env.namespace.as_str())
    };
    assert!(visible(structured(
        &result(&alice, "overview", json!({})).await
    )));
    assert!(!visible(structured(
        &result(&ci_bot, "overview", json!({})).await
    )));
}

#[tokio::test]
async fn writes_are_authorised_as_and_recorded_for_the_caller() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    pipeline(&env).await;
    let base = authenticated_http(&env, true).await;

    let alice = http_client(&base, Era::Legacy, Some(&token(&env, Identity::Alice))).await;
    let refused = result(
        &alice,
        "promote",
        json!({"gate": "staging", "bundle": "b2"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("alice may not create passages in"),
        "{}",
        text(&refused)
    );

    // A preview asks the right to promote too, and creates nothing (issue 55).
    let before = env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .len();
    let refused = result(
        &alice,
        "preview_crossing",
        json!({"gate": "staging", "bundle": "b2"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
    let bob = http_client(&base, Era::Modern, Some(&token(&env, Identity::Bob))).await;
    let previewed = structured(
        &result(
            &bob,
            "preview_crossing",
            json!({"gate": "staging", "bundle": "b2"}),
        )
        .await,
    );
    assert_eq!(
        (&previewed["actor"], previewed.get("refused")),
        (&json!("bob"), None),
        "{previewed}"
    );
    assert!(
        !previewed["steps"].as_array().unwrap().is_empty(),
        "{previewed}"
    );
    let passages = env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(passages.items.len(), before, "a preview creates nothing");
    let promoted =
        structured(&result(&bob, "promote", json!({"gate": "staging", "bundle": "b2"})).await);
    assert_eq!(
        promoted["actor"], "bob",
        "the caller, not a configured name"
    );
    let name = promoted["passage"].as_str().unwrap();
    let passage: Passage = env.api().get(name).await.unwrap();
    assert_eq!(passage.spec.actor, "bob");
    let aborted = structured(&result(&bob, "abort", json!({"passage": name})).await);
    assert_eq!(aborted["abortedBy"], "bob");
}

/// Segregation of duties holds through the agent: the caller is the promoter, so an
/// approval they gave themselves does not count.
#[tokio::test]
async fn a_caller_cannot_promote_what_they_approved() {
    let env = TestEnv::new().await;
    grant_deployed_roles(&env).await;
    pipeline(&env).await;
    let b1: Bundle = env.api().get("b1").await.unwrap();
    bundle_status(&env, b1, &["dev", "staging"], &[("production", "bob")]).await;
    let base = authenticated_http(&env, true).await;
    let bob = http_client(&base, Era::Legacy, Some(&token(&env, Identity::Bob))).await;
    let refused = result(
        &bob,
        "promote",
        json!({"gate": "production", "bundle": "b1"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    let problem = refused.structured_content.unwrap()["error"].clone();
    assert_eq!(problem["class"], "Refused");
    assert_eq!(problem["code"], "SelfApproved");
}
