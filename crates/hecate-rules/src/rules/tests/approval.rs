//! Approval policies (DECISION 137): counts, groups, distinct people, the promoter,
//! the author and upstream promoters excluded, expiry at the instant, rejection and
//! its withdrawal — judged once, read by eligibility, Explain and the queue.

use hecate_types::{
    ApprovalPolicy, ApprovalRule, Bundle, BundleStatus, Gate, GateCrossing, PolicyApproval,
    Rejection, Time,
};
use jiff::{SignedDuration, Timestamp};
use pretty_assertions::assert_eq;

use crate::model::{BlockerKind, Remedy};
use crate::model::{Person, Uncounted};
use crate::rules::approval::{self, Asked};
use crate::rules::eligibility::{Code, evaluate};
use crate::rules::explain::{explain, unchanged_until};
use crate::rules::fixtures::*;
use crate::rules::snapshot::NamespaceSnapshot;

fn rule(count: i32, groups: &[&str], users: &[&str]) -> ApprovalRule {
    ApprovalRule {
        count,
        groups: groups.iter().map(|g| g.to_string()).collect(),
        users: users.iter().map(|u| u.to_string()).collect(),
    }
}

fn policy(rules: Vec<ApprovalRule>) -> ApprovalPolicy {
    ApprovalPolicy {
        required: rules,
        ..ApprovalPolicy::default()
    }
}

/// Production, after staging, under `policy`.
fn production(policy: ApprovalPolicy) -> Gate {
    let mut gate = gate("production");
    gate.spec.admits = vec![hecate_types::Admission {
        approvals: Some(policy),
        ..admits("app", &["staging"])
    }];
    gate
}

/// Bundle `b1`, cleared through staging by `promoter`.
fn b1(promoter: &str) -> Bundle {
    let mut bundle = bundle("b1", 0);
    bundle.status = Some(BundleStatus {
        cleared: vec![GateCrossing {
            gate: "staging".into(),
            passage: "staging-1".into(),
            at: Time(t0()),
            actor: promoter.into(),
            reason: String::new(),
        }],
        ..BundleStatus::default()
    });
    bundle
}

/// `bundle` approved for production by `actor` (in `groups`) `m` minutes after T0.
fn by(mut bundle: Bundle, actor: &str, groups: &[&str], m: i64) -> Bundle {
    bundle
        .status
        .get_or_insert_with(BundleStatus::default)
        .approvals
        .push(PolicyApproval {
            gate: "production".into(),
            actor: actor.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            at: minutes(t0(), m),
        });
    bundle
}

fn rejected(bundle: Bundle, actor: &str, withdrawn_by: &str) -> Bundle {
    withdrawn_as(bundle, actor, withdrawn_by, &[])
}

/// `bundle` rejected for production by `actor`, withdrawn by `withdrawn_by` (none when
/// empty) with the groups the cluster gave them then.
fn withdrawn_as(mut bundle: Bundle, actor: &str, withdrawn_by: &str, groups: &[&str]) -> Bundle {
    bundle
        .status
        .get_or_insert_with(BundleStatus::default)
        .rejections
        .push(Rejection {
            gate: "production".into(),
            actor: actor.into(),
            at: Time(t0()),
            reason: "the migration is not reversible".into(),
            withdrawn_by: withdrawn_by.into(),
            withdrawn_at: (!withdrawn_by.is_empty()).then(|| Time(t0())),
            withdrawn_groups: groups.iter().map(|g| g.to_string()).collect(),
        });
    bundle
}

/// Production's verdict on `bundle` at `now` when `promoter` asks: the code (None:
/// eligible) and the reason.
fn verdict(
    gate: &Gate,
    bundle: &Bundle,
    promoter: Option<&str>,
    now: Timestamp,
) -> (Option<Code>, String) {
    let candidates = evaluate(gate, std::slice::from_ref(bundle), promoter, now);
    candidates[0]
        .blocked
        .as_ref()
        .map_or((None, String::new()), |why| {
            (Some(why.code), why.reason.clone())
        })
}

