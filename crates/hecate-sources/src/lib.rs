//! `hecate-sources`: how Hecate reaches the places releases come from and go to — what
//! the steps of a crossing and the Beacons' watches alike use, so that both reach a
//! git remote, a registry or an HTTPS server the same way, with the same credentials
//! and the same trust.
//!
//! - [`git`]: the git CLI in a clean environment (a private `HOME`, no prompts, no
//!   agent; failures redacted and classified), which remotes it may reach
//!   ([`git::remote`]: network transports only, the local disk only when allowed,
//!   never a remote helper), a clone's size bounded while git runs
//!   ([`git::DEFAULT_MAX_CHECKOUT_SIZE`]), and the one reading of a git
//!   `credentialsRef` Secret and its hand-over to git (GitHub App tokens, SSH key
//!   files, an HTTPS credential helper);
//! - [`oci`]: the one registry client (tags, digests, manifests and blobs both ways;
//!   the registry's basic or Bearer challenge), the registry credentials a
//!   `credentialsRef` Secret holds, and [`oci::cache`], what a poller remembers of a
//!   repository between polls;
//! - [`tls`]: the one trust of every outbound HTTPS client (the web PKI's CAs and the
//!   platform's, `SSL_CERT_FILE` / `SSL_CERT_DIR` when set), and how a failed request
//!   is said ([`tls::error_text`], [`tls::untrusted_hint`]);
//! - [`secrets`]: the one reader of the Secrets steps, verifiers and Beacons name — one
//!   GET each time, only Secrets that opt in (DECISION 147), values that never reach a
//!   message;
//! - [`output`]: how a child process's output is read — as a bounded stream, cut or
//!   refused while it is read (git's, and the render steps' programs').
//!
//! Who may depend on it (`cargo xtask check-layers` holds the walls): the controller
//! (its steps and its Beacons). It depends on no hecate crate but `hecate-types` (how an
//! error is said, which Secrets opt in) — never on the controller, on `hecate-ops` or on a surface — and
//! talks to Kubernetes only to read a Secret. What its users make of a failure is
//! theirs: each module's errors carry a kind ([`git::Kind`], [`oci::ErrorKind`]) that a
//! step turns into a reason and a Beacon into its `Ready` condition.
//!
//! With the `testing` feature (for the tests of crates that use this one),
//! `git::testing` holds real bare repositories and a smart-HTTP git server, and
//! `secrets::data_of` a Secret's data from text.

pub mod git;
pub mod oci;
pub mod output;
pub mod secrets;
pub mod tls;
