//! `POST …/gates/{name}/promote?dryRun=true` (issue 55): what the caller's promote would
//! do, creating nothing — promote's refusal with its code, each step with its `with:`
//! resolved; the right to promote is asked as for promote itself.

use hecate_testenv::Identity::*;
use hecate_testenv::fixtures::{bundle, gate, gate_spec};
use hecate_types::Passage;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn a_dry_run_of_promote_answers_the_preview_and_creates_nothing() {
    let server = Server::start().await;
    gate(&server.env, "staging", gate_spec(&[], false)).await;
    gate(&server.env, "production", gate_spec(&[], true)).await;
    bundle(&server.env, "b1").await;
    let promote = |gate: &str, query: &str| {
        format!(
            "/api/v1alpha1/namespaces/{}/gates/{gate}/promote{query}",
            server.ns()
        )
    };
    let body = Some(r#"{"bundle": "b1"}"#);

    let staging = server
        .post(&promote("staging", "?dryRun=true"), Some(Bob), body)
        .await;
    assert_eq!(staging.status, 200, "{}", staging.body);
    let preview = staging.json();
    assert_eq!(
        (
            &preview["gate"],
            &preview["actor"],
            &preview["bundle"]["version"],
            preview.get("refused")
        ),
        (&json!("staging"), &json!("bob"), &json!("1.0.0"), None)
    );
    let steps: Vec<(&str, &str)> = preview["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["uses"].as_str().unwrap(), s["effect"].as_str().unwrap()))
        .collect();
    assert_eq!(steps, [("git-push", "Pushes"), ("flux-wait", "Cluster")]);

    // Refused with the code promote answers, the steps still shown.
    let production = server
        .post(&promote("production", "?dryRun=true"), Some(Bob), body)
        .await;
    assert_eq!(production.status, 200, "{}", production.body);
    assert_eq!(production.json()["refused"]["code"], "AwaitingApproval");
    let real = server
        .post(&promote("production", ""), Some(Bob), body)
        .await;
    assert_eq!(real.json()["code"], "AwaitingApproval", "{}", real.body);

    // A viewer may not promote, so may not preview; a dryRun that is not a boolean is
    // not understood.
    let alice = server
        .post(&promote("staging", "?dryRun=true"), Some(Alice), body)
        .await;
    assert_eq!(alice.status, 403, "{}", alice.body);
    let unclear = server
        .post(&promote("staging", "?dryRun=maybe"), Some(Bob), body)
        .await;
    assert_eq!(unclear.status, 400, "{}", unclear.body);

    let passages = server
        .env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(passages.items.len(), 0, "a dry run creates nothing");
    // dryRun=false is promote.
    let crossed = server
        .post(&promote("staging", "?dryRun=false"), Some(Bob), body)
        .await;
    assert_eq!(crossed.status, 200, "{}", crossed.body);
    assert_eq!(crossed.json()["kind"], "Passage");
}
