//! Prometheus metrics (spec controller.md §8.1). The names, labels and buckets are a
//! contract: dashboards and alerts are written against them. Reason codes are never
//! labels (unbounded); phases and health states are (five values each).
//!
//! Beside the spec's, the controller's own health in controller-runtime's shape
//! (DECISION 117): reconciles and their duration per loop (`gate`, `passage`,
//! `beacon`), failures per loop and kind of error (a fixed set each loop's `Error::kind`
//! names), and whether this replica leads.

use std::sync::Mutex;

use hecate_types::Health;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// `namespace`, `gate`, `outcome` (a terminal phase).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    namespace: String,
    gate: String,
    outcome: String,
}

/// `namespace`, `gate`, `step` (its `uses`), `outcome` (the step's phase).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StepOutcome {
    namespace: String,
    gate: String,
    step: String,
    outcome: String,
}

/// `namespace`, `gate`, `target` (one of the Gate's targets: at most 100 a Gate),
/// `outcome` (how its crossing ended: `Succeeded`, `Failed`, `Aborted`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TargetOutcome {
    namespace: String,
    gate: String,
    target: String,
    outcome: String,
}

/// `namespace` and `notifier` (the Notifier), `kind` (the notice's), `outcome`
/// (`sent`, `retrying`, `failed`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NotificationLabels {
    namespace: String,
    notifier: String,
    kind: String,
    outcome: String,
}

/// `namespace`, `gate`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GateLabels {
    namespace: String,
    gate: String,
}

/// `namespace`, `gate`, `status` (a health state).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HealthLabels {
    namespace: String,
    gate: String,
    status: String,
}

/// `method` (HTTP), `watch` (`true` for watch streams), `verb` (the API server's:
/// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`)
/// and `resource` (its plural, with the subresource: `gates/status`; `discovery` for
/// the API's own description). Bounded: the kinds a cluster serves, never a name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    watch: bool,
    verb: String,
    resource: String,
}

/// `controller`: which reconcile loop.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LoopLabels {
    controller: &'static str,
}

/// `controller`, `error` (the kind of failure: a fixed set per loop, never a message).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    controller: &'static str,
    error: &'static str,
}

/// One of the controller's three reconcile loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loop {
    /// Gates: decide and open crossings.
    Gate,
    /// Passages: run steps.
    Passage,
    /// Beacons: poll sources, emit Bundles.
    Beacon,
}

impl Loop {
    /// The `controller` label.
    fn label(self) -> &'static str {
        match self {
            Self::Gate => "gate",
            Self::Passage => "passage",
            Self::Beacon => "beacon",
        }
    }
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Every metric the controller exports, and the registry that encodes them.
pub struct Metrics {
    registry: Mutex<Registry>,
    passages: Family<Outcome, Counter>,
    passage_duration: HistogramFamily<Outcome>,
    step_duration: HistogramFamily<StepOutcome>,
    targets: Family<TargetOutcome, Counter>,
    notifications: Family<NotificationLabels, Counter>,
    target_duration: HistogramFamily<TargetOutcome>,
    lead_time: HistogramFamily<GateLabels>,
    degraded: HistogramFamily<GateLabels>,
    gate_health: Family<HealthLabels, Gauge>,
    requests: Family<RequestLabels, Counter>,
    reconciles: Family<LoopLabels, Counter>,
    reconcile_failures: Family<FailureLabels, Counter>,
    reconcile_duration: HistogramFamily<LoopLabels>,
    leader: Gauge,
}

/// A reconcile takes milliseconds to a step's minutes: 5 ms × 3ⁿ, ten buckets (~100 s).
fn reconcile_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 3.0, 10))
}

/// Crossings take seconds to hours: 1 s × 2.5ⁿ, twelve buckets (up to ~4 h).
fn crossing_buckets() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.5, 12))
}

