//! Fan-out on real parts (issue 52): one Gate over three clusters — each a control
//! plane of its own with kwok and Flux's own source- and kustomize-controllers —
//! connected to the Gate's namespace as Settings connects them, with
//! `hecate-controller` as its own process. A release rolls out canary → eu → us; the
//! canary cannot schedule its workload, its Flux says so, and the rollout halts with
//! the other clusters untouched; the canary fixed and its failure retried, the release
//! goes on through the waves to the end; a second release follows, and one cluster
//! alone is rolled back to the first. Then a rollout with a budget: the canary
//! must stay healthy a while before the next wave; a cluster whose API server is
//! stopped fails its target alone, within its wave's budget, and the last wave goes
//! on; a place that joins while the canary soaks is crossed in the wave that selects
//! it.

use std::time::Duration;

use hecate_testenv::clusters::{self, Cluster, Clusters};
use hecate_testenv::fixtures::bundle;
use hecate_testenv::fleet;
use hecate_testenv::flux::{GIT_REPOSITORY, KUSTOMIZATION};
use hecate_testenv::git_http::GitHttp;
use hecate_testenv::world::Repository;
use hecate_testenv::{Identity, TestEnv, apply_manifest, rbac};
use hecate_types::{Bundle, Gate, Health, Passage, PassagePhase, RolloutPhase, TargetPhase};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DynamicObject, ObjectMeta, PostParams};

use crate::fleet::{controller, hecate};
use crate::real_flux::eventually;

const SHARD: &str = "hecate.dev/e2e-fan-out";

/// What every cluster's branch holds before a release: the fleet's Deployment (100m a
/// pod) and the record a crossing writes, `release`, which Flux applies as a
/// ConfigMap.
fn fleet_files() -> Vec<(String, String)> {
    let mut files = fleet::fleet_files("app");
    files.push(("deploy/release.yaml".into(), release_map("none")));
    files
}

fn release_map(bundle: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: release\ndata:\n  bundle: {bundle}\n"
    )
}

/// The Deployment asking `cpu` a pod: 2,000 CPUs no node has, or what fits.
fn app(cpu: &str) -> Vec<(String, String)> {
    vec![(
        "deploy/app.yaml".into(),
        fleet::deployment("app", "ghcr.io/acme/app:0.0.0", cpu),
    )]
}

/// Gate `production` over the clusters connected to `namespace` in region eu or us:
/// the canary first, then eu, then the rest; each target's crossing commits the
/// Bundle's name to its own branch `env/<target>` of `fleet`, asks its Flux to look,
/// and waits until its Flux has applied that commit and found it healthy.
fn gate(namespace: &str, fleet: &str) -> String {
    gate_with(
        namespace,
        fleet,
        "[eu, us]",
        "
      - name: canary
        targets: {selector: {matchLabels: {tier: canary}}}
      - name: eu
        targets: {selector: {matchLabels: {region: eu}}}",
        "fleet",
    )
}

/// Gate `production` over the clusters connected to `namespace` whose region is one
/// of `regions` (`[eu, us]`), in `waves` (YAML, a list); each target's Flux objects
/// named `flux` (an expression may name them after the target).
fn gate_with(namespace: &str, fleet: &str, regions: &str, waves: &str, flux: &str) -> String {
    format!(
        r#"apiVersion: hecate.dev/v1alpha1
kind: Gate
metadata:
  name: production
  namespace: {namespace}
spec:
  admits:
    - from: {{beacon: app}}
  vars:
    - {{name: fleet, value: "{fleet}"}}
  targets:
    selector:
      matchExpressions: [{{key: region, operator: In, values: {regions}}}]
  rollout:
    waves:{waves}
  passage:
    steps:
      - uses: git-clone
        with: {{repo: "${{{{ vars.fleet }}}}", branch: "env/${{{{ target.name }}}}"}}
      - uses: edit-yaml
        with:
          path: repo/deploy/release.yaml
          edits:
            - {{key: data.bundle, value: "${{{{ bundle.name }}}}"}}
      - uses: git-commit
        as: commit
        with: {{message: "${{{{ target.name }}}}: app ${{{{ bundle.name }}}}"}}
      - uses: git-push
      - uses: flux-reconcile
        with:
          resources: [{{kind: GitRepository, name: "{flux}"}}, {{kind: Kustomization, name: "{flux}"}}]
      - uses: flux-wait
        timeout: 5m
        with:
          resources: [{{kind: Kustomization, name: "{flux}"}}]
          expectedRevision: "${{{{ steps.commit.sha }}}}"
"#
    )
}

