//! `harness sweep`: its options, and the run that checks the model on the
//! CPU, runs the GPU catalogue (`crate::sweep::runner`) and writes the
//! receipt; and the internal child compute-sanitizer wraps.

use crate::junit;
use crate::receipts::{receipt_path, receipts_dir, Coverage, MachineInfo, Receipt};
use crate::registry::Primitive;
use crate::sweep::case::{failure_line, CaseResult, Verdict};
use crate::sweep::{check_sizes, cpu, gpu, runner, sizes, summary, SweepPlan};
use anyhow::{bail, Result};
use clap::Args;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Instant;

/// Options of `harness sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Seed of every generated input (when omitted: a fresh one, printed). A receipt for the
    /// gate needs the seed derived from the verdict hash: `harness receipts seed sweep`.
    #[arg(long, value_parser = crate::grammar::parse_seed)]
    pub seed: Option<u64>,
    /// Skip the largest sizes (2^24, 2^28) and use fewer random sizes.
    #[arg(long)]
    pub quick: bool,
    /// Only these primitives (repeatable).
    #[arg(long = "primitive", value_name = "NAME", value_enum)]
    pub primitives: Vec<crate::registry::Primitive>,
    /// Only variants whose name contains this text (repeatable); a filter that
    /// matches nothing is an error that lists the valid variants.
    #[arg(long = "variant", value_name = "TEXT")]
    pub variants: Vec<String>,
    /// Only these sizes (comma-separated, each at least 1: 1000,2^20,2^28+1), instead of the
    /// boundary + random + large sizes.
    #[arg(long, value_delimiter = ',', value_name = "N,N,...", value_parser = crate::grammar::parse_size)]
    pub sizes: Vec<usize>,
    /// Only the model checks (no GPU even if present).
    #[arg(long, conflicts_with_all = ["gpu_only", "require_gpu"])]
    pub cpu_only: bool,
    /// Only the GPU checks (skip the model self-checks); fails when no GPU is present.
    #[arg(long)]
    pub gpu_only: bool,
    /// Fail (exit nonzero) when the GPU checks cannot run, instead of counting them as skipped.
    #[arg(long)]
    pub require_gpu: bool,
    /// Write a receipt to this path. Only a full GPU run (no filters, no --quick, no
    /// mutant) may write receipts/sweep.json, and no partial run replaces a full receipt.
    /// (`--json` is the old spelling, kept for one release with a warning.)
    #[arg(long = "receipt", alias = "json", value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report (one test case per check) to this path.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Compile a planted bug into the kernels (used by `harness mutants`).
    #[arg(long, default_value_t = 0, hide = true)]
    pub mutant: u32,
    /// Print the GPU cases the options select (no GPU needed) and exit.
    #[arg(long)]
    pub list: bool,
    /// Stop after this many failures are printed (all are still counted).
    #[arg(long, default_value_t = 50)]
    pub max_failures_shown: usize,
    /// Spread the GPU cases over N GPUs (or 'all'), one thread per GPU, and add the sharded
    /// reduce and scan cases over all N through NCCL (needs libnccl.so: scripts/nccl_env.sh).
    #[arg(long, value_name = "N|all", value_parser = crate::multigpu::parse_gpus, conflicts_with = "cpu_only")]
    pub gpus: Option<crate::multigpu::GpuCount>,
}

/// Options of the internal `sanitize-child`.
#[derive(Debug, Args)]
pub struct SanitizeChildArgs {
    /// The primitive whose cases to run.
    #[arg(long)]
    pub primitive: String,
    /// Sizes to run.
    #[arg(long, value_delimiter = ',', value_parser = crate::grammar::parse_size)]
    pub sizes: Vec<usize>,
    /// Only variants whose name contains this text (repeatable).
    #[arg(long = "variant")]
    pub variants: Vec<String>,
    /// Planted bug id.
    #[arg(long, default_value_t = 0)]
    pub mutant: u32,
    /// Seed.
    #[arg(long, default_value_t = crate::sanitize::DEFAULT_SEED, value_parser = crate::grammar::parse_seed)]
    pub seed: u64,
}

/// The plan of `harness sweep` with these arguments: the CPU half
/// (`gpu == false`) leaves out the GPU-only large sizes.
pub fn plan(args: &SweepArgs, seed: u64, gpu: bool) -> SweepPlan {
    SweepPlan {
        seed,
        sizes: sizes::sweep_sizes(&args.sizes, seed, args.quick, gpu),
        quick: args.quick,
        primitives: args.primitives.clone(),
        variants: args.variants.clone(),
        one_family: false,
    }
}

