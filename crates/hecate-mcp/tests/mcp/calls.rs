//! Calling each tool: answers, refusals a model can read, and malformed calls that are
//! protocol errors and leave the connection working.

use hecate_testenv::TestEnv;
use hecate_types::{Gate, Passage, wellknown};
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;

#[tokio::test]
async fn why_stuck_answers_with_typed_blockers() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, None).await, Era::Legacy).await;
    let answer = result(&client, "why_stuck", json!({"gate": "production"})).await;
    let value = structured(&answer);
    assert_eq!(value["gate"], "production");
    assert_eq!(value["namespace"], env.namespace.as_str());
    assert_eq!(value["state"], "Blocked");
    let kinds: Vec<&str> = value["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["UpstreamNotCleared", "AwaitingApproval"]);
    let fix = value["blockers"][1]["fix"].as_str().unwrap();
    assert!(fix.contains("hecate approve b1 --gate production"), "{fix}");
    insta::assert_snapshot!(
        "why_stuck_production",
        text(&answer).replace(&env.namespace, "<ns>")
    );

    // The same answer in the 2026-07-28 era.
    let modern = piped(server(&env, None).await, Era::Modern).await;
    let again = result(&modern, "why_stuck", json!({"gate": "production"})).await;
    assert_eq!(structured(&again), value);
    assert_eq!(text(&again), text(&answer));
}

#[tokio::test]
async fn list_gates_is_one_line_per_gate() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, None).await, Era::Legacy).await;
    let answer = result(&client, "list_gates", json!({})).await;
    let value = structured(&answer);
    let names: Vec<&str> = value["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    // From the Overview: upstream first, as the pipeline runs.
    assert_eq!(names, ["dev", "staging", "production"]);
    let lines: Vec<String> = text(&answer).lines().map(String::from).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[2].starts_with("production: Blocked — "), "{lines:?}");

    let elsewhere = TestEnv::new().await;
    let answer = result(
        &client,
        "list_gates",
        json!({"namespace": elsewhere.namespace}),
    )
    .await;
    assert_eq!(
        text(&answer),
        format!("no Gates in {}", elsewhere.namespace)
    );
    assert_eq!(structured(&answer)["gates"], json!([]));
}

#[tokio::test]
async fn the_reads_answer_what_the_cluster_holds() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, None).await, Era::Legacy).await;

    let gate = structured(&result(&client, "get_gate", json!({"name": "production"})).await);
    let gate: Gate = serde_json::from_value(gate).unwrap();
    assert!(gate.spec.admits[0].require_approval);
    assert!(
        gate.metadata.managed_fields.is_none(),
        "managedFields is noise"
    );

    let bundles = structured(&result(&client, "list_bundles", json!({})).await);
    let names: Vec<&str> = bundles["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b2", "b1"], "newest first");

    // A crossing's verification, as the controller records it on the Passage
    // (DECISION 139), is carried as it is by both passage tools.
    let verification = json!({
        "phase": "Verifying",
        "startedAt": "2026-08-11T12:00:00Z",
        "message": "prometheus: 2 passes in a row, last 0.002",
        "verifiers": [{
            "uses": "prometheus", "phase": "Verifying", "passes": 2, "lastValue": "0.002",
            "lastLookAt": "2026-08-11T12:01:00Z", "nextLookAt": "2026-08-11T12:01:30Z",
        }],
    });
    env.api::<Passage>()
        .patch_status(
            "dev-1",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"status": {"verification": verification}})),
        )
        .await
        .unwrap();
    let passages = structured(&result(&client, "list_passages", json!({"gate": "dev"})).await);
    assert_eq!(passages["passages"].as_array().unwrap().len(), 1);
    assert_eq!(
        passages["passages"][0]["status"]["verification"],
        verification
    );
    let none = structured(&result(&client, "list_passages", json!({"gate": "staging"})).await);
    assert_eq!(none["passages"], json!([]));

    let passage = structured(&result(&client, "get_passage", json!({"name": "dev-1"})).await);
    assert_eq!(passage["status"]["verification"], verification);
    let passage: Passage = serde_json::from_value(passage).unwrap();
    assert_eq!(passage.spec.bundle, "b1");

    let audit = structured(&result(&client, "audit", json!({})).await);
    let entries = audit["entries"].as_array().unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e["kind"] == "crossed" && e["gate"] == "dev" && e["bundle"] == "b1"),
        "{audit:#}"
    );

    let evidence = structured(&result(&client, "evidence", json!({"bundle": "b1"})).await);
    assert_eq!(evidence["bundle"], "b1");
    let unavailable = evidence["unavailable"].as_str().unwrap();
    assert!(unavailable.contains("Fides"), "{unavailable}");

    let overview = structured(&result(&client, "overview", json!({})).await);
    let ours = overview["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["namespace"] == env.namespace.as_str())
        .unwrap_or_else(|| panic!("{} missing from {overview:#}", env.namespace));
    assert_eq!(ours["gates"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn what_is_not_there_is_an_answer_to_read() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, None).await, Era::Legacy).await;
    let answer = result(&client, "why_stuck", json!({"gate": "qa"})).await;
    assert_eq!(answer.is_error, Some(true));
    let said = text(&answer);
    assert!(
        said.starts_with(&format!("no Gate named qa in {}", env.namespace)),
        "{said}"
    );
    let problem = &answer.structured_content.clone().unwrap()["error"];
    assert_eq!(problem["class"], "NotFound");
    assert_eq!(
        problem["missing"],
        json!({"kind": "Gate", "name": "qa", "namespace": env.namespace})
    );
}

