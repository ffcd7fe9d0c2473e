//! The shared test fixtures ([`hecate_testenv::fixtures`]).

pub(crate) use hecate_testenv::fixtures::*;

use std::time::Duration;

use hecate_ops::Cache;

/// The kinds the cache watches, as their collections are named in a request's path.
pub(crate) const KINDS: [&str; 4] = ["gates", "bundles", "passages", "beacons"];

/// Starts a cache over `client` and waits until it has listed everything once.
pub(crate) async fn started_cache(client: kube::Client) -> Cache {
    let (cache, driver) = Cache::start(client);
    tokio::spawn(driver);
    tokio::time::timeout(Duration::from_secs(30), cache.ready())
        .await
        .expect("the cache lists every kind within 30 s");
    cache
}

/// The requests of a recorded log (`"METHOD path?query"`) for one of [`KINDS`].
pub(crate) fn requests_for<'a>(requests: &'a [String], kind: &str) -> Vec<&'a String> {
    requests
        .iter()
        .filter(|line| line.contains(&format!("/v1alpha1/{kind}?")))
        .collect()
}
