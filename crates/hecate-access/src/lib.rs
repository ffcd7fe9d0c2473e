//! Who is calling, and what they may do — as the cluster decides; and how a surface
//! reaches the cluster in the first place.
//!
//! The one access layer of the surfaces that serve other people: `hecate-api` and
//! `hecate-mcp` authenticate a bearer token with a TokenReview and authorise each
//! [`Operation`](hecate_ops::Operation) with a SubjectAccessReview as the caller
//! ([`Reviewer`]); the server's own credentials never decide what a caller may see or
//! do. The `hecate` CLI, which acts with the caller's own credentials, shares
//! [`connect`] (kubeconfig, context, namespace) with both servers.
//!
//! - [`Reviewer`]: TokenReviews cached 10 s (keyed by a SHA-256 of the token, answers
//!   both ways), reads' SubjectAccessReviews cached 5 s, writes always asked afresh;
//!   both caches bounded and single-flight — however many requests with one key
//!   arrive together, one review is asked and the others wait for its answer.
//! - [`Reviewer::authorize`] answers a [`Decision`]; [`Denied`] words a refusal the
//!   same way on every surface: `<user> may not <verb> <resource> in <ns>[: reason]`.
//! - [`Reviewer::advise`]: which of several operations a caller may perform in a
//!   namespace (the API's `GET …/rights`), each distinct permission asked once and
//!   cached like a read — advice on what to offer; the write itself is asked afresh.
//! - [`Reviewer::visible_namespaces`]: the candidates a caller may read, each asked
//!   with the overview's permission; a refusal drops the namespace silently.
//!   [`visible_to_itself`] answers the same for the identity a surface acts as
//!   itself (SelfSubjectAccessReviews).
//! - [`quote`]: a client's input in an answer, quoted to a short prefix;
//!   [`bearer_token`]: the token of an `Authorization` header (any case of `Bearer`).
//! - [`serve`]: HTTP/1.1 with a header-read (and idle) time limit, for both servers.
//! - [`connect`]: a client as kubectl would build one, its default namespace and the
//!   server's URL.

mod bearer;
mod cache;
mod connect;
pub mod quote;
mod review;
mod serve;

pub use bearer::bearer_token;
pub use connect::{ConnectError, Connected, Connection, connect};
pub use review::{Caller, Decision, Denied, Review, ReviewError, Reviewer, visible_to_itself};
pub use serve::{serve, shutdown_signal};
