//! What can go wrong, in three classes every surface tells apart: a named thing that
//! is not there, a rule that says no, and a failure to reach what we depend on.

use std::fmt;

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

    pub(crate) fn kubernetes(context: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let context = context.into();
        move |source| Self::Kubernetes { context, source }
    }
}

/// Shorthand for results of operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;
