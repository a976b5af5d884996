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
                seed: args.seed.unwrap_or_else(|| receipts::seed::gated_seed("sanitize")),
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
                let (hash, scoped) = verdict_hash::scope::verdict_hash_of(&root);
                no_sources_at(&root, scoped.len())?;
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
                println!("{:#x}", receipts::seed::gated_seed(&purpose));
                Ok(true)
            }
            ReceiptsAction::Check { dir, root, junit } => receipts_check(&dir, &root, junit.as_deref()),
        },
    }
}

/// An error when `root` holds none of the sources the verdict hash covers
/// (a wrong `--root`: the hash of nothing keys no receipt).
fn no_sources_at(root: &std::path::Path, files: usize) -> anyhow::Result<()> {
    if files == 0 {
        anyhow::bail!(
            "{} holds none of the sources the verdict hash covers (is it the workspace root?)",
            root.display()
        );
    }
    Ok(())
}

/// `harness receipts check`: the gate of `make verify`.
fn receipts_check(
    dir: &std::path::Path,
    root: &std::path::Path,
    junit_path: Option<&std::path::Path>,
) -> anyhow::Result<bool> {
    let started = std::time::Instant::now();
    let (current, files) = verdict_hash::of_tree(root);
    no_sources_at(root, files)
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
