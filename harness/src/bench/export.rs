//! Machine-readable output of the bench tools: CSV files (one row per
//! record) and the `--format json` summary on stdout, plus the parsers of
//! the options that ask for them (`--format`, percentages).

use super::record::BenchRecord;
use anyhow::{Context, Result};
use std::path::Path;

/// What a bench tool prints on stdout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Tables and sentences for a person.
    #[default]
    Text,
    /// One JSON document (the summary and every record), nothing else; messages go to stderr.
    Json,
    /// CSV, one row per record, nothing else; messages go to stderr.
    Csv,
}

impl OutputFormat {
    /// Whether stdout carries only the machine-readable document (messages go to stderr).
    pub fn is_document(self) -> bool {
        self != OutputFormat::Text
    }
}

/// Parses a relative amount: `3%`, `3 %` or a fraction `0.03`. Refuses a
/// negative or non-finite value, and a bare number above 1 (ambiguous:
/// write `3%` for three percent).
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let raw = text.trim();
    let (number, percent) = match raw.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (raw, false),
    };
    let v: f64 = number.parse().map_err(|_| format!("'{text}' is not a percentage (write 3% or 0.03)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("'{text}' must be a finite amount of at least 0"));
    }
    if percent {
        return Ok(v / 100.0);
    }
    if v > 1.0 {
        return Err(format!("'{text}' is ambiguous: write {v}% for {v} percent, or a fraction up to 1"));
    }
    Ok(v)
}

/// One CSV field: quoted (with inner quotes doubled) when it holds a comma,
/// a quote or a line break (RFC 4180).
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A CSV document: the header, then one line per row, each line ended by `\n`.
pub fn csv_document(header: &[&str], rows: &[Vec<String>]) -> String {
    let line = |cells: &mut dyn Iterator<Item = String>| cells.map(|c| csv_field(&c)).collect::<Vec<_>>().join(",");
    let mut out = line(&mut header.iter().map(|h| h.to_string()));
    out.push('\n');
    for row in rows {
        out.push_str(&line(&mut row.iter().cloned()));
        out.push('\n');
    }
    out
}

/// A number cell: empty when absent or not finite.
pub fn number(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite()).map(|x| format!("{x}")).unwrap_or_default()
}

/// The columns of [`records_csv`].
pub const RECORD_COLUMNS: [&str; 24] = [
    "impl",
    "primitive",
    "op",
    "variant",
    "timing_mode",
    "n",
    "rows",
    "cols",
    "dtype",
    "ok",
    "median_us",
    "ci_low_us",
    "ci_high_us",
    "rsd_percent",
    "min_us",
    "max_us",
    "samples",
    "gbps",
    "stop_reason",
    "logical_bytes",
    "launches",
    "note",
    "timed_region",
    "cache_policy",
];

/// One row of [`records_csv`].
fn record_row(r: &BenchRecord) -> Vec<String> {
    let noise = r.noise();
    let (rows, cols) = r.shape.map(|[a, b]| (a.to_string(), b.to_string())).unwrap_or_default();
    vec![
        r.implementation.clone(),
        r.primitive.clone(),
        r.op.clone(),
        r.variant.clone(),
        r.timing_mode.name().to_string(),
        r.n.to_string(),
        rows,
        cols,
        r.dtype.clone(),
        r.ok.to_string(),
        number(r.timed_median()),
        number(noise.map(|n| n.median_interval.low)),
        number(noise.map(|n| n.median_interval.high)),
        number(noise.map(|n| n.rsd_percent)),
        number(r.min_us),
        number(r.max_us),
        r.samples_us.len().to_string(),
        number(r.timed_median().map(|m| r.logical_bytes as f64 / (m * 1e3))),
        r.stop_reason.map(|s| s.name().to_string()).unwrap_or_default(),
        r.logical_bytes.to_string(),
        r.launches.map(|l| l.to_string()).unwrap_or_default(),
        r.note.clone().or_else(|| r.error.clone()).unwrap_or_default(),
        r.timed_region.clone(),
        r.cache_policy.clone(),
    ]
}

/// Every record as CSV, one row each, in receipt order ([`RECORD_COLUMNS`]).
pub fn records_csv(records: &[BenchRecord]) -> String {
    csv_document(&RECORD_COLUMNS, &records.iter().map(record_row).collect::<Vec<_>>())
}

