//! Identities and RBAC are real: each kubeconfig authenticates as its user, and a user
//! without a binding is refused until one is made.

use hecate_testenv::{Identity, TestEnv};
use hecate_types::Gate;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::{Api, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

#[tokio::test]
async fn every_kubeconfig_authenticates_as_its_identity() {
    let env = TestEnv::new().await;
    let dir = tempfile::tempdir().unwrap();
    env.endpoint().write_kubeconfigs(dir.path()).unwrap();
    for who in Identity::ALL {
        let path = dir.path().join(format!("kubeconfig-{}", who.username()));
        let kubeconfig = Kubeconfig::read_from(&path).unwrap();
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let review = Api::<SelfSubjectReview>::all(client)
            .create(&PostParams::default(), &SelfSubjectReview::default())
            .await
            .unwrap();
        let user = review.status.unwrap().user_info.unwrap();
        assert_eq!(user.username.as_deref(), Some(who.username()));
        let mut groups = user.groups.unwrap_or_default();
        groups.sort();
        let mut want: Vec<String> = who.groups().iter().map(|g| g.to_string()).collect();
        want.push("system:authenticated".into());
        want.sort();
        assert_eq!(groups, want, "{who}'s groups");
    }
}

#[tokio::test]
async fn the_shared_kubeconfig_has_a_context_per_identity() {
    let env = TestEnv::new().await;
    let kubeconfig =
        Kubeconfig::from_yaml(&env.endpoint().kubeconfig_yaml(Identity::Admin)).unwrap();
    assert_eq!(kubeconfig.current_context.as_deref(), Some("admin"));
    let contexts: Vec<&str> = kubeconfig
        .contexts
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        contexts,
        [
            "admin",
            "alice",
            "bob",
            "carol",
            "dave",
            "ci-bot",
            "hecate-api",
            "hecate-controller"
        ]
    );
}

#[tokio::test]
async fn rbac_is_enforced_for_real() {
    let env = TestEnv::new().await;
    let alice: Api<Gate> = Api::namespaced(env.client(Identity::Alice).await, &env.namespace);
    let err = alice.list(&ListParams::default()).await.unwrap_err();
    let kube::Error::Api(status) = &err else {
        panic!("not an API error: {err}")
    };
    let (code, message) = (&status.code, &status.message);
    assert_eq!(*code, 403, "{message}");
    assert!(message.contains("alice"), "{message}");

    env.grant(Identity::Alice, &["get", "list"], &["gates"])
        .await;
    // RBAC caches are updated from a watch; allow it a moment to see the new binding.
    let mut listed = alice.list(&ListParams::default()).await;
    for _ in 0..50 {
        if listed.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        listed = alice.list(&ListParams::default()).await;
    }
    assert!(listed.unwrap().items.is_empty());

    // The grant is exactly what was asked: reading, not writing, and not other kinds,
    // and not as bob.
    let bundles: Api<hecate_types::Bundle> =
        Api::namespaced(env.client(Identity::Alice).await, &env.namespace);
    assert!(bundles.list(&ListParams::default()).await.is_err());
    let bob: Api<Gate> = Api::namespaced(env.client(Identity::Bob).await, &env.namespace);
    assert!(bob.list(&ListParams::default()).await.is_err());
}
