//! Waiting, from many tasks at once, for watch-fed stores to hold their first full list.
//!
//! kube-runtime's `Store::wait_until_ready` wakes only the last of several concurrent
//! waiters (it polls one oneshot receiver from every task, and a receiver keeps one
//! waker), so fifty Gate reconciles waiting on it at start-up would hang forever but
//! one. One task waits on the stores; everyone else waits on this.

use kube::runtime::reflector::Store;
use tokio::sync::watch;

/// Resolves once every store it was made from is ready.
#[derive(Clone, Debug)]
pub struct Ready(watch::Receiver<bool>);

impl Ready {
    /// Waits (in one spawned task) for `stores` to be ready.
    pub fn after<K>(stores: Vec<Store<K>>) -> Self
    where
        K: kube::Resource + Clone + Send + Sync + 'static,
        K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
    {
        let (tx, rx) = watch::channel(false);
        tokio::spawn(async move {
            for store in stores {
                // A dropped writer means the controller is stopping; report ready so
                // nobody waits forever on it.
                let _ = store.wait_until_ready().await;
            }
            let _ = tx.send(true);
        });
        Self(rx)
    }

    /// Waits until ready.
    pub async fn wait(&self) {
        let mut rx = self.0.clone();
        let _ = rx.wait_for(|ready| *ready).await;
    }
}
