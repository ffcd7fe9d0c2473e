//! The timeline (issue 20): each recent Bundle, newest first, with where it stands at
//! every Gate on its way.

use hecate_types::{Bundle, BundleStatus, Gate, GateCrossing, Passage, PassagePhase::*, Time};
use kube::ResourceExt as _;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::model::{BundleTrack, Outcome};
use crate::rules::fixtures::*;
use crate::rules::overview::overview;
use crate::rules::snapshot::NamespaceSnapshot;
use crate::rules::timeline::{TIMELINE_BUNDLES, timeline};

fn after(name: &str, beacon: &str, upstream: &[&str]) -> Gate {
    let mut gate = gate(name);
    gate.spec.admits = vec![admits(beacon, upstream)];
    gate
}

/// dev → staging → production for Beacon `app`; `tools` for Beacon `other`.
fn pipeline() -> Vec<Gate> {
    vec![
        after("production", "app", &["staging"]),
        after("tools", "other", &[]),
        after("staging", "app", &["dev"]),
        after("dev", "app", &[]),
    ]
}

/// A record at `gate`, `m` minutes after T0, by Passage `{gate}-{bundle}`.
fn record(gate: &str, bundle: &str, m: i64, reason: &str) -> GateCrossing {
    GateCrossing {
        gate: gate.into(),
        passage: format!("{gate}-{bundle}"),
        at: minutes(t0(), m),
        actor: String::new(),
        reason: reason.into(),
    }
}

fn with_records(
    mut bundle: Bundle,
    cleared: &[(&str, i64)],
    blocked: &[(&str, i64, &str)],
) -> Bundle {
    let name = bundle.name_any();
    let status = bundle.status.get_or_insert_with(BundleStatus::default);
    status.cleared = cleared
        .iter()
        .map(|(g, m)| record(g, &name, *m, ""))
        .collect();
    // Newest first, as the controller keeps them.
    status.blocked = blocked
        .iter()
        .rev()
        .map(|(g, m, why)| record(g, &name, *m, why))
        .collect();
    bundle
}

fn started(mut passage: Passage, m: i64) -> Passage {
    passage
        .status
        .get_or_insert_with(Default::default)
        .started_at = Some(minutes(t0(), m));
    passage
}

fn track<'a>(tracks: &'a [BundleTrack], bundle: &str) -> &'a BundleTrack {
    tracks.iter().find(|t| t.bundle == bundle).unwrap()
}

