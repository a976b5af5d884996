//! `harness sanitize`: every kernel variant of every primitive under
//! compute-sanitizer's memcheck, racecheck, synccheck and initcheck at the
//! boundary sizes, a table of variant x tool, full logs kept, and a receipt.

pub mod locate;
pub mod parse;
pub mod run;

use crate::progress::Progress;
use crate::receipts::{receipts_dir, MachineInfo, Receipt, Tally};
use crate::report::table::Table;
use anyhow::{Context, Result};
use parse::Tool;
use run::{run_job, Job, JobOutcome};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// Sizes every variant runs at under each tool (DESIGN.md's boundaries).
pub const SANITIZE_SIZES: [usize; 7] = [1, 31, 33, 257, 513, 4099, 262_145];

/// Options of `harness sanitize`.
#[derive(Debug, Clone)]
pub struct SanitizeOptions {
    /// Primitives to check (all when empty).
    pub primitives: Vec<String>,
    /// Tools to run (all four when empty).
    pub tools: Vec<Tool>,
    /// Sizes (SANITIZE_SIZES when empty).
    pub sizes: Vec<usize>,
    /// Per-job wall-clock limit.
    pub timeout: Duration,
    /// Jobs run at once.
    pub jobs: usize,
    /// Where the logs go.
    pub log_dir: PathBuf,
    /// Receipt path (None: receipts/sanitize.json). Only full runs write the gated receipt.
    pub receipt: Option<PathBuf>,
    /// Planted-bug id to compile into the child (0 = real kernels).
    pub mutant: u32,
}

/// Runs every job and reports. Returns whether everything was clean.
pub fn run(options: &SanitizeOptions) -> Result<bool> {
    let sanitizer = locate::locate()?;
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

    let mut jobs = Vec::new();
    for tool in &tools {
        for primitive in &primitives {
            jobs.push(Job {
                tool: *tool,
                primitive: primitive.clone(),
                child_args: vec![
                    "sanitize-child".into(),
                    "--primitive".into(),
                    primitive.clone(),
                    "--sizes".into(),
                    size_list.clone(),
                    "--mutant".into(),
                    options.mutant.to_string(),
                ],
            });
        }
    }
    println!(
        "sanitize: {} ({}), {} jobs ({} primitives x {} tools), sizes {size_list}, logs in {}",
        sanitizer.display(),
        sanitizer_version.as_deref().unwrap_or("version unknown"),
        jobs.len(),
        primitives.len(),
        tools.len(),
        options.log_dir.display()
    );
    let progress = Progress::new("sanitize", jobs.len() as u64);
    let outcomes: Mutex<Vec<JobOutcome>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let next = Mutex::new(jobs.iter());
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1) {
            scope.spawn(|| loop {
                let job = {
                    let mut iter = next.lock().unwrap_or_else(|p| p.into_inner());
                    iter.next()
                };
                let Some(job) = job else { break };
                match run_job(&sanitizer, &exe, job, &options.log_dir, options.timeout) {
                    Ok(outcome) => {
                        let label = format!("{} {}", job.primitive, job.tool.name());
                        if let Some(problem) = outcome.problem() {
                            progress
                                .println(&format!("FAIL sanitize {label}: {problem} (log {})", outcome.log.display()));
                        }
                        progress.step(&label);
                        outcomes.lock().unwrap_or_else(|p| p.into_inner()).push(outcome);
                    }
                    Err(e) => {
                        progress.println(&format!("FAIL sanitize {} {}: {e:#}", job.primitive, job.tool.name()));
                        progress.step(&job.primitive);
                        errors.lock().unwrap_or_else(|p| p.into_inner()).push(format!("{e:#}"));
                    }
                }
            });
        }
    });
    progress.finish();
    let mut outcomes = outcomes.into_inner().unwrap_or_else(|p| p.into_inner());
    outcomes.sort_by(|a, b| (&a.primitive, a.tool).cmp(&(&b.primitive, b.tool)));
    let errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());

    let (table, tally, cells) = summarize(&outcomes, &tools);
    println!("\n{}", table.render());
    for outcome in outcomes.iter().filter(|o| !o.is_clean()) {
        for finding in outcome.parsed.findings.iter().take(5) {
            println!(
                "  {} {} [{}]: {}",
                outcome.primitive,
                outcome.tool.name(),
                finding.case.as_deref().unwrap_or("before any case"),
                finding.headline
            );
        }
        for failure in outcome.parsed.child_failures.iter().take(5) {
            println!("  {} {} model mismatch: {failure}", outcome.primitive, outcome.tool.name());
        }
    }
    let mut tally = tally;
    tally.failed += errors.len() as u64;
    println!(
        "sanitize: {} (case, tool) pairs clean, {} failed; {} job(s) could not start",
        tally.passed,
        tally.failed,
        errors.len()
    );

    let full_run =
        options.primitives.is_empty() && options.tools.is_empty() && options.sizes.is_empty() && options.mutant == 0;
    let receipt_path = match (&options.receipt, full_run) {
        (Some(path), _) => Some(path.clone()),
        (None, true) => Some(receipts_dir().join("sanitize.json")),
        (None, false) => None,
    };
    if let Some(path) = receipt_path {
        let details = serde_json::json!({
            "sanitizer": sanitizer.display().to_string(),
            "sanitizer_version": sanitizer_version,
            "sizes": sizes,
            "tools": tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            "primitives": primitives,
            "cells": cells,
            "jobs": outcomes.iter().map(|o| serde_json::json!({
                "primitive": o.primitive,
                "tool": o.tool.name(),
                "exit_code": o.exit_code,
                "timed_out": o.timed_out,
                "seconds": (o.seconds * 10.0).round() / 10.0,
                "error_summary": o.parsed.error_summary,
                "racecheck_summary": o.parsed.racecheck_summary,
                "errors": o.parsed.error_count(),
                "warnings": o.parsed.warning_count(),
                "cases": o.parsed.cases.len(),
                "findings": o.parsed.findings,
                "model_mismatches": o.parsed.child_failures,
                "log": o.log.file_name().map(|n| n.to_string_lossy().into_owned()),
            })).collect::<Vec<_>>(),
            "job_errors": errors,
        });
        let receipt = Receipt::new("sanitize", machine, tally, details);
        receipt.save(&path)?;
        println!("sanitize: receipt written to {}", path.display());
    }
    Ok(tally.failed == 0)
}

