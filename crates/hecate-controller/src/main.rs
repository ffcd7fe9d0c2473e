//! `hecate-controller`: see the library crate, `hecate_controller`.

fn main() {}
