//! OpenTelemetry tracing of crossings (spec controller.md §8.2): whether it is on, and
//! sending each finished crossing's spans over OTLP.
//!
//! Off by default, and decided only by the standard `OTEL_*` variables, which are
//! never overridden: `OTEL_TRACES_EXPORTER=none` turns it off whatever else is set;
//! `=otlp` turns it on; otherwise an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) does. [`enablement`] is that decision, a pure
//! function of the variables. The protocol is `http/protobuf` (the default) or `grpc`
//! (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`); anything
//! else stops the controller at start-up. Everything else — endpoints, headers,
//! timeouts, compression, the sampler (`OTEL_TRACES_SAMPLER`), batching (`OTEL_BSP_*`),
//! `OTEL_RESOURCE_ATTRIBUTES` — the OpenTelemetry SDK reads as it documents. The
//! service is `hecate-controller` at this version unless `OTEL_SERVICE_NAME` or
//! `service.name` in `OTEL_RESOURCE_ATTRIBUTES` says otherwise. W3C trace-context and
//! baggage are the propagators. Spans still queued are flushed when the process stops.
//!
//! OTLP over HTTP goes through this crate's reqwest client ([`Http`]), so the process
//! keeps one HTTP and TLS stack (rustls, ring, webpki roots); gRPC goes through tonic
//! over the same rustls and ring.
//!
//! What is sent is [`spans::spans`], the pure half: one trace per crossing, rebuilt
//! from its stored status when it finishes; [`Tracing::emit`] hands it to the SDK with
//! the recorded times, under the remote parent its trace ID names.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use opentelemetry::trace::{
    Span as _, SpanBuilder, SpanContext, SpanId, Status, TraceContextExt as _, TraceFlags, TraceId,
    TraceState, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_otlp::{Protocol as OtlpProtocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

pub mod spans;

use spans::{Span, Trace};

/// The service name when `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` name none.
pub const SERVICE_NAME: &str = "hecate-controller";

/// How OTLP is spoken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`: protobuf bodies POSTed to `<endpoint>/v1/traces`.
    HttpProtobuf,
    /// `grpc`.
    Grpc,
}

/// Whether crossings are traced, and how the spans leave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enablement {
    /// Not traced: `status.traceID` stays empty.
    Off,
    /// Traced, sent over OTLP.
    On(Protocol),
}

/// An `OTEL_*` setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{variable}={value:?}: not an OTLP protocol hecate-controller speaks; use \"http/protobuf\" (the default) or \"grpc\""
)]
pub struct BadProtocol {
    /// The variable that said it.
    pub variable: &'static str,
    /// What it said.
    pub value: String,
}

