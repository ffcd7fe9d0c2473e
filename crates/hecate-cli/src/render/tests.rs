//! Every rendering over fixed data, locked by reviewed snapshots.

use hecate_ops::model::{Day, GateSummary, NamespaceOverview, Totals};
use hecate_ops::rules::eligibility::Code;
use hecate_ops::{
    AuditEntry, AuditKind, Blocker, BlockerKind, Explanation, Overview, State, Waiting,
};
use hecate_types::{
    Admission, Artifact, Beacon, BeaconSpec, BeaconStatus, Bundle, BundleOrigin, BundleSpec,
    Condition, ConditionStatus, EvidenceRef, Gate, GateOccupant, GateSpec, GateStatus, Health,
    HealthReport, ImageWatch, Passage, PassagePhase, PassageSpec, PassageStatus, Time, WatchSource,
};
use jiff::{SignedDuration, Timestamp};
use kube::api::ObjectMeta;

use super::*;
use crate::invocation::Invocation;
use crate::output::Style;

fn now() -> Timestamp {
    "2026-08-11T12:00:00Z".parse().unwrap()
}

fn ago(minutes: i64) -> Option<Time> {
    Some(Time(now() - SignedDuration::from_mins(minutes)))
}

fn meta(name: &str, minutes: i64) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some("acme".into()),
        creation_timestamp: ago(minutes),
        ..ObjectMeta::default()
    }
}

fn summary(
    name: &str,
    state: State,
    summary: &str,
    health: Health,
    current: Option<&str>,
) -> GateSummary {
    GateSummary {
        name: name.into(),
        state,
        summary: summary.into(),
        blockers: vec![],
        health,
        issues: vec![],
        current: current.map(Into::into),
        eligible: 0,
        running: None,
        suspended: false,
    }
}

fn overview() -> Overview {
    Overview {
        namespaces: vec![
            NamespaceOverview {
                namespace: "acme".into(),
                gates: vec![
                    summary(
                        "dev",
                        State::Ready,
                        "1 Bundle eligible; the Gate crosses automatically and will take app-2 next",
                        Health::Healthy,
                        Some("app-1"),
                    ),
                    summary(
                        "production",
                        State::Blocked,
                        "1 Bundle cannot cross: awaiting approval",
                        Health::Degraded,
                        None,
                    ),
                    summary(
                        "staging",
                        State::Crossing,
                        "crossing app-1, waiting on flux-wait",
                        Health::Progressing,
                        Some("app-0"),
                    ),
                ],
            },
            NamespaceOverview {
                namespace: "team-b".into(),
                gates: vec![summary(
                    "dev",
                    State::Idle,
                    "no Bundle from any admitted Beacon yet",
                    Health::Unknown,
                    None,
                )],
            },
        ],
        totals: Totals {
            gates: 4,
            ..Totals::default()
        },
        activity: vec![Day {
            date: "2026-08-11".into(),
            crossed: 2,
            failed: 0,
        }],
    }
}

fn explanation() -> Explanation {
    Explanation {
        gate: "production".into(),
        namespace: "acme".into(),
        state: State::Failed,
        summary: "the last crossing of app-1 failed at git-push [GitAuthFailed]: the host rejected our credentials".into(),
        blockers: vec![
            Blocker {
                kind: BlockerKind::PassageFailed,
                detail: "the last crossing of app-1 failed at git-push [GitAuthFailed]: the host rejected our credentials".into(),
                fix: "kubectl -n acme describe passage production-3".into(),
                until: None,
            },
            Blocker {
                kind: BlockerKind::Manual,
                detail: "spec.auto is false: someone other than carol, who approved app-1, must request the crossing".into(),
                fix: "hecate promote production --bundle app-1 -n acme".into(),
                until: None,
            },
        ],
        current: Some("app-0".into()),
        eligible: vec!["app-1".into()],
        waiting: vec![Waiting { bundle: "app-2".into(), reason: "has not cleared staging".into(), kind: Some(Code::UpstreamNotCleared) }],
        health: Some(Health::Healthy),
        evidence: None,
    }
}

