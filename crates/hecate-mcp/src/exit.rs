//! The exit codes of `hecate-mcp`: API for whoever supervises it.

/// It ran and stopped cleanly: the client closed stdin, or a signal ended the HTTP
/// server after it drained.
pub const OK: u8 = 0;
/// It could not start or stopped on an error: contradictory flags (`--allow-writes`
/// without `--actor`, a non-loopback `--listen` without `--insecure`, …), no usable
/// Kubernetes configuration, an address it cannot bind. The reason is on stderr,
/// `hecate-mcp: <reason>`.
pub const FAILED: u8 = 1;
/// The command line does not parse (an unknown flag, a missing value). Clap prints the
/// usage.
pub const USAGE: u8 = 2;
