//! One benchmark result as the receipt stores it, whoever produced it:
//! primlab's kernels, a ceiling, CUB or PyTorch.

use serde::{Deserialize, Serialize};

/// `impl` of primlab's own kernels.
pub const IMPL_PRIMLAB: &str = "primlab";
/// `impl` of the bandwidth ceilings measured by the harness.
pub const IMPL_CEILING: &str = "ceiling";
/// `impl` of `scripts/baselines/cub_bench.cu` (its copy and read ceilings included).
pub const IMPL_CUB: &str = "cub";
/// `impl` of `scripts/baselines/torch_bench.py`.
pub const IMPL_TORCH: &str = "torch";

/// How a record's calls were timed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimingMode {
    /// Each call between its own two events, the GPU idle before it (the
    /// baselines' protocol; every receipt before timing modes were recorded).
    #[default]
    Cold,
    /// Batches of calls back to back between two events; per call = total / calls.
    Hot,
}

impl TimingMode {
    /// `cold` or `hot`.
    pub fn name(self) -> &'static str {
        match self {
            TimingMode::Cold => "cold",
            TimingMode::Hot => "hot",
        }
    }
}

/// The problem size of a record: a 1-D length or a row-major matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchSize {
    /// `n` elements.
    Elements(usize),
    /// `rows` rows of `cols` elements.
    Rows {
        /// Number of rows.
        rows: usize,
        /// Elements per row.
        cols: usize,
    },
}

impl BenchSize {
    /// Total elements.
    pub fn elements(&self) -> usize {
        match *self {
            BenchSize::Elements(n) => n,
            BenchSize::Rows { rows, cols } => rows * cols,
        }
    }

    /// `2^20` or `[8192, 32000]`.
    pub fn label(&self) -> String {
        match *self {
            BenchSize::Elements(n) => size_label(n as u64),
            BenchSize::Rows { rows, cols } => format!("[{rows}, {cols}]"),
        }
    }
}

/// One measured (or failed) benchmark entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRecord {
    /// Who ran it: [`IMPL_PRIMLAB`], [`IMPL_CEILING`], [`IMPL_CUB`] or [`IMPL_TORCH`].
    #[serde(rename = "impl")]
    pub implementation: String,
    /// Report group, e.g. `scan` (`ceilings` for the ceilings).
    pub primitive: String,
    /// What is computed, the same name for every implementation of it, e.g.
    /// `exclusive_scan_i32_i64` or `segmented_sum_f32_seg1024`.
    pub op: String,
    /// primlab: the schedule (`decoupled_lookback`); baselines: their own op
    /// name (`cub_exclusive_scan_i32_i64`); ceilings: `memcpy_d2d` / `read_ceiling_i32`.
    pub variant: String,
    /// Elements (for rows: rows x cols).
    pub n: usize,
    /// `[rows, cols]` of the row primitives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<[usize; 2]>,
    /// Element type, e.g. `i32->i64`, `f32`, `bf16`.
    pub dtype: String,
    /// Median of the timed calls, microseconds (absent when not ok).
    #[serde(default)]
    pub median_us: Option<f64>,
    /// Fastest timed call, microseconds.
    #[serde(default)]
    pub min_us: Option<f64>,
    /// Slowest timed call, microseconds.
    #[serde(default)]
    pub max_us: Option<f64>,
    /// Timed calls.
    #[serde(default)]
    pub iters: usize,
    /// Untimed warm-up calls before them.
    #[serde(default)]
    pub warmups: usize,
    /// Every timed sample, microseconds per call, in the order timed (cold:
    /// one per call; hot: one per batch). Empty in receipts that predate
    /// samples: their noise is unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples_us: Vec<f64>,
    /// How the calls were timed (absent: cold).
    #[serde(default)]
    pub timing_mode: TimingMode,
    /// Useful bytes read and written: each input element read once and each output element
    /// written once (scratch traffic not counted).
    pub logical_bytes: u64,
    /// `logical_bytes / median`, in 10^9 bytes per second.
    #[serde(default)]
    pub gbps: Option<f64>,
    /// Whether the result was checked correct (and then timed).
    pub ok: bool,
    /// Why not ok: the mismatch or the error, naming primitive, variant and size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the correctness check compared.
    #[serde(default)]
    pub check: String,
    /// How inputs were laid out against the L2 (rotation or one buffer).
    #[serde(default)]
    pub cache_policy: String,
    /// Exactly what the timed region holds.
    #[serde(default)]
    pub timed_region: String,
    /// primlab: an estimate of the DRAM bytes the schedule moves when nothing
    /// stays in L2 (from the algorithm, not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_moved_estimate: Option<u64>,
    /// primlab: kernel launches plus memsets in the timed region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<u32>,
    /// Anything else (grids, segment lengths, bins, kept count, caps).
    #[serde(default)]
    pub params: serde_json::Value,
    /// A remark the report prints beside the number (e.g. a capped iteration count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why the timed calls stopped (absent in receipts that predate adaptive sampling, and in
    /// the baselines' records: their counts are fixed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<super::sampling::StopReason>,
    /// Which process of a `bench --processes K` run timed it, from 0 (absent
    /// in a single-process receipt and in every receipt older than
    /// `--processes`: they read as process 0).
    #[serde(default, skip_serializing_if = "is_first_process")]
    pub process: usize,
}

/// Whether `process` is the first (the only one of a single-process run):
/// left out of the JSON, so such receipts read as they always did.
fn is_first_process(process: &usize) -> bool {
    *process == 0
}

impl BenchRecord {
    /// The size of the record.
    pub fn size(&self) -> BenchSize {
        match self.shape {
            Some([rows, cols]) => BenchSize::Rows { rows, cols },
            None => BenchSize::Elements(self.n),
        }
    }

