//! OpenTelemetry tracing of crossings by the controller process (spec controller.md
//! §3.10, §8.2): with an OTLP endpoint set, a crossing gets a trace ID before its first
//! step, git-commit writes its traceparent into the promotion commit, and once the
//! crossing finishes one trace arrives over OTLP/HTTP (protobuf) — a root span under
//! the commit's span, one child per step that ran. Without `OTEL_*`, nothing: no trace
//! ID. An OTLP protocol it does not speak stops it at start-up.

use std::time::Duration;

use hecate_testenv::world::{Repository, git};
use hecate_types::{Gate, Passage, PassagePhase, Step, StepPhase};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::{AnyValue as Any, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{Span, status::StatusCode};
use prost::Message as _;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

async fn setup() -> Harness {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    h
}

/// An automatic Gate `dev` whose crossing commits to `fleet` and pushes, then has a
/// step that only runs after a failure (so it is skipped).
async fn gate_committing_to(h: &Harness, fleet: &Repository) {
    let steps = vec![
        Step {
            uses: "git-clone".into(),
            with: Some(json!({"repo": fleet.url, "branch": "main"})),
            ..Step::default()
        },
        Step {
            uses: "edit-yaml".into(),
            with: Some(json!({
                "path": "repo/values.yaml",
                "edits": [{"key": "app.revision", "value": "${{ bundle.name }}"}],
            })),
            ..Step::default()
        },
        Step {
            uses: "git-commit".into(),
            alias: "commit".into(),
            with: Some(json!({"message": "dev: ${{ bundle.name }}"})),
            ..Step::default()
        },
        Step {
            uses: "git-push".into(),
            ..Step::default()
        },
        Step {
            uses: "http".into(),
            condition: "failed".into(),
            with: Some(json!({"url": "http://127.0.0.1:9/rollback"})),
            ..Step::default()
        },
    ];
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = steps;
    create_gate(h, "dev", spec).await;
}

async fn finished(h: &Harness) -> Passage {
    eventually(Duration::from_secs(30), "dev-1 finished", || async {
        h.env
            .api::<Passage>()
            .get_opt("dev-1")
            .await
            .unwrap()
            .filter(|p| p.is_terminal())
    })
    .await
}

/// Every span the collector has received, with the resource's `service.name`.
async fn received(collector: &MockServer) -> Vec<(String, Span)> {
    let mut spans = Vec::new();
    for request in collector.received_requests().await.unwrap() {
        let export = ExportTraceServiceRequest::decode(request.body.as_slice())
            .expect("an OTLP/HTTP protobuf body");
        for resource in export.resource_spans {
            let service = resource
                .resource
                .as_ref()
                .and_then(|r| attribute(&r.attributes, "service.name"))
                .unwrap_or_default();
            for scope in resource.scope_spans {
                spans.extend(scope.spans.into_iter().map(|s| (service.clone(), s)));
            }
        }
    }
    spans
}

fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| match &kv.value {
            Some(Any {
                value: Some(AnyValue::StringValue(s)),
            }) => Some(s.clone()),
            _ => None,
        })
}

fn unix_nanos(time: &Option<hecate_types::Time>) -> u64 {
    let time = time.as_ref().expect("a time").0;
    u64::try_from(time.as_nanosecond()).unwrap()
}

