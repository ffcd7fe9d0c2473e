//! `hecate-api`: see the library crate, `hecate_api`.

use clap::Parser as _;

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
