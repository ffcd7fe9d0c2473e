//! Every rendering over fixed data, locked by reviewed snapshots.

use hecate_ops::model::Remedy;
use hecate_ops::rules::eligibility::Code;
use hecate_ops::{AuditEntry, AuditKind, Blocker, BlockerKind, Explanation, State, Waiting};
use hecate_types::{
    Admission, Artifact, Beacon, BeaconSpec, BeaconStatus, Bundle, BundleOrigin, BundleSpec,
    Condition, ConditionStatus, EvidenceRef, Gate, GateOccupant, GateSpec, GateStatus, Health,
    HealthReport, ImageWatch, Passage, PassagePhase, PassageSpec, PassageStatus, Time,
    VerificationPhase, VerificationStatus, VerifierStatus, WatchSource,
};
use jiff::{SignedDuration, Timestamp};
use kube::api::ObjectMeta;

use super::*;
use crate::invocation::Invocation;
use crate::output::Columns::{Narrow, Wide};
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

/// One Gate's explanation as `hecate status` shows it: state, current, health, summary.
fn gate_status(
    namespace: &str,
    name: &str,
    state: State,
    summary: &str,
    health: Option<Health>,
    current: Option<&str>,
) -> Explanation {
    Explanation {
        gate: name.into(),
        namespace: namespace.into(),
        state,
        summary: summary.into(),
        blockers: vec![],
        current: current.map(Into::into),
        eligible: vec![],
        ahead: 0,
        waiting: vec![],
        health,
        evidence: None,
        crossing: None,
        failed_before: vec![],
        windows: vec![],
        versions: [("app-0", "v1.0.0"), ("app-1", "1.1.0")]
            .into_iter()
            .map(|(b, v)| (b.to_string(), v.to_string()))
            .collect(),
        left_behind: None,
    }
}

/// Two namespaces: `acme` with three Gates, `team-b` with one that has reported no
/// health yet.
fn statuses() -> Vec<Explanation> {
    vec![
        gate_status(
            "acme",
            "dev",
            State::Ready,
            "1 Bundle eligible; the Gate crosses automatically and will take app-2 next",
            Some(Health::Healthy),
            Some("app-1"),
        ),
        gate_status(
            "acme",
            "production",
            State::Blocked,
            "1 Bundle cannot cross: awaiting approval",
            Some(Health::Degraded),
            None,
        ),
        gate_status(
            "acme",
            "staging",
            State::Crossing,
            "crossing app-1, waiting on flux-wait",
            Some(Health::Progressing),
            Some("app-0"),
        ),
        gate_status(
            "team-b",
            "dev",
            State::Idle,
            "no Bundle from any admitted Beacon yet",
            None,
            None,
        ),
    ]
}

fn explanation() -> Explanation {
    Explanation {
        gate: "production".into(),
        namespace: "acme".into(),
        state: State::Failed,
        summary: "the last crossing of app-1 failed at git-push [GitAuthFailed]: the host rejected our credentials".into(),
        blockers: vec![
            Blocker::new(
                BlockerKind::PassageFailed,
                "the last crossing of app-1 failed at git-push [GitAuthFailed]: the host rejected our credentials",
                Some(Remedy::InspectPassage { passage: "production-3".into() }),
                "acme",
            ),
            Blocker::new(
                BlockerKind::Manual,
                "spec.auto is false: someone other than carol, who approved app-1, must request the crossing",
                Some(Remedy::Promote { gate: "production".into(), bundle: "app-1".into() }),
                "acme",
            ),
        ],
        current: Some("app-0".into()),
        eligible: vec!["app-1".into()],
        ahead: 1,
        waiting: vec![Waiting {
            bundle: "app-2".into(),
            reason: "has not cleared staging".into(),
            kind: Some(Code::UpstreamNotCleared),
            action: Some(Remedy::PromoteUpstream { gate: "staging".into(), bundle: "app-2".into() }),
            approvals: None,
            until: None,
        }],
        health: Some(Health::Healthy),
        evidence: None,
        crossing: None,
        failed_before: vec![],
        windows: vec![],
        // app-2 has no version on record: it is named alone.
        versions: [("app-0", "v1.0.0"), ("app-1", "v1.1.0")]
            .into_iter()
            .map(|(b, v)| (b.to_string(), v.to_string()))
            .collect(),
        left_behind: None,
    }
}

/// The versions the status and passage tables name: one Bundle the Beacon wrote a
/// version for, one derived again from its artifacts.
fn versions() -> Versions {
    let bundle = |name: &str, alias: &str| Bundle {
        metadata: meta(name, 30),
        spec: BundleSpec {
            beacon: "app".into(),
            alias: alias.into(),
            artifacts: vec![Artifact::image("ghcr.io/acme/app", "1.1.0", "sha256:aaa")],
            ..BundleSpec::default()
        },
        status: None,
    };
    super::versions(&[bundle("app-0", "v1.0.0"), bundle("app-1", "")])
}

