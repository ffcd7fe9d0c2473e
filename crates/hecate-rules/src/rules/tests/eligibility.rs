//! Spec §11.2 (AC-010 – AC-024), and segregation of duties.

use hecate_types::{Bundle, Gate, GateSpec};
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;

use crate::rules::eligibility::{
    AutoNext, Code, admitted_beacons, auto_next, eligible, evaluate, next_auto,
};
use crate::rules::fixtures::*;

fn gate_admitting(name: &str, admissions: Vec<hecate_types::Admission>) -> Gate {
    let mut gate = gate(name);
    gate.spec = GateSpec {
        admits: admissions,
        ..GateSpec::default()
    };
    gate
}

fn b(name: &str, m: i64, cleared_at: &[&str]) -> Bundle {
    cleared(bundle_of(name, "podinfo", g0(), m), cleared_at)
}

/// `(name, code)` per candidate; `None` for eligible ones.
fn verdicts(
    gate: &Gate,
    bundles: &[Bundle],
    promoter: Option<&str>,
) -> Vec<(String, Option<Code>, String)> {
    evaluate(gate, bundles, promoter, t0())
        .iter()
        .map(|c| {
            let (code, reason) = c
                .blocked
                .as_ref()
                .map_or((None, String::new()), |i| (Some(i.code), i.reason.clone()));
            (c.bundle.name_any(), code, reason)
        })
        .collect()
}

fn names(bundles: &[&Bundle]) -> Vec<String> {
    bundles.iter().map(|b| b.name_any()).collect()
}

#[test]
fn ac010_upstream_clearance_is_required() {
    let gate = gate_admitting("production", vec![admits("podinfo", &["staging"])]);
    let bundles = [b("uncleared", 0, &[]), b("cleared", 1, &["staging"])];
    assert_eq!(
        verdicts(&gate, &bundles, None),
        [
            (
                "uncleared".into(),
                Some(Code::UpstreamNotCleared),
                "has not cleared staging".into()
            ),
            ("cleared".into(), None, String::new()),
        ]
    );
}

#[test]
fn ac011_every_upstream_gate_must_be_cleared() {
    let gate = gate_admitting(
        "production",
        vec![admits("podinfo", &["staging", "canary"])],
    );
    let bundles = [
        b("partial", 0, &["staging"]),
        b("full", 1, &["staging", "canary"]),
        b("none", 2, &[]),
    ];
    let v = verdicts(&gate, &bundles, None);
    assert_eq!(
        v[0].2, "has not cleared canary",
        "names only what is missing"
    );
    assert_eq!(v[1].1, None);
    assert_eq!(
        v[2].2, "has not cleared staging, canary",
        "in `after` order"
    );
}

#[test]
fn ac012_an_entry_gate_needs_no_clearance() {
    let gate = gate_admitting("dev", vec![admits("podinfo", &[])]);
    assert_eq!(verdicts(&gate, &[b("fresh", 0, &[])], None)[0].1, None);
}

#[test]
fn ac013_approval_is_required_when_asked() {
    let mut admission = admits("podinfo", &["staging"]);
    admission.require_approval = true;
    let gate = gate_admitting("production", vec![admission]);
    let bundles = [
        b("unapproved", 0, &["staging"]),
        approved(
            b("approved", 1, &["staging"]),
            "production",
            "olaf@acme.example",
        ),
        approved(
            b("elsewhere", 2, &["staging"]),
            "some-other-gate",
            "olaf@acme.example",
        ),
    ];
    assert_eq!(
        verdicts(&gate, &bundles, None),
        [
            (
                "unapproved".into(),
                Some(Code::AwaitingApproval),
                "awaiting approval".into()
            ),
            ("approved".into(), None, String::new()),
            (
                "elsewhere".into(),
                Some(Code::AwaitingApproval),
                "awaiting approval".into()
            ),
        ]
    );
}

#[test]
fn ac014_approval_does_not_skip_upstream_ordering() {
    let mut admission = admits("podinfo", &["staging"]);
    admission.require_approval = true;
    let gate = gate_admitting("production", vec![admission]);
    let bundles = [approved(
        b("unstaged", 0, &[]),
        "production",
        "olaf@acme.example",
    )];
    assert_eq!(
        verdicts(&gate, &bundles, None)[0].1,
        Some(Code::UpstreamNotCleared)
    );
}

