//! Spec §7.1 (AC-093 – AC-100) as pure judgements, and the Passage a crossing creates.

use hecate_types::{Passage, PassagePhase::*, Var};
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;

use crate::rules::fixtures::*;
use crate::rules::promotion::{CrossingKind::Promotion, judge, new_passage, next_passage_name};
use crate::rules::refusal::RefusalCode;

fn refusal(result: Result<(), crate::rules::refusal::Refusal>) -> (RefusalCode, String) {
    let r = result.unwrap_err();
    (r.code, r.reason)
}

#[test]
fn ac094_to_ac100_promote_applies_the_same_rules() {
    let b1 = bundle("b1", 0);
    let mut upstream = gate("staging");
    upstream.spec.admits[0].after = vec!["dev".into()];
    let mut approval = gate("staging");
    approval.spec.admits[0].require_approval = true;
    let mut suspended = gate("staging");
    suspended.spec.suspend = true;
    let mut no_steps = gate("staging");
    no_steps.spec.passage = None;
    let mut windowed = gate("staging");
    windowed.spec.windows = vec![window("0 6 * * 1-5", "1h")];
    let other = bundle_of("b1", "other", t0(), 0);
    let running = passage("staging", "b0", Some(Running), 0);
    let plain = gate("staging");

    let cases: Vec<(_, _, Vec<&Passage>, RefusalCode, &str)> = vec![
        (
            &upstream,
            &b1,
            vec![],
            RefusalCode::UpstreamNotCleared,
            "has not cleared dev",
        ),
        (
            &approval,
            &b1,
            vec![],
            RefusalCode::AwaitingApproval,
            "awaiting approval",
        ),
        (
            &suspended,
            &b1,
            vec![],
            RefusalCode::Suspended,
            "Gate staging is suspended",
        ),
        (
            &no_steps,
            &b1,
            vec![],
            RefusalCode::NoSteps,
            "Gate staging has no steps",
        ),
        (
            &plain,
            &other,
            vec![],
            RefusalCode::NotAdmitted,
            "Gate staging does not admit Bundles from Beacon other",
        ),
        (
            &windowed,
            &b1,
            vec![],
            RefusalCode::WindowClosed,
            "outside every promotion window until 2026-08-12T06:00:00Z",
        ),
        (
            &plain,
            &b1,
            vec![&running],
            RefusalCode::AlreadyCrossing,
            "Passage staging-b0 is already crossing b0",
        ),
    ];
    for (gate, bundle, passages, code, reason) in cases {
        assert_eq!(
            refusal(judge(gate, bundle, &passages, "olaf", Promotion, t0())),
            (code, reason.to_string())
        );
    }
}

#[test]
fn the_checks_run_in_order() {
    // Suspended beats everything about the Bundle; eligibility beats an active crossing.
    let mut g = gate("staging");
    g.spec.suspend = true;
    g.spec.admits[0].after = vec!["dev".into()];
    assert_eq!(
        refusal(judge(&g, &bundle("b1", 0), &[], "olaf", Promotion, t0())).0,
        RefusalCode::Suspended
    );
    let mut g = gate("staging");
    g.spec.admits[0].after = vec!["dev".into()];
    let running = passage("staging", "b0", Some(Running), 0);
    assert_eq!(
        refusal(judge(
            &g,
            &bundle("b1", 0),
            &[&running],
            "olaf",
            Promotion,
            t0()
        ))
        .0,
        RefusalCode::UpstreamNotCleared
    );
    assert_eq!(
        refusal(judge(&g, &bundle("b1", 0), &[], "", Promotion, t0())).0,
        RefusalCode::NoActor
    );
}

#[test]
fn a_person_may_retry_a_failure_and_roll_back() {
    // AC-157: b1 failed here before and is older than the occupant; a person may still
    // promote it, though the controller never would.
    let g = with_current(gate("staging"), "b2");
    let b1 = blocked(bundle("b1", -10), "staging", "boom");
    let finished = passage("staging", "b2", Some(Succeeded), 0);
    assert_eq!(
        judge(&g, &b1, &[&finished], "olaf", Promotion, t0()),
        Ok(())
    );
}

