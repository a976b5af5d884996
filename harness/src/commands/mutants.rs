//! `harness mutants`: its options, handed to the planted-bug runner
//! (`crate::mutants`) as plain values, and its JUnit report, read back from
//! the receipt the run wrote.

use crate::junit::{Outcome, TestCase};
use crate::receipts::Receipt;
use anyhow::{bail, Context};
use clap::Args;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Options of `harness mutants`.
#[derive(Debug, Args)]
pub struct MutantsArgs {
    /// Only these mutant ids (repeatable).
    #[arg(long = "id")]
    pub ids: Vec<u32>,
    /// Directory for sanitizer logs of the mutants.
    #[arg(long, default_value = "target/mutant-logs")]
    pub log_dir: PathBuf,
    /// Receipt path (default: receipts/mutants.json for the whole gallery,
    /// receipts/partial/mutants.json for an --id subset).
    #[arg(long)]
    pub receipt: Option<PathBuf>,
    /// Seconds before one check (a sweep or one sanitizer tool) of one build is killed.
    #[arg(long, default_value_t = 120)]
    pub timeout_secs: u64,
    /// Checks (a build's sweep or one sanitizer tool on it) run at once.
    #[arg(long, default_value_t = 4)]
    pub jobs: usize,
    /// Seed of every build's inputs (default: derived from the verdict hash, as the receipt
    /// gate requires; any other seed makes a partial run).
    #[arg(long, value_parser = crate::grammar::parse_seed)]
    pub seed: Option<u64>,
    /// Also write a JUnit XML report here: one test case per mutant (passes when a check
    /// caught it) and per control build (passes when no check flagged it).
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// List the gallery and exit (no GPU needed).
    #[arg(long)]
    pub list: bool,
}

/// `harness mutants`.
pub fn run(args: &MutantsArgs) -> anyhow::Result<bool> {
    if let Some(path) = &args.junit {
        check_junit_path(path, args.list)?;
    }
    // Less a margin for file systems that keep modification times in whole
    // seconds (a receipt written in the run's first second must count).
    let started = SystemTime::now() - std::time::Duration::from_secs(2);
    let passed = crate::mutants::run(&crate::mutants::MutantsOptions {
        ids: args.ids.clone(),
        log_dir: args.log_dir.clone(),
        receipt: args.receipt.clone(),
        timeout_secs: args.timeout_secs,
        jobs: args.jobs,
        seed: args.seed,
        list: args.list,
    })?;
    if let Some(path) = &args.junit {
        let receipt = receipt_written_since(args.receipt.as_deref(), started)?;
        crate::junit::write(path, "mutants", &junit_cases(&Receipt::load(&receipt)?)?)?;
    }
    Ok(passed)
}

/// Refuses, before any GPU time is spent, a report the run could not write:
/// with `--list` (no run, so nothing to report) or into a missing folder.
fn check_junit_path(path: &Path, list: bool) -> anyhow::Result<()> {
    if list {
        bail!("mutants: --junit reports a run; --list runs nothing");
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        bail!("mutants: --junit {}: the folder {} does not exist", path.display(), parent.display());
    }
    Ok(())
}

/// The receipt this run wrote: `explicit`, or whichever default path
/// (`mutants.json` for the whole gallery, `partial/mutants.json` for a
/// subset) was written since `started`. Rule: a receipt older than the run
/// is an earlier run's, and reporting it would pass or fail this run by
/// another's results.
fn receipt_written_since(explicit: Option<&Path>, started: SystemTime) -> anyhow::Result<PathBuf> {
    let dir = crate::receipts::receipts_dir();
    let candidates = match explicit {
        Some(p) => vec![p.to_path_buf()],
        None => vec![dir.join("mutants.json"), dir.join(crate::receipts::output::PARTIAL_DIR).join("mutants.json")],
    };
    let fresh = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).is_ok_and(|t| t >= started);
    candidates.into_iter().find(fresh).context("mutants: --junit: this run wrote no receipt to report from")
}

