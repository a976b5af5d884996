//! `harness`: the primlab command line. See `harness --help`.

mod bench;
mod cli;
mod fixtures;
mod junit;
mod multigpu;
mod mutants;
mod progress;
mod receipts;
mod report;
mod sanitize;
mod sweep;
mod verdict_hash;

use clap::Parser;
use cli::{Cli, Command, ReceiptsAction};
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs a command; Ok(false) means it ran and found failures.
fn dispatch(command: Command) -> anyhow::Result<bool> {
    match command {
        Command::Sweep(args) => sweep::run(&args),
        Command::SanitizeChild(args) => sweep::run_sanitize_child(&args),
        Command::Sanitize(args) => {
            let tools = args
                .tools
                .iter()
                .map(|t| {
                    sanitize::parse::Tool::from_name(t).ok_or_else(|| {
                        anyhow::anyhow!("unknown tool '{t}': use memcheck, racecheck, synccheck or initcheck")
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            sweep::gpu::check_primitive_names(&args.primitives)?;
            sanitize::run(&sanitize::SanitizeOptions {
                primitives: args.primitives,
                tools,
                sizes: args.sizes,
                seed: args.seed,
                timeout: Duration::from_secs(args.timeout_secs),
                jobs: args.jobs,
                log_dir: args.log_dir,
                receipt: args.receipt,
                junit: args.junit,
                mutant: args.mutant,
            })
        }
        Command::Mutants(args) => mutants::run(&args),
        // `bench --gpus` is the multi-GPU scaling study, in place of the single-GPU bench.
        Command::Bench(command) => match command.gpus {
            Some(gpus) => multigpu::scaling_bench::run(&command.args, gpus),
            None => bench::run(&command.args),
        },
        Command::Report(args) => report::run(&args),
        Command::Fixtures(args) => fixtures::run(&args),
        Command::Receipts(args) => match args.action {
            ReceiptsAction::Hash => {
                println!("{}", kernels::SOURCE_HASH);
                Ok(true)
            }
            ReceiptsAction::Check { dir } => {
                let problems = receipts::check_gate(&dir, kernels::SOURCE_HASH);
                if problems.is_empty() {
                    println!(
                        "receipts: sweep and sanitize receipts match kernel sources {} and record no failure",
                        &kernels::SOURCE_HASH[..12]
                    );
                    return Ok(true);
                }
                for problem in &problems {
                    eprintln!("receipt gate: {problem}");
                }
                eprintln!("receipt gate: to refresh: {}", receipts::REFRESH_COMMAND);
                Ok(false)
            }
        },
    }
}
