//! The `flux` health checker (spec controller.md §6.2): reads each configured object
//! and judges it with [`evaluate`]. The I/O is one GET per object (discovery is
//! cached); what the reads mean is decided by [`judge`], a pure function.
//!
//! A read that fails makes its object `Unknown` with the error — never skipped, which
//! would look healthier than the truth. A cluster that cannot be reached at all makes
//! the whole check `Unknown` at once, instead of one timeout per object.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use hecate_types::Health;
use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use super::access::{Cluster, FluxAccess, describe};
use super::config::{ClusterSecret, FluxCheck, FluxConfig, Target};
use crate::health::{CheckResult, Checker};
use hecate_ops::rules::flux::{Evaluation, evaluate};

/// The `flux` checker.
pub struct FluxChecker {
    access: Arc<FluxAccess>,
    refuse_cross_namespace: bool,
}

/// One object's verdict, as details and step outputs show it (and a rollout reads
/// back from a target's `flux-wait`).
#[derive(Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ResourceHealth {
    /// The object's health.
    pub health: Health,
    /// The revision it reports as applied; empty when it reports none.
    pub revision: String,
}

/// A `flux` check's result.
#[derive(Clone, Debug, PartialEq)]
pub struct FluxAssessment {
    /// The worst of the objects' health.
    pub health: Health,
    /// Every object's issues, each prefixed with the object's key.
    pub issues: Vec<String>,
    /// `<Kind>/<namespace>/<name>` → that object's verdict.
    pub resources: BTreeMap<String, ResourceHealth>,
    /// Some object was not healthy only because Flux is applying again what it had
    /// applied ([`hecate_ops::rules::flux::Evaluation::reapplying`]): it counts as it
    /// counted before, which only the Gate's health record knows.
    pub reapplying: bool,
}

/// What reading one object gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Read {
    /// The object, as JSON.
    Found(Value),
    /// There is no such object.
    Missing,
    /// It could not be read; why.
    Failed(String),
}

impl FluxChecker {
    /// The name checks use.
    pub const NAME: &'static str = "flux";

    /// A checker reading through `access`. With `refuse_cross_namespace` (the
    /// controller's default), objects outside the Gate's namespace are refused.
    pub fn new(access: Arc<FluxAccess>, refuse_cross_namespace: bool) -> Self {
        Self {
            access,
            refuse_cross_namespace,
        }
    }

    /// How the checker reaches clusters; `flux-reconcile` writes through the same
    /// clients and resolved kinds.
    pub fn access(&self) -> &Arc<FluxAccess> {
        &self.access
    }

    /// Reads and judges every object of a validated check, for a Gate (or Passage) in
    /// `namespace`. The `flux-wait` step asks this too.
    pub async fn assess(
        &self,
        check: &FluxCheck,
        namespace: &str,
        now: Timestamp,
    ) -> FluxAssessment {
        let cluster = match self
            .access
            .cluster(check.cluster_secret.as_ref(), namespace)
            .await
        {
            Ok(cluster) => cluster,
            Err(error) => return FluxAssessment::unreachable(error.to_string()),
        };
        let mut reads = Vec::with_capacity(check.targets.len());
        for target in &check.targets {
            match self.read(&cluster, target).await {
                Ok(read) => reads.push((target.clone(), read)),
                Err(error) => {
                    let on = match &check.cluster_secret {
                        Some(secret) => format!("the cluster of Secret {namespace}/{secret}"),
                        None => "the API server".to_string(),
                    };
                    return FluxAssessment::unreachable(format!(
                        "cannot reach {on}: {}",
                        describe(&error)
                    ));
                }
            }
        }
        judge(check, reads, now)
    }

