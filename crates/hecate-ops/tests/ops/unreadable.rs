//! One object no reader decodes fails no list (issue 30, item 3): a Gate nested 200
//! maps deep stopped `hecate status -A` for every namespace; now it is left out and
//! every other Gate is answered, on the direct path and from the cache.

use std::time::Duration;

use hecate_ops::{Cache, Ops, Scope};
use hecate_testenv::TestEnv;
use hecate_types::{Gate, Step};
use kube::api::ListParams;

use crate::fixtures::*;

#[tokio::test]
async fn a_gate_too_deep_to_read_is_left_out_and_every_other_gate_is_answered() {
    let env = TestEnv::new().await;
    let ns = env.namespace.clone();
    gate(&env, "dev", gate_spec(&[], false)).await;
    let mut spec = gate_spec(&[], false);
    spec.passage.as_mut().unwrap().steps = vec![Step {
        uses: "http".into(),
        ..Step::default()
    }];
    env.create_deep_gate(Gate::new("deep", spec), 200).await;
    // Decoded as a whole, the list does not decode: what stopped every namespace.
    let whole = env
        .api::<Gate>()
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert!(whole.to_string().contains("recursion limit"), "{whole}");

    let direct = Ops::new(env.admin.clone());
    let names = |gates: Vec<Gate>| -> Vec<String> {
        gates.into_iter().filter_map(|g| g.metadata.name).collect()
    };
    assert_eq!(names(direct.gates(&ns).await.unwrap()), ["dev"]);
    let overview = direct.overview(&Scope::All).await.unwrap();
    let ours = overview
        .namespaces
        .iter()
        .find(|n| n.namespace == ns)
        .expect("the namespace is in the overview");
    let gates: Vec<_> = ours.gates.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(gates, ["dev"]);
    assert_eq!(direct.explain(&ns, "dev").await.unwrap().gate, "dev");
    // Asked for by name, it is an error of its own, which says why.
    let error = direct.explain(&ns, "deep").await.unwrap_err().to_string();
    assert!(error.contains("recursion limit"), "{error}");

    let (cache, driver) = Cache::start(env.admin.clone());
    tokio::spawn(driver);
    tokio::time::timeout(Duration::from_secs(30), cache.ready())
        .await
        .expect("the cache lists every kind, the one that does not decode left out");
    let cached = Ops::new(env.admin.clone()).with_cache(cache);
    assert_eq!(names(cached.gates(&ns).await.unwrap()), ["dev"]);
    let overview = cached
        .overview(&Scope::Namespaces(vec![ns.clone()]))
        .await
        .unwrap();
    assert_eq!(overview.namespaces[0].gates[0].name, "dev");
    assert_eq!(overview.namespaces[0].gates.len(), 1);

    env.delete_gate_unread("deep").await;
}
