//! `harness bench`: times every primitive and variant beside the bandwidth
//! ceilings and the CUB and PyTorch baselines, in one run, and writes a
//! receipt (`receipts/bench.json`), a Markdown report and PNG plots.
//!
//! Order of a run: open the GPU; start building `cub_bench` with nvcc in the
//! background (CPU only); compile primlab's kernels; run primlab's entries
//! and the ceilings (each checked before it is timed); then, with the GPU to
//! themselves, `cub_bench` and `torch_bench.py`; evaluate the targets and the
//! crossover study; save the receipt; write the report.

pub mod baselines;
pub mod config;
pub mod crossover;
pub mod details;
pub mod entries;
pub mod inputs;
pub mod ncu;
pub mod ops;
pub mod plot;
pub mod pool;
pub mod record;
pub mod report;
pub mod rotation;
pub mod runner;
pub mod targets;
pub mod timing;

use crate::cli::BenchArgs;
use crate::progress::Progress;
use crate::receipts::{MachineInfo, Receipt, Tally};
use crate::report::table::Table;
use anyhow::{anyhow, Result};
use baselines::BaselineRun;
use config::BenchConfig;
use details::{BenchDetails, NotWired, DETAILS_SCHEMA, TIMING_TEXT};
use kernels::{Family, Gpu, GpuOptions};
use record::{IMPL_CEILING, IMPL_CUB, IMPL_PRIMLAB, IMPL_TORCH};
use std::time::{Duration, Instant};

/// The kernel families the selected primitives need (compiled before timing).
fn families(config: &BenchConfig) -> Vec<Family> {
    let mut out = vec![Family::Ceilings];
    for (primitive, family) in [
        ("reduce", Family::Reduce),
        ("scan", Family::Scan),
        ("compact", Family::Compact),
        ("segmented_reduce", Family::SegmentedReduce),
        ("histogram", Family::Histogram),
    ] {
        if config.wants(primitive) {
            out.push(family);
        }
    }
    out
}

