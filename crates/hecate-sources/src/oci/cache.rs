//! What Beacons remember of registries between polls, so that a repository that has not
//! changed costs one request per poll (docs/DECISIONS.md):
//!
//! - how to authenticate: the token (while it lasts) or basic credentials a repository
//!   accepted, and its challenge — a poll repeats neither the anonymous `401` nor, while
//!   a token lasts, the token request;
//! - each tag's digest, once looked up: a tag chosen again costs no manifest request.
//!   Tags are taken as immutable for [`DIGEST_RECHECK`], after which the digest is
//!   looked up again; `select: Digest` follows a tag that moves, so it looks every
//!   time ([`Recheck::Always`]);
//! - the tag list is asked for on every poll: CNCF Distribution sends no validator for
//!   it (no `ETag`, no `Last-Modified`), so there is nothing to ask conditionally.
//!
//! Polls of one repository take turns, and an answer that arrived after a poll began is
//! as good as its own: Beacons on the same repository polling at the same moment share
//! one tag list, and a registry that does not answer costs the others no second wait.
//! An answer from before a poll began is never used for the tag list, so a tag pushed
//! before a poll is always seen by it.
//!
//! What is remembered is kept per registry, repository and credentials: Beacons whose
//! Secrets differ never share what one of them was allowed to see. A repository no
//! Beacon asked about for [`FORGET_AFTER`] is forgotten.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use super::client::{Authentication, Registry, Session};
use super::{Basic, Error, Repository};

/// How long a looked-up digest of a tag is taken as the tag's digest.
pub const DIGEST_RECHECK: Duration = Duration::from_secs(60 * 60);

/// How long what is known of a repository (or a chart repository) is kept without a
/// poll asking for it.
pub const FORGET_AFTER: Duration = Duration::from_secs(6 * 60 * 60);

/// When a known digest is looked up again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recheck {
    /// After [`DIGEST_RECHECK`]: the tag is taken as immutable until then.
    Kept,
    /// On every poll: the tag is followed because it moves.
    Always,
}

/// Values per key, each behind its own lock: one poll at a time works on a key, the
/// others wait for it (and may use what it found). Keys unused for [`FORGET_AFTER`] are
/// dropped.
pub struct Memory<K, V> {
    slots: Mutex<Slots<K, V>>,
}

struct Slots<K, V> {
    by_key: HashMap<K, Slot<V>>,
    swept: Instant,
}

struct Slot<V> {
    value: Arc<AsyncMutex<V>>,
    used: Instant,
}

impl<K, V> Default for Memory<K, V> {
    fn default() -> Self {
        Self {
            slots: Mutex::new(Slots {
                by_key: HashMap::new(),
                swept: Instant::now(),
            }),
        }
    }
}

impl<K: Eq + Hash + Clone, V: Default> Memory<K, V> {
    /// The value of `key` (a new default one if there is none), once no one else holds
    /// it.
    pub async fn take(&self, key: &K) -> OwnedMutexGuard<V> {
        let value = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            let now = Instant::now();
            if now.duration_since(slots.swept) > Duration::from_secs(60) {
                slots.swept = now;
                slots.by_key.retain(|_, slot| {
                    now.duration_since(slot.used) < FORGET_AFTER
                        || Arc::strong_count(&slot.value) > 1
                });
            }
            let slot = slots.by_key.entry(key.clone()).or_insert_with(|| Slot {
                value: Arc::default(),
                used: now,
            });
            slot.used = now;
            slot.value.clone()
        };
        value.lock_owned().await
    }

    /// How many keys are remembered.
    pub fn len(&self) -> usize {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_key
            .len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The identity of credentials, without them: a SHA-256 of user and password (`None`:
/// anonymous).
pub fn identity(auth: Option<&Basic>) -> Option<[u8; 32]> {
    auth.map(|basic| {
        let mut hasher = Sha256::new();
        hasher.update(basic.username.as_bytes());
        hasher.update([0]);
        hasher.update(basic.password.as_bytes());
        hasher.finalize().into()
    })
}

/// An answer and when it arrived.
#[derive(Clone, Debug)]
pub struct Answer<T> {
    /// When it arrived.
    pub at: Instant,
    /// What it was.
    pub result: Result<T, Error>,
}

impl<T: Clone> Answer<T> {
    /// Now, with `result`.
    pub fn now(result: Result<T, Error>) -> Self {
        Self {
            at: Instant::now(),
            result,
        }
    }

    /// The answer, if it arrived after `asked` (a poll that began then may use it).
    pub fn since(&self, asked: Instant) -> Option<Result<T, Error>> {
        (self.at >= asked).then(|| self.result.clone())
    }
}

/// What Beacons remember of registries; clones share it.
#[derive(Clone, Default)]
pub struct Cache {
    memory: Arc<Memory<Key, Known>>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    scheme: &'static str,
    host: String,
    path: String,
    identity: Option<[u8; 32]>,
}

/// What is known of one repository, with one set of credentials.
#[derive(Default)]
struct Known {
    authentication: Authentication,
    tags: Option<Answer<Arc<[String]>>>,
    digests: HashMap<String, Answer<String>>,
}

impl Cache {
    /// A look at `repo` with `auth` (none: anonymous) through `registry`, once no other
    /// poll is looking at it with the same credentials.
    pub async fn look<'a>(
        &self,
        registry: &'a Registry,
        repo: &'a Repository,
        auth: Option<&'a Basic>,
    ) -> Look<'a> {
        let asked = Instant::now();
        let key = Key {
            scheme: repo.scheme,
            host: repo.host.clone(),
            path: repo.path.clone(),
            identity: identity(auth),
        };
        let known = self.memory.take(&key).await;
        let session = registry
            .session(repo, auth)
            .resume(known.authentication.clone());
        Look {
            session,
            known,
            asked,
        }
    }
}