#[test]
fn segregation_of_duties() {
    let mut g = gate("production");
    g.spec.admits[0].require_approval = true;
    let b1 = approved(bundle("b1", 0), "production", "carol");
    let (code, reason) = refusal(judge(&g, &b1, &[], "carol", Promotion, t0()));
    assert_eq!(code, RefusalCode::SelfApproved);
    assert!(reason.contains("carol"), "{reason}");
    assert_eq!(judge(&g, &b1, &[], "bob", Promotion, t0()), Ok(()));
}

#[test]
fn ac093_the_passage_a_crossing_creates() {
    let mut g = gate("staging");
    g.spec.vars = vec![Var {
        name: "cluster".into(),
        value: "eu-1".into(),
    }];
    let p = new_passage(
        &g,
        &bundle("b1", 0),
        "olaf@example.com",
        "staging-1",
        jiff::Timestamp::UNIX_EPOCH,
    );
    assert_eq!(p.name_any(), "staging-1");
    assert_eq!(p.namespace().as_deref(), Some(NS));
    assert_eq!(
        (
            p.spec.gate.as_str(),
            p.spec.bundle.as_str(),
            p.spec.actor.as_str()
        ),
        ("staging", "b1", "olaf@example.com")
    );
    assert_eq!(p.spec.steps, g.spec.passage.unwrap().steps);
    assert_eq!(p.spec.vars, g.spec.vars);
    assert!(!p.spec.abort);
    assert_eq!(
        p.labels().get("hecate.dev/gate").map(String::as_str),
        Some("staging")
    );
    assert_eq!(
        p.labels().get("hecate.dev/bundle").map(String::as_str),
        Some("b1")
    );
    assert!(
        p.metadata.owner_references.is_none(),
        "deleting a Gate must not delete its records"
    );
    assert!(p.status.is_none());
}

#[test]
fn passage_names_count_up_per_gate() {
    let named = |name: &str| {
        let mut p = passage("staging", "b", Some(Succeeded), 0);
        p.metadata.name = Some(name.into());
        p
    };
    assert_eq!(next_passage_name("staging", &[]), "staging-1");
    let existing = [
        named("staging-1"),
        named("staging-7"),
        named("staging-x7k2p"),
        named("staging-prod-99"),
    ];
    let refs: Vec<&Passage> = existing.iter().collect();
    assert_eq!(next_passage_name("staging", &refs), "staging-8");
}

/// Verification is never skipped (DECISION 139): a Bundle whose verification said no
/// upstream is refused downstream whoever asks and whatever approvals it has, and a
/// rollback may cross the occupant again where a promotion may not.
#[test]
fn a_bundle_not_verified_upstream_is_refused_and_a_rollback_may_restore_the_occupant() {
    let mut production = gate("production");
    production.spec.admits[0].after = vec!["staging".into()];
    production.spec.admits[0].require_approval = true;
    let mut b1 = approved(bundle("b1", 0), "production", "carol");
    b1.status.get_or_insert_with(Default::default).unverified =
        vec![crossing("staging", "http verification said no: HTTP 503")];
    assert_eq!(
        refusal(judge(&production, &b1, &[], "olaf", Promotion, t0())),
        (
            RefusalCode::UpstreamNotCleared,
            "not verified in staging: http verification said no: HTTP 503".into()
        )
    );

    let staging = with_current(gate("staging"), "b1");
    let b1 = bundle("b1", 0);
    assert_eq!(
        refusal(judge(&staging, &b1, &[], "olaf", Promotion, t0())).0,
        RefusalCode::AlreadyCurrent
    );
    assert_eq!(
        judge(
            &staging,
            &b1,
            &[],
            "olaf",
            crate::rules::promotion::CrossingKind::Rollback,
            t0()
        ),
        Ok(())
    );
}

