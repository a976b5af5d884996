//! `harness`: the primlab command line (see `harness --help`), a thin layer
//! on the `harness` library.

use std::process::ExitCode;

/// Exit statuses: 0 passed, 1 a check failed, 2 could not run (no GPU
/// where one is needed, no NVRTC, bad input), 141 the reader of stdout went
/// away.
fn main() -> ExitCode {
    harness::run_command_line()
}
