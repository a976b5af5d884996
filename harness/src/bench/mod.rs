//! `harness bench`: times every primitive and variant beside the bandwidth
//! ceilings and the CUB and PyTorch baselines, in one run, and writes a
//! receipt (`receipts/bench.json`), a Markdown report and PNG plots.
//!
//! Order of a run: open the GPU; start building `cub_bench` with nvcc in the
//! background (CPU only); compile primlab's kernels; run primlab's entries
//! and the ceilings (each checked before it is timed); then, with the GPU to
//! themselves, `cub_bench` and `torch_bench.py`; evaluate the targets and the
//! crossover study; save the receipt; write the report.

pub mod ab;
pub mod baselines;
pub mod clocks;
pub mod compare;
pub mod compare_references;
pub mod config;
pub mod crossover;
pub mod details;
pub mod digests;
pub mod entries;
pub mod export;
pub mod inputs;
pub mod ncu;
pub mod ops;
pub mod output;
pub mod plot;
pub mod plot_draw;
pub mod plot_model;
pub mod pool;
pub mod processes;
pub mod record;
pub mod report;
pub mod report_peers;
pub mod report_targets;
pub mod rotation;
pub mod runner;
pub mod sampling;
pub mod select;
pub mod stats;
pub mod targets;
pub mod timing;

use crate::progress::Progress;
use crate::receipts::{receipt_path, receipts_dir, MachineInfo, Receipt, Tally};
use crate::table::Table;
use anyhow::{anyhow, Result};
use baselines::BaselineRun;
use config::BenchConfig;
pub use config::BenchOptions;
use details::{BenchDetails, NotWired, DETAILS_SCHEMA, TIMING_TEXT};
use kernels::{Gpu, GpuOptions, KernelFamily};
use record::{IMPL_CEILING, IMPL_CUB, IMPL_PRIMLAB, IMPL_TORCH};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A line for a person: on stdout, or on stderr when stdout carries the
/// `--format json` document.
macro_rules! say {
    ($json:expr, $($arg:tt)*) => {
        if $json {
            eprintln!($($arg)*)
        } else {
            println!($($arg)*)
        }
    };
}

/// The kernel families the selected primitives need (compiled before timing).
fn families(config: &BenchConfig) -> Vec<(&'static str, KernelFamily)> {
    let mut out = vec![(entries::CEILINGS, KernelFamily::Ceilings)];
    for primitive in crate::registry::Primitive::ALL {
        let crossover = primitive == crate::registry::Primitive::FloatReduce && config.crossover;
        if config.wants(primitive.name()) || crossover {
            out.extend(primitive.families().iter().map(|f| (primitive.name(), *f)));
        }
    }
    out
}

/// What a finished run leaves for the layers above: whether every entry
/// passed its check, the saved receipt, and the folder its report goes to
/// (settled before the GPU work; the report itself is the report layer's).
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// No primlab entry or ceiling failed its check or errored.
    pub passed: bool,
    /// The receipt written.
    pub receipt: PathBuf,
    /// Where the report goes.
    pub report_dir: PathBuf,
    /// Whether stdout carries a document (`--format json`/`csv`): messages go to stderr.
    pub document_on_stdout: bool,
}

