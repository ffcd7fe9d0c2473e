//! The Flux objects a Gate depends on (ops spec §10.3): which ones its own `watch`
//! names, what each one's status says, and whether an operation may touch one.
//!
//! Only `spec.watch` entries with `uses: flux` and a `with` count; a `with` that does
//! not decode is skipped. An object of a connected cluster (`clusterRef`) is listed as
//! the controller last assessed it — its verdict in the Gate's health record, read
//! with the Gate ([`recorded`]) — and never operated: the people asking have no
//! credentials there, and the controller's are not lent to them. An object in another
//! namespace is listed but never read nor operated ([`Watched::not_read`]): whoever
//! asks about a Gate was authorised in the Gate's namespace, and the servers read with
//! their own identity, so reading it would show them what they may not see — the
//! controller refuses such references too (`--no-cross-namespace-refs`, on by
//! default). Pure: the shell
//! (`hecate_ops::Ops::flux_resources`, `hecate_ops::Ops::set_flux_suspend`,
//! `hecate_ops::Ops::reconcile_flux`) reads and patches.

use std::collections::BTreeMap;

use hecate_types::{Gate, Health};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;
use serde::Deserialize;
use serde_json::Value;

use crate::model::FluxResource;
use crate::rules::flux;
use crate::rules::refusal::{Refusal, RefusalCode};

/// The `uses` of a Gate's Flux health check.
pub const USES: &str = "flux";

/// How long a failing object may stay failing before it counts as `Degraded`, when the
/// Gate's check does not say (the controller's default too).
pub const DEFAULT_FAIL_AFTER: SignedDuration = SignedDuration::from_mins(10);

/// One Flux object a Gate's own watch names, with its defaults applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watched {
    /// The kind, e.g. `Kustomization`.
    pub kind: String,
    /// `group/version`, or why it is not known (an unknown kind without `apiVersion`).
    pub api_version: Result<String, String>,
    /// The namespace: the resource's own, else the Gate's.
    pub namespace: String,
    /// The name.
    pub name: String,
    /// The revision the check waits for, if any.
    pub expected_revision: Option<String>,
    /// How long the check lets it fail before it is `Degraded`.
    pub fail_after: SignedDuration,
    /// Why people are not shown it, when it lies outside the Gate's namespace: it is
    /// never read for them, nor operated, on any surface (issue 30, item 8).
    pub not_read: Option<String>,
    /// The connected cluster it is in ([`flux::cluster_name`]); empty: the Gate's own.
    pub cluster: String,
}

impl Watched {
    /// Whether it is in a connected cluster rather than the Gate's own.
    pub fn is_remote(&self) -> bool {
        !self.cluster.is_empty()
    }

    /// Its key in the Gate's health record ([`flux::object_key`]).
    pub fn key(&self) -> String {
        flux::object_key(&self.kind, &self.namespace, &self.name, &self.cluster)
    }
}