    /// Reads one object. `Err` only when the cluster cannot be reached; every other
    /// failure is a [`Read::Failed`] for that object alone.
    async fn read(&self, cluster: &Cluster, target: &Target) -> Result<Read, kube::Error> {
        if let Some(watched) = self.access.watched(cluster, target) {
            return Ok(match watched {
                Some(object) => serde_json::to_value(object)
                    .map_or_else(|e| Read::Failed(e.to_string()), Read::Found),
                None => Read::Missing,
            });
        }
        let api = match self.access.api(cluster, target).await {
            Ok(api) => api,
            Err(error) if unreachable(&error) => return Err(error),
            Err(kube::Error::Discovery(_)) => return Ok(not_served(target)),
            // A group or version not served at all answers a bare 404, not a NotFound Status.
            Err(kube::Error::Api(status)) if status.code == 404 => {
                return Ok(not_served(target));
            }
            Err(error) => return Ok(Read::Failed(describe(&error))),
        };
        match api.get_opt(&target.name).await {
            Ok(Some(object)) => Ok(serde_json::to_value(object)
                .map_or_else(|e| Read::Failed(e.to_string()), Read::Found)),
            Ok(None) => {
                self.access.forget_kind(cluster, target);
                Ok(Read::Missing)
            }
            Err(error) if unreachable(&error) => Err(error),
            Err(error) => Ok(Read::Failed(describe(&error))),
        }
    }
}

impl Checker for FluxChecker {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn check<'a>(
        &'a self,
        config: Option<&'a Value>,
        namespace: &'a str,
        now: Timestamp,
    ) -> BoxFuture<'a, CheckResult> {
        Box::pin(async move {
            let check = FluxConfig::decode(config)
                .and_then(|config| config.validate(namespace, self.refuse_cross_namespace));
            match check {
                Ok(check) => self.assess(&check, namespace, now).await.into(),
                Err(error) => CheckResult::unknown(format!("flux check: {error}")),
            }
        })
    }

    /// Followed when every object is in the local cluster and of a kind read from a
    /// watch: a change of one wakes the Gates watching it.
    fn followed(&self, config: Option<&Value>) -> bool {
        let Ok(check) = FluxConfig::decode(config).and_then(|config| config.validate("", false))
        else {
            return false;
        };
        check.cluster_secret.is_none()
            && check
                .targets
                .iter()
                .all(|target| self.access.follows(target))
    }
}

/// Judges what was read, object by object, and merges the verdicts.
pub fn judge(
    check: &FluxCheck,
    reads: impl IntoIterator<Item = (Target, Read)>,
    now: Timestamp,
) -> FluxAssessment {
    let mut assessment = FluxAssessment {
        health: Health::Healthy,
        issues: Vec::new(),
        resources: BTreeMap::new(),
        reapplying: false,
    };
    let evaluated = |object: Option<&Value>| {
        evaluate(
            object,
            check.expected_revision.as_deref(),
            check.fail_after,
            now,
        )
    };
    // Objects of a remote cluster are told apart by it: five clusters'
    // `flux-system/apps` are five lines, not one.
    let cluster = check
        .cluster_secret
        .as_ref()
        .map(ClusterSecret::qualifier)
        .unwrap_or_default();
    for (target, read) in reads {
        let key = hecate_ops::rules::flux::object_key(
            &target.kind,
            &target.namespace,
            &target.name,
            &cluster,
        );
        let Evaluation {
            health,
            issues,
            revision,
            reapplying,
        } = match read {
            Read::Found(object) => evaluated(Some(&object)),
            Read::Missing => evaluated(None),
            Read::Failed(error) => Evaluation {
                health: Health::Unknown,
                issues: vec![format!("cannot read it: {error}")],
                revision: None,
                reapplying: false,
            },
        };
        if reapplying {
            assessment.reapplying = true;
        } else {
            assessment.health = assessment.health.merge(health);
            assessment
                .issues
                .extend(issues.into_iter().map(|issue| format!("{key}: {issue}")));
        }
        assessment.resources.insert(
            key,
            ResourceHealth {
                health,
                revision: revision.unwrap_or_default(),
            },
        );
    }
    assessment
}

impl FluxAssessment {
    /// A check that could read nothing.
    fn unreachable(issue: String) -> Self {
        Self {
            health: Health::Unknown,
            issues: vec![issue],
            resources: BTreeMap::new(),
            reapplying: false,
        }
    }

