//! Tests of `harness bench --gpus N`: partition of the work, the oracle and the analysis (no GPU).

use super::*;

#[test]
fn the_oracle_answers_prefixes() {
    let n = 3 * ORACLE_BLOCK + 17;
    let oracle = PrefixOracle::new(n);
    let direct = |i: u64| (0..i).map(|j| bench_value(SEED, j) as i64).sum::<i64>();
    for i in [0, 1, 2, ORACLE_BLOCK - 1, ORACLE_BLOCK, ORACLE_BLOCK + 1, 2 * ORACLE_BLOCK + 5, n] {
        assert_eq!(oracle.prefix(i), direct(i), "i={i}");
    }
}

#[test]
fn the_bench_sizes_obey_the_shard_limits() {
    // Weak at 8 GPUs needs the small-value bound (2^33 values).
    assert!(partition(8 * WEAK_PER_GPU, 8, BENCH_VALUES).is_ok());
    assert!(partition(8 * WEAK_PER_GPU, 8, ValueRange::ANY_I32).is_err());
    // Strong: 2^32 fits 2 GPUs, and 1 (the reduce and scan take 64-bit sizes).
    assert!(partition(STRONG_TOTAL, 2, BENCH_VALUES).is_ok());
    assert!(partition(STRONG_TOTAL, 1, BENCH_VALUES).is_ok());
    // Memory per GPU: 2^30 weak = 12 GiB + scratch; 2^32 on one GPU = 48 GiB + scratch.
    let weak = rank_bytes(1 << 30, 8, 132) as f64 / (1u64 << 30) as f64;
    assert!((12.0..12.1).contains(&weak), "{weak}");
    let strong = rank_bytes(1 << 32, 1, 132) as f64 / (1u64 << 30) as f64;
    assert!((48.0..48.1).contains(&strong), "{strong}");
}

#[test]
fn medians_and_the_slowest_gpu() {
    assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    assert!(median(vec![]).is_nan());
    let a = vec![[1.0, 0.1, 0.0, 1.1], [1.0, 0.1, 0.0, 1.1], [1.0, 0.1, 0.0, 1.1]];
    let b = vec![[2.0, 0.2, 0.5, 2.7], [1.0, 0.1, 0.5, 1.6], [1.0, 0.1, 0.5, 1.6]];
    let t = summarise(&[&a, &b], &[&vec![0.01, 0.02, 0.03], &vec![0.02, 0.02, 0.02]], &[&vec![0.4], &vec![0.5]]);
    assert_eq!(t.offset_alone_ms, 0.5);
    assert_eq!(summarise(&[&a], &[], &[]).offset_alone_ms, 0.0);
    assert_eq!(t.total_ms, 1.6);
    assert_eq!(t.offset_ms, 0.5);
    assert_eq!(t.combine_alone_ms, 0.02);
    assert_eq!(t.per_gpu_total_ms, vec![1.1, 1.6]);
}

#[test]
fn efficiencies_and_targets() {
    let timing = |total: f64, combine: f64| Timing {
        total_ms: total,
        local_ms: total - combine,
        combine_ms: combine,
        offset_ms: 0.0,
        combine_alone_ms: combine,
        offset_alone_ms: 0.5,
        per_gpu_total_ms: vec![],
    };
    let config = |workload, gpus: usize, total, combine| ConfigResult {
        workload,
        gpus,
        n: 0,
        per_gpu: vec![1 << 30; gpus],
        reduce: Some(timing(total, combine)),
        scan: None,
        verified: Some(true),
        notes: vec![],
    };
    let configs = vec![
        config(Workload::Weak, 1, 1.0, 0.01),
        config(Workload::Weak, 2, 1.05, 0.05),
        config(Workload::Weak, 4, 1.25, 0.2),
        config(Workload::Strong, 1, 4.0, 0.01),
        config(Workload::Strong, 2, 2.5, 0.05),
    ];
    let a = analyse(&configs);
    let find = |w, g| a.iter().find(|d| d.workload == w && d.gpus == g).unwrap();
    let one = find(Workload::Weak, 1);
    assert_eq!(one.weak_target, None, "not judged on one GPU");
    assert!((one.projected_efficiency.unwrap() - 1.0 / 1.5).abs() < 1e-12, "{one:?}");
    assert_eq!(find(Workload::Weak, 2).projected_efficiency, None);
    let two = find(Workload::Weak, 2);
    assert!((two.efficiency.unwrap() - 1.0 / 1.05).abs() < 1e-12);
    assert_eq!((two.weak_target, two.combine_target), (Some("meets"), Some("meets")));
    let four = find(Workload::Weak, 4);
    assert_eq!((four.weak_target, four.combine_target), (Some("misses"), Some("misses")));
    let strong = find(Workload::Strong, 2);
    assert_eq!(strong.speedup, Some(1.6));
    assert_eq!(strong.efficiency, Some(0.8));
    assert_eq!(strong.weak_target, None);
}
