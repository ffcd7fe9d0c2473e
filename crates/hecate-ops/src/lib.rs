//! The operations layer: the one place Hecate's rules live.
//!
//! Every surface — the `hecate` CLI, the `hecate-api` server, the `hecate-mcp` server
//! and the web UI — calls this crate and formats what it returns; none of them
//! decides anything itself. The crate has two halves:
//!
//! - `rules`: pure functions over snapshots of the cluster (eligibility, promotion
//!   windows, Explain, audit and evidence judgement), with `now` passed in, so each
//!   rule is tested with plain data in milliseconds;
//! - `Ops`: the thin shell over a `kube::Client` that fetches a snapshot in a bounded
//!   number of requests (one LIST per kind, never one request per object), hands it
//!   to the rules, and performs the actions (promote, approve, abort, poll).
//!
//! Only this crate reads or writes `hecate.dev` objects. It is a skeleton until the
//! rules land; see `docs/ARCHITECTURE.md`.