/// Lead times and outages take minutes to weeks: 60 s × 3ⁿ, eleven buckets (~41 days).
fn long_buckets() -> Histogram {
    Histogram::new(exponential_buckets(60.0, 3.0, 11))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// The metrics, registered and at zero.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let passages = Family::<Outcome, Counter>::default();
        let passage_duration: HistogramFamily<Outcome> =
            Family::new_with_constructor(crossing_buckets);
        let step_duration: HistogramFamily<StepOutcome> =
            Family::new_with_constructor(crossing_buckets);
        let targets = Family::<TargetOutcome, Counter>::default();
        let notifications = Family::<NotificationLabels, Counter>::default();
        let target_duration: HistogramFamily<TargetOutcome> =
            Family::new_with_constructor(crossing_buckets);
        let lead_time: HistogramFamily<GateLabels> = Family::new_with_constructor(long_buckets);
        let degraded: HistogramFamily<GateLabels> = Family::new_with_constructor(long_buckets);
        let gate_health = Family::<HealthLabels, Gauge>::default();
        let requests = Family::<RequestLabels, Counter>::default();
        let reconciles = Family::<LoopLabels, Counter>::default();
        let reconcile_failures = Family::<FailureLabels, Counter>::default();
        let reconcile_duration: HistogramFamily<LoopLabels> =
            Family::new_with_constructor(reconcile_buckets);
        let leader = Gauge::default();
        // prometheus-client appends `_total` to counters itself.
        registry.register(
            "hecate_passages",
            "Finished Passages by Gate and outcome",
            passages.clone(),
        );
        registry.register(
            "hecate_passage_duration_seconds",
            "How long finished Passages took, start to finish",
            passage_duration.clone(),
        );
        registry.register(
            "hecate_step_duration_seconds",
            "How long each finished step took",
            step_duration.clone(),
        );
        registry.register(
            "hecate_target_crossings",
            "Finished crossings of a Gate's targets, by target and outcome (fan-out)",
            targets.clone(),
        );
        registry.register(
            "hecate_notifications",
            "Notices tried, by Notifier, kind and outcome (sent, retrying, failed)",
            notifications.clone(),
        );
        registry.register(
            "hecate_target_crossing_duration_seconds",
            "How long each target's crossing took, its start to its end, verification included",
            target_duration.clone(),
        );
        registry.register(
            "hecate_bundle_lead_time_seconds",
            "From a Bundle's creation to its successful crossing of a Gate",
            lead_time.clone(),
        );
        registry.register(
            "hecate_gate_degraded_seconds",
            "How long a Gate's health stayed Degraded, observed when it recovers",
            degraded.clone(),
        );
        registry.register(
            "hecate_gate_health",
            "A Gate's health: 1 for its current state, 0 for the others",
            gate_health.clone(),
        );
        registry.register(
            "hecate_controller_kube_requests",
            "Requests this controller sent to the Kubernetes API server (what idling costs)",
            requests.clone(),
        );
        registry.register(
            "hecate_controller_reconciles",
            "Reconciles run, by loop (gate, passage, beacon)",
            reconciles.clone(),
        );
        registry.register(
            "hecate_controller_reconcile_failures",
            "Reconciles that failed and will be retried, by loop and kind of error",
            reconcile_failures.clone(),
        );
        registry.register(
            "hecate_controller_reconcile_duration_seconds",
            "How long one reconcile took, by loop",
            reconcile_duration.clone(),
        );
        registry.register(
            "hecate_controller_leader",
            "1 while this replica runs the controllers (leads, or runs without election)",
            leader.clone(),
        );
        Self {
            registry: Mutex::new(registry),
            passages,
            passage_duration,
            step_duration,
            targets,
            notifications,
            target_duration,
            lead_time,
            degraded,
            gate_health,
            requests,
            reconciles,
            reconcile_failures,
            reconcile_duration,
            leader,
        }
    }

    /// Runs `reconcile`, one of `of`'s, counting it and timing it (a failure is
    /// counted by the loop's error policy, which knows its kind: [`Self::count_failure`]).
    pub async fn reconcile<T>(&self, of: Loop, reconcile: impl Future<Output = T>) -> T {
        let started = std::time::Instant::now();
        let outcome = reconcile.await;
        let labels = LoopLabels {
            controller: of.label(),
        };
        self.reconciles.get_or_create(&labels).inc();
        self.reconcile_duration
            .get_or_create(&labels)
            .observe(started.elapsed().as_secs_f64());
        outcome
    }

    /// Counts one failed reconcile of `of`, by the kind of its error.
    pub fn count_failure(&self, of: Loop, error: &'static str) {
        self.reconcile_failures
            .get_or_create(&FailureLabels {
                controller: of.label(),
                error,
            })
            .inc();
    }

    /// Whether this replica runs the controllers now.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Counts one request to the API server, by verb and resource.
    pub fn count_request<B>(&self, request: &http::Request<B>) {
        let watch = request
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
        let (verb, resource) = verb_and_resource(request.method(), request.uri().path(), watch);
        self.requests
            .get_or_create(&RequestLabels {
                method: request.method().as_str().into(),
                watch,
                verb: verb.into(),
                resource,
            })
            .inc();
    }

    /// Publishes a Gate's health: its state at 1, the four others at 0.
    pub fn set_gate_health(&self, namespace: &str, gate: &str, health: Health) {
        for state in Health::ALL {
            self.gate_health
                .get_or_create(&HealthLabels {
                    namespace: namespace.into(),
                    gate: gate.into(),
                    status: state.as_str().into(),
                })
                .set(i64::from(state == health));
        }
    }

    /// Forgets a deleted Gate's health series.
    pub fn forget_gate(&self, namespace: &str, gate: &str) {
        for state in Health::ALL {
            self.gate_health.remove(&HealthLabels {
                namespace: namespace.into(),
                gate: gate.into(),
                status: state.as_str().into(),
            });
        }
    }

    /// Records how long a Gate was Degraded, when it stops being so.
    pub fn observe_degraded(&self, namespace: &str, gate: &str, seconds: f64) {
        self.degraded
            .get_or_create(&GateLabels {
                namespace: namespace.into(),
                gate: gate.into(),
            })
            .observe(seconds);
    }

    /// Records a finished Passage: its outcome and, when known, how long it took.
    pub fn observe_passage(
        &self,
        namespace: &str,
        gate: &str,
        outcome: &str,
        seconds: Option<f64>,
    ) {
        let labels = Outcome {
            namespace: namespace.into(),
            gate: gate.into(),
            outcome: outcome.into(),
        };
        self.passages.get_or_create(&labels).inc();
        if let Some(seconds) = seconds {
            self.passage_duration
                .get_or_create(&labels)
                .observe(seconds);
        }
    }

    /// Records one finished step's duration.
    pub fn observe_step(
        &self,
        namespace: &str,
        gate: &str,
        step: &str,
        outcome: &str,
        seconds: f64,
    ) {
        self.step_duration
            .get_or_create(&StepOutcome {
                namespace: namespace.into(),
                gate: gate.into(),
                step: step.into(),
                outcome: outcome.into(),
            })
            .observe(seconds);
    }

    /// Records one target's finished crossing: its outcome and, when known, how long
    /// it took.
    pub fn observe_target(
        &self,
        namespace: &str,
        gate: &str,
        target: &str,
        outcome: &str,
        seconds: Option<f64>,
    ) {
        let labels = TargetOutcome {
            namespace: namespace.into(),
            gate: gate.into(),
            target: target.into(),
            outcome: outcome.into(),
        };
        self.targets.get_or_create(&labels).inc();
        if let Some(seconds) = seconds {
            self.target_duration.get_or_create(&labels).observe(seconds);
        }
    }

    /// Counts one try of a notice by a Notifier, by what became of it.
    pub fn count_notification(&self, namespace: &str, notifier: &str, kind: &str, outcome: &str) {
        self.notifications
            .get_or_create(&NotificationLabels {
                namespace: namespace.into(),
                notifier: notifier.into(),
                kind: kind.into(),
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Records a successful crossing's lead time (Bundle created → crossing finished).
    pub fn observe_lead_time(&self, namespace: &str, gate: &str, seconds: f64) {
        self.lead_time
            .get_or_create(&GateLabels {
                namespace: namespace.into(),
                gate: gate.into(),
            })
            .observe(seconds);
    }

    /// The metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        let registry = self
            .registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Encoding into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
        text
    }
}

/// The API server's verb for a request and the resource it names (`plural` or
/// `plural/subresource`; `discovery` when it names none), from its method and path:
/// `/api/v1[/namespaces/<ns>]/<plural>[/<name>[/<sub>]]`, or the same under
/// `/apis/<group>/<version>`.
fn verb_and_resource(method: &http::Method, path: &str, watch: bool) -> (&'static str, String) {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest = match segments.as_slice() {
        ["api", _version, rest @ ..] | ["apis", _, _version, rest @ ..] => rest,
        _ => &[],
    };
    let rest = match rest {
        // `/api/v1/namespaces/<ns>/...`, but not `/api/v1/namespaces[/<ns>]` itself.
        ["namespaces", _, resource, more @ ..] => {
            let mut named = vec![*resource];
            named.extend_from_slice(more);
            named
        }
        _ => rest.to_vec(),
    };
    let (resource, named) = match rest.as_slice() {
        [] => ("discovery".to_string(), false),
        [plural] => ((*plural).to_string(), false),
        [plural, _name] => ((*plural).to_string(), true),
        [plural, _name, sub, ..] => (format!("{plural}/{sub}"), true),
    };
    let verb = match (method.as_str(), named) {
        _ if watch => "watch",
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "other",
    };
    (verb, resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chart's Grafana dashboard asks only for metrics this controller exports,
    /// grouped by labels they carry: the names are a contract (spec §8.1).
    #[test]
    fn the_charts_dashboard_queries_what_the_controller_exports() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../charts/hecate/files/dashboards/hecate-delivery.json"
        );
        let dashboard: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        // A family is exported once it has a series: one of each, as a crossing and a
        // health change leave them.
        let metrics = Metrics::new();
        metrics.observe_passage("shop", "production", "Succeeded", Some(30.0));
        metrics.observe_lead_time("shop", "production", 600.0);
        metrics.observe_degraded("shop", "production", 60.0);
        metrics.set_gate_health("shop", "production", Health::Healthy);
        metrics.observe_target("shop", "production", "eu-1", "Failed", Some(12.0));
        let exported = metrics.encode();
        let mut queried = std::collections::BTreeSet::new();
        for panel in dashboard["panels"].as_array().unwrap() {
            for target in panel["targets"].as_array().unwrap() {
                let expr = target["expr"].as_str().unwrap();
                for (i, _) in expr.match_indices("hecate_") {
                    let name: String = expr[i..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    let family = ["_bucket", "_total"]
                        .iter()
                        .find_map(|suffix| name.strip_suffix(suffix))
                        .unwrap_or(&name)
                        .to_string();
                    assert!(
                        exported.contains(&format!("# TYPE {family} ")),
                        "{name} in {expr:?} is not exported"
                    );
                    queried.insert(family);
                }
                for (i, _) in expr.match_indices("by (") {
                    let labels = &expr[i + 4..i + 4 + expr[i + 4..].find(')').unwrap()];
                    for label in labels.split(',').map(str::trim) {
                        assert!(
                            ["le", "namespace", "gate", "outcome", "status", "target"]
                                .contains(&label),
                            "{label} in {expr:?} is no label of ours"
                        );
                    }
                }
            }
        }
        assert_eq!(
            queried.into_iter().collect::<Vec<_>>(),
            [
                "hecate_bundle_lead_time_seconds",
                "hecate_gate_degraded_seconds",
                "hecate_gate_health",
                "hecate_passage_duration_seconds",
                "hecate_passages",
                "hecate_target_crossings",
            ]
        );
    }

    #[test]
    fn requests_are_counted_by_verb_and_resource() {
        let metrics = Metrics::new();
        let send = |method: &str, uri: &str| {
            let request = http::Request::builder()
                .method(method)
                .uri(uri)
                .body(())
                .unwrap();
            metrics.count_request(&request);
        };
        send("GET", "/apis/hecate.dev/v1alpha1/namespaces/shop/bundles?");
        send(
            "GET",
            "/apis/hecate.dev/v1alpha1/namespaces/shop/bundles/b-1",
        );
        send(
            "PUT",
            "/apis/hecate.dev/v1alpha1/namespaces/shop/gates/dev/status",
        );
        send(
            "PUT",
            "/apis/hecate.dev/v1alpha1/namespaces/shop/gates/dev/status",
        );
        send(
            "GET",
            "/apis/hecate.dev/v1alpha1/passages?watch=true&resourceVersion=1",
        );
        send("POST", "/api/v1/namespaces/shop/events");
        send(
            "PATCH",
            "/apis/events.k8s.io/v1/namespaces/shop/events/dev.1",
        );
        send("GET", "/api/v1/namespaces/shop");
        send(
            "DELETE",
            "/apis/hecate.dev/v1alpha1/namespaces/shop/passages/dev-1",
        );
        send("GET", "/apis/hecate.dev/v1alpha1");
        let text = metrics.encode();
        for line in [
            r#"{method="GET",watch="false",verb="list",resource="bundles"} 1"#,
            r#"{method="GET",watch="false",verb="get",resource="bundles"} 1"#,
            r#"{method="PUT",watch="false",verb="update",resource="gates/status"} 2"#,
            r#"{method="GET",watch="true",verb="watch",resource="passages"} 1"#,
            r#"{method="POST",watch="false",verb="create",resource="events"} 1"#,
            r#"{method="PATCH",watch="false",verb="patch",resource="events"} 1"#,
            r#"{method="GET",watch="false",verb="get",resource="namespaces"} 1"#,
            r#"{method="DELETE",watch="false",verb="delete",resource="passages"} 1"#,
            r#"{method="GET",watch="false",verb="list",resource="discovery"} 1"#,
        ] {
            let line = format!("hecate_controller_kube_requests_total{line}");
            assert!(text.contains(&line), "{line}\nnot in\n{text}");
        }
    }

    /// The `le` bounds of `metric`'s buckets, as written.
    fn bounds(text: &str, metric: &str) -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(&format!("{metric}_bucket{{")))
            .filter_map(|l| l.split("le=\"").nth(1)?.split('"').next())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn names_labels_and_buckets_are_the_contract() {
        let metrics = Metrics::new();
        metrics.observe_passage("shop", "dev", "Succeeded", Some(42.0));
        metrics.observe_step("shop", "dev", "git-push", "Succeeded", 3.0);
        metrics.observe_lead_time("shop", "dev", 600.0);
        metrics.observe_degraded("shop", "dev", 1800.0);
        metrics.set_gate_health("shop", "dev", Health::Degraded);
        let text = metrics.encode();
        for line in [
            r#"hecate_passages_total{namespace="shop",gate="dev",outcome="Succeeded"} 1"#,
            r#"hecate_passage_duration_seconds_count{namespace="shop",gate="dev",outcome="Succeeded"} 1"#,
            r#"hecate_step_duration_seconds_count{namespace="shop",gate="dev",step="git-push",outcome="Succeeded"} 1"#,
            r#"hecate_bundle_lead_time_seconds_count{namespace="shop",gate="dev"} 1"#,
            r#"hecate_gate_degraded_seconds_sum{namespace="shop",gate="dev"} 1800.0"#,
            r#"hecate_gate_health{namespace="shop",gate="dev",status="Degraded"} 1"#,
            r#"hecate_gate_health{namespace="shop",gate="dev",status="Healthy"} 0"#,
        ] {
            assert!(text.contains(line), "{line}\nnot in\n{text}");
        }
        let crossing: Vec<String> = (0..12)
            .map(|i| format!("{:?}", 2.5f64.powi(i)))
            .chain(["+Inf".to_string()])
            .collect();
        assert_eq!(bounds(&text, "hecate_passage_duration_seconds"), crossing);
        assert_eq!(bounds(&text, "hecate_step_duration_seconds"), crossing);
        let long: Vec<String> = (0..11)
            .map(|i| format!("{:?}", 60.0 * 3f64.powi(i)))
            .chain(["+Inf".to_string()])
            .collect();
        assert_eq!(bounds(&text, "hecate_bundle_lead_time_seconds"), long);
        assert_eq!(bounds(&text, "hecate_gate_degraded_seconds"), long);
    }

    #[tokio::test]
    async fn reconciles_are_counted_and_timed_by_loop_and_failures_by_kind() {
        let metrics = Metrics::new();
        assert!(metrics.encode().contains("\nhecate_controller_leader 0\n"));
        metrics.set_leader(true);
        let answer = metrics.reconcile(Loop::Gate, async { 7 }).await;
        assert_eq!(answer, 7, "the reconcile's own answer comes back");
        metrics.reconcile(Loop::Gate, async {}).await;
        metrics.reconcile(Loop::Beacon, async {}).await;
        metrics.count_failure(Loop::Passage, "transport");
        let text = metrics.encode();
        for line in [
            "\nhecate_controller_leader 1\n",
            r#"hecate_controller_reconciles_total{controller="gate"} 2"#,
            r#"hecate_controller_reconciles_total{controller="beacon"} 1"#,
            r#"hecate_controller_reconcile_duration_seconds_count{controller="gate"} 2"#,
            r#"hecate_controller_reconcile_failures_total{controller="passage",error="transport"} 1"#,
        ] {
            assert!(text.contains(line), "{line}\nnot in\n{text}");
        }
        let buckets: Vec<String> = (0..10)
            .map(|i| format!("{:?}", 0.005 * 3f64.powi(i)))
            .chain(["+Inf".to_string()])
            .collect();
        // One series per loop, each with the same buckets.
        let all = bounds(&text, "hecate_controller_reconcile_duration_seconds");
        assert_eq!(all.len(), 2 * buckets.len(), "{all:?}");
        assert_eq!(all[..buckets.len()], buckets);
    }

    #[test]
    fn a_deleted_gate_leaves_no_health_series() {
        let metrics = Metrics::new();
        metrics.set_gate_health("shop", "dev", Health::Healthy);
        metrics.forget_gate("shop", "dev");
        assert!(!metrics.encode().contains("gate=\"dev\""));
    }
}
