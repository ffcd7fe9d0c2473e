//! Leader election: of two replicas exactly one acts; when it dies the other takes
//! over once the Lease expires, and at once when the leader stops cleanly.

use std::time::{Duration, Instant};

use hecate_types::Gate;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

const LEASE: &str = "hecate-test";

async fn grant_leases(h: &Harness) {
    let role = hecate_testenv::rbac::CONTROLLER_MANIFEST
        .split("\n---\n")
        .filter(|d| d.contains("kind: Role\n") || d.contains("kind: RoleBinding\n"))
        .map(|d| {
            d.replace(
                "  - kind: ServiceAccount\n    name: hecate-controller\n    namespace: hecate-system",
                "  - kind: User\n    apiGroup: rbac.authorization.k8s.io\n    name: hecate-controller",
            )
        })
        .map(|d| d.replace("namespace: hecate-system", &format!("namespace: {}", h.env.namespace)))
        .collect::<Vec<_>>()
        .join("\n---\n");
    hecate_testenv::apply_manifest(&h.env.admin, &role, false)
        .await
        .unwrap();
}

async fn replica(h: &Harness) -> Controller {
    let ns = h.env.namespace.clone();
    Controller::start(
        &h.env,
        &ns,
        &[
            "--leader-elect",
            &format!("--leader-election-namespace={ns}"),
            &format!("--leader-election-id={LEASE}"),
            "--leader-election-lease-duration=4s",
            "--leader-election-renew-deadline=3s",
            "--leader-election-retry-period=250ms",
        ],
    )
    .await
}

async fn holder(h: &Harness) -> Option<String> {
    Api::<Lease>::namespaced(h.env.admin.clone(), &h.env.namespace)
        .get_opt(LEASE)
        .await
        .unwrap()?
        .spec?
        .holder_identity
}

/// Waits until Gate `name` has been reconciled.
async fn reconciled(h: &Harness, name: &str, limit: Duration) {
    eventually(limit, &format!("Gate {name} reconciled"), || async {
        let gate: Gate = h.env.api::<Gate>().get(name).await.unwrap();
        gate.status.filter(|s| !s.conditions.is_empty()).map(|_| ())
    })
    .await;
}

#[tokio::test]
async fn one_replica_acts_and_the_other_takes_over_when_it_dies() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    grant_leases(&h).await;
    let first = replica(&h).await;
    let second = replica(&h).await;
    create_gate(&h, "before", gate_spec(false, &[], false)).await;
    reconciled(&h, "before", Duration::from_secs(10)).await;

    let leader = holder(&h).await.expect("someone leads");
    let (leader, standby) = if leader.ends_with(&format!("-{}", first.pid())) {
        (first, second)
    } else {
        assert!(leader.ends_with(&format!("-{}", second.pid())), "{leader}");
        (second, first)
    };
    let series = format!(r#"namespace="{ns}",gate="before""#);
    assert!(leader.scrape().await.contains(&series));
    assert!(
        !standby.scrape().await.contains(&series),
        "the standby does nothing"
    );

    leader.kill().await;
    let killed = Instant::now();
    create_gate(&h, "after", gate_spec(false, &[], false)).await;
    reconciled(&h, "after", Duration::from_secs(15)).await;
    let took = killed.elapsed();
    eprintln!("the standby took over {took:?} after the leader was killed (Lease 4 s)");
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert!(
        holder(&h)
            .await
            .is_some_and(|h| h.ends_with(&format!("-{}", standby.pid())))
    );

    // A clean stop hands the Lease back at once.
    let status = standby.terminate().await;
    assert!(status.success(), "{status:?}");
    assert_eq!(holder(&h).await, None, "released on a clean stop");
}
