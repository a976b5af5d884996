//! `harness bench compare OLD NEW`: every record timed in both receipts,
//! matched by implementation, primitive, op, variant, size or shape, dtype
//! and timing mode, as the ratio NEW median / OLD median with a bootstrap
//! 95 % interval, and "faster", "slower" or "within noise".
//!
//! The two receipts come from two processes, and between processes identical
//! work moves too (on the H200, 15-29 % at 2^16-2^20), which the bootstrap
//! of calls within each process does not see. So the verdict is taken on the
//! interval widened by the run drift: how far the harness's device-to-device
//! copy ceiling, the same driver copy in both runs, moved between OLD and
//! NEW at the copy size nearest the record's (`targets::copy_margin`). A
//! change is faster or slower only when that widened interval lies wholly on
//! one side of 1. Receipts without copy records are judged on the bootstrap
//! interval alone, and say so. Records without samples are judged by the
//! ratio alone and say that their noise is unknown.

use super::details::BenchDetails;
use super::record::IMPL_CEILING;
use super::record::{BenchRecord, BenchSize, TimingMode};
use super::stats::{ratio_interval, side, Interval, Side};
use super::targets::{copy_margin, ProgramMargin};
use crate::receipts::Receipt;
use crate::report::table::Table;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// What matches a record across receipts.
type Key = (String, String, String, String, BenchSize, String, TimingMode);

fn key(r: &BenchRecord) -> Key {
    (
        r.implementation.clone(),
        r.primitive.clone(),
        r.op.clone(),
        r.variant.clone(),
        r.size(),
        r.dtype.clone(),
        r.timing_mode,
    )
}

/// How NEW compares with OLD for one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// NEW is faster (the whole interval below 1).
    Faster,
    /// NEW is slower (the whole interval above 1).
    Slower,
    /// The interval holds 1.
    WithinNoise,
}

impl Change {
    /// The word the table prints.
    pub fn word(self) -> &'static str {
        match self {
            Change::Faster => "faster",
            Change::Slower => "slower",
            Change::WithinNoise => "within noise",
        }
    }
}

/// One matched record.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The record's label and size, e.g. `primlab single_pass reduce_sum_i32_i64 2^20`.
    pub label: String,
    /// OLD median, microseconds.
    pub old_us: f64,
    /// NEW median, microseconds.
    pub new_us: f64,
    /// NEW / OLD.
    pub ratio: f64,
    /// Its 95 % interval (None: noise unknown).
    pub interval: Option<Interval>,
    /// The run drift at this record's size (None: a receipt has no copy
    /// record to measure it by).
    pub drift: Option<ProgramMargin>,
    /// The interval the verdict is taken on: `interval` widened by `drift`.
    pub judged: Option<Interval>,
    /// The verdict.
    pub change: Change,
}

/// Every record timed in both `old` and `new`, in NEW's order, and the
/// number of timed records only in OLD and only in NEW.
pub fn compare(old: &[BenchRecord], new: &[BenchRecord]) -> (Vec<Comparison>, usize, usize) {
    let timed = |r: &&BenchRecord| r.timed_median().is_some();
    let mut out = Vec::new();
    for n in new.iter().filter(timed) {
        let Some(o) = old.iter().filter(timed).find(|o| key(o) == key(n)) else { continue };
        let (old_us, new_us) = (o.timed_median().unwrap_or(f64::NAN), n.timed_median().unwrap_or(f64::NAN));
        let ratio = new_us / old_us;
        let interval = ratio_interval(&n.samples_us, &o.samples_us);
        let drift = copy_margin((old, IMPL_CEILING), (new, IMPL_CEILING), n.size());
        let judged = match (interval, drift) {
            (Some(i), Some(d)) => Some(d.widen(i)),
            (i, _) => i,
        };
        // `side` puts a bound equal to 1 above it; a change needs the whole interval (or,
        // noise unknown, the ratio) strictly past 1.
        let change = match side(ratio, judged, 1.0) {
            (Side::Below, _) => Change::Faster,
            (Side::Above, _) if judged.map_or(ratio > 1.0, |i| i.low > 1.0) => Change::Slower,
            _ => Change::WithinNoise,
        };
        out.push(Comparison {
            label: format!("{} {} {}", n.label(), n.op, n.size().label()),
            old_us,
            new_us,
            ratio,
            interval,
            drift,
            judged,
            change,
        });
    }
    let only = |a: &[BenchRecord], b: &[BenchRecord]| {
        a.iter().filter(timed).filter(|x| !b.iter().filter(timed).any(|y| key(x) == key(y))).count()
    };
    (out, only(old, new), only(new, old))
}

