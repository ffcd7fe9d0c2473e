//! Who may do what: authentication and the authorisation matrix, as the cluster
//! decides it.

use hecate_testenv::Identity::{self, *};
use pretty_assertions::assert_eq;

use crate::harness::*;

#[tokio::test]
async fn no_token_or_an_unknown_one_is_401() {
    let server = Server::start().await;
    for path in [
        "/api/v1alpha1/namespaces",
        "/api/v1alpha1/overview",
        "/api/v1alpha1/namespaces/{ns}/gates",
        "/api/v1alpha1/namespaces/{ns}/watch",
    ] {
        let none = server.get(path, None).await;
        assert_eq!(none.status, 401, "{path}");
        assert!(
            none.headers["www-authenticate"]
                .to_str()
                .unwrap()
                .contains("Bearer")
        );
        assert!(
            none.headers["content-type"]
                .to_str()
                .unwrap()
                .contains("json"),
            "never HTML"
        );
        assert_eq!(
            none.json(),
            serde_json::json!({"error": "authentication required", "status": "unauthorized"})
        );
        let forged = server
            .send(reqwest::Method::GET, path, Some("forged"), None)
            .await;
        assert_eq!(forged.status, 401, "{path}");
    }
    let poll = server
        .post("/api/v1alpha1/namespaces/{ns}/beacons/app/poll", None, None)
        .await;
    assert_eq!(poll.status, 401);
}

#[tokio::test]
async fn the_matrix() {
    let server = Server::start().await;
    server.pipeline().await;
    let gates = "/api/v1alpha1/namespaces/{ns}/gates";
    for (who, status) in [
        (CiBot, 403),
        (Alice, 200),
        (Bob, 200),
        (Carol, 200),
        (Admin, 200),
    ] {
        assert_eq!(
            server.get(gates, Some(who)).await.status,
            status,
            "{who} reading"
        );
    }
    let denied = server.get(gates, Some(CiBot)).await;
    assert_eq!(
        denied.json()["error"],
        format!("ci-bot may not list gates in {}", server.ns())
    );

    // Approving is carol's; promoting bob's; alice only reads.
    let approve = "/api/v1alpha1/namespaces/{ns}/bundles/b1/approve";
    for who in [Alice, Bob, CiBot] {
        let answer = server
            .post(approve, Some(who), Some(r#"{"gate":"staging"}"#))
            .await;
        assert_eq!(answer.status, 403, "{who} approving: {}", answer.body);
        assert!(
            answer.body.contains("may not update bundles/status"),
            "{}",
            answer.body
        );
    }
    let promote = "/api/v1alpha1/namespaces/{ns}/gates/staging/promote";
    for who in [Alice, Carol, CiBot] {
        let answer = server
            .post(promote, Some(who), Some(r#"{"bundle":"b1"}"#))
            .await;
        assert_eq!(answer.status, 403, "{who} promoting: {}", answer.body);
        assert!(
            answer.body.contains("may not create passages"),
            "{}",
            answer.body
        );
    }
    let approved = server
        .post(approve, Some(Carol), Some(r#"{"gate":"staging"}"#))
        .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(approved.json()["approvedBy"], "carol");
    let promoted = server
        .post(promote, Some(Bob), Some(r#"{"bundle":"b1"}"#))
        .await;
    assert_eq!(promoted.status, 200, "{}", promoted.body);
    assert_eq!(
        promoted.json()["spec"]["actor"],
        "bob",
        "the actor is the caller"
    );
    let passage = promoted.json()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();

    let abort = format!("/api/v1alpha1/namespaces/{{ns}}/passages/{passage}/abort");
    for who in [Alice, Carol, CiBot] {
        assert_eq!(
            server.post(&abort, Some(who), None).await.status,
            403,
            "{who} aborting"
        );
    }
    let aborted = server.post(&abort, Some(Bob), None).await;
    assert_eq!(
        (aborted.status, aborted.json()["abortedBy"].as_str()),
        (200, Some("bob")),
        "{}",
        aborted.body
    );

    let poll = "/api/v1alpha1/namespaces/{ns}/beacons/app/poll";
    for who in [Alice, Bob, Carol] {
        assert_eq!(
            server.post(poll, Some(who), None).await.status,
            403,
            "{who} polling needs update beacons"
        );
    }
}

#[tokio::test]
async fn namespaces_and_overview_show_only_what_the_caller_may_read() {
    let server = Server::start().await;
    server.pipeline().await;
    let names = |who: Identity| {
        let server = &server;
        async move {
            server
                .get("/api/v1alpha1/namespaces", Some(who))
                .await
                .json()["namespaces"]
                .as_array()
                .unwrap()
                .clone()
        }
    };
    let ns = serde_json::Value::from(server.ns());
    assert!(names(Alice).await.contains(&ns));
    assert!(names(Admin).await.contains(&ns));
    let hidden = server.get("/api/v1alpha1/namespaces", Some(CiBot)).await;
    assert_eq!(
        hidden.status, 200,
        "reading nothing is an empty answer, not a refusal"
    );
    assert!(
        !hidden.json()["namespaces"]
            .as_array()
            .unwrap()
            .contains(&ns)
    );

    let overview = server.get("/api/v1alpha1/overview", Some(CiBot)).await;
    assert_eq!(overview.status, 200);
    assert!(
        !overview.body.contains(server.ns()),
        "nothing from a namespace ci-bot may not read"
    );
    assert!(!overview.body.contains("\"namespaces\":null"));
    let alice = server
        .get("/api/v1alpha1/overview", Some(Alice))
        .await
        .json();
    let mine = alice["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["namespace"] == ns)
        .unwrap()
        .clone();
    assert_eq!(mine["gates"][0]["name"], "staging");
    assert_eq!(mine["gates"][0]["state"], "Ready");
}

#[tokio::test]
async fn a_burst_of_requests_costs_one_token_review() {
    let server = Server::start().await;
    server.pipeline().await;
    let before = server.state.metrics().encode();
    // All at once: the first asks, the others wait for its answer.
    let statuses = futures::future::join_all(
        (0..10).map(|_| server.get("/api/v1alpha1/namespaces/{ns}/gates", Some(Alice))),
    )
    .await
    .into_iter()
    .map(|answer| answer.status)
    .collect::<Vec<_>>();
    assert_eq!(statuses, [200; 10]);
    let after = server.state.metrics().encode();
    let count = |text: &str, cache: &str, result: &str| -> u64 {
        text.lines()
            .find(|l| {
                l.starts_with("hecate_api_auth_cache_total")
                    && l.contains(&format!("cache=\"{cache}\""))
                    && l.contains(&format!("result=\"{result}\""))
            })
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
            .unwrap_or(0)
    };
    assert_eq!(
        count(&after, "token_review", "miss") - count(&before, "token_review", "miss"),
        1,
        "{after}"
    );
    assert_eq!(
        count(&after, "token_review", "hit") - count(&before, "token_review", "hit"),
        9
    );
    assert_eq!(
        count(&after, "access_review", "miss") - count(&before, "access_review", "miss"),
        1,
        "reads are cached briefly"
    );
}
