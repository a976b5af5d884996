//! `harness bench --processes K`: the selection timed by K whole processes,
//! one after another, and one receipt holding every process's records, each
//! tagged with the process that timed it ([`BenchRecord::process`], from 0).
//!
//! Rule relied on: a record's time can sit in a mode that holds for its
//! whole process (receipts/speed-gate/2026-12-03 on the H200), so only the
//! spread between processes shows how far it moves unchanged; `bench
//! compare` judges two receipts only on that spread
//! ([`super::compare::Spread`]). Each process is this same binary run again
//! with the same options (less `--processes`, `--receipt` and `--out`), in
//! sequence, nothing else of ours running beside it; its receipt, report and
//! the merged receipt's inputs stay in a folder of this run's own beside the
//! merged receipt.

use super::details::BenchDetails;
use super::record::BenchRecord;
use crate::receipts::{receipt_path, receipts_dir, Coverage, Receipt, Tally};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Options the parent sets for each process, with the value each takes.
const PARENT_OPTIONS: [&str; 4] = ["--processes", "--receipt", "--out", "--report"];

/// Options `--processes` does not combine with: they write or print one
/// process's document, which a run of several does not have.
const REFUSED: [&str; 3] = ["--csv", "--format", "--gpus"];

/// The arguments after `harness` for one process: `args` (the parent's, from
/// `bench` on) without the options the parent sets ([`PARENT_OPTIONS`],
/// written `--opt value` or `--opt=value`); an error for an option that a
/// run of several processes refuses ([`REFUSED`]) or one missing its value.
pub fn child_args(args: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(args.len());
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let name = arg.split('=').next().unwrap_or("");
        if let Some(refused) = REFUSED.iter().find(|r| **r == name) {
            bail!("bench --processes: {refused} is not taken with --processes (each process writes its own receipt)");
        }
        if PARENT_OPTIONS.contains(&name) {
            if !arg.contains('=') && rest.next().is_none() {
                bail!("bench --processes: {name} needs a value");
            }
            continue;
        }
        out.push(arg.clone());
    }
    Ok(out)
}

/// One receipt of the processes' receipts, in process order: every record
/// tagged with its process, the skipped entries and unwired primitives of
/// all (each once), the tallies and seconds summed, the first abort kept;
/// the rest (sizes, protocol, machine) is the first process's. An error when
/// there is none or one is not a bench receipt.
pub fn merge(receipts: &[Receipt]) -> Result<(BenchDetails, Tally)> {
    let Some(first) = receipts.first() else { bail!("bench --processes: no process wrote a receipt") };
    let mut merged: BenchDetails = details_of(first)?;
    merged.records.clear();
    merged.skipped.clear();
    merged.not_wired.clear();
    merged.compile_seconds = 0.0;
    merged.wall_seconds = 0.0;
    let mut tally = Tally::default();
    for (process, receipt) in receipts.iter().enumerate() {
        let details = details_of(receipt)?;
        merged.records.extend(details.records.into_iter().map(|r| BenchRecord { process, ..r }));
        for s in details.skipped {
            if !merged.skipped.contains(&s) {
                merged.skipped.push(s);
            }
        }
        for w in details.not_wired {
            if !merged.not_wired.contains(&w) {
                merged.not_wired.push(w);
            }
        }
        merged.compile_seconds += details.compile_seconds;
        merged.wall_seconds += details.wall_seconds;
        merged.aborted = merged.aborted.take().or(details.aborted);
        tally.passed += receipt.tally.passed;
        tally.failed += receipt.tally.failed;
        tally.skipped += receipt.tally.skipped;
    }
    Ok((merged, tally))
}

fn details_of(receipt: &Receipt) -> Result<BenchDetails> {
    if receipt.kind != "bench" {
        bail!("bench --processes: a process wrote a '{}' receipt, not a bench receipt", receipt.kind);
    }
    serde_json::from_value(receipt.details.clone()).context("bench --processes: reading a process's bench details")
}

/// The coverage of the merged receipt: always partial (several processes'
/// records of one key never stand for one full run), naming the processes
/// and what the first process's receipt said.
pub fn coverage(processes: usize, first: &Receipt) -> Coverage {
    let of_one = first.coverage.strip_prefix("partial: ").unwrap_or(&first.coverage).to_string();
    Coverage::Partial(format!("--processes {processes} ({of_one})"))
}

/// A new folder for the processes' receipts and reports, beside `receipt`
/// (`<stem>-processes-UNIXSECONDS`, a suffix added while that exists).
fn processes_dir(receipt: &Path) -> PathBuf {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs();
    let stem = receipt.file_stem().map_or("bench".into(), |s| s.to_string_lossy().to_string());
    let parent = receipt.parent().unwrap_or(Path::new("."));
    let mut dir = parent.join(format!("{stem}-processes-{now}"));
    let mut k = 1;
    while dir.exists() {
        k += 1;
        dir = parent.join(format!("{stem}-processes-{now}-{k}"));
    }
    dir
}

/// Runs process `k` (from 0) of the run: this binary with `args` and a
/// receipt and report in `dir`. Ok(true) when it exited 0; an error when it
/// could not start or wrote no receipt.
fn one_process(binary: &Path, args: &[String], dir: &Path, k: usize, of: usize) -> Result<(bool, Receipt)> {
    let receipt = dir.join(format!("process{}.json", k + 1));
    eprintln!("bench --processes: process {}/{of}", k + 1);
    let status = Command::new(binary)
        .args(args)
        .arg("--receipt")
        .arg(&receipt)
        .arg("--out")
        .arg(dir.join(format!("process{}-report", k + 1)))
        .status()
        .with_context(|| format!("starting {}", binary.display()))?;
    if !receipt.is_file() {
        bail!("bench --processes: process {} of {of} exited {status} without writing {}", k + 1, receipt.display());
    }
    Ok((status.success(), Receipt::load(&receipt)?))
}