/// One record as the JSON summary's object: the CSV columns, typed.
pub fn record_json(r: &BenchRecord) -> serde_json::Value {
    let noise = r.noise();
    serde_json::json!({
        "impl": r.implementation,
        "primitive": r.primitive,
        "op": r.op,
        "variant": r.variant,
        "timing_mode": r.timing_mode.name(),
        "n": r.n,
        "shape": r.shape,
        "dtype": r.dtype,
        "ok": r.ok,
        "median_us": r.timed_median(),
        "ci95_us": noise.map(|n| [n.median_interval.low, n.median_interval.high]),
        "rsd_percent": noise.map(|n| n.rsd_percent),
        "samples": r.samples_us.len(),
        "gbps": r.timed_median().map(|m| r.logical_bytes as f64 / (m * 1e3)),
        "stop_reason": r.stop_reason.map(|s| s.name()),
        "error": r.error,
    })
}

/// The `--format json` document of a bench run: where the receipt went, its
/// tally, every record.
pub fn run_json(receipt: &Path, tally: &crate::receipts::Tally, records: &[BenchRecord]) -> serde_json::Value {
    serde_json::json!({
        "receipt": receipt.display().to_string(),
        "ok": tally.passed,
        "failed": tally.failed,
        "not_run": tally.skipped,
        "records": records.iter().map(record_json).collect::<Vec<_>>(),
    })
}

/// Writes `text` to `path` whole (a temporary file renamed into place).
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    crate::receipts::write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::{BenchRecord, IMPL_CUB};

    #[test]
    fn fractions_parse_as_percent_or_fraction_and_refuse_nonsense() {
        assert_eq!(parse_fraction("3%"), Ok(0.03));
        assert_eq!(parse_fraction(" 2.5 % "), Ok(0.025));
        assert_eq!(parse_fraction("0.03"), Ok(0.03));
        assert_eq!(parse_fraction("0"), Ok(0.0));
        assert!(parse_fraction("3").unwrap_err().contains("ambiguous"));
        assert!(parse_fraction("-1%").is_err());
        assert!(parse_fraction("three").unwrap_err().contains("not a percentage"));
        assert!(parse_fraction("NaN").is_err());
    }

    #[test]
    fn csv_fields_are_quoted_only_when_they_must_be() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_document(&["x", "y"], &[vec!["1".into(), "2,3".into()]]), "x,y\n1,\"2,3\"\n");
    }

    #[test]
    fn one_csv_row_per_record_with_the_header_first() {
        let timed = BenchRecord::synthetic(IMPL_CUB, "scan", "exclusive_scan_i32_i64", "cub", 1024, 5.0, 5000)
            .with_samples(vec![4.0, 5.0, 6.0, 5.0, 5.0]);
        let failed = BenchRecord { ok: false, ..timed.clone() };
        let text = records_csv(&[timed, failed]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].split(',').count(), RECORD_COLUMNS.len());
        assert!(lines[0].starts_with("impl,primitive,op,variant,timing_mode,n,rows,cols"));
        // 5000 bytes in 5 us: 1 GB/s; five samples, no stop reason (a fixed count).
        assert!(lines[1].starts_with("cub,scan,exclusive_scan_i32_i64,cub,cold,1024,,,i32,true,5,"), "{}", lines[1]);
        assert!(lines[1].ends_with(",5,1,,5000,,,,"), "{}", lines[1]);
        // A failed record has no median and no bandwidth.
        assert!(lines[2].contains(",false,,"), "{}", lines[2]);
    }

    #[test]
    fn the_json_summary_has_one_typed_object_per_record() {
        let timed = BenchRecord::synthetic(IMPL_CUB, "scan", "exclusive_scan_i32_i64", "cub", 1024, 5.0, 5000)
            .with_samples(vec![4.0, 5.0, 6.0, 5.0, 5.0]);
        let tally = crate::receipts::Tally { passed: 1, failed: 0, skipped: 2 };
        let doc = run_json(Path::new("receipts/bench.json"), &tally, &[timed]);
        assert_eq!(
            (doc["receipt"].as_str(), doc["ok"].as_u64(), doc["not_run"].as_u64()),
            (Some("receipts/bench.json"), Some(1), Some(2))
        );
        let r = &doc["records"][0];
        assert_eq!(
            (r["impl"].as_str(), r["n"].as_u64(), r["median_us"].as_f64()),
            (Some("cub"), Some(1024), Some(5.0))
        );
        assert_eq!((r["samples"].as_u64(), r["gbps"].as_f64()), (Some(5), Some(1.0)));
        assert_eq!(r["ci95_us"].as_array().map(Vec::len), Some(2));
        assert!(r["stop_reason"].is_null() && r["shape"].is_null());
    }
}
