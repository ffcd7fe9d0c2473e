//! `hecate-controller`: see the library crate, `hecate_controller`.

use clap::Parser as _;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = hecate_controller::Args::parse();
    match hecate_controller::run(args).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hecate-controller: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
