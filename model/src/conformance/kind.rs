//! The kinds of check, their names, the families and sizes each applies to, and dispatch.

use super::data::Data;
use super::{float_reduce_checks, law_checks, reduce_checks, scan_checks, softmax_checks};
use super::{Check, CheckOutcome, Mismatch};
use crate::generators::{DataFamily, MaskPolicy};
use crate::hardware::block_reduce::BlockLayout;

/// Every kind of conformance check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// `reduce/warp_reduce`: 32-lane shuffle tree (data in lanes, tail lanes identity;
    /// affine maps placed by `lane_position`) vs `reduce`; sizes ≤ 32.
    WarpReduce,
    /// `reduce/block_reduce_strided`: sum, max, min, (sum, count), arg max (f32 values) vs
    /// `reduce`; sizes ≤ 512.
    BlockReduceStrided,
    /// `reduce/block_reduce_blocked`: as above plus affine maps; sizes ≤ 512.
    BlockReduceBlocked,
    /// `reduce/block_reduce_adjacent`: the kernels' tree (adjacent pairs, ascending
    /// offsets), as above plus affine maps; sizes ≤ 512.
    BlockReduceAdjacent,
    /// `reduce/multipass_strided`: sum and arg max, and the pass count; all sizes.
    MultipassStrided,
    /// `reduce/multipass_blocked`: sum or affine maps, and the pass count; all sizes.
    MultipassBlocked,
    /// `reduce/multipass_adjacent`: the kernels' multi-pass tree; sum or affine maps, and the
    /// pass count; all sizes.
    MultipassAdjacent,
    /// `scan/blelloch`: width-512 block scan vs `exclusive_scan`, total vs `reduce`; ≤ 512.
    Blelloch,
    /// `scan/hillis_steele`: vs `inclusive_scan` and the addition count; sizes ≤ 4099.
    HillisSteele,
    /// `scan/device_scan`: width-512 recursive scan vs `exclusive_scan` and the level count.
    DeviceScan,
    /// `softmax/block_merge_tree`: GPU-order state vs the sequential state per row, f64
    /// probabilities vs the exact reference (up to 4099 columns), masked rows agree.
    SoftmaxBlockTree,
    /// `compact/laws`: count = Σ flags, destinations = exclusive scan of flags, stable output,
    /// scatter leaves the tail untouched.
    CompactLaws,
    /// `segmented/laws`: segment sums add up to the total; each segment's sum/max/arg max
    /// equals the direct one on its slice; empty segments give the identity.
    SegmentedLaws,
    /// `histogram/laws`: counts add up to the in-range samples; every i32 bin equals the exact
    /// rational floor; every f32 bin is within one of it.
    HistogramLaws,
    /// `float_sum/exact_vs_tree`: the GPU float tree is within `gamma_D · Σ|x|` of the exact
    /// sum; exact sums are additive; rounded results are the nearest floats.
    FloatSumTree,
}

fn int_families() -> Vec<String> {
    DataFamily::INT_FAMILIES.iter().map(DataFamily::name).collect()
}

fn with_affine() -> Vec<String> {
    let mut v = int_families();
    v.push(DataFamily::AffineMaps.name());
    v
}

impl CheckKind {
    /// Every kind, in report order.
    pub const ALL: [CheckKind; 15] = [
        CheckKind::WarpReduce,
        CheckKind::BlockReduceStrided,
        CheckKind::BlockReduceBlocked,
        CheckKind::BlockReduceAdjacent,
        CheckKind::MultipassStrided,
        CheckKind::MultipassBlocked,
        CheckKind::MultipassAdjacent,
        CheckKind::Blelloch,
        CheckKind::HillisSteele,
        CheckKind::DeviceScan,
        CheckKind::SoftmaxBlockTree,
        CheckKind::CompactLaws,
        CheckKind::SegmentedLaws,
        CheckKind::HistogramLaws,
        CheckKind::FloatSumTree,
    ];

