//! Judging one Flux-style object from its status (spec controller.md §6.3): a pure
//! function of the object's JSON, the revision waited for, the failure deadline and
//! `now`. The controller's `flux` health checker and `flux-wait` step, and ops' list of
//! the Flux objects a Gate depends on ([`crate::rules::flux_watch`]), all decide with
//! it, so "healthy" means the same thing everywhere.
//!
//! Anything that follows Flux's status conventions can be judged — `Ready` and
//! `Stalled` conditions, `observedGeneration`, a revision field — which is how a Gate
//! can wait on a non-Flux object and how tests stand in for Flux.

use hecate_types::Health;
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

/// What one object's status says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// The verdict.
    pub health: Health,
    /// Why the verdict is not `Healthy`, in words; never empty unless it is.
    pub issues: Vec<String>,
    /// The revision the object reports as applied (see [`applied_revision`]), if any.
    pub revision: Option<String>,
    /// Flux is applying again, on its interval, the revision it last applied and
    /// nothing newer (`Ready=Unknown`, reason `Progressing`, the last attempt the
    /// applied revision): what ran before still runs, and whatever was said of it
    /// before still holds. A Gate's health keeps its state through it (issue 53: a
    /// routine reconcile restarted every soak on real Flux).
    pub reapplying: bool,
}

/// Judges one object by the rules of §6.3, in their order: absent, suspended, stale,
/// stalled, no `Ready` yet, ready (at the expected revision?), failing (for longer than
/// `fail_after`?), otherwise still reconciling.
///
/// An empty `expected_revision` means none is expected.
pub fn evaluate(
    object: Option<&Value>,
    expected_revision: Option<&str>,
    fail_after: SignedDuration,
    now: Timestamp,
) -> Evaluation {
    let Some(object) = object else {
        return Evaluation::not_healthy(Health::Unknown, "not found".into(), None);
    };
    let revision = applied_revision(object);
    let verdict = |health, issue| Evaluation::not_healthy(health, issue, revision.clone());

    if object.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
        // Suspended is not Progressing: nothing will happen until someone resumes it.
        return verdict(
            Health::Unknown,
            "suspended: Flux will not reconcile it until it is resumed".into(),
        );
    }

    let ready = condition(object, "Ready");
    let generation = object
        .pointer("/metadata/generation")
        .and_then(integer)
        .unwrap_or(0);
    // A never-reconciled object has `status.observedGeneration: -1` while its
    // conditions already describe generation 1; the Ready condition's own
    // observedGeneration is the truer witness when it is there (§6.4 lesson 1).
    let observed = match ready.as_ref().and_then(|c| c.observed_generation) {
        Some(own) if own > 0 => Some(own),
        _ => object
            .pointer("/status/observedGeneration")
            .and_then(integer),
    };
    if observed.is_none_or(|observed| observed < generation) {
        return verdict(
            Health::Progressing,
            format!("generation {generation} has not been reconciled yet"),
        );
    }

    // A failure reported for another revision than the one waited for belongs to an
    // earlier attempt: Flux has not tried the expected revision yet. Judging it
    // `Degraded` would fail every crossing that comes to repair a broken environment.
    let stalled = condition(object, "Stalled").filter(|c| c.status == "True");
    let failure = stalled
        .as_ref()
        .or(ready.as_ref().filter(|c| c.status == "False"));
    if let (Some(failure), Some(expected)) = (
        failure,
        expected_revision.filter(|expected| !expected.is_empty()),
    ) && let Some(attempted) = attempted_revision(object)
        && !revision_matches(&attempted, expected)
    {
        return verdict(
            Health::Progressing,
            format!(
                "Flux has not tried {} yet; its last attempt, at {}, failed: {}",
                short_revision(expected),
                short_revision(&attempted),
                failure.explanation()
            ),
        );
    }

    if let Some(stalled) = stalled {
        return verdict(
            Health::Degraded,
            format!("stalled: {}", stalled.explanation()),
        );
    }

    let Some(ready) = ready else {
        return verdict(Health::Progressing, "no Ready condition yet".into());
    };
    match ready.status {
        "True" => match expected_revision.filter(|expected| !expected.is_empty()) {
            Some(expected)
                if !revision
                    .as_deref()
                    .is_some_and(|applied| revision_matches(applied, expected)) =>
            {
                verdict(
                    Health::Progressing,
                    not_applied_yet(expected, revision.as_deref()),
                )
            }
            _ => Evaluation {
                health: Health::Healthy,
                issues: Vec::new(),
                revision,
                reapplying: false,
            },
        },
        // Flux's health check already waited the object's own `spec.timeout` for what
        // it applied, and said no. Flux retries later, flipping Ready back to Unknown
        // while it does, so waiting for `Ready=False` to last `fail_after` would wait
        // for ever on the real controllers (DECISION 102). The attempt judged here is
        // the one waited for: an earlier revision's failure returned above.
        "False" if ready.reason == HEALTH_CHECK_FAILED => verdict(
            Health::Degraded,
            format!("Flux's health check failed: {}", ready.explanation()),
        ),
        "False" => {
            let failing_for = ready.last_transition.map(|since| now.duration_since(since));
            match failing_for.filter(|failing_for| *failing_for > fail_after) {
                Some(failing_for) => verdict(
                    Health::Degraded,
                    format!(
                        "not ready for {:#} (allowed {:#}): {}",
                        whole_seconds(failing_for),
                        fail_after,
                        ready.explanation()
                    ),
                ),
                None => verdict(
                    Health::Progressing,
                    format!("not ready yet: {}", ready.explanation()),
                ),
            }
        }
        _ => Evaluation {
            reapplying: ready.reason == PROGRESSING
                && reapplies_what_it_applied(object)
                && revision.as_deref().is_some_and(|applied| {
                    expected_revision
                        .filter(|expected| !expected.is_empty())
                        .is_none_or(|expected| revision_matches(applied, expected))
                }),
            ..verdict(
                Health::Progressing,
                format!("reconciling: {}", ready.explanation()),
            )
        },
    }
}