fn person(name: &str, groups: &[&str]) -> Person {
    Person {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
    }
}

const RM: &[&str] = &["release-managers"];

/// A case: what it is, the Bundle, and production's verdict on it.
type Case = (&'static str, Bundle, (Option<Code>, &'static str));

#[test]
fn two_from_a_group_count_distinct_people() {
    let gate = production(policy(vec![rule(2, RM, &[])]));
    let cases: Vec<Case> = vec![
        (
            "nobody yet",
            b1("bob"),
            (
                Some(Code::AwaitingApproval),
                "awaiting approval: 0 of 2 from release-managers",
            ),
        ),
        (
            "one",
            by(b1("bob"), "carol", RM, 0),
            (
                Some(Code::AwaitingApproval),
                "awaiting approval: 1 of 2 from release-managers; carol approved",
            ),
        ),
        (
            // The same person twice counts once.
            "carol twice",
            by(by(b1("bob"), "carol", RM, 0), "carol", RM, 1),
            (
                Some(Code::AwaitingApproval),
                "awaiting approval: 1 of 2 from release-managers; carol approved",
            ),
        ),
        (
            "someone outside the group",
            by(by(b1("bob"), "carol", RM, 0), "alice", &["developers"], 1),
            (
                Some(Code::AwaitingApproval),
                "awaiting approval: 1 of 2 from release-managers; carol approved; alice's approval does not count (no rule names them or a group of theirs)",
            ),
        ),
        (
            "two",
            by(by(b1("bob"), "carol", RM, 0), "dave", RM, 1),
            (None, ""),
        ),
    ];
    for (case, bundle, (code, reason)) in cases {
        assert_eq!(
            verdict(&gate, &bundle, None, t0()),
            (code, reason.to_string()),
            "{case}"
        );
    }
}

#[test]
fn every_rule_must_hold_and_one_approval_counts_toward_each_it_names() {
    let gate = production(policy(vec![rule(2, RM, &[]), rule(1, &[], &["carol"])]));
    let dave = by(b1("bob"), "dave", RM, 0);
    assert_eq!(
        verdict(&gate, &dave, None, t0()).1,
        "awaiting approval: 1 of 2 from release-managers, 0 of 1 from carol; dave approved"
    );
    // carol is a release manager too: her approval counts toward both rules.
    let both = by(dave, "carol", RM, 1);
    assert_eq!(verdict(&gate, &both, None, t0()), (None, String::new()));
}

#[test]
fn the_promoter_never_counts() {
    let gate = production(policy(vec![rule(2, RM, &[])]));
    let bundle = by(by(b1("bob"), "carol", RM, 0), "dave", RM, 1);
    assert_eq!(
        verdict(&gate, &bundle, Some("erin"), t0()),
        (None, String::new())
    );
    assert_eq!(
        verdict(&gate, &bundle, Some("carol"), t0()),
        (
            Some(Code::SelfApproved),
            "carol approved it and cannot also promote it (1 of 2 from release-managers; dave approved; carol's approval does not count (they are the one promoting it))".into()
        )
    );
    // Short of the policy even with the promoter's: awaiting, not self-approved.
    let one = by(b1("bob"), "carol", RM, 0);
    assert_eq!(
        verdict(&gate, &one, Some("carol"), t0()).0,
        Some(Code::AwaitingApproval)
    );
}

#[test]
fn require_approval_alone_is_as_before() {
    let mut gate = gate("production");
    gate.spec.admits = vec![hecate_types::Admission {
        require_approval: true,
        ..admits("app", &[])
    }];
    let bundle = bundle("b1", 0);
    assert_eq!(
        verdict(&gate, &bundle, None, t0()),
        (Some(Code::AwaitingApproval), "awaiting approval".into())
    );
    let approved = approved(bundle, "production", "carol");
    assert_eq!(verdict(&gate, &approved, None, t0()), (None, String::new()));
    assert_eq!(
        verdict(&gate, &approved, Some("carol"), t0()),
        (
            Some(Code::SelfApproved),
            "approved only by carol, who cannot also promote it".into()
        )
    );
}

