//! Tests of `bench::targets`: which record a target judges, and the verdict
//! (met, missed, within noise, not measured) on it.

use super::*;

const REDUCE: &str = "reduce_sum_i32_i64";
const SCAN: &str = "exclusive_scan_i32_i64";

fn record(implementation: &str, op: &str, variant: &str, n: usize, median: f64, bytes: u64) -> BenchRecord {
    BenchRecord { iters: 10, ..BenchRecord::synthetic(implementation, "x", op, variant, n, median, bytes) }
}

/// The default entry's record of `op`, which ran `picked`.
fn default_record(op: &str, picked: &str, n: usize, median: f64, bytes: u64) -> BenchRecord {
    let mut r = record(IMPL_PRIMLAB, op, DEFAULT_VARIANT, n, median, bytes);
    r.params = serde_json::json!({ "picked": picked });
    r
}

/// A reduce record: 4 logical bytes per int32 input element.
fn reduce_record(implementation: &str, variant: &str, n: usize, median: f64) -> BenchRecord {
    record(implementation, REDUCE, variant, n, median, 4 * n as u64)
}

/// The reduce default entry's record, which ran `picked`.
fn default_reduce_record(picked: &str, n: usize, median: f64) -> BenchRecord {
    default_record(REDUCE, picked, n, median, 4 * n as u64)
}

/// `count` samples spread evenly over `centre` +- `spread`.
fn spread(centre: f64, spread: f64, count: usize) -> Vec<f64> {
    (0..count).map(|i| centre - spread + 2.0 * spread * i as f64 / (count - 1) as f64).collect()
}

/// `record` with 41 samples over `centre` +- `width` (its median becomes `centre`).
fn sampled(record: BenchRecord, centre: f64, width: f64) -> BenchRecord {
    record.with_samples(spread(centre, width, 41))
}