/// The `Ready` reason Flux gives while it reconciles (`meta.ProgressingReason`).
const PROGRESSING: &str = "Progressing";

/// Whether an applier's last attempt was the revision it last applied: Flux sets
/// `lastAttemptedRevision` as it starts on a revision and `lastAppliedRevision` only
/// once that revision applied and passed its health checks (kustomize-controller). Only
/// an object with both fields can say so; a HelmRelease, which records attempts alone,
/// cannot.
fn reapplies_what_it_applied(object: &Value) -> bool {
    let field = |pointer| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .filter(|revision| !revision.is_empty())
    };
    field("/status/lastAppliedRevision")
        .is_some_and(|applied| field("/status/lastAttemptedRevision") == Some(applied))
}

/// The `Ready` reason Flux's appliers (kustomize-controller, helm-controller) give when
/// what they applied did not become healthy within the object's timeout.
pub const HEALTH_CHECK_FAILED: &str = "HealthCheckFailed";

/// How a connected cluster is named beside its objects: its Secret's name, and `:key`
/// where a key is named (one Secret may hold several clusters).
pub fn cluster_name(secret: &str, key: Option<&str>) -> String {
    match key {
        Some(key) => format!("{secret}:{key}"),
        None => secret.to_string(),
    }
}

/// The key of an object's verdict in a Gate's health record (`details.flux`) and in
/// its issues: `Kind/namespace/name`, and `@cluster` ([`cluster_name`]) for a remote
/// cluster's — five clusters' `flux-system/apps` are five entries, not one.
pub fn object_key(kind: &str, namespace: &str, name: &str, cluster: &str) -> String {
    if cluster.is_empty() {
        format!("{kind}/{namespace}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}@{cluster}")
    }
}

/// The revision an object reports as applied: the first non-empty of
/// `status.lastAppliedRevision` (Kustomization), `status.lastAttemptedRevision`
/// (HelmRelease, which has no lastApplied), `status.artifact.revision` (the source
/// kinds), `status.history[0].chartVersion`, `status.history[0].digest`.
pub fn applied_revision(object: &Value) -> Option<String> {
    [
        "/status/lastAppliedRevision",
        "/status/lastAttemptedRevision",
        "/status/artifact/revision",
        "/status/history/0/chartVersion",
        "/status/history/0/digest",
    ]
    .iter()
    .filter_map(|pointer| object.pointer(pointer).and_then(Value::as_str))
    .find(|revision| !revision.is_empty())
    .map(str::to_string)
}

/// The revision an object last tried to apply: `status.lastAttemptedRevision`, else
/// the [`applied_revision`].
fn attempted_revision(object: &Value) -> Option<String> {
    object
        .pointer("/status/lastAttemptedRevision")
        .and_then(Value::as_str)
        .filter(|revision| !revision.is_empty())
        .map(str::to_string)
        .or_else(|| applied_revision(object))
}

