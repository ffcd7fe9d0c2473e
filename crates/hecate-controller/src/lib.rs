//! `hecate-controller`: the part of Hecate that moves releases.
//!
//! (Crate documentation is completed as the controllers land.)

pub mod health;
pub mod steps;
pub mod verify;