#[derive(Deserialize, Default)]
struct ClusterRef {
    #[serde(default)]
    name: String,
    #[serde(default)]
    key: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Config {
    #[serde(default)]
    resources: Vec<Reference>,
    #[serde(default)]
    expected_revision: Option<String>,
    #[serde(default)]
    fail_after: Option<String>,
    #[serde(default)]
    cluster_ref: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Reference {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
}

/// The Flux objects `gate`'s own watch names in its cluster: each once (by kind,
/// namespace and name), sorted by kind then name.
pub fn watched(gate: &Gate) -> Vec<Watched> {
    let gate_namespace = gate.namespace().unwrap_or_default();
    let mut found: BTreeMap<(String, String, String, String), Watched> = BTreeMap::new();
    let configs = gate
        .spec
        .watch
        .iter()
        .filter(|check| check.uses == USES)
        .filter_map(|check| check.with.as_ref())
        .filter_map(|with| Config::deserialize(with).ok());
    for config in configs {
        // A clusterRef that names no Secret reaches nothing: the controller says so.
        let cluster = match config.cluster_ref.as_ref().filter(|r| !r.is_null()) {
            None => String::new(),
            Some(reference) => match ClusterRef::deserialize(reference) {
                Ok(r) if !r.name.trim().is_empty() => {
                    flux::cluster_name(r.name.trim(), r.key.as_deref().map(str::trim))
                }
                _ => continue,
            },
        };
        let expected_revision = config
            .expected_revision
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_string);
        let fail_after = config
            .fail_after
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .and_then(|t| hecate_types::duration::parse(t).ok())
            .unwrap_or(DEFAULT_FAIL_AFTER);
        for reference in config.resources {
            let (kind, name) = (reference.kind.trim(), reference.name.trim());
            if kind.is_empty() || name.is_empty() {
                continue;
            }
            let namespace = match reference.namespace.trim() {
                "" => gate_namespace.clone(),
                given => given.to_string(),
            };
            let api_version = match reference.api_version.trim() {
                "" => flux::default_api_version(kind)
                    .map(str::to_string)
                    .ok_or_else(|| {
                        format!(
                            "no default apiVersion for kind {kind:?}; set apiVersion explicitly"
                        )
                    }),
                given => Ok(given.to_string()),
            };
            let not_read = (namespace != gate_namespace).then(|| {
                format!(
                    "in namespace {namespace}, outside Gate {}'s namespace {gate_namespace}: not read",
                    gate.name_any()
                )
            });
            let key = (
                kind.to_string(),
                name.to_string(),
                namespace.clone(),
                cluster.clone(),
            );
            found.entry(key).or_insert_with(|| Watched {
                kind: kind.to_string(),
                api_version,
                namespace,
                name: name.to_string(),
                expected_revision: expected_revision.clone(),
                fail_after,
                not_read,
                cluster: cluster.clone(),
            });
        }
    }
    found.into_values().collect()
}

/// What an attempt to read one watched object found.
#[derive(Clone, Debug)]
pub enum Read {
    /// The object, as JSON.
    Found(Value),
    /// The API server has no such object.
    Missing,
    /// It could not be read: why.
    Failed(String),
    /// It was not asked for ([`Watched::not_read`]).
    NotAsked,
    /// A connected cluster's object, as the controller last assessed it ([`recorded`]).
    Recorded {
        /// Its health then.
        health: Health,
        /// The revision it had applied.
        revision: String,
        /// What was wrong, in the controller's words.
        issues: Vec<String>,
    },
    /// A connected cluster's object the controller has not assessed yet.
    NotYetAssessed,
}

/// `watched` (of a connected cluster) as `gate`'s health record holds it: its verdict
/// in `details.flux`, and the issues that name it.
pub fn recorded(gate: &Gate, watched: &Watched) -> Read {
    let Some(report) = gate.status.as_ref().and_then(|s| s.health.as_ref()) else {
        return Read::NotYetAssessed;
    };
    let key = watched.key();
    let Some(verdict) = report
        .details
        .as_ref()
        .and_then(|d| d.get(USES))
        .and_then(|flux| flux.get(&key))
    else {
        return Read::NotYetAssessed;
    };
    let health = verdict
        .get("health")
        .and_then(|h| Health::deserialize(h).ok())
        .unwrap_or(Health::Unknown);
    let revision = verdict
        .get("revision")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let prefix = format!("{key}: ");
    let issues = report
        .issues
        .iter()
        .filter_map(|issue| issue.strip_prefix(&prefix))
        .map(str::to_string)
        .collect();
    Read::Recorded {
        health,
        revision,
        issues,
    }
}

/// Whether the shell may read `watched` for people at all (see [`Watched::not_read`]).
pub fn may_read(watched: &Watched) -> bool {
    watched.not_read.is_none()
}

/// How `watched` stands, from what reading it found, judged by the shared Flux
/// evaluator ([`flux::evaluate`]; a suspended object is `Unknown`).
pub fn describe(watched: &Watched, read: Read, now: Timestamp) -> FluxResource {
    let mut resource = FluxResource {
        kind: watched.kind.clone(),
        name: watched.name.clone(),
        namespace: watched.namespace.clone(),
        suspended: false,
        health: Health::Unknown,
        detail: String::new(),
        revision: String::new(),
        last_handled: String::new(),
        missing: false,
        cluster: watched.cluster.clone(),
        // What [`target`] lets an operation reach: the Gate's own namespace on its own
        // cluster, a kind it can name — and, below, there.
        operable: may_read(watched) && !watched.is_remote() && watched.api_version.is_ok(),
    };
    if let Some(why) = &watched.not_read {
        // Whatever was read, nothing of it is shown.
        resource.detail.clone_from(why);
        return resource;
    }
    if let Err(problem) = &watched.api_version {
        resource.detail.clone_from(problem);
        return resource;
    }
    let object = match read {
        Read::Found(object) => object,
        Read::Missing => {
            resource.missing = true;
            resource.operable = false;
            resource.detail = "not in the cluster".into();
            return resource;
        }
        Read::Failed(problem) => {
            resource.detail = problem;
            return resource;
        }
        Read::NotAsked => {
            resource.detail = "not read".into();
            return resource;
        }
        Read::Recorded {
            health,
            revision,
            issues,
        } => {
            resource.health = health;
            resource.revision = revision;
            resource.detail = issues.join(" · ");
            return resource;
        }
        Read::NotYetAssessed => {
            resource.detail = "not assessed by the controller yet".into();
            return resource;
        }
    };
    resource.suspended = object.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    resource.last_handled = object
        .pointer("/status/lastHandledReconcileAt")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let evaluation = flux::evaluate(
        Some(&object),
        watched.expected_revision.as_deref(),
        watched.fail_after,
        now,
    );
    resource.health = evaluation.health;
    resource.revision = evaluation.revision.unwrap_or_default();
    resource.detail = evaluation.issues.join(" · ");
    resource
}

/// Whether `kind` can be a Kubernetes kind at all: a plain identifier of letters and
/// digits, 1 to 63 long (e.g. `Kustomization`). Every surface asks before it operates,
/// so a malformed kind is bad input rather than an object the Gate does not watch.
pub fn is_kind(kind: &str) -> bool {
    (1..=63).contains(&kind.len()) && kind.chars().all(|c| c.is_ascii_alphanumeric())
}

/// The watched object an operation on `gate` may touch: one its own watch names with
/// exactly this kind and name, in the Gate's own namespace. Anything else is refused —
/// Hecate operates what the Gate depends on, not whatever Flux runs.
pub fn target(gate: &Gate, kind: &str, name: &str) -> Result<Watched, Refusal> {
    let all = watched(gate);
    let named = |w: &&Watched| w.kind == kind && w.name == name;
    let remote = all.iter().filter(named).find(|w| w.is_remote());
    let local = all.iter().filter(named).any(|w| !w.is_remote());
    if let (Some(remote), false) = (remote, local) {
        return Err(Refusal::new(
            RefusalCode::NotWatched,
            format!(
                "{kind} {name:?} is on cluster {}: Hecate operates the Flux objects of Gate {}'s own cluster only — use flux there",
                remote.cluster,
                gate.name_any()
            ),
        ));
    }
    all.into_iter()
        .find(|w| w.kind == kind && w.name == name && may_read(w) && !w.is_remote())
        .ok_or_else(|| {
            Refusal::new(
                RefusalCode::NotWatched,
                format!(
                    "{kind} {name:?} is not watched by Gate {} — this only operates on what the Gate depends on",
                    gate.name_any()
                ),
            )
        })
}

/// The value a reconcile request writes to `reconcile.fluxcd.io/requestedAt`: `now` in
/// UTC, RFC 3339 with as many fractional digits as it has (trailing zeros trimmed,
/// none for a whole second) — Go's `RFC3339Nano`, which Flux echoes back in
/// `status.lastHandledReconcileAt`.
pub fn reconcile_stamp(now: Timestamp) -> String {
    now.to_string()
}

#[cfg(test)]
mod tests {
    use hecate_types::{GateSpec, HealthCheck};
    use serde_json::json;