#[test]
fn status_tables() {
    let all = statuses();
    insta::assert_snapshot!(
        "status",
        status(&all[..3], false, "acme", Narrow, &Style::plain())
    );
    insta::assert_snapshot!(
        "status-all-namespaces",
        status(&all, true, "acme", Narrow, &Style::plain())
    );
    assert_eq!(
        status(&[], false, "acme", Narrow, &Style::plain()),
        "no Gates in acme\n"
    );
    assert_eq!(
        status(&[], true, "acme", Narrow, &Style::plain()),
        "no Gates in any namespace you may read\n"
    );

    // Wide: how many could cross, the crossing under way, what stands in the way.
    let mut wide = all[..3].to_vec();
    wide[0].eligible = vec!["app-2".into()];
    wide[1].blockers = explanation().blockers;
    wide[2].crossing = Some(hecate_ops::model::CrossingNow {
        rollout: None,
        passage: "staging-4".into(),
        bundle: "app-1".into(),
        created_at: ago(3),
        started_at: ago(3),
        stalled: false,
        step: None,
    });
    insta::assert_snapshot!(
        "status-wide",
        status(&wide, false, "acme", Wide, &Style::plain())
    );
    // Wide is never cut to the terminal; the plain table is.
    let narrow = Style {
        width: Some(60),
        ..Style::plain()
    };
    assert!(
        status(&wide, false, "acme", Narrow, &narrow)
            .lines()
            .all(|l| l.chars().count() <= 60)
    );
    assert_eq!(
        status(&wide, false, "acme", Wide, &narrow),
        status(&wide, false, "acme", Wide, &Style::plain())
    );
    assert_eq!(
        status(&[], false, "acme", Wide, &Style::plain()),
        "no Gates in acme\n"
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
            action: Some(Remedy::Approve {
                gate: "production".into(),
                bundle: format!("w{i}"),
                from: vec![],
            }),
            approvals: None,
            until: None,
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
                approvals: None,
            }],
            passage: Some(hecate_types::PassageTemplate {
                steps: vec![
                    hecate_types::Step {
                        uses: "git-push".into(),
                        ..hecate_types::Step::default()
                    },
                    hecate_types::Step {
                        uses: "flux-wait".into(),
                        alias: "rollout".into(),
                        ..hecate_types::Step::default()
                    },
                ],
            }),
            windows: vec![hecate_types::Window {
                schedule: "0 9 * * 1-5".into(),
                duration: "8h".into(),
                ..hecate_types::Window::default()
            }],
            ..GateSpec::default()
        },
        status: Some(GateStatus {
            active_passage: "production-2".into(),
            eligible: vec!["app-2".into(), "app-3".into()],
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
    let staged = [
        StagedGate {
            gate: dev,
            stage: hecate_ops::model::Stage::default(),
        },
        StagedGate {
            gate,
            stage: hecate_ops::model::Stage {
                index: 2,
                after: vec!["staging".into()],
                ..hecate_ops::model::Stage::default()
            },
        },
    ];
    insta::assert_snapshot!(
        "gates",
        gates(&staged, "acme", now(), Narrow, &Style::plain())
    );
    insta::assert_snapshot!(
        "gates-wide",
        gates(&staged, "acme", now(), Wide, &Style::plain())
    );

    let bundle = Bundle {
        metadata: meta("app-0151d1d6c4cf", 5),
        spec: BundleSpec {
            beacon: "app".into(),
            digest: "0151d1d6c4cf".into(),
            alias: "v1.2.0".into(),
            artifacts: vec![
                Artifact::image("ghcr.io/acme/app", "1.2.0", "sha256:aaa"),
                Artifact::chart("oci://ghcr.io/acme/charts/app", "", "1.2.0"),
                Artifact {
                    commit: Some(hecate_types::CommitArtifact {
                        repo: "https://github.com/acme/config".into(),
                        sha: "0123456789abcdef0123".into(),
                        message: "config: two more replicas for the sale".into(),
                        author: "Ann Example <ann@example.com>".into(),
                        ..hecate_types::CommitArtifact::default()
                    }),
                    ..Artifact::default()
                },
            ],
        },
        status: Some(hecate_types::BundleStatus {
            cleared: ["dev", "staging"]
                .into_iter()
                .map(|gate| hecate_types::GateCrossing {
                    gate: gate.into(),
                    passage: format!("{gate}-1"),
                    at: Time(now()),
                    actor: String::new(),
                    reason: String::new(),
                })
                .collect(),
            blocked: vec![],
            approved_for: vec![hecate_types::BundleApproval {
                gate: "production".into(),
                actor: "carol".into(),
                at: Time(now()),
            }],
            ..hecate_types::BundleStatus::default()
        }),
    };
    insta::assert_snapshot!(
        "bundles",
        bundles(
            std::slice::from_ref(&bundle),
            "acme",
            now(),
            Narrow,
            &Style::plain()
        )
    );
    insta::assert_snapshot!(
        "bundles-wide",
        bundles(&[bundle], "acme", now(), Wide, &Style::plain())
    );

    let passage = |name: &str, phase: PassagePhase, actor: &str, minutes: i64| Passage {
        metadata: meta(name, minutes),
        spec: PassageSpec {
            gate: "staging".into(),
            bundle: "app-1".into(),
            actor: actor.into(),
            steps: ["git-push", "flux-wait"]
                .into_iter()
                .map(|uses| hecate_types::Step {
                    uses: uses.into(),
                    ..hecate_types::Step::default()
                })
                .collect(),
            ..PassageSpec::default()
        },
        status: Some(PassageStatus {
            phase: Some(phase),
            ..PassageStatus::default()
        }),
    };
    let mut running = passage("staging-2", PassagePhase::Running, "alice", 1);
    if let Some(status) = running.status.as_mut() {
        status.started_at = ago(1);
        status.current_step = 1;
        status.message = "waiting for Flux to apply 1.2.0".into();
    }
    let mut failed = passage("staging-1", PassagePhase::Failed, "controller", 300);
    if let Some(status) = failed.status.as_mut() {
        status.started_at = ago(300);
        status.finished_at = ago(290);
        status.message = "git-push: the host rejected our credentials".into();
    }
    let pending = passage("staging-3", PassagePhase::Pending, "bob", 0);
    // Three crossings that landed: one being verified, one verified, one whose
    // verification said no (DECISION 139); the record as the controller writes it.
    let landed = |name: &str, minutes: i64, verification: VerificationStatus| {
        let mut p = passage(name, PassagePhase::Succeeded, "bob", minutes);
        p.spec.gate = "production".into();
        if let Some(status) = p.status.as_mut() {
            status.started_at = ago(minutes);
            status.finished_at = ago(minutes - 1);
            status.current_step = 1;
            status.verification = Some(verification);
        }
        p
    };
    let prometheus =
        |phase: VerificationPhase, passes: i32, failures: i32, message: &str| VerifierStatus {
            uses: "prometheus".into(),
            phase,
            passes,
            failures,
            inconclusive: 0,
            last_value: "0.002".into(),
            last_look_at: ago(1),
            next_look_at: (phase == VerificationPhase::Verifying).then(|| ago(0).unwrap()),
            message: message.into(),
            restarts: Vec::new(),
        };
    let verifying = landed(
        "production-4",
        4,
        VerificationStatus {
            phase: VerificationPhase::Verifying,
            started_at: ago(3),
            finished_at: None,
            message: String::new(),
            verifiers: vec![prometheus(VerificationPhase::Verifying, 2, 0, "")],
        },
    );
    let verified = landed(
        "production-3",
        60,
        VerificationStatus {
            phase: VerificationPhase::Verified,
            started_at: ago(59),
            finished_at: ago(55),
            message: "every verification passed".into(),
            verifiers: vec![prometheus(VerificationPhase::Verified, 3, 0, "")],
        },
    );
    let unverified = landed(
        "production-2",
        120,
        VerificationStatus {
            phase: VerificationPhase::Failed,
            started_at: ago(119),
            finished_at: ago(110),
            message: "prometheus verification said no: error rate 0.2 > 0.01".into(),
            verifiers: vec![prometheus(
                VerificationPhase::Failed,
                0,
                2,
                "error rate 0.2 > 0.01",
            )],
        },
    );
    let list = [running, verifying, verified, unverified, failed];
    insta::assert_snapshot!(
        "passages",
        passages(&list, &versions(), "acme", now(), Narrow, &Style::plain())
    );
    insta::assert_snapshot!(
        "passages-wide",
        passages(
            &[pending, list[0].clone(), list[1].clone(), list[4].clone()],
            &versions(),
            "acme",
            now(),
            Wide,
            &Style::plain()
        )
    );

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
            interval: Some("5m".into()),
            ..BeaconSpec::default()
        },
        status: Some(BeaconStatus {
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: ConditionStatus::True,
                observed_generation: 1,
                last_transition_time: Time(now()),
                reason: "Discovered".into(),
                message: "1 artifact resolved".into(),
            }],
            latest_bundle: "app-0151d1d6c4cf".into(),
            last_polled: ago(2),
            ..BeaconStatus::default()
        }),
    };
    insta::assert_snapshot!(
        "beacons",
        beacons(
            std::slice::from_ref(&beacon),
            "acme",
            now(),
            Narrow,
            &Style::plain()
        )
    );
    insta::assert_snapshot!(
        "beacons-wide",
        beacons(&[beacon], "acme", now(), Wide, &Style::plain())
    );

    assert_eq!(
        gates(&[], "acme", now(), Narrow, &Style::plain()),
        "no Gates in acme\n"
    );
    assert_eq!(
        bundles(&[], "acme", now(), Narrow, &Style::plain()),
        "no Bundles in acme\n"
    );
    assert_eq!(
        passages(
            &[],
            &Versions::new(),
            "acme",
            now(),
            Narrow,
            &Style::plain()
        ),
        "no Passages in acme\n"
    );
    assert_eq!(
        beacons(&[], "acme", now(), Narrow, &Style::plain()),
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
        outcome: None,
        rollback_of: None,
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
    insta::assert_snapshot!("audit", audit(&entries, "acme", Narrow, &Style::plain()));
    let mut wide = entries.to_vec();
    wide[0].passage = "production-3".into();
    wide[0].verified = Some(true);
    wide[2].passage = "production-2".into();
    wide[2].verified = Some(false);
    insta::assert_snapshot!("audit-wide", audit(&wide, "acme", Wide, &Style::plain()));
    assert_eq!(
        audit(&[], "acme", Narrow, &Style::plain()),
        "nothing has happened in acme yet\n"
    );
}

