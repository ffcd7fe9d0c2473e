//! The lessons of Flux's real status shapes (spec controller.md §6.4), checked against
//! the fixtures in `testdata/flux-v*/` — every version directory, every lesson.
//!
//! The fixtures are JSON files rather than `json!` values so that they read like the
//! objects Flux writes and so that a real capture can be dropped in beside them as a
//! new version directory; `testdata/README.md` says how they were made. Every judgement
//! pins `now` to the fixture's own `lastTransitionTime`, never the wall clock: a test
//! that compares captured times with today breaks the day after capture.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hecate_types::Health;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use hecate_ops::rules::flux::evaluate;

/// The objects every version directory holds.
const FILES: [&str; 9] = [
    "gitrepository-failing.json",
    "gitrepository-ready.json",
    "helmrelease-failing.json",
    "helmrelease-ready.json",
    "helmrepository-failing.json",
    "helmrepository-ready.json",
    "kustomization-failing.json",
    "kustomization-ready.json",
    "ocirepository-failing.json",
];

/// Where each ready kind keeps the revision it applied (§6.3).
const REVISION_FIELDS: [(&str, &str); 4] = [
    ("GitRepository", "/status/artifact/revision"),
    ("HelmRepository", "/status/artifact/revision"),
    ("Kustomization", "/status/lastAppliedRevision"),
    ("HelmRelease", "/status/lastAttemptedRevision"),
];

const SOURCE_KINDS: [&str; 3] = ["GitRepository", "HelmRepository", "OCIRepository"];

fn version_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/flux/testdata");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("the testdata directory")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no fixture directories in {root:?}");
    dirs
}

/// Every fixture of every version, with a label for messages.
fn fixtures(state: &str) -> Vec<(String, Value)> {
    let mut all = Vec::new();
    for dir in version_dirs() {
        for file in FILES.iter().filter(|f| f.contains(state)) {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).expect("a fixture file");
            let object: Value = serde_json::from_str(&text).expect("a JSON fixture");
            all.push((path.display().to_string(), object));
        }
    }
    assert!(!all.is_empty());
    all
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn kind(object: &Value) -> &str {
    text(object, "/kind")
}

fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// The fixture's own Ready lastTransitionTime plus an hour.
fn an_hour_after_transition(object: &Value) -> Timestamp {
    let ready = condition(object, "Ready").expect("a Ready condition");
    let at: Timestamp = ready["lastTransitionTime"]
        .as_str()
        .expect("a lastTransitionTime")
        .parse()
        .expect("an RFC 3339 time");
    at + SignedDuration::from_hours(1)
}

const DAY: SignedDuration = SignedDuration::from_hours(24);

