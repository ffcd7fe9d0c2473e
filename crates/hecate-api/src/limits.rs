//! What one client may cost the server: how long it may take to send a request, and
//! how many event streams it (and everyone together) may hold open. The defaults and
//! their reasons are in docs/DECISIONS.md; tests shorten the times.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::http::StatusCode;

use crate::error::ApiError;

/// The server's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// How long a client may take to send a request's headers — and how long an idle
    /// kept-alive connection waits for the next request's — before it is closed.
    pub header_read: Duration,
    /// How long a client may take to send a request's whole body (408 after).
    pub body_read: Duration,
    /// Event streams one caller (by username) may hold open at once (429 beyond).
    pub streams_per_caller: usize,
    /// Event streams the server holds open at once, for everyone (429 beyond).
    pub streams: usize,
    /// How often an open event stream's caller is authenticated and authorised
    /// again; a stream whose caller may no longer read is closed (`reconnect`).
    pub reauthorize_every: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_read: Duration::from_secs(10),
            body_read: Duration::from_secs(10),
            streams_per_caller: 16,
            streams: 1024,
            reauthorize_every: Duration::from_secs(5 * 60),
        }
    }
}

/// The event streams open now: in all, and per caller.
#[derive(Default)]
pub(crate) struct Streams {
    open: Mutex<(usize, HashMap<String, usize>)>,
}

impl Streams {
    /// A place for one more stream of `username`'s, held until the slot is dropped;
    /// 429 when the caller or the server is at its limit.
    pub(crate) fn admit(
        self: &Arc<Self>,
        username: &str,
        limits: &Limits,
    ) -> Result<StreamSlot, ApiError> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (total, per_caller) = &mut *open;
        let mine = per_caller.get(username).copied().unwrap_or(0);
        if mine >= limits.streams_per_caller {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "{} already has {mine} event streams open, the most one caller may; close one first",
                    hecate_access::quote::quote(username)
                ),
            ));
        }
        if *total >= limits.streams {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "the server has {total} event streams open, the most it keeps; try again later"
                ),
            ));
        }
        *total += 1;
        *per_caller.entry(username.to_string()).or_default() += 1;
        Ok(StreamSlot {
            streams: self.clone(),
            username: username.to_string(),
        })
    }
}

/// One open stream's place; dropping it frees the place.
pub(crate) struct StreamSlot {
    streams: Arc<Streams>,
    username: String,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self
            .streams
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (total, per_caller) = &mut *open;
        *total = total.saturating_sub(1);
        if let Some(mine) = per_caller.get_mut(&self.username) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                per_caller.remove(&self.username);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_capped_per_caller_and_in_all_and_freed_on_drop() {
        let limits = Limits {
            streams_per_caller: 2,
            streams: 3,
            ..Limits::default()
        };
        let streams = Arc::new(Streams::default());
        let a1 = streams.admit("alice", &limits);
        let a2 = streams.admit("alice", &limits);
        assert!(a1.is_ok() && a2.is_ok());
        let refused = streams.admit("alice", &limits).err().map(|e| e.status());
        assert_eq!(refused, Some(StatusCode::TOO_MANY_REQUESTS));
        let b1 = streams.admit("bob", &limits);
        assert!(b1.is_ok());
        let full = streams.admit("carol", &limits).err().map(|e| e.status());
        assert_eq!(full, Some(StatusCode::TOO_MANY_REQUESTS));
        drop(a1);
        assert!(streams.admit("alice", &limits).is_ok());
        drop((a2, b1));
        let open = streams.open.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(open.0, 0);
        assert!(open.1.is_empty());
    }
}