#[test]
fn action_lines() {
    let promote = Promoted {
        namespace: "acme".into(),
        gate: "staging".into(),
        bundle: "b1".into(),
        passage: "staging-3".into(),
        actor: "bob".into(),
    };
    assert_eq!(
        promoted(&promote),
        "crossing b1 through staging as staging-3\n"
    );
    insta::assert_json_snapshot!(
        "promote-json",
        Written {
            action: "promote",
            answer: &promote
        }
    );
    let rollback = RolledBack {
        namespace: "acme".into(),
        gate: "staging".into(),
        bundle: "b1".into(),
        passage: "staging-4".into(),
        actor: "bob".into(),
        rollback_of: "staging-3".into(),
        targets: Vec::new(),
    };
    assert_eq!(
        rolled_back(&rollback),
        "rolling back staging to b1 as Passage staging-4 (undoing staging-3)\n"
    );
    let some = RolledBack {
        gate: "production".into(),
        targets: vec!["eu-1".into(), "us-2".into()],
        ..rollback.clone()
    };
    assert_eq!(
        rolled_back(&some),
        "rolling back production's eu-1, us-2 to b1 as Passage staging-4 (undoing staging-3)\n"
    );
    insta::assert_json_snapshot!(
        "rollback-json",
        Written {
            action: "rollback",
            answer: &rollback
        }
    );
    let approve = Approved {
        namespace: "acme".into(),
        gate: "production".into(),
        bundle: "b1".into(),
        approved_by: "carol".into(),
        recorded: true,
        progress: None,
    };
    assert_eq!(approved(&approve), "b1 approved for production by carol\n");
    let again = Approved {
        recorded: false,
        ..approve
    };
    assert_eq!(
        approved(&again),
        "b1 was already approved for production by carol\n"
    );
    let abort = Aborted {
        namespace: "acme".into(),
        passage: "staging-3".into(),
        gate: "staging".into(),
        bundle: "b1".into(),
        aborted: true,
        aborted_by: Some("bob".into()),
    };
    assert_eq!(
        aborted(&abort),
        "asked staging-3 to stop; the controller marks its remaining steps aborted\n"
    );
    let poll = Polled {
        namespace: "acme".into(),
        beacon: "app".into(),
        requested_at: "1754913600000000000".into(),
    };
    assert_eq!(
        polled(&poll),
        "asked Beacon app to look now (token 1754913600000000000)\n"
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

fn report(gate: &str, trail: &str, chain: serde_json::Value) -> VerifyReport {
    let chain: hecate_ops::model::ChainVerdict = serde_json::from_value(chain).unwrap();
    hecate_ops::rules::verify::report(gate, &format!("{gate}-1"), trail, Ok(chain))
}

#[test]
fn verify_text() {
    const T: &str = "91b2ffff-0000-4000-8000-00000000abcd";
    let reports = [
        report(
            "dev",
            T,
            serde_json::json!({"valid":true,"count":14,"broken_at":-1,"external_anchor":{"anchored":true,"head_matches":true,"anchored_at":"2026-08-09T11:02:00Z"}}),
        ),
        report(
            "production",
            T,
            serde_json::json!({"valid":false,"count":9,"broken_at":6,"reason":"content_hash does not match the recorded entry"}),
        ),
        report(
            "qa",
            T,
            serde_json::json!({"valid":true,"count":1,"broken_at":-1}),
        ),
        report(
            "staging",
            T,
            serde_json::json!({"valid":true,"count":0,"broken_at":-1}),
        ),
        report(
            "uat",
            T,
            serde_json::json!({"valid":true,"count":3,"broken_at":-1,"external_anchor":{"anchored":true,"head_matches":false,"anchored_at":"2026-08-01T00:00:00Z"}}),
        ),
        hecate_ops::rules::verify::report(
            "",
            "",
            "nodashesbutlong",
            Err("fides: GET api/v1/trails/nodashesbutlong/verify-chain: 401: unauthorized".into()),
        ),
    ];
    insta::assert_snapshot!("verify", verify(&reports, "b1", &Style::plain()));
    assert_eq!(
        verify(&[], "b1", &Style::plain()),
        "b1 has no recorded evidence: no crossing of it wrote a Fides trail\n"
    );
    insta::assert_json_snapshot!("verify-json", reports[1]);
}

#[test]
fn short_trails() {
    assert_eq!(
        short_trail("91b2ffff-0000-4000-8000-00000000abcd"),
        "91b2ffff"
    );
    assert_eq!(short_trail("nodashesbutlong"), "nodashes");
    assert_eq!(short_trail("short"), "short");
    assert_eq!(short_trail("-leading"), "-leading");
}

/// Three crossings' verifications, newest first: under way, said no, passed.
fn crossing_verifications() -> Vec<hecate_ops::CrossingVerification> {
    use hecate_types::VerifierStatus;
    let verifier =
        |uses: &str, phase, passes, failures, last: &str, message: &str| VerifierStatus {
            uses: uses.into(),
            phase,
            passes,
            failures,
            inconclusive: 0,
            last_value: last.into(),
            last_look_at: ago(1),
            next_look_at: None,
            message: message.into(),
            restarts: Vec::new(),
        };
    vec![
        hecate_ops::CrossingVerification {
            gate: "production".into(),
            passage: "production-3".into(),
            phase: VerificationPhase::Verifying,
            started_at: ago(4),
            finished_at: None,
            message: String::new(),
            verifiers: vec![verifier(
                "prometheus",
                VerificationPhase::Verifying,
                2,
                0,
                "0.002",
                "",
            )],
        },
        hecate_ops::CrossingVerification {
            gate: "production".into(),
            passage: "production-2".into(),
            phase: VerificationPhase::Failed,
            started_at: ago(90),
            finished_at: ago(80),
            message: "prometheus: error rate 0.2 is not below 0.01".into(),
            verifiers: vec![
                verifier("soak", VerificationPhase::Verified, 1, 0, "", "soaked 5m"),
                verifier(
                    "prometheus",
                    VerificationPhase::Failed,
                    0,
                    3,
                    "0.2",
                    "error rate 0.2 is not below 0.01",
                ),
            ],
        },
        hecate_ops::CrossingVerification {
            gate: "staging".into(),
            passage: "staging-1".into(),
            phase: VerificationPhase::Verified,
            started_at: ago(130),
            finished_at: ago(120),
            message: String::new(),
            verifiers: vec![verifier(
                "flagger",
                VerificationPhase::Verified,
                1,
                0,
                "",
                "Canary podinfo succeeded",
            )],
        },
    ]
}

#[test]
fn evidence_text() {
    let verdict: hecate_ops::model::ChangeVerdict = serde_json::from_value(serde_json::json!({"recommendation":"hold","approved":false,"risk_score":45,"risk_level":"medium","passed":["CC8.1"],"failed":[{"control":"CC7.2","name":"Vulnerability scanning","reasons":["failed vuln-scan"]}],"attestations":{"total":4,"non_compliant":1},"approvals":{"count":1,"human_approvers":1,"four_eyes":false,"approvers":["olaf@acme.example"]},"segregation_of_duties":{"committer":"olaf@acme.example","approvers":["olaf@acme.example"],"compliant":false,"violations":["committer and approver are the same person"]}})).unwrap();
    let evidence = Evidence {
        bundle: "b1".into(),
        namespace: "acme".into(),
        digest: "sha256:abcdef0123456789".into(),
        trail: "91b2ffff-0000-4000-8000-00000000abcd".into(),
        gate: "production".into(),
        verdict: Some(verdict),
        change: Some(hecate_ops::model::ChangeRequest {
            number: "CHG0033184".into(),
            state: "new".into(),
            approval: "not requested".into(),
            ..Default::default()
        }),
        approved_in: vec![hecate_types::BundleApproval {
            gate: "production".into(),
            actor: "carol".into(),
            at: Time(now()),
        }],
        unavailable: String::new(),
        verifications: crossing_verifications(),
    };
    insta::assert_snapshot!("evidence", super::evidence(&evidence, &Style::plain()));
    let none = Evidence {
        digest: String::new(),
        trail: String::new(),
        verdict: None,
        change: None,
        approved_in: vec![],
        unavailable: "no Gate in this namespace records evidence in Fides".into(),
        ..evidence
    };
    insta::assert_snapshot!("evidence-none", super::evidence(&none, &Style::plain()));
}

#[test]
fn explain_text_says_how_long_and_what_failed_before() {
    use hecate_ops::model::{CrossingNow, FailedBefore, Outcome, StepNow, WindowWords};
    let mut crossing = explanation();
    crossing.state = State::Crossing;
    crossing.summary = "crossing app-2, waiting on git-commit: pushing".into();
    crossing.blockers = vec![];
    crossing.crossing = Some(CrossingNow {
        rollout: None,
        passage: "production-4".into(),
        bundle: "app-2".into(),
        created_at: ago(21),
        started_at: ago(20),
        stalled: false,
        step: Some(StepNow {
            uses: "git-commit".into(),
            alias: String::new(),
            started_at: ago(15),
            attempts: 3,
        }),
    });
    crossing.failed_before = vec![FailedBefore {
        bundle: "app-1".into(),
        passage: "production-3".into(),
        outcome: Outcome::Failed,
        at: ago(120),
        reason: "failed at git-push [GitAuthFailed]: the host rejected our credentials".into(),
    }];
    crossing.windows = vec![WindowWords {
        text: "no crossings Sat 00:00 – Mon 00:00 Europe/London; next in force Sat 00:00".into(),
        deny: true,
        open: false,
        next: ago(-(60 * 27 + 30)),
        zone: "Europe/London".into(),
        opens: None,
        closes: None,
    }];
    insta::assert_snapshot!(
        "explain-crossing",
        explain_at(&crossing, &Style::plain(), now())
    );

    let mut stalled = explanation();
    stalled.state = State::Crossing;
    stalled.crossing = Some(CrossingNow {
        rollout: None,
        passage: "production-4".into(),
        bundle: "app-2".into(),
        created_at: ago(3),
        started_at: None,
        stalled: true,
        step: None,
    });
    assert!(
        explain_at(&stalled, &Style::plain(), now())
            .contains("  crossing: production-4, created 3m ago, not started\n")
    );
}

#[test]
fn preflight_says_ready_refused_or_unknown() {
    let verdict =
        |bundle: &str, compliant, missing: &[&str], policies: &[&str], unknown: &str| Preflight {
            bundle: bundle.into(),
            compliant,
            missing: missing.iter().map(|s| s.to_string()).collect(),
            policies: policies.iter().map(|s| s.to_string()).collect(),
            unknown: unknown.into(),
        };
    let verdicts = [
        verdict("app-3", true, &[], &[], ""),
        verdict(
            "app-2",
            false,
            &["sbom", "servicenow-change"],
            &["change-control", "sox"],
            "",
        ),
        verdict(
            "app-1",
            false,
            &[],
            &[],
            "no Fides trail for this artifact yet",
        ),
    ];
    insta::assert_snapshot!(
        "preflight",
        preflight(&verdicts, "production", Narrow, &Style::plain())
    );
    assert_eq!(
        preflight(&verdicts, "production", Wide, &Style::plain()),
        preflight(&verdicts, "production", Narrow, &Style::plain()),
        "preflight has nothing more to show wide"
    );
    assert_eq!(
        preflight(&[], "production", Narrow, &Style::plain()),
        "nothing to check: production has no eligible Bundles, or does not gate on evidence\n"
    );
}

#[test]
fn flux_lists_health_suspension_and_revision() {
    let resource =
        |name: &str, health, suspended, missing, revision: &str, detail: &str| FluxResource {
            kind: "Kustomization".into(),
            name: name.into(),
            namespace: "acme".into(),
            suspended,
            health,
            detail: detail.into(),
            revision: revision.into(),
            last_handled: String::new(),
            missing,
            cluster: String::new(),
            operable: !missing,
        };
    let resources = [
        resource("apps", Health::Healthy, false, false, "main@sha1:abc", ""),
        resource(
            "infra",
            Health::Unknown,
            true,
            false,
            "main@sha1:abc",
            "suspended: Flux will not reconcile it until it is resumed",
        ),
        resource(
            "later",
            Health::Unknown,
            false,
            true,
            "",
            "not in the cluster",
        ),
    ];
    insta::assert_snapshot!(
        "flux",
        flux(&resources, "production", Narrow, &Style::plain())
    );
    let mut wide = resources.to_vec();
    wide[0].last_handled = "2026-08-11T11:58:00Z".into();
    insta::assert_snapshot!(
        "flux-wide",
        flux(&wide, "production", Wide, &Style::plain())
    );
    assert_eq!(
        flux(&[], "production", Narrow, &Style::plain()),
        "Gate production watches no Flux objects\n"
    );
    // A connected cluster's objects get a CLUSTER column; whether one is suspended is
    // not recorded.
    let mut fleet = resources[..1].to_vec();
    for (cluster, health) in [("eu-1", Health::Healthy), ("us-1", Health::Degraded)] {
        fleet.push(FluxResource {
            cluster: cluster.into(),
            ..resource("apps", health, false, false, "main@sha1:def", "")
        });
    }
    insta::assert_snapshot!(
        "flux-clusters",
        flux(&fleet, "production", Narrow, &Style::plain())
    );
    let suspended = FluxSuspended {
        namespace: "acme".into(),
        gate: "production".into(),
        kind: "Kustomization".into(),
        name: "apps".into(),
        suspended: false,
        by: "ada".into(),
    };
    assert_eq!(
        flux_suspended(&suspended),
        "Kustomization/apps resumed: Flux reconciles it again\n"
    );
}

#[test]
fn audit_says_how_a_refused_crossing_ended() {
    let entry = AuditEntry {
        at: ago(5).unwrap(),
        kind: AuditKind::Refused,
        gate: "production".into(),
        bundle: "app-1".into(),
        digest: String::new(),
        actor: "bob".into(),
        passage: "production-3".into(),
        detail: "health check failed".into(),
        verified: None,
        evidence: None,
        outcome: Some(hecate_ops::model::Outcome::Failed),
        rollback_of: None,
    };
    let text = audit(&[entry], "acme", Narrow, &Style::plain());
    let row = text.lines().nth(1).unwrap();
    assert!(
        row.contains(" failed ") && !row.contains("refused"),
        "{text}"
    );
}

#[test]
fn a_waiting_step_counts_looks_not_attempts() {
    use hecate_ops::model::{CrossingNow, StepNow};
    let step = |attempts| {
        let mut x = explanation();
        x.state = State::Crossing;
        x.crossing = Some(CrossingNow {
            rollout: None,
            passage: "production-4".into(),
            bundle: "app-2".into(),
            created_at: ago(3),
            started_at: ago(3),
            stalled: false,
            step: Some(StepNow {
                uses: "flux-wait".into(),
                alias: String::new(),
                started_at: ago(2),
                attempts,
            }),
        });
        explain_at(&x, &Style::plain(), now())
    };
    let waiting = step(14);
    assert!(
        waiting.contains("step:     flux-wait, running 2m, looked 14 times"),
        "{waiting}"
    );
    assert!(!waiting.contains("attempt"), "{waiting}");
    let first = step(1);
    assert!(first.contains(", looked once"), "{first}");
    let third = step(3);
    assert!(
        third.contains("step:     flux-wait, running 2m, looked 3 times"),
        "{third}"
    );
}

/// A namespace's delivery figures as ops answers them: dev and production, production
/// with a failed crossing restored and a lead time split into parts.
fn delivery_figures() -> Delivery {
    let figures = |lead: serde_json::Value,
                   deployments: usize,
                   rate: serde_json::Value,
                   restore: serde_json::Value| {
        serde_json::json!({
            "leadTime": lead,
            "deploymentFrequency": {"crossings": deployments, "days": 1.0, "perDay": deployments as f64, "perWeek": deployments as f64 * 7.0},
            "changeFailureRate": rate,
            "timeToRestore": restore,
        })
    };
    let parts = serde_json::json!({
        "upstreamSeconds": 1200, "approvalSeconds": 600, "windowSeconds": 0,
        "queuedSeconds": 60, "stepsSeconds": 140,
    });
    let no_parts = serde_json::json!({
        "upstreamSeconds": 0, "approvalSeconds": 0, "windowSeconds": 0,
        "queuedSeconds": 0, "stepsSeconds": 95,
    });
    let no_failures =
        serde_json::json!({"failed": 0, "aborted": 0, "unverified": 0, "rolledBack": 0});
    let reach = serde_json::json!({"from": "2026-08-10T12:00:00Z", "partial": false});
    let production = figures(
        serde_json::json!({"crossings": 2, "medianSeconds": 1800, "p90Seconds": 2400, "parts": parts}),
        2,
        serde_json::json!({"crossings": 3, "failed": 1, "rate": 0.33, "by": {"failed": 1, "aborted": 0, "unverified": 0, "rolledBack": 0}}),
        serde_json::json!({"failures": 1, "restored": 1, "medianSeconds": 540, "longestSeconds": 540}),
    );
    let mut dev = figures(
        serde_json::json!({"crossings": 3, "medianSeconds": 95, "p90Seconds": 100, "parts": no_parts}),
        3,
        serde_json::json!({"crossings": 3, "failed": 0, "rate": 0.0, "by": no_failures}),
        serde_json::json!({"failures": 0, "restored": 0}),
    );
    dev["gate"] = "dev".into();
    dev["stage"] = 0.into();
    dev["reach"] = reach.clone();
    dev["crossings"] = serde_json::json!([]);
    let mut gate = production.clone();
    gate["gate"] = "production".into();
    gate["stage"] = 1.into();
    gate["reach"] = reach.clone();
    gate["crossings"] = serde_json::json!([]);
    let mut pipeline = production;
    pipeline["gates"] = serde_json::json!(["production"]);
    pipeline["reach"] = reach;
    serde_json::from_value(serde_json::json!({
        "namespace": "acme",
        "since": "2026-07-12T12:00:00Z",
        "until": "2026-08-11T12:00:00Z",
        "gates": [dev, gate],
        "pipeline": pipeline,
    }))
    .unwrap()
}

#[test]
fn metrics_table() {
    insta::assert_snapshot!(
        "metrics",
        delivery(&delivery_figures(), Narrow, &Style::plain())
    );
    insta::assert_snapshot!(
        "metrics-wide",
        delivery(&delivery_figures(), Wide, &Style::plain())
    );
}

fn diff_between() -> BundleDiff {
    use hecate_ops::model::{ArtifactChange, ArtifactKind, BundleRef, DiffDirection};
    let at = |minutes: i64| ago(minutes);
    let commit = |sha: char, subject: &str, minutes: i64| hecate_types::CommitSummary {
        sha: sha.to_string().repeat(40),
        subject: subject.into(),
        author: "Ann Example <ann@example.com>".into(),
        committed_at: at(minutes),
    };
    BundleDiff {
        namespace: "acme".into(),
        from: Some(BundleRef {
            name: "app-0151d1d6c4cf".into(),
            version: "v1.2.0".into(),
        }),
        to: BundleRef {
            name: "app-9f8c1a2b3c4d".into(),
            version: "v1.3.0".into(),
        },
        gate: Some("production".into()),
        direction: DiffDirection::Forward,
        artifacts: vec![
            ArtifactChange {
                kind: ArtifactKind::Commit,
                repo: "https://github.com/acme/app".into(),
                name: String::new(),
                from: Some("v1.2.0".into()),
                to: Some("v1.3.0".into()),
                from_digest: Some("0".repeat(40)),
                to_digest: Some("f".repeat(40)),
                changed: true,
            },
            ArtifactChange {
                kind: ArtifactKind::Chart,
                repo: "https://charts.acme.example".into(),
                name: "app".into(),
                from: Some("6.3.5".into()),
                to: Some("6.3.5".into()),
                from_digest: None,
                to_digest: None,
                changed: false,
            },
            ArtifactChange {
                kind: ArtifactKind::Image,
                repo: "ghcr.io/acme/worker".into(),
                name: String::new(),
                from: None,
                to: Some("0.1.0".into()),
                from_digest: None,
                to_digest: Some("sha256:bbb".into()),
                changed: true,
            },
        ],
        commits: vec![
            commit('f', "checkout: retry the payment call", 90),
            commit('e', "cart: keep the basket across sign-in", 200),
        ],
        more_commits: 3,
        gap: None,
        gap_words: None,
        left_behind: None,
    }
}

#[test]
fn diff_tables() {
    use hecate_ops::model::{CommitGap, DiffDirection};
    let forward = diff_between();
    insta::assert_snapshot!("diff", diff(&forward, Narrow, &Style::plain()));
    insta::assert_snapshot!("diff-wide", diff(&forward, Wide, &Style::plain()));

    // Going back: the commits are those undone; what is missing is said.
    let mut back = diff_between();
    back.from = Some(forward.to.clone());
    back.to = forward.from.clone().expect("a from");
    back.gate = None;
    back.direction = DiffDirection::Back;
    back.more_commits = 0;
    back.gap = Some(CommitGap::BundlesCollected);
    back.artifacts.truncate(1);
    for a in &mut back.artifacts {
        std::mem::swap(&mut a.from, &mut a.to);
        std::mem::swap(&mut a.from_digest, &mut a.to_digest);
    }
    insta::assert_snapshot!("diff-back", diff(&back, Narrow, &Style::plain()));

    // An aborted crossing's push is what the branch holds, whatever the Gate's record says (#53).
    let mut aborted = diff_between();
    aborted.left_behind = Some(hecate_ops::model::LeftBehind {
        passage: "production-7".into(),
        bundle: "app-9f8c1a2b3c4d".into(),
        branch: "env/production".into(),
        commit: "ab4eac1d".repeat(5),
    });
    let text = diff(&aborted, Narrow, &Style::plain());
    assert!(
        text.starts_with(
            "v1.3.0 (app-9f8c1a2b3c4d)\nnewer than v1.2.0 (app-0151d1d6c4cf), what production runs\n\
             but env/production holds ab4eac1 from the aborted production-7 (app-9f8c1a2b3c4d): \
             Flux applies it there until the next crossing, whatever production's record says it runs\n"
        ),
        "{text}"
    );

    // Nothing in the Gate; nothing between two Bundles.
    let mut empty_gate = diff_between();
    empty_gate.from = None;
    empty_gate.commits.clear();
    empty_gate.more_commits = 0;
    let text = diff(&empty_gate, Narrow, &Style::plain());
    assert!(
        text.starts_with(
            "v1.3.0 (app-9f8c1a2b3c4d)\nproduction holds no Bundle: everything is new\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("no commits recorded between them\n"),
        "{text}"
    );
    let mut same = diff_between();
    same.direction = DiffDirection::Same;
    same.gate = None;
    same.commits.clear();
    same.more_commits = 0;
    same.artifacts.truncate(0);
    assert_eq!(
        diff(&same, Narrow, &Style::plain()),
        "v1.3.0 (app-9f8c1a2b3c4d)\nthe same as v1.2.0 (app-0151d1d6c4cf)\n"
    );
}

/// Text anyone may write in the cluster — an alias, a commit's subject and author, a
/// rejection's reason — holding what a terminal obeys: the clipboard (OSC 52), a link
/// (OSC 8), the screen cleared, a cursor report asked for, the window's title, a C1
/// CSI and a right-to-left override.
mod hostile {
    pub(super) const ALIAS: &str = "v6.6.6\u{1b}]52;c;Y3VybCBldmlsfHNo\u{7}";
    pub(super) const SUBJECT: &str =
        "fix: \u{1b}]8;;https://evil.example\u{1b}\\login\u{1b}]8;;\u{1b}\\ \u{202e}gnp.exe";
    pub(super) const AUTHOR: &str = "Mallory\u{1b}]0;root@prod\u{7} <m@example.com>";
    pub(super) const REASON: &str = "no\u{1b}[2J\u{1b}[6n\u{9b}31m approved\u{7f}";
}

/// Every human rendering of `hecate diff`, `bundles`, `status`, `approvals`,
/// `explain`, `passages` and `audit`, as printed (`output::formatted`), over that text:
/// shown as escapes, nothing a terminal would obey.
#[test]
fn text_from_the_cluster_is_shown_never_obeyed() {
    use crate::cli::Format;
    use hecate_ops::model::{ApprovalProgress, RejectionView, YourTurn};
    use hostile::*;
    /// The snapshot is the plain rendering; in colour, the only sequences are ours.
    fn printed<T: Serialize + crate::output::Named + ?Sized>(
        name: &str,
        value: &T,
        render: impl Fn(&Style) -> String,
    ) {
        let coloured = Style {
            colour: true,
            ..Style::plain()
        };
        for style in [&Style::plain(), &coloured] {
            let out = crate::output::formatted(&Format::Table, value, |_| render(style))
                .expect("printed");
            let ours = [
                "\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m",
            ];
            let rest = ours
                .iter()
                .fold(out.clone(), |text, seq| text.replace(seq, ""));
            assert!(
                !rest
                    .chars()
                    .any(|c| crate::output::is_control(c) && c != '\n'),
                "{name}: {out:?}"
            );
            if !style.colour {
                insta::assert_snapshot!(name, out);
            }
        }
    }
    let rejection = format!("rejected by carol: {REASON}");

    let mut between = diff_between();
    between.to.version = ALIAS.into();
    between.commits[0].subject = SUBJECT.into();
    between.commits[0].author = AUTHOR.into();
    printed("hostile-diff", &between, |style| {
        diff(&between, Wide, style)
    });

    let bundle = Bundle {
        metadata: meta("app-9f8c1a2b3c4d", 5),
        spec: BundleSpec {
            beacon: "app".into(),
            alias: ALIAS.into(),
            artifacts: vec![Artifact {
                commit: Some(hecate_types::CommitArtifact {
                    repo: "https://github.com/acme/app".into(),
                    sha: "f".repeat(40),
                    message: SUBJECT.into(),
                    author: AUTHOR.into(),
                    ..hecate_types::CommitArtifact::default()
                }),
                ..Artifact::default()
            }],
            ..BundleSpec::default()
        },
        status: None,
    };
    let list = vec![bundle];
    printed("hostile-bundles", &list, |style| {
        bundles(&list, "acme", now(), Wide, style)
    });

    let mut production = explanation();
    production.state = State::Blocked;
    production.summary = format!("1 Bundle cannot cross: {rejection}");
    production.blockers[1].detail = rejection.clone();
    production.waiting[0].reason = rejection.clone();
    production.versions.insert("app-1".into(), ALIAS.into());
    production.versions.insert("app-0".into(), ALIAS.into());
    let all = vec![production.clone()];
    printed("hostile-status", &all, |style| {
        status(&all, false, "acme", Wide, style)
    });
    printed("hostile-explain", &production, |style| {
        explain_at(&production, style, now())
    });

    let queue = vec![QueuedApproval {
        gate: "production".into(),
        stage: hecate_ops::model::Stage::default(),
        bundle: "app-1".into(),
        version: ALIAS.into(),
        progress: ApprovalProgress {
            satisfied: false,
            summary: rejection.clone(),
            rules: vec![],
            any_of: vec![],
            not_counted: vec![],
            rejected: Some(RejectionView {
                by: "carol".into(),
                at: ago(5).unwrap(),
                reason: REASON.into(),
            }),
            expires_at: None,
        },
        you: YourTurn::default(),
        held: None,
        reach: String::new(),
    }];
    printed("hostile-approvals", &queue, |style| {
        approvals(&queue, "acme", Wide, style)
    });

    let mut failed = Passage {
        metadata: meta("production-1", 10),
        spec: PassageSpec {
            gate: "production".into(),
            bundle: "app-1".into(),
            actor: AUTHOR.into(),
            ..PassageSpec::default()
        },
        status: Some(PassageStatus {
            phase: Some(PassagePhase::Failed),
            message: format!("refused (Rejected): {rejection}"),
            ..PassageStatus::default()
        }),
    };
    if let Some(status) = failed.status.as_mut() {
        status.started_at = ago(10);
        status.finished_at = ago(9);
    }
    let mut versions = Versions::new();
    versions.insert("app-1".into(), ALIAS.into());
    let crossings = vec![failed];
    printed("hostile-passages", &crossings, |style| {
        passages(&crossings, &versions, "acme", now(), Wide, style)
    });

    let entries = vec![AuditEntry {
        at: ago(5).unwrap(),
        kind: AuditKind::Rejected,
        gate: "production".into(),
        bundle: "app-1".into(),
        digest: String::new(),
        actor: AUTHOR.into(),
        passage: String::new(),
        detail: REASON.into(),
        verified: None,
        evidence: None,
        outcome: None,
        rollback_of: None,
    }];
    printed("hostile-audit", &entries, |style| {
        audit(&entries, "acme", Wide, style)
    });
}

/// `hecate targets`: a halted rollout, target by target, and a Gate with none yet.
#[test]
fn targets_table_reads_a_rollout_by_wave() {
    use hecate_ops::model::{GateTargets, RolloutNow, RolloutRecord, TargetFailure};
    use hecate_types::{TargetPhase, TargetStatus};
    let target =
        |name: &str, wave, phase, attempt, step, reason: &str, revision: &str| TargetStatus {
            name: name.into(),
            wave,
            phase,
            attempt,
            current_step: step,
            reason: reason.into(),
            pushed_revision: revision.into(),
            started_at: if attempt > 0 { ago(4) } else { None },
            ..TargetStatus::default()
        };
    let halted = GateTargets {
        gate: "production".into(),
        namespace: "acme".into(),
        spans_targets: true,
        rollout: Some(RolloutRecord {
            passage: "production-7".into(),
            bundle: "app-2".into(),
            version: "v1.3.0".into(),
            active: true,
            now: RolloutNow {
                phase: "Halted".into(),
                message:
                    "halted: canary failed at step 2 (GitRejected); wave 1 (canary) tolerates none"
                        .into(),
                occupancy: "v1.3.0 on 0 of 2 targets; canary failed; halted".into(),
                of: 2,
                on: vec![],
                crossing: vec![],
                failed: vec![TargetFailure {
                    target: "canary".into(),
                    step: Some(2),
                    reason: "GitRejected".into(),
                    message: String::new(),
                }],
                accepted: vec![],
            },
            wave: 0,
            targets: vec![
                target(
                    "canary",
                    0,
                    TargetPhase::Failed,
                    1,
                    1,
                    "GitRejected",
                    "main@sha1:3f1c2a9d0e4b5a6978",
                ),
                target("eu-1", 1, TargetPhase::Pending, 0, 0, "", ""),
            ],
            omitted_targets: 1,
            rollback_of: None,
            since: Vec::new(),
        }),
        fixes: Vec::new(),
    };
    assert_eq!(
        targets(&halted, now(), Narrow, &Style::plain()),
        "production: v1.3.0 (app-2) by production-7, Halted\n\
         v1.3.0 on 0 of 2 targets; canary failed; halted\n\
         halted: canary failed at step 2 (GitRejected); wave 1 (canary) tolerates none\n\
         \n\
         WAVE  TARGET  PHASE    ATTEMPT  STEP             REVISION                AGE\n\
         1     canary  Failed   1        2 (GitRejected)  main@sha1:3f1c2a9d0e4b  4m\n\
         2     eu-1    Pending  -        -                -                       -\n\
         (1 departed targets' records left out)\n"
    );
    // Crossings of some targets since the rollout, newest first (DECISION 163).
    let mut rolled = halted.clone();
    if let Some(rollout) = rolled.rollout.as_mut() {
        let mut back = rollout.clone();
        back.passage = "production-8".into();
        back.version = "v1.2.0".into();
        back.bundle = "app-1".into();
        back.rollback_of = Some("production-7".into());
        back.now.phase = "Succeeded".into();
        back.targets.truncate(1);
        back.omitted_targets = 0;
        rollout.since = vec![back];
    }
    assert!(
        targets(&rolled, now(), Narrow, &Style::plain()).ends_with(
            "(1 departed targets' records left out)\n\
             \n\
             Since, crossings of some targets:\n\
             \x20 production-8: rollback of canary to v1.2.0 (app-1), Succeeded\n"
        ),
        "{}",
        targets(&rolled, now(), Narrow, &Style::plain())
    );
    // What a person may do, as ops offers it.
    let offered = GateTargets {
        fixes: vec![{
            let action = Remedy::RollbackFailedTargets {
                gate: "production".into(),
                targets: vec!["canary".into()],
            };
            hecate_ops::model::Alternative {
                fix: action.fix("acme"),
                action,
            }
        }],
        ..halted.clone()
    };
    assert!(
        targets(&offered, now(), Narrow, &Style::plain()).ends_with(
            "(1 departed targets' records left out)\n\
             → roll the failed targets back to what they ran before the rollout: hecate rollback production --targets failed -n acme\n"
        ),
        "{}",
        targets(&offered, now(), Narrow, &Style::plain())
    );
    let none_yet = GateTargets {
        rollout: None,
        ..halted.clone()
    };
    assert_eq!(
        targets(&none_yet, now(), Narrow, &Style::plain()),
        "production names targets; no crossing has reached them yet\n"
    );
    let one_place = GateTargets {
        spans_targets: false,
        ..none_yet
    };
    assert!(targets(&one_place, now(), Narrow, &Style::plain()).contains("is one place"));
}

/// Explain offers a halted rollout's three ways out, the first as the fix.
#[test]
fn explain_offers_every_way_out_of_a_halt() {
    let mut x = explanation();
    x.state = State::Crossing;
    x.blockers = vec![
        Blocker::new(
            BlockerKind::RolloutHalted,
            "canary failed at step 2 (GitRejected); wave 1 (canary) tolerates none",
            Some(Remedy::RetryTargets {
                passage: "production-7".into(),
                targets: vec!["canary".into()],
            }),
            "acme",
        )
        .or(
            vec![
                Remedy::AcceptFailures {
                    passage: "production-7".into(),
                    targets: vec!["canary".into()],
                },
                Remedy::Abort {
                    passage: "production-7".into(),
                },
            ],
            "acme",
        ),
    ];
    let text = explain_at(&x, &Style::plain(), now());
    assert!(
        text.contains(
            "  [RolloutHalted] canary failed at step 2 (GitRejected); wave 1 (canary) tolerates none\n\
             \x20     → cross the failed targets again: hecate retry production-7 -n acme\n\
             \x20     → or accept the failures and go on: hecate accept-failures production-7 --reason <why> -n acme\n\
             \x20     → or stop the rollout: hecate abort production-7 -n acme\n"
        ),
        "{text}"
    );
}

/// An approval into a frozen window is said where it is decided: the queue says the
/// window, once per Gate, and that the Gate then crosses by itself.
#[test]
fn the_approvals_queue_says_a_window_holds_the_gate() {
    use hecate_ops::{ApprovalProgress, QueuedApproval, WindowHold, YourTurn};
    let row = |bundle: &str| {
        QueuedApproval {
        gate: "production".into(),
        stage: hecate_ops::model::Stage::default(),
        bundle: bundle.into(),
        version: String::new(),
        progress: ApprovalProgress {
            satisfied: false,
            summary: "1 of 2 from release-managers; carol approved".into(),
            rules: vec![],
            any_of: vec![],
            not_counted: vec![],
            rejected: None,
            expires_at: None,
        },
        you: YourTurn {
            can_approve: true,
            ..YourTurn::default()
        },
        held: Some(WindowHold {
            reason: "blocked by deny window \"0 22 * * *\" (no crossings daily 22:00 – 06:00 UTC) until Mon 7 Dec 2026 00:00 UTC".into(),
            until: None,
            unattended: true,
        }),
        reach: "to eu-1 and the clusters labelled region=us, in 2 waves: canary, then the rest"
            .into(),
    }
    };
    let text = approvals(
        &[row("app-2"), row("app-1")],
        "acme",
        Narrow,
        &Style::plain(),
    );
    assert!(
        text.ends_with(
            "production: blocked by deny window \"0 22 * * *\" (no crossings daily 22:00 – 06:00 UTC) until Mon 7 Dec 2026 00:00 UTC; an approval that completes it waits, then it crosses by itself, unattended\n"
        ),
        "{text}"
    );
    assert_eq!(
        text.matches("deny window").count(),
        1,
        "once per Gate: {text}"
    );
    // Where an approval sends it, once per Gate too (issue 52).
    assert_eq!(
        text.matches(
            "production: crosses to eu-1 and the clusters labelled region=us, in 2 waves: canary, then the rest\n"
        )
        .count(),
        1,
        "{text}"
    );
}

/// `hecate notifications`: who is told, then what was sent, newest first; nobody told.
#[test]
fn notifications_table_reads_who_is_told_and_what_was_sent() {
    use hecate_ops::model::{NotifierSummary, SentNotice};
    use hecate_types::{NoticeKind, NoticeOutcome};
    let sent =
        |kind, gate: &str, outcome, attempts, minutes, summary: &str, error: &str| SentNotice {
            namespace: "acme".into(),
            notifier: "releases".into(),
            destination: "slack".into(),
            kind,
            about_namespace: "acme".into(),
            gate: gate.into(),
            passage: String::new(),
            summary: summary.into(),
            outcome,
            attempts,
            at: ago(minutes).unwrap(),
            last_attempt: ago(minutes),
            error: error.into(),
        };
    let told = Notifications {
        namespace: "acme".into(),
        gate: None,
        notifiers: vec![NotifierSummary {
            name: "releases".into(),
            destination: "slack".into(),
            ready: Some(false),
            reason: "DeliveryFailed".into(),
            message: "Crossed of acme/staging was not sent: HTTP 503".into(),
            hears: "every Gate; every kind; reminds every 4h".into(),
            suspended: false,
        }],
        sent: vec![
            sent(
                NoticeKind::Crossed,
                "staging",
                NoticeOutcome::Retrying,
                2,
                1,
                "1.4.0 crossed staging (by bob)",
                "HTTP 503 Service Unavailable",
            ),
            sent(
                NoticeKind::ApprovalWanted,
                "production",
                NoticeOutcome::Sent,
                1,
                30,
                "production: 1.3.0: waits for 1 more approval; an approval from dave would count",
                "",
            ),
        ],
    };
    insta::assert_snapshot!(notifications(&told, now(), Narrow, &Style::plain()));
    let nobody = Notifications {
        namespace: "acme".into(),
        gate: None,
        notifiers: Vec::new(),
        sent: Vec::new(),
    };
    assert_eq!(
        notifications(&nobody, now(), Narrow, &Style::plain()),
        "No Notifiers in acme: nobody is told about its releases (docs/NOTIFICATIONS.md)\n"
    );
}