/// The table and summary `harness bench compare` prints.
pub fn render(comparisons: &[Comparison], only_old: usize, only_new: usize) -> String {
    let mut t = Table::new(["record", "old", "new", "new / old", "95 % CI", "judged on (run drift)", "verdict"]);
    for c in comparisons {
        let range = |i: Interval| format!("{:.3}-{:.3}", i.low, i.high);
        let interval = c.interval.map(range).unwrap_or_else(|| "unknown".into());
        let judged = match (c.judged, c.drift) {
            (Some(j), Some(d)) => {
                format!("{} ({})", range(j), d.describe())
            }
            (Some(j), None) => format!("{} (drift unknown)", range(j)),
            (None, _) => "-".into(),
        };
        let word = if c.interval.is_some() {
            c.change.word().to_string()
        } else {
            format!("{} (noise unknown)", c.change.word())
        };
        t.row([
            c.label.clone(),
            format!("{:.2} us", c.old_us),
            format!("{:.2} us", c.new_us),
            format!("{:.3}", c.ratio),
            interval,
            judged,
            word,
        ]);
    }
    let count = |change| comparisons.iter().filter(|c| c.change == change).count();
    let logs: Vec<f64> = comparisons.iter().map(|c| c.ratio.ln()).filter(|l| l.is_finite()).collect();
    let geomean = if logs.is_empty() { f64::NAN } else { (logs.iter().sum::<f64>() / logs.len() as f64).exp() };
    let drift_note = if comparisons.iter().any(|c| c.drift.is_some()) {
        "A verdict is taken on the 95 % interval widened by the run drift: how far the harness's copy ceiling (the same \
         device copy in both runs) moved between OLD and NEW at the nearest size."
    } else {
        "The two receipts share no copy ceiling record, so no run drift was measured: the verdicts see only the \
         spread of calls within each process."
    };
    format!(
        "{}\n{} records in both: {} faster, {} slower, {} within noise; geometric mean new / old {:.3}. \
         {only_old} timed only in OLD, {only_new} only in NEW.\n{drift_note}\n",
        t.render(),
        comparisons.len(),
        count(Change::Faster),
        count(Change::Slower),
        count(Change::WithinNoise),
        geomean
    )
}

fn records_of(path: &Path) -> Result<Vec<BenchRecord>> {
    let receipt = Receipt::load(path)?;
    if receipt.kind != "bench" {
        bail!("{} is a '{}' receipt, not a bench receipt", path.display(), receipt.kind);
    }
    let details: BenchDetails = serde_json::from_value(receipt.details)
        .with_context(|| format!("reading the bench details of {}", path.display()))?;
    Ok(details.records)
}