/// A catch-up brings some targets to what the Gate holds, and only that (DECISION
/// 164): it may cross the occupant again, and no other Bundle — a new one crosses
/// every target.
#[test]
fn a_catch_up_crosses_the_occupant_and_nothing_else() {
    use crate::rules::promotion::CrossingKind::CatchUp;
    let staging = with_current(gate("staging"), "b1");
    assert_eq!(
        judge(&staging, &bundle("b1", 0), &[], "olaf", CatchUp, t0()),
        Ok(())
    );
    let (code, reason) = refusal(judge(
        &staging,
        &bundle("b2", 0),
        &[],
        "olaf",
        CatchUp,
        t0(),
    ));
    assert_eq!(code, RefusalCode::InvalidTargets);
    assert!(
        reason.contains("a new Bundle crosses every target"),
        "{reason}"
    );
}

/// The Gate page's Cross buttons, judged for the one looking (issue 34): each Bundle
/// Explain lists as eligible, with the refusal promote would answer that person.
mod your_crossings {
    use hecate_types::{
        Admission, ApprovalPolicy, ApprovalRule, Bundle, BundleStatus, Gate, PolicyApproval,
    };
    use pretty_assertions::assert_eq;

    use crate::model::{Person, YourCrossing, YourCrossings};
    use crate::rules::explain::explain;
    use crate::rules::fixtures::*;
    use crate::rules::promotion::your_crossings;
    use crate::rules::refusal::{Refusal, RefusalCode};
    use crate::rules::snapshot::NamespaceSnapshot;

    /// `person`'s crossings of `gate` over `bundles`, for the Bundles Explain lists.
    fn yours(gate: &Gate, bundles: Vec<Bundle>, person: &str) -> YourCrossings {
        let snapshot = NamespaceSnapshot::new(NS, vec![gate.clone()], bundles, vec![]);
        let eligible = explain(&snapshot, gate, t0()).eligible;
        your_crossings(&snapshot, gate, &eligible, &Person::named(person), t0())
    }

    fn allowed(bundle: &str) -> YourCrossing {
        YourCrossing {
            bundle: bundle.into(),
            refused: None,
        }
    }

    fn refused(bundle: &str, code: RefusalCode, reason: &str) -> YourCrossing {
        YourCrossing {
            bundle: bundle.into(),
            refused: Some(Refusal::new(code, reason)),
        }
    }

    #[test]
    fn the_one_who_approved_may_not_cross_it_and_anyone_else_may() {
        let mut production = gate("production");
        production.spec.admits[0].require_approval = true;
        let b1 = approved(bundle("b1", 0), "production", "carol");
        let carol = yours(&production, vec![b1.clone()], "carol");
        assert_eq!(
            carol,
            YourCrossings {
                gate: "production".into(),
                actor: "carol".into(),
                bundles: vec![refused(
                    "b1",
                    RefusalCode::SelfApproved,
                    "approved only by carol, who cannot also promote it"
                )],
                rollbacks: vec![],
                rollback: Some(Refusal::new(
                    RefusalCode::NothingToRollBackTo,
                    "Gate production holds no Bundle yet, so there is nothing to roll back"
                )),
            }
        );
        assert_eq!(yours(&production, vec![b1], "bob").bundles, [allowed("b1")]);
    }

    #[test]
    fn under_a_policy_the_promoters_own_approval_is_left_out() {
        let mut production = gate("production");
        production.spec.admits = vec![Admission {
            approvals: Some(ApprovalPolicy {
                required: vec![ApprovalRule {
                    count: 2,
                    groups: vec!["release-managers".into()],
                    users: vec![],
                }],
                ..ApprovalPolicy::default()
            }),
            ..admits("app", &[])
        }];
        let mut b1 = bundle("b1", 0);
        b1.status = Some(BundleStatus {
            approvals: ["carol", "dave"]
                .into_iter()
                .map(|actor| PolicyApproval {
                    gate: "production".into(),
                    actor: actor.into(),
                    groups: vec!["release-managers".into()],
                    at: minutes(t0(), -5),
                })
                .collect(),
            ..BundleStatus::default()
        });
        assert_eq!(
            yours(&production, vec![b1.clone()], "carol").bundles,
            [refused(
                "b1",
                RefusalCode::SelfApproved,
                "carol approved it and cannot also promote it (1 of 2 from release-managers; dave approved; carol's approval does not count (they are the one promoting it))"
            )]
        );
        assert_eq!(yours(&production, vec![b1], "bob").bundles, [allowed("b1")]);
    }

