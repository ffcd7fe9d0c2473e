//! Where the controllers read the time: every decision takes `now` from a [`Clock`], so
//! tests can stand at any moment (a closed window on a Monday noon, thirty minutes of
//! degraded health) without waiting for it.

use std::sync::{Arc, Mutex, PoisonError};

use jiff::{SignedDuration, Timestamp};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that stands still until it is moved, for tests.
#[derive(Clone, Debug)]
pub struct ManualClock(Arc<Mutex<Timestamp>>);

impl ManualClock {
    /// A clock standing at `at`.
    pub fn at(at: Timestamp) -> Self {
        Self(Arc::new(Mutex::new(at)))
    }

    /// Moves the clock to `at`.
    pub fn set(&self, at: Timestamp) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = at;
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: SignedDuration) {
        let mut now = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *now = now.saturating_add(by).unwrap_or(*now);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
