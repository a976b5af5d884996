//! `harness sweep`: the model's hardware-scope algorithms against the direct
//! definitions (CPU), then every GPU kernel variant against the model at the
//! boundary, random and large sizes, with poisoned outputs (GPU).

pub mod case;
pub mod compare;
pub mod cpu;
pub mod digest;
pub mod float_check;
pub mod gpu;
pub mod raw;
pub mod runner;
pub mod sizes;
pub mod summary;

use crate::cli::{SanitizeChildArgs, SweepArgs};
use crate::junit;
use crate::receipts::{receipt_path, receipts_dir, Coverage, MachineInfo, Receipt};
use crate::registry::Primitive;
use anyhow::{bail, Result};
use case::{failure_line, CaseResult, Verdict};
use std::collections::BTreeSet;
use std::time::Instant;

/// What a sweep covers.
#[derive(Debug, Clone)]
pub struct SweepPlan {
    /// Seed of every input.
    pub seed: u64,
    /// Sizes to visit.
    pub sizes: Vec<usize>,
    /// Fewer and smaller cases.
    pub quick: bool,
    /// Primitive filter (empty = all).
    pub primitives: Vec<Primitive>,
    /// Variant substring filter (empty = all).
    pub variants: Vec<String>,
    /// Only the first data family per size (sanitizer runs).
    pub one_family: bool,
}

impl SweepPlan {
    /// The plan of `harness sweep` with these arguments: the CPU half
    /// (`gpu == false`) leaves out the GPU-only large sizes.
    pub fn from_args(args: &SweepArgs, seed: u64, gpu: bool) -> SweepPlan {
        SweepPlan {
            seed,
            sizes: sizes::sweep_sizes(&args.sizes, seed, args.quick, gpu),
            quick: args.quick,
            primitives: args.primitives.clone(),
            variants: args.variants.clone(),
            one_family: false,
        }
    }

    /// The whole GPU catalogue for `seed`: what a full sweep runs and what
    /// the receipt gate requires a receipt to hold.
    pub fn full(seed: u64) -> SweepPlan {
        SweepPlan {
            seed,
            sizes: sizes::sweep_sizes(&[], seed, false, true),
            quick: false,
            primitives: vec![],
            variants: vec![],
            one_family: false,
        }
    }

    /// Every case of `primitive` at exactly `sizes`, every data family (the
    /// catalogue `harness check` and `harness cases` hand to user kernels).
    pub fn of_primitive(primitive: Primitive, sizes: &[usize], seed: u64) -> SweepPlan {
        SweepPlan {
            seed,
            sizes: sizes.to_vec(),
            quick: false,
            primitives: vec![primitive],
            variants: vec![],
            one_family: false,
        }
    }

    /// The cases a sanitizer job of `primitive` runs: the given sizes, one
    /// data family each (the sanitizers check memory and ordering, which do
    /// not depend on the values).
    pub fn sanitizer(primitive: Primitive, sizes: &[usize], seed: u64, variants: &[String]) -> SweepPlan {
        SweepPlan {
            seed,
            sizes: sizes.to_vec(),
            quick: true,
            primitives: vec![primitive],
            variants: variants.to_vec(),
            one_family: true,
        }
    }

    /// Whether `primitive` is selected.
    pub fn wants(&self, primitive: Primitive) -> bool {
        self.primitives.is_empty() || self.primitives.contains(&primitive)
    }

    /// Whether the primitive named `primitive` is selected.
    pub fn wants_primitive(&self, primitive: &str) -> bool {
        Primitive::from_name(primitive).is_some_and(|p| self.wants(p))
    }

    /// Whether `variant` is selected.
    pub fn wants_variant(&self, variant: &str) -> bool {
        self.variants.is_empty() || self.variants.iter().any(|v| variant.contains(v.as_str()))
    }
}

/// A seed drawn from the clock and the process id.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    (nanos as u64) ^ ((std::process::id() as u64) << 32)
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

/// Bytes of device memory one element may need at most, over every
/// primitive (an int32 input, int64 output and int64 scratch of a scan, a
/// compaction's input, flags and output).
pub const DEVICE_BYTES_PER_ELEMENT: usize = 24;

/// Rejects sizes no sweep can use: zero, and (with a GPU) sizes whose
/// buffers cannot fit its memory.
pub fn check_sizes(sizes: &[usize], device_memory: Option<usize>) -> Result<()> {
    if sizes.contains(&0) {
        bail!("--sizes: 0 is not a size: every size must be at least 1 (empty inputs are contract cases of their own)");
    }
    if let Some(memory) = device_memory {
        if let Some(&n) = sizes.iter().find(|&&n| n.saturating_mul(DEVICE_BYTES_PER_ELEMENT) > memory) {
            bail!(
                "--sizes: n = {n} needs up to {} GB of device memory ({DEVICE_BYTES_PER_ELEMENT} bytes per element), \
                 more than the GPU's {:.1} GB",
                n.saturating_mul(DEVICE_BYTES_PER_ELEMENT) as f64 / 1e9,
                memory as f64 / 1e9
            );
        }
    }
    Ok(())
}

/// Fails when `--variant` filters match no case, listing the valid names.
fn check_variant_filters(args: &SweepArgs, seed: u64) -> Result<()> {
    if args.variants.is_empty() {
        return Ok(());
    }
    let mut unfiltered = SweepPlan::from_args(args, seed, true);
    unfiltered.variants.clear();
    let mut names: BTreeSet<String> = gpu::catalogue(&unfiltered).into_iter().map(|c| c.id.variant).collect();
    if !args.gpu_only {
        let mut cpu_plan = SweepPlan::from_args(args, seed, false);
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

/// `harness sweep`. Returns Ok(false) if any check failed, if nothing was
/// checked, or if `--require-gpu`/`--gpu-only` was given and the GPU checks
/// could not run.
pub fn run(args: &SweepArgs) -> Result<bool> {
    check_sizes(&args.sizes, None)?;
    let seed = args.seed.unwrap_or_else(|| crate::verdict_hash::sweep_seed(args));
    check_variant_filters(args, seed)?;
    println!("sweep: seed {seed:#x} (rerun with --seed {seed:#x})");
    let started = Instant::now();
    if args.list {
        let plan = SweepPlan::from_args(args, seed, true);
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
            let plan = SweepPlan::from_args(args, seed, true);
            let pre = crate::multigpu::sweep_cases::preflight(gpus, &plan)?;
            Some((pre, plan))
        }
        None => None,
    };

    // Open the GPU first, so that sizes it cannot hold are refused before any work.
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
            Ok(gpu) => {
                check_sizes(&args.sizes, Some(gpu.info().total_memory))?;
                Some(gpu)
            }
        }
    };
    if let (Some(reason), true) = (&gpu_skip_reason, args.require_gpu || args.gpu_only) {
        let flag = if args.require_gpu { "--require-gpu" } else { "--gpu-only" };
        eprintln!("sweep: {flag} was given but the GPU checks cannot run (no GPU: {reason}); nothing was checked");
        return Ok(false);
    }

    let mut cpu_results = Vec::new();
    if !args.gpu_only {
        let plan = SweepPlan::from_args(args, seed, false);
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
        let plan = SweepPlan::from_args(args, seed, true);
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
        skipped_ids = gpu::catalogue(&SweepPlan::from_args(args, seed, true)).into_iter().map(|c| c.id).collect();
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
                "cases_thread_s": t.cases, "workers": t.workers,
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
#[path = "run_tests.rs"]
mod tests;
