//! The `hecate-mcp` binary: see the library for what it serves.

use std::process::ExitCode;

use clap::Parser as _;
use hecate_mcp::{Args, exit, run};

/// jemalloc rather than the system allocator: this process holds a watch-fed cache,
/// and glibc's arenas keep what the lists that fill it freed (DECISION 135).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            eprintln!("hecate-mcp: {e}");
            ExitCode::from(exit::FAILED)
        }
    }
}
