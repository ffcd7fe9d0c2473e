//! Shards (DECISION 133): two controllers split namespaces by label, each watching
//! only its own namespaces — as identities that may read Hecate's objects in those
//! namespaces alone, so a cluster-wide list would be refused — and a namespace
//! relabelled from one to the other is handed over: the one it left stops acting there
//! at once, the one it joined takes it up, and no crossing runs twice.

use std::time::Duration;

use hecate_testenv::TestEnv;
use hecate_types::{Passage, PassagePhase, Step};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, RoleBinding, RoleRef, Subject,
};
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use nix::sys::signal::Signal;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

/// What a shard reads across the cluster: namespaces (to know its own), the CRDs (the
/// start-up check) and Flux's appliers (health). Nothing of Hecate's.
const CLUSTER_READ: &str = "hecate-test-shard-cluster-read";

async fn apply<K>(api: Api<K>, name: &str, object: &K)
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned,
{
    api.patch(
        name,
        &PatchParams::apply("hecate-test").force(),
        &Patch::Apply(object),
    )
    .await
    .unwrap();
}

fn user(name: &str) -> Subject {
    Subject {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: "User".into(),
        name: name.into(),
        ..Subject::default()
    }
}

/// `user` may act as the controller in `namespaces` and nowhere else.
async fn grant(env: &TestEnv, user_name: &str, namespaces: &[&str]) {
    let read = |groups: &[&str], resources: &[&str]| PolicyRule {
        api_groups: Some(groups.iter().map(|g| g.to_string()).collect()),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: ["get", "list", "watch"].map(String::from).to_vec(),
        ..PolicyRule::default()
    };
    let role = ClusterRole {
        metadata: ObjectMeta {
            name: Some(CLUSTER_READ.into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![
            read(&[""], &["namespaces"]),
            read(&["apiextensions.k8s.io"], &["customresourcedefinitions"]),
            read(&["kustomize.toolkit.fluxcd.io"], &["kustomizations"]),
            read(&["helm.toolkit.fluxcd.io"], &["helmreleases"]),
        ]),
        ..ClusterRole::default()
    };
    apply(Api::all(env.admin.clone()), CLUSTER_READ, &role).await;
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(user_name.into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: CLUSTER_READ.into(),
        },
        subjects: Some(vec![user(user_name)]),
    };
    apply(Api::all(env.admin.clone()), user_name, &binding).await;
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    for namespace in namespaces {
        let binding = RoleBinding {
            metadata: ObjectMeta {
                name: Some(user_name.into()),
                namespace: Some(namespace.to_string()),
                ..ObjectMeta::default()
            },
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "ClusterRole".into(),
                name: "hecate-controller".into(),
            },
            subjects: Some(vec![user(user_name)]),
        };
        apply(
            Api::namespaced(env.admin.clone(), namespace),
            user_name,
            &binding,
        )
        .await;
    }
}

/// Passage `name` in `h`'s namespace, once it has succeeded.
async fn crossed(h: &Harness, name: &str) -> Passage {
    eventually(
        Duration::from_secs(30),
        &format!("{name} crossed"),
        || async {
            h.env
                .api::<Passage>()
                .get_opt(name)
                .await
                .unwrap()
                .filter(|p| p.phase() == PassagePhase::Succeeded)
        },
    )
    .await
}

/// How many crossings of Gate `dev` in `namespace` `controller` has finished, once it
/// has counted at least `least`: a crossing's counter is raised just after its status
/// is written, so a test that saw the status waits for the count.
async fn counted(controller: &Controller, namespace: &str, least: usize) -> usize {
    eventually(
        Duration::from_secs(10),
        &format!("{least} crossings counted in {namespace}"),
        || async {
            let n = crossings(controller, namespace).await;
            (n >= least).then_some(n)
        },
    )
    .await
}

/// How many crossings of Gate `dev` in `namespace` `controller` has finished.
async fn crossings(controller: &Controller, namespace: &str) -> usize {
    let series = format!(r#"hecate_passages_total{{namespace="{namespace}",gate="dev","#);
    controller
        .scrape()
        .await
        .lines()
        .filter(|l| l.starts_with(&series))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as usize
}

#[tokio::test]
async fn two_shards_watch_only_their_namespaces_and_hand_one_over_when_it_is_relabelled() {
    let (one, two) = (Harness::new().await, Harness::new().await);
    let (ns1, ns2) = (one.env.namespace.clone(), two.env.namespace.clone());
    let (shard_a, shard_b) = (format!("{ns1}-a"), format!("{ns1}-b"));
    join_shard(&one.env, &ns1, &shard_a).await;
    join_shard(&two.env, &ns2, &shard_b).await;
    // Each may act in both namespaces, and read none of the cluster's others.
    let (user_a, user_b) = (format!("shard-{ns1}-a"), format!("shard-{ns1}-b"));
    grant(&one.env, &user_a, &[&ns1, &ns2]).await;
    grant(&one.env, &user_b, &[&ns1, &ns2]).await;

    // Every crossing is one request to this server: one crossing, one request.
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "http".into(),
        with: Some(json!({"url": format!("{}/deploy", server.uri())})),
        ..Step::default()
    }];
    create_gate(&one, "dev", spec.clone()).await;
    create_gate(&two, "dev", spec).await;

    let a = Controller::start_as(&one.env, &shard_a, &user_a, &[]).await;
    let b = Controller::start_as(&one.env, &shard_b, &user_b, &[]).await;
    bundle(&one.env, "b1").await;
    bundle(&two.env, "b1").await;
    crossed(&one, "dev-1").await;
    crossed(&two, "dev-1").await;
    assert_eq!(
        (counted(&a, &ns1, 1).await, crossings(&a, &ns2).await),
        (1, 0),
        "a crossed in its namespace only"
    );
    assert_eq!(
        (crossings(&b, &ns1).await, counted(&b, &ns2, 1).await),
        (0, 1),
        "b crossed in its namespace only"
    );

    // The handover, with b frozen: once ns1 is b's, a must not act there — nobody
    // does until b wakes.
    b.signal(Signal::SIGSTOP);
    join_shard(&one.env, &ns1, &shard_b).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    bundle(&one.env, "b2").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        one.env
            .api::<Passage>()
            .get_opt("dev-2")
            .await
            .unwrap()
            .is_none(),
        "a let ns1 go: nobody opened a crossing while b was frozen"
    );
    b.signal(Signal::SIGCONT);
    crossed(&one, "dev-2").await;
    assert_eq!(counted(&b, &ns1, 1).await, 1, "b took ns1 up");
    assert_eq!(crossings(&a, &ns1).await, 1, "a did nothing more in ns1");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        3,
        "three crossings, each run once"
    );
}
