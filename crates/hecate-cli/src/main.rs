//! `hecate`: the command people and scripts use to see why releases are or are not
//! moving, and to move them.
//!
//! It parses arguments, calls `hecate-ops`, and formats the answer as a table, JSON or
//! YAML; it never decides anything itself. The commands arrive with the CLI work; for
//! now it answers `--help` and `--version` only.

use clap::Parser;

/// Hecate moves releases between environments on Kubernetes.
#[derive(Parser)]
#[command(name = "hecate", version)]
struct Cli {}

fn main() {
    let Cli {} = Cli::parse();
}
