//! primlab's checker as a library: what `harness check` does from the
//! command line and `primlab.check` from Python, a Rust caller does from
//! `cargo test` ([`check_manifest`]). The `harness` binary is a thin layer
//! on this crate ([`run_command_line`]).
//!
//! ```no_run
//! use harness::{check_manifest, CheckConfig, CheckError};
//!
//! let config = CheckConfig::new().sizes([1, 31, 33, 257, 4099]).seed(0x5eed);
//! match check_manifest("my_kernel/check.toml", &config) {
//!     Ok(report) => println!("{report}"),
//!     Err(CheckError::NoGpu { reason }) => println!("skipped (no GPU: {reason})"),
//!     // A failed check prints the lines `harness check` prints.
//!     Err(e) => panic!("{e}"),
//! }
//! ```
//!
//! Every module below is private: the public API is the items re-exported
//! here from [`api`](crate::check_manifest) and [`run_command_line`].

mod api;
mod bench;
mod bounded;
mod budget;
mod cases;
mod check;
mod cli;
mod commands;
mod edge_families;
mod exit;
mod grammar;
mod junit;
#[cfg(test)]
mod layers_tests;
mod multigpu;
mod mutants;
mod nvrtc_path;
mod progress;
mod receipts;
mod registry;
mod report;
mod sanitize;
mod sweep;
mod table;
#[cfg(test)]
mod test_dir;
mod verdict_hash;

pub use api::{check_manifest, CheckConfig, CheckError, CheckReport, Failure, Outcome};

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;

/// The `harness` command line, as the `harness` binary runs it: reads the
/// arguments of this process, runs the command and returns its exit status
/// (0 passed, 1 a check failed, 2 could not run: no GPU where one is
/// needed, no NVRTC, bad input; 141 the reader of stdout went away).
///
/// It may start this process again (with NVRTC's folder on the library
/// path, when it finds one that is not) and installs a panic hook: call it
/// from a `main` only.
pub fn run_command_line() -> ExitCode {
    nvrtc_path::reexec_with_nvrtc();
    exit::quiet_broken_pipes();
    let cli = Cli::parse();
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    cli::old_spelling_warnings(&args).iter().for_each(|w| eprintln!("{w}"));
    let outcome = match &cli.command {
        Command::Sweep(args) => match commands::sweep::cannot_run(args) {
            Some(line) => Err(exit::CannotRun(line).into()),
            None => dispatch(cli.command),
        },
        _ => dispatch(cli.command),
    };
    match outcome {
        Ok(true) => ExitCode::from(exit::PASSED),
        Ok(false) => ExitCode::from(exit::FAILED),
        Err(e) => {
            match e.downcast_ref::<exit::CannotRun>() {
                Some(line) => eprintln!("{line}"),
                None => eprintln!("error: {}", nvrtc_path::with_search_note(&format!("{e:#}"))),
            }
            ExitCode::from(exit::CANNOT_RUN)
        }
    }
}

/// Runs a command; Ok(false) means it ran and found failures.
fn dispatch(command: Command) -> anyhow::Result<bool> {
    match command {
        Command::Sweep(args) => commands::sweep::run(&args),
        Command::Check(args) => commands::check::run(&args),
        Command::Cases(args) => commands::cases::run(&args),
        Command::SanitizeChild(args) => commands::sweep::run_sanitize_child(&args),
        Command::Sanitize(args) => commands::sanitize::run(&args),
        Command::Mutants(args) => commands::mutants::run(&args),
        // `bench --gpus` is the multi-GPU scaling study, in place of the single-GPU bench.
        Command::Bench(command) => commands::bench::run(*command),
        Command::Report(args) => commands::report::run(&args),
        Command::Fixtures(args) => commands::fixtures::run(&args),
        Command::Receipts(args) => commands::receipts::run(args),
    }
}
