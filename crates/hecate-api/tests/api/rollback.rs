//! `POST …/gates/{name}/rollback` (DECISION 139): a promotion's guard, body rules and
//! answer — the created Passage, naming the crossing it undoes — and the rollback's
//! own refusals as 409s with their stable codes.

use hecate_testenv::Identity::*;
use hecate_testenv::fixtures::{bundles_in_order, gate, gate_spec, now, passage};
use hecate_types::{GateOccupant, GateStatus, PassagePhase};
use pretty_assertions::assert_eq;

use crate::harness::*;

/// Gate `name` (admits Beacon `app`), holding `bundle` through Passage `<name>-1`
/// (succeeded), which the Bundle needs to exist.
pub(crate) async fn holding(server: &Server, name: &str, bundle: &str) {
    let mut gate = gate(&server.env, name, gate_spec(&[], false)).await;
    let occupant = GateOccupant {
        bundle: bundle.into(),
        digest: String::new(),
        passage: format!("{name}-1"),
        entered_at: now(),
        actor: "bob".into(),
        verified: Some(true),
    };
    gate.status = Some(GateStatus {
        current: Some(occupant.clone()),
        history: vec![occupant],
        ..GateStatus::default()
    });
    server.env.write_status(&gate).await;
}

#[tokio::test]
async fn rollback_is_a_promoters_crossing_that_says_what_it_undoes() {
    let server = Server::start().await;
    bundles_in_order(&server.env, &["b1", "b2"]).await;
    holding(&server, "staging", "b2").await;
    passage(
        &server.env,
        "staging-1",
        "staging",
        "b2",
        PassagePhase::Succeeded,
    )
    .await;
    // b1 held staging before b2.
    let mut staging: hecate_types::Gate = server
        .env
        .api::<hecate_types::Gate>()
        .get("staging")
        .await
        .unwrap();
    if let Some(status) = staging.status.as_mut() {
        status.history.push(GateOccupant {
            bundle: "b1".into(),
            digest: String::new(),
            passage: "staging-0".into(),
            entered_at: now(),
            actor: "bob".into(),
            verified: Some(true),
        });
    }
    server.env.write_status(&staging).await;
    holding(&server, "empty-gate", "b1").await;
    server
        .env
        .api::<hecate_types::Gate>()
        .patch_status(
            "empty-gate",
            &Default::default(),
            &kube::api::Patch::Merge(
                serde_json::json!({"status": {"current": null, "history": null}}),
            ),
        )
        .await
        .unwrap();
    let rollback = "/api/v1alpha1/namespaces/{ns}/gates/staging/rollback";

    // The promoter's right, as promote: `create passages`.
    for who in [Alice, Carol, CiBot] {
        let answer = server.post(rollback, Some(who), None).await;
        assert_eq!(answer.status, 403, "{who} rolling back: {}", answer.body);
        assert!(
            answer.body.contains("may not create passages"),
            "{}",
            answer.body
        );
    }
    // Bodies: malformed, unknown fields, a bad name — 400, nothing written.
    for (body, fragment) in [
        ("{not json", "not the expected JSON"),
        (r#"{"to":"b1","actor":"alice"}"#, "unknown field `actor`"),
        (r#"{"to":"Not A Name"}"#, "not a valid object name"),
    ] {
        let answer = server.post(rollback, Some(Bob), Some(body)).await;
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        assert!(answer.body.contains(fragment), "{body}: {}", answer.body);
    }
    // The rollback's own refusals: 409 with the stable code.
    let never = server
        .post(rollback, Some(Bob), Some(r#"{"to":"b9"}"#))
        .await;
    assert_eq!(
        (never.status, never.json()["code"].as_str()),
        (409, Some("NotVerifiedHere")),
        "{}",
        never.body
    );
    let empty = server
        .post(
            "/api/v1alpha1/namespaces/{ns}/gates/empty-gate/rollback",
            Some(Bob),
            None,
        )
        .await;
    assert_eq!(
        (empty.status, empty.json()["code"].as_str()),
        (409, Some("NothingToRollBackTo")),
        "{}",
        empty.body
    );
    assert_eq!(
        empty.json()["error"],
        "rollback refused: Gate empty-gate holds no Bundle yet, so there is nothing to roll back"
    );

    // No body: the Gate's own choice, b1; the answer is the created Passage.
    let rolled = server.post(rollback, Some(Bob), None).await;
    assert_eq!(rolled.status, 200, "{}", rolled.body);
    let passage = rolled.json();
    assert_eq!(
        (
            passage["metadata"]["name"].as_str(),
            passage["spec"]["bundle"].as_str(),
            passage["spec"]["actor"].as_str(),
            passage["metadata"]["annotations"]["hecate.dev/rollback-of"].as_str(),
        ),
        (
            Some("staging-2"),
            Some("b1"),
            Some("bob"),
            Some("staging-1")
        )
    );
    let busy = server
        .post(rollback, Some(Bob), Some(r#"{"to":"b2"}"#))
        .await;
    assert_eq!(
        (busy.status, busy.json()["code"].as_str()),
        (409, Some("AlreadyCrossing")),
        "{}",
        busy.body
    );
}