#[test]
fn status_tables() {
    let mut one = overview();
    one.namespaces.truncate(1);
    insta::assert_snapshot!("status", status(&one, false, "acme", &Style::plain()));
    insta::assert_snapshot!(
        "status-all-namespaces",
        status(&overview(), true, "acme", &Style::plain())
    );
    let empty = Overview {
        namespaces: vec![],
        totals: Totals::default(),
        activity: vec![],
    };
    assert_eq!(
        status(&empty, false, "acme", &Style::plain()),
        "no Gates in acme\n"
    );
    assert_eq!(
        status(&empty, true, "acme", &Style::plain()),
        "no Gates in any namespace you may read\n"
    );
}

#[test]
fn explain_text() {
    insta::assert_snapshot!("explain", explain(&explanation(), &Style::plain()));
    let kubectl = Style {
        invocation: Invocation::from_argv0("kubectl-hecate"),
        ..Style::plain()
    };
    assert!(
        explain(&explanation(), &kubectl)
            .contains("→ kubectl hecate promote production --bundle app-1 -n acme")
    );
}

#[test]
fn explain_text_cuts_long_lists() {
    let mut x = explanation();
    x.eligible = (0..20).map(|i| format!("b{i}")).collect();
    x.waiting = (0..12)
        .map(|i| Waiting {
            bundle: format!("w{i}"),
            reason: "awaiting approval".into(),
            kind: Some(Code::AwaitingApproval),
        })
        .collect();
    insta::assert_snapshot!("explain-long", explain(&x, &Style::plain()));
}

#[test]
fn structured_output_is_the_value() {
    insta::assert_json_snapshot!("explain-json", explanation());
    insta::assert_yaml_snapshot!("explain-yaml", explanation());
}

#[test]
fn list_tables() {
    let gate = Gate {
        metadata: meta("production", 60 * 24 * 3),
        spec: GateSpec {
            admits: vec![Admission {
                from: BundleOrigin {
                    beacon: "app".into(),
                },
                after: vec!["staging".into()],
                require_approval: true,
            }],
            ..GateSpec::default()
        },
        status: Some(GateStatus {
            current: Some(GateOccupant {
                bundle: "app-1".into(),
                digest: String::new(),
                passage: String::new(),
                entered_at: Time(now()),
                actor: String::new(),
                verified: None,
            }),
            health: Some(HealthReport {
                status: Health::Healthy,
                issues: vec![],
                details: None,
                observed_at: None,
                since: None,
            }),
            ..GateStatus::default()
        }),
    };
    let mut dev = Gate {
        metadata: meta("dev", 90),
        spec: GateSpec {
            admits: vec![Admission {
                from: BundleOrigin {
                    beacon: "app".into(),
                },
                ..Admission::default()
            }],
            auto: true,
            suspend: true,
            ..GateSpec::default()
        },
        status: None,
    };
    dev.spec.auto = true;
    insta::assert_snapshot!("gates", gates(&[dev, gate], "acme", now(), &Style::plain()));

    let bundle = Bundle {
        metadata: meta("app-0151d1d6c4cf", 5),
        spec: BundleSpec {
            beacon: "app".into(),
            digest: "0151d1d6c4cf".into(),
            alias: "v1.2.0".into(),
            artifacts: vec![
                Artifact::image("ghcr.io/acme/app", "1.2.0", "sha256:aaa"),
                Artifact::chart("oci://ghcr.io/acme/charts/app", "", "1.2.0"),
                Artifact::commit("https://github.com/acme/config", "0123456789abcdef0123"),
            ],
        },
        status: None,
    };
    insta::assert_snapshot!(
        "bundles",
        bundles(&[bundle], "acme", now(), &Style::plain())
    );

    let passage = |name: &str, phase: PassagePhase, actor: &str, minutes: i64| Passage {
        metadata: meta(name, minutes),
        spec: PassageSpec {
            gate: "staging".into(),
            bundle: "app-1".into(),
            actor: actor.into(),
            ..PassageSpec::default()
        },
        status: Some(PassageStatus {
            phase: Some(phase),
            ..PassageStatus::default()
        }),
    };
    let list = [
        passage("staging-2", PassagePhase::Running, "alice", 1),
        passage("staging-1", PassagePhase::Failed, "controller", 300),
    ];
    insta::assert_snapshot!("passages", passages(&list, "acme", now(), &Style::plain()));

    let beacon = Beacon {
        metadata: meta("app", 60 * 24 * 40),
        spec: BeaconSpec {
            watch: vec![WatchSource {
                image: Some(ImageWatch {
                    repo: "ghcr.io/acme/app".into(),
                    ..ImageWatch::default()
                }),
                ..WatchSource::default()
            }],
            ..BeaconSpec::default()
        },
        status: Some(BeaconStatus {
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: ConditionStatus::True,
                observed_generation: 1,
                last_transition_time: Time(now()),
                reason: "Discovered".into(),
                message: String::new(),
            }],
            latest_bundle: "app-0151d1d6c4cf".into(),
            ..BeaconStatus::default()
        }),
    };
    insta::assert_snapshot!(
        "beacons",
        beacons(&[beacon], "acme", now(), &Style::plain())
    );

    assert_eq!(
        gates(&[], "acme", now(), &Style::plain()),
        "no Gates in acme\n"
    );
    assert_eq!(
        bundles(&[], "acme", now(), &Style::plain()),
        "no Bundles in acme\n"
    );
    assert_eq!(
        passages(&[], "acme", now(), &Style::plain()),
        "no Passages in acme\n"
    );
    assert_eq!(
        beacons(&[], "acme", now(), &Style::plain()),
        "no Beacons in acme\n"
    );
}