    /// The `primitive` field of its checks.
    pub fn primitive(self) -> &'static str {
        match self {
            CheckKind::WarpReduce
            | CheckKind::BlockReduceStrided
            | CheckKind::BlockReduceBlocked
            | CheckKind::BlockReduceAdjacent
            | CheckKind::MultipassStrided
            | CheckKind::MultipassBlocked
            | CheckKind::MultipassAdjacent => "reduce",
            CheckKind::Blelloch | CheckKind::HillisSteele | CheckKind::DeviceScan => "scan",
            CheckKind::SoftmaxBlockTree => "softmax",
            CheckKind::CompactLaws => "compact",
            CheckKind::SegmentedLaws => "segmented_reduce",
            CheckKind::HistogramLaws => "histogram",
            CheckKind::FloatSumTree => "float_reduce",
        }
    }

    /// The `algorithm` field of its checks.
    pub fn algorithm(self) -> &'static str {
        match self {
            CheckKind::WarpReduce => "warp_reduce",
            CheckKind::BlockReduceStrided => "block_reduce_strided",
            CheckKind::BlockReduceBlocked => "block_reduce_blocked",
            CheckKind::BlockReduceAdjacent => "block_reduce_adjacent",
            CheckKind::MultipassStrided => "multipass_strided",
            CheckKind::MultipassBlocked => "multipass_blocked",
            CheckKind::MultipassAdjacent => "multipass_adjacent",
            CheckKind::Blelloch => "blelloch",
            CheckKind::HillisSteele => "hillis_steele",
            CheckKind::DeviceScan => "device_scan",
            CheckKind::SoftmaxBlockTree => "block_merge_tree",
            CheckKind::CompactLaws | CheckKind::SegmentedLaws | CheckKind::HistogramLaws => "laws",
            CheckKind::FloatSumTree => "exact_vs_tree",
        }
    }

    /// The kind with these names, if any.
    pub fn from_names(primitive: &str, algorithm: &str) -> Option<CheckKind> {
        CheckKind::ALL.into_iter().find(|k| k.primitive() == primitive && k.algorithm() == algorithm)
    }

    /// Data family names it runs on.
    pub fn families(self) -> Vec<String> {
        match self {
            CheckKind::BlockReduceStrided
            | CheckKind::MultipassStrided
            | CheckKind::CompactLaws
            | CheckKind::SegmentedLaws => int_families(),
            CheckKind::WarpReduce
            | CheckKind::BlockReduceBlocked
            | CheckKind::BlockReduceAdjacent
            | CheckKind::MultipassBlocked
            | CheckKind::MultipassAdjacent
            | CheckKind::Blelloch
            | CheckKind::HillisSteele
            | CheckKind::DeviceScan => with_affine(),
            CheckKind::SoftmaxBlockTree => {
                MaskPolicy::ALL.iter().map(|&mask| DataFamily::SoftmaxRows { mask }.name()).collect()
            }
            CheckKind::HistogramLaws => {
                let mut v = int_families();
                v.push(DataFamily::UniformFloat.name());
                v
            }
            CheckKind::FloatSumTree => [
                DataFamily::UniformFloat,
                DataFamily::IllConditioned { condition: 1e10 },
                DataFamily::IllConditioned { condition: 1e30 },
            ]
            .iter()
            .map(DataFamily::name)
            .collect(),
        }
    }

    /// Largest size it models (the hardware scope), or `usize::MAX`.
    pub fn max_size(self) -> usize {
        match self {
            CheckKind::WarpReduce => 32,
            CheckKind::BlockReduceStrided
            | CheckKind::BlockReduceBlocked
            | CheckKind::BlockReduceAdjacent
            | CheckKind::Blelloch => 512,
            CheckKind::HillisSteele => 4099,
            CheckKind::SoftmaxBlockTree => 131_072,
            _ => usize::MAX,
        }
    }

    /// Whether a check of this kind runs on `family` at `size`. Softmax only runs at the
    /// boundary widths up to 4,099 and at 131,072 (rows wider than that are out of contract);
    /// every other kind at any size up to [`CheckKind::max_size`] (131,072 itself only for
    /// softmax).
    pub fn applies_to(self, family: &str, size: usize) -> bool {
        if !self.families().iter().any(|f| f == family) || size == 0 || size > self.max_size() {
            return false;
        }
        match self {
            CheckKind::SoftmaxBlockTree => size <= 4099 || size == 131_072,
            _ => size != 131_072,
        }
    }

    pub(super) fn run(self, check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
        match self {
            CheckKind::WarpReduce => reduce_checks::warp(check, data),
            CheckKind::BlockReduceStrided => reduce_checks::block(check, data, BlockLayout::Strided),
            CheckKind::BlockReduceBlocked => reduce_checks::block(check, data, BlockLayout::Blocked),
            CheckKind::BlockReduceAdjacent => reduce_checks::block(check, data, BlockLayout::Adjacent),
            CheckKind::MultipassStrided => reduce_checks::multipass(check, data, BlockLayout::Strided),
            CheckKind::MultipassBlocked => reduce_checks::multipass(check, data, BlockLayout::Blocked),
            CheckKind::MultipassAdjacent => reduce_checks::multipass(check, data, BlockLayout::Adjacent),
            CheckKind::Blelloch => scan_checks::blelloch(check, data),
            CheckKind::HillisSteele => scan_checks::hillis_steele(check, data),
            CheckKind::DeviceScan => scan_checks::device(check, data),
            CheckKind::SoftmaxBlockTree => softmax_checks::block_tree(check, data),
            CheckKind::CompactLaws => law_checks::compact(check, data),
            CheckKind::SegmentedLaws => law_checks::segmented(check, data),
            CheckKind::HistogramLaws => law_checks::histogram(check, data),
            CheckKind::FloatSumTree => float_reduce_checks::exact_vs_tree(check, data),
        }
    }
}