#[test]
fn each_recent_bundle_has_a_stop_per_gate_on_its_way_upstream_first() {
    let gates = vec![
        with_current(pipeline().remove(0), "app-1"),
        pipeline().remove(1),
        with_current(pipeline().remove(2), "app-2"),
        with_current(pipeline().remove(3), "app-3"),
    ];
    let mut app3 = with_records(bundle("app-3", 30), &[("dev", 31)], &[]);
    app3.spec.alias = "v1.3.0".into();
    let bundles = vec![
        with_records(
            bundle("app-1", 10),
            &[("dev", 11), ("staging", 12), ("production", 13)],
            &[],
        ),
        with_records(
            bundle("app-2", 20),
            &[("dev", 21), ("staging", 22)],
            &[("production", 23, "failed at flux-wait")],
        ),
        app3,
        bundle_of("other-1", "other", t0(), 5),
    ];
    let passages = vec![
        passage("production", "app-2", Some(Failed), 23),
        started(passage("staging", "app-3", Some(Running), 32), 33),
    ];
    let snapshot = NamespaceSnapshot::new(NS, gates, bundles, passages);
    let tracks = timeline(&snapshot);

    // Newest first by emission, as ops orders Bundles everywhere.
    let order: Vec<&str> = tracks.iter().map(|t| t.bundle.as_str()).collect();
    assert_eq!(order, ["app-3", "app-2", "app-1", "other-1"]);

    // The newest: cleared dev (held there), crossing staging now, production ahead.
    assert_eq!(
        serde_json::to_value(track(&tracks, "app-3")).unwrap(),
        json!({
            "bundle": "app-3",
            "alias": "v1.3.0",
            "beacon": "app",
            "emittedAt": "2026-08-11T12:30:00Z",
            "gates": [
                {"gate": "dev", "outcome": "crossed", "holding": true, "at": "2026-08-11T12:31:00Z", "passage": "dev-app-3"},
                {"gate": "staging", "outcome": "running", "at": "2026-08-11T12:33:00Z", "passage": "staging-app-3"},
                {"gate": "production"},
            ],
            "holding": ["dev"],
            "failed": 0,
        })
    );
    // A failed crossing is a dot of its own, with why; it counts as a failure.
    let app2 = track(&tracks, "app-2");
    // Without an alias (made before Beacons wrote them, or by hand), its version is
    // still said: derived from its artifacts (its image's tag), as every surface reads
    // it (DECISION 140).
    assert_eq!(app2.alias, "1.0.0");
    let marks: Vec<(&str, Option<Outcome>, bool)> = app2
        .gates
        .iter()
        .map(|s| (s.gate.as_str(), s.outcome, s.holding))
        .collect();
    assert_eq!(
        marks,
        [
            ("dev", Some(Outcome::Crossed), false),
            ("staging", Some(Outcome::Crossed), true),
            ("production", Some(Outcome::Failed), false),
        ]
    );
    assert_eq!(app2.gates[2].reason, "failed at flux-wait");
    assert_eq!(
        (app2.holding.clone(), app2.failed),
        (vec!["staging".to_string()], 1)
    );
    // The oldest of `app` is in production.
    assert_eq!(track(&tracks, "app-1").holding, ["production"]);
    // Another Beacon's Bundle is on its own Gates' way only.
    let other = track(&tracks, "other-1");
    let stops: Vec<&str> = other.gates.iter().map(|s| s.gate.as_str()).collect();
    assert_eq!(stops, ["tools"]);
    assert_eq!(other.gates[0].outcome, None, "not tried yet");
}

#[test]
fn older_bundles_leave_the_timeline_unless_a_gate_holds_one() {
    let gates = vec![with_current(after("production", "app", &[]), "app-00")];
    let bundles: Vec<Bundle> = (0..TIMELINE_BUNDLES as i64 + 3)
        .map(|i| bundle(&format!("app-{i:02}"), i))
        .collect();
    let tracks = timeline(&NamespaceSnapshot::new(NS, gates, bundles, vec![]));
    let names: Vec<&str> = tracks.iter().map(|t| t.bundle.as_str()).collect();
    // The ten newest, then the old one production still runs.
    assert_eq!(names.len(), TIMELINE_BUNDLES + 1);
    assert_eq!(names[0], "app-12");
    assert_eq!(names[TIMELINE_BUNDLES - 1], "app-03");
    assert_eq!(names[TIMELINE_BUNDLES], "app-00");
    // Held without a record of clearing: it entered, so it crossed, when it entered.
    let stop = &tracks[TIMELINE_BUNDLES].gates[0];
    assert_eq!((stop.outcome, stop.holding), (Some(Outcome::Crossed), true));
    assert_eq!(stop.at, Some(Time(t0())));
}

#[test]
fn the_later_record_wins_and_an_abort_is_said_as_such() {
    let gates = vec![after("dev", "app", &[]), after("staging", "app", &["dev"])];
    let bundles = vec![
        // Cleared dev, then (promoted again) aborted there: the abort is the latest.
        with_records(
            bundle("app-2", 20),
            &[("dev", 21)],
            &[
                ("dev", 25, "aborted by carol"),
                ("staging", 22, "failed at flux-wait"),
            ],
        ),
        // Failed staging, then cleared it: cleared.
        with_records(
            bundle("app-1", 10),
            &[("dev", 11), ("staging", 15)],
            &[("staging", 12, "failed at flux-wait")],
        ),
    ];
    let passages = vec![
        passage("dev", "app-2", Some(Aborted), 24),
        passage("staging", "app-2", Some(Failed), 22),
        passage("staging", "app-1", Some(Succeeded), 14),
    ];
    let tracks = timeline(&NamespaceSnapshot::new(NS, gates, bundles, passages));
    let outcomes = |b: &str| -> Vec<Option<Outcome>> {
        track(&tracks, b).gates.iter().map(|s| s.outcome).collect()
    };
    assert_eq!(
        outcomes("app-2"),
        [Some(Outcome::Aborted), Some(Outcome::Failed)]
    );
    assert_eq!(
        outcomes("app-1"),
        [Some(Outcome::Crossed), Some(Outcome::Crossed)]
    );
    // Aborts are not failures; the Passage that failed is.
    assert_eq!(track(&tracks, "app-2").failed, 1);
    assert_eq!(track(&tracks, "app-1").failed, 0);
}

