//! What a Beacon's watch entries resolve through: one [`Source`] answers for every kind,
//! so that one `spec.watch[]` mixes images, charts, Git and providers, and a test can
//! stand in for the outside world.
//!
//! A failure carries its class (spec controller.md §1.2 step 4), because the class is
//! what a person needs first: "nothing matches yet" is a normal state a Beacon waits
//! in, "not supported" needs a different spec, "failed" needs someone to look.

use std::fmt;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use hecate_types::{Artifact, CommitArtifact, GitWatch, WatchSourceRef, wellknown};

use super::git::Chronicle;

/// How a watch entry failed to resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Nothing matches yet (no tag in range, provider not ready): a state, not a fault.
    NoMatch,
    /// The entry asks for something this controller does not do (`platform`,
    /// `NewestBuild`).
    Unsupported,
    /// Anything else: unreachable, refused, malformed.
    Failed,
}

impl Class {
    /// The Beacon `Ready` reason for this class.
    pub fn reason(self) -> &'static str {
        match self {
            Self::NoMatch => wellknown::beacon_reason::NO_MATCHING_ARTIFACT,
            Self::Unsupported => wellknown::beacon_reason::UNSUPPORTED_SOURCE,
            Self::Failed => wellknown::beacon_reason::RESOLVE_FAILED,
        }
    }
}

/// Why one watch entry did not resolve, in words, with its class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolveError {
    /// The class.
    pub class: Class,
    /// What happened, for the condition message.
    pub message: String,
}

impl ResolveError {
    /// Nothing matches yet.
    pub fn no_match(message: impl Into<String>) -> Self {
        Self {
            class: Class::NoMatch,
            message: message.into(),
        }
    }

    /// Not supported by this controller.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self {
            class: Class::Unsupported,
            message: message.into(),
        }
    }

    /// Failed.
    pub fn failed(message: impl Into<String>) -> Self {
        Self {
            class: Class::Failed,
            message: message.into(),
        }
    }
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ResolveError {}

/// Every registry failure fails the watch entry: the message says which kind.
impl From<hecate_sources::oci::Error> for ResolveError {
    fn from(error: hecate_sources::oci::Error) -> Self {
        Self::failed(error.message)
    }
}

/// Every git failure (an unusable credentials Secret included) fails the watch entry.
impl From<hecate_sources::git::Error> for ResolveError {
    fn from(error: hecate_sources::git::Error) -> Self {
        Self::failed(error.message)
    }
}

/// Why a Beacon polls, which decides what a source may take from what it remembers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occasion {
    /// Its interval came round, or its spec changed: a source may answer from what it
    /// remembers where that stands for the registry's answer (a tag's digest, for a
    /// while).
    Routine,
    /// Someone asked it to look now (`hecate poll`, a new `requestedAt`): everything is
    /// asked afresh, as if nothing were remembered.
    Requested,
}

/// Resolves one watch entry of a Beacon in `namespace` (where its Secrets and
/// providers live) to one artifact.
pub trait Source: Send + Sync + 'static {
    /// The artifact `watch` points at now, looked up as `occasion` allows.
    fn resolve<'a>(
        &'a self,
        namespace: &'a str,
        watch: WatchSourceRef<'a>,
        occasion: Occasion,
    ) -> BoxFuture<'a, Result<Artifact, ResolveError>>;

    /// What `commit`, which the git watch `watch` resolved to, brings since the commit
    /// `since` (the Beacon's previous Bundle's): asked once, when the Beacon emits a
    /// new Bundle (DECISION 140). A source that cannot read history tells nothing.
    fn history<'a>(
        &'a self,
        namespace: &'a str,
        watch: &'a GitWatch,
        commit: &'a CommitArtifact,
        since: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Chronicle, ResolveError>> {
        let _ = (namespace, watch, commit, since);
        async { Ok(Chronicle::default()) }.boxed()
    }
}
