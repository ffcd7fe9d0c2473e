//! Turning what went wrong into one clear sentence on stderr and an exit code.

use hecate_ops::{Error, Operation};

use crate::exit;

/// A command's failure: what to print and how to exit.
#[derive(Debug)]
pub(crate) struct Failure {
    /// One sentence, naming what to do where there is something to do.
    pub(crate) message: String,
    /// The exit code.
    pub(crate) code: u8,
    /// Whether to print `hecate: ` before it. Refusals are answers, printed bare.
    pub(crate) prefixed: bool,
    /// When the cluster refused the caller (403), what it refused, in words:
    /// [`Failure::needing`] words the message again, naming the permission needed.
    forbidden: Option<String>,
}

/// Whether the command only reads, or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A read: a missing object is a mistake on the command line (exit 1).
    Read,
    /// A write: a missing object means nothing was done (exit 5, as a refusal).
    Write,
}

impl Failure {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: exit::USAGE,
            prefixed: true,
            forbidden: None,
        }
    }

    pub(crate) fn could_not_tell(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: exit::COULD_NOT_TELL,
            prefixed: true,
            forbidden: None,
        }
    }

    pub(crate) fn unreachable(message: impl Into<String>) -> Self {
        Self::could_not_tell(message)
    }

    /// An ops error, in the mode of the command that got it.
    pub(crate) fn from_ops(server: &str, mode: Mode, error: Error) -> Self {
        match error {
            Error::NotFound { .. } => match mode {
                Mode::Read => Self {
                    message: error.to_string(),
                    code: exit::USAGE,
                    prefixed: true,
                    forbidden: None,
                },
                Mode::Write => Self {
                    message: error.to_string(),
                    code: exit::REFUSED,
                    prefixed: false,
                    forbidden: None,
                },
            },
            Error::Refused { .. } => Self {
                message: error.to_string(),
                code: exit::REFUSED,
                prefixed: false,
                forbidden: None,
            },
            Error::Kubernetes { context, source } => Self::from_kube(server, &context, source),
            Error::Fides { .. } | Error::Watch { .. } => Self::could_not_tell(error.to_string()),
        }
    }

    /// A Kubernetes failure, told as what it means for the user.
    pub(crate) fn from_kube(server: &str, doing: &str, error: kube::Error) -> Self {
        let message = match &error {
            kube::Error::Api(status) if status.code == 401 => format!(
                "the cluster at {server} did not accept your credentials while {doing} (401): log in again, or check the kubeconfig's user"
            ),
            kube::Error::Api(status) if status.code == 403 => {
                let refused = format!("not allowed while {doing}: {}", status.message);
                let mut failure =
                    Self::could_not_tell(format!("{refused} — ask for a Role that grants it"));
                failure.forbidden = Some(refused);
                return failure;
            }
            kube::Error::Api(status) => format!("{doing}: {} ({})", status.message, status.code),
            other => format!(
                "cannot reach the cluster at {server} while {doing}: {other} — is it running, and is this the right context?"
            ),
        };
        Self::could_not_tell(message)
    }

    /// For a command performing `operation` in `namespace`: a refusal by the cluster
    /// names the permission the operation needs (ops' catalogue) — at least that one,
    /// since what a command judges may need reading more.
    pub(crate) fn needing(mut self, operation: Operation, namespace: &str) -> Self {
        if let Some(refused) = &self.forbidden {
            self.message = format!(
                "{refused} — ask for a Role that grants at least {} in {namespace}",
                operation.permission()
            );
        }
        self
    }
}