#[test]
fn ac015_bundles_from_other_beacons_are_ignored() {
    let gate = gate_admitting("production", vec![admits("podinfo", &[])]);
    let bundles = [
        b("ours", 0, &[]),
        bundle_of("theirs", "some-other-service", g0(), 0),
    ];
    assert_eq!(
        verdicts(&gate, &bundles, None),
        [("ours".into(), None, String::new())]
    );
}

#[test]
fn only_the_admitted_beacons_bundles_are_judged() {
    // What Ops reads for Explain: the Bundles of these Beacons only. Judging them
    // alone gives the verdicts judging every Bundle gives.
    let gate = gate_admitting(
        "production",
        vec![admits("podinfo", &[]), admits("web", &["staging"])],
    );
    assert_eq!(
        admitted_beacons(&gate).into_iter().collect::<Vec<_>>(),
        ["podinfo", "web"]
    );
    let every = [
        b("ours", 0, &[]),
        bundle_of("web-1", "web", g0(), 1),
        bundle_of("theirs", "some-other-service", g0(), 2),
    ];
    let admitted: Vec<Bundle> = every
        .iter()
        .filter(|b| admitted_beacons(&gate).contains(b.spec.beacon.as_str()))
        .cloned()
        .collect();
    assert_eq!(admitted.len(), 2);
    assert_eq!(
        verdicts(&gate, &admitted, None),
        verdicts(&gate, &every, None)
    );
    assert!(admitted_beacons(&gate_admitting("dev", vec![])).is_empty());
}

#[test]
fn the_first_matching_admission_decides() {
    let mut strict = admits("podinfo", &["staging"]);
    strict.require_approval = true;
    let gate = gate_admitting("production", vec![admits("podinfo", &[]), strict]);
    assert_eq!(verdicts(&gate, &[b("x", 0, &[])], None)[0].1, None);
}

#[test]
fn ac016_the_current_occupant_is_not_eligible() {
    let gate = with_current(
        gate_admitting("dev", vec![admits("podinfo", &[])]),
        "here-already",
    );
    assert_eq!(
        verdicts(&gate, &[b("here-already", 0, &[])], None),
        [(
            "here-already".into(),
            Some(Code::AlreadyCurrent),
            "already in this Gate".into()
        )]
    );
}

#[test]
fn ac017_a_previously_cleared_bundle_stays_eligible() {
    let gate = gate_admitting("production", vec![admits("podinfo", &["staging"])]);
    assert_eq!(
        verdicts(&gate, &[b("v1", 0, &["staging", "production"])], None)[0].1,
        None
    );
}

#[test]
fn ac018_eligible_is_newest_first() {
    let gate = gate_admitting("dev", vec![admits("podinfo", &[])]);
    let bundles = [
        b("oldest", 0, &[]),
        b("newest", 10, &[]),
        b("middle", 5, &[]),
    ];
    assert_eq!(
        names(&eligible(&evaluate(&gate, &bundles, None, t0()))),
        ["newest", "middle", "oldest"]
    );
}

#[test]
fn ac019_eligible_order_is_stable_on_ties() {
    let gate = gate_admitting("dev", vec![admits("podinfo", &[])]);
    let bundles = [b("b", 0, &[]), b("a", 0, &[])];
    for _ in 0..5 {
        assert_eq!(
            names(&eligible(&evaluate(&gate, &bundles, None, t0())))[0],
            "a"
        );
    }
}

#[test]
fn ac020_to_022_next_auto_only_moves_forward() {
    let gate = gate_admitting("dev", vec![admits("podinfo", &[])]);
    let bundles = [b("older", 0, &[]), b("newer", 10, &[])];
    let candidates = evaluate(&gate, &bundles, None, t0());
    // AC-020: an empty Gate takes the newest.
    assert_eq!(
        next_auto("dev", &candidates, None).map(|b| b.name_any()),
        Some("newer".into())
    );

    // AC-021: with `newer` current, `older` is eligible but never chosen.
    let gate = with_current(gate, "newer");
    let candidates = evaluate(&gate, &bundles, None, t0());
    assert_eq!(names(&eligible(&candidates)), ["older"]);
    assert_eq!(next_auto("dev", &candidates, Some(&bundles[1])), None);

    // AC-022: nothing eligible, nothing next.
    let gate = gate_admitting("production", vec![admits("podinfo", &["staging"])]);
    let bundles = [b("nope", 0, &[])];
    assert_eq!(
        next_auto("production", &evaluate(&gate, &bundles, None, t0()), None),
        None
    );
}