/// `harness bench compare OLD NEW`: prints the comparison. Errors when a
/// receipt cannot be read or the two share no timed record.
pub fn run(old: &Path, new: &Path) -> Result<bool> {
    let (old_records, new_records) = (records_of(old)?, records_of(new)?);
    let (comparisons, only_old, only_new) = compare(&old_records, &new_records);
    if comparisons.is_empty() {
        bail!(
            "{} and {} share no timed record (matched by impl, primitive, op, variant, size, dtype, timing mode)",
            old.display(),
            new.display()
        );
    }
    print!("{}", render(&comparisons, only_old, only_new));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::details::{DETAILS_SCHEMA, TIMING_TEXT};
    use crate::bench::entries::ceilings::COPY_OP;
    use crate::receipts::{MachineInfo, Tally};

    fn rec(variant: &str, n: usize, centre: f64, spread: f64) -> BenchRecord {
        let samples = (0..31).map(|i| centre - spread + 2.0 * spread * i as f64 / 30.0).collect();
        BenchRecord::synthetic("primlab", "scan", "exclusive_scan_i32_i64", variant, n, centre, 12 * n as u64)
            .with_samples(samples)
    }

    fn receipt(records: Vec<BenchRecord>, path: &Path) {
        let details = BenchDetails {
            schema: DETAILS_SCHEMA,
            quick: true,
            sizes_log2: vec![20],
            row_shapes: vec![],
            segment_lens: vec![],
            protocol: crate::bench::config::Protocol::new(true),
            timing: TIMING_TEXT.into(),
            inputs: vec![],
            records,
            skipped: vec![],
            not_wired: vec![],
            baselines: vec![],
            targets: vec![],
            crossover: None,
            crossover_absent: None,
            aborted: None,
            compile_seconds: 0.0,
            wall_seconds: 0.0,
            clocks: Default::default(),
        };
        Receipt::new("bench", MachineInfo::default(), Tally::default(), serde_json::to_value(&details).unwrap())
            .save(path)
            .unwrap();
    }

    #[test]
    fn two_receipts_compare_record_by_record() {
        let dir = std::env::temp_dir().join(format!("primlab-bench-compare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (old, new) = (dir.join("old.json"), dir.join("new.json"));
        // (variant, n, old median, new median, spread): None where a receipt lacks the record.
        type Row = (&'static str, usize, Option<f64>, Option<f64>, f64);
        let table: [Row; 5] = [
            ("a", 1 << 20, Some(10.0), Some(8.0), 0.1),
            ("b", 1 << 20, Some(10.0), Some(12.0), 0.1),
            ("c", 1 << 20, Some(10.0), Some(10.2), 2.0),
            ("gone", 1 << 20, Some(10.0), None, 0.1),
            ("a", 1 << 24, None, Some(8.0), 0.1),
        ];
        // The records of one receipt: `median` picks its column of the table.
        let side = |median: fn(&Row) -> Option<f64>| -> Vec<BenchRecord> {
            table.iter().filter_map(|row| median(row).map(|us| rec(row.0, row.1, us, row.4))).collect()
        };
        let mut unsampled = BenchRecord::synthetic("cub", "scan", "exclusive_scan_i32_i64", "cub", 1 << 20, 10.0, 1);
        let mut old_records = side(|row| row.2);
        old_records.push(unsampled.clone());
        receipt(old_records, &old);
        unsampled.median_us = Some(12.0);
        let mut new_records = side(|row| row.3);
        new_records.push(unsampled);
        receipt(new_records, &new);
        let (comparisons, only_old, only_new) = compare(&records_of(&old).unwrap(), &records_of(&new).unwrap());
        let changes: Vec<Change> = comparisons.iter().map(|c| c.change).collect();
        assert_eq!(changes, [Change::Faster, Change::Slower, Change::WithinNoise, Change::Slower]);
        assert!((comparisons[0].ratio - 0.8).abs() < 1e-9);
        assert!(comparisons[0].interval.unwrap().high < 1.0);
        assert_eq!(comparisons[3].interval, None);
        assert_eq!((only_old, only_new), (1, 1));
        assert!(comparisons.iter().all(|c| c.drift.is_none() && c.judged == c.interval));
        let text = render(&comparisons, only_old, only_new);
        assert!(text.contains("4 records in both: 1 faster, 2 slower, 1 within noise"), "{text}");
        assert!(text.contains("no run drift was measured"), "{text}");
        assert!(text.contains("slower (noise unknown)"), "{text}");
        assert!(run(&old, &new).unwrap());
        // A receipt of another kind is refused.
        Receipt::new("sweep", MachineInfo::default(), Tally::default(), serde_json::json!({})).save(&old).unwrap();
        assert!(run(&old, &new).unwrap_err().to_string().contains("not a bench receipt"));
    }

    /// The harness's copy ceiling of the same size in OLD and NEW.
    fn copy(n: usize, centre: f64) -> BenchRecord {
        let samples = (0..31).map(|i| centre * (1.0 + 0.001 * (i as f64 - 15.0) / 15.0)).collect();
        BenchRecord::synthetic(IMPL_CEILING, "ceilings", COPY_OP, COPY_OP, n, centre, 8 * n as u64)
            .with_samples(samples)
    }

    // (old median, new median, verdict): the copy moved 10 % between the
    // runs at 2^20 and not at all at 2^28, and every record's own spread is
    // tiny, so the bootstrap alone would call each of these a change.
    const DRIFT_CASES: [(usize, f64, f64, Change); 4] = [
        (1 << 20, 10.0, 10.5, Change::WithinNoise),
        (1 << 20, 10.0, 13.0, Change::Slower),
        (1 << 20, 10.0, 8.0, Change::Faster),
        (1 << 28, 10.0, 10.5, Change::Slower),
    ];

    #[test]
    fn verdicts_count_the_drift_of_the_copy_between_the_runs() {
        let variants = ["d0", "d1", "d2", "d3"];
        let mut old = vec![copy(1 << 20, 10.0), copy(1 << 28, 1000.0)];
        let mut new = vec![copy(1 << 20, 11.0), copy(1 << 28, 1000.0)];
        for (variant, &(n, before, after, _)) in variants.iter().zip(DRIFT_CASES.iter()) {
            old.push(rec(variant, n, before, 0.001));
            new.push(rec(variant, n, after, 0.001));
        }
        let (comparisons, _, _) = compare(&old, &new);
        let scan: Vec<&Comparison> = comparisons.iter().filter(|c| c.label.contains("exclusive_scan")).collect();
        assert_eq!(scan.len(), DRIFT_CASES.len());
        for (c, &(n, _, _, expected)) in scan.iter().zip(DRIFT_CASES.iter()) {
            assert_eq!(c.change, expected, "{c:?}");
            let drift = c.drift.expect("both receipts time the copy");
            assert_eq!(drift.copy_elements, n, "the drift is read at the record's own size");
            let (bootstrap, judged) = (c.interval.unwrap(), c.judged.unwrap());
            assert!(judged.low <= bootstrap.low && judged.high >= bootstrap.high);
        }
        // The 10 % drift at 2^20 is what turned a bootstrap "slower" into "within noise".
        assert!(scan[0].interval.unwrap().low > 1.0);
        assert!((scan[0].drift.unwrap().percent() - 10.0).abs() < 1e-6);
        let text = render(&comparisons, 0, 0);
        assert!(text.contains("(10.0 % at 2^20)"), "{text}");
        assert!(text.contains("widened by the run drift"), "{text}");
    }
}
