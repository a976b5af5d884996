//! `harness`: the primlab command line. See `harness --help`.

mod bench;
mod bounded;
mod cases;
mod check;
mod cli;
mod edge_families;
mod exit;
mod fixtures;
mod junit;
mod multigpu;
mod mutants;
mod nvrtc_path;
mod progress;
mod receipts;
mod registry;
mod report;
mod sanitize;
mod size_grammar;
mod sweep;
#[cfg(test)]
mod test_dir;
mod verdict_hash;

use clap::Parser;
use cli::{Cli, Command, ReceiptsAction};
use std::process::ExitCode;
use std::time::Duration;

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
        Command::Sweep(args) => match sweep_cannot_run(args) {
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

/// For `sweep --gpu-only` or `--require-gpu` (not `--list`): the line that
/// says why the GPU checks cannot run on this machine, decided before the
/// sweep starts (the sweep itself would count a missing GPU as a failure,
/// exit 1). The probe is the first step of the sweep's own `Gpu::open` (the
/// driver library loads and reports a device, NVRTC loads), so a machine
/// that passes it runs the sweep exactly as before.
fn sweep_cannot_run(args: &cli::SweepArgs) -> Option<String> {
    if !(args.gpu_only || args.require_gpu) || args.list || args.cpu_only {
        return None;
    }
    let reason_of = |e: kernels::GpuError| match e {
        kernels::GpuError::Unavailable { reason } | kernels::GpuError::NvrtcUnavailable { reason } => reason,
        other => other.to_string(),
    };
    let reason = match kernels::probe_driver() {
        Err(e) => reason_of(e),
        Ok(_) => reason_of(kernels::compile::ensure_nvrtc().err()?),
    };
    let flag = if args.require_gpu { "--require-gpu" } else { "--gpu-only" };
    Some(format!(
        "sweep: {flag} was given but the GPU checks cannot run (no GPU: {}); nothing was checked",
        nvrtc_path::with_search_note(&reason)
    ))
}

/// Runs a command; Ok(false) means it ran and found failures.
fn dispatch(command: Command) -> anyhow::Result<bool> {
    match command {
        Command::Sweep(args) => sweep::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Cases(args) => cases::run(&args),
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
            sanitize::run(&sanitize::SanitizeOptions {
                primitives: args.primitives.iter().map(|p| p.name().to_string()).collect(),
                tools,
                sizes: args.sizes,
                seed: args.seed.unwrap_or_else(verdict_hash::sanitize_seed),
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
        Command::Bench(command) => match (command.action, command.gpus) {
            (Some(cli::BenchAction::Compare { old, new, threshold, all, csv, format }), _) => {
                bench::compare::run(&old, &new, &bench::compare::Options { threshold, all, csv, format })
            }
            (None, Some(gpus)) => multigpu::scaling_bench::run(&command.args, gpus),
            (None, None) => bench::run(&command.args),
        },
        Command::Report(args) => report::run(&args),
        Command::Fixtures(args) => fixtures::run(&args),
        Command::Receipts(args) => match args.action {
            ReceiptsAction::Hash { root, files } => {
                let (hash, scoped) = verdict_hash::scope::verdict_hash_of(&root).map_err(anyhow::Error::msg)?;
                println!("{hash}");
                if hash != verdict_hash::VERDICT_HASH {
                    eprintln!(
                        "note: this binary was built from other sources (verdict hash {}); rebuild it",
                        &verdict_hash::VERDICT_HASH[..12]
                    );
                }
                if files {
                    for path in scoped {
                        println!("{}", path.strip_prefix(&root).unwrap_or(&path).display());
                    }
                }
                Ok(true)
            }
            ReceiptsAction::Seed { purpose } => {
                println!("{:#x}", verdict_hash::seed_for(&purpose, verdict_hash::VERDICT_HASH));
                Ok(true)
            }
            ReceiptsAction::Check { dir, root, junit } => receipts_check(&dir, &root, junit.as_deref()),
            ReceiptsAction::Status { dir, root, names } => receipts_status(&dir, &root, names),
        },
    }
}

/// `harness receipts status`: which gated receipts are stale (exit 1 when
/// any is), and the command that remakes them. A binary built from other
/// sources than the checkout's cannot remake them: exit 2.
fn receipts_status(dir: &std::path::Path, root: &std::path::Path, names: bool) -> anyhow::Result<bool> {
    let (current, _) = verdict_hash::of_tree(root)
        .map_err(|e| e.context("receipts status: run it from the workspace root or pass --root"))?;
    if current != verdict_hash::VERDICT_HASH {
        return Err(exit::CannotRun(format!(
            "receipts status: this harness was built from sources {} but {} hashes to {}: rebuild it \
             (make build-release) before remaking receipts, or they would be keyed to other sources",
            &verdict_hash::VERDICT_HASH[..12],
            root.display(),
            &current[..12]
        ))
        .into());
    }
    let statuses = receipts::status::status(dir, &current);
    let stale = receipts::status::stale_kinds(&statuses);
    if names {
        stale.iter().for_each(|kind| println!("{kind}"));
    } else {
        print!("{}", receipts::status::describe(&statuses, &current));
    }
    Ok(stale.is_empty())
}

/// `harness receipts check`: the gate of `make verify`.
fn receipts_check(
    dir: &std::path::Path,
    root: &std::path::Path,
    junit_path: Option<&std::path::Path>,
) -> anyhow::Result<bool> {
    let started = std::time::Instant::now();
    let (current, files) = verdict_hash::of_tree(root)
        .map_err(|e| e.context("receipts check: run it from the workspace root or pass --root"))?;
    if current != verdict_hash::VERDICT_HASH {
        eprintln!(
            "receipt gate: note: this harness was built from other sources (verdict hash {}) than {} ({}); rebuild it",
            &verdict_hash::VERDICT_HASH[..12],
            root.display(),
            &current[..12]
        );
    }
    println!("receipts: recomputing the catalogues of sources {} ({files} files) on the CPU ...", &current[..12]);
    let report = receipts::check_gate(dir, &current, None);
    for (kind, coverage) in &report.checked {
        println!(
            "receipts: {kind}: {} of {} required checks present, passing and matching",
            coverage.matched, coverage.required
        );
    }
    if let Some(path) = junit_path {
        junit::write(path, "receipts", &receipts::junit_cases(&report))?;
    }
    if report.problems.is_empty() {
        println!(
            "receipts: sweep, sanitize and mutants receipts cover the catalogues of sources {} and record no failure ({:.0} s)",
            &current[..12],
            started.elapsed().as_secs_f64()
        );
        return Ok(true);
    }
    for problem in &report.problems {
        eprintln!("receipt gate: {problem}");
    }
    eprintln!("receipt gate: to refresh: {}", receipts::REFRESH_COMMAND);
    Ok(false)
}
