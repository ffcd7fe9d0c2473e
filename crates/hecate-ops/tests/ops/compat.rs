//! Clusters unlike the shared one, each on a control plane of its own.
//!
//! One runs the reference's CRDs, whose Passages and Bundles declare no
//! `selectableFields`: Explain and the Passage filters fall back to listing the
//! namespace and filtering here, and answer as the selected reads do (DECISIONS 42).
//! CRDs are cluster-wide: replacing them on the shared one would change what every
//! other test of the binary reads.
//!
//! One does not stream lists, as Kubernetes 1.33 ships: the cache lists in pages
//! instead (DECISION 143).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hecate_ops::Ops;
use hecate_ops::rules::{self, NamespaceSnapshot};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Bundle, BundleSpec, Gate, Passage, PassagePhase};
use kube::api::{Api, ListParams, WatchParams};
use pretty_assertions::assert_eq;

use crate::fixtures::*;

/// The reference's CRDs: kept in the repository in `compat/crds`, or where
/// `HECATE_COMPAT_CRDS` says (as the CRD compatibility test finds them).
fn reference_crds() -> PathBuf {
    std::env::var_os("HECATE_COMPAT_CRDS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../compat/crds"),
        PathBuf::from,
    )
}

/// Whether the API server now refuses a field selector on `K` (its CRD declares no
/// selectable fields).
async fn refuses_selector<K>(client: &kube::Client, namespace: &str, field: &str) -> bool
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned,
{
    let params = ListParams::default().fields(&format!("{field}=x"));
    matches!(
        Api::<K>::namespaced(client.clone(), namespace).list(&params).await,
        Err(kube::Error::Api(status)) if status.code == 400
    )
}

