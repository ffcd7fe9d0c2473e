//! What one Gate author may write is bounded (issue 30): the API server refuses step
//! lists and conditions past the CRDs' limits, and an expression nested past the
//! controller's limit is reported on its Gate and its Passage — the controller process
//! lives on, and goes on serving every other Gate.

use std::time::Duration;

use hecate_types::limits::{MAX_EXPRESSION_LENGTH, MAX_STEPS, MAX_VERIFICATIONS};
use hecate_types::{Gate, Passage, PassagePhase, PassageSpec, Step, StepPhase, Verification};
use kube::api::PostParams;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};
use hecate_steps::reason::Reason;

/// An `http` step to `url`, run when `condition` holds.
fn call(url: &str, condition: &str) -> Step {
    Step {
        uses: "http".into(),
        condition: condition.into(),
        with: Some(json!({ "url": url })),
        ..Step::default()
    }
}

/// A Gate of `steps`, or the API server's refusal of it.
async fn gate_of(h: &Harness, name: &str, steps: Vec<Step>) -> Result<Gate, kube::Error> {
    let mut spec = gate_spec(false, &[], false);
    spec.passage.as_mut().unwrap().steps = steps;
    let mut gate = Gate::new(name, spec);
    gate.metadata.namespace = Some(h.env.namespace.clone());
    h.env
        .api::<Gate>()
        .create(&PostParams::default(), &gate)
        .await
}

/// A Passage moving `b1` with `steps` through a Gate there is not: what the API server
/// is asked to store (the controller would refuse it: no such Gate).
fn passage(name: &str, steps: Vec<Step>) -> Passage {
    Passage::new(
        name,
        PassageSpec {
            gate: "elsewhere".into(),
            bundle: "b1".into(),
            steps,
            actor: "controller".into(),
            ..PassageSpec::default()
        },
    )
}

/// Passage `name`'s status once it has failed.
async fn failed(h: &Harness, name: &str) -> hecate_types::PassageStatus {
    eventually(Duration::from_secs(15), name, || async {
        let passage = h.env.api::<Passage>().get(name).await.unwrap();
        (passage.phase() == PassagePhase::Failed).then_some(passage)
    })
    .await
    .status
    .unwrap()
}

/// The API server's refusal, as it says it.
fn refusal<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            status.message
        }
        Err(other) => panic!("expected the API server to refuse it: {other}"),
        Ok(_) => panic!("the API server accepted it"),
    }
}

#[tokio::test]
async fn the_api_server_refuses_too_many_steps_and_too_long_a_condition() {
    let h = Harness::new().await;
    let url = "http://127.0.0.1:9/hook";

    // At the limits, a Gate is what any pipeline could be.
    let longest = format!("{}failed", " ".repeat(MAX_EXPRESSION_LENGTH - 6));
    let mut most = vec![call(url, &longest)];
    most.resize(MAX_STEPS, call(url, ""));
    gate_of(&h, "most", most.clone()).await.unwrap();

    let mut too_many = most.clone();
    too_many.push(call(url, ""));
    let message = refusal(gate_of(&h, "too-many", too_many.clone()).await);
    assert!(
        message.contains("spec.passage.steps") && message.contains("Too many"),
        "{message}"
    );

    let too_long = format!("{longest} ");
    let message = refusal(gate_of(&h, "too-long", vec![call(url, &too_long)]).await);
    assert!(
        message.contains("spec.passage.steps[0].if") && message.contains("Too long"),
        "{message}"
    );

    // A Passage made by hand is held to the same bounds.
    let api = h.env.api::<Passage>();
    let mut made = passage("made-1", too_many);
    made.metadata.namespace = Some(h.env.namespace.clone());
    let message = refusal(api.create(&PostParams::default(), &made).await);
    assert!(
        message.contains("spec.steps") && message.contains("Too many"),
        "{message}"
    );
    let mut made = passage("made-2", vec![call(url, &too_long)]);
    made.metadata.namespace = Some(h.env.namespace.clone());
    let message = refusal(api.create(&PostParams::default(), &made).await);
    assert!(message.contains("spec.steps[0].if"), "{message}");

    // And so is a Gate's verify list.
    let mut spec = gate_spec(false, &[], false);
    spec.verify = vec![
        Verification {
            uses: "flagger".into(),
            with: None,
        };
        MAX_VERIFICATIONS + 1
    ];
    let mut gate = Gate::new("too-many-checks", spec);
    gate.metadata.namespace = Some(h.env.namespace.clone());
    let message = refusal(
        h.env
            .api::<Gate>()
            .create(&PostParams::default(), &gate)
            .await,
    );
    assert!(
        message.contains("spec.verify") && message.contains("Too many"),
        "{message}"
    );
}

