//! `hecate`: the command people and scripts use to see why releases are or are not
//! moving, and to move them.
//!
//! It parses arguments (`cli`), reaches the cluster as kubectl would (`context`), calls
//! `hecate-ops`, and formats the answer (`render`, `output`) in kubectl's `-o` formats —
//! a table (`wide` with more columns), JSON, YAML, the objects' names, or a JSONPath
//! template (`jsonpath`); it never decides anything itself. Exit codes are documented constants (`exit`).
//! Installed as `kubectl-hecate` or `flux-hecate` it works as a plugin of either
//! (`invocation`).

mod ai;
mod cli;
mod commands;
mod complete;
mod context;
mod dialect;
pub mod exit;
mod failure;
mod invocation;
mod jsonpath;
mod output;
mod render;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _};

use crate::cli::Cli;
use crate::invocation::Invocation;
use crate::output::Style;

/// Runs `hecate` with the process's arguments and returns how it should exit.
pub fn main() -> ExitCode {
    let argv0 = std::env::args().next().unwrap_or_else(|| "hecate".into());
    let invocation = Invocation::from_argv0(&argv0);
    let command = Cli::command().bin_name(invocation.name);
    // The reference's spellings (`-namespace`, `hecate help`, …) read as ours.
    let argv = match dialect::Dialect::of(&command)
        .rewrite(std::env::args_os().collect(), invocation.name)
    {
        Ok(argv) => argv,
        Err(failure) => {
            let _ = writeln!(
                std::io::stderr(),
                "hecate: {}",
                output::shown(&failure.message)
            );
            return exit::code(failure.code);
        }
    };
    let cli = match command
        .try_get_matches_from(argv)
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return match error.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::code(exit::OK)
                }
                _ => exit::code(exit::USAGE),
            };
        }
    };
    let style = Style::detect(invocation);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "hecate: cannot start: {error}");
            return exit::code(exit::COULD_NOT_TELL);
        }
    };
    match runtime.block_on(commands::run(cli, style)) {
        Ok(code) => exit::code(code),
        Err(failure) => {
            let prefix = if failure.prefixed { "hecate: " } else { "" };
            // A refusal's or an error's words may hold the cluster's text.
            let _ = writeln!(
                std::io::stderr(),
                "{prefix}{}",
                output::shown(&failure.message)
            );
            exit::code(failure.code)
        }
    }
}