#[test]
fn the_author_and_upstream_promoters_are_excluded_when_the_policy_says() {
    let mut strict = policy(vec![rule(1, &[], &[])]);
    strict.exclude_author = true;
    strict.exclude_upstream_promoters = true;
    let gate = production(strict.clone());
    let mut authored = b1("bob");
    authored.spec.artifacts = vec![hecate_types::Artifact {
        commit: Some(hecate_types::CommitArtifact {
            repo: "https://git.example/shop".into(),
            sha: "abc".into(),
            author: "Alice Liddell <Alice@acme.example>".into(),
            ..hecate_types::CommitArtifact::default()
        }),
        ..hecate_types::Artifact::default()
    }];
    let cases = [
        (
            "bob promoted it through staging",
            "bob",
            Uncounted::UpstreamPromoter,
        ),
        (
            "alice wrote it (by email, any case)",
            "alice@acme.example",
            Uncounted::Author,
        ),
        (
            "alice wrote it (by name)",
            "Alice Liddell",
            Uncounted::Author,
        ),
    ];
    for (case, actor, why) in cases {
        let bundle = by(authored.clone(), actor, &[], 0);
        let (code, reason) = verdict(&gate, &bundle, None, t0());
        assert_eq!(code, Some(Code::AwaitingApproval), "{case}");
        assert!(reason.contains(why.words()), "{case}: {reason}");
        assert_eq!(
            approval::may_count(
                Asked::Policy(&strict),
                "production",
                &authored,
                &person(actor, &[])
            ),
            Err(why),
            "{case}"
        );
    }
    // Someone else counts; the controller's own crossings exclude nobody.
    let carol = by(authored.clone(), "carol", &[], 0);
    assert_eq!(verdict(&gate, &carol, None, t0()).0, None);
    assert!(!approval::promoted_upstream(
        &b1("controller"),
        "production",
        "controller"
    ));
    // Without the exclusions, bob counts.
    let lenient = production(policy(vec![rule(1, &[], &[])]));
    assert_eq!(
        verdict(&lenient, &by(b1("bob"), "bob", &[], 0), None, t0()).0,
        None
    );
}

#[test]
fn an_approval_expires_at_the_instant() {
    let mut lasting = policy(vec![rule(1, RM, &[])]);
    lasting.expire_after = "24h".into();
    let gate = production(lasting);
    let bundle = by(b1("bob"), "carol", RM, 0);
    let expiry = t0() + SignedDuration::from_hours(24);
    let just_before = expiry - SignedDuration::from_nanos(1);
    assert_eq!(verdict(&gate, &bundle, None, just_before).0, None);
    assert_eq!(
        verdict(&gate, &bundle, None, expiry),
        (
            Some(Code::AwaitingApproval),
            "awaiting approval: 0 of 1 from release-managers; carol's approval does not count (it expired)".into()
        )
    );
    // What Explain says changes then, so a server's remembered answer lasts until then.
    let snapshot = NamespaceSnapshot::new(NS, vec![gate.clone()], vec![bundle], vec![]);
    assert_eq!(unchanged_until(&snapshot, &gate, t0()), Some(expiry));
    assert_eq!(unchanged_until(&snapshot, &gate, expiry), None);
}

#[test]
fn a_rejection_holds_until_withdrawn() {
    let gate = production(policy(vec![rule(1, RM, &[])]));
    let approved_and_rejected = rejected(by(b1("bob"), "carol", RM, 0), "dave", "");
    assert_eq!(
        verdict(&gate, &approved_and_rejected, None, t0()),
        (
            Some(Code::Rejected),
            "rejected by dave: the migration is not reversible".into()
        )
    );
    let withdrawn = rejected(by(b1("bob"), "carol", RM, 0), "dave", "dave");
    assert_eq!(verdict(&gate, &withdrawn, None, t0()).0, None);
    // A "no" holds a Bundle even where no approval is asked for.
    let mut open = gate.clone();
    open.spec.admits[0].approvals = None;
    assert_eq!(
        verdict(&open, &rejected(b1("bob"), "dave", ""), None, t0()).0,
        Some(Code::Rejected)
    );
}

