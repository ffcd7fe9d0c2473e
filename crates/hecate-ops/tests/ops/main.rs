//! hecate-ops against a real API server: reads, Explain and Overview over objects
//! written the way a controller writes them, and the cost of each call in requests.

// In tests a panic is the failure report, so unwrapping is how expectations are stated.
#![allow(clippy::unwrap_used)]

mod actions;
mod approvals;
mod cache;
mod compat;
mod concurrency;
mod cost;
mod evidence;
mod fanout;
mod fixtures;
mod flux;
mod judgements;
mod preflight;
mod reads;
mod records;
mod unreadable;
