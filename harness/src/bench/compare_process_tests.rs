//! `bench compare` judges only what it can: receipts of one process are
//! printed for information and refused a verdict (exit 2, naming `bench ab`
//! and `--processes`); receipts of several processes are judged on the
//! spread between them, so modes that hold for a whole process give no false
//! regression while a slowdown every process shows is caught, by name.

use super::*;
use crate::bench::entries::ceilings::COPY_OP;

/// One of our scans at `n` elements, `us` microseconds, its 31 calls within +-0.1 %.
fn scan(variant: &str, n: usize, us: f64) -> BenchRecord {
    let samples = (0..31).map(|i| us * (1.0 + 0.001 * (i as f64 - 15.0) / 15.0)).collect();
    BenchRecord::synthetic("primlab", "scan", "exclusive_scan_i32_i64", variant, n, us, 12 * n as u64)
        .with_samples(samples)
}

/// The copy ceiling at 2^20 and 2^28, the same in every process.
fn copies() -> Vec<BenchRecord> {
    [(1usize << 20, 10.0), (1 << 28, 1000.0)]
        .iter()
        .map(|&(n, us)| {
            BenchRecord::synthetic(IMPL_CEILING, "ceilings", COPY_OP, COPY_OP, n, us, 8 * n as u64)
                .with_samples((0..31).map(|i| us * (1.0 + 0.0005 * (i % 3) as f64)).collect())
        })
        .collect()
}

/// A receipt of `modes.len()` processes: in process `p`, the launch-bound
/// scan `small` (2^20) takes 10 us times `modes[p].0` and the large one
/// (2^28) 1000 us times `modes[p].1`; `slow` scales the large one in every
/// process (a change of code, not of mode).
fn processes(modes: &[(f64, f64)], slow: f64) -> Vec<BenchRecord> {
    let mut out = Vec::new();
    for (p, &(small, large)) in modes.iter().enumerate() {
        let mut records = copies();
        records.push(scan("small", 1 << 20, 10.0 * small));
        records.push(scan("large", 1 << 28, 1000.0 * large * slow));
        out.extend(records.into_iter().map(|r| BenchRecord { process: p, ..r }));
    }
    out
}

/// Modes of unchanged code as measured on the H200: the launch-bound record
/// up to 20 % apart between processes, the large one within 0.3 %.
const OLD_MODES: [(f64, f64); 3] = [(1.0, 1.0), (1.19, 1.002), (1.02, 0.998)];
const NEW_MODES: [(f64, f64); 3] = [(1.18, 1.001), (0.99, 0.999), (1.2, 1.003)];

fn written(name: &str, old: Vec<BenchRecord>, new: Vec<BenchRecord>) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = crate::test_dir::fresh_temp_dir(name);
    let (o, n) = (dir.join("old.json"), dir.join("new.json"));
    crate::bench::details::save_synthetic_receipt(old, &o);
    crate::bench::details::save_synthetic_receipt(new, &n);
    (o, n)
}

fn options(basis: Basis) -> Options {
    Options { threshold: 0.03, basis, all: true, csv: None, format: OutputFormat::Text }
}

const REFERENCES: Basis = Basis::References { limit: super::super::compare_references::DEFAULT_LIMIT };

#[test]
fn single_process_receipts_are_printed_for_information_and_refused_a_verdict() {
    // Process 0 of each side: the launch-bound scan sits in another mode in NEW (18 % slower), and
    // its calls are tight, so the calls alone call it a regression: the false alarm of the issue.
    let (old, new) = (processes(&OLD_MODES[..1], 1.0), processes(&NEW_MODES[..1], 1.0));
    let (mut comparisons, only_old, only_new) = compare(&old, &new, 0.03, Basis::Raw);
    assert!(comparisons.iter().any(|c| c.change == Change::Regression), "the calls alone cry wolf");
    let spread = Spread::of(&old, &new);
    assert_eq!(spread, Spread::OneProcess { old: 1, new: 1 });
    informational(&mut comparisons);
    let text = render(&comparisons, only_old, only_new, &options(Basis::Raw), spread);
    assert!(!text.contains("REGRESSION"), "{text}");
    assert!(text.contains("gate: CANNOT JUDGE: single-process receipts"), "{text}");
    assert!(text.contains("(for information)") && text.contains("primlab small"), "the deltas stay readable: {text}");
    assert_eq!(to_json(&comparisons, only_old, only_new, &options(Basis::Raw), spread)["gate"], "cannot judge");
    // The whole command: exit 2 (a CannotRun), naming the gates that can judge. A receipt
    // written before --processes (no "process" field) reads as one process.
    let (o, n) = written("compare-one-process", old, new);
    assert!(!std::fs::read_to_string(&o).unwrap().contains("\"process\""));
    for basis in [Basis::Raw, REFERENCES] {
        let e = run(&o, &n, &options(basis)).unwrap_err();
        let line = e.downcast_ref::<CannotRun>().expect("exit 2: cannot run").to_string();
        assert!(line.contains("cannot judge a regression from single-process receipts"), "{line}");
        assert!(line.contains("harness bench ab") && line.contains("--processes 3"), "{line}");
    }
    // One side of several processes is not enough: both must have them.
    let (o, n) = written("compare-one-side", processes(&OLD_MODES, 1.0), processes(&NEW_MODES[..1], 1.0));
    let line = run(&o, &n, &options(Basis::Raw)).unwrap_err().to_string();
    assert!(line.contains("OLD holds 3 process(es), NEW 1"), "{line}");
}