/// Sizes that ran clean and sizes that failed, of one variant under one tool.
type SizeOutcomes = (Vec<String>, Vec<String>);

/// Per variant x tool cells, the tally over (case, tool) pairs, and a JSON
/// list of every cell for the receipt.
fn summarize(outcomes: &[JobOutcome], tools: &[Tool]) -> (Table, Tally, Vec<serde_json::Value>) {
    // (primitive variant) -> tool -> (clean sizes, failing sizes)
    let mut grid: BTreeMap<String, BTreeMap<Tool, SizeOutcomes>> = BTreeMap::new();
    let mut tally = Tally::default();
    let mut cells = Vec::new();
    for outcome in outcomes {
        let job_broken = outcome.timed_out || !outcome.parsed.has_summary();
        if outcome.parsed.cases.is_empty() {
            tally.failed += 1;
            grid.entry(format!("{} (no case ran)", outcome.primitive))
                .or_default()
                .entry(outcome.tool)
                .or_default()
                .1
                .push("-".into());
            continue;
        }
        for case in &outcome.parsed.cases {
            let mut parts = case.rsplitn(2, ' ');
            let size = parts.next().unwrap_or("?").to_string();
            let variant = parts.next().unwrap_or(case).to_string();
            let findings = outcome.parsed.findings_for(case).filter(|f| f.severity == parse::Severity::Error).count();
            let mismatches =
                outcome.parsed.child_failures.iter().filter(|f| f.starts_with(&variant_key(&variant, &size))).count();
            let clean = findings == 0 && mismatches == 0 && !job_broken && outcome.exit_code == Some(0);
            let entry = grid.entry(variant.clone()).or_default().entry(outcome.tool).or_default();
            if clean {
                tally.passed += 1;
                entry.0.push(size.clone());
            } else {
                tally.failed += 1;
                entry.1.push(size.clone());
            }
            cells.push(serde_json::json!({
                "case": case, "tool": outcome.tool.name(), "clean": clean,
                "errors": findings, "model_mismatches": mismatches,
            }));
        }
    }
    let mut table =
        Table::new(std::iter::once("primitive variant".to_string()).chain(tools.iter().map(|t| t.name().to_string())));
    for (variant, by_tool) in &grid {
        let mut row = vec![variant.clone()];
        for tool in tools {
            row.push(match by_tool.get(tool) {
                None => "not run".into(),
                Some((clean, failing)) if failing.is_empty() => format!("clean x{}", clean.len()),
                Some((_, failing)) => format!("FAIL at {}", failing.join(",")),
            });
        }
        table.row(row);
    }
    (table, tally, cells)
}

/// The prefix of a child's failure line for one case (see sweep::case).
fn variant_key(variant: &str, size: &str) -> String {
    let mut parts = variant.splitn(2, ' ');
    let primitive = parts.next().unwrap_or_default();
    let rest = parts.next().unwrap_or_default();
    format!("{primitive}/{rest} n={size}")
}

fn receipts_version(sanitizer: &std::path::Path) -> Option<String> {
    crate::receipts::machine_run_quiet(&sanitizer.to_string_lossy(), &["--version"])
        .and_then(|s| s.lines().find(|l| l.contains("Version")).map(|l| l.trim().to_string()))
}
