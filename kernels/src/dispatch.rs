//! The default entry point of every whole-array primitive: which variant to
//! run for a given size, as [`crate::SoftmaxVariant::best_for`] and
//! [`crate::SegmentedVariant::best_for`] already do for the row and segment
//! primitives. Call `XVariant::best_for(..)` and build the plan with its
//! answer; the bench times that choice as the `default` record of each op and
//! judges the targets on it.
//!
//! Contract of every `best_for` here: it is a pure function of its
//! arguments (the same size always runs the same schedule, so a
//! deterministic variant stays bitwise reproducible through the default
//! entry), and the variant it returns accepts every size the primitive
//! accepts (it never answers a bounded variant such as `Serial`).
//!
//! The crossovers are the named constants below, each the largest size at
//! which the smaller-size schedule had the lower median in the H200 bench
//! receipt (full run, sizes 2^10, 2^12, ..., 2^28 and the softmax shapes,
//! CUDA events around each cold call; medians in microseconds quoted on each
//! constant). Between two measured sizes the rule keeps the schedule of the
//! smaller one. A retune is an edit of these constants and their evidence.

use crate::{
    ArgReduceVariant, ArgRowsVariant, CompactVariant, ExactSumVariant, FloatReduceVariant, HistogramVariant,
    ReduceVariant, ScanKind, ScanVariant, TopkVariant,
};

/// Largest `n` whose int32 -> int64 sum runs [`ReduceVariant::BlockAtomic`];
/// longer arrays run [`ReduceVariant::SinglePass`]. Measured medians
/// (block_atomic / single_pass): 2^20 7.47 / 9.62 us, 2^22 10.53 / 12.53,
/// 2^24 22.45 / 23.74, 2^26 71.57 / 69.60, 2^28 260.21 / 244.35; block_atomic
/// was also the faster one at every size from 2^10.
pub const REDUCE_BLOCK_ATOMIC_MAX_LEN: usize = 1 << 24;

/// Largest `n` histogrammed with [`HistogramVariant::GlobalAtomic`]; more
/// samples run [`HistogramVariant::SharedPrivatized`]. Measured with 19 unit
/// bins (global_atomic / shared_privatized): 2^10 8.16 / 9.54 us, 2^12
/// 8.03 / 8.18, 2^14 10.98 / 9.02, 2^16 19.42 / 7.39, then global atomics
/// fall far behind (2^20 233.71 / 22.14). The rule reads `n` only: the bin
/// count was not varied in the measurement.
pub const HISTOGRAM_GLOBAL_ATOMIC_MAX_ITEMS: usize = 1 << 12;

/// Largest `n` whose deterministic float sum runs
/// [`FloatReduceVariant::FixedTree`]; longer arrays run
/// [`FloatReduceVariant::TwoPass`] (both fixed-order, bitwise reproducible
/// for a given `n`). Measured f32 medians (fixed_tree / two_pass): 2^10
/// 7.20 / 11.10 us, 2^12 6.50 / 9.84, 2^16 8.16 / 8.54, 2^18 9.28 / 10.08,
/// 2^20 10.59 / 10.88, 2^22 12.61 / 12.30, 2^24 24.80 / 24.54, 2^26
/// 70.46 / 66.69, 2^28 240.88 / 240.58. Exception: at 2^14 two_pass was
/// faster (10.62 / 8.42). bf16 agrees except at 2^14 and 2^18 (two_pass
/// ahead by under 1 us) and at 2^22 (fixed_tree ahead, 10.46 / 10.75).
/// The non-deterministic atomic variants are never the default.
pub const FLOAT_REDUCE_FIXED_TREE_MAX_LEN: usize = 1 << 20;

/// Longest row whose argmax runs [`ArgRowsVariant::WarpPerRow`]; longer
/// rows run [`ArgRowsVariant::BlockPerRow`]. Measured f32 medians
/// (warp_per_row / block_per_row): [65536, 33] 30.53 / 148.99 us,
/// [4096, 1024] 12.83 / 20.06, [4096, 4096] 27.23 / 30.42, [8192, 32000]
/// 247.92 / 257.94, [1024, 131072] 458.91 / 161.82.
pub const ARG_ROWS_WARP_PER_ROW_MAX_COLS: usize = 32_000;

/// Fewest columns a top-k row needs for [`TopkVariant::GridThresholdSelect`] (with at most
/// [`TOPK_GRID_MAX_ROWS`] rows): the narrowest decoder vocabulary the bench times. Measured
/// on the H100 (2026-12-06, f32, medians in us, grid / block): [1, 32000] k = 1 38.8 / 100,
/// k = 2048 73.9 / 136; [64, 32000] k = 50 54.0 / 107, k = 2048 115 / 135; [256, 32000] k = 50
/// 86.6 / 149, k = 2048 208 / 195 (the only decoder shape where the block schedule led).
/// Narrower rows were not timed: below this a block per row stays the default.
pub const TOPK_GRID_MIN_COLS: usize = 32_000;

