//! `harness sweep`: the model's hardware-scope algorithms against the direct
//! definitions (CPU), then every GPU kernel variant against the model at the
//! boundary, random and large sizes, with poisoned outputs (GPU).

pub mod case;
pub mod compare;
pub mod cpu;
pub mod float_check;
pub mod gpu;
pub mod sizes;
pub mod summary;

use crate::cli::{SanitizeChildArgs, SweepArgs};
use crate::progress::Progress;
use crate::receipts::{MachineInfo, Receipt};
use anyhow::Result;
use case::{failure_line, CaseResult, Verdict};
use std::io::Write;
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
    pub primitives: Vec<String>,
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

    /// Whether `primitive` is selected.
    pub fn wants_primitive(&self, primitive: &str) -> bool {
        self.primitives.is_empty() || self.primitives.iter().any(|p| p == primitive)
    }

    /// Whether `variant` is selected.
    pub fn wants_variant(&self, variant: &str) -> bool {
        self.variants.is_empty() || self.variants.iter().any(|v| variant.contains(v.as_str()))
    }
}

fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    (nanos as u64) ^ ((std::process::id() as u64) << 32)
}

/// `harness sweep`. Returns Ok(false) if any check failed.
pub fn run(args: &SweepArgs) -> Result<bool> {
    gpu::check_primitive_names(&args.primitives)?;
    let seed = args.seed.unwrap_or_else(fresh_seed);
    println!("sweep: seed {seed:#x} (rerun with --seed {seed:#x})");
    let started = Instant::now();
    let mut results: Vec<CaseResult> = Vec::new();
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

    if !args.gpu_only {
        let plan = SweepPlan::from_args(args, seed, false);
        let cpu_results = cpu::run(&plan, !args.sizes.is_empty(), args.max_failures_shown)?;
        summary::print_table("model (CPU): hardware-scope algorithms vs direct definitions", &cpu_results);
        results.extend(cpu_results);
    }

    let mut machine = None;
    let mut gpu_skip_reason = None;
    let mut gpu_results = Vec::new();
    let mut multigpu_details = None;
    if args.cpu_only {
        gpu_skip_reason = Some("--cpu-only was given".to_string());
    } else if let Some((pre, plan)) = &multigpu {
        let run =
            crate::multigpu::sweep_cases::run(pre, plan, !args.sizes.is_empty(), args.mutant, args.max_failures_shown)?;
        machine = Some(run.machine);
        multigpu_details = Some(run.details);
        gpu_results = run.catalogue;
        gpu_results.extend(run.sharded);
    } else {
        match kernels::Gpu::open(kernels::GpuOptions { ordinal: 0, mutant: args.mutant }) {
            Err(kernels::GpuError::Unavailable { reason }) => gpu_skip_reason = Some(reason),
            Err(e) => gpu_skip_reason = Some(e.to_string()),
            Ok(gpu) => {
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
                machine = Some(MachineInfo::collect(&gpu));
                gpu_results = run_gpu_cases(&gpu, &plan, args.max_failures_shown, false)?;
                summary::print_table("GPU kernels vs the model", &gpu_results);
            }
        }
    }
    // Every GPU case that could not run counts as skipped, never as passed.
    let mut gpu_skipped = 0u64;
    if let Some(reason) = &gpu_skip_reason {
        gpu_skipped = gpu::catalogue(&SweepPlan::from_args(args, seed, true)).len() as u64;
        println!("GPU checks skipped (no GPU: {reason}): {gpu_skipped} GPU cases not run");
    }

    let gpu_ran = machine.is_some();
    results.extend(gpu_results);
    let mut tally = summary::tally(&results);
    tally.skipped += gpu_skipped;
    let gpu_line = if gpu_ran { String::new() } else { " (GPU checks skipped)".to_string() };
    println!(
        "sweep: {} passed, {} failed, {} skipped{gpu_line} in {:.1} s (seed {seed:#x})",
        tally.passed,
        tally.failed,
        tally.skipped,
        started.elapsed().as_secs_f64()
    );

    if let Some(path) = &args.json {
        let details = serde_json::json!({
            "seed": format!("{seed:#x}"),
            "mutant": args.mutant,
            "gpu_skipped": gpu_skip_reason,
            "sizes": sizes::sweep_sizes(&args.sizes, seed, args.quick, gpu_ran),
            "by_variant": summary::by_variant(&results),
            "failures": results.iter().filter_map(|r| match &r.verdict {
                Verdict::Fail(m) => Some(failure_line(&r.id, m)),
                _ => None,
            }).collect::<Vec<_>>(),
            "cases": results,
            "multigpu": multigpu_details,
        });
        let kind = if gpu_ran { "sweep" } else { "sweep-cpu" };
        Receipt::new(kind, machine.unwrap_or_default(), tally, details).save(path)?;
        println!("sweep: report written to {}", path.display());
    }
    Ok(tally.failed == 0)
}

/// Runs the GPU catalogue of `plan` one case at a time. With `markers`, each
/// case is announced on stdout (for compute-sanitizer attribution) and each
/// failure printed as `@@primlab fail <line>`.
pub fn run_gpu_cases(gpu: &kernels::Gpu, plan: &SweepPlan, max_shown: usize, markers: bool) -> Result<Vec<CaseResult>> {
    let cases = gpu::catalogue(plan);
    let progress = if markers { None } else { Some(Progress::new("gpu sweep", cases.len() as u64)) };
    let mut results = Vec::with_capacity(cases.len());
    let mut shown = 0;
    let stdout = std::io::stdout();
    for case in cases {
        if markers {
            let mut out = stdout.lock();
            let _ = writeln!(out, "{} {}", crate::sanitize::parse::CASE_MARKER, case.id.marker());
            let _ = out.flush();
        }
        let started = Instant::now();
        let verdict = (case.run)(gpu);
        let millis = started.elapsed().as_millis() as u64;
        if let Verdict::Fail(m) = &verdict {
            let line = failure_line(&case.id, m);
            if markers {
                let mut out = stdout.lock();
                let _ = writeln!(out, "@@primlab fail {line}");
                let _ = out.flush();
            } else if shown < max_shown {
                shown += 1;
                if let Some(p) = &progress {
                    p.println(&format!("FAIL {line}\n     rerun: {}", case.id.repro()));
                }
            }
        }
        if let Some(p) = &progress {
            p.step(&case.id.marker());
        }
        results.push(CaseResult { id: case.id, verdict, millis });
    }
    if let Some(p) = progress {
        p.finish();
    }
    Ok(results)
}

/// The internal child that compute-sanitizer wraps: one primitive's cases at
/// the given sizes, one data family, markers on stdout. Exit 1 on a mismatch.
pub fn run_sanitize_child(args: &SanitizeChildArgs) -> Result<bool> {
    gpu::check_primitive_names(std::slice::from_ref(&args.primitive))?;
    let gpu = kernels::Gpu::open(kernels::GpuOptions { ordinal: 0, mutant: args.mutant })?;
    // Compile before the first marker so compilation is never attributed to a case.
    for family in gpu::families_of(&args.primitive) {
        gpu.module(family)?;
    }
    let plan = SweepPlan {
        seed: args.seed,
        sizes: args.sizes.clone(),
        quick: true,
        primitives: vec![args.primitive.clone()],
        variants: args.variants.clone(),
        one_family: true,
    };
    let results = run_gpu_cases(&gpu, &plan, 0, true)?;
    let failed = results.iter().filter(|r| matches!(r.verdict, Verdict::Fail(_))).count();
    println!("@@primlab done {} cases, {failed} failed", results.len());
    Ok(failed == 0)
}
