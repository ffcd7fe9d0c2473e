//! How a failing reconcile is retried, the same for every controller: a conflict (the
//! object changed between reading and writing it) at once, anything else after 1 s,
//! doubling to five minutes per object, reset by a success.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use kube::Resource;
use kube::runtime::reflector::ObjectRef;

/// The first retry after a failure; it doubles up to [`MAX`].
pub const FIRST: Duration = Duration::from_secs(1);
/// The longest wait between retries.
pub const MAX: Duration = Duration::from_secs(300);

/// 1 s, 2 s, 4 s, … up to five minutes, after `failures` consecutive failures.
pub fn after(failures: u32) -> Duration {
    FIRST
        .saturating_mul(2u32.saturating_pow(failures.min(16)))
        .min(MAX)
}

/// Whether `error` is a write conflict (HTTP 409): decide again with the new version.
pub fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409)
}

/// The kind of a failed request, for the failures metric: `conflict` (409, decided
/// again at once), `api` (any other answer of the API server), `transport` (no answer).
pub fn kind(error: &kube::Error) -> &'static str {
    match error {
        kube::Error::Api(status) if status.code == 409 => "conflict",
        kube::Error::Api(_) => "api",
        _ => "transport",
    }
}

/// Each object's count of consecutive failures.
pub struct Failures<K: Resource>(Mutex<HashMap<ObjectRef<K>, u32>>)
where
    K::DynamicType: Eq + Hash + Clone;

impl<K: Resource> Default for Failures<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    fn default() -> Self {
        Self(Mutex::new(HashMap::new()))
    }
}

impl<K: Resource<DynamicType = ()>> Failures<K> {
    /// `object` reconciled: its next failure starts from the first wait again.
    pub fn succeeded(&self, object: &K) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&ObjectRef::from(object));
    }

    /// `object` failed once more: how long to wait before trying again.
    pub fn failed(&self, object: &K) -> Duration {
        let mut failures = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = failures.entry(ObjectRef::from(object)).or_insert(0);
        let wait = after(*count);
        *count = count.saturating_add(1);
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_from_a_second_to_five_minutes() {
        let waits: Vec<u64> = (0..12).map(|n| after(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]);
        assert_eq!(after(u32::MAX), MAX);
    }

    #[test]
    fn a_success_starts_the_count_again() {
        let gate = hecate_types::Gate::new("dev", hecate_types::GateSpec::default());
        let failures = Failures::default();
        assert_eq!(failures.failed(&gate), Duration::from_secs(1));
        assert_eq!(failures.failed(&gate), Duration::from_secs(2));
        failures.succeeded(&gate);
        assert_eq!(failures.failed(&gate), Duration::from_secs(1));
    }
}