/// Whether two revisions name the same thing, whatever their format: each side is cut
/// to its digest part (after the last `:`, else after the last `/`, else whole), and
/// the longer must start with the shorter. `main@sha1:9f8c1a2b…` matches `9f8c1a2b`,
/// `main/9f8c…` (Flux's older format) matches `9f8c…`, `sha256:abcd` matches `abcd`.
/// An empty side never matches.
pub fn revision_matches(a: &str, b: &str) -> bool {
    let (a, b) = (digest_part(a), digest_part(b));
    let (shorter, longer) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    !shorter.is_empty() && longer.starts_with(shorter)
}

/// Ready at another revision than the one waited for, in words a person compares at a
/// glance: `Flux has not applied 46eeba7 yet; the last applied is f577c28`.
fn not_applied_yet(expected: &str, applied: Option<&str>) -> String {
    let expected = short_revision(expected);
    match applied {
        Some(applied) => format!(
            "Flux has not applied {expected} yet; the last applied is {}",
            short_revision(applied)
        ),
        None => format!("Flux has not applied {expected} yet, nor anything before it"),
    }
}

/// How a revision is said: a commit or digest as its first 7 hex digits (as git
/// abbreviates them), `main@sha1:f577c28…` as `f577c28`; anything else — a chart
/// version, a tag — whole.
pub fn short_revision(revision: &str) -> &str {
    let digest = digest_part(revision);
    let hex = !digest.is_empty() && digest.bytes().all(|b| b.is_ascii_hexdigit());
    if hex {
        &digest[..digest.len().min(SHORT)]
    } else {
        revision.trim()
    }
}

/// How many hex digits a short revision keeps.
const SHORT: usize = 7;

fn digest_part(revision: &str) -> &str {
    let revision = revision.trim();
    let start = revision
        .rfind(':')
        .or_else(|| revision.rfind('/'))
        .map_or(0, |at| at + 1);
    revision[start..].trim()
}

impl Evaluation {
    fn not_healthy(health: Health, issue: String, revision: Option<String>) -> Self {
        Self {
            health,
            issues: vec![issue],
            revision,
            reapplying: false,
        }
    }
}

/// The fields of a status condition the rules read.
struct Condition<'a> {
    status: &'a str,
    reason: &'a str,
    message: &'a str,
    observed_generation: Option<i64>,
    last_transition: Option<Timestamp>,
}

impl Condition<'_> {
    /// `Reason: message`, or whichever of the two is there.
    fn explanation(&self) -> String {
        match (self.reason.trim(), self.message.trim()) {
            ("", "") => "no reason given".into(),
            (reason, "") => reason.into(),
            ("", message) => message.into(),
            (reason, message) => format!("{reason}: {message}"),
        }
    }
}

fn condition<'a>(object: &'a Value, type_: &str) -> Option<Condition<'a>> {
    let found = object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))?;
    let text = |key| found.get(key).and_then(Value::as_str).unwrap_or_default();
    Some(Condition {
        status: text("status"),
        reason: text("reason"),
        message: text("message"),
        observed_generation: found.get("observedGeneration").and_then(integer),
        last_transition: text("lastTransitionTime").parse().ok(),
    })
}

/// A JSON number as an integer. Kubernetes writes integers, but a decoder that went
/// through floats hands back `1.0`; reading that as "absent" made every object look
/// stale in the reference's fixtures.
fn integer(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| {
        let float = value.as_f64()?;
        let in_range = float.fract() == 0.0 && float.abs() < 2f64.powi(63);
        #[allow(clippy::cast_possible_truncation)] // integral and in range, checked above
        in_range.then_some(float as i64)
    })
}

fn whole_seconds(duration: SignedDuration) -> SignedDuration {
    SignedDuration::from_secs(duration.as_secs())
}

