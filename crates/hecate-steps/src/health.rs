//! Health of what a Gate watches (spec controller.md §6): checkers registered by name,
//! and one assessment merged from all of a Gate's checks.
//!
//! [`Checkers`] runs a Gate's checks and merges them: the worst health wins (by
//! [`Health::merge`]), issues are concatenated, details are kept per checker. A check
//! naming no registered checker counts as `Unknown`: skipping it would look healthier
//! than the truth. The one built-in checker, `flux`, is [`crate::flux::FluxChecker`].
//!
//! Health says whether things run now; whether a crossing achieved its aim is
//! verification's question (the controller's `verify`). The two stay separate.

use std::sync::Arc;

use futures::future::BoxFuture;
use hecate_types::{Health, HealthCheck};
use jiff::Timestamp;
use serde_json::Value;

use crate::by_name::{ByName, Duplicate, Named};

/// One checker's answer for one check.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    /// The verdict.
    pub health: Health,
    /// What is wrong, in words; empty only when `Healthy` or `NotApplicable`.
    pub issues: Vec<String>,
    /// What the checker saw, for people and for `status.health.details`.
    pub details: Option<Value>,
    /// Something it checks was left out of `health` because Flux is applying again
    /// what it had applied: it stands as it stood before (see [`Assessment`]).
    pub reapplying: bool,
}

impl CheckResult {
    /// A result that could not be had, and why.
    pub fn unknown(issue: impl Into<String>) -> Self {
        Self {
            health: Health::Unknown,
            issues: vec![issue.into()],
            details: None,
            reapplying: false,
        }
    }
}

/// A kind of health check, registered under the name checks `use`.
pub trait Checker: Send + Sync {
    /// The name checks refer to in `uses`, e.g. `flux`.
    fn name(&self) -> &str;

    /// Judges one check whose `with` is `config`, for a Gate in `namespace`. Never
    /// fails: a configuration or read problem is an `Unknown` result with the problem
    /// as its issue.
    fn check<'a>(
        &'a self,
        config: Option<&'a Value>,
        namespace: &'a str,
        now: Timestamp,
    ) -> BoxFuture<'a, CheckResult>;

    /// Whether the answer to the check whose `with` is `config` can change only when an
    /// object the controller watches changes — the watch wakes the Gate — so that no
    /// timer need look again. A checker that must poll says no (the default).
    fn followed(&self, config: Option<&Value>) -> bool {
        let _ = config;
        false
    }
}

/// A Gate's health, merged from all of its checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Assessment {
    /// The worst result of all checks; `NotApplicable` when there are none.
    pub status: Health,
    /// Every check's issues, in the order of the checks.
    pub issues: Vec<String>,
    /// Checker name → that checker's details; `None` when no checker gave any.
    pub details: Option<Value>,
    /// Some check left something out of `status` because Flux is applying again what
    /// it had applied, on its interval: that part stands as it stood, so the Gate's
    /// health record keeps its state through it rather than turning `Progressing` for
    /// a second (issue 53).
    pub reapplying: bool,
}

/// The health checkers a controller knows, by name.
#[derive(Clone, Default)]
pub struct Checkers {
    checkers: ByName<dyn Checker>,
}

impl Named for dyn Checker {
    const KIND: &'static str = "health checker";

    fn name(&self) -> &str {
        Checker::name(self)
    }
}

impl Checkers {
    /// No checkers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `checker` under its name; a name may be registered once.
    pub fn register(&mut self, checker: Arc<dyn Checker>) -> Result<(), Duplicate> {
        self.checkers.register(checker)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.checkers.names()
    }

    /// Runs every check (concurrently) and merges the results in the checks' order.
    pub async fn assess(
        &self,
        checks: &[HealthCheck],
        namespace: &str,
        now: Timestamp,
    ) -> Assessment {
        let results = futures::future::join_all(checks.iter().map(|check| async move {
            let result = match self.checkers.get(&check.uses) {
                Some(checker) => checker.check(check.with.as_ref(), namespace, now).await,
                None => CheckResult::unknown(self.unknown_checker(&check.uses)),
            };
            (check.uses.as_str(), result)
        }))
        .await;
        merge(results)
    }