/// `harness bench`: times, checks and saves the receipt; the report is
/// written by the caller from [`RunOutcome`].
pub fn run(args: &BenchOptions) -> Result<RunOutcome> {
    let config = BenchConfig::from_args(args);
    let json = args.format.is_document();
    // A selection that matches nothing is refused before the GPU is opened
    // (registering entries touches no device).
    entries::register_all(&config).select(&config.selection)?;
    // Where it writes is settled before the GPU work: a refused path costs nothing.
    let coverage = output::coverage(args);
    let receipt_file = receipt_path(args.receipt.as_deref(), &receipts_dir(), output::RECEIPT_FILE, &coverage)?;
    let report_dir = output::report_dir(args.report.as_deref(), &receipts_dir(), &coverage)?;
    if let crate::receipts::Coverage::Partial(why) = &coverage {
        say!(json, "bench: a partial run ({why}): receipt {}, report {}", receipt_file.display(), report_dir.display());
    }
    let started = Instant::now();
    let gpu = Gpu::open(GpuOptions::default()).map_err(|e| anyhow!("harness bench needs a GPU: {e}"))?;
    let info = gpu.info().clone();
    say!(
        json,
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
    let pending_cub =
        config.baselines.then(|| baselines::cub_build::start(&baselines::cub_source(&args.baselines), &arch));
    let build_deadline = started
        + Duration::from_secs(if config.quick { baselines::QUICK_BUILD_WAIT_S } else { baselines::FULL_BUILD_WAIT_S });

    let compile_started = Instant::now();
    let mut not_wired = Vec::new();
    for (primitive, family) in families(&config) {
        if let Err(e) = gpu.module(family) {
            // Its entries fail one by one with this error in their records.
            eprintln!("bench: compiling {} failed: {e}", family.file());
            not_wired.push(NotWired {
                primitive: primitive.to_string(),
                reason: format!("{} did not compile: {e}", family.file()),
            });
        }
    }
    let compile_seconds = compile_started.elapsed().as_secs_f64();

    let registry = entries::register_all(&config).select(&config.selection)?;
    let clock_monitor = clocks::ClockMonitor::start(nvidia_smi_index());
    let baseline_steps = if config.baselines { 2 } else { 0 };
    let progress = Progress::new("bench", (registry.entries.len() + baseline_steps) as u64);
    let entries_run = runner::run_entries(&gpu, registry, config.protocol, &progress)?;
    let machine = MachineInfo::collect(&gpu);
    let mut state = RunState {
        config: &config,
        started,
        compile_seconds,
        not_wired,
        records: entries_run.records,
        skipped: entries_run.skipped,
        aborted: entries_run.aborted,
        baselines: Vec::new(),
        clocks: clocks::ClockLog::default(),
    };

    // A checkpoint: if the run is killed during the baselines, primlab's numbers survive.
    // It is a receipt of an unfinished run, so it never takes the receipt's own path (a full
    // run's receipt there must not be replaced by an unfinished one); it goes beside it and
    // is removed once the receipt is saved.
    let checkpoint = output::checkpoint_path(&receipt_file);
    if config.baselines {
        state.baselines = vec![
            BaselineRun::absent(IMPL_CUB, "not run yet (checkpoint written before the baselines)"),
            BaselineRun::absent(IMPL_TORCH, "not run yet (checkpoint written before the baselines)"),
        ];
        let (details, tally) = state.details();
        let unfinished = crate::receipts::Coverage::Partial("checkpoint before the baselines".into());
        Receipt::new("bench", machine.clone(), tally, serde_json::to_value(&details)?)
            .with_coverage(&unfinished)
            .save(&checkpoint)?;
        say!(json, "bench: checkpoint {} (removed once the receipt is saved)", checkpoint.display());
        state.baselines.clear();
    }

    match pending_cub {
        Some(pending) => {
            progress.println("bench: CUB baseline (waiting for nvcc if still building)");
            let (cub, cub_records) =
                baselines::run_cub(pending, build_deadline, &config, &baselines::cub_build::work_dir());
            progress.step(&format!("cub: {} ({} records)", cub.status, cub.records));
            state.records.extend(cub_records);
            state.baselines.push(cub);
            progress.println("bench: PyTorch baseline");
            let (torch, torch_records) =
                baselines::run_torch(&args.baselines, &config, &baselines::cub_build::work_dir());
            progress.step(&format!("torch: {} ({} records)", torch.status, torch.records));
            state.records.extend(torch_records);
            state.baselines.push(torch);
        }
        None => {
            state.baselines.push(BaselineRun::absent(IMPL_CUB, "skipped by --no-baselines"));
            state.baselines.push(BaselineRun::absent(IMPL_TORCH, "skipped by --no-baselines"));
        }
    }
    progress.finish();
    state.clocks = clock_monitor.finish();

    let (details, tally) = state.details();
    print_targets(&details, json);
    Receipt::new("bench", machine, tally, serde_json::to_value(&details)?)
        .with_coverage(&coverage)
        .save(&receipt_file)?;
    if config.baselines {
        // Only the checkpoint this run wrote above.
        let _ = std::fs::remove_file(&checkpoint);
    }
    say!(
        json,
        "bench: {} ok, {} failed, {} not run in {:.0} s; receipt {}",
        tally.passed,
        tally.failed,
        tally.skipped,
        details.wall_seconds,
        receipt_file.display()
    );
    if let Some(path) = &args.csv {
        match export::write_text(path, &export::records_csv(&details.records)) {
            Ok(()) => say!(json, "bench: CSV of {} records: {}", details.records.len(), path.display()),
            Err(e) => eprintln!("bench: the CSV could not be written ({e:#}); the receipt is saved"),
        }
    }
    if args.format == export::OutputFormat::Csv {
        print!("{}", export::records_csv(&details.records));
    } else if json {
        let document = export::run_json(&receipt_file, &tally, &details.records);
        println!("{}", serde_json::to_string_pretty(&document)?);
    }
    Ok(RunOutcome {
        passed: tally.failed == 0,
        receipt: receipt_file,
        report_dir,
        document_on_stdout: json || args.format == export::OutputFormat::Csv,
    })
}

/// nvidia-smi's index of the GPU the run opens: CUDA device 0, which is the
/// first entry of `CUDA_VISIBLE_DEVICES` when that names indices, else 0
/// (nvidia-smi numbers GPUs as CUDA does with the default PCI bus order).
fn nvidia_smi_index() -> u32 {
    std::env::var("CUDA_VISIBLE_DEVICES")
        .ok()
        .and_then(|v| v.split(',').next().and_then(|first| first.trim().parse().ok()))
        .unwrap_or(0)
}

/// What a run has gathered so far.
struct RunState<'c> {
    config: &'c BenchConfig,
    started: Instant,
    compile_seconds: f64,
    not_wired: Vec<NotWired>,
    records: Vec<record::BenchRecord>,
    skipped: Vec<record::SkippedEntry>,
    aborted: Option<String>,
    baselines: Vec<BaselineRun>,
    clocks: clocks::ClockLog,
}

