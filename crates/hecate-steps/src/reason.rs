//! Why a step failed, as the Passage records it: every reason a built-in step or the
//! engine gives a failure is a [`Reason`] here and nowhere else (as the controller's `events`
//! is for Events). Reasons are an interface (spec controller.md §0.3, §3.4): alerts,
//! people and the Go reference match on them, so each is spelled exactly as it is on
//! the wire — `status.steps[].reason` — and [`Reason::as_str`] is the one place it is
//! spelled. There is no empty reason: a failure nobody coded is [`Reason::Unknown`],
//! named so by the step that knows it has no better word, and the engine records what
//! it is given (docs/DECISIONS.md 118).
//!
//! Whether a failure is terminal is decided where it happens ([`StepError::terminal`]
//! or [`StepError::retryable`]); the documentation of each reason says what it usually
//! is. docs/STEPS.md lists each step's reasons; a test keeps that list and this one
//! alike.
//!
//! [`StepError::terminal`]: super::runner::StepError::terminal
//! [`StepError::retryable`]: super::runner::StepError::retryable

use std::fmt;

/// Declares [`Reason`], its wire spelling and [`Reason::ALL`] from one table, so that a
/// reason cannot be added without its spelling nor left out of the list.
macro_rules! reasons {
    ($($(#[doc = $doc:literal])+ $name:ident = $wire:literal,)+) => {
        /// Why a step failed: a stable PascalCase code, never empty.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Reason {
            $($(#[doc = $doc])+ $name,)+
        }

        impl Reason {
            /// Every reason, in the order they are declared.
            pub const ALL: &'static [Reason] = &[$(Reason::$name,)+];

            /// The code as a Passage's step status records it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Reason::$name => $wire,)+
                }
            }
        }
    };
}

reasons! {
    // Every step, and the engine.
    /// Any step: a bad `with:`, an unreadable Secret, a path that leaves the work
    /// directory (terminal).
    InvalidConfig = "InvalidConfig",
    /// The engine: an `if:` or a `with:` expression could not be evaluated (terminal).
    BadExpression = "BadExpression",
    /// The engine: no step has the name `uses:` gives (terminal).
    UnregisteredStep = "UnregisteredStep",
    /// The engine: a step was still waiting past its `timeout:` (terminal).
    StepTimedOut = "StepTimedOut",
    /// A failure the spec gives no code of its own: the forge steps' GitHub App token
    /// not minted, `flux-reconcile`'s other cluster out of reach (retryable).
    Unknown = "Unknown",

    // The git steps, and the forge steps where they read a checkout.
    /// git: the host refused the credentials, or wanted some (terminal).
    GitAuthFailed = "GitAuthFailed",
    /// git: the host or the repository could not be reached (retryable).
    GitUnreachable = "GitUnreachable",
    /// git: the remote refused the update, usually because the branch moved (retryable).
    GitRejected = "GitRejected",
    /// git: anything else git failed at (retryable on a remote, terminal on local files).
    GitFailed = "GitFailed",
    /// `git-push`: the branch moved and the crossing's commit conflicts with what landed
    /// there, so it cannot be rebased onto it (terminal).
    GitConflict = "GitConflict",
    /// git, forge: the step needs a checkout, and a restart lost the work directory
    /// (terminal).
    WorkDirLost = "WorkDirLost",
    /// `git-clone`: the clone grew past `--max-checkout-size` and was stopped (terminal).
    CheckoutTooLarge = "CheckoutTooLarge",
    /// git, `render-kustomize`, `http`: what the operator has not allowed — a local
    /// repository, a render option, a local address (terminal).
    NotAllowed = "NotAllowed",

    // The forge steps: `git-pull-request`, `commit-status`.
    /// forge: the forge refused the token (terminal).
    ProviderAuthFailed = "ProviderAuthFailed",
    /// forge: the forge's API failed the request (terminal when the repository or pull
    /// request is not found, retryable otherwise).
    ProviderFailed = "ProviderFailed",
    /// `git-pull-request`: the pull request was closed without being merged (terminal).
    PullRequestClosed = "PullRequestClosed",

    // The file steps: `edit-yaml`, `set-image`, the render steps, `oci-push`.
    /// YAML, render, `oci-push`: the file or directory to read does not exist (terminal).
    FileNotFound = "FileNotFound",
    /// `edit-yaml`, `set-image`: the key (or the `images` entry) is not in the file
    /// (terminal).
    KeyNotFound = "KeyNotFound",
    /// `edit-yaml`, `set-image`: the key cannot be edited in place, or the file cannot
    /// be read or written (terminal).
    EditFailed = "EditFailed",
    /// render: kustomize or Helm failed, could not be run, or took too long (terminal).
    RenderFailed = "RenderFailed",
    /// render: the program rendered no objects (terminal).
    NothingRendered = "NothingRendered",

    // The registry steps: `oci-push`, `oci-pull`.
    /// OCI: the registry refused the credentials, or wanted some (terminal).
    RegistryAuthFailed = "RegistryAuthFailed",
    /// OCI: the registry failed or could not be reached (retryable), or the artifact
    /// could not be packed or unpacked here (terminal).
    RegistryFailed = "RegistryFailed",

    // The Flux steps.
    /// `flux-reconcile`: an object could not be annotated (terminal when forbidden,
    /// retryable otherwise).
    FluxPatchFailed = "FluxPatchFailed",
    /// `flux-wait`: Flux gave up on the revision, or `Ready=False` outlasted
    /// `failAfter` (terminal).
    FluxDegraded = "FluxDegraded",

    // `http`.
    /// `http`: no answer, or none within `timeout` (retryable).
    HttpUnreachable = "HTTPUnreachable",
    /// `http`: the answer was refused — its status (terminal below 500, retryable from
    /// 500), a redirect to another origin or a false `successIf` (terminal).
    HttpFailed = "HTTPFailed",

    // `evidence-gate`.
    /// `evidence-gate`: Fides could not answer (retryable), or refused the token
    /// (terminal).
    EvidenceUnavailable = "EvidenceUnavailable",
    /// `evidence-gate`: an artifact, the policy or the change's risk is not compliant
    /// (terminal).
    NotCompliant = "NotCompliant",
    /// `evidence-gate`: an artifact is not on the environment's allowlist (terminal).
    NotAllowlisted = "NotAllowlisted",
    /// `evidence-gate`: nothing in Fides to judge — no image digest, no trail
    /// (terminal).
    NoEvidence = "NoEvidence",
    /// `evidence-gate`: the change gate held the change past `holdTimeout` (terminal).
    ChangeHeld = "ChangeHeld",
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use pretty_assertions::assert_eq;

    use super::*;

    fn is_pascal_case(code: &str) -> bool {
        code.starts_with(|c: char| c.is_ascii_uppercase())
            && code.chars().all(|c| c.is_ascii_alphanumeric())
    }

    #[test]
    fn every_reason_is_distinct_non_empty_and_pascal_case() {
        let codes: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        let distinct: BTreeSet<&str> = codes.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            codes.len(),
            "a code spelled twice: {codes:?}"
        );
        for code in &codes {
            assert!(is_pascal_case(code), "{code:?} is not PascalCase");
        }
        assert_eq!(Reason::Unknown.to_string(), "Unknown");
        assert_eq!(Reason::HttpFailed.as_str(), "HTTPFailed");
    }

    /// The codes docs/STEPS.md gives in its reason lists: from a "Reasons" to the end of
    /// its paragraph, every code in backticks (`GitFailed`, not `with:` or `failAfter`).
    fn documented(steps_md: &str) -> BTreeSet<String> {
        let mut codes = BTreeSet::new();
        for paragraph in steps_md.split("\n\n") {
            let Some(at) = paragraph.find("Reasons") else {
                continue;
            };
            let quoted = paragraph[at..].split('`').skip(1).step_by(2);
            codes.extend(quoted.filter(|q| is_pascal_case(q)).map(String::from));
        }
        codes
    }

    #[test]
    fn docs_steps_lists_every_reason_and_no_other() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/STEPS.md");
        let text = std::fs::read_to_string(&path).expect("docs/STEPS.md");
        let documented = documented(&text);
        let known: BTreeSet<String> = Reason::ALL.iter().map(|r| r.to_string()).collect();
        let undocumented: Vec<&String> = known.difference(&documented).collect();
        let unknown: Vec<&String> = documented.difference(&known).collect();
        assert_eq!(
            (undocumented, unknown),
            (vec![], vec![]),
            "(reasons docs/STEPS.md does not list, codes it lists that are no reason)"
        );
    }

    #[test]
    fn the_docs_reading_finds_only_reason_lists() {
        let text = "Outputs: `state` (`Open`, `Closed`).\n\n\
                    Reasons: `GitFailed` (T: `with:`, `failAfter`, `Ready=False`),\n\
                    `NotAllowed` (`fides allowlist add`).\n\n`Merged`";
        let found: Vec<String> = documented(text).into_iter().collect();
        assert_eq!(found, ["GitFailed", "NotAllowed"]);
    }
}