/// A namespace named `name` on `cluster`: a Gate's Flux objects are read in a
/// namespace of its own name, there as here (DECISION 154). Its admin client.
async fn namespace_on(cluster: &Cluster, name: &str) -> kube::Client {
    let admin = cluster.env().await.admin.clone();
    let namespaces = Api::<Namespace>::all(admin.clone());
    if namespaces.get_opt(name).await.unwrap().is_none() {
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .unwrap();
    }
    admin
}

/// The Bundle ConfigMap `map` (a crossing's record, `release`) names on a cluster, as
/// its Flux applied it.
async fn released(client: &kube::Client, namespace: &str, map: &str) -> Option<String> {
    let map = Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .get_opt(map)
        .await
        .ok()??;
    map.data?.get("bundle").cloned()
}

/// bob at the command line, in the test's namespace.
struct Bob {
    kubeconfigs: std::path::PathBuf,
    namespace: String,
}

impl Bob {
    /// `hecate <args> -n <namespace>` as bob: its exit code and output.
    async fn run(&self, args: &[&str]) -> (i32, String) {
        let mut args = args.to_vec();
        args.extend(["-n", &self.namespace]);
        hecate(&self.kubeconfigs, Identity::Bob, &args).await
    }
}

/// Gate `manifest` and Bundle b1 in `env`'s namespace, hecate-controller started as
/// its own process (its work under `root`) and people's roles granted; then bob
/// promotes b1 through production. The controller (killed when dropped), bob, and
/// the Passage's name.
async fn promoted(
    env: &TestEnv,
    root: &std::path::Path,
    manifest: &str,
) -> (tokio::process::Child, Bob, String) {
    apply_manifest(&env.admin, manifest, false).await.unwrap();
    bundle(env, "b1").await;
    let controller = controller(env, root, SHARD, &[]).await;
    rbac::grant_deployed_roles(env).await;
    let kubeconfigs = root.join("kubeconfigs");
    env.endpoint().write_kubeconfigs(&kubeconfigs).unwrap();
    let bob = Bob {
        kubeconfigs,
        namespace: env.namespace.clone(),
    };
    let (code, said) = bob.run(&["promote", "production", "--bundle", "b1"]).await;
    assert_eq!(code, 0, "{said}");
    let passages: Api<Passage> = env.api();
    let name = passages.list(&Default::default()).await.unwrap().items[0]
        .metadata
        .name
        .clone()
        .unwrap();
    (controller, bob, name)
}

