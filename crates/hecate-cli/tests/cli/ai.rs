//! `hecate explain --ai` (surfaces §1.10) as users run it, against a real cluster and
//! wiremock as the model: the model's words come after the table, and nothing it
//! does changes the output above them or the exit code.

use hecate_testenv::{Identity, TestEnv};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;

/// A namespace with a `production` Gate and one Bundle for it.
async fn pipeline() -> (TestEnv, Hecate) {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "production", gate_spec(&[], true)).await;
    bundle(&env, "b1").await;
    (env, hecate)
}

/// `hecate <args>` as Alice with the model settings `vars` (and no ambient ones).
async fn run_with(hecate: &Hecate, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut command = hecate.command(Identity::Alice, args);
    for name in [
        "HECATE_LLM_URL",
        "HECATE_LLM_MODEL",
        "HECATE_LLM_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "OPENAI_API_KEY",
    ] {
        command.env_remove(name);
    }
    for (name, value) in vars {
        command.env(name, value);
    }
    output(command.output().await.unwrap())
}

#[tokio::test]
async fn explain_ai_adds_the_models_words_after_the_table() {
    let (_env, hecate) = pipeline().await;
    let model = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": {"role": "assistant",
                "content": "Production can take b1 now.\nRun the promote command."}}]
        })))
        .expect(1)
        .mount(&model)
        .await;
    let plain = run_with(&hecate, &["explain", "production"], &[]).await;
    assert_eq!(plain.code, 0, "{plain:?}");
    let url = format!("{}/v1", model.uri());
    // The reference's single-dash spelling, and OpenAI's variables for the key.
    let ai = run_with(
        &hecate,
        &["explain", "production", "-ai"],
        &[
            ("HECATE_LLM_URL", &url),
            ("HECATE_LLM_MODEL", "test-model"),
            ("OPENAI_API_KEY", "sk-test"),
        ],
    )
    .await;
    assert_eq!(ai.code, 0, "{ai:?}");
    assert_eq!(ai.stderr, "");
    assert_eq!(
        ai.stdout,
        format!(
            "{}\ntest-model says:\n  Production can take b1 now.\n  Run the promote command.\n",
            plain.stdout
        )
    );
    // The model was handed the explanation ops made, as JSON, fenced as untrusted.
    let requests = model.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "test-model");
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("--- BEGIN UNTRUSTED GATE STATE HECATE-production-"),
        "{user}"
    );
    assert!(user.contains("\"gate\": \"production\""), "{user}");
    assert!(
        user.contains(&format!("\"namespace\": \"{}\"", hecate.namespace)),
        "{user}"
    );
}

#[tokio::test]
async fn explain_ai_with_a_failing_model_keeps_the_output_and_the_exit_code() {
    let (_env, hecate) = pipeline().await;
    let model = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(500).set_body_string("the model fell over"))
        .expect(1)
        .mount(&model)
        .await;
    let plain = run_with(&hecate, &["explain", "production"], &[]).await;
    let ai = run_with(
        &hecate,
        &["explain", "production", "--ai"],
        &[
            ("OPENAI_BASE_URL", &model.uri()),
            ("OPENAI_MODEL", "test-model"),
        ],
    )
    .await;
    assert_eq!(ai.code, plain.code, "{ai:?}");
    assert_eq!(ai.stdout, plain.stdout);
    assert_eq!(
        ai.stderr,
        "\nthe model could not be reached: llm: 500 Internal Server Error: the model fell over\n"
    );
}

#[tokio::test]
async fn explain_ai_without_a_model_says_how_to_configure_one() {
    let (_env, hecate) = pipeline().await;
    let ai = run_with(&hecate, &["explain", "production", "--ai"], &[]).await;
    assert_eq!(ai.code, 0, "{ai:?}");
    assert!(ai.stderr.starts_with('\n'), "{}", ai.stderr);
    for needle in [
        "HECATE_LLM_URL",
        "HECATE_LLM_MODEL",
        "http://localhost:11434/v1",
    ] {
        assert!(ai.stderr.contains(needle), "{}", ai.stderr);
    }
}

#[tokio::test]
async fn explain_ai_is_for_the_table_only() {
    let (_env, hecate) = pipeline().await;
    let model = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&model)
        .await;
    let json = run_with(
        &hecate,
        &["explain", "production", "--ai", "-o", "json"],
        &[("HECATE_LLM_URL", &model.uri()), ("HECATE_LLM_MODEL", "m")],
    )
    .await;
    assert_eq!(json.code, 0, "{json:?}");
    let explanation: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(explanation["gate"], "production");
    assert!(
        json.stderr.contains("--ai phrases the table only"),
        "{}",
        json.stderr
    );
}