/// Why a sweep with these arguments is not the full catalogue (empty: it is,
/// provided the GPU runs).
pub fn partial_reasons(args: &SweepArgs) -> Vec<String> {
    let mut reasons = Vec::new();
    if !args.primitives.is_empty() {
        reasons.push(format!("--primitive {}", args.primitives.iter().map(|p| p.name()).collect::<Vec<_>>().join(",")));
    }
    if !args.variants.is_empty() {
        reasons.push(format!("--variant {}", args.variants.join(",")));
    }
    if !args.sizes.is_empty() {
        reasons.push("--sizes".to_string());
    }
    if args.quick {
        reasons.push("--quick".to_string());
    }
    if args.mutant != 0 {
        reasons.push(format!("mutant {}", args.mutant));
    }
    if args.cpu_only {
        reasons.push("--cpu-only".to_string());
    }
    reasons
}

/// Fails when `--variant` filters match no case, listing the valid names.
fn check_variant_filters(args: &SweepArgs, seed: u64) -> Result<()> {
    if args.variants.is_empty() {
        return Ok(());
    }
    let mut unfiltered = plan(args, seed, true);
    unfiltered.variants.clear();
    let mut names: BTreeSet<String> = gpu::catalogue(&unfiltered).into_iter().map(|c| c.id.variant).collect();
    if !args.gpu_only {
        let mut cpu_plan = plan(args, seed, false);
        cpu_plan.variants.clear();
        names.extend(cpu::checks(&cpu_plan, !args.sizes.is_empty()).into_iter().map(|c| c.algorithm));
    }
    if let Some(gpus) = args.gpus {
        if let crate::multigpu::GpuCount::Exactly(k) = gpus {
            names.extend(crate::multigpu::sweep_cases::sharded_variants(k).into_iter().map(|(_, v)| v));
        } else {
            names.insert("sharded".to_string());
        }
    }
    for filter in &args.variants {
        if !names.iter().any(|n| n.contains(filter.as_str())) {
            let shown: Vec<&str> = names.iter().map(String::as_str).collect();
            bail!(
                "--variant {filter}: no case of the selected primitives has a variant containing '{filter}'; \
                 valid variants: {}",
                shown.join(", ")
            );
        }
    }
    Ok(())
}

/// For `sweep --gpu-only` or `--require-gpu` (not `--list`): the line that
/// says why the GPU checks cannot run on this machine, decided before the
/// sweep starts (the sweep itself would count a missing GPU as a failure,
/// exit 1). The probe is the first step of the sweep's own `Gpu::open` (the
/// driver library loads and reports a device, NVRTC loads), so a machine
/// that passes it runs the sweep exactly as before.
pub fn cannot_run(args: &SweepArgs) -> Option<String> {
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
        crate::nvrtc_path::with_search_note(&reason)
    ))
}

/// The seed of a sweep given no `--seed`: a full run draws its inputs from
/// this binary's verdict hash (the gate requires it); any other run a fresh one.
pub fn sweep_seed(args: &SweepArgs) -> u64 {
    if partial_reasons(args).is_empty() {
        crate::verdict_hash::seed_for("sweep", crate::verdict_hash::VERDICT_HASH)
    } else {
        crate::sweep::fresh_seed()
    }
}