#[test]
fn ac023_auto_does_not_retry_a_failed_crossing() {
    let gate = gate_admitting("staging", vec![admits("podinfo", &[])]);
    let bundles = [blocked(b("b1", 0, &[]), "staging", "http: no such host")];
    let candidates = evaluate(&gate, &bundles, None, t0());
    assert!(candidates[0].is_eligible(), "a person may still retry it");
    assert_eq!(next_auto("staging", &candidates, None), None);
}

#[test]
fn a_failure_older_than_the_current_bundle_is_history_not_a_blocker() {
    // `failed` failed here, then `fixed` crossed: the Gate holds a newer Bundle, so
    // the old failure neither stops it nor makes it "failed".
    let gate = gate_admitting("production", vec![admits("podinfo", &[])]);
    let bundles = [
        blocked(b("failed", 0, &[]), "production", "health checks failing"),
        b("fixed", 10, &[]),
    ];
    let gate = with_current(gate, "fixed");
    let candidates = evaluate(&gate, &bundles, None, t0());
    assert_eq!(names(&eligible(&candidates)), ["failed"]);
    assert_eq!(
        auto_next("production", &candidates, Some(&bundles[1])),
        AutoNext::NothingNewer { held_back: None }
    );
    // A newer Bundle that is not eligible yet says why.
    let mut approval = admits("podinfo", &[]);
    approval.require_approval = true;
    let gate = with_current(gate_admitting("production", vec![approval]), "fixed");
    let bundles = [b("fixed", 0, &[]), b("newest", 10, &[])];
    let candidates = evaluate(&gate, &bundles, None, t0());
    assert_eq!(
        auto_next("production", &candidates, Some(&bundles[0])),
        AutoNext::NoneEligible
    );
    let bundles = [
        approved(b("older", 0, &[]), "production", "carol"),
        b("fixed", 5, &[]),
        b("newest", 10, &[]),
    ];
    let candidates = evaluate(&gate, &bundles, None, t0());
    assert_eq!(
        auto_next("production", &candidates, Some(&bundles[1])),
        AutoNext::NothingNewer {
            held_back: Some("awaiting approval".into())
        }
    );
    // Two newer Bundles held back for different reasons: both said, with counts.
    let mut gate = gate;
    gate.spec.admits[0].after = vec!["staging".into()];
    let bundles = [
        approved(b("older", 0, &["staging"]), "production", "carol"),
        b("fixed", 5, &["staging"]),
        b("unapproved", 10, &["staging"]),
        b("untested", 20, &[]),
    ];
    let candidates = evaluate(&gate, &bundles, None, t0());
    assert_eq!(
        auto_next("production", &candidates, Some(&bundles[1])),
        AutoNext::NothingNewer {
            held_back: Some("awaiting approval (1), has not cleared staging (1)".into())
        }
    );
    // The same failure newer than the occupant is the Gate's to report.
    let gate = with_current(
        gate_admitting("production", vec![admits("podinfo", &[])]),
        "old",
    );
    let bundles = [
        b("old", 0, &[]),
        blocked(b("failed", 10, &[]), "production", "health checks failing"),
    ];
    let candidates = evaluate(&gate, &bundles, None, t0());
    assert_eq!(
        auto_next("production", &candidates, Some(&bundles[0])),
        AutoNext::FailedHere(&bundles[1])
    );
    // Nothing eligible at all.
    assert_eq!(auto_next("production", &[], None), AutoNext::NoneEligible);
}

#[test]
fn ac024_a_failure_at_one_gate_does_not_block_another() {
    let gate = gate_admitting("production", vec![admits("podinfo", &["staging"])]);
    let bundles = [blocked(b("b1", 0, &["staging"]), "staging", "transient")];
    let next = next_auto("production", &evaluate(&gate, &bundles, None, t0()), None);
    assert_eq!(next.map(|b| b.name_any()), Some("b1".into()));
}