#[test]
fn a_gate_that_no_longer_admits_the_beacon_stays_on_the_way_where_it_has_a_record() {
    let gates = vec![after("dev", "app", &[]), after("legacy", "old", &[])];
    let bundles = vec![with_records(bundle("app-1", 10), &[("legacy", 11)], &[])];
    let tracks = timeline(&NamespaceSnapshot::new(NS, gates, bundles, vec![]));
    let stops: Vec<(&str, Option<Outcome>)> = tracks[0]
        .gates
        .iter()
        .map(|s| (s.gate.as_str(), s.outcome))
        .collect();
    assert_eq!(stops, [("dev", None), ("legacy", Some(Outcome::Crossed))]);
}

#[test]
fn the_overview_carries_each_namespaces_timeline() {
    let gates = vec![with_current(after("dev", "app", &[]), "app-1")];
    let bundles = vec![bundle("app-1", 1), bundle("app-2", 2)];
    let snapshots = NamespaceSnapshot::by_namespace(gates, bundles, vec![]);
    let o = overview(&snapshots, t0());
    let names: Vec<(&str, Vec<String>)> = o.namespaces[0]
        .timeline
        .iter()
        .map(|t| (t.bundle.as_str(), t.holding.clone()))
        .collect();
    assert_eq!(
        names,
        [("app-2", vec![]), ("app-1", vec!["dev".to_string()])]
    );
    // An empty list is `[]` in the JSON, never absent.
    let json = serde_json::to_value(&o).unwrap();
    assert_eq!(json["namespaces"][0]["timeline"][0]["holding"], json!([]));
}

/// Passage `{gate}-{bundle}`, succeeded, with its verification as `edit` leaves a
/// fresh one of `uses`.
fn verified_passage(
    gate: &str,
    bundle: &str,
    uses: &str,
    edit: impl FnOnce(&mut hecate_types::VerificationStatus),
) -> Passage {
    use hecate_types::Verification;
    let mut g = crate::rules::fixtures::gate(gate);
    g.spec.verify = vec![Verification {
        uses: uses.into(),
        with: None,
    }];
    let mut record = crate::rules::verification::begin(&g, t0());
    edit(&mut record);
    let mut passage = passage(gate, bundle, Some(Succeeded), 20);
    passage
        .status
        .get_or_insert_with(Default::default)
        .verification = Some(record);
    passage
}