    #[test]
    fn a_gate_asking_no_approval_lets_the_one_who_approved_cross() {
        let production = gate("production");
        let b1 = approved(bundle("b1", 0), "production", "carol");
        assert_eq!(
            yours(&production, vec![b1], "carol").bundles,
            [allowed("b1")]
        );
    }

    #[test]
    fn only_the_eligible_in_explains_order_and_what_promote_refuses_anyone() {
        let mut production = gate("production");
        production.spec.admits[0].require_approval = true;
        let b1 = approved(bundle("b1", 0), "production", "carol");
        let b2 = approved(bundle("b2", 1), "production", "dave");
        // Not eligible for anyone: not listed.
        let b3 = bundle("b3", 2);
        let both = || vec![b1.clone(), b2.clone(), b3.clone()];
        assert_eq!(
            yours(&production, both(), "carol").bundles,
            [
                allowed("b2"),
                refused(
                    "b1",
                    RefusalCode::SelfApproved,
                    "approved only by carol, who cannot also promote it"
                ),
            ]
        );
        // A closed window refuses everyone; a page shows it as Explain's blocker.
        production.spec.windows = vec![window("0 6 * * 1-5", "1h")];
        let closed = "outside every promotion window until 2026-08-12T06:00:00Z";
        assert_eq!(
            yours(&production, both(), "bob").bundles,
            [
                refused("b2", RefusalCode::WindowClosed, closed),
                refused("b1", RefusalCode::WindowClosed, closed),
            ]
        );
    }

    /// "Roll back to this" is judged before the click by promote's own rules for a
    /// rollback: a deny window refuses it (before, the page enabled it, #53), and the
    /// occupant may be crossed again.
    #[test]
    fn rollbacks_are_judged_as_promote_judges_them() {
        let mut production = with_current(gate("production"), "b2");
        production
            .status
            .as_mut()
            .unwrap()
            .history
            .push(hecate_types::GateOccupant {
                bundle: "b1".into(),
                digest: String::new(),
                passage: "production-1".into(),
                entered_at: minutes(t0(), -60),
                actor: String::new(),
                verified: Some(true),
            });
        production
            .status
            .as_mut()
            .unwrap()
            .history
            .push(hecate_types::GateOccupant {
                bundle: "b0".into(),
                digest: String::new(),
                passage: "production-0".into(),
                entered_at: minutes(t0(), -90),
                actor: String::new(),
                verified: Some(false),
            });
        let bundles = vec![bundle("b0", -30), bundle("b1", -20), bundle("b2", -10)];
        let open = yours(&production, bundles.clone(), "bob");
        // The target rule of the rollback action too: b0 failed its verification here.
        let b0 = open.rollbacks[2].refused.as_ref().map(|r| r.code);
        assert_eq!(b0, Some(RefusalCode::NotVerifiedHere));
        assert_eq!(open.rollbacks[..2], [allowed("b2"), allowed("b1")]);
        assert_eq!(open.rollback, None, "the server's own choice would start");
        production.spec.windows = vec![hecate_types::Window {
            deny: true,
            time_zone: "UTC".into(),
            ..window("0 0 * * *", "24h")
        }];
        let frozen = yours(&production, bundles, "bob");
        let codes: Vec<_> = frozen
            .rollbacks
            .iter()
            .map(|r| r.refused.as_ref().map(|r| r.code))
            .collect();
        assert_eq!(
            codes,
            [
                Some(RefusalCode::WindowClosed),
                Some(RefusalCode::WindowClosed),
                Some(RefusalCode::NotVerifiedHere)
            ]
        );
        assert_eq!(
            frozen.rollback.map(|r| r.code),
            Some(RefusalCode::WindowClosed)
        );
    }
}