#[test]
fn unchanged_code_in_processes_of_different_modes_is_no_regression() {
    let (old, new) = (processes(&OLD_MODES, 1.0), processes(&NEW_MODES, 1.0));
    assert_eq!(Spread::of(&old, &new), Spread::Processes { old: 3, new: 3 });
    for basis in [Basis::Raw, REFERENCES] {
        let (comparisons, _, _) = compare_processes(&old, &new, 0.03, basis);
        let ours: Vec<&Comparison> = comparisons.iter().filter(|c| c.ours).collect();
        assert_eq!(ours.len(), 2);
        assert!(ours.iter().all(|c| c.change == Change::WithinNoise), "{basis:?}: {ours:#?}");
        let (o, n) = written("compare-processes-same", old.clone(), new.clone());
        assert!(run(&o, &n, &options(basis)).unwrap(), "exit 0 on {basis:?}");
    }
}

#[test]
fn a_five_percent_slowdown_every_process_shows_is_a_regression_of_that_record_only() {
    let (old, new) = (processes(&OLD_MODES, 1.0), processes(&NEW_MODES, 1.05));
    for basis in [Basis::Raw, REFERENCES] {
        let (comparisons, only_old, only_new) = compare_processes(&old, &new, 0.03, basis);
        let regressed: Vec<&str> =
            comparisons.iter().filter(|c| c.change == Change::Regression).map(|c| c.record.variant.as_str()).collect();
        assert_eq!(regressed, ["large"], "{basis:?}: {comparisons:#?}");
        let large = comparisons.iter().find(|c| c.record.variant == "large").unwrap();
        assert!((large.ratio - 1.05 * (1.001f64 * 0.999 * 1.003).cbrt() / (1.002f64 * 0.998).cbrt()).abs() < 1e-9);
        let text = render(&comparisons, only_old, only_new, &options(basis), Spread::of(&old, &new));
        assert!(text.contains("1 REGRESSION") && text.contains("gate: FAIL: 1 record(s)"), "{text}");
        let (o, n) = written("compare-processes-slow", old.clone(), new.clone());
        assert!(!run(&o, &n, &options(basis)).unwrap(), "exit 1 on {basis:?}");
    }
}

#[test]
fn a_record_fewer_than_two_processes_timed_is_unjudged_not_passed() {
    let old = processes(&OLD_MODES, 1.0);
    // NEW's large scan was timed by its first process only.
    let new: Vec<BenchRecord> =
        processes(&NEW_MODES, 1.0).into_iter().filter(|r| r.variant != "large" || r.process == 0).collect();
    let (comparisons, _, _) = compare_processes(&old, &new, 0.03, Basis::Raw);
    let large = comparisons.iter().find(|c| c.record.variant == "large").unwrap();
    assert_eq!((large.change, large.interval), (Change::Unjudged, None));
    let (o, n) = written("compare-processes-unjudged", old, new);
    assert!(run(&o, &n, &options(Basis::Raw)).unwrap_err().to_string().contains("could not judge 1 record(s)"));
}

#[test]
fn collapse_keeps_one_median_per_process_and_their_geometric_mean() {
    let records = processes(&OLD_MODES, 1.0);
    assert_eq!(process_count(&records), 3);
    let collapsed = collapse(&records);
    assert_eq!(collapsed.len(), 4, "two copies and two scans");
    let small = collapsed.iter().find(|r| r.variant == "small").unwrap();
    assert_eq!(small.samples_us.len(), 3);
    assert!((small.samples_us[1] - 11.9).abs() < 1e-6, "{:?}", small.samples_us);
    assert!((small.median_us.unwrap() - 10.0 * (1.19f64 * 1.02).cbrt()).abs() < 1e-9);
    // A second record of one key in one process adds no sample of its own.
    let mut doubled = records.clone();
    doubled.push(records[2].clone());
    assert_eq!(collapse(&doubled), collapsed);
}
