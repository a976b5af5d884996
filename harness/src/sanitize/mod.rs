//! `harness sanitize`: every kernel variant of every primitive under
//! compute-sanitizer's memcheck, racecheck, synccheck and initcheck at the
//! boundary sizes, a table of variant x tool, full logs kept, and a receipt.

pub mod attribute;
pub mod locate;
pub mod options;
pub mod parse;
pub mod process;
pub mod report;
pub mod run;
pub mod shard;
pub mod xml;

use crate::progress::Progress;
use crate::receipts::{receipt_path, receipts_dir, Coverage, MachineInfo, Receipt, Tally};
use crate::sweep::case::CaseId;
use crate::sweep::SweepPlan;
use anyhow::{Context, Result};
use attribute::{attribute, CaseEntry, CaseVerdict};
use options::{SanitizerOptions, PRINT_LIMIT};
use parse::Tool;
use run::{run_job, Job, JobOutcome};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

pub use crate::sweep::sizes::SANITIZE_SIZES;

/// The seed of the sanitizer child's inputs unless `--seed` says otherwise.
pub const DEFAULT_SEED: u64 = 0x5eed;

/// Options of `harness sanitize`.
#[derive(Debug, Clone)]
pub struct SanitizeOptions {
    /// Primitives to check (all when empty).
    pub primitives: Vec<String>,
    /// Tools to run (all four when empty).
    pub tools: Vec<Tool>,
    /// Sizes (SANITIZE_SIZES when empty).
    pub sizes: Vec<usize>,
    /// Seed of the inputs.
    pub seed: u64,
    /// Per-job wall-clock limit.
    pub timeout: Duration,
    /// Jobs run at once.
    pub jobs: usize,
    /// Where the logs go.
    pub log_dir: PathBuf,
    /// Receipt path (None: receipts/sanitize.json for a full run, receipts/partial/ otherwise).
    pub receipt: Option<PathBuf>,
    /// JUnit report path.
    pub junit: Option<PathBuf>,
    /// Planted-bug id to compile into the child (0 = real kernels).
    pub mutant: u32,
}

/// The plan the sanitizer child runs for one primitive: the same
/// construction as `sweep::run_sanitize_child` (quick, one data family per
/// size), so that the parent's catalogue is the child's case list.
pub fn sanitizer_plan(primitive: &str, sizes: &[usize], seed: u64, variants: &[String]) -> Result<SweepPlan> {
    let p = crate::registry::Primitive::from_name(primitive).ok_or_else(|| {
        anyhow::anyhow!("unknown primitive '{primitive}': choose from {}", crate::registry::Primitive::names())
    })?;
    Ok(SweepPlan::sanitizer(p, sizes, seed, variants))
}

/// The cases the child of `plan` runs, in its order (built on the CPU).
pub fn expected_cases(plan: &SweepPlan) -> Vec<CaseId> {
    crate::sweep::gpu::catalogue(plan).into_iter().map(|case| case.id).collect()
}

/// The arguments of `harness sanitize-child` for one primitive.
pub fn child_args(primitive: &str, sizes: &[usize], seed: u64, variants: &[String], mutant: u32) -> Vec<String> {
    let mut args = vec![
        "sanitize-child".to_string(),
        "--primitive".into(),
        primitive.into(),
        "--sizes".into(),
        sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
        "--seed".into(),
        format!("{seed:#x}"),
        "--mutant".into(),
        mutant.to_string(),
    ];
    for variant in variants {
        args.extend(["--variant".into(), variant.clone()]);
    }
    args
}

/// Reads `compute-sanitizer --help` and chooses the options of every tool.
pub fn detect_options(sanitizer: &std::path::Path) -> Result<SanitizerOptions> {
    // The text counts whatever the exit status (some releases exit nonzero after --help).
    let output = duct::cmd(sanitizer, ["--help"])
        .stderr_to_stdout()
        .stdout_capture()
        .unchecked()
        .run()
        .with_context(|| format!("running {} --help", sanitizer.display()))?;
    let help = String::from_utf8_lossy(&output.stdout);
    SanitizerOptions::detect(&help).with_context(|| format!("choosing options for {}", sanitizer.display()))
}

/// Why a run covers less than the gated receipt needs (empty: full).
fn coverage(options: &SanitizeOptions, primitives: &[String], tools: &[Tool], sizes: &[usize]) -> Coverage {
    let mut reasons = Vec::new();
    let all_primitives = crate::registry::Primitive::ALL.iter().all(|p| primitives.iter().any(|q| q == p.name()));
    if !all_primitives {
        reasons.push(format!("--primitive {}", primitives.join(",")));
    }
    if !Tool::ALL.iter().all(|t| tools.contains(t)) {
        reasons.push(format!("--tool {}", tools.iter().map(|t| t.name()).collect::<Vec<_>>().join(",")));
    }
    let mut wanted = sizes.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    if wanted != SANITIZE_SIZES {
        reasons.push(format!("--sizes {}", sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",")));
    }
    if options.mutant != 0 {
        reasons.push(format!("mutant {}", options.mutant));
    }
    Coverage::from_reasons(reasons)
}

