//! Leader election: of two replicas exactly one acts; when it dies the other takes
//! over once the Lease expires, and at once when the leader stops cleanly; a leader
//! frozen past its Lease runs no further step when it wakes (DECISION 112).

use std::time::{Duration, Instant};

use hecate_types::{Gate, Passage, PassagePhase, Step};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use nix::sys::signal::Signal;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

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
    // Each says which it is, and only the leader has reconciled.
    let (leading, waiting) = (leader.scrape().await, standby.scrape().await);
    assert!(
        leading.contains("\nhecate_controller_leader 1\n"),
        "{leading}"
    );
    assert!(
        waiting.contains("\nhecate_controller_leader 0\n"),
        "{waiting}"
    );
    assert!(
        leading.contains(r#"hecate_controller_reconciles_total{controller="gate"}"#),
        "{leading}"
    );
    assert!(
        !waiting.contains("hecate_controller_reconciles_total{"),
        "{waiting}"
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

/// The paths `server` has been asked for, in order.
async fn asked(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect()
}

#[tokio::test]
async fn a_leader_frozen_past_its_lease_runs_no_further_step_when_it_wakes() {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    grant_leases(&h).await;
    // Three steps, each one request; the first one's answer takes a while, so the
    // leader is frozen with it under way.
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/first"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_millis(1500)))
        .mount(&server)
        .await;
    for name in ["/second", "/third"] {
        Mock::given(method("GET"))
            .and(path(name))
            .respond_with(ResponseTemplate::new(200))
            .mount(&server)
            .await;
    }
    // (Started as the tests' world needs: the server is on loopback.)
    let first = replica(&h).await;
    let second = replica(&h).await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = ["first", "second", "third"]
        .iter()
        .map(|name| Step {
            uses: "http".into(),
            with: Some(json!({"url": format!("{}/{name}", server.uri()), "timeout": "60s"})),
            ..Step::default()
        })
        .collect();
    create_gate(&h, "dev", spec).await;
    bundle(&h.env, "b1").await;

    eventually(
        Duration::from_secs(20),
        "the first step's request",
        || async {
            asked(&server)
                .await
                .contains(&"/first".to_string())
                .then_some(())
        },
    )
    .await;
    let leader = holder(&h).await.expect("someone leads");
    let (leader, standby) = if leader.ends_with(&format!("-{}", first.pid())) {
        (first, second)
    } else {
        assert!(leader.ends_with(&format!("-{}", second.pid())), "{leader}");
        (second, first)
    };
    leader.signal(Signal::SIGSTOP);
    let frozen = Instant::now();

    let standby_id = format!("-{}", standby.pid());
    eventually(Duration::from_secs(20), "the standby leads", || async {
        holder(&h).await.filter(|h| h.ends_with(&standby_id))
    })
    .await;
    let took = frozen.elapsed();
    eprintln!("the standby took over {took:?} after the leader was frozen (Lease 4 s)");
    // It ran the crossing from its record: the step under way again, then the rest.
    eventually(Duration::from_secs(20), "dev-1 crossed", || async {
        h.env
            .api::<Passage>()
            .get_opt("dev-1")
            .await
            .unwrap()
            .filter(|p| p.phase() == PassagePhase::Succeeded)
    })
    .await;
    let before = asked(&server).await;
    assert_eq!(before, ["/first", "/first", "/second", "/third"]);
    let crossed = frozen.elapsed();
    assert!(
        crossed > Duration::from_secs(4),
        "frozen past the Lease: {crossed:?}"
    );

    // Woken, the old leader holds the first step's answer: it must go no further.
    leader.signal(Signal::SIGCONT);
    let status = leader.exits_within(Duration::from_secs(10)).await;
    assert!(
        !status.success(),
        "it stops, saying it lost the Lease: {status:?}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = asked(&server).await;
    eprintln!(
        "requests from the old leader after it woke: {:?}",
        &after[before.len()..]
    );
    assert_eq!(after, before, "no step ran on the old leader after it woke");
    let passage: Passage = h.env.api::<Passage>().get("dev-1").await.unwrap();
    assert_eq!(
        passage.phase(),
        PassagePhase::Succeeded,
        "the record stands"
    );
}