#[test]
fn a_withdrawal_counts_only_from_someone_who_may_withdraw() {
    // Anyone who may write a Bundle's status may write a withdrawal in their own name
    // (the records policy sees to the name); whether it lifts the "no" is judged here.
    let gate = production(policy(vec![rule(1, RM, &["carol"])]));
    let cases = [
        ("by the one who rejected it", "dave", &[][..], None),
        ("by a user the policy names", "carol", &[][..], None),
        ("by a member of a group it names", "erin", RM, None),
        (
            "by anyone else",
            "ci-bot",
            &["system:authenticated"][..],
            Some(Code::Rejected),
        ),
        (
            "by someone in the group now but not then",
            "frank",
            &[][..],
            Some(Code::Rejected),
        ),
    ];
    for (case, by_whom, groups, code) in cases {
        let bundle = withdrawn_as(by(b1("bob"), "carol", RM, 0), "dave", by_whom, groups);
        assert_eq!(verdict(&gate, &bundle, None, t0()).0, code, "{case}");
    }
    // Without a policy, only the one who rejected it lifts it.
    let mut open = gate.clone();
    open.spec.admits[0].approvals = None;
    let lifted_by_other = withdrawn_as(b1("bob"), "dave", "carol", RM);
    assert_eq!(
        verdict(&open, &lifted_by_other, None, t0()).0,
        Some(Code::Rejected)
    );
}

#[test]
fn an_approval_dated_ahead_does_not_count() {
    // One dated ahead would never expire; a few minutes of a fast clock are allowed.
    let mut lasting = policy(vec![rule(1, RM, &[])]);
    lasting.expire_after = "24h".into();
    let gate = production(lasting);
    assert_eq!(
        verdict(&gate, &by(b1("bob"), "carol", RM, 4), None, t0()).0,
        None
    );
    assert_eq!(
        verdict(&gate, &by(b1("bob"), "carol", RM, 60 * 24 * 365), None, t0()),
        (
            Some(Code::AwaitingApproval),
            "awaiting approval: 0 of 1 from release-managers; carol's approval does not count (it is dated in the future)".into()
        )
    );
}

#[test]
fn who_may_withdraw_a_rejection() {
    let policy = policy(vec![rule(1, RM, &["carol"])]);
    let asked = Asked::Policy(&policy);
    let held = rejected(b1("bob"), "erin", "");
    let cases = [
        ("the one who rejected it", person("erin", &[]), true),
        ("a user the policy names", person("carol", &[]), true),
        ("a member of a group it names", person("dave", RM), true),
        ("anyone else", person("bob", &["developers"]), false),
    ];
    for (case, who, may) in cases {
        assert_eq!(
            approval::may_withdraw(asked, "production", &held, &who),
            may,
            "{case}"
        );
    }
    // Nothing standing: nothing to withdraw.
    assert!(!approval::may_withdraw(
        asked,
        "production",
        &b1("bob"),
        &person("erin", &[])
    ));
    // Without a policy, only the one who rejected it.
    assert!(!approval::may_withdraw(
        Asked::Nothing,
        "production",
        &held,
        &person("dave", RM)
    ));
    assert!(approval::may_withdraw(
        Asked::Nothing,
        "production",
        &held,
        &person("erin", &[])
    ));
}

#[test]
fn explain_says_what_is_missing_and_who_may_give_it() {
    let gate = production(policy(vec![rule(2, RM, &[])]));
    let bundle = cleared(by(b1("bob"), "carol", RM, 0), &["staging"]);
    let snapshot = NamespaceSnapshot::new(NS, vec![gate.clone()], vec![bundle], vec![]);
    let x = explain(&snapshot, &gate, t0());
    let blocker = x
        .blockers
        .iter()
        .find(|b| b.kind == BlockerKind::NotApproved)
        .expect("an approval blocker");
    assert_eq!(
        blocker.detail,
        "b1: awaiting approval: 1 of 2 from release-managers; carol approved"
    );
    assert_eq!(
        blocker.action,
        Some(Remedy::Approve {
            gate: "production".into(),
            bundle: "b1".into(),
            from: vec!["release-managers".into()],
        })
    );
    assert!(
        blocker.fix.ends_with("(by release-managers)"),
        "{}",
        blocker.fix
    );
    let progress = x.waiting[0].approvals.as_ref().expect("the progress");
    assert_eq!(progress.rules[0].approved_by, ["carol"]);
}

