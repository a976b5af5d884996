//! The speed targets (primlab within a stated ratio of the best baseline), evaluated on one run's records: for each,
//! primlab's fastest variant against the baseline measured in the same run,
//! as a ratio of medians (equal logical bytes, so also a ratio of GB/s),
//! with a bootstrap 95 % interval of that ratio: "met" when the whole
//! interval reaches the target, "MISSED" (by how much) when the whole
//! interval falls short, "within noise" when it straddles the target.
//! Records without samples (older receipts) are judged by the ratio alone
//! and say that their noise is unknown. Only cold-timed records are compared
//! (the baselines time cold).

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
}

const fn elems(log2: u32) -> BenchSize {
    BenchSize::Elements(1 << log2)
}

/// The speed targets (sizes: 2^28 unless the entry names another).
pub const TARGETS: [TargetSpec; 10] = [
    TargetSpec {
        id: "reduce_2p28",
        label: "reduce, int32->int64, at 2^28",
        primitive: "reduce",
        op: "reduce_sum_i32_i64",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.0,
    },
    TargetSpec {
        id: "reduce_2p20",
        label: "reduce, int32->int64, at 2^20",
        primitive: "reduce",
        op: "reduce_sum_i32_i64",
        size: elems(20),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.2,
    },
    TargetSpec {
        id: "scan_2p28",
        label: "exclusive scan, int32->int64, at 2^28",
        primitive: "scan",
        op: "exclusive_scan_i32_i64",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.0,
    },
    TargetSpec {
        id: "scan_2p28_copy",
        label: "exclusive scan, int32->int64, at 2^28, logical bytes vs copy",
        primitive: "scan",
        op: "exclusive_scan_i32_i64",
        size: elems(28),
        against: Against::CopyBandwidth,
        factor: 0.8,
    },
    TargetSpec {
        id: "scan_2p20",
        label: "exclusive scan, int32->int64, at 2^20",
        primitive: "scan",
        op: "exclusive_scan_i32_i64",
        size: elems(20),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.2,
    },
    TargetSpec {
        id: "softmax_f32_8192x32000",
        label: "softmax f32 [8192, 32000]",
        primitive: "softmax",
        op: "softmax_f32",
        size: BenchSize::Rows { rows: 8192, cols: 32000 },
        against: Against::Baseline(IMPL_TORCH),
        factor: 1.3,
    },
    TargetSpec {
        id: "segmented_sum_f32_seg1024_2p28",
        label: "segmented sum, f32, 1024-wide segments, at 2^28",
        primitive: "segmented_reduce",
        op: "segmented_sum_f32_seg1024",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.5,
    },
    TargetSpec {
        id: "histogram_bins19_2p28",
        label: "histogram, 19 bins, int32, at 2^28",
        primitive: "histogram",
        op: "histogram_even_i32_bins19",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 2.0,
    },
    TargetSpec {
        id: "compact_2p28",
        label: "compaction x > 0, int32, at 2^28",
        primitive: "compact",
        op: "compact_positive_i32",
        size: elems(28),
        against: Against::Baseline(IMPL_CUB),
        factor: 1.0,
    },
    TargetSpec {
        id: "argmax_f32_2p28",
        label: "argmax, f32, at 2^28",
        primitive: "arg_reduce",
        op: "argmax_f32",
        size: elems(28),
        against: Against::Baseline(IMPL_TORCH),
        factor: 1.1,
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
    /// Median microseconds.
    pub median_us: f64,
    /// Logical GB/s.
    pub gbps: f64,
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
    /// primlab's fastest checked variant.
    pub ours: Option<Pick>,
    /// The comparison record.
    pub reference: Option<Pick>,
    /// `reference median / ours median` (or our GB/s / copy GB/s).
    pub ratio: Option<f64>,
    /// The bootstrap 95 % interval of `ratio` (None: noise unknown).
    #[serde(default)]
    pub ratio_interval: Option<Interval>,
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
        median_us: median,
        gbps: record.logical_bytes as f64 / (median * 1e3),
    })
}

/// The fastest checked cold-timed record of `implementation` for `op` at `size`.
pub fn fastest<'a>(
    records: &'a [BenchRecord],
    implementation: &str,
    op: &str,
    size: BenchSize,
) -> Option<&'a BenchRecord> {
    records
        .iter()
        .filter(|r| {
            r.implementation == implementation
                && r.op == op
                && r.size() == size
                && r.timing_mode == TimingMode::Cold
                && r.timed_median().is_some()
        })
        .min_by(|a, b| a.timed_median().unwrap_or(f64::INFINITY).total_cmp(&b.timed_median().unwrap_or(f64::INFINITY)))
}