    /// The median when the record is ok and timed.
    pub fn timed_median(&self) -> Option<f64> {
        if self.ok {
            self.median_us.filter(|m| m.is_finite() && *m > 0.0)
        } else {
            None
        }
    }

    /// The noise of the timed samples, `None` when unknown (no or too few samples, or not ok).
    pub fn noise(&self) -> Option<super::stats::Noise> {
        self.timed_median()?;
        super::stats::noise(&self.samples_us)
    }

    /// `impl` and variant in one label, e.g. `primlab single_pass` or `cub`.
    /// Hot records end in ` (hot)`.
    pub fn label(&self) -> String {
        let hot = if self.timing_mode == TimingMode::Hot { " (hot)" } else { "" };
        match self.implementation.as_str() {
            IMPL_PRIMLAB => format!("primlab {}{hot}", self.variant),
            IMPL_CEILING => format!("ceiling {}{hot}", self.variant),
            other => format!("{other} {}{hot}", self.variant),
        }
    }
}

/// An entry that was not run, and why (above a variant's `max_len()`, not
/// enough device memory, a primitive not built in, a broken context).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedEntry {
    /// Report group.
    pub primitive: String,
    /// The op.
    pub op: String,
    /// The schedule.
    pub variant: String,
    /// Size label (`2^28`, `[8192, 32000]`).
    pub size: String,
    /// Why it was not run.
    pub reason: String,
}

/// Microseconds as a report cell.
pub fn us(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} us")
    } else {
        format!("{v:.1} us")
    }
}

/// `2^k` as text when `n` is a power of two, else the decimal number.
pub fn size_label(n: u64) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

#[cfg(test)]
impl BenchRecord {
    /// A checked record for tests: `logical_bytes` bytes in `us` microseconds
    /// (median, min and max alike), 20 calls after 3 warm-ups.
    pub fn synthetic(
        implementation: &str,
        primitive: &str,
        op: &str,
        variant: &str,
        n: usize,
        us: f64,
        logical_bytes: u64,
    ) -> BenchRecord {
        BenchRecord {
            implementation: implementation.into(),
            primitive: primitive.into(),
            op: op.into(),
            variant: variant.into(),
            n,
            shape: None,
            dtype: "i32".into(),
            median_us: Some(us),
            min_us: Some(us),
            max_us: Some(us),
            iters: 20,
            warmups: 3,
            samples_us: Vec::new(),
            timing_mode: TimingMode::Cold,
            logical_bytes,
            gbps: Some(logical_bytes as f64 / (us * 1e3)),
            ok: true,
            error: None,
            check: String::new(),
            cache_policy: String::new(),
            timed_region: String::new(),
            bytes_moved_estimate: None,
            launches: None,
            params: serde_json::Value::Null,
            note: None,
            stop_reason: None,
            process: 0,
        }
    }
}

#[cfg(test)]
impl BenchRecord {
    /// [`BenchRecord::synthetic`] with `samples` as its timed calls (median, min, max from them).
    pub fn with_samples(mut self, samples: Vec<f64>) -> BenchRecord {
        if let Some((median, min, max)) = super::timing::summarize(&samples) {
            self.median_us = Some(median);
            self.min_us = Some(min);
            self.max_us = Some(max);
            self.gbps = Some(self.logical_bytes as f64 / (median * 1e3));
        }
        self.iters = samples.len();
        self.samples_us = samples;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_without_samples_or_modes_load_as_cold_with_unknown_noise() {
        let old = serde_json::json!({
            "impl": "cub", "primitive": "scan", "op": "exclusive_scan_i32_i64", "variant": "cub", "n": 1024,
            "dtype": "i32->i64", "median_us": 5.0, "logical_bytes": 12288, "ok": true
        });
        let record: BenchRecord = serde_json::from_value(old).unwrap();
        assert_eq!(record.timing_mode, TimingMode::Cold);
        assert!(record.samples_us.is_empty());
        assert_eq!(record.noise(), None);
        assert_eq!(record.process, 0, "a receipt older than --processes is one process");
        assert!(!serde_json::to_string(&record).unwrap().contains("process"), "process 0 is not written");
    }

    #[test]
    fn records_round_trip_with_impl_as_the_json_key() {
        let record = BenchRecord {
            implementation: IMPL_PRIMLAB.into(),
            primitive: "softmax".into(),
            op: "softmax_f32".into(),
            variant: "online_block".into(),
            n: 8192 * 32000,
            shape: Some([8192, 32000]),
            dtype: "f32".into(),
            median_us: Some(800.0),
            min_us: Some(790.0),
            max_us: Some(900.0),
            iters: 30,
            warmups: 5,
            samples_us: vec![800.0, 790.0, 900.0],
            timing_mode: TimingMode::Hot,
            logical_bytes: 2 * 4 * 8192 * 32000,
            gbps: Some(2621.44),
            ok: true,
            error: None,
            check: "elementwise".into(),
            cache_policy: "single input buffer".into(),
            timed_region: "one SoftmaxPlan::enqueue".into(),
            bytes_moved_estimate: Some(1),
            launches: Some(2),
            params: serde_json::json!({}),
            note: None,
            stop_reason: Some(super::super::sampling::StopReason::NoiseTarget),
            process: 2,
        };
        let text = serde_json::to_string(&record).unwrap();
        assert!(text.contains("\"impl\":\"primlab\""));
        let back: BenchRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, record);
        assert_eq!(back.size(), BenchSize::Rows { rows: 8192, cols: 32000 });
        assert_eq!(back.size().label(), "[8192, 32000]");
        assert_eq!(back.timed_median(), Some(800.0));
    }

    #[test]
    fn size_labels() {
        assert_eq!(size_label(1 << 28), "2^28");
        assert_eq!(size_label(1000), "1000");
    }
}
