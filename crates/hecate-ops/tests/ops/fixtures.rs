//! The shared test fixtures ([`hecate_testenv::fixtures`]).

pub(crate) use hecate_testenv::fixtures::*;