    use super::*;

    #[test]
    fn a_kind_is_a_plain_identifier() {
        for kind in ["Kustomization", "HelmRelease", "OCIRepository", "K8s1"] {
            assert!(is_kind(kind), "{kind}");
        }
        let long = "K".repeat(64);
        for kind in [
            "",
            "Kustomization/podinfo",
            "helm-release",
            "Kind ",
            "Ünicode",
            &long,
        ] {
            assert!(!is_kind(kind), "{kind:?}");
        }
    }

    fn gate(watch: Vec<Value>) -> Gate {
        let mut gate = Gate::new(
            "production",
            GateSpec {
                watch: watch
                    .into_iter()
                    .map(|with| HealthCheck {
                        uses: USES.into(),
                        with: Some(with),
                    })
                    .collect(),
                ..GateSpec::default()
            },
        );
        gate.metadata.namespace = Some("acme".into());
        gate
    }

    fn keys(watched: &[Watched]) -> Vec<String> {
        watched.iter().map(Watched::key).collect()
    }

    fn now() -> Timestamp {
        "2026-08-11T12:00:00Z".parse().expect("a time")
    }

    #[test]
    fn flux_checks_count_each_object_once_per_cluster_sorted_by_kind_then_name() {
        let mut g = gate(vec![
            json!({"resources": [
                {"kind": "Kustomization", "name": "web"},
                {"kind": "HelmRelease", "name": "db", "namespace": "data"},
                {"kind": "Kustomization", "name": "api"},
            ]}),
            json!({"resources": [{"kind": "Kustomization", "name": "api"}]}),
            json!({"resources": [{"kind": "Kustomization", "name": "far"}], "clusterRef": {"name": "elsewhere"}}),
            json!({"resources": [{"kind": "Kustomization", "name": "nowhere"}], "clusterRef": {"key": "no-name"}}),
            json!({"resources": "Kustomization/broken"}),
            json!({"resources": [{"kind": "", "name": "nameless-kind"}, {"kind": "Kustomization"}]}),
        ]);
        g.spec.watch.push(HealthCheck {
            uses: "http".into(),
            with: Some(json!({"resources": [{"kind": "Kustomization", "name": "not-flux"}]})),
        });
        g.spec.watch.push(HealthCheck {
            uses: USES.into(),
            with: None,
        });
        let watched = watched(&g);
        assert_eq!(
            keys(&watched),
            [
                "HelmRelease/data/db",
                "Kustomization/acme/api",
                "Kustomization/acme/far@elsewhere",
                "Kustomization/acme/web"
            ]
        );
        assert_eq!(
            watched[0].api_version.as_deref(),
            Ok("helm.toolkit.fluxcd.io/v2")
        );
        assert_eq!(
            watched[1].api_version.as_deref(),
            Ok("kustomize.toolkit.fluxcd.io/v1")
        );
    }