    /// The per-object verdicts as JSON, as `status.health.details.flux` and the
    /// `flux-wait` step's `resources` output show them.
    pub fn details(&self) -> Value {
        serde_json::to_value(&self.resources).unwrap_or_default()
    }
}

impl From<FluxAssessment> for CheckResult {
    fn from(assessment: FluxAssessment) -> Self {
        let details = (!assessment.resources.is_empty()).then(|| assessment.details());
        Self {
            health: assessment.health,
            issues: assessment.issues,
            details,
            reapplying: assessment.reapplying,
        }
    }
}

fn not_served(target: &Target) -> Read {
    Read::Failed(format!(
        "the cluster does not serve {} in {} (is its CRD installed?)",
        target.kind,
        target.api_version()
    ))
}

/// Whether an error means the API server was not reached at all, as opposed to an
/// answer (forbidden, not found, invalid) about one object.
fn unreachable(error: &kube::Error) -> bool {
    matches!(error, kube::Error::HyperError(_) | kube::Error::Service(_))
}

#[cfg(test)]
mod tests {
    use hecate_types::Health::*;
    use jiff::Timestamp;
    use serde_json::json;

    use super::super::config::FluxConfig;
    use super::{CheckResult, FluxCheck, Read, ResourceHealth, Target, judge};

    fn check(expected_revision: Option<&str>) -> FluxCheck {
        let mut config = json!({"resources": [
            {"kind": "Kustomization", "name": "app"},
            {"kind": "GitRepository", "name": "fleet"},
            {"kind": "HelmRelease", "name": "api"},
        ]});
        if let Some(revision) = expected_revision {
            config["expectedRevision"] = json!(revision);
        }
        FluxConfig::decode(Some(&config))
            .and_then(|c| c.validate("shop", true))
            .expect("a valid check")
    }

    fn ready(revision: &str) -> serde_json::Value {
        json!({
            "metadata": {"generation": 1},
            "status": {
                "observedGeneration": 1,
                "lastAppliedRevision": revision,
                "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1}],
            },
        })
    }

    fn now() -> Timestamp {
        "2025-06-01T12:00:00Z".parse().expect("a timestamp")
    }

    fn reads(check: &FluxCheck, reads: Vec<Read>) -> Vec<(Target, Read)> {
        check.targets.iter().cloned().zip(reads).collect()
    }

