//! A small time-limited cache with a size bound that asks once per key: callers
//! arriving while an answer is being fetched wait for it instead of asking again.

use std::hash::Hash;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lru::LruCache;
use tokio::sync::OnceCell;

/// How many entries a cache holds. A new key beyond it evicts the least recently used
/// one — one entry, never the lot — so a flood of distinct tokens cannot grow the
/// cache, nor flush the answers of the callers in use.
pub(crate) const CAPACITY: usize = 4096;

/// An answer (once fetched) and when it was first asked for.
type Entry<V> = (Arc<OnceCell<V>>, Instant);

pub(crate) struct Cache<K, V> {
    entries: Mutex<LruCache<K, Entry<V>>>,
    ttl: Duration,
}

impl<K: Hash + Eq + Clone, V: Clone> Cache<K, V> {
    pub(crate) fn new(ttl: Duration) -> Self {
        let capacity = NonZeroUsize::new(CAPACITY).unwrap_or(NonZeroUsize::MIN);
        Self {
            entries: Mutex::new(LruCache::new(capacity)),
            ttl,
        }
    }

    /// The answer for `key` and whether it was known already; `fetch` runs only when
    /// no live entry has (or is getting) one. A failed fetch is not remembered: the
    /// next caller asks again.
    pub(crate) async fn get_or_fetch<E>(
        &self,
        key: K,
        fetch: impl Future<Output = Result<V, E>>,
    ) -> Result<(V, bool), E> {
        let cell = {
            let mut entries = self
                .entries
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let ttl = self.ttl;
            match entries.get(&key) {
                Some((cell, at)) if at.elapsed() < ttl => cell.clone(),
                _ => {
                    let cell = Arc::new(OnceCell::new());
                    entries.put(key, (cell.clone(), Instant::now()));
                    cell
                }
            }
        };
        if let Some(known) = cell.get() {
            return Ok((known.clone(), true));
        }
        let mut fetched = false;
        let value = cell
            .get_or_try_init(|| {
                fetched = true;
                fetch
            })
            .await?;
        Ok((value.clone(), !fetched))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn callers_arriving_together_share_one_fetch() {
        let cache = Arc::new(Cache::<u8, u32>::new(Duration::from_secs(60)));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (release, released) = tokio::sync::watch::channel(false);
        let callers = (0..20).map(|_| {
            let (cache, fetches, mut released) = (cache.clone(), fetches.clone(), released.clone());
            tokio::spawn(async move {
                cache
                    .get_or_fetch(1, async move {
                        fetches.fetch_add(1, Ordering::SeqCst);
                        // Hold the fetch open until every caller has arrived.
                        let _ = released.wait_for(|r| *r).await;
                        Ok::<_, ()>(7)
                    })
                    .await
            })
        });
        let handles: Vec<_> = callers.collect();
        tokio::task::yield_now().await;
        let _ = release.send(true);
        let mut known = 0;
        for handle in handles {
            let (value, was_known) = handle.await.ok().and_then(Result::ok).unwrap_or_default();
            assert_eq!(value, 7);
            known += usize::from(was_known);
        }
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        assert_eq!(known, 19, "one asked; the others were told");
    }

    #[tokio::test]
    async fn failures_are_not_remembered_and_entries_expire() {
        let cache = Cache::<u8, u32>::new(Duration::ZERO);
        assert_eq!(
            cache.get_or_fetch(1, async { Err::<u32, _>("no") }).await,
            Err("no")
        );
        assert_eq!(
            cache.get_or_fetch(1, async { Ok::<_, ()>(2) }).await,
            Ok((2, false))
        );
        // A zero lifetime: every call asks again.
        assert_eq!(
            cache.get_or_fetch(1, async { Ok::<_, ()>(3) }).await,
            Ok((3, false))
        );
        let lasting = Cache::<u8, u32>::new(Duration::from_secs(60));
        assert_eq!(
            lasting.get_or_fetch(1, async { Ok::<_, ()>(4) }).await,
            Ok((4, false))
        );
        assert_eq!(
            lasting.get_or_fetch(1, async { Ok::<_, ()>(5) }).await,
            Ok((4, true))
        );
    }

    #[tokio::test]
    async fn a_flood_of_new_keys_evicts_the_least_recently_used_one_at_a_time() {
        let cache = Cache::<usize, usize>::new(Duration::from_secs(60));
        let ask = |n: usize| cache.get_or_fetch(n, async move { Ok::<_, ()>(n) });
        for n in 0..CAPACITY {
            ask(n).await.unwrap();
        }
        // A caller in use (key 0) is asked for again; then one new key arrives.
        assert_eq!(ask(0).await, Ok((0, true)));
        ask(CAPACITY).await.unwrap();
        assert_eq!(cache.len(), CAPACITY);
        assert_eq!(
            ask(0).await,
            Ok((0, true)),
            "the caller in use keeps its answer"
        );
        assert_eq!(ask(2).await, Ok((2, true)), "so does every other but one");
        assert_eq!(ask(1).await, Ok((1, false)), "the least recently used went");
    }

    #[tokio::test]
    async fn the_cache_is_bounded() {
        let cache = Cache::<usize, usize>::new(Duration::from_secs(60));
        for n in 0..(CAPACITY + 10) {
            let _ = cache.get_or_fetch(n, async move { Ok::<_, ()>(n) }).await;
        }
        assert!(cache.len() <= CAPACITY);
    }
}