#[test]
fn explain_names_a_rejection_and_who_may_lift_it() {
    let gate = production(policy(vec![rule(1, RM, &[])]));
    let bundle = rejected(b1("bob"), "dave", "");
    let snapshot = NamespaceSnapshot::new(NS, vec![gate.clone()], vec![bundle], vec![]);
    let x = explain(&snapshot, &gate, t0());
    let blocker = x
        .blockers
        .iter()
        .find(|b| b.kind == BlockerKind::Rejected)
        .expect("a rejection blocker");
    assert_eq!(
        blocker.action,
        Some(Remedy::WithdrawRejection {
            gate: "production".into(),
            bundle: "b1".into(),
            by: vec!["dave".into(), "release-managers".into()],
        })
    );
}

#[test]
fn the_queue_says_what_each_viewer_could_do() {
    let mut strict = policy(vec![rule(2, RM, &[])]);
    strict.exclude_upstream_promoters = true;
    let gate = production(strict);
    let waiting = by(b1("bob"), "carol", RM, 0);
    let snapshot = NamespaceSnapshot::new(NS, vec![gate], vec![waiting], vec![]);
    let turn = |who: Person| {
        let queue = approval::queue(&snapshot, &who, t0());
        assert_eq!(queue.len(), 1);
        assert_eq!(
            queue[0].progress.summary,
            "1 of 2 from release-managers; carol approved"
        );
        queue[0].you.clone()
    };
    let carol = turn(person("carol", RM));
    assert!(carol.approved && !carol.can_approve);
    let dave = turn(person("dave", RM));
    assert!(dave.can_approve && dave.not_counted.is_none());
    let bob = turn(person("bob", RM));
    assert_eq!(
        (bob.can_approve, bob.not_counted),
        (false, Some(Uncounted::UpstreamPromoter))
    );
    let alice = turn(person("alice", &["developers"]));
    assert_eq!(
        (alice.can_approve, alice.not_counted),
        (false, Some(Uncounted::NotNamed))
    );
}

#[test]
fn a_policy_no_one_can_satisfy_says_so() {
    // Two approvals from a list of one person: never.
    let gate = production(policy(vec![rule(2, &[], &["carol"])]));
    let (code, reason) = verdict(&gate, &b1("bob"), None, t0());
    assert_eq!(code, Some(Code::AwaitingApproval));
    assert_eq!(
        reason,
        "awaiting approval: 0 of 2 from carol, which no one can complete: too few of those it names may count"
    );
    // The only person named promoted it through staging, and the policy leaves them out.
    let mut strict = policy(vec![rule(1, &[], &["bob"])]);
    strict.exclude_upstream_promoters = true;
    let progress = approval::judge(Asked::Policy(&strict), "production", &b1("bob"), None, t0())
        .expect("a policy is judged");
    assert!(progress.rules[0].impossible, "{progress:?}");
    // A group can always gain members: never called impossible.
    let groups = policy(vec![rule(5, RM, &[])]);
    let progress = approval::judge(Asked::Policy(&groups), "production", &b1("bob"), None, t0())
        .expect("a policy is judged");
    assert!(!progress.rules[0].impossible);
}

