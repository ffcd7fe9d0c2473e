//! The tool list: names, schemas, which tools exist in which configuration, and that
//! every answer is what its `outputSchema` says.

use hecate_ops::BlockerKind;
use hecate_testenv::TestEnv;
use hecate_types::{Bundle, Passage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;

#[tokio::test]
async fn the_tool_list_with_its_schemas() {
    let env = TestEnv::new().await;
    let client = piped(server(&env, Some("ada")).await, Era::Legacy).await;
    let tools = tools(&client).await;
    insta::assert_json_snapshot!("tool_list_with_writes", tools);

    let read_only = piped(server(&env, None).await, Era::Legacy).await;
    let mut expected: Vec<_> = tools
        .into_iter()
        .filter(|t| {
            ![
                "promote",
                "preview_crossing",
                "rollback",
                "abort",
                "retry_targets",
                "suspend_flux",
                "resume_flux",
                "reconcile_flux",
            ]
            .contains(&t.name.as_ref())
        })
        .collect();
    expected.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(super::harness::tools(&read_only).await, expected);
}

#[tokio::test]
async fn write_tools_exist_only_with_allow_writes() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let read_only = piped(server(&env, None).await, Era::Legacy).await;
    let names = tool_names(&read_only).await;
    assert_eq!(
        names,
        [
            "approvals",
            "audit",
            "delivery_metrics",
            "diff_bundles",
            "evidence",
            "flux_resources",
            "get_gate",
            "get_passage",
            "list_bundles",
            "list_gates",
            "list_passages",
            "overview",
            "preflight",
            "rollout_targets",
            "why_stuck"
        ]
    );
    let refused = call(
        &read_only,
        "promote",
        json!({"gate": "staging", "bundle": "b2"}),
    )
    .await
    .unwrap_err();
    assert_eq!(error_code(&refused), -32602);
    assert!(refused.to_string().contains("read-only"), "{refused}");
    let passages: Vec<Passage> = env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap()
        .items;
    assert_eq!(passages.len(), 1, "only the fixture's dev-1");

    let writing = piped(server(&env, Some("ada")).await, Era::Legacy).await;
    let names = tool_names(&writing).await;
    assert!(names.contains(&"promote".to_string()));
    assert!(names.contains(&"abort".to_string()));
    assert!(names.contains(&"rollback".to_string()));
    for flux in ["suspend_flux", "resume_flux", "reconcile_flux"] {
        assert!(names.contains(&flux.to_string()), "{flux}");
    }
    assert!(names.contains(&"retry_targets".to_string()));
    // Accepting a rollout's failures overrides the Gate's budget: for people only.
    assert!(names.iter().all(|n| !n.contains("accept")), "{names:?}");
    assert!(names.contains(&"preview_crossing".to_string()));
    assert_eq!(names.len(), 23);
}

#[tokio::test]
async fn approve_is_never_a_tool() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    for actor in [None, Some("ada")] {
        let client = piped(server(&env, actor).await, Era::Legacy).await;
        let names = tool_names(&client).await;
        assert!(names.iter().all(|n| !n.contains("approve")), "{names:?}");
        let refused = call(
            &client,
            "approve",
            json!({"bundle": "b1", "gate": "production"}),
        )
        .await
        .unwrap_err();
        assert_eq!(error_code(&refused), -32602);
        let message = refused.to_string();
        assert!(message.contains("Unknown tool: approve"), "{message}");
        assert!(message.contains("segregation-of-duties"), "{message}");
    }
    let b1: Bundle = env.api().get("b1").await.unwrap();
    let approvals = b1.status.map(|s| s.approved_for).unwrap_or_default();
    assert!(approvals.is_empty(), "{approvals:?}");
}

