//! A Bundle's diff over HTTP (issue 34, DECISION 140): `GET …/bundles/{name}/diff`
//! answers ops' `BundleDiff` — against the Beacon's previous Bundle by default, a Gate
//! (what it runs now) or a Bundle named by `against` — in one LIST of the Bundles and
//! one GET of the Gate; bad input a 400, a name that is nothing a 404, a caller
//! without access a 403.

use hecate_testenv::Identity::{Alice, CiBot};
use hecate_testenv::fixtures::{RELEASE_REPO, gate, gate_spec, release_at, sha_of};
use hecate_types::{Bundle, GateOccupant, GateStatus, Time};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::harness::Server;

const DIFF: &str = "/api/v1alpha1/namespaces/{ns}/bundles/shop-3/diff";

#[tokio::test]
async fn a_bundles_diff_against_its_predecessor_a_gate_or_a_bundle() {
    let (server, log) = Server::start_recording().await;
    let env = &server.env;
    release_at(env, "shop-1", 0, 'a', "v1.0.0", "", &[]).await;
    release_at(env, "shop-2", 10, 'b', "v1.1.0", &sha_of('a'), &["cart"]).await;
    release_at(
        env,
        "shop-3",
        20,
        'c',
        "v1.2.0",
        &sha_of('b'),
        &["checkout", "search"],
    )
    .await;
    let mut production = gate(env, "production", gate_spec(&[], false)).await;
    production.status = Some(GateStatus {
        current: Some(GateOccupant {
            bundle: "shop-1".into(),
            digest: String::new(),
            passage: "production-1".into(),
            entered_at: Time(jiff::Timestamp::now()),
            actor: "bob".into(),
            verified: Some(true),
        }),
        ..GateStatus::default()
    });
    env.write_status(&production).await;

    // The previous Bundle, by default: the whole answer, as documented.
    let previous = server.get(DIFF, Some(Alice)).await;
    assert_eq!(previous.status, 200, "{}", previous.body);
    let answer = previous.json();
    let when = |minute: u32| format!("2026-03-01T09:{minute:02}:00Z");
    assert_eq!(
        answer,
        json!({
            "namespace": server.ns(),
            "from": {"name": "shop-2", "version": "v1.1.0"},
            "to": {"name": "shop-3", "version": "v1.2.0"},
            "direction": "forward",
            "artifacts": [
                {"kind": "commit", "repo": RELEASE_REPO, "from": "v1.1.0",
                 "to": "v1.2.0", "fromDigest": sha_of('b'), "toDigest": sha_of('c'), "changed": true},
                {"kind": "image", "repo": "ghcr.io/acme/app", "from": "v1.1.0", "to": "v1.2.0",
                 "changed": true},
            ],
            "commits": [
                {"sha": sha_of('c'), "subject": "checkout", "author": "Ann <ann@example.com>",
                 "committedAt": when(20)},
                {"sha": sha_of('c'), "subject": "search", "author": "Ann <ann@example.com>",
                 "committedAt": when(20)},
            ],
            "moreCommits": 0,
        })
    );

    // What production runs: every commit since shop-1, in one LIST of the Bundles, one
    // GET of the Gate and one LIST of its Passages (what an abort left on its branch).
    log.clear();
    let gate = server
        .get(&format!("{DIFF}?against=production"), Some(Alice))
        .await;
    assert_eq!(gate.status, 200, "{}", gate.body);
    let gate = gate.json();
    assert_eq!(gate["gate"], "production");
    assert_eq!(gate["from"]["name"], "shop-1");
    let subjects: Vec<&str> = gate["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["checkout", "search", "cart"]);
    let hecate: Vec<String> = log
        .requests()
        .into_iter()
        .filter(|r| r.contains("/apis/hecate.dev/"))
        .collect();
    assert_eq!(hecate.len(), 3, "{hecate:?}");

    // A Bundle named, older: going back, the commits undone; one since collected is
    // said.
    let back = server
        .get(
            "/api/v1alpha1/namespaces/{ns}/bundles/shop-1/diff?against=shop-3",
            Some(Alice),
        )
        .await
        .json();
    assert_eq!(back["direction"], "back");
    assert_eq!(back["commits"].as_array().unwrap().len(), 3);
    assert_eq!(back.get("gap"), None);
    env.api::<Bundle>()
        .delete("shop-2", &Default::default())
        .await
        .unwrap();
    let gap = server
        .get(&format!("{DIFF}?against=shop-1"), Some(Alice))
        .await
        .json();
    assert_eq!(gap["gap"], "bundlesCollected");
    assert_eq!(gap["commits"].as_array().unwrap().len(), 2);

    for (query, status, said) in [
        ("?against=qa", 404, "no Bundle named qa"),
        ("?against=Not_A_Name", 400, "Not_A_Name"),
        ("?since=1d", 400, "since"),
    ] {
        let answer = server.get(&format!("{DIFF}{query}"), Some(Alice)).await;
        assert_eq!(answer.status, status, "{query}: {}", answer.body);
        let error = answer.json()["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(error.contains(said), "{query}: {error}");
    }
    let missing = server
        .get(
            "/api/v1alpha1/namespaces/{ns}/bundles/shop-9/diff",
            Some(Alice),
        )
        .await;
    assert_eq!(missing.status, 404, "{}", missing.body);

    // Read as the Bundle is: ci-bot may not get Bundles here.
    let refused = server.get(DIFF, Some(CiBot)).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.json()["error"],
        format!("ci-bot may not get bundles in {}", server.ns())
    );
}