/// One poll's look at a repository: a registry conversation that starts with what
/// earlier ones learned and leaves what it learns.
pub struct Look<'a> {
    session: Session<'a>,
    known: OwnedMutexGuard<Known>,
    asked: Instant,
}

impl Look<'_> {
    /// Every tag of the repository, as the registry lists it now.
    pub async fn tags(&mut self) -> Result<Arc<[String]>, Error> {
        if let Some(shared) = self.known.tags.as_ref().and_then(|t| t.since(self.asked)) {
            return shared;
        }
        let answer: Answer<Arc<[String]>> = Answer::now(self.session.tags().await.map(Arc::from));
        if let Ok(tags) = &answer.result {
            // Digests of tags that are gone are of no more use.
            self.known
                .digests
                .retain(|tag, _| tags.iter().any(|t| t == tag));
        }
        self.known.tags = Some(answer.clone());
        answer.result
    }

    /// The digest of the manifest (or index) `tag` names: the one known, when `recheck`
    /// allows, else the registry's.
    pub async fn digest(&mut self, tag: &str, recheck: Recheck) -> Result<String, Error> {
        if let Some(known) = self.known.digests.get(tag) {
            if let Some(shared) = known.since(self.asked) {
                return shared;
            }
            if recheck == Recheck::Kept
                && known.at.elapsed() < DIGEST_RECHECK
                && let Ok(digest) = &known.result
            {
                return Ok(digest.clone());
            }
        }
        let answer = Answer::now(self.session.digest(tag).await);
        self.known.digests.insert(tag.to_string(), answer.clone());
        answer.result
    }
}

impl Drop for Look<'_> {
    fn drop(&mut self) {
        self.known.authentication = self.session.learned();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_holder_per_key_and_unused_keys_are_kept_until_forgotten() {
        let memory: Memory<&str, u32> = Memory::default();
        {
            let mut a = memory.take(&"a").await;
            *a = 7;
            // Another key is not held up.
            assert_eq!(*memory.take(&"b").await, 0);
            // The same key waits for the holder.
            assert!(
                tokio::time::timeout(Duration::from_millis(20), memory.take(&"a"))
                    .await
                    .is_err()
            );
        }
        assert_eq!(*memory.take(&"a").await, 7);
        assert_eq!(memory.len(), 2);
    }

    #[test]
    fn answers_count_for_polls_that_began_before_they_arrived() {
        let asked = Instant::now();
        let answer = Answer::now(Ok::<_, Error>(1));
        assert_eq!(answer.since(asked).map(Result::ok), Some(Some(1)));
        let later = Instant::now() + Duration::from_millis(1);
        assert!(answer.since(later).is_none());
    }

    #[test]
    fn credentials_are_told_apart_without_being_kept() {
        let basic = |user: &str, password: &str| Basic {
            username: user.into(),
            password: password.into(),
        };
        assert_eq!(identity(None), None);
        assert_eq!(
            identity(Some(&basic("bot", "a"))),
            identity(Some(&basic("bot", "a")))
        );
        assert_ne!(
            identity(Some(&basic("bot", "a"))),
            identity(Some(&basic("bot", "b")))
        );
        // The separator keeps "ab" + "c" apart from "a" + "bc".
        assert_ne!(
            identity(Some(&basic("ab", "c"))),
            identity(Some(&basic("a", "bc")))
        );
    }
}