/// Waits until Passage `name` has finished: it, or as it stood after `limit`.
async fn until_finished(
    passages: &Api<Passage>,
    name: &str,
    limit: Duration,
) -> Result<Passage, Passage> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let passage = passages.get(name).await.unwrap();
        if passage.is_terminal() {
            return Ok(passage);
        }
        if std::time::Instant::now() > deadline {
            return Err(passage);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_release_rolls_out_in_waves_halts_on_the_canary_and_completes_once_it_is_fixed() {
    let (env, shared) = tokio::join!(TestEnv::new(), Clusters::shared());
    let ns = env.namespace.clone();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();

    // The fleet: a branch per cluster. The canary's asks for 2,000 CPUs a pod.
    let names = shared.names();
    let branches: Vec<String> = names.iter().map(|n| format!("env/{n}")).collect();
    let branches: Vec<&str> = branches.iter().map(String::as_str).collect();
    let repo = Repository::create(root, "fleet", &branches, &fleet_files())
        .await
        .unwrap();
    repo.commit_on_tip("env/eu-1", &app("2000"), "eu-1: more than any node has")
        .await
        .unwrap();
    let http = GitHttp::start(root).await.unwrap();
    let url = repo.served(&http);

    // Each cluster's Flux follows its branch, and each is connected to the Gate's
    // namespace, labelled by region (eu-1 is the canary).
    let mut remotes = Vec::new();
    for (cluster, labels) in shared.iter().zip([
        &[("region", "eu"), ("tier", "canary")][..],
        &[("region", "eu")],
        &[("region", "us")],
    ]) {
        let name = cluster.name();
        let admin = namespace_on(cluster, &ns).await;
        clusters::follow(
            &admin,
            &ns,
            "fleet",
            &url,
            &format!("env/{name}"),
            "./deploy",
        )
        .await
        .unwrap();
        cluster.connect(&env, name, labels, Identity::Admin).await;
        remotes.push((name, admin));
    }
    for (name, admin) in &remotes[1..] {
        let head = repo.head(&format!("env/{name}")).await.unwrap();
        clusters::wait_applied(admin, &ns, "fleet", &head, Duration::from_secs(90))
            .await
            .unwrap_or_else(|e| panic!("{name}'s Flux before the release: {e:#}"));
    }
    let before = repo.heads("env/").await.unwrap();

    // bob promotes: one Passage, and the canary goes first.
    let (_controller, bob, name) = promoted(&env, root, &gate(&ns, &url)).await;
    let passages: Api<Passage> = env.api();
    let halted = eventually(
        Duration::from_secs(180),
        "the rollout halts on the canary",
        || async {
            let passage = passages.get(&name).await.ok()?;
            let rollout = passage.status.as_ref()?.rollout.as_ref()?;
            (rollout.phase == RolloutPhase::Halted).then(|| rollout.clone())
        },
    )
    .await;
    eprintln!("{}", halted.message);
    let phase = |target: &str| {
        halted
            .targets
            .iter()
            .find(|t| t.name == target)
            .map(|t| (t.phase, t.reason.clone()))
    };
    assert_eq!(
        phase("eu-1"),
        Some((TargetPhase::Failed, "FluxDegraded".into())),
        "{halted:#?}"
    );
    let canary = &halted.targets[0];
    assert_eq!(canary.health, Some(Health::Degraded), "{canary:#?}");
    for untouched in ["eu-2", "us-1"] {
        assert_eq!(
            phase(untouched),
            Some((TargetPhase::Pending, String::new())),
            "{halted:#?}"
        );
    }
    // Nothing reached the other clusters: their branches and what their Flux applied
    // are as they were.
    let after = repo.heads("env/").await.unwrap();
    for untouched in ["env/eu-2", "env/us-1"] {
        assert_eq!(after[untouched], before[untouched], "{untouched}");
    }
    assert_ne!(after["env/eu-1"], before["env/eu-1"], "the canary's push");
    for (name, admin) in &remotes[1..] {
        assert_eq!(
            released(admin, &ns, "release").await.as_deref(),
            Some("none"),
            "{name}"
        );
    }

    // Explain and the Gate's Ready condition say the same: halted, and what a person
    // may do.
    let (_, explained) = bob.run(&["explain", "production"]).await;
    eprintln!("$ hecate explain production\n{explained}");
    for said in [
        "[RolloutHalted] eu-1 failed at step 6 (FluxDegraded)".to_string(),
        format!("→ cross the failed targets again: hecate retry {name}"),
        format!("→ or accept the failures and go on: hecate accept-failures {name}"),
    ] {
        assert!(explained.contains(&said), "{said}\n{explained}");
    }
    let (_, targets) = bob.run(&["targets", "production"]).await;
    eprintln!("$ hecate targets production\n{targets}");
    assert!(targets.contains(&format!("by {name}, Halted")), "{targets}");
    let ready = eventually(Duration::from_secs(30), "the Gate says it", || async {
        let gate: Gate = env.api().get("production").await.ok()?;
        let ready = gate
            .status?
            .conditions
            .into_iter()
            .find(|c| c.type_ == "Ready")?;
        ready.message.contains("a person decides").then_some(ready)
    })
    .await;
    eprintln!("Ready: {}", ready.message);

    // The canary fixed, bob retries it: it crosses again, then eu, then us.
    repo.commit_on_tip("env/eu-1", &app("100m"), "eu-1: what fits")
        .await
        .unwrap();
    let (code, said) = bob.run(&["retry", &name]).await;
    assert_eq!(code, 0, "{said}");
    let finished = match until_finished(&passages, &name, Duration::from_secs(240)).await {
        Ok(finished) => finished,
        Err(passage) => {
            let canary = &remotes[0].1;
            for kind in [GIT_REPOSITORY, KUSTOMIZATION] {
                let api: Api<DynamicObject> =
                    Api::namespaced_with(canary.clone(), &ns, &kind.api_resource());
                let object = api.get("fleet").await.unwrap();
                eprintln!("eu-1's {}: {:#}", kind.kind, object.data["status"]);
            }
            panic!("{name} not finished: {:#?}", passage.status);
        }
    };
    assert_eq!(
        finished.phase(),
        PassagePhase::Succeeded,
        "{:#?}",
        finished.status
    );
    let rollout = finished.status.unwrap().rollout.unwrap();
    eprintln!("completed: {}", rollout.message);
    assert_eq!(rollout.phase, RolloutPhase::Completed, "{rollout:#?}");
    let record: Vec<(&str, TargetPhase, i32, i32)> = rollout
        .targets
        .iter()
        .map(|t| (t.name.as_str(), t.phase, t.wave, t.attempt))
        .collect();
    assert_eq!(
        record,
        [
            ("eu-1", TargetPhase::Succeeded, 0, 2),
            ("eu-2", TargetPhase::Succeeded, 1, 1),
            ("us-1", TargetPhase::Succeeded, 2, 1),
        ]
    );
    // Each target's record names the commit its branch is at: what it pushed (the
    // canary's retry found the fix on the branch, and pushed nothing more).
    let heads = repo.heads("env/").await.unwrap();
    // …and what its Flux applied, healthy.
    for target in &rollout.targets {
        assert_eq!(
            target.pushed_revision,
            heads[&format!("env/{}", target.name)],
            "{}",
            target.name
        );
        assert!(
            target
                .applied_revision
                .ends_with(&format!("@sha1:{}", target.pushed_revision)),
            "{target:#?}"
        );
        assert_eq!(target.health, Some(Health::Healthy), "{target:#?}");
    }
    for (name, admin) in &remotes {
        assert_eq!(
            released(admin, &ns, "release").await.as_deref(),
            Some("b1"),
            "{name}"
        );
    }
    let (_, targets) = bob.run(&["targets", "production"]).await;
    eprintln!("$ hecate targets production\n{targets}");
    let b1: Bundle = env.api().get("b1").await.unwrap();
    assert!(b1.has_cleared("production"), "{:?}", b1.status);

    // b2 through every cluster; then eu-2 alone back to b1 (DECISION 163).
    bundle(&env, "b2").await;
    held(&env, "b1").await;
    let (code, said) = bob.run(&["promote", "production", "--bundle", "b2"]).await;
    assert_eq!(code, 0, "{said}");
    let b2_rollout = crossing_of(&passages, |p| p.spec.bundle == "b2").await;
    let crossed = until_finished(&passages, &b2_rollout, Duration::from_secs(240))
        .await
        .unwrap_or_else(|p| panic!("b2's rollout: {:#?}", p.status));
    assert_eq!(
        crossed.phase(),
        PassagePhase::Succeeded,
        "{:#?}",
        crossed.status
    );
    held(&env, "b2").await;
    let (code, said) = bob
        .run(&["rollback", "production", "--targets", "eu-2"])
        .await;
    assert_eq!(code, 0, "{said}");
    eprintln!("$ hecate rollback production --targets eu-2\n{said}");
    assert!(
        said.contains("rolling back production's eu-2 to b1"),
        "{said}"
    );
    let back = crossing_of(&passages, |p| p.spec.is_partial()).await;
    let back = until_finished(&passages, &back, Duration::from_secs(120))
        .await
        .unwrap_or_else(|p| panic!("eu-2's rollback: {:#?}", p.status));
    assert_eq!(back.phase(), PassagePhase::Succeeded, "{:#?}", back.status);
    // eu-2's Flux applied b1 again; the others still run b2, and the Gate holds b2.
    for (name, admin) in &remotes {
        let expected = if *name == "eu-2" { "b1" } else { "b2" };
        assert_eq!(
            released(admin, &ns, "release").await.as_deref(),
            Some(expected),
            "{name}"
        );
    }
    held(&env, "b2").await;
    let (_, targets) = bob.run(&["targets", "production"]).await;
    eprintln!("$ hecate targets production\n{targets}");
    assert!(
        targets.contains(&format!(
            "Since, crossings of some targets:\n  {}: rollback of eu-2 to 1.0.0 (b1), Completed",
            back.metadata.name.as_deref().unwrap_or_default()
        )),
        "{targets}"
    );
}

/// Waits until Gate production holds `bundle`.
async fn held(env: &TestEnv, bundle: &str) {
    eventually(
        Duration::from_secs(30),
        &format!("production holds {bundle}"),
        || async {
            let gate: Gate = env.api().get("production").await.ok()?;
            (gate.current_bundle() == Some(bundle)).then_some(())
        },
    )
    .await;
}

/// The name of the one Passage that `is`, once it exists.
async fn crossing_of(passages: &Api<Passage>, is: impl Fn(&Passage) -> bool) -> String {
    eventually(Duration::from_secs(30), "the crossing exists", || async {
        let list = passages.list(&Default::default()).await.ok()?;
        list.items.iter().find(|p| is(p))?.metadata.name.clone()
    })
    .await
}

/// The waves of the second test: the canary, which must stay healthy a while; then
/// eu and ap, where one may fail; then the rest.
const WAVES_WITH_A_BUDGET: &str = "
      - name: canary
        targets: {selector: {matchLabels: {tier: canary}}}
        minSuccessTime: 5s
      - name: abroad
        targets: {selector: {matchExpressions: [{key: region, operator: In, values: [eu, ap]}]}}
        maxFailures: 1";

/// A target on a cluster, with its cluster's labels.
type Place<'a> = (&'a Cluster, &'a str, &'a [(&'a str, &'a str)]);