/// MCP #102, #126 (decided: the spec's way, as MCP 2025-11-25 has it): arguments
/// that do not fit the tool — a field missing, unknown or of the wrong type, a name
/// Kubernetes would not accept — are a tool result with `isError: true` saying what is
/// wrong, so the model can correct the call; nothing is asked of the cluster. A tool
/// the server does not offer is a JSON-RPC error (#103). The server carries on.
#[tokio::test]
async fn mcp102_mcp126_bad_arguments_are_results_to_correct() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, Some("ada")).await, Era::Legacy).await;
    let unknown = call(&client, "teleport", json!({})).await.unwrap_err();
    assert_eq!(error_code(&unknown), -32602);
    assert!(unknown.to_string().contains("teleport"), "{unknown}");

    let cases = [
        ("why_stuck", json!({}), "missing field `gate`"),
        ("why_stuck", json!({"gate": 5}), "invalid type"),
        ("why_stuck", json!({"gate": ""}), "gate is required"),
        (
            "why_stuck",
            json!({"gate": "production", "colour": "red"}),
            "unknown field `colour`",
        ),
        (
            "why_stuck",
            json!({"gate": "Prod_1"}),
            "not a Kubernetes object name",
        ),
        (
            "why_stuck",
            json!({"gate": "production", "namespace": "Shop!"}),
            "not a Kubernetes namespace name",
        ),
        ("overview", json!({"namespace": "x"}), "unknown field"),
        (
            "list_passages",
            json!({"gate": "Not A Gate"}),
            "not a Kubernetes object name",
        ),
        // #126: the write tools validate theirs the same way.
        (
            "promote",
            json!({"gate": "staging"}),
            "missing field `bundle`",
        ),
        ("promote", json!({"bundle": "b2"}), "missing field `gate`"),
        ("abort", json!({}), "missing field `passage`"),
    ];
    for (tool, arguments, says) in cases {
        let answer = result(&client, tool, arguments.clone()).await;
        assert_eq!(answer.is_error, Some(true), "{tool} {arguments}");
        let said = text(&answer);
        assert!(said.contains(says), "{tool} {arguments}: {said}");
        assert!(said.contains("Correct the arguments"), "{said}");
        let problem = &answer.structured_content.clone().unwrap()["error"];
        assert_eq!(problem["class"], "InvalidArguments", "{tool} {arguments}");
        assert!(
            problem["message"].as_str().unwrap().contains(says),
            "{problem}"
        );
    }
    assert_eq!(
        env.api::<hecate_types::Passage>()
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len(),
        1,
        "no Passage opened beyond the pipeline's dev-1"
    );
    // Still serving.
    let answer = result(&client, "why_stuck", json!({"gate": "production"})).await;
    assert_ne!(answer.is_error, Some(true));
}

