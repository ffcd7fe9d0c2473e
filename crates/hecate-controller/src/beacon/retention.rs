//! Bundle retention (spec controller.md §1.8): a Beacon keeps its newest `spec.retain`
//! Bundles that nothing refers to (default 10; 0 keeps all), and every Bundle something
//! still refers to:
//!
//! - the Bundle in any Gate's `status.current`, and — beyond the reference — every
//!   Bundle in a Gate's `status.history` (what a roll-back would go back to);
//! - any Bundle a Passage names (running or finished: Passages are records);
//! - the Beacon's `status.latestBundle`, by name (it may have been created a moment
//!   ago);
//! - any Bundle a person approved for some Gate.
//!
//! Only Bundles labelled for the Beacon are candidates; a Bundle made by hand without
//! the label is never collected. The decision is pure ([`to_collect`]); [`collect`]
//! reads with one LIST of the Beacon's Bundles and, only when there are more than it
//! keeps, one LIST each of Gates and Passages, then deletes. Failures are logged and
//! never fail the reconcile.

use std::collections::HashSet;

use hecate_ops::rules::eligibility::newest_first;
use hecate_types::{Beacon, Bundle, Gate, Passage, wellknown};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, ListParams};

/// How many unreferenced Bundles a Beacon keeps when `spec.retain` is unset.
pub const DEFAULT_RETAIN: usize = 10;

/// How many unreferenced Bundles `beacon` keeps; `None` keeps all.
pub fn limit(beacon: &Beacon) -> Option<usize> {
    match beacon.spec.retain {
        None => Some(DEFAULT_RETAIN),
        Some(n) if n <= 0 => None,
        Some(n) => usize::try_from(n).ok(),
    }
}

/// The names of `beacon`'s Bundles to delete, given the namespace's Gates and
/// Passages; `latest` is the Beacon's newest Bundle (protected by name).
pub fn to_collect(
    beacon: &Beacon,
    latest: &str,
    bundles: &[Bundle],
    gates: &[Gate],
    passages: &[Passage],
) -> Vec<String> {
    let Some(retain) = limit(beacon) else {
        return Vec::new();
    };
    let mut named: HashSet<&str> = HashSet::from([latest]);
    for gate in gates {
        if let Some(status) = &gate.status {
            named.extend(status.current.iter().map(|c| c.bundle.as_str()));
            named.extend(status.history.iter().map(|c| c.bundle.as_str()));
        }
    }
    named.extend(passages.iter().map(|p| p.spec.bundle.as_str()));
    let beacon_name = beacon.name_any();
    let mut candidates: Vec<&Bundle> = unprotected(&beacon_name, bundles)
        .filter(|b| !named.contains(b.name_any().as_str()))
        .collect();
    if candidates.len() <= retain {
        return Vec::new();
    }
    candidates.sort_by(|a, b| newest_first(*a, *b));
    candidates[retain..].iter().map(|b| b.name_any()).collect()
}

/// The Beacon's labelled Bundles nobody approved.
fn unprotected<'a>(beacon: &'a str, bundles: &'a [Bundle]) -> impl Iterator<Item = &'a Bundle> {
    bundles
        .iter()
        .filter(move |b| {
            b.labels().get(wellknown::LABEL_BEACON).map(String::as_str) == Some(beacon)
        })
        .filter(|b| b.status.as_ref().is_none_or(|s| s.approved_for.is_empty()))
}

/// Deletes what [`to_collect`] names; returns the names deleted.
pub async fn collect(client: &kube::Client, beacon: &Beacon, latest: &str) -> Vec<String> {
    match try_collect(client, beacon, latest).await {
        Ok(deleted) => deleted,
        Err(error) => {
            tracing::warn!(beacon = %beacon.name_any(), %error, "could not look for old Bundles to collect");
            Vec::new()
        }
    }
}

