//! The speed targets (primlab within a stated ratio of the best baseline),
//! evaluated on one run's records: for each, primlab's default entry point
//! (the record of variant [`DEFAULT_VARIANT`]: the schedule the primitive's
//! dispatcher picks at that size, what a caller gets) against the baseline
//! measured in the same run, as a ratio of medians (equal logical bytes, so
//! also a ratio of GB/s),
//! with a bootstrap 95 % interval of that ratio: "met" when the whole
//! interval reaches the target, "MISSED" (by how much) when the whole
//! interval falls short, "within noise" when it straddles the target.
//! Records without samples (older receipts) are judged by the ratio alone
//! and say that their noise is unknown.
//!
//! The bootstrap covers the spread of calls within one process. Against a
//! baseline, the two sides are timed by different programs (the harness,
//! `cub_bench`, `torch_bench.py`), and between processes the same work moves
//! too: identical runs a minute apart differ by up to 15-29 % at 2^16-2^20
//! (receipts/ncu/sampler_effect.txt). So a baseline target is judged on its
//! interval widened by the *program margin* of the run: how far the two
//! programs' timings of the one operation both time identically, a
//! device-to-device copy by the driver, disagree at the nearest size,
//! |ln(harness copy / cub_bench copy)|. The copy target compares records of
//! one process and is not widened. Only cold-timed records are compared
//! (the baselines time cold). The fastest named variant at the same size is
//! shown beside the verdict for information only: choosing it after the
//! fact is not something a caller can do.

use super::entries::ceilings::COPY_OP;
use super::entries::DEFAULT_VARIANT;
use super::record::{BenchRecord, BenchSize, TimingMode, IMPL_CEILING, IMPL_CUB, IMPL_PRIMLAB, IMPL_TORCH};
use super::stats::{ratio_interval, side, Interval, Side};
use serde::{Deserialize, Serialize};

/// What a target compares primlab with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Against {
    /// A baseline implementation's record of the same op and size.
    Baseline(&'static str),
    /// The copy ceiling of the same run and size, in logical GB/s.
    CopyBandwidth,
}

/// One speed target: a primitive at a size, and the ratio to a baseline it must reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetSpec {
    /// Stable id; also names the ncu evidence file `receipts/ncu/<id>.txt`.
    pub id: &'static str,
    /// The primitive as the report names it.
    pub label: &'static str,
    /// Report group.
    pub primitive: &'static str,
    /// Shared op name.
    pub op: &'static str,
    /// Size or shape.
    pub size: BenchSize,
    /// What it is measured against.
    pub against: Against,
    /// The required ratio (speed-up over the baseline, or fraction of copy bandwidth).
    pub factor: f64,
    /// The named variant judged instead of the default entry, for a variant
    /// that is an entry point of its own (the correctly rounded sum shares
    /// its op with the float sums, whose default entry is another schedule).
    pub variant: Option<&'static str>,
}

const fn elems(log2: u32) -> BenchSize {
    BenchSize::Elements(1 << log2)
}