#[tokio::test]
async fn promote_then_abort() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, Some("olaf@example.com")).await, Era::Legacy).await;
    let promoted = result(
        &client,
        "promote",
        json!({"gate": "staging", "bundle": "b2"}),
    )
    .await;
    let value = structured(&promoted);
    let name = value["passage"].as_str().unwrap().to_string();
    assert!(!name.is_empty());
    assert_eq!(value["actor"], "mcp:olaf@example.com");
    assert_eq!(value["gate"], "staging");
    assert_eq!(value["bundle"], "b2");
    assert_eq!(
        text(&promoted),
        format!("opened Passage {name} to cross b2 through staging")
    );
    let passage: Passage = env.api().get(&name).await.unwrap();
    assert_eq!(passage.spec.actor, "mcp:olaf@example.com");

    let aborted = result(&client, "abort", json!({"passage": name})).await;
    let value = structured(&aborted);
    assert_eq!(value["aborted"], true);
    assert_eq!(value["abortedBy"], "mcp:olaf@example.com");
    assert!(text(&aborted).contains(&name));
    let passage: Passage = env.api().get(&name).await.unwrap();
    assert!(passage.spec.abort);
    assert_eq!(
        passage.annotations().get(wellknown::ANNOTATION_ABORTED_BY),
        Some(&"mcp:olaf@example.com".to_string())
    );
}

#[tokio::test]
async fn promote_obeys_the_same_rules() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let mut suspended = gate_spec(&[], false);
    suspended.suspend = true;
    gate(&env, "frozen", suspended).await;
    let client = piped(server(&env, Some("ada")).await, Era::Legacy).await;
    let cases = [
        (
            "production",
            "b2",
            "has not cleared staging",
            "UpstreamNotCleared",
        ),
        ("production", "b1", "awaiting approval", "AwaitingApproval"),
        ("frozen", "b1", "suspended", "Suspended"),
    ];
    for (gate, bundle, says, code) in cases {
        let answer = result(&client, "promote", json!({"gate": gate, "bundle": bundle})).await;
        assert_eq!(answer.is_error, Some(true), "{gate} {bundle}");
        let said = text(&answer);
        assert!(said.starts_with("promote refused: "), "{said}");
        assert!(said.contains(says), "{said}");
        assert!(said.contains("do not retry"), "{said}");
        let problem: Value = answer.structured_content.unwrap()["error"].clone();
        assert_eq!(problem["class"], "Refused");
        assert_eq!(problem["code"], code);
        assert_eq!(problem["action"], "promote");
    }
    let passages: Vec<Passage> = env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap()
        .items;
    assert_eq!(passages.len(), 1, "a refused promote creates nothing");

    let unknown = result(&client, "abort", json!({"passage": "staging-9"})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert_eq!(
        unknown.structured_content.unwrap()["error"]["class"],
        "NotFound"
    );
}

/// Over stdio the server acts with its kubeconfig's identity; when that identity may
/// not do something, the cluster's own words (naming the permission) come back as a
/// result.
#[tokio::test]
async fn the_servers_own_rbac_is_reported_as_forbidden() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let ci_bot = env.client(hecate_testenv::Identity::CiBot).await;
    let server =
        hecate_mcp::HecateMcp::new(hecate_ops::Ops::new(ci_bot), settings(&env, None), None);
    let client = piped(server, Era::Legacy).await;
    let answer = result(&client, "why_stuck", json!({"gate": "production"})).await;
    assert_eq!(answer.is_error, Some(true));
    let said = text(&answer);
    assert!(said.contains("ci-bot"), "{said}");
    assert!(
        said.contains("cannot") && said.contains("hecate.dev"),
        "{said}"
    );
    assert_eq!(
        answer.structured_content.unwrap()["error"]["class"],
        "Forbidden"
    );
}