async fn try_collect(
    client: &kube::Client,
    beacon: &Beacon,
    latest: &str,
) -> Result<Vec<String>, kube::Error> {
    let Some(retain) = limit(beacon) else {
        return Ok(Vec::new());
    };
    let namespace = beacon.namespace().unwrap_or_default();
    let name = beacon.name_any();
    let bundles_api = Api::<Bundle>::namespaced(client.clone(), &namespace);
    let selector = format!("{}={name}", wellknown::LABEL_BEACON);
    let bundles = bundles_api
        .list(&ListParams::default().labels(&selector))
        .await?
        .items;
    // Cheap steady state: with no more candidates than are kept, nothing else to read.
    if unprotected(&name, &bundles)
        .filter(|b| b.name_any() != latest)
        .count()
        <= retain
    {
        return Ok(Vec::new());
    }
    // Strictly decoded, unlike every other list (DECISIONS 110): a Gate or Passage
    // left out would leave its Bundles unprotected, so one that does not decode stops
    // this namespace's collection instead.
    let gates = Api::<Gate>::namespaced(client.clone(), &namespace)
        .list(&ListParams::default())
        .await?
        .items;
    let passages = Api::<Passage>::namespaced(client.clone(), &namespace)
        .list(&ListParams::default())
        .await?
        .items;
    let mut deleted = Vec::new();
    for bundle in to_collect(beacon, latest, &bundles, &gates, &passages) {
        match bundles_api.delete(&bundle, &DeleteParams::default()).await {
            Ok(_) => deleted.push(bundle),
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => {
                tracing::warn!(beacon = %name, %bundle, %error, "could not collect an old Bundle")
            }
        }
    }
    if !deleted.is_empty() {
        tracing::info!(beacon = %name, ?deleted, "collected old Bundles");
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use hecate_types::{
        BeaconSpec, BundleApproval, BundleSpec, BundleStatus, GateOccupant, GateSpec, GateStatus,
        PassageSpec, Time,
    };
    use jiff::{SignedDuration, Timestamp};
    use kube::api::ObjectMeta;
    use pretty_assertions::assert_eq;

    use super::*;

    fn t0() -> Timestamp {
        "2026-08-10T12:00:00Z".parse().expect("a time")
    }

    /// Bundle `name` of `beacon`, created `minute` minutes after t0.
    fn bundle(name: &str, beacon: &str, minute: i64) -> Bundle {
        Bundle {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some([(wellknown::LABEL_BEACON.to_string(), beacon.to_string())].into()),
                creation_timestamp: Some(Time(t0() + SignedDuration::from_mins(minute))),
                ..ObjectMeta::default()
            },
            spec: BundleSpec {
                beacon: beacon.into(),
                ..BundleSpec::default()
            },
            status: None,
        }
    }

    fn bundles(n: i64) -> Vec<Bundle> {
        (0..n)
            .map(|i| bundle(&format!("app-{i:02}"), "app", i))
            .collect()
    }

    fn app(retain: Option<i32>) -> Beacon {
        Beacon::new(
            "app",
            BeaconSpec {
                retain,
                ..BeaconSpec::default()
            },
        )
    }

    fn occupant(bundle: &str) -> GateOccupant {
        GateOccupant {
            bundle: bundle.into(),
            digest: String::new(),
            passage: String::new(),
            entered_at: Time(t0()),
            actor: String::new(),
            verified: None,
        }
    }

    fn kept(
        beacon: &Beacon,
        latest: &str,
        all: &[Bundle],
        gates: &[Gate],
        passages: &[Passage],
    ) -> Vec<String> {
        let gone = to_collect(beacon, latest, all, gates, passages);
        all.iter()
            .map(|b| b.name_any())
            .filter(|name| !gone.contains(name))
            .collect()
    }

    #[test]
    fn the_newest_are_kept_up_to_the_limit() {
        let all = bundles(6);
        assert_eq!(
            kept(&app(Some(2)), "", &all, &[], &[]),
            ["app-04", "app-05"]
        );
        assert_eq!(to_collect(&app(None), "", &bundles(12), &[], &[]).len(), 2);
    }

    #[test]
    fn retain_zero_keeps_everything() {
        assert!(to_collect(&app(Some(0)), "", &bundles(30), &[], &[]).is_empty());
        assert_eq!(limit(&app(Some(-1))), None);
    }

    #[test]
    fn bundles_something_refers_to_are_never_collected() {
        let mut all = bundles(8);
        all[2].status = Some(BundleStatus {
            approved_for: vec![BundleApproval {
                gate: "production".into(),
                actor: "alice".into(),
                at: Time(t0()),
            }],
            ..BundleStatus::default()
        });
        let mut gate = Gate::new("dev", GateSpec::default());
        gate.status = Some(GateStatus {
            current: Some(occupant("app-00")),
            history: vec![occupant("app-00"), occupant("app-01")],
            ..GateStatus::default()
        });
        let passage = Passage::new(
            "staging-1",
            PassageSpec {
                gate: "staging".into(),
                bundle: "app-03".into(),
                ..PassageSpec::default()
            },
        );
        // app-04 is the Beacon's latest, named before any list could hold it.
        let kept = kept(&app(Some(1)), "app-04", &all, &[gate], &[passage]);
        assert_eq!(
            kept,
            ["app-00", "app-01", "app-02", "app-03", "app-04", "app-07"]
        );
    }

    #[test]
    fn only_this_beacons_labelled_bundles_are_candidates() {
        let mut all = bundles(3);
        all.push(bundle("web-00", "web", 0));
        let mut unlabelled = bundle("hand-made", "app", 0);
        unlabelled.metadata.labels = None;
        all.push(unlabelled);
        assert_eq!(
            kept(&app(Some(1)), "", &all, &[], &[]),
            ["app-02", "web-00", "hand-made"]
        );
    }

    #[test]
    fn ties_in_creation_time_keep_the_first_names() {
        let all: Vec<Bundle> = ["app-c", "app-a", "app-b"]
            .iter()
            .map(|n| bundle(n, "app", 0))
            .collect();
        assert_eq!(kept(&app(Some(1)), "", &all, &[], &[]), ["app-a"]);
    }
}