#[test]
fn one_of_the_alternatives_must_hold() {
    // Two from sre, or one from release-managers.
    let either = ApprovalPolicy {
        any_of: vec![
            hecate_types::ApprovalAlternative {
                required: vec![rule(2, &["sre"], &[])],
            },
            hecate_types::ApprovalAlternative {
                required: vec![rule(1, RM, &[])],
            },
        ],
        ..ApprovalPolicy::default()
    };
    let gate = production(either.clone());
    let one_sre = by(b1("bob"), "erin", &["sre"], 0);
    assert_eq!(
        verdict(&gate, &one_sre, None, t0()),
        (
            Some(Code::AwaitingApproval),
            "awaiting approval: either 1 of 2 from sre or 0 of 1 from release-managers; erin approved".into()
        )
    );
    let two_sres = by(one_sre.clone(), "frank", &["sre"], 1);
    assert_eq!(verdict(&gate, &two_sres, None, t0()).0, None);
    let a_release_manager = by(b1("bob"), "carol", RM, 0);
    assert_eq!(verdict(&gate, &a_release_manager, None, t0()).0, None);
    // Whose approval would help: anyone the open alternatives name.
    let progress = approval::judge(Asked::Policy(&either), "production", &one_sre, None, t0())
        .expect("a policy is judged");
    assert_eq!(
        approval::missing_from(&progress),
        ["sre", "release-managers"]
    );
    assert_eq!(
        approval::may_count(
            Asked::Policy(&either),
            "production",
            &one_sre,
            &person("alice", &["developers"])
        ),
        Err(Uncounted::NotNamed)
    );
}

/// An approval into a frozen window is said where it is decided (issue 53): the queue
/// row carries the window's words, when it lifts, and whether the Gate then crosses by
/// itself; outside the freeze it carries nothing.
#[test]
fn the_queue_says_when_a_window_holds_the_gate() {
    let mut gate = production(policy(vec![rule(2, RM, &[])]));
    gate.spec.auto = true;
    // The clock is Tuesday 2026-08-11 12:00 UTC: a weekday freeze 09:00–17:00 holds it.
    gate.spec.windows = vec![hecate_types::Window {
        deny: true,
        ..window("0 9 * * 1-5", "8h")
    }];
    let waiting = by(b1("bob"), "carol", RM, 0);
    let snapshot = NamespaceSnapshot::new(NS, vec![gate.clone()], vec![waiting.clone()], vec![]);
    let queue = approval::queue(&snapshot, &person("dave", RM), t0());
    let held = queue[0].held.clone().expect("the freeze holds production");
    assert!(held.unattended, "production crosses by itself");
    assert_eq!(
        held.until,
        Some(hecate_types::Time("2026-08-11T17:00:00Z".parse().unwrap()))
    );
    assert!(
        held.reason.ends_with("until Tue 11 Aug 2026 17:00 UTC"),
        "{}",
        held.reason
    );

    // At 18:00 the freeze is over: nothing holds it.
    let evening = t0() + SignedDuration::from_hours(6);
    let snapshot = NamespaceSnapshot::new(NS, vec![gate], vec![waiting], vec![]);
    assert_eq!(
        approval::queue(&snapshot, &person("dave", RM), evening)[0].held,
        None
    );
}

/// Who approves a Gate that spans targets reads where it goes (issue 52); a Gate of
/// one place says nothing of it.
#[test]
fn the_queue_says_where_a_crossing_goes() {
    let mut gate = production(policy(vec![rule(2, RM, &[])]));
    let waiting = by(b1("bob"), "carol", RM, 0);
    let snapshot = NamespaceSnapshot::new(NS, vec![gate.clone()], vec![waiting.clone()], vec![]);
    assert_eq!(
        approval::queue(&snapshot, &person("dave", RM), t0())[0].reach,
        ""
    );
    gate.spec.targets = Some(hecate_types::Targets {
        list: ["eu-1", "us-1"]
            .map(|name| hecate_types::Target {
                name: name.into(),
                ..hecate_types::Target::default()
            })
            .to_vec(),
        selector: None,
    });
    let snapshot = NamespaceSnapshot::new(NS, vec![gate], vec![waiting], vec![]);
    assert_eq!(
        approval::queue(&snapshot, &person("dave", RM), t0())[0].reach,
        "to eu-1 and us-1, all at once"
    );
}