/// `harness bench --processes K` with `args` (the command line after
/// `harness`, from `bench` on) and `explicit` (its `--receipt`, if any):
/// runs the K processes, writes the merged receipt. Ok(false) when a
/// process's entry failed its check (exit 1); an error when a process could
/// not run.
pub fn run(processes: usize, args: &[String], explicit: Option<&Path>) -> Result<bool> {
    if processes < 2 {
        bail!("bench --processes {processes}: at least 2 (one process is a plain `harness bench`)");
    }
    let child = child_args(args)?;
    let binary = std::env::current_exe().context("bench --processes: finding this binary to run again")?;
    // The merged receipt's coverage is partial whatever the selection, so its
    // default path is the partial one; the processes' folder goes beside it.
    let partial = Coverage::Partial(format!("--processes {processes}"));
    let receipt_file = receipt_path(explicit, &receipts_dir(), super::output::RECEIPT_FILE, &partial)?;
    let dir = processes_dir(&receipt_file);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let (mut passed, mut receipts) = (true, Vec::with_capacity(processes));
    for k in 0..processes {
        let (ok, receipt) = one_process(&binary, &child, &dir, k, processes)?;
        passed &= ok;
        receipts.push(receipt);
    }
    let (details, tally) = merge(&receipts)?;
    let machine = receipts[0].machine.clone();
    Receipt::new("bench", machine, tally, serde_json::to_value(&details)?)
        .with_coverage(&coverage(processes, &receipts[0]))
        .save(&receipt_file)?;
    println!(
        "bench --processes: {} records from {processes} processes in {}; each process's receipt and report in {}",
        details.records.len(),
        receipt_file.display(),
        dir.display()
    );
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::IMPL_PRIMLAB;
    use crate::receipts::MachineInfo;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn each_process_gets_the_options_less_those_the_parent_sets() {
        let args = strings(&[
            "bench",
            "--processes",
            "3",
            "--quick",
            "--receipt=r.json",
            "--primitive",
            "scan",
            "--out",
            "dir",
            "--report",
            "old",
        ]);
        assert_eq!(child_args(&args).unwrap(), strings(&["bench", "--quick", "--primitive", "scan"]));
        assert!(child_args(&strings(&["bench", "--processes=3", "--csv", "x.csv"]))
            .unwrap_err()
            .to_string()
            .contains("--csv"));
        assert!(child_args(&strings(&["bench", "--format=json"])).is_err());
        assert!(child_args(&strings(&["bench", "--receipt"])).unwrap_err().to_string().contains("needs a value"));
    }

    fn receipt_of(records: Vec<BenchRecord>, coverage: &str) -> Receipt {
        let path = crate::test_dir::fresh_temp_dir("bench-processes-merge").join("r.json");
        crate::bench::details::save_synthetic_receipt(records, &path);
        let mut r = Receipt::load(&path).unwrap();
        r.coverage = coverage.into();
        r.tally = Tally { passed: 2, failed: 0, skipped: 1 };
        r
    }

    #[test]
    fn the_merged_receipt_holds_every_process_s_records_tagged_by_process() {
        let record = |us| BenchRecord::synthetic(IMPL_PRIMLAB, "scan", "exclusive_scan_i32_i64", "x", 1 << 20, us, 12);
        let receipts: Vec<Receipt> = [10.0, 11.0, 12.0]
            .iter()
            .map(|&us| receipt_of(vec![record(us), record(us * 2.0)], "partial: --quick"))
            .collect();
        let (details, tally) = merge(&receipts).unwrap();
        assert_eq!(details.records.len(), 6);
        let processes: Vec<usize> = details.records.iter().map(|r| r.process).collect();
        assert_eq!(processes, [0, 0, 1, 1, 2, 2]);
        assert_eq!(details.records[2].median_us, Some(11.0));
        assert_eq!(tally, Tally { passed: 6, failed: 0, skipped: 3 });
        assert_eq!(super::super::compare::process_count(&details.records), 3);
        assert_eq!(coverage(3, &receipts[0]), Coverage::Partial("--processes 3 (--quick)".into()));
        assert!(merge(&[]).is_err());
        let mut sweep = receipts[0].clone();
        sweep.kind = "sweep".into();
        assert!(merge(&[sweep]).unwrap_err().to_string().contains("not a bench receipt"));
        // Saved and read back, the records keep their processes.
        let path = crate::test_dir::fresh_temp_dir("bench-processes-saved").join("merged.json");
        Receipt::new("bench", MachineInfo::default(), tally, serde_json::to_value(&details).unwrap())
            .save(&path)
            .unwrap();
        let back = super::super::compare::records_of(&path).unwrap();
        assert_eq!(back.iter().map(|r| r.process).collect::<Vec<_>>(), processes);
    }

    #[test]
    fn fewer_than_two_processes_are_refused_before_anything_runs() {
        let e = run(1, &strings(&["bench", "--processes", "1"]), None).unwrap_err().to_string();
        assert!(e.contains("at least 2"), "{e}");
    }
}