#[tokio::test]
async fn a_crossing_is_one_trace_under_its_commit_sent_once_over_otlp_http() {
    let h = setup().await;
    let repos = tempfile::tempdir().unwrap();
    let fleet = Repository::create(
        repos.path(),
        "fleet",
        &["main"],
        &[("values.yaml", "app:\n  revision: none\n")],
    )
    .await
    .unwrap();
    let collector = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/traces"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&collector)
        .await;
    let _controller = Controller::start_with_env(
        &h.env,
        &h.env.namespace,
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.uri()),
            // Send a finished batch at once rather than after the default 5 s.
            ("OTEL_BSP_SCHEDULE_DELAY", "50"),
        ],
    )
    .await;
    gate_committing_to(&h, &fleet).await;
    bundle(&h.env, "b1").await;

    let passage = finished(&h).await;
    let status = passage.status.clone().unwrap();
    assert_eq!(
        status.phase(),
        PassagePhase::Succeeded,
        "{}",
        status.message
    );
    let id = status.trace_id.clone();
    assert_eq!(id.len(), 32, "{id:?}");
    assert!(
        id.chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
        "{id:?}"
    );
    let (trace_id, parent) = (hex(&id), hex(&id[16..]));
    assert_ne!(&trace_id[..8], &[0; 8]);
    assert_ne!(parent, [0; 8]);

    // The promotion commit carries the trace's parent.
    let message = git(&fleet.bare, &["log", "-1", "--format=%B", "main"])
        .await
        .unwrap();
    assert!(
        message.ends_with(&format!("traceparent: 00-{id}-{}-01", &id[16..])),
        "{message}"
    );

    let spans = eventually(Duration::from_secs(15), "the crossing's spans", || async {
        let spans: Vec<(String, Span)> = received(&collector)
            .await
            .into_iter()
            .filter(|(_, s)| s.trace_id == trace_id)
            .collect();
        (spans.len() >= 5).then_some(spans)
    })
    .await;
    let (roots, mut steps): (Vec<_>, Vec<_>) = spans
        .into_iter()
        .partition(|(_, s)| s.name.starts_with("passage "));
    assert_eq!(roots.len(), 1, "{roots:#?}");
    let (service, root) = &roots[0];
    assert_eq!(service, "hecate-controller");
    assert_eq!(root.name, "passage dev");
    assert_eq!(
        root.parent_span_id, parent,
        "the commit's span is the parent"
    );
    assert_eq!(root.start_time_unix_nano, unix_nanos(&status.started_at));
    assert_eq!(root.end_time_unix_nano, unix_nanos(&status.finished_at));
    for (key, value) in [
        ("hecate.gate", "dev"),
        ("hecate.bundle", "b1"),
        ("hecate.passage", "dev-1"),
        ("hecate.namespace", h.env.namespace.as_str()),
        ("hecate.actor", passage.spec.actor.as_str()),
        ("hecate.phase", "Succeeded"),
    ] {
        assert_eq!(
            attribute(&root.attributes, key).as_deref(),
            Some(value),
            "{key}"
        );
    }
    assert_ne!(
        root.status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );

    // One child per step that ran; the skipped one has none.
    assert_eq!(status.steps[4].phase, StepPhase::Skipped);
    steps.sort_by_key(|(_, s)| s.start_time_unix_nano);
    let names: Vec<&str> = steps.iter().map(|(_, s)| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["git-clone", "edit-yaml", "git-commit (commit)", "git-push"]
    );
    for ((_, span), record) in steps.iter().zip(&status.steps) {
        assert_eq!(span.parent_span_id, root.span_id, "{}", span.name);
        assert_eq!(span.start_time_unix_nano, unix_nanos(&record.started_at));
        assert_eq!(span.end_time_unix_nano, unix_nanos(&record.finished_at));
        assert_eq!(
            attribute(&span.attributes, "hecate.step.uses").as_deref(),
            Some(record.uses.as_str())
        );
        assert_eq!(
            attribute(&span.attributes, "hecate.step.phase").as_deref(),
            Some("Succeeded")
        );
    }

    // Sent once: still one root after the Gate has recorded the crossing (and so seen
    // the finished Passage).
    eventually(Duration::from_secs(10), "the Gate records it", || async {
        let gate: Gate = h.gate("dev").await;
        (gate.status?.current?.bundle == "b1").then_some(())
    })
    .await;
    let roots = received(&collector)
        .await
        .into_iter()
        .filter(|(_, s)| s.trace_id == trace_id && s.parent_span_id == parent)
        .count();
    assert_eq!(roots, 1);
}

#[tokio::test]
async fn spans_still_queued_are_sent_when_the_controller_stops() {
    let h = setup().await;
    let collector = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/traces"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&collector)
        .await;
    let controller = Controller::start_with_env(
        &h.env,
        &h.env.namespace,
        &[],
        &[
            ("OTEL_TRACES_EXPORTER", "otlp"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                &format!("{}/v1/traces", collector.uri()),
            ),
            // Nothing would leave for ten minutes but for the flush on stopping.
            ("OTEL_BSP_SCHEDULE_DELAY", "600000"),
        ],
    )
    .await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "http".into(),
        with: Some(json!({"url": format!("{}/hook", collector.uri())})),
        ..Step::default()
    }];
    create_gate(&h, "dev", spec).await;
    bundle(&h.env, "b1").await;
    let status = finished(&h).await.status.unwrap();
    assert_eq!(status.phase(), PassagePhase::Failed, "the hook answers 404");
    assert!(
        received(&collector).await.is_empty(),
        "queued, not sent yet"
    );

    assert!(controller.terminate().await.success());
    let trace_id = hex(&status.trace_id);
    let spans: Vec<Span> = received(&collector)
        .await
        .into_iter()
        .filter(|(_, s)| s.trace_id == trace_id)
        .map(|(_, s)| s)
        .collect();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["http", "passage dev"]);
    // A failed crossing and its failed step are errors, with their messages.
    for (span, message) in spans
        .iter()
        .zip([&status.steps[0].message, &status.message])
    {
        let span_status = span.status.as_ref().unwrap();
        assert_eq!(span_status.code, StatusCode::Error as i32, "{}", span.name);
        assert_eq!(&span_status.message, message);
    }
}

#[tokio::test]
async fn without_otel_settings_a_crossing_has_no_trace_id() {
    let h = setup().await;
    let hook = MockServer::start().await;
    Mock::given(path("/hook"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&hook)
        .await;
    let _controller = Controller::start(&h.env, &h.env.namespace, &[]).await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "http".into(),
        with: Some(json!({"url": format!("{}/hook", hook.uri())})),
        ..Step::default()
    }];
    create_gate(&h, "dev", spec).await;
    bundle(&h.env, "b1").await;

    let status = finished(&h).await.status.unwrap();
    assert_eq!(
        status.phase(),
        PassagePhase::Succeeded,
        "{}",
        status.message
    );
    assert_eq!(status.trace_id, "");
    assert_eq!(hook.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_otlp_protocol_it_does_not_speak_stops_it_at_start_up() {
    let h = setup().await;
    let (exit, stderr) = Controller::run_to_exit(
        &h.env,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
    )
    .await;
    assert!(!exit.success());
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL")
            && stderr.contains("http/json")
            && stderr.contains("http/protobuf"),
        "{stderr}"
    );
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}
