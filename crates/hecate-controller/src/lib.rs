//! `hecate-controller`: the part of Hecate that moves releases.
//!
//! (Crate documentation is completed as the controllers land.)

mod args;
pub mod clock;
pub mod condition;
pub mod crd_check;
pub mod events;
pub mod flux_api;
pub mod gate;
pub mod health;
pub mod lease;
pub mod metrics;
pub mod predicate;
pub mod ready;
mod run;
pub mod scope;
mod serve;
pub mod steps;
pub mod verify;

pub use args::{Args, BindAddress, LogFormat};
pub use run::run;