/// Most rows [`TopkVariant::GridThresholdSelect`] is picked for: the most the bench timed.
/// Measured on the H100 (2026-12-06, f32, grid / block): [256, 128256] k = 1 213 / 719 us,
/// k = 2048 412 / 777; [256, 256000] k = 1 374 / 1404, k = 2048 725 / 1485. (At 128 the
/// guess before these figures sent 256-row batches to the block schedule, 0.7x `torch.topk`.)
pub const TOPK_GRID_MAX_ROWS: usize = 256;

impl TopkVariant {
    /// The top-k schedule for `rows` rows of `cols` columns (crossovers measured, see
    /// [`TOPK_GRID_MIN_COLS`] and [`TOPK_GRID_MAX_ROWS`]); either variant accepts every shape the other does up to
    /// 65,535 rows, and the block schedule takes more.
    pub fn best_for(rows: usize, cols: usize) -> TopkVariant {
        if cols >= TOPK_GRID_MIN_COLS && rows <= TOPK_GRID_MAX_ROWS {
            TopkVariant::GridThresholdSelect
        } else {
            TopkVariant::BlockRadixSelect
        }
    }
}

impl ReduceVariant {
    /// The default schedule of a whole-array reduction of `n` items:
    /// `BlockAtomic` up to [`REDUCE_BLOCK_ATOMIC_MAX_LEN`], `SinglePass`
    /// beyond. Measured on the int32 -> int64 sum; affine maps follow the
    /// same rule.
    pub fn best_for(n: usize) -> ReduceVariant {
        if n <= REDUCE_BLOCK_ATOMIC_MAX_LEN {
            ReduceVariant::BlockAtomic
        } else {
            ReduceVariant::SinglePass
        }
    }
}

impl ScanVariant {
    /// The default schedule of a scan of `n` items: `DecoupledLookback` at
    /// every size and for both kinds (`kind` is part of the signature so the
    /// policy can depend on it). It had the lowest median of primlab's
    /// variants at every measured size, exclusive and inclusive (e.g.
    /// exclusive 2^10 10.40 us against blelloch 15.84, 2^28 1155.73 against
    /// 4778.54).
    pub fn best_for(n: usize, kind: ScanKind) -> ScanVariant {
        let _ = (n, kind);
        ScanVariant::DecoupledLookback
    }
}

impl ArgReduceVariant {
    /// The default whole-array argmax / argmin schedule for `n` items:
    /// `SinglePass` at every size. It had the lower median at every measured
    /// size (2^10 10.59 us against two_pass 13.02, 2^28 247.38 against
    /// 258.11).
    pub fn best_for(n: usize) -> ArgReduceVariant {
        let _ = n;
        ArgReduceVariant::SinglePass
    }
}

impl ArgRowsVariant {
    /// The default per-row schedule for rows of `cols` items: `WarpPerRow`
    /// up to [`ARG_ROWS_WARP_PER_ROW_MAX_COLS`], `BlockPerRow` beyond.
    pub fn best_for(cols: usize) -> ArgRowsVariant {
        if cols <= ARG_ROWS_WARP_PER_ROW_MAX_COLS {
            ArgRowsVariant::WarpPerRow
        } else {
            ArgRowsVariant::BlockPerRow
        }
    }
}

impl CompactVariant {
    /// The default compaction schedule for `n` items: `SinglePass` at every
    /// size. It had the lower median at every measured size (2^10 9.17 us
    /// against three_phase 15.46, 2^28 700.08 against 3699.44).
    pub fn best_for(n: usize) -> CompactVariant {
        let _ = n;
        CompactVariant::SinglePass
    }
}

impl HistogramVariant {
    /// The default histogram schedule for `n` samples into `bins` bins:
    /// `GlobalAtomic` up to [`HISTOGRAM_GLOBAL_ATOMIC_MAX_ITEMS`],
    /// `SharedPrivatized` beyond (`bins` is part of the signature so the
    /// policy can depend on it; today it does not).
    pub fn best_for(n: usize, bins: usize) -> HistogramVariant {
        let _ = bins;
        if n <= HISTOGRAM_GLOBAL_ATOMIC_MAX_ITEMS {
            HistogramVariant::GlobalAtomic
        } else {
            HistogramVariant::SharedPrivatized
        }
    }
}

impl FloatReduceVariant {
    /// The default float sum of `n` items, always a deterministic schedule
    /// ([`FloatReduceVariant::is_deterministic`]): `FixedTree` up to
    /// [`FLOAT_REDUCE_FIXED_TREE_MAX_LEN`], `TwoPass` beyond; f32 and bf16
    /// inputs share the rule.
    pub fn best_for(n: usize) -> FloatReduceVariant {
        if n <= FLOAT_REDUCE_FIXED_TREE_MAX_LEN {
            FloatReduceVariant::FixedTree
        } else {
            FloatReduceVariant::TwoPass
        }
    }
}

impl ExactSumVariant {
    /// The default correctly rounded sum of `n` items: `CorrectlyRounded`,
    /// the only schedule (with [`crate::ExactSumGrid::Auto`], as
    /// [`crate::Gpu::exact_sum_f32`] runs it).
    pub fn best_for(n: usize) -> ExactSumVariant {
        let _ = n;
        ExactSumVariant::CorrectlyRounded
    }
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