/// `delivery_metrics` (issue 35): ops' figures, the pipeline's last stage beside each
/// Gate's; one Gate's alone; a period it cannot read and a Gate that is not there are
/// answers to correct.
#[tokio::test]
async fn delivery_metrics_answers_the_figures_ops_judged() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, None).await, Era::Legacy).await;
    let figures = structured(&result(&client, "delivery_metrics", json!({})).await);
    let gates: Vec<&str> = figures["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["gate"].as_str().unwrap())
        .collect();
    assert_eq!(gates, ["dev", "staging", "production"]);
    assert_eq!(figures["pipeline"]["gates"], json!(["production"]));
    // dev-1 crossed dev: one deployment of b1, its lead time resting on it.
    let dev = &figures["gates"][0];
    assert_eq!(dev["deploymentFrequency"]["crossings"], 1);
    assert_eq!(dev["leadTime"]["crossings"], 1);
    assert_eq!(dev["crossings"][0]["passage"], "dev-1");
    assert_eq!(dev["crossings"][0]["outcome"], "succeeded");

    let one = structured(
        &result(
            &client,
            "delivery_metrics",
            json!({"gate": "dev", "since": "2w"}),
        )
        .await,
    );
    assert_eq!(one["gates"].as_array().unwrap().len(), 1);
    assert_eq!(one.get("pipeline"), None);

    for (arguments, class, said) in [
        (json!({"since": "forever"}), "InvalidArguments", "since"),
        (
            json!({"gate": "Not_A_Name"}),
            "InvalidArguments",
            "Not_A_Name",
        ),
        (json!({"gate": "qa"}), "NotFound", "qa"),
    ] {
        let answer = result(&client, "delivery_metrics", arguments.clone()).await;
        assert_eq!(answer.is_error, Some(true), "{arguments}");
        let problem = &answer.structured_content.clone().unwrap()["error"];
        assert_eq!(problem["class"], class, "{arguments}");
        assert!(
            text(&answer).contains(said),
            "{arguments}: {}",
            text(&answer)
        );
    }
}

/// A rollout halted across a Gate's targets, as the controller records it: read target
/// by target, explained with its three ways out, and retried through the one write an
/// agent may make of it — each answer as its tool's schema says.
#[tokio::test]
async fn a_halted_rollout_is_read_explained_and_retried() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    hecate_testenv::fixtures::halted(&env, "production-7", "production", "b1").await;
    let client = piped(server(&env, Some("ada")).await, Era::Modern).await;
    let tools = tools(&client).await;

    let targets =
        structured(&result(&client, "rollout_targets", json!({"gate": "production"})).await);
    valid(&tools, "rollout_targets", &targets);
    assert_eq!(targets["rollout"]["passage"], "production-7");
    assert_eq!(targets["rollout"]["now"]["phase"], "Halted");
    assert_eq!(targets["rollout"]["now"]["failed"][0]["target"], "canary");
    assert_eq!(targets["rollout"]["now"]["failed"][0]["step"], 2);
    let names: Vec<&str> = targets["rollout"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["canary", "eu-1"]);

    let why = result(&client, "why_stuck", json!({"gate": "production"})).await;
    let explained = structured(&why);
    valid(&tools, "why_stuck", &explained);
    let halted = explained["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["kind"] == "RolloutHalted")
        .unwrap_or_else(|| panic!("no RolloutHalted in {explained:#}"));
    assert_eq!(halted["detail"], hecate_testenv::fixtures::HALT);
    assert!(
        halted["fix"]
            .as_str()
            .unwrap()
            .contains("hecate retry production-7")
    );
    let alternatives: Vec<&str> = halted["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"]["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        alternatives,
        ["acceptFailures", "rollbackTargets", "abort"],
        "{halted:#}"
    );
    let said = text(&why);
    assert!(said.contains("or: accept the failures and go on"), "{said}");

    let asked =
        structured(&result(&client, "retry_targets", json!({"passage": "production-7"})).await);
    valid(&tools, "retry_targets", &asked);
    assert_eq!(asked["asked"], "retry");
    let written: Passage = env.api().get("production-7").await.unwrap();
    let retries = written.spec.rollout.map(|r| r.retries).unwrap_or_default();
    assert_eq!(retries.len(), 1, "one request, kept on the spec");
    assert!(retries[0].by.ends_with("ada"), "{:?}", retries[0].by);

    // Accepting the failures is not a tool: for people only (DECISION 158).
    let refused = call(
        &client,
        "accept_failures",
        json!({"passage": "production-7", "reason": "canary is being rebuilt"}),
    )
    .await
    .unwrap_err();
    assert_eq!(error_code(&refused), -32602);
}