#[test]
fn audit_table() {
    let entry = |minutes: i64, kind: AuditKind, actor: &str, detail: &str| AuditEntry {
        at: ago(minutes).unwrap(),
        kind,
        gate: "production".into(),
        bundle: "app-1".into(),
        digest: String::new(),
        actor: actor.into(),
        passage: String::new(),
        detail: detail.into(),
        verified: None,
        evidence: None,
    };
    let mut crossed = entry(10, AuditKind::Crossed, "bob", "");
    crossed.evidence = Some(EvidenceRef {
        trail: "91b2ffff".into(),
        verdict: "approve".into(),
        ..EvidenceRef::default()
    });
    let entries = [
        crossed,
        entry(20, AuditKind::Aborted, "alice", ""),
        entry(
            30,
            AuditKind::Refused,
            "bob",
            "not compliant: segregation-of-duties",
        ),
        entry(40, AuditKind::Approved, "carol", ""),
    ];
    insta::assert_snapshot!("audit", audit(&entries, "acme", &Style::plain()));
    assert_eq!(
        audit(&[], "acme", &Style::plain()),
        "nothing has happened in acme yet\n"
    );
}

#[test]
fn action_lines() {
    let promote = ActionResult {
        action: "promote".into(),
        namespace: "acme".into(),
        gate: "staging".into(),
        bundle: "b1".into(),
        passage: "staging-3".into(),
        actor: "bob".into(),
        ..ActionResult::default()
    };
    assert_eq!(
        action_line(&promote),
        "crossing b1 through staging as staging-3\n"
    );
    insta::assert_json_snapshot!("promote-json", promote);
    let approve = ActionResult {
        action: "approve".into(),
        namespace: "acme".into(),
        gate: "production".into(),
        bundle: "b1".into(),
        actor: "carol".into(),
        recorded: Some(true),
        ..ActionResult::default()
    };
    assert_eq!(
        action_line(&approve),
        "b1 approved for production by carol\n"
    );
    let again = ActionResult {
        recorded: Some(false),
        ..approve
    };
    assert_eq!(
        action_line(&again),
        "b1 was already approved for production by carol\n"
    );
}

#[test]
fn ages_read_like_kubectl() {
    for (minutes, want) in [
        (0, "0s"),
        (1, "60s"),
        (5, "5m"),
        (119, "119m"),
        (120, "2h"),
        (60 * 47, "47h"),
        (60 * 48, "2d"),
    ] {
        assert_eq!(age(ago(minutes).as_ref(), now()), want, "{minutes}m");
    }
    assert_eq!(age(None, now()), "-");
}
