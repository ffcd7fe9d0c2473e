//! The `hecate` binary, run as users run it, against a real API server: stdout,
//! stderr and exit code for each command.

// In tests a panic is the failure report, so unwrapping is how expectations are stated.
#![allow(clippy::unwrap_used)]

mod ai;
mod completion;
mod dialect;
mod fides;
mod flux;
mod harness;
mod output_formats;
mod reads;
mod watch;
mod writes;
