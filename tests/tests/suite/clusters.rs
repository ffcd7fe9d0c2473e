//! Clusters of their own (`hecate_testenv::clusters`), for what spans clusters: each a
//! control plane with its own Flux, which reconciles from the loopback git server;
//! each connected to a namespace of Hecate's control plane as Settings connects one,
//! whose Secret's kubeconfig reaches that cluster and no other; and one stopped or
//! paused mid-test, unreachable while the others still answer, then back.

use std::time::{Duration, Instant};

use hecate_testenv::clusters::{self, Clusters, KUBECONFIG_KEY, SHARED};
use hecate_testenv::git_http::GitHttp;
use hecate_testenv::world::Repository;
use hecate_testenv::{Identity, TestEnv};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{Api, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

/// How long a request through a connection may take: a paused API server is told
/// from a slow one by this.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);

/// What a fleet repository's `deploy/` holds: one ConfigMap, so what Flux applies is
/// healthy at once.
fn fleet_files() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "deploy/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - hello.yaml\n",
        ),
        (
            "deploy/hello.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\ndata:\n  from: fleet\n",
        ),
    ]
}

/// A client from the kubeconfig a connected cluster's Secret holds, as Hecate makes
/// one (with its own timeouts).
async fn client_of(secret: &Secret) -> kube::Client {
    let data = secret.data.as_ref().unwrap();
    let text = String::from_utf8(data[KUBECONFIG_KEY].0.clone()).unwrap();
    let kubeconfig = Kubeconfig::from_yaml(&text).unwrap();
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .unwrap();
    config.connect_timeout = Some(REQUEST_TIMEOUT);
    config.read_timeout = Some(REQUEST_TIMEOUT);
    config.write_timeout = Some(REQUEST_TIMEOUT);
    kube::Client::try_from(config).unwrap()
}

/// Whether `client` reads namespace `name`: `Ok(true)` it does, `Ok(false)` the
/// cluster answers that there is none, `Err` the cluster could not be asked.
async fn reads_namespace(client: &kube::Client, name: &str) -> Result<bool, kube::Error> {
    Api::<Namespace>::all(client.clone())
        .get_opt(name)
        .await
        .map(|found| found.is_some())
}

#[tokio::test]
async fn three_clusters_each_reconcile_with_their_own_flux_and_their_connection_reaches_them() {
    let started = Instant::now();
    let (home, shared) = tokio::join!(TestEnv::new(), Clusters::shared());
    eprintln!("home and {SHARED:?} ready after {:.1?}", started.elapsed());
    assert_eq!(shared.names(), SHARED);

    let dir = tempfile::tempdir().unwrap();
    let fleet = Repository::create(dir.path(), "fleet", &["main"], &fleet_files())
        .await
        .unwrap();
    let head = fleet.head("main").await.unwrap();
    let http = GitHttp::start(dir.path()).await.unwrap();
    let url = fleet.served(&http);

    // A namespace of this test's own on each cluster, each following the repository.
    let mut remotes = Vec::new();
    for cluster in shared.iter() {
        let remote = cluster.env().await;
        clusters::follow(
            &remote.admin,
            &remote.namespace,
            "fleet",
            &url,
            "main",
            "./deploy",
        )
        .await
        .unwrap();
        remotes.push(remote);
    }
    for (cluster, remote) in shared.iter().zip(&remotes) {
        let revision = clusters::wait_applied(
            &remote.admin,
            &remote.namespace,
            "fleet",
            &head,
            Duration::from_secs(60),
        )
        .await
        .unwrap_or_else(|e| panic!("{}'s Flux: {e:#}", cluster.name()));
        assert_eq!(revision, format!("main@sha1:{head}"), "{}", cluster.name());
        let hello = remote.api::<ConfigMap>().get("hello").await.unwrap();
        assert_eq!(hello.data.unwrap()["from"], "fleet", "{}", cluster.name());
    }
    // Each cluster's own source-controller fetched the repository: three clones.
    let fetches = http
        .served()
        .iter()
        .filter(|e| e.target.ends_with("/git-upload-pack") && e.method == "POST")
        .count();
    assert!(fetches >= 3, "{fetches} fetches of the repository");

    // Connected to the home namespace, labelled for selectors.
    for (cluster, region) in shared.iter().zip(["eu", "eu", "us"]) {
        let secret = cluster
            .connect(
                &home,
                cluster.name(),
                &[("region", region), ("tier", "prod")],
                Identity::Admin,
            )
            .await;
        assert_eq!(secret.type_.as_deref(), Some("Opaque"));
    }
    let connected = home
        .api::<Secret>()
        .list(&ListParams::default().labels("hecate.dev/cluster=true,region=eu"))
        .await
        .unwrap()
        .items;
    let mut names: Vec<_> = connected
        .iter()
        .map(|s| s.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["eu-1", "eu-2"]);

    // Each Secret's kubeconfig reaches its own cluster: it reads the namespace made
    // there, and none of the others'.
    for (cluster, own) in shared.iter().zip(&remotes) {
        let secret = home.api::<Secret>().get(cluster.name()).await.unwrap();
        let client = client_of(&secret).await;
        for remote in &remotes {
            let reads = reads_namespace(&client, &remote.namespace).await.unwrap();
            assert_eq!(
                reads,
                remote.namespace == own.namespace,
                "{}'s connection reading {}",
                cluster.name(),
                remote.namespace
            );
        }
    }
}

#[tokio::test]
async fn a_stopped_or_paused_cluster_is_unreachable_while_the_others_answer() {
    let started = Instant::now();
    let (home, shared, own) =
        tokio::join!(TestEnv::new(), Clusters::shared(), Clusters::own(&["lost"]));
    eprintln!(
        "home, {SHARED:?} and [\"lost\"] ready after {:.1?}",
        started.elapsed()
    );
    let lost = own.get("lost");
    let steady = shared.get("eu-1");
    let (lost_env, steady_env) = (lost.env().await, steady.env().await);
    let lost_client = client_of(&lost.connect(&home, "lost", &[], Identity::Admin).await).await;
    let steady_client =
        client_of(&steady.connect(&home, "steady", &[], Identity::Admin).await).await;
    let answers = |client: &kube::Client, env: &TestEnv| {
        let (client, namespace) = (client.clone(), env.namespace.clone());
        async move { reads_namespace(&client, &namespace).await }
    };
    assert!(answers(&lost_client, &lost_env).await.unwrap());

    lost.stop_api_server();
    let refused = answers(&lost_client, &lost_env).await;
    assert!(
        matches!(refused, Err(ref e) if !matches!(e, kube::Error::Api(_))),
        "a stopped API server is not reached: {refused:?}"
    );
    assert!(answers(&steady_client, &steady_env).await.unwrap());

    // Back on the same address, with the same credentials and the same etcd.
    lost.start_api_server().await;
    assert!(answers(&lost_client, &lost_env).await.unwrap());

    lost.pause_api_server();
    let asked = Instant::now();
    let silent = answers(&lost_client, &lost_env).await;
    assert!(
        matches!(silent, Err(ref e) if !matches!(e, kube::Error::Api(_))),
        "a paused API server answers nothing: {silent:?}"
    );
    assert!(
        asked.elapsed() >= REQUEST_TIMEOUT.mul_f32(0.9),
        "the client waited for its timeout, not a refusal: {:?}",
        asked.elapsed()
    );
    assert!(answers(&steady_client, &steady_env).await.unwrap());
    lost.resume_api_server();
    assert!(answers(&lost_client, &lost_env).await.unwrap());
}
