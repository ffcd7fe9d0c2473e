//! Exit codes: API for scripts, so they are named constants, documented in
//! `hecate --help` and the man page, and never reused for something else.

use std::process::ExitCode;

/// It worked; for `promote --watch`, the crossing landed.
pub const OK: u8 = 0;
/// The command line was wrong, or named something that does not exist.
pub const USAGE: u8 = 1;
/// Hecate could not tell: the cluster was unreachable or refused us, a watch was lost
/// or timed out.
pub const COULD_NOT_TELL: u8 = 2;
/// `verify`: an evidence chain is broken.
pub const CHAIN_BROKEN: u8 = 3;
/// `verify`: nothing was recorded to verify.
pub const NOTHING_RECORDED: u8 = 4;
/// The rules said no (or the object to act on does not exist); nothing was changed.
pub const REFUSED: u8 = 5;
/// `promote --watch`: the crossing ran and did not land (failed or aborted).
pub const CROSSING_FAILED: u8 = 6;

/// Every code with its meaning, for help and the man page.
pub const TABLE: [(u8, &str); 7] = [
    (OK, "success; for promote --watch, the crossing landed"),
    (USAGE, "usage error, or the named object does not exist"),
    (
        COULD_NOT_TELL,
        "could not tell: cluster unreachable or refusing, watch lost or timed out",
    ),
    (CHAIN_BROKEN, "verify: an evidence chain is broken"),
    (NOTHING_RECORDED, "verify: nothing recorded to verify"),
    (
        REFUSED,
        "refused by the rules, or nothing to act on; nothing changed",
    ),
    (
        CROSSING_FAILED,
        "promote --watch: the crossing failed or was aborted",
    ),
];

/// The process exit code for `code`.
pub fn code(code: u8) -> ExitCode {
    ExitCode::from(code)
}