/// Evaluates one target; `absent` says why a baseline has no record
/// (e.g. "cub: absent: nvcc not found").
pub fn evaluate(spec: &TargetSpec, records: &[BenchRecord], absent: &dyn Fn(&str) -> Option<String>) -> TargetResult {
    let ours_record = fastest(records, IMPL_PRIMLAB, spec.op, spec.size);
    let ours = ours_record.and_then(pick);
    let (reference_record, requirement) = match spec.against {
        Against::Baseline(implementation) => {
            (fastest(records, implementation, spec.op, spec.size), format!(">= {:.1}x {implementation}", spec.factor))
        }
        Against::CopyBandwidth => (
            fastest(records, IMPL_CEILING, super::entries::ceilings::COPY_OP, spec.size),
            format!(">= {:.0} % of copy bandwidth (logical bytes)", spec.factor * 100.0),
        ),
    };
    let reference = reference_record.and_then(pick);
    let ratio = match (&ours, &reference, spec.against) {
        (Some(o), Some(r), Against::Baseline(_)) => Some(r.median_us / o.median_us),
        (Some(o), Some(r), Against::CopyBandwidth) => Some(o.gbps / r.gbps),
        _ => None,
    };
    // Baseline: reference time / our time. Copy: our GB/s / copy GB/s, which is
    // (our bytes / copy bytes) x copy time / our time.
    let interval = match (ours_record, reference_record, spec.against) {
        (Some(o), Some(r), Against::Baseline(_)) => ratio_interval(&r.samples_us, &o.samples_us),
        (Some(o), Some(r), Against::CopyBandwidth) if r.logical_bytes > 0 => {
            ratio_interval(&r.samples_us, &o.samples_us)
                .map(|i| i.scaled(o.logical_bytes as f64 / r.logical_bytes as f64))
        }
        _ => None,
    };
    let judged = ratio.map(|r| side(r, interval, spec.factor));
    let outcome = match judged {
        Some((Side::Above, _)) => TargetOutcome::Met,
        Some((Side::Below, _)) => TargetOutcome::Missed,
        Some((Side::WithinNoise, _)) => TargetOutcome::WithinNoise,
        None => TargetOutcome::NotMeasured,
    };
    let met = match outcome {
        TargetOutcome::Met => Some(true),
        TargetOutcome::Missed => Some(false),
        _ => None,
    };
    let noise = match (judged, interval) {
        (Some((_, true)), Some(i)) => format!(" [95 % CI {:.2}-{:.2}x]", i.low, i.high),
        _ => " (noise unknown: no samples)".to_string(),
    };
    let verdict = match (ratio, &ours, &reference) {
        (Some(r), Some(o), Some(reference)) => match outcome {
            TargetOutcome::Met => format!("met: {r:.2}x{noise} (target {:.2}x)", spec.factor),
            TargetOutcome::WithinNoise => {
                format!("within noise: {r:.2}x{noise} straddles the target {:.2}x", spec.factor)
            }
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
                        "MISSED by {short:.0} %: {:.0} % of copy{noise} (target {:.0} %); primlab {:.0} GB/s, copy \
                         {:.0} GB/s",
                        r * 100.0,
                        spec.factor * 100.0,
                        o.gbps,
                        reference.gbps
                    ),
                }
            }
        },
        _ => {
            let mut why = Vec::new();
            if ours.is_none() {
                why.push(format!("no checked primlab record of {} at {}", spec.op, spec.size.label()));
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
        reference,
        ratio,
        ratio_interval: interval,
        factor: spec.factor,
        met,
        outcome,
        verdict,
    }
}