/// The speed targets (sizes: 2^28 unless the entry names another).
pub const TARGETS: [TargetSpec; 15] = [
    TargetSpec {
        id: "reduce_2p28",
        label: "reduce, int32->int64, at 2^28",
        primitive: "reduce",
        op: "reduce_sum_i32_i64",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.0,
        variant: None,
    },
    TargetSpec {
        id: "reduce_2p20",
        label: "reduce, int32->int64, at 2^20",
        primitive: "reduce",
        op: "reduce_sum_i32_i64",
        size: elems(20),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.2,
        variant: None,
    },
    TargetSpec {
        id: "scan_2p28",
        label: "exclusive scan, int32->int64, at 2^28",
        primitive: "scan",
        op: "exclusive_scan_i32_i64",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.0,
        variant: None,
    },
    TargetSpec {
        id: "scan_2p28_copy",
        label: "exclusive scan, int32->int64, at 2^28, logical bytes vs copy",
        primitive: "scan",
        op: "exclusive_scan_i32_i64",
        size: elems(28),
        against: Against::CopyBandwidth,
        factor: 0.8,
        variant: None,
    },
    TargetSpec {
        id: "scan_2p20",
        label: "exclusive scan, int32->int64, at 2^20",
        primitive: "scan",
        op: "exclusive_scan_i32_i64",
        size: elems(20),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.2,
        variant: None,
    },
    TargetSpec {
        id: "softmax_f32_8192x32000",
        label: "softmax f32 [8192, 32000]",
        primitive: "softmax",
        op: "softmax_f32",
        size: BenchSize::Rows { rows: 8192, cols: 32000 },
        against: Against::Baseline(IMPL_TORCH),
        factor: 1.3,
        variant: None,
    },
    TargetSpec {
        id: "segmented_sum_f32_seg1024_2p28",
        label: "segmented sum, f32, 1024-wide segments, at 2^28",
        primitive: "segmented_reduce",
        op: "segmented_sum_f32_seg1024",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.5,
        variant: None,
    },
    TargetSpec {
        id: "histogram_bins19_2p28",
        label: "histogram, 19 bins, int32, at 2^28",
        primitive: "histogram",
        op: "histogram_even_i32_bins19",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 2.0,
        variant: None,
    },
    TargetSpec {
        id: "compact_2p28",
        label: "compaction x > 0, int32, at 2^28",
        primitive: "compact",
        op: "compact_positive_i32",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.0,
        variant: None,
    },
    TargetSpec {
        id: "argmax_f32_2p28",
        label: "argmax, f32, at 2^28",
        primitive: "arg_reduce",
        op: "argmax_f32",
        size: elems(28),
        against: Against::Baseline(IMPL_TORCH),
        factor: 1.1,
        variant: None,
    },
    TargetSpec {
        id: "exact_sum_2p28",
        label: "correctly rounded sum, f32, at 2^28 (against the ordinary sum)",
        primitive: "float_reduce",
        op: "float_reduce_sum_f32",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 0.9,
        variant: Some("correctly_rounded"),
    },
    TargetSpec {
        id: "exact_sum_2p20",
        label: "correctly rounded sum, f32, at 2^20 (against the ordinary sum)",
        primitive: "float_reduce",
        op: "float_reduce_sum_f32",
        size: elems(20),
        against: Against::Baseline(IMPL_CUB),
        factor: 0.8,
        variant: Some("correctly_rounded"),
    },
    // Top-k: at least 5x torch.topk at the decoder's shapes (a batch of one and a
    // batch of 64 at a 128,256-token vocabulary), and at or above CUB's DeviceTopK on a whole
    // array while giving sorted, deterministic output (CUB's is unordered).
    TargetSpec {
        id: "topk_1x128256_k50",
        label: "top-k, f32, k = 50, [1, 128256]",
        primitive: "topk",
        op: "topk_f32_k50",
        size: BenchSize::Rows { rows: 1, cols: 128_256 },
        against: Against::Baseline(IMPL_TORCH),
        factor: 5.0,
        variant: None,
    },
    TargetSpec {
        id: "topk_64x128256_k2048",
        label: "top-k, f32, k = 2048, [64, 128256]",
        primitive: "topk",
        op: "topk_f32_k2048",
        size: BenchSize::Rows { rows: 64, cols: 128_256 },
        against: Against::Baseline(IMPL_TORCH),
        factor: 5.0,
        variant: None,
    },
    TargetSpec {
        id: "topk_2p24_k2048",
        label: "top-k, f32, k = 2048, a whole array of 2^24",
        primitive: "topk",
        op: "topk_f32_k2048",
        size: elems(24),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.0,
        variant: None,
    },
];

/// A record picked for a target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pick {
    /// `impl`.
    #[serde(rename = "impl")]
    pub implementation: String,
    /// Variant (or baseline op).
    pub variant: String,
    /// The schedule a default entry ran (its record's `params.picked`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picked: Option<String>,
    /// Median microseconds.
    pub median_us: f64,
    /// Logical GB/s.
    pub gbps: f64,
}