/// Decides from the `OTEL_*` variables (`var` answers a variable's value, `None` when
/// unset) whether crossings are traced (spec §8.2). An empty value counts as unset, as
/// the OpenTelemetry specification has it. The protocol is only judged when tracing is
/// on: a setting nothing uses stops nothing.
pub fn enablement(var: impl Fn(&str) -> Option<String>) -> Result<Enablement, BadProtocol> {
    let var = |name: &str| {
        var(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let on = match var("OTEL_TRACES_EXPORTER") {
        Some(exporters) => {
            let names: Vec<String> = exporters
                .split(',')
                .map(|n| n.trim().to_ascii_lowercase())
                .collect();
            if names.iter().any(|n| n == "none") {
                false
            } else if names.iter().any(|n| n == "otlp") {
                true
            } else {
                endpoint_set(&var)
            }
        }
        None => endpoint_set(&var),
    };
    if !on {
        return Ok(Enablement::Off);
    }
    let (variable, value) = match (
        var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
        var("OTEL_EXPORTER_OTLP_PROTOCOL"),
    ) {
        (Some(value), _) => ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", value),
        (None, Some(value)) => ("OTEL_EXPORTER_OTLP_PROTOCOL", value),
        (None, None) => return Ok(Enablement::On(Protocol::HttpProtobuf)),
    };
    match value.as_str() {
        "http/protobuf" => Ok(Enablement::On(Protocol::HttpProtobuf)),
        "grpc" => Ok(Enablement::On(Protocol::Grpc)),
        _ => Err(BadProtocol { variable, value }),
    }
}

fn endpoint_set(var: &impl Fn(&str) -> Option<String>) -> bool {
    var("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
        || var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some()
}

/// How long one OTLP/HTTP request may take: `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else
/// `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds), else 10 s. (The gRPC exporter reads
/// them itself; an HTTP client of our own has to be told.)
fn http_timeout(var: impl Fn(&str) -> Option<String>) -> Duration {
    [
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ]
    .into_iter()
    .find_map(|name| var(name)?.trim().parse::<u64>().ok())
    .map_or(Duration::from_secs(10), Duration::from_millis)
}

/// Sends crossings' traces, or nothing when tracing is off. Cheap to clone.
#[derive(Clone, Default)]
pub struct Tracing {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

impl fmt::Debug for Tracing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_on() {
            "Tracing(on)"
        } else {
            "Tracing(off)"
        })
    }
}

impl Tracing {
    /// Tracing off.
    pub fn off() -> Self {
        Self::default()
    }

    /// Sets tracing up from the process's `OTEL_*` environment (start-up step 3, spec
    /// §0.6). Must be called inside the Tokio runtime (the exporters' I/O runs on it).
    pub fn from_env() -> anyhow::Result<Self> {
        let var = |name: &str| std::env::var(name).ok();
        match enablement(var)? {
            Enablement::Off => Ok(Self::off()),
            Enablement::On(protocol) => {
                Self::start(protocol, http_timeout(var), var("OTEL_SERVICE_NAME"))
            }
        }
    }

    fn start(
        protocol: Protocol,
        timeout: Duration,
        service_name: Option<String>,
    ) -> anyhow::Result<Self> {
        let exporter = match protocol {
            Protocol::HttpProtobuf => opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(OtlpProtocol::HttpBinary)
                .with_http_client(Http::new(timeout)?)
                .build(),
            Protocol::Grpc => {
                use opentelemetry_otlp::WithTonicConfig as _;
                use opentelemetry_otlp::tonic_types::transport::ClientTlsConfig;
                // Used for https:// endpoints only; the public roots, as for HTTP.
                let tls = ClientTlsConfig::new().with_enabled_roots();
                opentelemetry_otlp::SpanExporter::builder()
                    .with_tonic()
                    .with_protocol(OtlpProtocol::Grpc)
                    .with_tls_config(tls)
                    .build()
            }
        }
        .context("setting up OpenTelemetry tracing from the OTEL_* environment")?;
        let provider = SdkTracerProvider::builder()
            .with_resource(resource(service_name))
            .with_batch_exporter(exporter)
            .build();
        opentelemetry::global::set_text_map_propagator(
            opentelemetry::propagation::TextMapCompositePropagator::new(vec![
                Box::new(opentelemetry_sdk::propagation::TraceContextPropagator::new()),
                Box::new(opentelemetry_sdk::propagation::BaggagePropagator::new()),
            ]),
        );
        tracing::info!(?protocol, "tracing crossings over OTLP");
        Ok(Self::over(provider))
    }

    /// Tracing through `provider`.
    fn over(provider: SdkTracerProvider) -> Self {
        let tracer = provider.tracer_with_scope(
            InstrumentationScope::builder(SERVICE_NAME)
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
        );
        Self {
            inner: Some(Arc::new(Inner { provider, tracer })),
        }
    }

    /// Whether crossings are traced (and so get a `status.traceID`).
    pub fn is_on(&self) -> bool {
        self.inner.is_some()
    }

    /// Sends `trace`: the root span under its remote parent, each step's span under
    /// the root, with the times recorded. The SDK batches and sends in the background
    /// (and applies the sampler); this never waits for the network.
    pub fn emit(&self, trace: &Trace) {
        let Some(inner) = &self.inner else {
            return;
        };
        let remote = SpanContext::new(
            TraceId::from_bytes(trace.ids.trace_id),
            SpanId::from_bytes(trace.ids.parent_span_id),
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        );
        let parent = Context::new().with_remote_span_context(remote);
        let root = inner
            .tracer
            .build_with_context(builder(&trace.root), &parent);
        let under_root = parent.with_span(root);
        for step in &trace.steps {
            let mut span = inner.tracer.build_with_context(builder(step), &under_root);
            if let Some(message) = &step.error {
                span.set_status(Status::error(message.clone()));
            }
            span.end_with_timestamp(SystemTime::from(step.end));
        }
        let root = under_root.span();
        if let Some(message) = &trace.root.error {
            root.set_status(Status::error(message.clone()));
        }
        root.end_with_timestamp(SystemTime::from(trace.root.end));
    }

    /// Sends what is still queued and stops (waits up to the SDK's 5 s).
    pub async fn shutdown(&self) {
        let Some(inner) = &self.inner else {
            return;
        };
        let provider = inner.provider.clone();
        // The SDK blocks while it flushes, and the flush itself needs the runtime.
        match tokio::task::spawn_blocking(move || provider.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "could not flush the last spans"),
            Err(error) => tracing::warn!(%error, "could not flush the last spans"),
        }
    }
}