#[test]
fn a_promoters_own_approval_does_not_count() {
    let mut admission = admits("podinfo", &[]);
    admission.require_approval = true;
    let gate = gate_admitting("production", vec![admission]);
    let bundles = [approved(b("b1", 0, &[]), "production", "alice")];
    // Nobody in particular asking (Explain, the controller): the approval counts.
    assert_eq!(verdicts(&gate, &bundles, None)[0].1, None);
    // Someone else promoting: it counts.
    assert_eq!(verdicts(&gate, &bundles, Some("bob"))[0].1, None);
    // The approver promoting: it does not, and the reason names her.
    let v = verdicts(&gate, &bundles, Some("alice"));
    assert_eq!(v[0].1, Some(Code::SelfApproved));
    assert!(v[0].2.contains("alice"), "{}", v[0].2);
}

#[test]
fn a_promoters_own_approval_matters_only_where_approval_is_required() {
    let gate = gate_admitting("production", vec![admits("podinfo", &[])]);
    let bundles = [approved(b("b1", 0, &[]), "production", "alice")];
    assert_eq!(verdicts(&gate, &bundles, Some("alice"))[0].1, None);
}

#[test]
fn ac154_the_waiting_summary_names_the_commonest_reason_and_its_share() {
    let mut admission = admits("podinfo", &["dev"]);
    admission.require_approval = true;
    let gate = gate_admitting("production", vec![admission]);
    let bundles = [b("a", 0, &["dev"]), b("b", 1, &[]), b("c", 2, &["dev"])];
    let candidates = evaluate(&gate, &bundles, None, t0());
    assert_eq!(
        crate::rules::eligibility::waiting_on(&candidates).as_deref(),
        Some("awaiting approval (2 of 3 Bundles)")
    );
    // A reason every candidate shares needs no count; nothing admitted says so.
    let all_waiting = evaluate(&gate, &bundles[1..2], None, t0());
    assert_eq!(
        crate::rules::eligibility::waiting_on(&all_waiting).as_deref(),
        Some("has not cleared dev")
    );
    assert_eq!(
        crate::rules::eligibility::waiting_on(&[]).as_deref(),
        Some("no Bundles from any admitted Beacon")
    );
    // Anything eligible: nothing is being waited on.
    let open = gate_admitting("production", vec![admits("podinfo", &[])]);
    assert_eq!(
        crate::rules::eligibility::waiting_on(&evaluate(&open, &bundles, None, t0())),
        None
    );
}

/// Two Bundles emitted within one second (a Beacon polled twice, a CI pushing two
/// commits): `creationTimestamp` ties, the writer's nanosecond time does not, and the
/// newer still crosses by itself.
#[test]
fn a_bundle_emitted_in_the_same_second_as_the_current_one_is_still_newer() {
    use hecate_types::wellknown::ANNOTATION_CREATED_AT;
    let at = |b: hecate_types::Bundle, t: &str| {
        let mut b = b;
        b.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(ANNOTATION_CREATED_AT.into(), t.into());
        b
    };
    // Names chosen so that name order (the old tie-break) puts the newer one last.
    let bundles = [
        at(b("a-current", 0, &[]), "2026-12-01T06:00:00.100Z"),
        at(b("z-newer", 0, &[]), "2026-12-01T06:00:00.900Z"),
    ];
    let gate = with_current(
        gate_admitting("dev", vec![admits("podinfo", &[])]),
        "a-current",
    );
    let candidates = evaluate(&gate, &bundles, None, t0());
    assert_eq!(
        next_auto("dev", &candidates, Some(&bundles[0])).map(|b| b.name_any()),
        Some("z-newer".into())
    );
    // Without the annotation the two tie, and nothing moves forward (the reference's
    // behaviour for objects it made).
    let plain = [b("a-current", 0, &[]), b("z-newer", 0, &[])];
    let candidates = evaluate(&gate, &plain, None, t0());
    assert_eq!(next_auto("dev", &candidates, Some(&plain[0])), None);
}