#[test]
fn the_fastest_variant_meets_or_misses_by_the_right_amount() {
    let n = 1 << 28;
    let records = vec![
        reduce_record(IMPL_PRIMLAB, "multipass", n, 300.0),
        reduce_record(IMPL_PRIMLAB, "single_pass", n, 250.0),
        reduce_record(IMPL_CUB, "cub_reduce_sum_i32_i64", n, 251.0),
    ];
    let result = evaluate(&TARGETS[0], &records, &|_| None);
    assert_eq!(result.met, Some(true));
    assert_eq!(result.ours.as_ref().unwrap().variant, "single_pass");
    assert!(result.verdict.starts_with("met: 1.00x"), "{}", result.verdict);
    assert!(result.verdict.contains("no default-entry records"), "{}", result.verdict);

    let records = vec![
        record(IMPL_PRIMLAB, SCAN, "decoupled_lookback", n, 1250.0, 12 * n as u64),
        record(IMPL_CUB, SCAN, "cub", n, 1000.0, 12 * n as u64),
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
fn the_default_entry_is_judged_and_the_fastest_variant_only_shown() {
    let n = 1 << 28;
    let records = vec![
        reduce_record(IMPL_PRIMLAB, "block_atomic", n, 260.0),
        reduce_record(IMPL_PRIMLAB, "single_pass", n, 240.0),
        default_reduce_record("block_atomic", n, 262.0),
        reduce_record(IMPL_CUB, "cub", n, 250.0),
    ];
    let result = evaluate(&TARGETS[0], &records, &|_| None);
    // The best variant would meet 1.0x cub; the default entry does not.
    assert_eq!(result.outcome, TargetOutcome::Missed, "{}", result.verdict);
    let ours = result.ours.as_ref().unwrap();
    assert_eq!((ours.variant.as_str(), ours.picked.as_deref()), (DEFAULT_VARIANT, Some("block_atomic")));
    assert_eq!(ours.name(), "default (block_atomic)");
    assert_eq!(result.best.as_ref().unwrap().variant, "single_pass");
    assert!((result.best_ratio.unwrap() - 250.0 / 240.0).abs() < 1e-12);
    assert!((result.ratio.unwrap() - 250.0 / 262.0).abs() < 1e-12);
    assert!(result.verdict.contains("primlab 262.0 us"), "{}", result.verdict);
    assert!(!result.verdict.contains("fastest variant"), "{}", result.verdict);
}

#[test]
fn a_default_record_never_stands_for_the_fastest_variant() {
    let n = 1 << 20;
    let records =
        vec![default_reduce_record("block_atomic", n, 5.0), reduce_record(IMPL_PRIMLAB, "block_atomic", n, 6.0)];
    assert_eq!(fastest(&records, IMPL_PRIMLAB, REDUCE, BenchSize::Elements(n)).unwrap().variant, "block_atomic");
    assert_eq!(default_entry(&records, REDUCE, BenchSize::Elements(n)).unwrap().median_us, Some(5.0));
}

#[test]
fn a_run_with_default_entries_but_none_for_a_target_is_not_measured() {
    let n = 1 << 28;
    let records = vec![
        default_record(SCAN, "decoupled_lookback", n, 1000.0, 12 * n as u64),
        reduce_record(IMPL_PRIMLAB, "single_pass", n, 240.0),
        reduce_record(IMPL_CUB, "cub", n, 250.0),
    ];
    let result = evaluate(&TARGETS[0], &records, &|_| None);
    assert_eq!(result.outcome, TargetOutcome::NotMeasured);
    assert!(result.ours.is_none() && result.ratio.is_none());
    assert!(result.verdict.contains("no default-entry primlab record"), "{}", result.verdict);
    assert!(result.verdict.contains("fastest variant single_pass 240.0 us"), "{}", result.verdict);
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

#[test]
fn the_default_entry_is_met_missed_or_within_noise_by_its_interval() {
    let n = 1 << 20;
    // Target reduce_2p20 wants 1.2x cub. Each case: the default entry's
    // centre and spread, against cub 12.0 +- `cub_width` us; a named variant
    // that would always meet it runs beside them and never changes the verdict.
    for (centre, width, cub_width, expected) in [
        (10.0, 0.5, 0.6, TargetOutcome::WithinNoise),
        (9.0, 0.01, 0.01, TargetOutcome::Met),
        (11.0, 0.01, 0.01, TargetOutcome::Missed),
    ] {
        let records = vec![
            sampled(default_reduce_record("block_atomic", n, centre), centre, width),
            sampled(reduce_record(IMPL_PRIMLAB, "single_pass", n, 5.0), 5.0, 0.01),
            sampled(reduce_record(IMPL_CUB, "cub", n, 12.0), 12.0, cub_width),
        ];
        let result = evaluate(&TARGETS[1], &records, &|_| None);
        assert_eq!(result.outcome, expected, "{}", result.verdict);
        assert_eq!(result.ours.as_ref().unwrap().picked.as_deref(), Some("block_atomic"));
        let interval = result.ratio_interval.unwrap();
        match expected {
            TargetOutcome::WithinNoise => {
                assert_eq!(result.met, None);
                assert!(result.verdict.starts_with("within noise: "), "{}", result.verdict);
                assert!(interval.low < 1.2 && interval.high > 1.2, "{interval:?}");
            }
            TargetOutcome::Met => {
                assert_eq!(result.met, Some(true));
                assert!(result.verdict.contains("[95 % CI 1.33-1.33x]"), "{}", result.verdict);
            }
            _ => assert_eq!(result.met, Some(false)),
        }
    }
}

#[test]
fn outcome_of_uses_the_interval_when_known_and_the_ratio_otherwise() {
    let interval = |low, high| Some(Interval { low, high });
    assert_eq!(outcome_of(1.3, interval(1.25, 1.35), 1.2), TargetOutcome::Met);
    assert_eq!(outcome_of(1.1, interval(1.05, 1.15), 1.2), TargetOutcome::Missed);
    assert_eq!(outcome_of(1.2, interval(1.15, 1.25), 1.2), TargetOutcome::WithinNoise);
    assert_eq!(outcome_of(1.2, None, 1.2), TargetOutcome::Met);
    assert_eq!(outcome_of(1.19, None, 1.2), TargetOutcome::Missed);
}

#[test]
fn hot_records_never_stand_in_for_cold_ones() {
    let n = 1 << 28;
    let mut hot = reduce_record(IMPL_PRIMLAB, "single_pass", n, 1.0);
    hot.timing_mode = TimingMode::Hot;
    let mut hot_default = default_reduce_record("single_pass", n, 1.0);
    hot_default.timing_mode = TimingMode::Hot;
    let records = vec![
        hot,
        hot_default,
        default_reduce_record("single_pass", n, 300.0),
        reduce_record(IMPL_PRIMLAB, "multipass", n, 310.0),
        reduce_record(IMPL_CUB, "cub", n, 250.0),
    ];
    let result = evaluate(&TARGETS[0], &records, &|_| None);
    assert_eq!(result.ours.unwrap().median_us, 300.0);
    assert_eq!(result.best.unwrap().variant, "multipass");
    assert_eq!(result.outcome, TargetOutcome::Missed);
    assert!(result.verdict.contains("noise unknown"), "{}", result.verdict);
}

/// The copy ceiling of `implementation` (the harness's or cub_bench's) at `n` elements.
fn copy_record(implementation: &str, n: usize, median: f64) -> BenchRecord {
    record(implementation, COPY_OP, COPY_OP, n, median, 8 * n as u64)
}

#[test]
fn the_program_margin_is_the_copy_disagreement_at_the_nearest_size() {
    let records = vec![
        copy_record(IMPL_CEILING, 1 << 20, 9.6),
        copy_record(IMPL_CUB, 1 << 20, 7.9),
        copy_record(IMPL_CEILING, 1 << 28, 508.0),
        copy_record(IMPL_CUB, 1 << 28, 508.0),
        // Only one program timed 2^24: not a candidate.
        copy_record(IMPL_CEILING, 1 << 24, 40.0),
    ];
    let m = program_margin(&records, BenchSize::Elements(1 << 21)).unwrap();
    assert_eq!(m.copy_elements, 1 << 20);
    assert!((m.log_ratio - (9.6f64 / 7.9).ln()).abs() < 1e-12);
    assert!((m.percent() - 21.52).abs() < 0.01, "{}", m.percent());
    // A row shape is placed by its element count: 8192 x 32000 is nearest 2^28.
    let rows = program_margin(&records, BenchSize::Rows { rows: 8192, cols: 32000 }).unwrap();
    assert_eq!((rows.copy_elements, rows.log_ratio), (1 << 28, 0.0));
    // The margin is symmetric: the harness faster than cub_bench widens as much.
    let flipped = vec![copy_record(IMPL_CEILING, 1 << 20, 7.9), copy_record(IMPL_CUB, 1 << 20, 9.6)];
    let back = program_margin(&flipped, BenchSize::Elements(1 << 20)).unwrap();
    assert!((back.log_ratio - m.log_ratio).abs() < 1e-12, "{back:?} {m:?}");
    // No cub copy (a run without CUB): no margin.
    assert_eq!(program_margin(&records[..1], BenchSize::Elements(1 << 20)), None);
}

#[test]
fn a_baseline_verdict_is_taken_on_the_interval_widened_by_the_program_margin() {
    let n = 1 << 20;
    // reduce_2p20 wants 1.2x cub: 12.0 / 10.9 = 1.10x with a tight interval.
    let base = vec![
        sampled(default_reduce_record("block_atomic", n, 10.9), 10.9, 0.01),
        sampled(reduce_record(IMPL_CUB, "cub", n, 12.0), 12.0, 0.01),
    ];
    let alone = evaluate(&TARGETS[1], &base, &|_| None);
    assert_eq!(alone.outcome, TargetOutcome::Missed, "{}", alone.verdict);
    assert_eq!((alone.program_margin, alone.judged_interval), (None, alone.ratio_interval));
    // The programs agree on the copy: still missed, and the verdict says by how little they disagreed.
    let mut agree = base.clone();
    agree.extend([copy_record(IMPL_CEILING, n, 8.0), copy_record(IMPL_CUB, n, 8.0)]);
    let agreed = evaluate(&TARGETS[1], &agree, &|_| None);
    assert_eq!(agreed.outcome, TargetOutcome::Missed, "{}", agreed.verdict);
    assert!(agreed.verdict.contains("with the 0.0 % by which"), "{}", agreed.verdict);
    // They disagree by 22 %: 1.10x can no longer be told from 1.2x.
    let mut disagree = base;
    disagree.extend([copy_record(IMPL_CEILING, n, 9.6), copy_record(IMPL_CUB, n, 7.9)]);
    let widened = evaluate(&TARGETS[1], &disagree, &|_| None);
    assert_eq!(widened.outcome, TargetOutcome::WithinNoise, "{}", widened.verdict);
    let (within, judged) = (widened.ratio_interval.unwrap(), widened.judged_interval.unwrap());
    assert!(within.high < 1.2 && judged.low < within.low && judged.high > 1.2, "{within:?} {judged:?}");
    assert!(widened.verdict.contains("21.5 % by which the two programs' timings"), "{}", widened.verdict);
}

#[test]
fn the_copy_target_is_one_process_and_never_widened() {
    let n = 1 << 28;
    let records = vec![
        sampled(default_record(SCAN, "decoupled_lookback", n, 1000.0, 12 * n as u64), 1000.0, 1.0),
        sampled(copy_record(IMPL_CEILING, n, 500.0), 500.0, 0.5),
        copy_record(IMPL_CUB, n, 400.0),
    ];
    let copy = evaluate(&TARGETS[3], &records, &|_| None);
    assert_eq!(copy.program_margin, None);
    assert_eq!(copy.judged_interval, copy.ratio_interval);
}