    /// Three clusters' objects of one name are three entries, each as the controller
    /// last assessed it; none of them is operated from here.
    #[test]
    fn a_connected_clusters_objects_are_read_from_the_health_record_and_never_operated() {
        let mut g = gate(vec![
            json!({"resources": [{"kind": "Kustomization", "name": "apps"}]}),
            json!({"resources": [{"kind": "Kustomization", "name": "apps"}], "clusterRef": {"name": "eu-1"}}),
            json!({"resources": [{"kind": "Kustomization", "name": "apps"}], "clusterRef": {"name": "fleet", "key": "us-1"}}),
            json!({"resources": [{"kind": "Kustomization", "name": "edge"}], "clusterRef": {"name": "ap-1"}}),
        ]);
        g.status = Some(hecate_types::GateStatus {
            health: Some(hecate_types::HealthReport {
                status: Health::Degraded,
                issues: vec![
                    "Kustomization/acme/apps@fleet:us-1: health check failed".into(),
                    "Kustomization/acme/apps: something else".into(),
                ],
                details: Some(json!({"flux": {
                    "Kustomization/acme/apps@eu-1": {"health": "Healthy", "revision": "main@sha1:abc"},
                    "Kustomization/acme/apps@fleet:us-1": {"health": "Degraded", "revision": "main@sha1:def"},
                }})),
                observed_at: None,
                since: None,
            }),
            ..hecate_types::GateStatus::default()
        });
        let watched = watched(&g);
        assert_eq!(
            keys(&watched),
            [
                "Kustomization/acme/apps",
                "Kustomization/acme/apps@eu-1",
                "Kustomization/acme/apps@fleet:us-1",
                "Kustomization/acme/edge@ap-1",
            ]
        );
        let described: Vec<(String, Health, String, String)> = watched
            .iter()
            .filter(|w| w.is_remote())
            .map(|w| describe(w, recorded(&g, w), now()))
            .map(|r| (r.cluster, r.health, r.revision, r.detail))
            .collect();
        assert_eq!(
            described,
            [
                (
                    "eu-1".into(),
                    Health::Healthy,
                    "main@sha1:abc".into(),
                    String::new()
                ),
                (
                    "fleet:us-1".into(),
                    Health::Degraded,
                    "main@sha1:def".into(),
                    "health check failed".into()
                ),
                (
                    "ap-1".into(),
                    Health::Unknown,
                    String::new(),
                    "not assessed by the controller yet".into()
                ),
            ]
        );
        // The local `apps` may be operated; `edge`, only remote, is refused saying where.
        assert!(target(&g, "Kustomization", "apps").is_ok_and(|w| !w.is_remote()));
        let refused = target(&g, "Kustomization", "edge").unwrap_err();
        assert!(refused.reason.contains("is on cluster ap-1"), "{refused:?}");
    }

