//! The delivery figures over HTTP (issue 35, DECISION 138): ops' answer for the
//! namespace, or one Gate's; a period as people write it; bad input a 400 that names
//! what is wrong, an unknown Gate a 404, a caller without access a 403.

use hecate_testenv::Identity::{Alice, CiBot};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::harness::Server;
use crate::ui_rights::demo_as_deployed;

const METRICS: &str = "/api/v1alpha1/namespaces/{ns}/metrics";

#[tokio::test]
async fn the_figures_of_a_namespace_or_one_gate_and_bad_input_refused() {
    let server = Server::start().await;
    demo_as_deployed(&server).await;

    let all = server.get(METRICS, Some(Alice)).await;
    assert_eq!(all.status, 200, "{}", all.body);
    let all = all.json();
    let gates: Vec<&str> = all["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["gate"].as_str().unwrap())
        .collect();
    assert_eq!(gates, ["dev", "staging", "production"]);
    assert_eq!(all["pipeline"]["gates"], json!(["production"]));
    // Thirty days by default: the period's start is thirty days before its end.
    let (since, until) = (
        all["since"]
            .as_str()
            .unwrap()
            .parse::<jiff::Timestamp>()
            .unwrap(),
        all["until"]
            .as_str()
            .unwrap()
            .parse::<jiff::Timestamp>()
            .unwrap(),
    );
    assert_eq!(until.duration_since(since).as_hours(), 30 * 24);
    // The running crossing into staging is not counted; the eleven finished are.
    assert_eq!(all["gates"][1]["changeFailureRate"]["crossings"], 11);

    let one = server
        .get(&format!("{METRICS}?gate=staging&since=2w"), Some(Alice))
        .await;
    assert_eq!(one.status, 200, "{}", one.body);
    let one = one.json();
    assert_eq!(one["gates"].as_array().unwrap().len(), 1);
    assert_eq!(one["gates"][0]["gate"], "staging");
    assert_eq!(one.get("pipeline"), None);

    for (query, status, said) in [
        ("?gate=qa", 404, "qa"),
        ("?gate=Not_A_Name", 400, "Not_A_Name"),
        ("?since=0d", 400, "since"),
        ("?since=forever", 400, "since"),
        ("?until=now", 400, "until"),
    ] {
        let answer = server.get(&format!("{METRICS}{query}"), Some(Alice)).await;
        assert_eq!(answer.status, status, "{query}: {}", answer.body);
        let error = answer.json()["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(error.contains(said), "{query}: {error}");
    }

    // ci-bot may not list Gates here.
    let refused = server.get(METRICS, Some(CiBot)).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
}