impl Pick {
    /// `single_pass`, or `default (single_pass)` for a default entry.
    pub fn name(&self) -> String {
        match &self.picked {
            Some(picked) => format!("{} ({picked})", self.variant),
            None => self.variant.clone(),
        }
    }
}

/// A target's verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetOutcome {
    /// The ratio's interval (or, noise unknown, the ratio) reaches the target.
    Met,
    /// The ratio's interval (or, noise unknown, the ratio) falls short of it.
    Missed,
    /// The interval straddles the target.
    WithinNoise,
    /// A record is missing.
    #[default]
    NotMeasured,
}

impl TargetOutcome {
    /// `met`, `MISSED`, `within noise` or `not measured` (the report's verdict word).
    pub fn word(self) -> &'static str {
        match self {
            TargetOutcome::Met => "met",
            TargetOutcome::Missed => "MISSED",
            TargetOutcome::WithinNoise => "within noise",
            TargetOutcome::NotMeasured => "not measured",
        }
    }
}

/// One evaluated target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// [`TargetSpec::id`].
    pub id: String,
    /// [`TargetSpec::label`].
    pub label: String,
    /// Report group.
    pub primitive: String,
    /// Shared op.
    pub op: String,
    /// Size label.
    pub size: String,
    /// The requirement in words, e.g. ">= 1.2x cub".
    pub requirement: String,
    /// primlab's default entry point (receipts before default entries: its
    /// fastest checked variant, the only figure they hold).
    pub ours: Option<Pick>,
    /// The fastest checked named variant, for information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<Pick>,
    /// The ratio of [`TargetResult::best`] (same definition as `ratio`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_ratio: Option<f64>,
    /// The comparison record.
    pub reference: Option<Pick>,
    /// `reference median / ours median` (or our GB/s / copy GB/s).
    pub ratio: Option<f64>,
    /// The bootstrap 95 % interval of `ratio` (None: noise unknown).
    #[serde(default)]
    pub ratio_interval: Option<Interval>,
    /// The run's program margin at this size ([`program_margin`]), for a
    /// baseline target whose run timed the copy in both programs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_margin: Option<ProgramMargin>,
    /// The interval the verdict is taken on: `ratio_interval` widened by
    /// `program_margin` (the same interval when there is none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_interval: Option<Interval>,
    /// The required ratio.
    pub factor: f64,
    /// Some(true) met, Some(false) missed, None within noise or not measured ([`TargetResult::outcome`] says which).
    pub met: Option<bool>,
    /// The verdict.
    #[serde(default)]
    pub outcome: TargetOutcome,
    /// One line: met / MISSED by how much / not measured and why.
    pub verdict: String,
}

fn pick(record: &BenchRecord) -> Option<Pick> {
    let median = record.timed_median()?;
    Some(Pick {
        implementation: record.implementation.clone(),
        variant: record.variant.clone(),
        picked: record.params.get("picked").and_then(|v| v.as_str()).map(str::to_string),
        median_us: median,
        gbps: record.logical_bytes as f64 / (median * 1e3),
    })
}

/// Whether `record` is a checked cold-timed record of `implementation` for `op` at `size`.
fn is_candidate(record: &BenchRecord, implementation: &str, op: &str, size: BenchSize) -> bool {
    record.implementation == implementation
        && record.op == op
        && record.size() == size
        && record.timing_mode == TimingMode::Cold
        && record.timed_median().is_some()
}

/// The fastest checked cold-timed record of `implementation` for `op` at
/// `size` among its named variants (a default entry repeats one of them, so
/// it never stands for the fastest).
pub fn fastest<'a>(
    records: &'a [BenchRecord],
    implementation: &str,
    op: &str,
    size: BenchSize,
) -> Option<&'a BenchRecord> {
    records
        .iter()
        .filter(|r| r.variant != DEFAULT_VARIANT && is_candidate(r, implementation, op, size))
        .min_by(|a, b| a.timed_median().unwrap_or(f64::INFINITY).total_cmp(&b.timed_median().unwrap_or(f64::INFINITY)))
}