fn builder(span: &Span) -> SpanBuilder {
    SpanBuilder::from_name(span.name.clone())
        .with_start_time(SystemTime::from(span.start))
        .with_attributes(
            span.attributes
                .iter()
                .map(|(key, value)| KeyValue::new(*key, value.clone())),
        )
}

/// `service.name` = `hecate-controller` and `service.version`, under what
/// `OTEL_RESOURCE_ATTRIBUTES` says, under `OTEL_SERVICE_NAME` (`service_name`).
fn resource(service_name: Option<String>) -> Resource {
    use opentelemetry_sdk::resource::{EnvResourceDetector, TelemetryResourceDetector};
    let mut builder = Resource::builder_empty()
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_attributes([
            KeyValue::new("service.name", SERVICE_NAME),
            KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
        ])
        .with_detector(Box::new(EnvResourceDetector::new()));
    if let Some(name) = service_name.filter(|n| !n.trim().is_empty()) {
        builder = builder.with_attribute(KeyValue::new("service.name", name));
    }
    builder.build()
}

/// The OTLP/HTTP client: the process's reqwest, one TLS stack. The SDK exports from a
/// thread of its own, outside the Tokio runtime; each request runs on the runtime.
#[derive(Debug)]
struct Http {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl Http {
    /// A client whose requests end after `timeout`; must be made inside the runtime.
    fn new(timeout: Duration) -> anyhow::Result<Self> {
        Ok(Self {
            client: hecate_sources::tls::client_builder()
                .timeout(timeout)
                .build()
                .context("an HTTP client for OTLP")?,
            runtime: tokio::runtime::Handle::try_current()
                .context("OTLP over HTTP needs the Tokio runtime")?,
        })
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Http {
    async fn send_bytes(
        &self,
        request: http::Request<bytes::Bytes>,
    ) -> Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError> {
        let client = self.client.clone();
        self.runtime
            .spawn(async move {
                let response = client.execute(reqwest::Request::try_from(request)?).await?;
                let mut answer = http::Response::builder().status(response.status());
                if let Some(headers) = answer.headers_mut() {
                    *headers = response.headers().clone();
                }
                Ok(answer.body(response.bytes().await?)?)
            })
            .await?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    use std::sync::Mutex;

    use jiff::Timestamp;
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::{SpanData, SpanExporter};

    use crate::telemetry::spans::Ids;

    const ON: Enablement = Enablement::On(Protocol::HttpProtobuf);

    /// Keeps what it is asked to export.
    #[derive(Debug, Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<SpanData>>>);

    impl SpanExporter for Recorder {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            self.0.lock().expect("spans").extend(batch);
            Ok(())
        }
    }

    fn span(name: &str, start: i64, end: i64, error: Option<&str>) -> Span {
        let at = |s: i64| Timestamp::from_second(1_800_000_000 + s).expect("a time");
        Span {
            name: name.into(),
            start: at(start),
            end: at(end),
            attributes: vec![("hecate.step.uses", name.into())],
            error: error.map(Into::into),
        }
    }

    #[test]
    fn a_trace_is_sent_as_recorded_under_its_remote_parent() {
        let recorder = Recorder::default();
        let tracing = Tracing::over(
            SdkTracerProvider::builder()
                .with_simple_exporter(recorder.clone())
                .build(),
        );
        let ids = Ids {
            trace_id: [0x4b; 16],
            parent_span_id: [0xa3; 8],
        };
        tracing.emit(&Trace {
            ids,
            root: span("passage dev", 0, 30, Some("steps[1] http: refused")),
            steps: vec![
                span("git-clone", 1, 10, None),
                span("http (notify)", 11, 29, Some("refused")),
            ],
        });
        let spans = recorder.0.lock().expect("spans").clone();
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(names, ["git-clone", "http (notify)", "passage dev"]);
        let root = &spans[2];
        assert_eq!(
            root.span_context.trace_id(),
            TraceId::from_bytes(ids.trace_id)
        );
        assert_eq!(root.parent_span_id, SpanId::from_bytes(ids.parent_span_id));
        assert!(root.parent_span_is_remote && root.span_context.is_sampled());
        assert_eq!(root.status, Status::error("steps[1] http: refused"));
        let second = |s: SystemTime| {
            s.duration_since(SystemTime::UNIX_EPOCH)
                .expect("after 1970")
                .as_secs()
                - 1_800_000_000
        };
        assert_eq!((second(root.start_time), second(root.end_time)), (0, 30));
        for (step, (start, end, status)) in spans[..2]
            .iter()
            .zip([(1, 10, Status::Unset), (11, 29, Status::error("refused"))])
        {
            assert_eq!(step.span_context.trace_id(), root.span_context.trace_id());
            assert_eq!(step.parent_span_id, root.span_context.span_id());
            assert!(!step.parent_span_is_remote);
            assert_eq!(
                (second(step.start_time), second(step.end_time)),
                (start, end)
            );
            assert_eq!(step.status, status);
            assert_eq!(step.attributes[0].key.as_str(), "hecate.step.uses");
        }
        assert_eq!(
            root.instrumentation_scope.name(),
            SERVICE_NAME,
            "the instrumentation scope"
        );
    }

    #[tokio::test]
    async fn an_exporter_is_set_up_for_either_protocol() {
        for protocol in [Protocol::HttpProtobuf, Protocol::Grpc] {
            let tracing = Tracing::start(protocol, Duration::from_secs(1), None)
                .unwrap_or_else(|e| panic!("{protocol:?}: {e:#}"));
            assert!(tracing.is_on());
            // Nothing was sent, so nothing waits on an absent collector.
            tracing.shutdown().await;
        }
    }

    #[test]
    fn tracing_is_off_unless_set_up_and_then_emitting_is_a_no_op() {
        let off = Tracing::off();
        assert!(!off.is_on() && !Tracing::default().is_on());
        off.emit(&Trace {
            ids: Ids {
                trace_id: [1; 16],
                parent_span_id: [1; 8],
            },
            root: span("passage dev", 0, 1, None),
            steps: vec![],
        });
    }
    const GRPC: Enablement = Enablement::On(Protocol::Grpc);

    #[test]
    fn tracing_is_on_exactly_as_the_otel_variables_say() {
        let cases: &[(&[(&str, &str)], Enablement)] = &[
            (&[], Enablement::Off),
            (
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")],
                ON,
            ),
            (
                &[(
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "http://c:4318/v1/traces",
                )],
                ON,
            ),
            (&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")], Enablement::Off),
            (&[("OTEL_TRACES_EXPORTER", "otlp")], ON),
            (&[("OTEL_TRACES_EXPORTER", "OTLP")], ON),
            (&[("OTEL_TRACES_EXPORTER", "console,otlp")], ON),
            // `none` wins over everything.
            (
                &[
                    ("OTEL_TRACES_EXPORTER", "none"),
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
                ],
                Enablement::Off,
            ),
            (&[("OTEL_TRACES_EXPORTER", "otlp,none")], Enablement::Off),
            // Another exporter: the endpoint decides.
            (&[("OTEL_TRACES_EXPORTER", "console")], Enablement::Off),
            (
                &[
                    ("OTEL_TRACES_EXPORTER", "console"),
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
                ],
                ON,
            ),
            (&[("OTEL_TRACES_EXPORTER", "")], Enablement::Off),
            // The protocol: the traces variable first, then the general one.
            (
                &[
                    ("OTEL_TRACES_EXPORTER", "otlp"),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ],
                GRPC,
            ),
            (
                &[
                    ("OTEL_TRACES_EXPORTER", "otlp"),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                    ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
                ],
                ON,
            ),
            (
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317"),
                    ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
                ],
                GRPC,
            ),
            // A protocol nothing uses is not judged.
            (
                &[("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon")],
                Enablement::Off,
            ),
        ];
        for (vars, expected) in cases {
            let var = |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            };
            assert_eq!(enablement(var).as_ref(), Ok(expected), "{vars:?}");
        }
    }

    #[test]
    fn any_other_protocol_is_refused_and_named() {
        let cases = [
            (
                &[
                    ("OTEL_TRACES_EXPORTER", "otlp"),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
                ][..],
                "OTEL_EXPORTER_OTLP_PROTOCOL",
                "http/json",
            ),
            (
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
                    ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "GRPC"),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ][..],
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                "GRPC",
            ),
        ];
        for (vars, variable, value) in cases {
            let var = |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            };
            let error = enablement(var).expect_err("refused");
            assert_eq!(
                error,
                BadProtocol {
                    variable,
                    value: value.into()
                }
            );
            let text = error.to_string();
            assert!(
                text.contains(variable) && text.contains("http/protobuf") && text.contains("grpc"),
                "{text}"
            );
        }
    }

    #[test]
    fn the_http_timeout_is_the_traces_one_then_the_general_one_in_milliseconds() {
        let of = |vars: &[(&str, &str)]| {
            http_timeout(|name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            })
        };
        assert_eq!(of(&[]), Duration::from_secs(10));
        assert_eq!(
            of(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "2500")]),
            Duration::from_millis(2500)
        );
        assert_eq!(
            of(&[
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
                ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700")
            ]),
            Duration::from_millis(700)
        );
        assert_eq!(
            of(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]),
            Duration::from_secs(10)
        );
    }

    #[test]
    fn the_service_is_hecate_controller_unless_otel_service_name_says_otherwise() {
        let name = |resource: &Resource| {
            resource
                .get(&opentelemetry::Key::new("service.name"))
                .map(|v| v.to_string())
        };
        let ours = resource(None);
        assert_eq!(name(&ours).as_deref(), Some(SERVICE_NAME));
        assert_eq!(
            ours.get(&opentelemetry::Key::new("service.version"))
                .map(|v| v.to_string())
                .as_deref(),
            Some(env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(
            name(&resource(Some("promotions".into()))).as_deref(),
            Some("promotions")
        );
        assert_eq!(
            name(&resource(Some(String::new()))).as_deref(),
            Some(SERVICE_NAME)
        );
    }
}
