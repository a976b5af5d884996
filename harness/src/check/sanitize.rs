//! `check --sanitize`: the check re-run as a child under each of
//! compute-sanitizer's four tools at the sanitizer sizes (one data family
//! each), through the same job runner and finding attribution as
//! `harness sanitize`; logs and XML go to `<out>/sanitize/`.

use super::manifest::Manifest;
use crate::sanitize::attribute::{attribute, CaseVerdict};
use crate::sanitize::options::PRINT_LIMIT;
use crate::sanitize::parse::Tool;
use crate::sanitize::run::{run_job, Job};
use crate::sanitize::{detect_options, locate, SANITIZE_SIZES};
use crate::sweep::raw;
use crate::sweep::SweepPlan;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;

/// Each tool's wall-clock limit.
pub const TIMEOUT: Duration = Duration::from_secs(900);

/// The sanitizer verdicts.
#[derive(Debug, Clone)]
pub struct Sanitized {
    /// Every tool ran every case and found nothing.
    pub clean: bool,
    /// One line per tool.
    pub lines: Vec<String>,
    /// For the receipt.
    pub json: serde_json::Value,
}

/// Runs the four tools on the check of `manifest` with `seed`, logs under `out/sanitize`.
pub fn run(manifest: &Manifest, seed: u64, out: &Path) -> Result<Sanitized> {
    let sanitizer = locate::locate()?;
    let options = detect_options(&sanitizer)?;
    let exe = std::env::current_exe().context("locating the harness executable")?;
    let manifest_path = std::fs::canonicalize(&manifest.path).unwrap_or_else(|_| manifest.path.clone());
    let plan = SweepPlan::sanitizer(manifest.primitive, &SANITIZE_SIZES, seed, &[]);
    let expected: Vec<_> = raw::catalogue(&plan, manifest.primitive, manifest.contract, &manifest.name)
        .into_iter()
        .map(|s| s.id)
        .collect();
    let mut clean = true;
    let mut lines = Vec::new();
    let mut tools = Vec::new();
    for tool in Tool::ALL {
        let job = Job {
            tool,
            primitive: manifest.primitive.name().into(),
            label: format!("check-{}", manifest.name),
            child_args: vec![
                "check".into(),
                "--manifest".into(),
                manifest_path.display().to_string(),
                "--seed".into(),
                format!("{seed:#x}"),
                "--sanitize-child".into(),
            ],
        };
        let outcome = run_job(&sanitizer, &options, &exe, &job, &out.join("sanitize"), TIMEOUT)?;
        let report = attribute(&outcome, &expected, PRINT_LIMIT);
        let dirty: Vec<_> = report.cases.iter().filter(|c| c.verdict != CaseVerdict::Clean).collect();
        let tool_clean = report.problems.is_empty() && dirty.is_empty() && !report.cases.is_empty();
        clean &= tool_clean;
        let line = if tool_clean {
            format!("{}: clean on {} cases", tool.name(), report.cases.len())
        } else {
            let first = dirty
                .first()
                .map(|c| {
                    let finding = c.findings.first().map(|f| f.line()).unwrap_or_else(|| format!("{:?}", c.verdict));
                    format!("{} {} n={}: {finding}", c.primitive, c.variant, c.size)
                })
                .or_else(|| report.problems.first().cloned())
                .unwrap_or_else(|| "no case ran".into());
            format!(
                "{}: FAIL ({} of {} cases; first: {first}); log {}",
                tool.name(),
                dirty.len(),
                report.cases.len(),
                outcome.log.display()
            )
        };
        println!("check --sanitize: {line}");
        lines.push(line);
        tools.push(serde_json::json!({
            "tool": tool.name(),
            "clean": tool_clean,
            "problems": report.problems,
            "cases": report.cases,
            "log": outcome.log.display().to_string(),
        }));
    }
    let json =
        serde_json::json!({"sizes": SANITIZE_SIZES, "seed": format!("{seed:#x}"), "clean": clean, "tools": tools});
    Ok(Sanitized { clean, lines, json })
}