/// primlab's default-entry record for `op` at `size`.
pub fn default_entry<'a>(records: &'a [BenchRecord], op: &str, size: BenchSize) -> Option<&'a BenchRecord> {
    records.iter().find(|r| r.variant == DEFAULT_VARIANT && is_candidate(r, IMPL_PRIMLAB, op, size))
}

/// Whether `records` hold any default-entry record (receipts before them do not).
fn has_default_entries(records: &[BenchRecord]) -> bool {
    records.iter().any(|r| r.implementation == IMPL_PRIMLAB && r.variant == DEFAULT_VARIANT)
}

/// The record a target judges: its named variant's when it names one, else
/// the default entry's, or, in a receipt that predates default entries, the
/// fastest variant's (the only figure it has).
pub fn judged_record<'a>(records: &'a [BenchRecord], spec: &TargetSpec) -> Option<&'a BenchRecord> {
    if let Some(variant) = spec.variant {
        records.iter().find(|r| r.variant == variant && is_candidate(r, IMPL_PRIMLAB, spec.op, spec.size))
    } else if has_default_entries(records) {
        default_entry(records, spec.op, spec.size)
    } else {
        fastest(records, IMPL_PRIMLAB, spec.op, spec.size)
    }
}

/// How far two timings of the same device copy disagreed, at the copy size
/// nearest the record's: the harness's and `cub_bench`'s in one run (the
/// program margin of a target), or the harness's in two runs (`bench
/// compare`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProgramMargin {
    /// `|ln(one copy median / the other)|`.
    pub log_ratio: f64,
    /// The copy size it was measured at (elements of 4 bytes).
    pub copy_elements: usize,
}

impl ProgramMargin {
    /// The margin as a percentage, `e^log_ratio - 1`.
    pub fn percent(&self) -> f64 {
        (self.log_ratio.exp() - 1.0) * 100.0
    }

    /// The margin and where it was read, e.g. `6.8 % at 2^20`.
    pub fn describe(&self) -> String {
        format!("{:.1} % at {}", self.percent(), super::record::size_label(self.copy_elements as u64))
    }

    /// `interval` widened by the margin on both sides.
    pub fn widen(&self, interval: Interval) -> Interval {
        let factor = self.log_ratio.exp();
        Interval { low: interval.low / factor, high: interval.high * factor }
    }
}

/// The program margin of `records` for a target at `size`: the harness's copy
/// ceiling and `cub_bench`'s copy of the same size, the size (of those both
/// timed) nearest `size`'s element count on a log scale. None when either
/// program has no copy record (e.g. a run without CUB).
pub fn program_margin(records: &[BenchRecord], size: BenchSize) -> Option<ProgramMargin> {
    copy_margin((records, IMPL_CEILING), (records, IMPL_CUB), size)
}

/// How far two timings of the same device copy disagree, `a` and `b` each a
/// set of records and the implementation whose copy record to take from it,
/// at the copy size (of those both timed) nearest `size`'s element count on a
/// log scale. The program margin is the harness's copy against `cub_bench`'s
/// in one run; `bench compare` takes the harness's copy in OLD against the
/// one in NEW. None when either side has no copy record.
pub fn copy_margin(a: (&[BenchRecord], &str), b: (&[BenchRecord], &str), size: BenchSize) -> Option<ProgramMargin> {
    let target = (size.elements().max(1) as f64).log2();
    let copy_of = |(records, implementation): (&[BenchRecord], &str), n: usize| {
        fastest(records, implementation, COPY_OP, BenchSize::Elements(n))?.timed_median()
    };
    a.0.iter()
        .filter(|r| r.implementation == a.1 && r.op == COPY_OP)
        .filter_map(|r| match r.size() {
            BenchSize::Elements(n) => Some(n),
            BenchSize::Rows { .. } => None,
        })
        .filter_map(|n| {
            let (first, second) = (copy_of(a, n)?, copy_of(b, n)?);
            (first > 0.0 && second > 0.0)
                .then(|| ProgramMargin { log_ratio: (first / second).ln().abs(), copy_elements: n })
        })
        .min_by(|x, y| {
            let distance = |m: &ProgramMargin| ((m.copy_elements as f64).log2() - target).abs();
            distance(x).total_cmp(&distance(y))
        })
}