/// `harness sweep`. Returns Ok(false) if any check failed, if nothing was
/// checked, or if `--require-gpu`/`--gpu-only` was given and the GPU checks
/// could not run.
pub fn run(args: &SweepArgs) -> Result<bool> {
    check_sizes(&args.sizes)?;
    let seed = args.seed.unwrap_or_else(|| sweep_seed(args));
    check_variant_filters(args, seed)?;
    println!("sweep: seed {seed:#x} (rerun with --seed {seed:#x})");
    let started = Instant::now();
    if args.list {
        let plan = plan(args, seed, true);
        let cases = gpu::catalogue(&plan);
        for case in &cases {
            println!("{} family={}", case.id.marker(), case.id.family);
        }
        println!("sweep: {} GPU cases", cases.len());
        if let Some(gpus) = args.gpus {
            crate::multigpu::sweep_cases::list(&plan, !args.sizes.is_empty(), gpus);
        }
        return Ok(true);
    }

    // `--gpus`: check the GPU count and NCCL before any work, so that bad
    // input fails at once with its reason.
    let multigpu = match args.gpus {
        Some(gpus) => {
            let plan = plan(args, seed, true);
            let pre = crate::multigpu::sweep_cases::preflight(gpus, &plan)?;
            Some((pre, plan))
        }
        None => None,
    };

    let mut gpu_skip_reason = None;
    let gpu = if args.cpu_only {
        gpu_skip_reason = Some("--cpu-only was given".to_string());
        None
    } else if multigpu.is_some() {
        None
    } else {
        match kernels::Gpu::open(kernels::GpuOptions { ordinal: 0, mutant: args.mutant }) {
            Err(kernels::GpuError::Unavailable { reason }) => {
                gpu_skip_reason = Some(reason);
                None
            }
            Err(e) => {
                gpu_skip_reason = Some(e.to_string());
                None
            }
            Ok(gpu) => Some(gpu),
        }
    };
    if let (Some(reason), true) = (&gpu_skip_reason, args.require_gpu || args.gpu_only) {
        let flag = if args.require_gpu { "--require-gpu" } else { "--gpu-only" };
        eprintln!("sweep: {flag} was given but the GPU checks cannot run (no GPU: {reason}); nothing was checked");
        return Ok(false);
    }

    let mut cpu_results = Vec::new();
    if !args.gpu_only {
        let plan = plan(args, seed, false);
        cpu_results = cpu::run(&plan, !args.sizes.is_empty(), args.max_failures_shown)?;
        summary::print_table("model (CPU): hardware-scope algorithms vs direct definitions", &cpu_results);
    }

    let mut machine = None;
    let mut gpu_results = Vec::new();
    let mut run_times = None;
    let mut multigpu_details = None;
    if let Some((pre, plan)) = &multigpu {
        let run =
            crate::multigpu::sweep_cases::run(pre, plan, !args.sizes.is_empty(), args.mutant, args.max_failures_shown)?;
        machine = Some(run.machine);
        multigpu_details = Some(run.details);
        gpu_results = run.catalogue;
        gpu_results.extend(run.sharded);
    } else if let Some(gpu) = &gpu {
        let plan = plan(args, seed, true);
        let info = gpu.info();
        println!(
            "sweep: GPU {} (sm_{}{}, {} SMs), NVRTC {}.{}, sizes {:?}{}",
            info.name,
            info.compute_capability.0,
            info.compute_capability.1,
            info.sm_count,
            info.nvrtc_version.0,
            info.nvrtc_version.1,
            plan.sizes,
            if args.mutant != 0 { format!(", MUTANT {}", args.mutant) } else { String::new() }
        );
        machine = Some(MachineInfo::collect(gpu));
        let (results, times) = runner::run_gpu_cases(gpu, &plan, runner::RunOptions::sweep(args.max_failures_shown))?;
        gpu_results = results;
        summary::print_table("GPU kernels vs the model", &gpu_results);
        println!("sweep: GPU cases: {}", times.describe());
        run_times = Some(times);
    }
    // Every GPU case that could not run counts as skipped, never as passed.
    let mut skipped_ids = Vec::new();
    if let Some(reason) = &gpu_skip_reason {
        skipped_ids = gpu::catalogue(&plan(args, seed, true)).into_iter().map(|c| c.id).collect();
        println!("GPU checks skipped (no GPU: {reason}): {} GPU cases not run", skipped_ids.len());
    }

    let gpu_ran = machine.is_some();
    let cpu_tally = summary::tally(&cpu_results);
    let mut gpu_tally = summary::tally(&gpu_results);
    gpu_tally.skipped += skipped_ids.len() as u64;
    let tally = crate::receipts::Tally {
        passed: cpu_tally.passed + gpu_tally.passed,
        failed: cpu_tally.failed + gpu_tally.failed,
        skipped: cpu_tally.skipped + gpu_tally.skipped,
    };
    let gpu_line = if gpu_ran { String::new() } else { " (GPU checks skipped)".to_string() };
    println!(
        "sweep: {} passed, {} failed, {} skipped{gpu_line} in {:.1} s (seed {seed:#x}; GPU cases: {} passed, {} failed; \
         model checks: {} passed, {} failed)",
        tally.passed,
        tally.failed,
        tally.skipped,
        started.elapsed().as_secs_f64(),
        gpu_tally.passed,
        gpu_tally.failed,
        cpu_tally.passed,
        cpu_tally.failed,
    );
    let checked_nothing = tally.passed + tally.failed == 0;
    if checked_nothing {
        eprintln!("sweep: nothing was checked (every selected check was skipped or none was selected)");
    }

    let mut reasons = partial_reasons(args);
    if !gpu_ran {
        reasons.push(format!("no GPU: {}", gpu_skip_reason.clone().unwrap_or_default()));
    }
    let coverage = Coverage::from_reasons(reasons);
    if let Some(path) = &args.json {
        let path = receipt_path(Some(path), &receipts_dir(), "sweep.json", &coverage)?;
        let failures: Vec<String> = cpu_results
            .iter()
            .chain(&gpu_results)
            .filter_map(|r| match &r.verdict {
                Verdict::Fail(m) => Some(failure_line(&r.id, m)),
                _ => None,
            })
            .collect();
        let details = serde_json::json!({
            "seed": format!("{seed:#x}"),
            "mutant": args.mutant,
            "gpu_skipped": gpu_skip_reason,
            "sizes": sizes::sweep_sizes(&args.sizes, seed, args.quick, gpu_ran),
            "gpu_tally": gpu_tally,
            "cpu_tally": cpu_tally,
            "by_variant": summary::by_variant(&gpu_results),
            "failures": failures,
            "gpu_cases": gpu_results,
            "cpu_cases": cpu_results,
            "multigpu": multigpu_details,
            "gpu_times": run_times.map(|t: runner::RunTimes| serde_json::json!({
                "wall_s": t.wall, "compile_s": t.compile, "prepare_thread_s": t.prepare,
                "cases_thread_s": t.cases, "workers": t.workers, "second_runs": t.second_runs,
                "second_poison_byte": kernels::SECOND_POISON_BYTE,
            })),
        });
        let kind = if gpu_ran { "sweep" } else { "sweep-cpu" };
        Receipt::new(kind, machine.unwrap_or_default(), tally, details).with_coverage(&coverage).save(&path)?;
        println!("sweep: receipt ({}) written to {}", coverage_word(&coverage), path.display());
    }
    if let Some(path) = &args.junit {
        let skip_reason = format!("no GPU: {}", gpu_skip_reason.clone().unwrap_or_default());
        let mut cases: Vec<junit::TestCase> = cpu_results
            .iter()
            .map(|r| junit_case("sweep.model", r, seed))
            .chain(gpu_results.iter().map(|r| junit_case("sweep.gpu", r, seed)))
            .collect();
        cases.extend(skipped_ids.iter().map(|id| junit::TestCase {
            classname: format!("sweep.gpu.{}", id.primitive),
            name: format!("{} n={} {}", id.variant, id.size, id.family),
            seconds: 0.0,
            outcome: junit::Outcome::Skipped(skip_reason.clone()),
        }));
        junit::write(path, "sweep", &cases)?;
    }
    Ok(tally.failed == 0 && !checked_nothing)
}

