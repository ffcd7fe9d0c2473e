//! Prometheus metrics: requests by route and status, latency, and how often the
//! TokenReview and SubjectAccessReview caches answered.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Every label value comes from a fixed set, never from the client: the route is the
/// table's template (or `unmatched`), the method one of [`method_label`]'s, the status
/// one the server answered. A client choosing labels could grow `/metrics` (and the
/// server's memory) without bound.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: &'static str,
    status: u16,
}

/// The method as a label: the standard methods by name, any other `other`.
pub(crate) fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    cache: &'static str,
    result: &'static str,
}

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    cache: Family<CacheLabels, Counter<u64, AtomicU64>>,
    watch_streams: Gauge,
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::with_prefix("hecate_api");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([
                0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ])
        });
        let cache = Family::<CacheLabels, Counter<u64, AtomicU64>>::default();
        let watch_streams = Gauge::default();
        registry.register(
            "requests",
            "HTTP requests by route, method and status",
            requests.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "HTTP request latency by route",
            latency.clone(),
        );
        registry.register(
            "auth_cache",
            "TokenReview and SubjectAccessReview cache lookups",
            cache.clone(),
        );
        registry.register(
            "watch_streams",
            "Open server-sent event streams",
            watch_streams.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            cache,
            watch_streams,
        }
    }

    pub(crate) fn request(
        &self,
        route: &str,
        method: &axum::http::Method,
        status: u16,
        seconds: f64,
    ) {
        let labels = RequestLabels {
            route: route.into(),
            method: method_label(method),
            status,
        };
        self.requests.get_or_create(&labels).inc();
        self.latency
            .get_or_create(&RouteLabels {
                route: route.into(),
            })
            .observe(seconds);
    }

    pub(crate) fn token_cache(&self, hit: bool) {
        self.cache
            .get_or_create(&CacheLabels {
                cache: "token_review",
                result: if hit { "hit" } else { "miss" },
            })
            .inc();
    }

    pub(crate) fn access_cache(&self, hit: bool) {
        self.cache
            .get_or_create(&CacheLabels {
                cache: "access_review",
                result: if hit { "hit" } else { "miss" },
            })
            .inc();
    }

    /// One more open watch stream, until the guard is dropped.
    pub(crate) fn watch_stream(&self) -> StreamGuard {
        self.watch_streams.inc();
        StreamGuard(self.watch_streams.clone())
    }

    /// How many watch streams are open.
    pub fn open_watch_streams(&self) -> i64 {
        self.watch_streams.get()
    }

    /// The metrics in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// Counts an open stream while it lives.
pub(crate) struct StreamGuard(Gauge);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}