/// One test case per build of `receipt` (a mutants receipt): the mutants,
/// then the control builds of the real kernels. A mutant passes when some
/// check caught it and every check reached a verdict; a control when every
/// check ran to "not caught" (the rules of the run's own tally).
pub fn junit_cases(receipt: &Receipt) -> anyhow::Result<Vec<TestCase>> {
    let details = &receipt.details;
    let seed = details.get("seed").and_then(Value::as_str).unwrap_or("?");
    let builds = |key: &str| -> anyhow::Result<Vec<Value>> {
        match details.get(key) {
            Some(Value::Array(list)) => Ok(list.clone()),
            _ => bail!("mutants: the receipt has no list of {key}: not a mutants receipt"),
        }
    };
    let mutants = builds("mutants")?.iter().map(|b| mutant_case(b, seed)).collect::<anyhow::Result<Vec<_>>>()?;
    let controls = builds("controls")?.iter().map(|b| control_case(b, seed)).collect::<anyhow::Result<Vec<_>>>()?;
    Ok(mutants.into_iter().chain(controls).collect())
}

/// One check of a build as the receipt holds it.
struct CheckRow {
    check: String,
    outcome: String,
    detail: String,
    seconds: f64,
}

impl CheckRow {
    fn line(&self) -> String {
        format!("{}: {} ({})", self.check, self.outcome.replace('_', " "), self.detail)
    }
}

/// A build's id, name, primitive, variant and checks.
fn build_of(b: &Value) -> anyhow::Result<(u64, String, String, String, Vec<CheckRow>)> {
    let text = |k: &str| b.get(k).and_then(Value::as_str).map(str::to_string);
    let (Some(id), Some(name), Some(primitive)) =
        (b.get("id").and_then(Value::as_u64), text("name"), text("primitive"))
    else {
        bail!("mutants: a build in the receipt lacks its id, name or primitive: {b}");
    };
    let checks = b.get("checks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let rows = checks
        .iter()
        .map(|c| CheckRow {
            check: c.get("check").and_then(Value::as_str).unwrap_or("?").to_string(),
            outcome: c.get("outcome").and_then(Value::as_str).unwrap_or("?").to_string(),
            detail: c.get("detail").and_then(Value::as_str).unwrap_or("").to_string(),
            seconds: c.get("seconds").and_then(Value::as_f64).unwrap_or(0.0),
        })
        .collect();
    Ok((id, name, primitive, text("variant").unwrap_or_default(), rows))
}

fn seconds(checks: &[CheckRow]) -> f64 {
    checks.iter().map(|c| c.seconds).sum()
}

fn mutant_case(b: &Value, seed: &str) -> anyhow::Result<TestCase> {
    let (id, name, primitive, _, checks) = build_of(b)?;
    let caught = checks.iter().any(|c| c.outcome == "caught");
    let undecided: Vec<String> =
        checks.iter().filter(|c| c.outcome != "caught" && c.outcome != "not_caught").map(CheckRow::line).collect();
    let rerun = format!("rerun: harness mutants --id {id} --seed {seed}");
    let outcome = match (caught, undecided.is_empty()) {
        (true, true) => Outcome::Passed,
        (true, false) => Outcome::Failed(format!("mutant {id} ({name}) caught, but {}; {rerun}", undecided.join("; "))),
        (false, _) => Outcome::Failed(format!(
            "mutant {id} ({name}) survived: no check caught it: {}; {rerun}",
            checks.iter().map(CheckRow::line).collect::<Vec<_>>().join("; ")
        )),
    };
    Ok(TestCase {
        classname: format!("mutants.{primitive}"),
        name: format!("{id} {name}"),
        seconds: seconds(&checks),
        outcome,
    })
}

fn control_case(b: &Value, seed: &str) -> anyhow::Result<TestCase> {
    let (_, _, primitive, variant, checks) = build_of(b)?;
    let variant = if variant.is_empty() { "all variants".to_string() } else { variant };
    let off: Vec<String> = checks.iter().filter(|c| c.outcome != "not_caught").map(CheckRow::line).collect();
    let outcome = if off.is_empty() && !checks.is_empty() {
        Outcome::Passed
    } else if checks.is_empty() {
        Outcome::Failed(format!("control {primitive} {variant}: no check ran; seed {seed}"))
    } else {
        Outcome::Failed(format!(
            "control (real kernels) {primitive} {variant} not clean: {}; seed {seed}",
            off.join("; ")
        ))
    };
    Ok(TestCase {
        classname: "mutants.controls".into(),
        name: format!("real kernels {primitive} {variant}"),
        seconds: seconds(&checks),
        outcome,
    })
}

#[cfg(test)]
#[path = "mutants_tests.rs"]
mod tests;
