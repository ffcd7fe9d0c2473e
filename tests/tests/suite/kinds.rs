//! Every kind round-trips through the API server: create, write status through the
//! status subresource, read back, compare.

use std::fmt::Debug;

use hecate_testenv::TestEnv;
use hecate_types::{Beacon, Bundle, Gate, Passage};
use k8s_openapi::NamespaceResourceScope;
use kube::Resource;
use kube::core::object::{HasSpec, HasStatus};
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Creates the fixture without its status, writes the status, reads the object back
/// and checks that spec and status are exactly what the fixture says.
async fn round_trip<K>(env: &TestEnv, yaml: &str)
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + HasSpec
        + HasStatus
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned,
    K::Spec: PartialEq + Debug,
    K::Status: PartialEq + Debug + Serialize + Clone,
{
    let fixture: K = serde_yaml_ng::from_str(yaml).unwrap();
    let status = fixture.status().cloned();
    assert!(status.is_some(), "the fixture has a status to write");

    let mut bare = fixture.clone();
    *bare.status_mut() = None;
    let created = env.create(bare).await;
    assert_eq!(created.spec(), fixture.spec());
    assert_eq!(
        created.status(),
        None,
        "the API server ignores status on create"
    );

    let mut with_status = created.clone();
    *with_status.status_mut() = status.clone();
    env.write_status(&with_status).await;

    let name = created.meta().name.clone().unwrap();
    let stored = env.api::<K>().get(&name).await.unwrap();
    assert_eq!(stored.spec(), fixture.spec());
    assert_eq!(stored.status(), status.as_ref());
}

#[tokio::test]
async fn beacon() {
    round_trip::<Beacon>(
        &TestEnv::new().await,
        include_str!("../../../crates/hecate-types/tests/data/beacon.yaml"),
    )
    .await;
}

#[tokio::test]
async fn bundle() {
    round_trip::<Bundle>(
        &TestEnv::new().await,
        include_str!("../../../crates/hecate-types/tests/data/bundle.yaml"),
    )
    .await;
}

#[tokio::test]
async fn gate() {
    round_trip::<Gate>(
        &TestEnv::new().await,
        include_str!("../../../crates/hecate-types/tests/data/gate.yaml"),
    )
    .await;
}

#[tokio::test]
async fn passage() {
    round_trip::<Passage>(
        &TestEnv::new().await,
        include_str!("../../../crates/hecate-types/tests/data/passage.yaml"),
    )
    .await;
}

#[tokio::test]
async fn schema_defaults_are_applied() {
    // The defaults our CRDs declare are the reference's: a Beacon that says nothing
    // about interval, emit or retain gets 5m, Automatic and 10.
    let env = TestEnv::new().await;
    let beacon: Beacon = serde_yaml_ng::from_str(
        "{apiVersion: hecate.dev/v1alpha1, kind: Beacon, metadata: {name: app}, spec: {watch: [{image: {repo: ghcr.io/acme/app}}]}}",
    )
    .unwrap();
    let stored = env.create(beacon).await;
    assert_eq!(stored.spec.interval.as_deref(), Some("5m"));
    assert_eq!(stored.spec.emit, Some(hecate_types::EmitPolicy::Automatic));
    assert_eq!(stored.spec.retain, Some(10));
    assert_eq!(
        stored.spec.watch[0].image.as_ref().unwrap().select,
        Some(hecate_types::TagSelection::SemVer)
    );
}
