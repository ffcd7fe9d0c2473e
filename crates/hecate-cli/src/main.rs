//! `hecate`: see the library crate, `hecate_cli`, for everything but this line.

fn main() -> std::process::ExitCode {
    hecate_cli::main()
}
