//! Fan-out on real parts (issue 52): one Gate over three clusters — each a control
//! plane of its own with kwok and Flux's own source- and kustomize-controllers —
//! connected to the Gate's namespace as Settings connects them, with
//! `hecate-controller` as its own process. A release rolls out canary → eu → us; the
//! canary cannot schedule its workload, its Flux says so, and the rollout halts with
//! the other clusters untouched; the canary fixed and its failure retried, the release
//! goes on through the waves to the end.

use std::time::Duration;

use hecate_testenv::clusters::{self, Cluster, Clusters};
use hecate_testenv::fixtures::bundle;
use hecate_testenv::fleet;
use hecate_testenv::flux::{GIT_REPOSITORY, KUSTOMIZATION};
use hecate_testenv::git_http::GitHttp;
use hecate_testenv::world::Repository;
use hecate_testenv::{Identity, TestEnv, apply_manifest, rbac};
use hecate_types::{Bundle, Gate, Passage, PassagePhase, RolloutPhase, TargetPhase};
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
      matchExpressions: [{{key: region, operator: In, values: [eu, us]}}]
  rollout:
    waves:
      - name: canary
        targets: {{selector: {{matchLabels: {{tier: canary}}}}}}
      - name: eu
        targets: {{selector: {{matchLabels: {{region: eu}}}}}}
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
          resources: [{{kind: GitRepository, name: fleet}}, {{kind: Kustomization, name: fleet}}]
      - uses: flux-wait
        timeout: 5m
        with:
          resources: [{{kind: Kustomization, name: fleet}}]
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

/// The `release` ConfigMap's Bundle on a cluster, as its Flux applied it.
async fn released(client: &kube::Client, namespace: &str) -> Option<String> {
    let map = Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .get_opt("release")
        .await
        .ok()??;
    map.data?.get("bundle").cloned()
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

    apply_manifest(&env.admin, &gate(&ns, &url), false)
        .await
        .unwrap();
    bundle(&env, "b1").await;
    let _controller = controller(&env, root, SHARD, &[]).await;
    rbac::grant_deployed_roles(&env).await;
    let kubeconfigs = root.join("kubeconfigs");
    env.endpoint().write_kubeconfigs(&kubeconfigs).unwrap();
    let bob = |args: &[&str]| {
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        args.extend(["-n".to_string(), ns.clone()]);
        let kubeconfigs = kubeconfigs.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            hecate(&kubeconfigs, Identity::Bob, &args).await
        }
    };
    let passages: Api<Passage> = env.api();

    // bob promotes: one Passage, and the canary goes first.
    let (code, said) = bob(&["promote", "production", "--bundle", "b1"]).await;
    assert_eq!(code, 0, "{said}");
    let name = passages.list(&Default::default()).await.unwrap().items[0]
        .metadata
        .name
        .clone()
        .unwrap();
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
            released(admin, &ns).await.as_deref(),
            Some("none"),
            "{name}"
        );
    }

    // Explain and the Gate's Ready condition say the same: halted, and what a person
    // may do.
    let (_, explained) = bob(&["explain", "production"]).await;
    eprintln!("$ hecate explain production\n{explained}");
    for said in [
        "[RolloutHalted] eu-1 failed at step 6 (FluxDegraded)".to_string(),
        format!("→ cross the failed targets again: hecate retry {name}"),
        format!("→ or accept the failures and go on: hecate accept-failures {name}"),
    ] {
        assert!(explained.contains(&said), "{said}\n{explained}");
    }
    let (_, targets) = bob(&["targets", "production"]).await;
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
    let (code, said) = bob(&["retry", &name]).await;
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
    for target in &rollout.targets {
        assert_eq!(
            target.pushed_revision,
            heads[&format!("env/{}", target.name)],
            "{}",
            target.name
        );
    }
    for (name, admin) in &remotes {
        assert_eq!(released(admin, &ns).await.as_deref(), Some("b1"), "{name}");
    }
    let (_, targets) = bob(&["targets", "production"]).await;
    eprintln!("$ hecate targets production\n{targets}");
    let b1: Bundle = env.api().get("b1").await.unwrap();
    assert!(b1.has_cleared("production"), "{:?}", b1.status);
}