#[test]
fn every_version_directory_holds_the_same_nine_objects() {
    let expected: BTreeSet<String> = FILES.iter().map(|f| f.to_string()).collect();
    for dir in version_dirs() {
        let found: BTreeSet<String> = std::fs::read_dir(&dir)
            .expect("a version directory")
            .map(|entry| {
                entry
                    .expect("a directory entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(found, expected, "{dir:?}");
    }
}

/// Lesson 1: never-reconciled objects say `observedGeneration: -1` at the top while
/// their conditions describe generation 1; judged by the condition, they are current,
/// so their failure shows instead of a forever "not observed yet".
#[test]
fn never_reconciled_failures_are_judged_by_the_ready_conditions_generation() {
    for (name, object) in fixtures("failing") {
        assert_eq!(object["status"]["observedGeneration"], json!(-1), "{name}");
        let ready = condition(&object, "Ready").expect("a Ready condition");
        assert_eq!(
            (&ready["status"], &ready["observedGeneration"]),
            (&json!("False"), &json!(1)),
            "{name}"
        );
        let reconciling = condition(&object, "Reconciling").expect("a Reconciling condition");
        let retry_reason = if kind(&object) == "HelmRelease" {
            "Progressing"
        } else {
            "ProgressingWithRetry"
        };
        assert_eq!(
            (&reconciling["status"], &reconciling["reason"]),
            (&json!("True"), &json!(retry_reason)),
            "{name}"
        );
        if SOURCE_KINDS.contains(&kind(&object)) {
            let fetch_failed = condition(&object, "FetchFailed").expect("FetchFailed");
            assert_eq!(fetch_failed["status"], "True", "{name}");
        }

        let evaluation = evaluate(Some(&object), None, DAY, an_hour_after_transition(&object));
        assert_eq!(evaluation.health, Health::Progressing, "{name}");
        assert!(
            !evaluation.issues[0].contains("not been reconciled"),
            "{name}: judged stale: {:?}",
            evaluation.issues
        );
    }
}

/// Lesson 2: the genuine stale case is still caught.
#[test]
fn a_ready_object_at_a_newer_generation_is_progressing() {
    for (name, mut object) in fixtures("ready") {
        let now = an_hour_after_transition(&object);
        assert_eq!(
            evaluate(Some(&object), None, DAY, now).health,
            Health::Healthy,
            "{name}"
        );
        object["metadata"]["generation"] = json!(2);
        let evaluation = evaluate(Some(&object), None, DAY, now);
        assert_eq!(evaluation.health, Health::Progressing, "{name}");
        assert!(
            evaluation.issues[0].contains("generation 2"),
            "{name}: {evaluation:?}"
        );
    }
}

/// Lesson 3: failing objects wait out `failAfter`, then are Degraded.
#[test]
fn failing_objects_are_progressing_until_fail_after_then_degraded() {
    for (name, object) in fixtures("failing") {
        let now = an_hour_after_transition(&object);
        let within = evaluate(Some(&object), None, DAY, now);
        assert_eq!(within.health, Health::Progressing, "{name}");
        let past = evaluate(Some(&object), None, SignedDuration::from_nanos(1), now);
        assert_eq!(past.health, Health::Degraded, "{name}");
    }
}

/// Lesson 4: each kind reports its revision in its own field, and that is the one.
#[test]
fn ready_objects_report_the_revision_of_their_kinds_field() {
    let ready = fixtures("ready");
    assert_eq!(ready.len() % REVISION_FIELDS.len(), 0);
    for (name, object) in ready {
        let field = REVISION_FIELDS
            .iter()
            .find(|(k, _)| *k == kind(&object))
            .map(|(_, field)| *field)
            .expect("a kind with a known revision field");
        let revision = text(&object, field);
        assert!(!revision.is_empty(), "{name}: nothing at {field}");
        let now = an_hour_after_transition(&object);
        let evaluation = evaluate(Some(&object), Some(revision), DAY, now);
        assert_eq!(evaluation.revision.as_deref(), Some(revision), "{name}");
        assert_eq!(evaluation.health, Health::Healthy, "{name}");

        let elsewhere = evaluate(Some(&object), Some("0000000000ff"), DAY, now);
        assert_eq!(elsewhere.health, Health::Progressing, "{name}");

        if kind(&object) == "HelmRelease" {
            assert_eq!(
                revision,
                text(&object, "/status/history/0/chartVersion"),
                "{name}"
            );
            assert!(
                object.pointer("/status/lastAppliedRevision").is_none(),
                "{name}"
            );
        }
    }
}

/// Lesson 4, the ordering: a HelmRelease with only `history` still has a revision.
#[test]
fn a_helmrelease_with_only_history_reports_its_chart_version() {
    let object = json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "api", "namespace": "shop", "generation": 3},
        "status": {
            "observedGeneration": 3,
            "conditions": [{
                "type": "Ready", "status": "True", "reason": "UpgradeSucceeded",
                "observedGeneration": 3, "lastTransitionTime": "2025-10-14T09:13:20Z",
            }],
            "history": [
                {"chartVersion": "6.3.5", "digest": "sha256:7a1d2c3b", "version": 2},
                {"chartVersion": "6.3.4", "digest": "sha256:11aa22bb", "version": 1},
            ],
        },
    });
    let now: Timestamp = "2025-10-14T10:13:20Z".parse().expect("a timestamp");
    let evaluation = evaluate(Some(&object), Some("6.3.5"), DAY, now);
    assert_eq!(evaluation.revision.as_deref(), Some("6.3.5"));
    assert_eq!(evaluation.health, Health::Healthy);
}

/// Lesson 5: a failing source reports no revision, so it satisfies no expectation.
#[test]
fn failing_objects_report_no_revision() {
    for (name, object) in fixtures("failing") {
        let now = an_hour_after_transition(&object);
        let evaluation = evaluate(Some(&object), Some("b6b680fe507b"), DAY, now);
        assert_eq!(evaluation.revision, None, "{name}");
        assert_ne!(evaluation.health, Health::Healthy, "{name}");
    }
}

/// Lesson 7: whatever is not Healthy says why — a never-reconciled failure with the
/// error Flux reported.
#[test]
fn failures_explain_themselves_with_the_real_error() {
    for (name, object) in fixtures("failing") {
        let message = condition(&object, "Ready").expect("Ready")["message"]
            .as_str()
            .expect("a message")
            .to_string();
        let now = an_hour_after_transition(&object);
        for fail_after in [DAY, SignedDuration::from_nanos(1)] {
            let evaluation = evaluate(Some(&object), None, fail_after, now);
            assert!(
                evaluation
                    .issues
                    .iter()
                    .any(|issue| issue.contains(&message)),
                "{name}: {:?} lacks {message:?}",
                evaluation.issues
            );
        }
    }
}
