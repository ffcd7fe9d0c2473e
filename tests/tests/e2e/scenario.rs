//! The scenario, check by check (spec controller.md §10.3, checks 1–4 and 8; checks
//! 5–7 — a failing step, an abort, a restart mid-wait — are the controller crate's
//! `crossing` tests).

use std::time::{Duration, Instant};

use hecate_testenv::world::{self, FluxPlayer, Repository};
use hecate_testenv::{Identity, TestEnv, apply_manifest, rbac};
use hecate_types::{Beacon, Bundle, Gate, Passage, PassagePhase};
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::fleet::{controller, hecate};

const SHARD: &str = "hecate.dev/e2e";
const ENVIRONMENTS: [&str; 3] = ["dev", "staging", "production"];

/// Polls `check` every 100 ms until it answers `Some`, for at most `limit`.
async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_release_crosses_dev_staging_and_production() {
    let env = TestEnv::new().await;
    let ns = env.namespace.clone();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();

    // Outside the cluster: the application, the fleet, a receiver.
    let app_repo = Repository::create(
        &root,
        "app",
        &["main"],
        &[("main.go", "package main // v1\n")],
    )
    .await
    .unwrap();
    let app = app_repo.url.clone();
    let fleet = Repository::create(
        &root,
        "fleet",
        &["env/dev", "env/staging", "env/production"],
        &[("values.yaml", "# the app's settings\napp:\n  image: ghcr.io/acme/app\n  revision: none # set by Hecate\n")],
    )
    .await
    .unwrap();
    let fleet_url = fleet.url.clone();
    let app_sha = app_repo.head("main").await.unwrap();
    let receiver = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/hook"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    let hook = format!("{}/hook", receiver.uri());

    // The cluster: stand-in Flux, RBAC as deployed, people's kubeconfigs.
    world::kustomizations(&env.admin, &ns, &ENVIRONMENTS)
        .await
        .unwrap();
    let _flux = FluxPlayer::start(env.admin.clone(), &ns, fleet.clone(), &ENVIRONMENTS);
    rbac::grant_deployed_roles(&env).await;
    let kubeconfigs = root.join("kubeconfigs");
    env.endpoint().write_kubeconfigs(&kubeconfigs).unwrap();

    let manifest = world::Pipeline {
        namespace: &ns,
        beacon: "app",
        app: &app,
        fleet: &fleet_url,
        hook: Some(&hook),
        stages: &world::DEV_STAGING_PRODUCTION,
        flux: world::Flux::StandIn,
    }
    .manifest();
    apply_manifest(&env.admin, &manifest, false).await.unwrap();

    // The controller, as its own process and identity, acting in this namespace only.
    let started = Instant::now();
    // This world's repositories are on this disk, its receiver on loopback.
    let _controller = controller(
        &env,
        &root,
        SHARD,
        &["--allow-local-git", "--allow-local-http"],
    )
    .await;

    // 1. One commit, one Bundle, named by the Beacon.
    let beacons: Api<Beacon> = Api::namespaced(env.admin.clone(), &ns);
    let bundle_name = eventually(
        Duration::from_secs(30),
        "the Beacon emits a Bundle",
        || async {
            let latest = beacons.get("app").await.ok()?.status?.latest_bundle;
            (!latest.is_empty()).then_some(latest)
        },
    )
    .await;
    let bundles: Api<Bundle> = Api::namespaced(env.admin.clone(), &ns);
    let bundle = bundles.get(&bundle_name).await.unwrap();
    assert_eq!(
        bundle.spec.artifacts[0].commit.as_ref().unwrap().sha,
        app_sha
    );

    // 2. dev crosses by itself: clone, edit, commit, push, wait for "Flux", call out.
    let passages: Api<Passage> = Api::namespaced(env.admin.clone(), &ns);
    let crossed = |gate: &'static str| {
        let passages = passages.clone();
        let bundles = bundles.clone();
        let bundle_name = bundle_name.clone();
        async move {
            eventually(
                Duration::from_secs(60),
                &format!("{gate} crossed"),
                || async {
                    let bundle = bundles.get(&bundle_name).await.ok()?;
                    bundle.has_cleared(gate).then_some(())
                },
            )
            .await;
            let passage = passages.get(&format!("{gate}-1")).await.unwrap();
            assert_eq!(passage.phase(), PassagePhase::Succeeded, "{passage:#?}");
            passage
        }
    };
    let dev = crossed("dev").await;
    eprintln!(
        "dev crossed {:?} after the controller started",
        started.elapsed()
    );
    let pushed = fleet.show("env/dev:values.yaml").await.unwrap();
    assert_eq!(
        pushed,
        format!("# the app's settings\napp:\n  image: ghcr.io/acme/app\n  revision: {app_sha} # set by Hecate").trim(),
        "only the revision changed"
    );
    assert_eq!(dev.spec.actor, "controller");
    let gates: Api<Gate> = Api::namespaced(env.admin.clone(), &ns);
    eventually(
        Duration::from_secs(20),
        "dev is healthy through the adopted check",
        || async {
            let status = gates.get("dev").await.ok()?.status?;
            (status.current?.bundle == bundle_name
                && status.health?.status == hecate_types::Health::Healthy)
                .then_some(())
        },
    )
    .await;

    // 3. staging lists it and waits for a person; bob promotes.
    eventually(
        Duration::from_secs(20),
        "staging lists the Bundle",
        || async {
            let status = gates.get("staging").await.ok()?.status?;
            status.eligible.contains(&bundle_name).then_some(())
        },
    )
    .await;
    assert!(
        passages.get_opt("staging-1").await.unwrap().is_none(),
        "a manual Gate opens nothing"
    );
    let (code, out) = hecate(
        &kubeconfigs,
        Identity::Bob,
        &["promote", "staging", "--bundle", &bundle_name, "-n", &ns],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    let staging = crossed("staging").await;
    assert_eq!(staging.spec.actor, "bob");

    // 4. production waits for an approval, lists nothing as eligible meanwhile, then
    // crosses by itself.
    let (ready, eligible) = eventually(
        Duration::from_secs(20),
        "production says why it waits",
        || async {
            let status = gates.get("production").await.ok()?.status?;
            let ready = status.conditions.into_iter().find(|c| c.type_ == "Ready")?;
            // The queue and the condition are written in one status update.
            ready
                .message
                .contains("awaiting approval")
                .then_some((ready, status.eligible))
        },
    )
    .await;
    assert_eq!(ready.reason, "Idle");
    assert_eq!(
        eligible,
        Vec::<String>::new(),
        "production lists nothing as eligible while the Bundle awaits approval"
    );
    let (code, out) = hecate(
        &kubeconfigs,
        Identity::Carol,
        &["approve", &bundle_name, "--gate", "production", "-n", &ns],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    // Segregation of duties: the approver cannot also promote it.
    let (code, out) = hecate(
        &kubeconfigs,
        Identity::Carol,
        &["promote", "production", "--bundle", &bundle_name, "-n", &ns],
    )
    .await;
    assert_ne!(code, 0, "carol approved, so carol cannot promote: {out}");
    let production = crossed("production").await;
    assert_eq!(production.spec.actor, "controller");
    eprintln!(
        "production crossed {:?} after the controller started",
        started.elapsed()
    );

    // The receiver heard each environment once, in order, none failed.
    let calls = receiver.received_requests().await.unwrap();
    let heard: Vec<serde_json::Value> = calls
        .iter()
        .map(|c| serde_json::from_slice(&c.body).unwrap())
        .collect();
    assert_eq!(
        heard,
        [
            json!({"gate": "dev", "failed": false}),
            json!({"gate": "staging", "failed": false}),
            json!({"gate": "production", "failed": false}),
        ]
    );

    // Re-polling finds nothing new; the request is echoed.
    let token = "e2e-1";
    let poke = json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": token}}});
    beacons
        .patch("app", &PatchParams::default(), &Patch::Merge(&poke))
        .await
        .unwrap();
    eventually(Duration::from_secs(20), "the poll is echoed", || async {
        let status = beacons.get("app").await.ok()?.status?;
        (status.last_handled_reconcile_at == token).then_some(())
    })
    .await;
    let all = bundles.list(&Default::default()).await.unwrap().items;
    assert_eq!(all.len(), 1, "re-polling emits nothing");

    // A new commit, and a poll: exactly one new Bundle, which dev takes by itself.
    let second = app_repo
        .commit("main", "main.go", "package main // v2\n", "app: v2")
        .await
        .unwrap();
    let poke = json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": "e2e-2"}}});
    beacons
        .patch("app", &PatchParams::default(), &Patch::Merge(&poke))
        .await
        .unwrap();
    let newer = eventually(Duration::from_secs(20), "a second Bundle", || async {
        let latest = beacons.get("app").await.ok()?.status?.latest_bundle;
        (latest != bundle_name && !latest.is_empty()).then_some(latest)
    })
    .await;
    let newer_bundle = bundles.get(&newer).await.unwrap();
    assert_eq!(
        newer_bundle.spec.artifacts[0].commit.as_ref().unwrap().sha,
        second
    );
    assert_eq!(
        bundles.list(&Default::default()).await.unwrap().items.len(),
        2
    );
    eventually(
        Duration::from_secs(60),
        "dev takes the newer Bundle",
        || async {
            let status = gates.get("dev").await.ok()?.status?;
            (status.current?.bundle == newer).then_some(())
        },
    )
    .await;
}
