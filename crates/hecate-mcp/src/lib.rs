//! `hecate-mcp`: Hecate's operations layer as Model Context Protocol tools, so an LLM
//! agent can ask why a release is not moving and get typed blockers back — the same
//! answers `hecate explain` prints, because both are the same hecate-ops call.
//!
//! It can never approve, in any configuration: approval is a segregation-of-duties
//! control that belongs to people ([`tools::NO_APPROVE`]). It is read-only unless
//! started with `--allow-writes`, which adds `promote`, `rollback` and `abort`, judged
//! by the same ops rules as every other path.
//!
//! - [`args`]: the flags, checked into a [`args::Plan`] before anything touches the
//!   network (writes need an actor; a non-loopback `--listen` needs `--insecure` or
//!   `--auth kubernetes`; origins must be `scheme://host[:port]`).
//! - [`tools`]: the catalogue — stable names, descriptions for a model, input and output
//!   schemas, and the ops [`Operation`](hecate_ops::Operation) each performs.
//! - [`schema`]: the arguments (unknown fields refused) and answers as types; answers
//!   reuse hecate-ops' model, and every `structuredContent` is an object.
//! - [`server`]: [`HecateMcp`], the rmcp `ServerHandler`: decode, authorise, call ops,
//!   format ([`render`] writes the text). Bad arguments, not-found, refusals and
//!   missing permissions are tool results a model can read; a call of a tool not
//!   offered is a JSON-RPC error.
//! - [`http`]: streamable HTTP, stateless, with the Origin → Host → method →
//!   authentication guards in that order. With `--auth kubernetes` callers are
//!   reviewed by hecate-access (TokenReview, then a SubjectAccessReview per tool call
//!   for the tool's [`Operation`](hecate_ops::Operation)), as the HTTP API's are.
//! - [`run`]: connecting, the startup line on stderr, serving stdio or HTTP, shutdown;
//!   [`exit`]: the exit codes.

pub mod args;
pub mod exit;
pub mod http;
pub mod render;
pub mod run;
pub mod schema;
pub mod server;
pub mod tools;

pub use args::Args;
pub use run::{RunError, run};
pub use server::{HecateMcp, Settings};