/// The ratio of `ours` to `reference` as `spec` defines it and its bootstrap
/// interval. Baseline: reference time / our time. Copy: our GB/s / copy GB/s,
/// which is (our bytes / copy bytes) x copy time / our time.
fn ratio_of(spec: &TargetSpec, ours: &BenchRecord, reference: &BenchRecord) -> Option<(f64, Option<Interval>)> {
    let (o, r) = (ours.timed_median()?, reference.timed_median()?);
    let interval = ratio_interval(&reference.samples_us, &ours.samples_us);
    match spec.against {
        Against::Baseline(_) => Some((r / o, interval)),
        Against::CopyBandwidth if reference.logical_bytes > 0 => {
            let bytes = ours.logical_bytes as f64 / reference.logical_bytes as f64;
            Some((bytes * r / o, interval.map(|i| i.scaled(bytes))))
        }
        Against::CopyBandwidth => None,
    }
}

/// The verdict of a ratio (and its interval) against the required `factor`.
pub fn outcome_of(ratio: f64, interval: Option<Interval>, factor: f64) -> TargetOutcome {
    match side(ratio, interval, factor).0 {
        Side::Above => TargetOutcome::Met,
        Side::Below => TargetOutcome::Missed,
        Side::WithinNoise => TargetOutcome::WithinNoise,
    }
}

/// The verdict line of a measured target: the within-run interval, and with
/// a program margin also the widened one the verdict was taken on.
fn verdict_line(
    spec: &TargetSpec,
    outcome: TargetOutcome,
    r: f64,
    interval: Option<Interval>,
    margin: Option<ProgramMargin>,
    o: &Pick,
    reference: &Pick,
) -> String {
    let noise = match (interval, margin) {
        (Some(i), Some(m)) => {
            let w = m.widen(i);
            format!(
                " [95 % CI {:.2}-{:.2}x; {:.2}-{:.2}x with the {:.1} % by which the two programs' timings of the \
                 same copy disagreed at {}]",
                i.low,
                i.high,
                w.low,
                w.high,
                m.percent(),
                super::record::size_label(m.copy_elements as u64)
            )
        }
        (Some(i), None) => format!(" [95 % CI {:.2}-{:.2}x]", i.low, i.high),
        (None, _) => " (noise unknown: no samples)".to_string(),
    };
    match outcome {
        TargetOutcome::Met => format!("met: {r:.2}x{noise} (target {:.2}x)", spec.factor),
        TargetOutcome::WithinNoise => format!("within noise: {r:.2}x{noise} straddles the target {:.2}x", spec.factor),
        _ => {
            let short = (spec.factor - r) / spec.factor * 100.0;
            match spec.against {
                Against::Baseline(_) => format!(
                    "MISSED by {short:.0} %: {r:.2}x{noise} (target {:.2}x); primlab {:.1} us, needs <= {:.1} us",
                    spec.factor,
                    o.median_us,
                    reference.median_us / spec.factor
                ),
                Against::CopyBandwidth => format!(
                    "MISSED by {short:.0} %: {:.0} % of copy{noise} (target {:.0} %); primlab {:.0} GB/s, copy {:.0} \
                     GB/s",
                    r * 100.0,
                    spec.factor * 100.0,
                    o.gbps,
                    reference.gbps
                ),
            }
        }
    }
}