/// How long the canary must stay healthy before the next wave starts.
const CANARY_SOAK: Duration = Duration::from_secs(5);

#[tokio::test]
async fn an_unreachable_cluster_fails_its_target_alone_within_the_budget_and_a_cluster_that_joins_is_crossed()
 {
    let (env, shared, own) =
        tokio::join!(TestEnv::new(), Clusters::shared(), Clusters::own(&["ap-1"]));
    let ns = env.namespace.clone();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let us = shared.get("us-1");

    // The fleet: a branch per target. us-2, which joins later, is a second place on
    // us-1's cluster: its objects have names of their own.
    let targets = ["eu-1", "eu-2", "ap-1", "us-1", "us-2"];
    let branches: Vec<String> = targets.iter().map(|n| format!("env/{n}")).collect();
    let branches: Vec<&str> = branches.iter().map(String::as_str).collect();
    let repo = Repository::create(root, "fleet", &branches, &fleet_files())
        .await
        .unwrap();
    let mut us_2 = vec![(
        "deploy/release.yaml".to_string(),
        release_map("none").replace("name: release", "name: release-us-2"),
    )];
    us_2.push((
        "deploy/app.yaml".into(),
        fleet::deployment("app-us-2", "ghcr.io/acme/app:0.0.0", "100m"),
    ));
    repo.commit_on_tip("env/us-2", &us_2, "us-2: objects of its own")
        .await
        .unwrap();
    let http = GitHttp::start(root).await.unwrap();
    let url = repo.served(&http);

    // Each target's Flux objects are named after it and follow its branch; each
    // cluster is connected to the Gate's namespace by label.
    let places: [Place; 4] = [
        (
            shared.get("eu-1"),
            "eu-1",
            &[("region", "eu"), ("tier", "canary")],
        ),
        (shared.get("eu-2"), "eu-2", &[("region", "eu")]),
        (own.get("ap-1"), "ap-1", &[("region", "ap")]),
        (us, "us-1", &[("region", "us")]),
    ];
    let mut remotes = Vec::new();
    for (cluster, target, labels) in places {
        let admin = namespace_on(cluster, &ns).await;
        let branch = format!("env/{target}");
        clusters::follow(&admin, &ns, target, &url, &branch, "./deploy")
            .await
            .unwrap();
        cluster.connect(&env, target, labels, Identity::Admin).await;
        remotes.push((target, admin));
    }
    // ap-1 is out of reach from the start: its API server stopped.
    own.get("ap-1").stop_api_server();

    let manifest = gate_with(
        &ns,
        &url,
        "[eu, us, ap]",
        WAVES_WITH_A_BUDGET,
        "${{ target.name }}",
    );
    let (_controller, bob, name) = promoted(&env, root, &manifest).await;
    let passages: Api<Passage> = env.api();

    // While the canary stays healthy, us-2 joins: a second place on us-1's cluster,
    // connected with the label the Gate selects.
    let soaking = eventually(
        Duration::from_secs(120),
        "the canary crosses and stays healthy",
        || async {
            let passage = passages.get(&name).await.ok()?;
            let rollout = passage.status?.rollout?;
            let canary = rollout.targets.iter().find(|t| t.name == "eu-1")?;
            (canary.phase == TargetPhase::Succeeded).then_some(rollout.message)
        },
    )
    .await;
    eprintln!("{soaking}");
    let admin = namespace_on(us, &ns).await;
    clusters::follow(&admin, &ns, "us-2", &url, "env/us-2", "./deploy")
        .await
        .unwrap();
    us.connect(&env, "us-2", &[("region", "us")], Identity::Admin)
        .await;

    let finished = match until_finished(&passages, &name, Duration::from_secs(300)).await {
        Ok(finished) => finished,
        Err(passage) => panic!("{name} not finished: {:#?}", passage.status),
    };
    let (_, targets) = bob.run(&["targets", "production"]).await;
    eprintln!("$ hecate targets production\n{targets}");
    assert_eq!(
        finished.phase(),
        PassagePhase::Succeeded,
        "{:#?}",
        finished.status
    );
    let rollout = finished.status.unwrap().rollout.unwrap();
    eprintln!("completed: {}", rollout.message);
    assert_eq!(rollout.phase, RolloutPhase::Completed, "{rollout:#?}");
    let record: Vec<(&str, TargetPhase, i32)> = rollout
        .targets
        .iter()
        .map(|t| (t.name.as_str(), t.phase, t.wave))
        .collect();
    assert_eq!(
        record,
        [
            ("eu-1", TargetPhase::Succeeded, 0),
            ("ap-1", TargetPhase::Failed, 1),
            ("eu-2", TargetPhase::Succeeded, 1),
            ("us-1", TargetPhase::Succeeded, 2),
            ("us-2", TargetPhase::Succeeded, 2),
        ],
        "{rollout:#?}"
    );
    let target = |name: &str| rollout.targets.iter().find(|t| t.name == name).unwrap();
    // ap-1 failed where it first had to reach its cluster (step 5, flux-reconcile),
    // after its push: the failure is its alone.
    let ap = target("ap-1");
    eprintln!("ap-1: {} ({})", ap.message, ap.reason);
    assert_eq!(ap.current_step, 4, "{ap:#?}");
    assert!(
        ap.message.contains(&format!("GitRepository/{ns}/ap-1"))
            && ap.message.contains("Connection refused"),
        "{ap:#?}"
    );
    assert!(!ap.pushed_revision.is_empty(), "{ap:#?}");
    assert!(
        rollout.message.contains("ap-1 failed"),
        "{}",
        rollout.message
    );
    // The second wave started only once the canary had stayed healthy its
    // minSuccessTime.
    let canary_done = target("eu-1").finished_at.clone().unwrap().0;
    for later in ["eu-2", "ap-1"] {
        let started = target(later).started_at.clone().unwrap().0;
        assert!(
            started.duration_since(canary_done)
                >= jiff::SignedDuration::try_from(CANARY_SOAK).unwrap(),
            "{later} started at {started}, the canary succeeded at {canary_done}"
        );
    }
    // What every reachable place's Flux applied is the release.
    for (target, admin) in remotes.iter().filter(|(t, _)| *t != "ap-1") {
        assert_eq!(
            released(admin, &ns, "release").await.as_deref(),
            Some("b1"),
            "{target}"
        );
    }
    assert_eq!(
        released(&admin, &ns, "release-us-2").await.as_deref(),
        Some("b1"),
        "us-2"
    );
    let b1: Bundle = env.api().get("b1").await.unwrap();
    assert!(b1.has_cleared("production"), "{:?}", b1.status);
}
