//! What can go wrong, in three classes every surface tells apart: a named thing that
//! is not there, a rule that says no, and a failure to reach what we depend on.

use std::fmt;

use crate::rules::refusal::{Refusal, RefusalCode};

/// The kinds hecate-ops reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A Gate.
    Gate,
    /// A Bundle.
    Bundle,
    /// A Passage.
    Passage,
    /// A Beacon.
    Beacon,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Gate => "Gate",
            Self::Bundle => "Bundle",
            Self::Passage => "Passage",
            Self::Beacon => "Beacon",
        })
    }
}

/// The actions, as named in refusals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Starting a crossing.
    Promote,
    /// Crossing a Gate's earlier Bundle again, undoing its latest crossing.
    Rollback,
    /// Approving a Bundle for a Gate.
    Approve,
    /// Rejecting a Bundle for a Gate, or withdrawing a rejection.
    Reject,
    /// Stopping a crossing.
    Abort,
    /// Crossing a rollout's failed targets again.
    Retry,
    /// Accepting a halted rollout's failures so it goes on.
    Accept,
    /// Asking a Beacon to look now.
    Poll,
    /// Suspending or resuming a Flux object a Gate depends on.
    Suspend,
    /// Asking Flux to reconcile an object a Gate depends on now.
    Reconcile,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Promote => "promote",
            Self::Rollback => "rollback",
            Self::Approve => "approve",
            Self::Reject => "reject",
            Self::Abort => "abort",
            Self::Retry => "retry",
            Self::Accept => "accept",
            Self::Poll => "poll",
            Self::Suspend => "suspend",
            Self::Reconcile => "reconcile",
        })
    }
}

/// An operation's failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A named object does not exist. Never wrapped, so every surface can answer
    /// it as such (404, exit code, a tool result a model can act on).
    #[error("no {kind} named {name} in {namespace}")]
    NotFound {
        /// What kind of object.
        kind: Kind,
        /// Where it was looked for.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// A rule said no. An answer, not a failure: nothing was written, and asking
    /// again will get the same answer until the situation changes.
    #[error("{action} refused: {reason}")]
    Refused {
        /// What was refused.
        action: Action,
        /// Why, as a stable code.
        code: RefusalCode,
        /// Why, in words.
        reason: String,
    },
    /// Fides, which the Gate binds for evidence, could not do what was needed.
    #[error("{context}: {message}")]
    Fides {
        /// What we were doing.
        context: String,
        /// What went wrong.
        message: String,
    },
    /// A watch broke: whatever was being followed is no longer known.
    #[error("{context}: {message}")]
    Watch {
        /// What was being watched.
        context: String,
        /// What went wrong.
        message: String,
    },
    /// The Kubernetes API failed or refused the request.
    #[error("{context}: {source}")]
    Kubernetes {
        /// What we were doing, e.g. `listing Bundles`.
        context: String,
        /// What the API said.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// Whether this is [`Error::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }

    /// Whether this is [`Error::Refused`]: the rules said no, nothing broke.
    pub fn is_refused(&self) -> bool {
        matches!(self, Self::Refused { .. })
    }

    pub(crate) fn refused(action: Action, refusal: Refusal) -> Self {
        Self::Refused {
            action,
            code: refusal.code,
            reason: refusal.reason,
        }
    }

    pub(crate) fn kubernetes(context: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let context = context.into();
        move |source| Self::Kubernetes { context, source }
    }
}

/// A Kubernetes failure in words for people: the API server's own sentence and code
/// (`secrets "x" not found (404)`), never the client library's dump of its status;
/// otherwise the error and its causes.
pub(crate) fn in_words(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
        other => hecate_types::error_chain(other),
    }
}

/// Shorthand for results of operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;
