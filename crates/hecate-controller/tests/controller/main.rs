//! hecate-controller against a real API server (kube-apiserver + etcd from the test
//! environment): Gate reconciles called one at a time, as the reference's own tests
//! call them, and the controller process as users run it.

// In tests a panic is the failure report, so unwrapping is how expectations are stated.
#![allow(clippy::unwrap_used)]

mod beacon;
mod bounds;
mod checkers;
mod costs;
mod crossing;
mod deploy;
mod evidence_steps;
mod fan_out;
mod flux_steps;
mod forge_steps;
mod gate;
mod git_steps;
mod harness;
mod health;
mod http_step;
mod leader;
mod notify;
mod oci_steps;
mod own_steps;
mod process;
mod reach;
mod recording;
mod render;
mod running;
mod shards;
mod traces;
mod trust;
mod unreadable;
mod verifiers;
mod waiting;