/// Runs every job and reports. Returns whether every (case, tool) pair was clean.
pub fn run(options: &SanitizeOptions) -> Result<bool> {
    let sanitizer = locate::locate()?;
    let tool_options = detect_options(&sanitizer)?;
    let exe = std::env::current_exe().context("locating the harness executable")?;
    let gpu = kernels::Gpu::open(kernels::GpuOptions::default())
        .map_err(|e| anyhow::anyhow!("harness sanitize needs a GPU: {e}"))?;
    let machine = MachineInfo::collect(&gpu);
    drop(gpu);
    let sanitizer_version = receipts_version(&sanitizer);

    let primitives: Vec<String> = if options.primitives.is_empty() {
        crate::registry::Primitive::ALL.iter().map(|p| p.name().to_string()).collect()
    } else {
        options.primitives.clone()
    };
    let tools: Vec<Tool> = if options.tools.is_empty() { Tool::ALL.to_vec() } else { options.tools.clone() };
    let sizes: Vec<usize> = if options.sizes.is_empty() { SANITIZE_SIZES.to_vec() } else { options.sizes.clone() };
    let size_list = sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let coverage = coverage(options, &primitives, &tools, &sizes);
    // Decided before any GPU time is spent: a partial run may not overwrite the gated receipt.
    let receipt_file = receipt_path(options.receipt.as_deref(), &receipts_dir(), "sanitize.json", &coverage)?;

    let jobs = plan_jobs(&primitives, &tools, &sizes, options.seed, options.mutant)?;
    println!(
        "sanitize: {} ({}), {} jobs ({} primitives x {} tools, split by variant where a primitive is slow), sizes {size_list}, seed {:#x}, logs in {}",
        sanitizer.display(),
        sanitizer_version.as_deref().unwrap_or("version unknown"),
        jobs.len(),
        primitives.len(),
        tools.len(),
        options.seed,
        options.log_dir.display()
    );
    if !tool_options.left_out.is_empty() {
        println!(
            "sanitize: this compute-sanitizer does not list {}; run without them",
            tool_options.left_out.join(", ")
        );
    }
    let progress = Progress::new("sanitize", jobs.len() as u64);
    let results: Mutex<Vec<(usize, Result<JobOutcome>)>> = Mutex::new(Vec::new());
    let order = shard::start_order(&jobs.iter().map(|(job, shard)| (shard.work, job.tool)).collect::<Vec<_>>());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let job = &jobs[i].0;
                let outcome = run_job(&sanitizer, &tool_options, &exe, job, &options.log_dir, options.timeout);
                progress.step(&format!("{} {}", job.label, job.tool.name()));
                results.lock().unwrap_or_else(|p| p.into_inner()).push((i, outcome));
            });
        }
    });
    progress.finish();
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, _)| *i);

    let mut cases: Vec<CaseEntry> = Vec::new();
    let mut job_records = Vec::new();
    for (i, result) in results {
        let (job, shard) = &jobs[i];
        let expected = &shard.expected;
        match result {
            Ok(outcome) => {
                let report = attribute(&outcome, expected, PRINT_LIMIT);
                for problem in &report.problems {
                    println!(
                        "FAIL sanitize {} {}: {problem} (log {})",
                        job.label,
                        job.tool.name(),
                        outcome.log.display()
                    );
                }
                job_records.push(serde_json::json!({
                    "primitive": job.primitive,
                    "shard": job.label,
                    "variants": shard.variants,
                    "tool": job.tool.name(),
                    "exit_code": outcome.exit_code,
                    "timed_out": outcome.timed_out,
                    "seconds": (outcome.seconds * 10.0).round() / 10.0,
                    "problems": report.problems,
                    "error_summary": outcome.parsed.error_summary,
                    "racecheck_summary": outcome.parsed.racecheck_summary,
                    "leak_summary": outcome.parsed.leak_summary,
                    "unprinted": outcome.parsed.unprinted,
                    "text_error_blocks": report.text_blocks,
                    "xml_records": report.xml_records,
                    "markers": outcome.parsed.cases.len(),
                    "expected_cases": expected.len(),
                    "log": outcome.log.display().to_string(),
                    "xml": outcome.xml_path.display().to_string(),
                }));
                cases.extend(report.cases);
            }
            Err(e) => {
                let log = options.log_dir.join(job.log_name()).display().to_string();
                println!("FAIL sanitize {} {}: could not start: {e:#}", job.label, job.tool.name());
                job_records.push(serde_json::json!({
                    "primitive": job.primitive, "shard": job.label, "tool": job.tool.name(),
                    "problems": [format!("could not start: {e:#}")],
                }));
                cases.extend(attribute::unstarted(expected, job.tool.name(), &format!("{e:#}"), &log));
            }
        }
    }

    println!("\n{}", report::table(&cases, &tools).render());
    for line in report::finding_lines(&cases, 40) {
        println!("{line}");
    }
    let count = |v: CaseVerdict| cases.iter().filter(|c| c.verdict == v).count() as u64;
    let tally = Tally {
        passed: count(CaseVerdict::Clean),
        failed: count(CaseVerdict::Findings) + count(CaseVerdict::NotRun),
        skipped: 0,
    };
    println!(
        "sanitize: {} (case, tool) pairs clean, {} with findings, {} not run",
        tally.passed,
        count(CaseVerdict::Findings),
        count(CaseVerdict::NotRun)
    );
    if let Some(path) = &options.junit {
        crate::junit::write(path, "sanitize", &report::junit_cases(&cases))?;
        println!("sanitize: JUnit report written to {}", path.display());
    }
    let details = serde_json::json!({
        "sanitizer": sanitizer.display().to_string(),
        "sanitizer_version": sanitizer_version,
        "options": tool_options.summary(),
        "seed": format!("{:#x}", options.seed),
        "sizes": sizes,
        "tools": tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
        "primitives": primitives,
        "mutant": options.mutant,
        "cases": cases,
        "jobs": job_records,
    });
    Receipt::new("sanitize", machine, tally, details).with_coverage(&coverage).save(&receipt_file)?;
    let what = if coverage.is_full() { "receipt" } else { "partial-run receipt" };
    println!("sanitize: {what} written to {}", receipt_file.display());
    Ok(tally.failed == 0 && tally.passed > 0)
}

