//! The shared test fixtures ([`hecate_testenv::fixtures`]).

pub(crate) use hecate_testenv::fixtures::*;

use std::time::Duration;

use hecate_ops::Cache;

/// Starts a cache over `client` and waits until it has listed everything once.
pub(crate) async fn started_cache(client: kube::Client) -> Cache {
    let (cache, driver) = Cache::start(client);
    tokio::spawn(driver);
    tokio::time::timeout(Duration::from_secs(30), cache.ready())
        .await
        .expect("the cache lists every kind within 30 s");
    cache
}
