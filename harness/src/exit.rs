//! The harness's exit statuses, and the quiet end of a closed pipe.
//!
//! | status | meaning |
//! |---:|---|
//! | 0 | it ran and everything passed |
//! | 1 | it ran and a check failed |
//! | 2 | it could not run: no GPU where the command needs one, no NVRTC, bad input (clap's usage errors are 2 as well); a `check` with no size that fits the machine, or INCOMPLETE (nothing failed, some case could not run) |
//! | 141 | the reader closed stdout or stderr (`harness cases verify DIR \| head -1`): nothing more is printed |
//!
//! Rule relied on for 141: a Rust program ignores SIGPIPE, so a write to a
//! pipe nobody reads fails with EPIPE, and `print!`/`eprint!` turn that
//! failure into a panic ("failed printing to stdout: Broken pipe (os error
//! 32)"). [`quiet_broken_pipes`] installs a panic hook that recognises that
//! panic and exits with 128 + 13 (SIGPIPE), the status a shell reports for a
//! C tool that the signal ended, without a panic message. SIGPIPE itself
//! stays ignored: a closed pipe to one of the harness's own children (a
//! worker, a sanitizer run) remains an error the code handles, not a death.

use std::fmt;

/// It ran and everything passed.
pub const PASSED: u8 = 0;
/// It ran and a check failed.
pub const FAILED: u8 = 1;
/// It could not run (no GPU, no NVRTC, bad input).
pub const CANNOT_RUN: u8 = 2;
/// The reader of stdout or stderr went away (128 + SIGPIPE).
pub const BROKEN_PIPE: i32 = 141;

/// A command that could not run for a reason outside the code under test
/// (no GPU where one is required): exit status [`CANNOT_RUN`]. Its text is
/// the whole line printed on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CannotRun(pub String);

impl fmt::Display for CannotRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CannotRun {}

/// Whether a panic message is std's failed write to a closed stdout or
/// stderr (EPIPE is error 32 on Linux, the only system the harness runs on).
pub fn is_broken_pipe_panic(message: &str) -> bool {
    let printing = message.starts_with("failed printing to stdout") || message.starts_with("failed printing to stderr");
    printing && (message.contains("Broken pipe") || message.contains("(os error 32)"))
}

/// Installs the panic hook described in the module docs; every other panic
/// is reported by the default hook as before.
pub fn quiet_broken_pipes() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_broken_pipe_panic(message) {
            std::process::exit(BROKEN_PIPE);
        }
        default(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_failed_write_to_a_closed_pipe_is_a_broken_pipe() {
        assert!(is_broken_pipe_panic("failed printing to stdout: Broken pipe (os error 32)"));
        assert!(is_broken_pipe_panic("failed printing to stderr: Broken pipe (os error 32)"));
        assert!(!is_broken_pipe_panic("failed printing to stdout: No space left on device (os error 28)"));
        assert!(!is_broken_pipe_panic("index out of bounds: the len is 3 but the index is 32"));
        assert!(!is_broken_pipe_panic("Broken pipe while talking to the worker"));
    }

    #[test]
    fn the_statuses_are_the_documented_ones() {
        assert_eq!((PASSED, FAILED, CANNOT_RUN, BROKEN_PIPE), (0, 1, 2, 128 + 13));
        assert_eq!(CannotRun("check: cannot run: no GPU (x)".into()).to_string(), "check: cannot run: no GPU (x)");
    }
}
