//! What can go wrong talking to Fides, classified the way callers need to decide:
//! not found, will not heal by waiting (auth, misconfiguration), or worth retrying.

/// A Fides call's failure. Every message starts with `fides:` and names the call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The client cannot be built, or a call was refused before sending because an
    /// identifier or field it needs is missing.
    #[error("fides: {0}")]
    Misconfigured(String),
    /// Fides answered with a status of 300 or more.
    #[error("fides: {method} {path}: {status}: {body}")]
    Http {
        /// The HTTP status.
        status: u16,
        /// The request method.
        method: String,
        /// The relative path, with its query string.
        path: String,
        /// The response body (capped), or the status text when it was blank.
        body: String,
    },
    /// Fides could not be reached: DNS, connection, TLS, timeout.
    #[error("fides: {server}: {message}")]
    Transport {
        /// The server.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// A 2xx answer that is not what the call expects.
    #[error("fides: {method} {path}: decoding the response: {message}")]
    Decode {
        /// The request method.
        method: String,
        /// The relative path.
        path: String,
        /// The decoder's complaint.
        message: String,
    },
    /// Fides stored an approval under a kind its change gate will not count as a
    /// person's.
    #[error(
        "fides: Fides stored the {role} approval for {by} as kind {kind:?}, not \"session\", so the change gate \
         will not count it and the change stays held. Delegated approvals count when the server runs with \
         FIDES_DELEGATED_APPROVAL_ENABLED=true, Hecate's token has the Admin role, and {by} is a registered \
         user of the organisation"
    )]
    Uncounted {
        /// The kind Fides stored.
        kind: String,
        /// Whose approval it was.
        by: String,
        /// `approver` or `deployer`.
        role: String,
    },
}

impl Error {
    /// Fides said 404.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Http { status: 404, .. })
    }

    /// It will not heal by waiting: the token or the configuration is wrong (401, 403,
    /// a misconfiguration, or an approval Fides will not count).
    pub fn is_auth(&self) -> bool {
        matches!(
            self,
            Self::Http {
                status: 401 | 403,
                ..
            } | Self::Misconfigured(_)
                | Self::Uncounted { .. }
        )
    }

    /// It may heal: Fides was unreachable, slow, failing, or answered unexpectedly.
    pub fn is_unavailable(&self) -> bool {
        !self.is_auth()
    }

    /// Whether this is [`Error::Uncounted`].
    pub fn is_uncounted(&self) -> bool {
        matches!(self, Self::Uncounted { .. })
    }
}