/// Evaluates one target; `absent` says why a baseline has no record
/// (e.g. "cub: absent: nvcc not found").
pub fn evaluate(spec: &TargetSpec, records: &[BenchRecord], absent: &dyn Fn(&str) -> Option<String>) -> TargetResult {
    let ours_record = judged_record(records, spec);
    // A target that names its variant judges a contract of its own (the
    // correctly rounded sum among the float sums): the fastest of the other
    // variants is no alternative a caller of that contract has.
    let best_record = if spec.variant.is_some() { None } else { fastest(records, IMPL_PRIMLAB, spec.op, spec.size) };
    let (reference_record, requirement) = match spec.against {
        Against::Baseline(implementation) => {
            (fastest(records, implementation, spec.op, spec.size), format!(">= {:.1}x {implementation}", spec.factor))
        }
        Against::CopyBandwidth => (
            fastest(records, IMPL_CEILING, super::entries::ceilings::COPY_OP, spec.size),
            format!(">= {:.0} % of copy bandwidth (logical bytes)", spec.factor * 100.0),
        ),
    };
    let (ours, best, reference) =
        (ours_record.and_then(pick), best_record.and_then(pick), reference_record.and_then(pick));
    let measured = ours_record.zip(reference_record).and_then(|(o, r)| ratio_of(spec, o, r));
    let best_ratio = best_record.zip(reference_record).and_then(|(b, r)| ratio_of(spec, b, r)).map(|(ratio, _)| ratio);
    let margin = match spec.against {
        Against::Baseline(_) => program_margin(records, spec.size),
        Against::CopyBandwidth => None,
    };
    let judged_interval = measured.and_then(|(_, i)| i).map(|i| margin.map_or(i, |m| m.widen(i)));
    let outcome = measured.map_or(TargetOutcome::NotMeasured, |(r, _)| outcome_of(r, judged_interval, spec.factor));
    let verdict = match (measured, &ours, &reference) {
        (Some((r, interval)), Some(o), Some(reference)) if has_default_entries(records) => {
            verdict_line(spec, outcome, r, interval, margin, o, reference)
        }
        (Some((r, interval)), Some(o), Some(reference)) => format!(
            "{} (judged on the fastest variant: the receipt has no default-entry records)",
            verdict_line(spec, outcome, r, interval, margin, o, reference)
        ),
        _ => {
            let mut why = Vec::new();
            if ours.is_none() {
                let what = if has_default_entries(records) { "default-entry" } else { "checked" };
                why.push(format!("no {what} primlab record of {} at {}", spec.op, spec.size.label()));
                if let Some(b) = &best {
                    why.push(format!("fastest variant {} {:.1} us", b.variant, b.median_us));
                }
            }
            if reference.is_none() {
                let who = match spec.against {
                    Against::Baseline(implementation) => implementation,
                    Against::CopyBandwidth => "copy ceiling",
                };
                let reason = absent(who).map(|r| format!(" ({r})")).unwrap_or_default();
                why.push(format!("no {who} record{reason}"));
            }
            format!("not measured: {}", why.join("; "))
        }
    };
    TargetResult {
        id: spec.id.to_string(),
        label: spec.label.to_string(),
        primitive: spec.primitive.to_string(),
        op: spec.op.to_string(),
        size: spec.size.label(),
        requirement,
        ours,
        best,
        best_ratio,
        reference,
        ratio: measured.map(|(r, _)| r),
        ratio_interval: measured.and_then(|(_, i)| i),
        program_margin: margin,
        judged_interval,
        factor: spec.factor,
        met: match outcome {
            TargetOutcome::Met => Some(true),
            TargetOutcome::Missed => Some(false),
            _ => None,
        },
        outcome,
        verdict,
    }
}

/// Evaluates every target.
pub fn evaluate_all(records: &[BenchRecord], absent: &dyn Fn(&str) -> Option<String>) -> Vec<TargetResult> {
    TARGETS.iter().map(|spec| evaluate(spec, records, absent)).collect()
}

#[cfg(test)]
#[path = "targets_tests.rs"]
mod tests;