impl RunState<'_> {
    /// The receipt's details and tally: targets and the crossover study
    /// evaluated on the records gathered so far.
    fn details(&self) -> (BenchDetails, Tally) {
        let config = self.config;
        let absent = |who: &str| {
            self.baselines
                .iter()
                .find(|b| b.implementation == who)
                .and_then(|b| b.reason.clone().map(|r| format!("{}: {r}", b.status)))
        };
        let targets = targets::evaluate_all(&self.records, &absent);
        let crossover = if config.crossover { crossover::analyse(&self.records) } else { None };
        let crossover_absent = if !config.crossover {
            Some(
                "not requested (it is part of a full run; add --crossover to a --quick or --primitive run)".to_string(),
            )
        } else if crossover.is_none() {
            Some("no checked float_reduce_sum_f32 record of the three variants (see the failures above)".to_string())
        } else {
            None
        };
        let ours = |r: &&record::BenchRecord| r.implementation == IMPL_PRIMLAB || r.implementation == IMPL_CEILING;
        let tally = Tally {
            passed: self.records.iter().filter(ours).filter(|r| r.ok).count() as u64,
            failed: self.records.iter().filter(ours).filter(|r| !r.ok).count() as u64,
            skipped: self.skipped.len() as u64,
        };
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
            records: self.records.clone(),
            skipped: self.skipped.clone(),
            not_wired: self.not_wired.clone(),
            baselines: self.baselines.clone(),
            targets,
            crossover,
            crossover_absent,
            aborted: self.aborted.clone(),
            compile_seconds: self.compile_seconds,
            wall_seconds: self.started.elapsed().as_secs_f64(),
            clocks: self.clocks.clone(),
        };
        (details, tally)
    }
}

/// The targets table on the terminal.
fn print_targets(details: &BenchDetails, json: bool) {
    let mut t = Table::new(["target", "requirement", "primlab", "ratio", "verdict"]);
    for r in &details.targets {
        t.row([
            r.label.clone(),
            r.requirement.clone(),
            r.ours.as_ref().map(|o| o.name()).unwrap_or_else(|| "-".into()),
            r.ratio.map(|x| format!("{x:.2}x")).unwrap_or_else(|| "-".into()),
            r.verdict.clone(),
        ]);
    }
    say!(json, "\n{}", t.render());
}