/// Evaluates every target.
pub fn evaluate_all(records: &[BenchRecord], absent: &dyn Fn(&str) -> Option<String>) -> Vec<TargetResult> {
    TARGETS.iter().map(|spec| evaluate(spec, records, absent)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(implementation: &str, op: &str, variant: &str, n: usize, median: f64, bytes: u64) -> BenchRecord {
        BenchRecord { iters: 10, ..BenchRecord::synthetic(implementation, "x", op, variant, n, median, bytes) }
    }

    #[test]
    fn the_fastest_variant_meets_or_misses_by_the_right_amount() {
        let n = 1 << 28;
        let records = vec![
            record(IMPL_PRIMLAB, "reduce_sum_i32_i64", "multipass", n, 300.0, 4 * n as u64),
            record(IMPL_PRIMLAB, "reduce_sum_i32_i64", "single_pass", n, 250.0, 4 * n as u64),
            record(IMPL_CUB, "reduce_sum_i32_i64", "cub_reduce_sum_i32_i64", n, 251.0, 4 * n as u64),
        ];
        let result = evaluate(&TARGETS[0], &records, &|_| None);
        assert_eq!(result.met, Some(true));
        assert_eq!(result.ours.as_ref().unwrap().variant, "single_pass");
        assert!(result.verdict.starts_with("met: 1.00x"), "{}", result.verdict);

        let records = vec![
            record(IMPL_PRIMLAB, "exclusive_scan_i32_i64", "decoupled_lookback", n, 1250.0, 12 * n as u64),
            record(IMPL_CUB, "exclusive_scan_i32_i64", "cub", n, 1000.0, 12 * n as u64),
            record(IMPL_CEILING, "memcpy_d2d", "memcpy_d2d", n, 500.0, 8 * n as u64),
        ];
        let scan = evaluate(&TARGETS[2], &records, &|_| None);
        assert_eq!(scan.met, Some(false));
        assert!(scan.verdict.contains("MISSED by 20 %"), "{}", scan.verdict);
        assert!(scan.verdict.contains("needs <= 1000.0 us"), "{}", scan.verdict);
        // 12n / 1250 us vs 8n / 500 us: 0.6 of copy.
        let copy = evaluate(&TARGETS[3], &records, &|_| None);
        assert!((copy.ratio.unwrap() - 0.6).abs() < 1e-9);
        assert!(copy.verdict.contains("60 % of copy"), "{}", copy.verdict);
    }

    #[test]
    fn absent_baselines_are_named_never_invented() {
        let n = 1 << 28;
        let records = vec![record(IMPL_PRIMLAB, "compact_positive_i32", "single_pass", n, 600.0, 4 * n as u64)];
        let result = evaluate(&TARGETS[8], &records, &|who| (who == "cub").then(|| "absent: nvcc not found".into()));
        assert_eq!(result.met, None);
        assert_eq!(result.ratio, None);
        assert!(result.verdict.contains("no cub record (absent: nvcc not found)"), "{}", result.verdict);
        assert_eq!(result.outcome, TargetOutcome::NotMeasured);
    }

    /// `count` samples spread evenly over `centre` +- `spread`.
    fn spread(centre: f64, spread: f64, count: usize) -> Vec<f64> {
        (0..count).map(|i| centre - spread + 2.0 * spread * i as f64 / (count - 1) as f64).collect()
    }

    #[test]
    fn an_interval_straddling_the_target_is_within_noise() {
        let n = 1 << 20;
        let op = "reduce_sum_i32_i64";
        let with = |implementation, variant, centre, width| {
            record(implementation, op, variant, n, centre, 4 * n as u64).with_samples(spread(centre, width, 41))
        };
        // Target reduce_2p20 wants 1.2x cub. cub 12.0 +- 0.6 us against ours 10.0 +- 0.5 us: 1.2x, noisy.
        let noisy = vec![with(IMPL_PRIMLAB, "single_pass", 10.0, 0.5), with(IMPL_CUB, "cub", 12.0, 0.6)];
        let result = evaluate(&TARGETS[1], &noisy, &|_| None);
        assert_eq!(result.outcome, TargetOutcome::WithinNoise, "{}", result.verdict);
        assert_eq!(result.met, None);
        assert!(result.verdict.starts_with("within noise: "), "{}", result.verdict);
        let interval = result.ratio_interval.unwrap();
        assert!(interval.low < 1.2 && interval.high > 1.2, "{interval:?}");
        // Tight samples well past the target: met, with the interval in the verdict.
        let tight = vec![with(IMPL_PRIMLAB, "single_pass", 9.0, 0.01), with(IMPL_CUB, "cub", 12.0, 0.01)];
        let result = evaluate(&TARGETS[1], &tight, &|_| None);
        assert_eq!(result.outcome, TargetOutcome::Met);
        assert!(result.verdict.contains("[95 % CI 1.33-1.33x]"), "{}", result.verdict);
        // Tight and short: missed.
        let short = vec![with(IMPL_PRIMLAB, "single_pass", 11.0, 0.01), with(IMPL_CUB, "cub", 12.0, 0.01)];
        assert_eq!(evaluate(&TARGETS[1], &short, &|_| None).outcome, TargetOutcome::Missed);
    }

    #[test]
    fn hot_records_never_stand_in_for_cold_ones() {
        let n = 1 << 28;
        let mut hot = record(IMPL_PRIMLAB, "reduce_sum_i32_i64", "single_pass", n, 1.0, 4 * n as u64);
        hot.timing_mode = TimingMode::Hot;
        let records = vec![
            hot,
            record(IMPL_PRIMLAB, "reduce_sum_i32_i64", "multipass", n, 300.0, 4 * n as u64),
            record(IMPL_CUB, "reduce_sum_i32_i64", "cub", n, 250.0, 4 * n as u64),
        ];
        let result = evaluate(&TARGETS[0], &records, &|_| None);
        assert_eq!(result.ours.unwrap().variant, "multipass");
        assert_eq!(result.outcome, TargetOutcome::Missed);
        assert!(result.verdict.contains("noise unknown"), "{}", result.verdict);
    }
}
