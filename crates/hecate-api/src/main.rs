//! `hecate-api`: see the library crate, `hecate_api`.

use clap::Parser as _;

/// jemalloc rather than the system allocator: this process holds a watch-fed cache,
/// and glibc's arenas keep what the lists that fill it freed (DECISION 135).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = hecate_api::Args::parse();
    match hecate_api::run(args).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hecate-api: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
