//! `harness`: the primlab command line. See `harness --help`.

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

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;

/// Exit statuses ([`exit`]): 0 passed, 1 a check failed, 2 could not run
/// (no GPU where one is needed, no NVRTC, bad input), 141 the reader of
/// stdout went away.
fn main() -> ExitCode {
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