/// Every structured answer, success or problem, checked against the schema its tool
/// advertises — the typed contract a client may rely on.
#[tokio::test]
async fn every_answer_matches_its_output_schema() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, Some("ada")).await, Era::Modern).await;
    let tools = tools(&client).await;
    let schema_of = |name: &str| -> Value {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        Value::Object(tool.output_schema.as_deref().cloned().unwrap())
    };
    let calls = [
        ("list_gates", json!({})),
        ("get_gate", json!({"name": "production"})),
        ("why_stuck", json!({"gate": "production"})),
        ("why_stuck", json!({"gate": "staging"})),
        ("why_stuck", json!({"gate": "dev"})),
        ("list_bundles", json!({})),
        ("list_passages", json!({"gate": "dev"})),
        ("get_passage", json!({"name": "dev-1"})),
        ("audit", json!({})),
        ("evidence", json!({"bundle": "b1"})),
        ("overview", json!({})),
        ("preflight", json!({"gate": "production"})),
        ("flux_resources", json!({"gate": "production"})),
        ("rollout_targets", json!({"gate": "production"})),
        ("approvals", json!({})),
        ("diff_bundles", json!({"bundle": "b2"})),
        (
            "diff_bundles",
            json!({"bundle": "b2", "against": "production"}),
        ),
        ("diff_bundles", json!({"bundle": "b1", "against": "b2"})),
        ("promote", json!({"gate": "staging", "bundle": "b2"})),
    ];
    for (tool, arguments) in calls {
        let answer = result(&client, tool, arguments.clone()).await;
        let value = structured(&answer);
        let validator = jsonschema::validator_for(&schema_of(tool))
            .unwrap_or_else(|e| panic!("{tool}'s outputSchema is not a schema: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{tool} {arguments}: {errors:#?}\n{value:#}"
        );
    }
    let opened = structured(&result(&client, "list_passages", json!({"gate": "staging"})).await);
    let passage = opened["passages"][0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let aborted = structured(&result(&client, "abort", json!({"passage": passage})).await);
    let validator = jsonschema::validator_for(&schema_of("abort")).unwrap();
    assert!(validator.is_valid(&aborted), "{aborted:#}");
}

/// The approvals queue, as ops judges it: b1 waits for production's approval; over
/// stdio there is no "you" to speak of, and an agent never approves.
#[tokio::test]
async fn the_approvals_queue_says_what_waits_on_a_person() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, Some("ada")).await, Era::Modern).await;
    let queue = structured(&result(&client, "approvals", json!({})).await);
    let waiting = queue["waiting"].as_array().unwrap();
    assert_eq!(waiting.len(), 1, "{queue:#}");
    assert_eq!(
        (waiting[0]["gate"].as_str(), waiting[0]["bundle"].as_str()),
        (Some("production"), Some("b1"))
    );
    assert_eq!(waiting[0]["progress"]["summary"], "0 of 1 from anyone");
    assert_eq!(waiting[0]["you"]["canApprove"], false);
}

#[tokio::test]
async fn why_stucks_output_schema_names_every_blocker_kind() {
    let env = TestEnv::new().await;
    let client = piped(server(&env, None).await, Era::Legacy).await;
    let tools = tools(&client).await;
    let why_stuck = tools.iter().find(|t| t.name == "why_stuck").unwrap();
    let schema = Value::Object(why_stuck.output_schema.as_deref().cloned().unwrap());
    let kind = &schema["$defs"]["BlockerKind"];
    let mut listed: Vec<String> = kind["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("no enum in {kind:#}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let meanings = kind["description"].as_str().unwrap();
    assert!(
        meanings
            .contains("- ChangeHeld: The crossing in progress is held by the Fides change gate."),
        "{meanings}"
    );
    listed.sort();
    let mut every: Vec<String> = BlockerKind::ALL
        .iter()
        .map(|k| k.as_str().to_string())
        .collect();
    every.sort();
    assert_eq!(listed, every);
    assert!(listed.contains(&"ChangeHeld".to_string()));
    let required = schema["required"].as_array().unwrap();
    for field in ["gate", "namespace", "state", "summary"] {
        assert!(required.contains(&json!(field)), "{field} not required");
    }
}

#[tokio::test]
async fn input_schemas_refuse_unknown_fields() {
    let env = TestEnv::new().await;
    pipeline(&env).await;
    let client = piped(server(&env, None).await, Era::Legacy).await;
    for (tool, arguments) in [
        ("why_stuck", json!({"gate": "production", "colour": "red"})),
        ("overview", json!({"namespace": "x"})),
    ] {
        let refused = result(&client, tool, arguments).await;
        assert_eq!(refused.is_error, Some(true), "{tool}");
        assert_eq!(
            refused.structured_content.unwrap()["error"]["class"],
            "InvalidArguments"
        );
    }
    for tool in tools(&client).await {
        assert_eq!(
            tool.input_schema.get("additionalProperties"),
            Some(&json!(false)),
            "{}",
            tool.name
        );
    }
}