/// Every (shard, tool) job of a run, in the catalogue's order: each
/// primitive's cases split by variant ([`shard::shards`]), under each tool.
fn plan_jobs(
    primitives: &[String],
    tools: &[Tool],
    sizes: &[usize],
    seed: u64,
    mutant: u32,
) -> Result<Vec<(Job, shard::Shard)>> {
    let size_list = sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let mut jobs = Vec::new();
    for name in primitives {
        let primitive = crate::registry::Primitive::from_name(name).ok_or_else(|| {
            anyhow::anyhow!("unknown primitive '{name}': choose from {}", crate::registry::Primitive::names())
        })?;
        let shards = shard::shards(primitive, sizes, seed, &[])?;
        if shards.iter().all(|s| s.expected.is_empty()) {
            anyhow::bail!("{name} has no sanitizer case at sizes {size_list} (seed {seed:#x})");
        }
        for tool in tools {
            for shard in &shards {
                let job = Job {
                    tool: *tool,
                    primitive: name.clone(),
                    label: shard.label.clone(),
                    child_args: child_args(name, sizes, seed, &shard.variants, mutant),
                };
                jobs.push((job, shard.clone()));
            }
        }
    }
    Ok(jobs)
}

fn receipts_version(sanitizer: &std::path::Path) -> Option<String> {
    crate::receipts::machine_run_quiet(&sanitizer.to_string_lossy(), &["--version"])
        .and_then(|s| s.lines().find(|l| l.contains("Version")).map(|l| l.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> SanitizeOptions {
        SanitizeOptions {
            primitives: vec![],
            tools: vec![],
            sizes: vec![],
            seed: DEFAULT_SEED,
            timeout: Duration::from_secs(1),
            jobs: 1,
            log_dir: PathBuf::from("logs"),
            receipt: None,
            junit: None,
            mutant: 0,
        }
    }

    fn all() -> Vec<String> {
        crate::registry::Primitive::ALL.iter().map(|p| p.name().to_string()).collect()
    }

    #[test]
    fn only_every_primitive_tool_and_default_size_is_a_full_run() {
        let o = options();
        assert_eq!(coverage(&o, &all(), &Tool::ALL, &SANITIZE_SIZES), Coverage::Full);
        let Coverage::Partial(why) = coverage(&o, &["scan".into()], &Tool::ALL, &SANITIZE_SIZES) else { panic!() };
        assert!(why.contains("--primitive scan"), "{why}");
        assert!(!coverage(&o, &all(), &[Tool::Memcheck], &SANITIZE_SIZES).is_full());
        assert!(!coverage(&o, &all(), &Tool::ALL, &[1, 33]).is_full());
        let mutant = SanitizeOptions { mutant: 3, ..options() };
        assert!(!coverage(&mutant, &all(), &Tool::ALL, &SANITIZE_SIZES).is_full());
    }

    /// The parent's case list is the child's: same plan, same catalogue, and
    /// every default-size primitive has cases with unique markers.
    #[test]
    fn every_primitive_has_a_sanitizer_catalogue_with_unique_markers() {
        for primitive in crate::registry::Primitive::ALL.map(|p| p.name()) {
            let cases = expected_cases(&sanitizer_plan(primitive, &SANITIZE_SIZES, DEFAULT_SEED, &[]).unwrap());
            assert!(!cases.is_empty(), "{primitive}");
            let markers: std::collections::BTreeSet<String> = cases.iter().map(|c| c.marker()).collect();
            assert_eq!(markers.len(), cases.len(), "{primitive}: markers must identify cases");
            assert!(cases.iter().all(|c| c.primitive == primitive && !c.marker().contains("  ")));
        }
    }

    #[test]
    fn child_args_carry_seed_sizes_and_mutant() {
        let args = child_args("scan", &[1, 33], 0x2a, &["blelloch".into()], 5).join(" ");
        assert_eq!(args, "sanitize-child --primitive scan --sizes 1,33 --seed 0x2a --mutant 5 --variant blelloch");
    }
}