    /// A checker whose local cluster answers nothing (nothing listens at its address),
    /// with Kustomizations followed from a store holding `app`, ready.
    async fn following_kustomizations() -> super::FluxChecker {
        use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
        use kube::runtime::{reflector, watcher};
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
        let access = super::FluxAccess::new(kube::Client::try_from(config).expect("a client"));
        let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(
            "kustomize.toolkit.fluxcd.io",
            "v1",
            "Kustomization",
        ));
        let mut writer = reflector::store::Writer::new(resource.clone());
        let mut app: DynamicObject =
            serde_json::from_value(ready("main@sha1:abc")).expect("an object");
        app.metadata.name = Some("app".into());
        app.metadata.namespace = Some("shop".into());
        for event in [
            watcher::Event::Init,
            watcher::Event::InitApply(app),
            watcher::Event::InitDone,
        ] {
            writer.apply_watcher_event(&event);
        }
        access.follow(&resource, writer.as_reader());
        super::FluxChecker::new(std::sync::Arc::new(access), true)
    }

    #[tokio::test]
    async fn a_followed_kind_is_read_from_the_watch_without_a_request() {
        use crate::health::Checker as _;
        let checker = following_kustomizations().await;
        let app = json!({"resources": [{"kind": "Kustomization", "name": "app"}]});
        let result = checker.check(Some(&app), "shop", now()).await;
        assert_eq!(result.health, Healthy, "{:?}", result.issues);
        let gone = json!({"resources": [{"kind": "Kustomization", "name": "gone"}]});
        let result = checker.check(Some(&gone), "shop", now()).await;
        assert!(
            result
                .issues
                .iter()
                .all(|issue| !issue.contains("cannot reach")),
            "an object the watch lacks is missing, not asked for: {:?}",
            result.issues
        );
        assert_ne!(result.health, Healthy);

        assert!(checker.followed(Some(&app)));
        let remote = json!({"resources": [{"kind": "Kustomization", "name": "app"}], "clusterRef": {"name": "prod"}});
        assert!(
            !checker.followed(Some(&remote)),
            "a remote cluster is polled"
        );
        let source = json!({"resources": [{"kind": "GitRepository", "name": "fleet"}]});
        assert!(
            !checker.followed(Some(&source)),
            "an unwatched kind is polled"
        );
        let mixed = json!({"resources": [
            {"kind": "Kustomization", "name": "app"},
            {"kind": "GitRepository", "name": "fleet"},
        ]});
        assert!(!checker.followed(Some(&mixed)));
        assert!(!checker.followed(None), "no configuration follows nothing");
    }

    #[test]
    fn every_object_is_judged_and_keyed_and_the_worst_wins() {
        let check = check(None);
        let assessment = judge(
            &check,
            reads(
                &check,
                vec![
                    Read::Found(ready("main@sha1:abc")),
                    Read::Missing,
                    Read::Failed("forbidden (403 Forbidden)".into()),
                ],
            ),
            now(),
        );
        assert_eq!(assessment.health, Unknown);
        assert_eq!(
            assessment.issues,
            [
                "GitRepository/shop/fleet: not found",
                "HelmRelease/shop/api: cannot read it: forbidden (403 Forbidden)",
            ]
        );
        let result = CheckResult::from(assessment);
        assert_eq!(
            result.details,
            Some(json!({
                "Kustomization/shop/app": {"health": "Healthy", "revision": "main@sha1:abc"},
                "GitRepository/shop/fleet": {"health": "Unknown", "revision": ""},
                "HelmRelease/shop/api": {"health": "Unknown", "revision": ""},
            }))
        );
    }

    /// Two clusters' objects of one name are two details and two issues, each
    /// naming its cluster (and the key, where one Secret holds several).
    #[test]
    fn a_remote_clusters_objects_are_keyed_by_their_cluster() {
        let mut merged = serde_json::Map::new();
        let mut issues = Vec::new();
        for (cluster, key) in [("eu-1", None), ("fleet", Some("us-1"))] {
            let mut check = check(None);
            check.cluster_secret = Some(super::super::config::ClusterSecret {
                name: cluster.into(),
                key: key.map(str::to_string),
            });
            let assessment = judge(
                &check,
                reads(&check, vec![Read::Missing, Read::Missing, Read::Missing]),
                now(),
            );
            issues.extend(assessment.issues.clone());
            let Some(serde_json::Value::Object(details)) = CheckResult::from(assessment).details
            else {
                panic!("details");
            };
            merged.extend(details);
        }
        assert!(
            merged.contains_key("Kustomization/shop/app@eu-1"),
            "{merged:?}"
        );
        assert!(
            merged.contains_key("Kustomization/shop/app@fleet:us-1"),
            "{merged:?}"
        );
        assert_eq!(merged.len(), 6);
        assert!(
            issues.contains(&"Kustomization/shop/app@eu-1: not found".to_string()),
            "{issues:?}"
        );
    }

    #[test]
    fn the_expected_revision_applies_to_every_object() {
        let check = check(Some("abc"));
        let assessment = judge(
            &check,
            reads(
                &check,
                vec![
                    Read::Found(ready("main@sha1:abc")),
                    Read::Found(ready("main@sha1:abc")),
                    Read::Found(ready("main@sha1:def")),
                ],
            ),
            now(),
        );
        assert_eq!(assessment.health, Progressing);
        assert_eq!(
            assessment.issues,
            ["HelmRelease/shop/api: Flux has not applied abc yet; the last applied is def"]
        );
        assert_eq!(
            assessment.resources["Kustomization/shop/app"],
            ResourceHealth {
                health: Healthy,
                revision: "main@sha1:abc".into()
            }
        );
    }
}
