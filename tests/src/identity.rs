//! The people and services the control plane knows, each with a static bearer token.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Someone the API server authenticates. `Admin` is in `system:masters` and may do
/// anything; everyone else starts with no permissions at all, so a test grants exactly
/// what it means to test (see [`crate::TestEnv::grant`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Identity {
    /// The cluster administrator.
    Admin,
    /// A developer.
    Alice,
    /// A developer.
    Bob,
    /// A release manager.
    Carol,
    /// A release manager too: the second of the two a production policy asks for.
    Dave,
    /// An automated pipeline.
    CiBot,
    /// The `hecate-api` server's own service identity.
    HecateApi,
    /// The controller's own service identity.
    HecateController,
}

impl Identity {
    /// Every identity.
    pub const ALL: [Self; 8] = [
        Self::Admin,
        Self::Alice,
        Self::Bob,
        Self::Carol,
        Self::Dave,
        Self::CiBot,
        Self::HecateApi,
        Self::HecateController,
    ];

    /// The username the API server sees.
    pub fn username(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Alice => "alice",
            Self::Bob => "bob",
            Self::Carol => "carol",
            Self::Dave => "dave",
            Self::CiBot => "ci-bot",
            Self::HecateApi => "hecate-api",
            Self::HecateController => "hecate-controller",
        }
    }

    /// Groups beyond `system:authenticated`, which every identity has: the cluster
    /// administrator's, and the release managers' (what approval policies name).
    pub fn groups(self) -> &'static [&'static str] {
        match self {
            Self::Admin => &["system:masters"],
            Self::Carol | Self::Dave => &[RELEASE_MANAGERS],
            _ => &[],
        }
    }
}

/// The group of the release managers, carol and dave.
pub const RELEASE_MANAGERS: &str = "release-managers";

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.username())
    }
}

/// A line of the API server's `--token-auth-file`: `token,user,uid[,"group,group"]`.
/// (An empty group column would make the API server invent a group named "".)
pub(crate) fn token_file_line(identity: Identity, token: &str) -> String {
    let user = identity.username();
    match identity.groups() {
        [] => format!("{token},{user},{user}"),
        groups => format!("{token},{user},{user},\"{}\"", groups.join(",")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_file_lines() {
        assert_eq!(token_file_line(Identity::Alice, "t0k"), "t0k,alice,alice");
        assert_eq!(
            token_file_line(Identity::Admin, "t0k"),
            "t0k,admin,admin,\"system:masters\""
        );
        assert_eq!(
            token_file_line(Identity::Dave, "t0k"),
            "t0k,dave,dave,\"release-managers\""
        );
    }
}