/// `harness bench`. Ok(false) when a primlab entry or ceiling failed its check or errored.
pub fn run(args: &BenchArgs) -> Result<bool> {
    entries::check_primitive_names(&args.primitives)?;
    let config = BenchConfig::from_args(args);
    let started = Instant::now();
    let gpu = Gpu::open(GpuOptions::default()).map_err(|e| anyhow!("harness bench needs a GPU: {e}"))?;
    let info = gpu.info().clone();
    println!(
        "bench: {} (sm_{}{}, {} SMs, L2 {} MiB), {} run, n = 2^{{{}}}",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.sm_count,
        info.l2_bytes >> 20,
        if config.quick { "quick" } else { "full" },
        config.sizes_log2.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
    );

    // CUB's build is CPU work: it overlaps with primlab's entries.
    let arch = format!("{}{}", info.compute_capability.0, info.compute_capability.1);
    let pending_cub = config.baselines.then(|| baselines::cub_build::start(&baselines::cub_source(&args.baselines), &arch));
    let build_deadline = started
        + Duration::from_secs(if config.quick { baselines::QUICK_BUILD_WAIT_S } else { baselines::FULL_BUILD_WAIT_S });

    let compile_started = Instant::now();
    for family in families(&config) {
        if let Err(e) = gpu.module(family) {
            // Its entries fail one by one with this error in their records.
            eprintln!("bench: compiling {} failed: {e}", family.file());
        }
    }
    let compile_seconds = compile_started.elapsed().as_secs_f64();

    let registry = entries::register_all(&config);
    let baseline_steps = if config.baselines { 2 } else { 0 };
    let progress = Progress::new("bench", (registry.entries.len() + baseline_steps) as u64);
    let entries_run = runner::run_entries(&gpu, registry, config.protocol, &progress)?;
    let mut records = entries_run.records;

    let mut baseline_runs: Vec<BaselineRun> = Vec::new();
    match pending_cub {
        Some(pending) => {
            progress.println("bench: CUB baseline (waiting for nvcc if still building)");
            let (cub, cub_records) = baselines::run_cub(pending, build_deadline, &config);
            progress.step(&format!("cub: {} ({} records)", cub.status, cub.records));
            records.extend(cub_records);
            baseline_runs.push(cub);
            progress.println("bench: PyTorch baseline");
            let (torch, torch_records) = baselines::run_torch(&args.baselines, &config);
            progress.step(&format!("torch: {} ({} records)", torch.status, torch.records));
            records.extend(torch_records);
            baseline_runs.push(torch);
        }
        None => {
            baseline_runs.push(BaselineRun::absent(IMPL_CUB, "skipped by --no-baselines"));
            baseline_runs.push(BaselineRun::absent(IMPL_TORCH, "skipped by --no-baselines"));
        }
    }
    progress.finish();

    let absent = |who: &str| {
        baseline_runs.iter().find(|b| b.implementation == who).and_then(|b| b.reason.clone().map(|r| format!("{}: {r}", b.status)))
    };
    let targets = targets::evaluate_all(&records, &absent);
    let not_wired: Vec<NotWired> = entries::NOT_YET_WIRED
        .iter()
        .filter(|(p, _)| config.wants(p))
        .map(|(p, reason)| NotWired { primitive: p.to_string(), reason: reason.to_string() })
        .collect();
    let crossover = if config.crossover { crossover::analyse(&records) } else { None };
    let crossover_absent = if !config.crossover {
        Some("not requested (it is part of a full run; add --crossover to a --quick or --primitive run)".to_string())
    } else if crossover.is_none() {
        Some("no float_reduce records: the float_reduce kernels are not wired into this build".to_string())
    } else {
        None
    };

    let ours = |r: &&record::BenchRecord| r.implementation == IMPL_PRIMLAB || r.implementation == IMPL_CEILING;
    let failed = records.iter().filter(ours).filter(|r| !r.ok).count() as u64;
    let passed = records.iter().filter(ours).filter(|r| r.ok).count() as u64;
    let tally = Tally { passed, failed, skipped: entries_run.skipped.len() as u64 };
    let details = BenchDetails {
        schema: DETAILS_SCHEMA,
        quick: config.quick,
        sizes_log2: config.sizes_log2.clone(),
        row_shapes: config.row_shapes.iter().map(|&(r, c)| [r, c]).collect(),
        segment_lens: config.segment_lens.clone(),
        protocol: config.protocol,
        timing: TIMING_TEXT.to_string(),
        inputs: vec![
            ("int32".into(), inputs::INPUT_I32_TEXT.into()),
            ("float32".into(), inputs::INPUT_F32_TEXT.into()),
            ("logits".into(), inputs::INPUT_LOGITS_TEXT.into()),
        ],
        records,
        skipped: entries_run.skipped,
        not_wired,
        baselines: baseline_runs,
        targets,
        crossover,
        crossover_absent,
        aborted: entries_run.aborted,
        compile_seconds,
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    print_targets(&details);
    let receipt = Receipt::new("bench", MachineInfo::collect(&gpu), tally, serde_json::to_value(&details)?);
    receipt.save(&args.receipt)?;
    println!(
        "bench: {passed} ok, {failed} failed, {} not run in {:.0} s; receipt {}",
        tally.skipped,
        details.wall_seconds,
        args.receipt.display()
    );
    match report::write_report(&args.receipt, &args.report) {
        Ok(files) => println!("bench: report {} and {} plot(s)", files.markdown.display(), files.plots.len()),
        Err(e) => eprintln!("bench: the report could not be written ({e:#}); rerun `harness report`"),
    }
    Ok(failed == 0)
}

/// The targets table on the terminal.
fn print_targets(details: &BenchDetails) {
    let mut t = Table::new(["target", "requirement", "ratio", "verdict"]);
    for r in &details.targets {
        t.row([
            r.label.clone(),
            r.requirement.clone(),
            r.ratio.map(|x| format!("{x:.2}x")).unwrap_or_else(|| "-".into()),
            r.verdict.clone(),
        ]);
    }
    println!("\n{}", t.render());
}
