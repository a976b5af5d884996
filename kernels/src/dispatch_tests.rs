//! Tests of `kernels::dispatch`: each default entry picks the documented
//! variant on both sides of every crossover, over sizes from 0 to past
//! `u32::MAX`.

use super::*;

/// Every power of two up to 2^33, each with its neighbours, and 0.
fn sizes() -> Vec<usize> {
    let mut out = vec![0];
    for k in 0..=33u32 {
        let p = 1usize << k;
        out.extend([p - 1, p, p + 1]);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// `pick(n)` is `small` up to and including `limit` and `large` above it, at
/// every stamped size and at `limit` and `limit + 1` themselves.
fn crossover<V: PartialEq + std::fmt::Debug>(pick: impl Fn(usize) -> V, limit: usize, small: V, large: V) {
    let mut stamped = sizes();
    stamped.extend([limit, limit + 1]);
    for n in stamped {
        let expected = if n <= limit { &small } else { &large };
        assert_eq!(&pick(n), expected, "size {n}, crossover {limit}");
    }
}

#[test]
fn reduce_runs_block_atomic_up_to_its_crossover_then_single_pass() {
    crossover(
        ReduceVariant::best_for,
        REDUCE_BLOCK_ATOMIC_MAX_LEN,
        ReduceVariant::BlockAtomic,
        ReduceVariant::SinglePass,
    );
}

#[test]
fn histogram_runs_global_atomics_only_for_few_samples_at_any_bin_count() {
    for bins in [1, 19, 32, 33, crate::histogram::MAX_BINS] {
        crossover(
            |n| HistogramVariant::best_for(n, bins),
            HISTOGRAM_GLOBAL_ATOMIC_MAX_ITEMS,
            HistogramVariant::GlobalAtomic,
            HistogramVariant::SharedPrivatized,
        );
    }
}

#[test]
fn the_float_default_is_a_deterministic_tree_then_two_pass() {
    crossover(
        FloatReduceVariant::best_for,
        FLOAT_REDUCE_FIXED_TREE_MAX_LEN,
        FloatReduceVariant::FixedTree,
        FloatReduceVariant::TwoPass,
    );
    for n in sizes() {
        assert!(FloatReduceVariant::best_for(n).is_deterministic(), "size {n}");
    }
}

#[test]
fn row_argmax_runs_a_warp_per_row_up_to_its_crossover_then_a_block() {
    crossover(
        ArgRowsVariant::best_for,
        ARG_ROWS_WARP_PER_ROW_MAX_COLS,
        ArgRowsVariant::WarpPerRow,
        ArgRowsVariant::BlockPerRow,
    );
}

#[test]
fn single_schedule_primitives_pick_it_at_every_size() {
    for n in sizes() {
        for kind in ScanKind::ALL {
            assert_eq!(ScanVariant::best_for(n, kind), ScanVariant::DecoupledLookback, "size {n}");
        }
        assert_eq!(ArgReduceVariant::best_for(n), ArgReduceVariant::SinglePass, "size {n}");
        assert_eq!(CompactVariant::best_for(n), CompactVariant::SinglePass, "size {n}");
        assert_eq!(ExactSumVariant::best_for(n), ExactSumVariant::CorrectlyRounded, "size {n}");
    }
}

#[test]
fn the_default_accepts_every_size_the_primitive_accepts() {
    for n in sizes().into_iter().filter(|&n| n <= crate::reduce::MAX_LEN) {
        assert!(ReduceVariant::best_for(n).max_len() >= n, "reduce {n}");
    }
    assert!(ReduceVariant::best_for(crate::reduce::MAX_LEN).max_len() >= crate::reduce::MAX_LEN);
    let scan_sizes = [crate::scan::MAX_LEN, crate::scan::LOOKBACK_MAX_LEN];
    for n in sizes().into_iter().chain(scan_sizes).filter(|&n| n <= crate::scan::LOOKBACK_MAX_LEN) {
        for kind in ScanKind::ALL {
            assert!(ScanVariant::best_for(n, kind).max_len() >= n, "scan {n}");
        }
    }
}

#[test]
fn crossovers_are_measured_sizes() {
    // Each constant is a size the bench measured: one of its powers of two
    // 2^10..2^28 (the row rule: the 32,000-column shape).
    for limit in [REDUCE_BLOCK_ATOMIC_MAX_LEN, HISTOGRAM_GLOBAL_ATOMIC_MAX_ITEMS, FLOAT_REDUCE_FIXED_TREE_MAX_LEN] {
        assert!(limit.is_power_of_two() && (10..=28).contains(&limit.trailing_zeros()), "{limit}");
    }
    const { assert!(ARG_ROWS_WARP_PER_ROW_MAX_COLS < crate::arg_reduce::MAX_ARG_ELEMENTS) };
}