    #[test]
    fn an_unknown_kind_needs_an_api_version_and_an_explicit_one_wins() {
        let g = gate(vec![json!({"resources": [
            {"kind": "Widget", "name": "w"},
            {"kind": "HelmRelease", "name": "h", "apiVersion": "helm.toolkit.fluxcd.io/v2beta2"},
        ]})]);
        let watched = watched(&g);
        assert_eq!(
            watched[0].api_version.as_deref(),
            Ok("helm.toolkit.fluxcd.io/v2beta2")
        );
        assert_eq!(
            watched[1].api_version.as_deref(),
            Err(
                &"no default apiVersion for kind \"Widget\"; set apiVersion explicitly".to_string()
            )
        );
        let resource = describe(&watched[1], Read::Missing, now());
        assert_eq!(resource.health, Health::Unknown);
        assert!(!resource.missing, "unresolvable is not absent");
        assert!(resource.detail.contains("set apiVersion explicitly"));
    }

    fn kustomization(suspend: bool) -> Value {
        json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "podinfo", "generation": 1},
            "spec": {"suspend": suspend},
            "status": {
                "observedGeneration": 1,
                "lastAppliedRevision": "main@sha1:abc",
                "lastHandledReconcileAt": "2026-08-11T11:59:00Z",
                "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                                "observedGeneration": 1, "lastTransitionTime": "2026-08-11T11:00:00Z"}],
            },
        })
    }

    #[test]
    fn a_resource_is_described_by_the_shared_evaluator() {
        let g = gate(vec![
            json!({"resources": [{"kind": "Kustomization", "name": "podinfo"}]}),
        ]);
        let watched = &watched(&g)[0];
        let healthy = describe(watched, Read::Found(kustomization(false)), now());
        assert_eq!(
            serde_json::to_value(&healthy).expect("json"),
            json!({"kind": "Kustomization", "name": "podinfo", "namespace": "acme",
                   "suspended": false, "health": "Healthy", "revision": "main@sha1:abc",
                   "lastHandled": "2026-08-11T11:59:00Z", "missing": false, "operable": true})
        );
        let suspended = describe(watched, Read::Found(kustomization(true)), now());
        assert!(suspended.suspended);
        assert_eq!(suspended.health, Health::Unknown);
        assert!(
            suspended.detail.contains("suspended"),
            "{}",
            suspended.detail
        );

        let missing = describe(watched, Read::Missing, now());
        assert!(missing.missing);
        assert!(!missing.operable, "nothing there to operate");
        assert_eq!(missing.detail, "not in the cluster");
        let failed = describe(watched, Read::Failed("forbidden".into()), now());
        assert!(!failed.missing);
        assert_eq!(failed.detail, "forbidden");
    }

    #[test]
    fn an_object_in_another_namespace_is_listed_but_never_shown() {
        let g = gate(vec![json!({"resources": [
            {"kind": "Kustomization", "name": "podinfo"},
            {"kind": "Kustomization", "name": "podinfo", "namespace": "acme"},
            {"kind": "Kustomization", "name": "x", "namespace": "other"},
        ]})]);
        let watched = watched(&g);
        assert_eq!(
            keys(&watched),
            ["Kustomization/acme/podinfo", "Kustomization/other/x"],
            "the Gate's own namespace, written or not, is one object"
        );
        assert!(may_read(&watched[0]));
        let theirs = &watched[1];
        assert!(!may_read(theirs));
        // Even handed what a reader found, nothing of it is shown.
        for read in [Read::Found(kustomization(true)), Read::NotAsked] {
            let resource = describe(theirs, read, now());
            assert_eq!(
                serde_json::to_value(&resource).expect("json"),
                json!({"kind": "Kustomization", "name": "x", "namespace": "other",
                       "suspended": false, "health": "Unknown", "missing": false,
                       "detail": "in namespace other, outside Gate production's namespace acme: not read"})
            );
        }
    }

    #[test]
    fn only_what_the_gate_watches_in_its_namespace_may_be_operated() {
        let g = gate(vec![
            json!({"resources": [
                {"kind": "Kustomization", "name": "podinfo"},
                {"kind": "Kustomization", "name": "shared", "namespace": "flux-system"},
            ]}),
            json!({"resources": [{"kind": "HelmRelease", "name": "far"}], "clusterRef": {"name": "elsewhere"}}),
        ]);
        assert!(target(&g, "Kustomization", "podinfo").is_ok());
        for (kind, name) in [
            ("Kustomization", "someone-elses"),
            ("HelmRelease", "podinfo"),
            ("Kustomization", "shared"),
        ] {
            let refusal = target(&g, kind, name).expect_err("refused");
            assert_eq!(refusal.code, RefusalCode::NotWatched);
            assert_eq!(
                refusal.reason,
                format!(
                    "{kind} \"{name}\" is not watched by Gate production — this only operates on what the Gate depends on"
                )
            );
        }
        // Watched on a connected cluster: refused too, saying where it is.
        let far = target(&g, "HelmRelease", "far").expect_err("refused");
        assert_eq!(far.code, RefusalCode::NotWatched);
        assert!(far.reason.contains("is on cluster elsewhere"), "{far:?}");
    }

    #[test]
    fn the_reconcile_stamp_is_rfc3339_nano_in_utc() {
        assert_eq!(reconcile_stamp(now()), "2026-08-11T12:00:00Z");
        let fractional: Timestamp = "2026-08-11T12:00:00.123400Z".parse().expect("a time");
        assert_eq!(reconcile_stamp(fractional), "2026-08-11T12:00:00.1234Z");
    }
}