    /// Whether every one of `checks` is [followed](Checker::followed) by its checker
    /// (no checks at all: nothing to look at again).
    pub fn followed(&self, checks: &[HealthCheck]) -> bool {
        checks.iter().all(|check| {
            self.checkers
                .get(&check.uses)
                .is_some_and(|checker| checker.followed(check.with.as_ref()))
        })
    }

    fn unknown_checker(&self, name: &str) -> String {
        format!(
            "unknown health checker {name:?} (registered: {})",
            self.checkers.listed()
        )
    }
}

/// Merges checkers' results. Two checks by one checker (a Gate's own `flux` check and
/// one adopted from a crossing, say) both keep their details: object details are
/// joined key by key rather than the later replacing the earlier.
fn merge<'a>(results: impl IntoIterator<Item = (&'a str, CheckResult)>) -> Assessment {
    let mut status = None::<Health>;
    let mut issues = Vec::new();
    let mut details = serde_json::Map::new();
    let mut reapplying = false;
    for (name, result) in results {
        status = Some(status.map_or(result.health, |s| s.merge(result.health)));
        reapplying |= result.reapplying;
        issues.extend(result.issues);
        let Some(new) = result.details else { continue };
        match (details.get_mut(name), new) {
            (Some(Value::Object(old)), Value::Object(new)) => old.extend(new),
            (_, new) => {
                details.insert(name.to_string(), new);
            }
        }
    }
    Assessment {
        status: status.unwrap_or(Health::NotApplicable),
        issues,
        details: (!details.is_empty()).then_some(Value::Object(details)),
        reapplying,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::future::BoxFuture;
    use hecate_types::Health::{self, *};
    use hecate_types::HealthCheck;
    use jiff::Timestamp;
    use serde_json::{Value, json};

    use super::{Assessment, CheckResult, Checker, Checkers};
    use crate::by_name::Duplicate;

    /// Answers whatever its check's `with` says: `{health, issue?, details?}`, and
    /// echoes the namespace into the details so the tests see it was passed on.
    struct Scripted(&'static str);

    impl Checker for Scripted {
        fn name(&self) -> &str {
            self.0
        }

        fn check<'a>(
            &'a self,
            config: Option<&'a Value>,
            namespace: &'a str,
            _now: Timestamp,
        ) -> BoxFuture<'a, CheckResult> {
            Box::pin(async move {
                let config = config.cloned().unwrap_or_default();
                let health = serde_json::from_value::<Health>(config["health"].clone())
                    .expect("a scripted health");
                CheckResult {
                    health,
                    issues: config["issue"]
                        .as_str()
                        .map(String::from)
                        .into_iter()
                        .collect(),
                    details: config
                        .get("details")
                        .map(|d| json!({"namespace": namespace, "seen": d})),
                    reapplying: false,
                }
            })
        }

        /// Followed when its `with` says `"followed": true`.
        fn followed(&self, config: Option<&Value>) -> bool {
            config.is_some_and(|config| config["followed"] == json!(true))
        }
    }

    fn registry() -> Checkers {
        let mut registry = Checkers::new();
        registry.register(Arc::new(Scripted("flux"))).expect("flux");
        registry
            .register(Arc::new(Scripted("probe")))
            .expect("probe");
        registry
    }

    fn check(uses: &str, with: Value) -> HealthCheck {
        HealthCheck {
            uses: uses.into(),
            with: Some(with),
        }
    }

    fn now() -> Timestamp {
        "2025-06-01T12:00:00Z".parse().expect("a timestamp")
    }

    async fn assess(registry: &Checkers, checks: &[HealthCheck]) -> Assessment {
        registry.assess(checks, "shop", now()).await
    }

    #[test]
    fn checks_are_followed_only_when_every_checker_says_so() {
        let registry = registry();
        let followed = || check("flux", json!({"health": "Healthy", "followed": true}));
        let polled = check("probe", json!({"health": "Healthy"}));
        let unknown = check("nobody", json!({"followed": true}));
        assert!(registry.followed(&[]), "nothing to look at again");
        assert!(registry.followed(&[followed(), followed()]));
        assert!(!registry.followed(&[followed(), polled]));
        assert!(
            !registry.followed(&[followed(), unknown]),
            "an unregistered checker follows nothing"
        );
    }

    #[tokio::test]
    async fn no_checks_are_not_applicable() {
        let assessment = assess(&registry(), &[]).await;
        assert_eq!(
            assessment,
            Assessment {
                status: NotApplicable,
                issues: vec![],
                details: None,
                reapplying: false,
            }
        );
    }

    #[tokio::test]
    async fn the_worst_result_wins_whatever_the_order() {
        let cases = [
            (vec![Healthy], Healthy),
            (vec![NotApplicable], NotApplicable),
            (vec![Healthy, NotApplicable], NotApplicable),
            (vec![Healthy, Progressing, Healthy], Progressing),
            (vec![Progressing, Unknown], Unknown),
            (vec![Unknown, Progressing], Unknown),
            (vec![Degraded, Unknown, Healthy], Degraded),
            (vec![Healthy, Progressing, Degraded], Degraded),
        ];
        for (healths, worst) in cases {
            let checks: Vec<_> = healths
                .iter()
                .map(|h| check("probe", json!({"health": h})))
                .collect();
            assert_eq!(
                assess(&registry(), &checks).await.status,
                worst,
                "{healths:?}"
            );
        }
    }

    #[tokio::test]
    async fn issues_are_concatenated_in_the_order_of_the_checks() {
        let checks = [
            check("flux", json!({"health": "Progressing", "issue": "first"})),
            check("probe", json!({"health": "Healthy"})),
            check("probe", json!({"health": "Degraded", "issue": "second"})),
        ];
        let assessment = assess(&registry(), &checks).await;
        assert_eq!(assessment.issues, ["first", "second"]);
    }

    #[tokio::test]
    async fn an_unknown_checker_is_unknown_and_names_the_registered_ones() {
        let checks = [
            check("flux", json!({"health": "Healthy"})),
            check("prometheus", json!({})),
        ];
        let assessment = assess(&registry(), &checks).await;
        assert_eq!(assessment.status, Unknown);
        assert_eq!(
            assessment.issues,
            [r#"unknown health checker "prometheus" (registered: flux, probe)"#]
        );

        let assessment = assess(&Checkers::new(), &checks[..1]).await;
        assert_eq!(
            assessment.issues,
            [r#"unknown health checker "flux" (registered: none)"#]
        );
    }

    #[tokio::test]
    async fn details_are_kept_per_checker_and_joined_for_one_checker() {
        let checks = [
            check(
                "flux",
                json!({"health": "Healthy", "details": {"K/shop/a": 1}}),
            ),
            check("probe", json!({"health": "Healthy", "details": "up"})),
            check("probe", json!({"health": "Healthy"})),
        ];
        let assessment = assess(&registry(), &checks).await;
        assert_eq!(
            assessment.details,
            Some(json!({
                "flux": {"namespace": "shop", "seen": {"K/shop/a": 1}},
                "probe": {"namespace": "shop", "seen": "up"},
            }))
        );

        let merged = super::merge([
            (
                "flux",
                CheckResult {
                    health: Healthy,
                    issues: vec![],
                    details: Some(json!({"K/shop/a": {"health": "Healthy"}})),
                    reapplying: false,
                },
            ),
            (
                "flux",
                CheckResult {
                    health: Progressing,
                    issues: vec!["b".into()],
                    details: Some(json!({"K/shop/b": {"health": "Progressing"}})),
                    reapplying: false,
                },
            ),
        ]);
        assert_eq!(
            merged.details,
            Some(json!({"flux": {
                "K/shop/a": {"health": "Healthy"},
                "K/shop/b": {"health": "Progressing"},
            }}))
        );
        assert_eq!(merged.status, Progressing);
    }

    #[test]
    fn a_name_can_be_registered_once() {
        let mut registry = registry();
        assert_eq!(
            registry.register(Arc::new(Scripted("flux"))),
            Err(Duplicate {
                kind: "health checker",
                name: "flux".into()
            })
        );
        assert_eq!(registry.names().collect::<Vec<_>>(), ["flux", "probe"]);
    }
}