#[tokio::test]
async fn a_condition_nested_too_deep_is_an_expression_error_and_the_controller_lives_on() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    let receiver = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
        .mount(&receiver)
        .await;
    let url = format!("{}/hook", receiver.uri());
    // Within the CRD's length, far past the nesting the controller takes: before the
    // bound, each of these overflowed its stack and the process died.
    let parens = format!("{}true{}", "(".repeat(2_000), ")".repeat(2_000));
    let nots = format!("{}true", "!".repeat(4_000));
    assert!(parens.len() <= MAX_EXPRESSION_LENGTH && nots.len() <= MAX_EXPRESSION_LENGTH);
    let too_deep = "the expression nests more than 64 deep";

    bundle(&h.env, "b1").await;
    gate_of(&h, "dev", vec![call(&url, &parens)]).await.unwrap();
    let in_with = Step {
        uses: "http".into(),
        with: Some(json!({"url": url, "body": {"n": format!("${{{{ {nots} }}}}")}})),
        ..Step::default()
    };
    let in_success_if = Step {
        uses: "http".into(),
        with: Some(
            json!({"url": url, "successIf": format!("${{{{ 'status' }}}} == 200 && {parens}")}),
        ),
        ..Step::default()
    };
    // Each a Gate's own crossing, as promote makes it (a Passage runs only its Gate's
    // steps): the controller judges the Gate's steps before the first one runs.
    let b1 = h.bundle("b1").await;
    for (name, step) in [
        ("by-hand-1", call(&url, &nots)),
        ("by-hand-2", in_with),
        ("by-hand-3", in_success_if),
    ] {
        let gate = gate_of(&h, &format!("{name}-gate"), vec![step])
            .await
            .unwrap();
        h.env
            .create(hecate_ops::rules::promotion::new_passage(
                &gate,
                &b1,
                "olaf",
                name,
                jiff::Timestamp::now(),
            ))
            .await;
    }
    let controller = Controller::start(&h.env, &ns, &[]).await;

    // The Gate says which step and why, and opens nothing.
    let ready = eventually(Duration::from_secs(15), "dev refuses its steps", || async {
        let status = h.gate("dev").await.status?;
        status
            .conditions
            .into_iter()
            .find(|c| c.type_ == "Ready" && c.reason == "InvalidSteps")
    })
    .await;
    assert!(
        ready
            .message
            .contains("steps[0] (http): if: invalid expression")
            && ready.message.contains(too_deep),
        "{}",
        ready.message
    );

    // An `if:` is checked with the Gate's steps: that crossing is refused before it
    // starts. Expressions only the run can see fail at their step, with the reason of
    // a bad expression.
    let refused = failed(&h, "by-hand-1").await;
    assert!(
        refused.message.starts_with("refused (InvalidSteps): ")
            && refused.message.contains(too_deep),
        "{}",
        refused.message
    );
    assert!(refused.steps.is_empty(), "no step ran");
    for (name, reason) in [
        ("by-hand-2", Reason::BadExpression),
        ("by-hand-3", Reason::InvalidConfig),
    ] {
        let status = failed(&h, name).await;
        let step = &status.steps[0];
        assert_eq!(
            (step.phase, step.reason.as_str()),
            (StepPhase::Failed, reason.as_str()),
            "{name}: {}",
            step.message
        );
        assert!(step.message.contains(too_deep), "{name}: {}", step.message);
    }
    // Each was refused before its request went out.
    assert!(receiver.received_requests().await.unwrap().is_empty());
    assert!(
        controller.scrape().await.contains("hecate_"),
        "the controller still answers"
    );
    let status = controller.terminate().await;
    assert!(status.success(), "{status:?}");
}
