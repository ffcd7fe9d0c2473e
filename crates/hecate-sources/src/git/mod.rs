//! The git CLI as the controller runs it, and the one way a `credentialsRef` Secret
//! (spec controller.md §5.2) becomes what git authenticates with — shared by the git
//! steps (`git-clone`, `git-push`, `git-commit`; the controller's `steps::git`) and
//! Beacons' git watches (`ls-remote` and the path filters' shallow clone; the
//! controller's `beacon::git`).
//!
//! - [`command`]: [`Git`], one git child process after another in a clean environment
//!   (no system or user configuration, `HOME` in a private directory, no prompts, no
//!   agent), failures redacted and sorted by what git said ([`Class`]);
//! - [`credentials`]: [`GitCredentials::from_secret`], the one reading of a Secret in
//!   §5.2's precedence (GitHub App, SSH key, HTTPS password), and [`apply`], the one
//!   way it is handed to git — a credential helper that prints an HTTPS password from
//!   the child's environment, an ssh command with the key and `known_hosts` as 0600
//!   files in a [`Scratch`] directory of the private area;
//! - [`github_app`]: GitHub App installation tokens, minted and cached;
//! - [`remote`]: which remotes git is sent to — the network's, and the controller's own
//!   disk only with `--allow-local-git` — judged before git runs and enforced in git's
//!   environment (`GIT_ALLOW_PROTOCOL`);
//! - a clone's size: [`Git::run_bounded`] stops git once a directory grows past a
//!   limit, [`DEFAULT_MAX_CHECKOUT_SIZE`] is `--max-checkout-size`'s default for every
//!   clone (a step's and a Beacon's), and [`size_text`] says a size as people read it.
//!
//! The private area belongs to the caller: a step uses `<work dir>/.hecate`, a Beacon a
//! temporary directory of its own for each resolution, removed afterwards. Nothing
//! secret reaches a process argument, a log line or a message.
//!
//! Failures are an [`Error`] of a [`Kind`]; each user says them in its own words — a
//! step as a reason code (`impl From<Error> for StepError`), a Beacon as a `Ready`
//! reason.

pub mod command;
pub mod credentials;
pub mod github_app;
pub mod remote;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use command::{
    Bounded, Class, DEFAULT_MAX_CHECKOUT_SIZE, Git, GitFailure, INHERITED, Limits, size_text,
};
pub use credentials::{Basic, GitCredentials, GitHubApp, Scratch, SshKey, apply};
pub use github_app::AppTokens;

/// Something the git module could not do, and of which kind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// What kind of failure it is.
    pub kind: Kind,
    /// What happened, secrets already removed.
    pub message: String,
}

/// The kinds of [`Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The credentials Secret is missing, unreadable or unusable, or a GitHub App's
    /// key cannot sign: a configuration mistake another try does not mend.
    Config,
    /// A local file or directory could not be made or read (the private area, a key
    /// file, a checkout).
    Local,
    /// The remote (or GitHub, for an App token) refused or could not be reached.
    Remote(Class),
}

impl Error {
    /// A configuration mistake.
    pub fn config(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Config,
            message: message.into(),
        }
    }

    /// A local failure.
    pub fn local(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Local,
            message: message.into(),
        }
    }

    /// A failure talking to a remote, of `class`.
    pub fn remote(class: Class, message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Remote(class),
            message: message.into(),
        }
    }
}