#[tokio::test]
async fn without_selectable_fields_explain_lists_everything_and_answers_the_same() {
    let (mut plane, env) = TestEnv::on_own_plane("compat-plane", &[]).await;
    let ns = &env.namespace;

    // The reference's Passage and Bundle CRDs, applied by the manager that installed
    // ours: the selectable fields only ours declare are removed.
    for kind in ["passages", "bundles"] {
        let path = reference_crds().join(format!("hecate.dev_{kind}.yaml"));
        let yaml = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        assert!(!yaml.contains("selectableFields"), "{}", path.display());
        hecate_testenv::apply_manifest(&env.admin, &yaml, false)
            .await
            .unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(refuses_selector::<Passage>(&env.admin, ns, "spec.gate").await
        && refuses_selector::<Bundle>(&env.admin, ns, "spec.beacon").await)
    {
        assert!(
            Instant::now() < deadline,
            "the API server still accepts field selectors 30 s after the reference's CRDs"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Two pipelines in one namespace: staging's answer must not see the other
    // Gate's crossing in progress, nor judge the other Beacon's Bundles.
    gate(&env, "dev", gate_spec(&[], false)).await;
    gate(&env, "staging", gate_spec(&["dev"], false)).await;
    let mut web = gate_spec(&[], false);
    web.admits[0].from.beacon = "web".into();
    gate(&env, "web", web).await;
    let bundles = bundles_in_order(&env, &["b1", "b2"]).await;
    bundle_status(&env, bundles[0].clone(), &["dev"], &[]).await;
    env.create(Bundle::new(
        "w1",
        BundleSpec {
            beacon: "web".into(),
            ..bundle_spec()
        },
    ))
    .await;
    passage(&env, "dev-1", "dev", "b1", PassagePhase::Succeeded).await;
    passage(&env, "staging-1", "staging", "b2", PassagePhase::Failed).await;
    passage(&env, "web-1", "web", "w1", PassagePhase::Running).await;

    let now = jiff::Timestamp::now();
    let (client, log) = env
        .endpoint()
        .recording_client(Identity::Admin)
        .await
        .unwrap();
    let ops = Ops::new(client).with_clock(move || now);

    let explanation = ops.explain(ns, "staging").await.unwrap();
    // The same judgement over the whole namespace, read here without Ops.
    let gates: Vec<Gate> = env
        .api::<Gate>()
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let staging = gates
        .iter()
        .find(|g| g.metadata.name.as_deref() == Some("staging"))
        .cloned()
        .unwrap();
    let everything = NamespaceSnapshot::new(
        ns.clone(),
        gates,
        env.api::<Bundle>()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items,
        env.api::<Passage>()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items,
    );
    assert_eq!(
        explanation,
        rules::explain::explain(&everything, &staging, now)
    );
    assert_eq!(
        explanation.state,
        hecate_ops::State::Failed,
        "{explanation:?}"
    );
    assert_eq!(explanation.eligible, ["b1"], "{explanation:?}");

    // The path it took: each selector tried once, refused, then the namespace listed.
    let mut requests = log.requests();
    requests.sort();
    let base = format!("GET /apis/hecate.dev/v1alpha1/namespaces/{ns}");
    assert_eq!(
        requests,
        [
            format!("{base}/bundles?"),
            format!("{base}/bundles?&fieldSelector=spec.beacon%3Dapp"),
            format!("{base}/gates/staging"),
            format!("{base}/passages?"),
            format!("{base}/passages?&fieldSelector=spec.gate%3Dstaging"),
        ]
    );

    // Remembered: no selector is tried again, and the filters still hold.
    log.clear();
    assert_eq!(ops.explain(ns, "staging").await.unwrap(), explanation);
    let passages = ops.passages(ns, Some("staging"), None).await.unwrap();
    let names: Vec<_> = passages
        .iter()
        .filter_map(|p| p.metadata.name.as_deref())
        .collect();
    assert_eq!(names, ["staging-1"]);
    let mut requests = log.requests();
    requests.sort();
    assert_eq!(
        requests,
        [
            format!("{base}/bundles?"),
            format!("{base}/gates/staging"),
            format!("{base}/passages?"),
            format!("{base}/passages?"),
        ]
    );
    plane.stop();
}

#[tokio::test]
async fn without_streaming_lists_the_cache_lists_in_pages() {
    let (mut plane, env) =
        TestEnv::on_own_plane("paged-plane", &["--feature-gates=WatchList=false".into()]).await;
    let ns = &env.namespace;
    gate(&env, "dev", gate_spec(&[], false)).await;
    gate(&env, "staging", gate_spec(&["dev"], false)).await;
    bundles_in_order(&env, &["b1", "b2"]).await;
    passage(&env, "dev-1", "dev", "b1", PassagePhase::Succeeded).await;

    // What the cache asks first, this server refuses.
    let refused = Api::<Gate>::all(env.admin.clone())
        .watch(&WatchParams::streaming_lists(), "0")
        .await;
    assert!(
        matches!(&refused, Err(kube::Error::Api(status)) if status.code == 422),
        "a streamed list was not refused: {:?}",
        refused.as_ref().err()
    );

    let (client, log) = env
        .endpoint()
        .recording_client(Identity::Admin)
        .await
        .unwrap();
    let cache = started_cache(client).await;
    let requests = log.requests();
    for kind in KINDS {
        let of_kind = requests_for(&requests, kind);
        assert!(
            of_kind.len() >= 2
                && of_kind[0].contains("sendInitialEvents=true")
                && of_kind[1].contains("limit=500")
                && !of_kind[1].contains("watch=true"),
            "{kind}: a refused stream, then a list in pages: {of_kind:#?}"
        );
    }

    // And it answers as the direct path does.
    let now = jiff::Timestamp::now();
    let direct = Ops::new(env.admin.clone()).with_clock(move || now);
    let cached = Ops::new(env.admin.clone())
        .with_clock(move || now)
        .with_cache(cache);
    for gate in ["dev", "staging"] {
        assert_eq!(
            cached.explain(ns, gate).await.unwrap(),
            direct.explain(ns, gate).await.unwrap(),
            "explain {gate}"
        );
    }
    plane.stop();
}