#[test]
fn a_crossing_is_said_crossed_verified_being_verified_or_not_verified_and_why() {
    use crate::rules::verification::{self, Cadence, Look, Seen, settle};
    use hecate_types::{Verification, VerificationPhase};

    let verifies = |mut gate: Gate, uses: &str| {
        gate.spec.verify = vec![Verification {
            uses: uses.into(),
            with: None,
        }];
        gate
    };
    let mut staging = with_current(
        verifies(after("staging", "app", &["dev"]), "prometheus"),
        "app-3",
    );
    // app-1's crossing of staging: its Passage is gone, the Gate's history remembers.
    staging.status.as_mut().unwrap().history = vec![hecate_types::GateOccupant {
        bundle: "app-1".into(),
        digest: String::new(),
        passage: "staging-app-1".into(),
        entered_at: minutes(t0(), 12),
        actor: String::new(),
        verified: Some(true),
    }];
    let mut production = with_current(
        verifies(after("production", "app", &["staging"]), "soak"),
        "app-2",
    );
    production
        .status
        .as_mut()
        .unwrap()
        .current
        .as_mut()
        .unwrap()
        .verified = Some(false);
    let gates = vec![after("dev", "app", &[]), staging, production];

    let mut app2 = with_records(bundle("app-2", 20), &[("dev", 21), ("staging", 22)], &[]);
    app2.status.as_mut().unwrap().unverified = vec![record(
        "production",
        "app-2",
        25,
        "soak verification said no: what this Gate watches is Degraded",
    )];
    // Cleared production, crossed it again later, and that crossing said no.
    let mut app0 = with_records(bundle("app-0", 1), &[("production", 5)], &[]);
    let mut again = record(
        "production",
        "app-0",
        8,
        "http verification said no: HTTP 500",
    );
    again.passage = "production-app-0-again".into();
    app0.status.as_mut().unwrap().unverified = vec![again];
    let bundles = vec![
        with_records(bundle("app-3", 30), &[("dev", 31)], &[]),
        app2,
        with_records(bundle("app-1", 10), &[("dev", 11), ("staging", 12)], &[]),
        app0,
    ];
    let passages = vec![
        verified_passage("staging", "app-3", "prometheus", |v| {
            let cadence = Cadence {
                successes: 3,
                ..Cadence::default()
            };
            for (s, value) in [(0, "0.001"), (30, "0.002")] {
                let look = Look {
                    seen: Seen::Pass,
                    value: value.into(),
                    message: String::new(),
                };
                let at = t0() + jiff::SignedDuration::from_secs(s);
                verification::record(&mut v.verifiers[0], &cadence, look, t0(), at);
            }
            settle(v, t0());
        }),
        verified_passage("staging", "app-2", "prometheus", |v| {
            v.phase = VerificationPhase::Verified;
        }),
        verified_passage("production", "app-2", "soak", |v| {
            v.phase = VerificationPhase::Failed;
        }),
    ];
    let tracks = timeline(&NamespaceSnapshot::new(NS, gates, bundles, passages));

    // Crossed dev (nothing to verify there: said as before); being verified in
    // staging, how far said.
    assert_eq!(
        serde_json::to_value(&track(&tracks, "app-3").gates).unwrap(),
        json!([
            {"gate": "dev", "outcome": "crossed", "at": "2026-08-11T12:31:00Z", "passage": "dev-app-3"},
            {
                "gate": "staging", "outcome": "crossed", "holding": true,
                "at": "2026-08-11T12:00:00Z", "passage": "staging-app-3",
                "verification": "Verifying",
                "progress": "prometheus: 2 passes in a row, last 0.002",
            },
            {"gate": "production"},
        ])
    );
    let marks = |b: &str| -> Vec<(String, Option<Outcome>, Option<VerificationPhase>, String)> {
        track(&tracks, b)
            .gates
            .iter()
            .map(|s| (s.gate.clone(), s.outcome, s.verification, s.reason.clone()))
            .collect()
    };
    let crossed = Some(Outcome::Crossed);
    // Verified in staging (its Passage says so); not verified in production, and why,
    // though it is still there.
    assert_eq!(
        marks("app-2"),
        [
            ("dev".into(), crossed, None, String::new()),
            (
                "staging".into(),
                crossed,
                Some(VerificationPhase::Verified),
                String::new()
            ),
            (
                "production".into(),
                crossed,
                Some(VerificationPhase::Failed),
                "soak verification said no: what this Gate watches is Degraded".into()
            ),
        ]
    );
    assert!(track(&tracks, "app-2").gates[2].holding);
    // Its Passage collected, the Gate's history says it was verified.
    assert_eq!(
        marks("app-1")[1],
        (
            "staging".into(),
            crossed,
            Some(VerificationPhase::Verified),
            String::new()
        )
    );
    // The later crossing is the one said: it was not verified.
    let production = &track(&tracks, "app-0").gates[2];
    assert_eq!(
        (production.verification, production.passage.as_str()),
        (Some(VerificationPhase::Failed), "production-app-0-again")
    );
}