fn coverage_word(coverage: &Coverage) -> String {
    match coverage {
        Coverage::Full => "full".to_string(),
        Coverage::Partial(why) => format!("partial: {why}"),
    }
}

fn junit_case(group: &str, r: &CaseResult, run_seed: u64) -> junit::TestCase {
    junit::TestCase {
        classname: format!("{group}.{}", r.id.primitive),
        name: format!("{} n={} {}", r.id.variant, r.id.size, r.id.family),
        seconds: r.millis as f64 / 1000.0,
        outcome: match &r.verdict {
            Verdict::Pass => junit::Outcome::Passed,
            Verdict::Fail(m) => {
                junit::Outcome::Failed(format!("{}\nrerun: {}", failure_line(&r.id, m), r.id.repro(run_seed)))
            }
            Verdict::Skipped { reason } => junit::Outcome::Skipped(reason.clone()),
        },
    }
}

/// The internal child that compute-sanitizer wraps: one primitive's cases at
/// the given sizes, one data family, markers on stdout. Exit 1 on a mismatch.
pub fn run_sanitize_child(args: &SanitizeChildArgs) -> Result<bool> {
    let primitive = Primitive::from_name(&args.primitive)
        .ok_or_else(|| anyhow::anyhow!("unknown primitive '{}': choose from {}", args.primitive, Primitive::names()))?;
    let gpu = kernels::Gpu::open(kernels::GpuOptions { ordinal: 0, mutant: args.mutant })?;
    // Compile before the first marker so compilation is never attributed to a case.
    for family in primitive.families() {
        gpu.module(*family)?;
    }
    let plan = SweepPlan::sanitizer(primitive, &args.sizes, args.seed, &args.variants);
    let (results, _) = runner::run_gpu_cases(&gpu, &plan, runner::RunOptions::markers())?;
    let failed = results.iter().filter(|r| matches!(r.verdict, Verdict::Fail(_))).count();
    println!("@@primlab done {} cases, {failed} failed", results.len());
    Ok(failed == 0)
}

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
