//! `hecate-mcp`: the operations layer as Model Context Protocol tools, so an LLM agent
//! can ask why a release is stuck and get typed blockers back.
//!
//! It can never approve, in any configuration: approval is a segregation-of-duties
//! control that belongs to people. The tools arrive with the MCP work; for now it
//! answers `--help` and `--version` only.

use clap::Parser;

/// The Hecate MCP server.
#[derive(Parser)]
#[command(name = "hecate-mcp", version)]
struct Args {}

fn main() {
    let Args {} = Args::parse();
}