/// The API version Flux serves a kind at, for the kinds Flux defines (ops spec §10.3):
/// `Kustomization`, `HelmRelease` and the source kinds.
pub fn default_api_version(kind: &str) -> Option<&'static str> {
    match kind {
        "Kustomization" => Some("kustomize.toolkit.fluxcd.io/v1"),
        "HelmRelease" => Some("helm.toolkit.fluxcd.io/v2"),
        "GitRepository" | "OCIRepository" | "HelmChart" | "HelmRepository" | "Bucket" => {
            Some("source.toolkit.fluxcd.io/v1")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use hecate_types::Health::{self, *};
    use jiff::{SignedDuration, Timestamp};
    use serde_json::{Value, json};

    use super::{applied_revision, evaluate, revision_matches};

    const NOW: &str = "2025-06-01T12:00:00Z";

    fn now() -> Timestamp {
        NOW.parse().expect("a timestamp")
    }

    /// A Kustomization at generation 2 whose status says what `conditions` say, with a
    /// current top-level observedGeneration unless the test overrides it.
    fn object(conditions: Value) -> Value {
        json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "app", "namespace": "shop", "generation": 2},
            "spec": {"interval": "5m", "path": "./app"},
            "status": {
                "observedGeneration": 2,
                "lastAppliedRevision": "main@sha1:9f8c1a2b3c4d",
                "conditions": conditions,
            },
        })
    }

    fn ready(status: &str, transition: &str) -> Value {
        json!({
            "type": "Ready", "status": status, "reason": "SomeReason",
            "message": "some message", "observedGeneration": 2,
            "lastTransitionTime": transition,
        })
    }

    fn with(mut object: Value, pointer: &str, value: Value) -> Value {
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer with a parent");
        object
            .pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .expect("the parent exists")
            .insert(key.to_string(), value);
        object
    }

    /// Flux's interval reconcile of what it applied says `Ready=Unknown`, reason
    /// `Progressing`, with the last attempt the applied revision (kustomize-controller
    /// v1.9, `reconcile`); any other Progressing is a change under way.
    #[test]
    fn a_routine_reconcile_is_reapplying_and_a_new_revision_is_not() {
        let progressing = json!([{
            "type": "Ready", "status": "Unknown", "reason": "Progressing",
            "message": "Reconciliation in progress", "observedGeneration": 2,
            "lastTransitionTime": "2025-06-01T11:59:59Z",
        }, {
            "type": "Reconciling", "status": "True", "reason": "Progressing",
            "message": "Fetching manifests for revision main@sha1:9f8c1a2b3c4d with a timeout of 5m0s",
        }]);
        let routine = with(
            object(progressing.clone()),
            "/status/lastAttemptedRevision",
            json!("main@sha1:9f8c1a2b3c4d"),
        );
        let newer = with(
            object(progressing.clone()),
            "/status/lastAttemptedRevision",
            json!("main@sha1:00ddba11"),
        );
        let unattempted = object(progressing.clone());
        let other_reason = with(
            routine.clone(),
            "/status/conditions",
            json!([ready("Unknown", "2025-06-01T11:59:59Z")]),
        );
        let helm_release = with(
            with(routine.clone(), "/kind", json!("HelmRelease")),
            "/status",
            json!({"observedGeneration": 2, "lastAttemptedRevision": "1.2.3",
                   "conditions": progressing}),
        );
        let day = SignedDuration::from_hours(24);
        let cases = [
            ("the applied revision again", &routine, None, true),
            ("…waited for, and applied", &routine, Some("9f8c1a2b"), true),
            (
                "…but another is waited for",
                &routine,
                Some("00ddba11"),
                false,
            ),
            ("a newer revision", &newer, None, false),
            ("no attempt recorded", &unattempted, None, false),
            ("Unknown for another reason", &other_reason, None, false),
            (
                "a HelmRelease, which records attempts alone",
                &helm_release,
                None,
                false,
            ),
        ];
        for (case, object, expected, reapplying) in cases {
            let evaluation = evaluate(Some(object), expected, day, now());
            assert_eq!(evaluation.reapplying, reapplying, "{case}");
            assert_eq!(evaluation.health, Progressing, "{case}: the object itself");
        }
    }

    #[test]
    fn the_rules_apply_in_order() {
        let ten_minutes = SignedDuration::from_mins(10);
        let healthy = object(json!([ready("True", "2025-06-01T11:00:00Z")]));
        let failing_long = object(json!([ready("False", "2025-06-01T11:00:00Z")]));
        let failing_briefly = object(json!([ready("False", "2025-06-01T11:55:00Z")]));
        let stalled = object(json!([
            ready("False", "2025-06-01T11:59:00Z"),
            {"type": "Stalled", "status": "True", "reason": "InvalidPath", "message": "path ./app not found"},
        ]));
        // (what, object, expected revision, health, a part of the issue)
        type Case<'a> = (&'a str, Option<Value>, Option<&'a str>, Health, &'a str);
        let cases: Vec<Case> = vec![
            ("absent", None, None, Unknown, "not found"),
            (
                "suspended beats everything else",
                Some(with(stalled.clone(), "/spec/suspend", json!(true))),
                None,
                Unknown,
                "suspended",
            ),
            (
                "stale beats stalled",
                Some(with(
                    with(stalled.clone(), "/metadata/generation", json!(3)),
                    "/status/observedGeneration",
                    json!(2),
                )),
                None,
                Progressing,
                "generation 3 has not been reconciled yet",
            ),
            (
                "no observedGeneration anywhere is not current",
                Some(json!({"metadata": {"generation": 1}, "status": {}})),
                None,
                Progressing,
                "generation 1 has not been reconciled yet",
            ),
            (
                "stalled beats failing",
                Some(stalled),
                None,
                Degraded,
                "stalled: InvalidPath: path ./app not found",
            ),
            (
                "no Ready condition",
                Some(object(json!([]))),
                None,
                Progressing,
                "no Ready condition yet",
            ),
            ("ready", Some(healthy.clone()), None, Healthy, ""),
            (
                "an empty expected revision expects nothing",
                Some(healthy.clone()),
                Some(""),
                Healthy,
                "",
            ),
            (
                "ready at the expected revision",
                Some(healthy.clone()),
                Some("9f8c1a2b"),
                Healthy,
                "",
            ),
            (
                "ready at another revision",
                Some(healthy.clone()),
                Some("0123abcd"),
                Progressing,
                "Flux has not applied 0123abc yet; the last applied is 9f8c1a2",
            ),
            (
                "ready without any revision",
                Some(with(healthy, "/status/lastAppliedRevision", json!(""))),
                Some("0123abcd"),
                Progressing,
                "Flux has not applied 0123abc yet, nor anything before it",
            ),
            (
                "failing for longer than failAfter",
                Some(failing_long),
                None,
                Degraded,
                "not ready for 1h (allowed 10m): SomeReason: some message",
            ),
            (
                "failing for less than failAfter",
                Some(failing_briefly),
                None,
                Progressing,
                "not ready yet: SomeReason: some message",
            ),
            (
                "failing since an unknown time",
                Some(object(json!([{
                    "type": "Ready", "status": "False", "reason": "Boom", "observedGeneration": 2,
                }]))),
                None,
                Progressing,
                "not ready yet: Boom",
            ),
            (
                "Ready=Unknown",
                Some(object(json!([{
                    "type": "Ready", "status": "Unknown", "message": "reconciliation in progress",
                    "observedGeneration": 2,
                }]))),
                None,
                Progressing,
                "reconciling: reconciliation in progress",
            ),
        ];
        for (name, object, expected_revision, health, issue) in cases {
            let evaluation = evaluate(object.as_ref(), expected_revision, ten_minutes, now());
            assert_eq!(evaluation.health, health, "{name}: {evaluation:?}");
            if health == Healthy {
                assert!(evaluation.issues.is_empty(), "{name}: {evaluation:?}");
            } else {
                assert_eq!(evaluation.issues.len(), 1, "{name}: {evaluation:?}");
                assert!(
                    evaluation.issues[0].contains(issue),
                    "{name}: {:?} should contain {issue:?}",
                    evaluation.issues[0]
                );
            }
        }
    }

    #[test]
    fn a_failure_at_an_earlier_revision_is_still_progressing_towards_the_expected_one() {
        let stalled = object(json!([
            ready("False", "2025-06-01T11:00:00Z"),
            {"type": "Stalled", "status": "True", "reason": "HealthCheckFailed", "message": "0 of 2 replicas ready"},
        ]));
        let failed_at = |attempted: &str| {
            with(
                with(
                    stalled.clone(),
                    "/status/lastAppliedRevision",
                    json!("env/prod@sha1:aaaa"),
                ),
                "/status/lastAttemptedRevision",
                json!(attempted),
            )
        };
        let ten_minutes = SignedDuration::from_mins(10);
        // Failed at the revision waited for: the crossing's own failure.
        let own = evaluate(
            Some(&failed_at("env/prod@sha1:bbbb")),
            Some("bbbb"),
            ten_minutes,
            now(),
        );
        assert_eq!(own.health, Degraded, "{own:?}");
        // Failed at an earlier revision: Flux has not tried this one yet.
        let earlier = evaluate(
            Some(&failed_at("env/prod@sha1:bbbb")),
            Some("cccc"),
            ten_minutes,
            now(),
        );
        assert_eq!(earlier.health, Progressing, "{earlier:?}");
        assert!(
            earlier.issues[0]
                .starts_with("Flux has not tried cccc yet; its last attempt, at bbbb, failed: "),
            "{earlier:?}"
        );
        // Long failing at an earlier revision (Ready=False past failAfter, no Stalled).
        let failing = with(
            object(json!([ready("False", "2025-06-01T11:00:00Z")])),
            "/status/lastAttemptedRevision",
            json!("env/prod@sha1:bbbb"),
        );
        let failing = evaluate(Some(&failing), Some("cccc"), ten_minutes, now());
        assert_eq!(failing.health, Progressing, "{failing:?}");
        // No revision waited for: the spec's order, stalled is Degraded.
        let unqualified = evaluate(
            Some(&failed_at("env/prod@sha1:bbbb")),
            None,
            ten_minutes,
            now(),
        );
        assert_eq!(unqualified.health, Degraded, "{unqualified:?}");
    }

    /// What kustomize-controller v1.9.6 wrote once its health check gave up on a
    /// Deployment whose pods could not be scheduled (captured from the real controller
    /// in the end-to-end test; trimmed to the fields read).
    fn health_check_failed_as_flux_writes_it() -> Value {
        json!({
            "metadata": {"generation": 1},
            "spec": {"timeout": "30s"},
            "status": {
                "observedGeneration": 1,
                "lastAppliedRevision": "env/dev@sha1:3be3ea08333589a6c8e7bca0add99e77d8b35a60",
                "lastAttemptedRevision": "env/dev@sha1:0c63e84baf9ef9fdf1d8fc271b76a468da067f11",
                "conditions": [
                    {"type": "Ready", "status": "False", "reason": "HealthCheckFailed",
                     "message": "health check failed after 30.048621516s: timeout waiting for: [Deployment/t-7624-0-dev/app status: 'InProgress']",
                     "observedGeneration": 1, "lastTransitionTime": "2026-12-01T22:25:18Z"},
                    {"type": "Healthy", "status": "False", "reason": "HealthCheckFailed",
                     "message": "health check failed after 30.048621516s: timeout waiting for: [Deployment/t-7624-0-dev/app status: 'InProgress']",
                     "observedGeneration": 1, "lastTransitionTime": "2026-12-01T22:25:18Z"},
                ],
            },
        })
    }

    #[test]
    fn a_failed_health_check_at_the_revision_waited_for_is_degraded_at_once() {
        let object = health_check_failed_as_flux_writes_it();
        let just_now = "2026-12-01T22:25:19Z".parse().unwrap();
        let judged = evaluate(
            Some(&object),
            Some("0c63e84baf9ef9fdf1d8fc271b76a468da067f11"),
            SignedDuration::from_mins(10),
            just_now,
        );
        assert_eq!(judged.health, Health::Degraded, "{judged:?}");
        assert_eq!(
            judged.issues,
            [
                "Flux's health check failed: HealthCheckFailed: health check failed after 30.048621516s: timeout waiting for: [Deployment/t-7624-0-dev/app status: 'InProgress']"
            ]
        );
        // Without a revision to wait for (a Gate's health), the same.
        let judged = evaluate(Some(&object), None, SignedDuration::from_mins(10), just_now);
        assert_eq!(judged.health, Health::Degraded);
    }

    #[test]
    fn a_failed_health_check_of_an_earlier_revision_waits_for_the_next() {
        let object = health_check_failed_as_flux_writes_it();
        let judged = evaluate(
            Some(&object),
            Some("1111111111111111111111111111111111111111"),
            SignedDuration::from_mins(10),
            "2026-12-01T22:25:19Z".parse().unwrap(),
        );
        assert_eq!(judged.health, Health::Progressing, "{judged:?}");
        assert_eq!(
            judged.issues,
            [
                "Flux has not tried 1111111 yet; its last attempt, at 0c63e84, failed: HealthCheckFailed: health check failed after 30.048621516s: timeout waiting for: [Deployment/t-7624-0-dev/app status: 'InProgress']"
            ]
        );
    }

    #[test]
    fn revisions_are_said_short_when_they_are_commits_or_digests() {
        for (revision, said) in [
            (
                "main@sha1:46eeba7a9e0c1f2d3b4a5c6d7e8f90a1b2c3d4e5",
                "46eeba7",
            ),
            (
                "env/prod/f577c28aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "f577c28",
            ),
            ("sha256:0123456789abcdef", "0123456"),
            ("46eeba7a9e0c", "46eeba7"),
            // Short already, or not a hash: whole.
            ("cccc", "cccc"),
            ("env/prod@sha1:bbbb", "bbbb"),
            ("46eeba7", "46eeba7"),
            ("1.20.300-rc.1", "1.20.300-rc.1"),
            ("v1.2.3", "v1.2.3"),
        ] {
            assert_eq!(super::short_revision(revision), said, "{revision}");
        }
    }

    #[test]
    fn integers_written_as_floats_still_count() {
        let object = json!({
            "metadata": {"generation": 1.0},
            "status": {
                "observedGeneration": 1.0,
                "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1.0}],
            },
        });
        let evaluation = evaluate(Some(&object), None, SignedDuration::from_mins(10), now());
        assert_eq!(evaluation.health, Healthy, "{evaluation:?}");
    }

    #[test]
    fn a_fractional_generation_is_no_generation() {
        let object = json!({
            "metadata": {"generation": 1},
            "status": {"observedGeneration": 1.5, "conditions": [{"type": "Ready", "status": "True"}]},
        });
        let evaluation = evaluate(Some(&object), None, SignedDuration::from_mins(10), now());
        assert_eq!(evaluation.health, Progressing, "{evaluation:?}");
    }

    #[test]
    fn the_ready_conditions_own_generation_wins_over_the_top_level_one() {
        let top_level_current = object(json!([{
            "type": "Ready", "status": "True", "observedGeneration": 1,
        }]));
        let evaluation = evaluate(
            Some(&top_level_current),
            None,
            SignedDuration::from_mins(10),
            now(),
        );
        assert_eq!(evaluation.health, Progressing, "{evaluation:?}");

        // A condition observedGeneration of 0 says nothing: fall back to the top level.
        let zero = object(json!([{"type": "Ready", "status": "True", "observedGeneration": 0}]));
        let evaluation = evaluate(Some(&zero), None, SignedDuration::from_mins(10), now());
        assert_eq!(evaluation.health, Healthy, "{evaluation:?}");
    }

    #[test]
    fn revisions_match_by_their_digest_part() {
        let cases = [
            ("main@sha1:9f8c1a2b3c4d", "9f8c1a2b", true),
            ("9f8c1a2b", "main@sha1:9f8c1a2b3c4d", true),
            ("main/9f8c1a2b3c4d", "9f8c1a2b", true),
            ("main/9f8c1a2b3c4d", "main@sha1:9f8c1a2b3c4d", true),
            ("sha256:abcd", "abcd", true),
            ("6.3.5", "6.3.5", true),
            (" 6.3.5 ", "6.3.5", true),
            ("latest@sha256:abcd1234", "sha256:abcd", true),
            ("main@sha1:9f8c1a2b", "0123abcd", false),
            ("6.3.5", "6.3.4", false),
            ("", "", false),
            ("", "abcd", false),
            ("abcd", "", false),
            ("main@sha1:", "main@sha1:", false),
            ("sha256:", "abcd", false),
        ];
        for (a, b, matches) in cases {
            assert_eq!(revision_matches(a, b), matches, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn the_applied_revision_is_the_first_field_that_has_one() {
        let cases = [
            (
                json!({"lastAppliedRevision": "a", "lastAttemptedRevision": "b", "artifact": {"revision": "c"}}),
                Some("a"),
            ),
            (
                json!({"lastAppliedRevision": "", "lastAttemptedRevision": "b", "artifact": {"revision": "c"}}),
                Some("b"),
            ),
            (json!({"artifact": {"revision": "c"}}), Some("c")),
            (
                json!({"history": [{"chartVersion": "6.3.5", "digest": "sha256:d"}, {"chartVersion": "6.3.4"}]}),
                Some("6.3.5"),
            ),
            (
                json!({"history": [{"digest": "sha256:d"}]}),
                Some("sha256:d"),
            ),
            (json!({"history": []}), None),
            (json!({}), None),
        ];
        for (status, revision) in cases {
            let object = json!({ "status": status });
            assert_eq!(applied_revision(&object).as_deref(), revision, "{object}");
        }
    }
}
