//! One 256-thread block: per-thread fold of its items, 8 warp shuffle trees, warp partials
//! through shared memory, and a second shuffle tree in warp 0.
//!
//! # The tree, exactly (the CUDA kernels follow it)
//!
//! Notation: `t` = `threadIdx.x` (0..256), `w = t / 32`, `lane = t % 32`, `n` = items in the
//! block, `k = items_per_thread(n) = max(2, ceil(n / 256))` (2 for the 512-input reduce
//! blocks), `load(i)` = item `i` if `i < n`, else the identity. `brev5(l)` =
//! `__brev(l) >> 27` (see [`lane_position`]).
//!
//! 1. **Thread fold.** Thread `t` computes `v = load(i0) ⊕ load(i1) ⊕ … ⊕ load(i_{k-1})`,
//!    left to right, always performing all `k − 1` combines (with the identity for absent
//!    items):
//!    * [`BlockLayout::Strided`] (each thread loads one item at `block_start + threadIdx.x`
//!      and one 256 items later): `i_j = t + 256·j`. Coalesced; reorders inputs, so only for
//!      commutative operators (sum, max, min, sum-count, arg max/min, softmax merge, float
//!      sums).
//!    * [`BlockLayout::Blocked`] (order-preserving, seed offsets): thread `t` sits at position
//!      `p = 32·w + brev5(lane)` and loads the contiguous items `i_j = k·p + j`. Each warp
//!      still reads one contiguous 64-item (k = 2) window, so loads stay coalesced.
//!    * [`BlockLayout::Adjacent`] (order-preserving, ascending offsets; what
//!      `kernels/cuda/reduce.cu`'s multipass and `common/block_reduce.cuh` do): thread `t`
//!      loads `i_j = k·t + j` (the adjacent pair `2t, 2t+1`).
//! 2. **Warp tree.** Each warp runs the shfl_down tree with all 32 lanes participating:
//!    `v[l] = v[l] ⊕ v[l + off]` for `l + off < 32`, offsets 16, 8, 4, 2, 1 (Strided,
//!    Blocked: [`ShuffleOrder::Descending`]) or 1, 2, 4, 8, 16 (Adjacent:
//!    [`ShuffleOrder::Ascending`]). Lane 0 writes `warp_sums[w]`.
//! 3. **Barrier**, then **second pass in warp 0**: lane `l` loads
//!    * Strided, Adjacent: `warp_sums[l]` if `l < 8`, else the identity (every lane of the
//!      second pass participates);
//!    * Blocked: `warp_sums[brev5(l)]` if `brev5(l) < 8`, else the identity;
//!
//!    and runs the same shuffle tree; lane 0 holds the block result.
//!
//! Why the bit reversal in Blocked: the shfl_down 16..1 tree combines lane 0's value in the order
//! 0, 16, 8, 24, 4, 20, … (lane `l` contributes at position `brev5(l)`), so placing the
//! `p`-th range in lane `brev5(p)` makes every combine `(lower range) ⊕ (higher range)`. The
//! tempting "thread t holds items 2t, 2t+1" with natural lanes is **not** order-preserving
//! under the descending tree (see the warp tests for a witness); it *is* order-preserving
//! under the ascending tree, which is the Adjacent layout.
//!
//! Blocked and Adjacent build the **same** combine tree for the block result — a balanced
//! binary tree over consecutive `k`-item chunks, left operand always the lower range — and
//! differ only in which lanes hold the intermediate values; their results agree bit for bit,
//! floats included (tested).
//!
//! Overflow: every combine above is checked; an error is reported when the value carrying it
//! reaches the block result (lanes whose values the tree discards cannot fail a block).

use super::warp::{combine_lanes, lane_position, warp_tree, LaneValue, Participation, ShuffleOrder, WARP_SIZE};
use crate::operator::Operator;
use crate::ModelError;

/// Threads per block.
pub const BLOCK_THREADS: usize = 256;
/// Warps per block.
pub const WARPS_PER_BLOCK: usize = BLOCK_THREADS / WARP_SIZE;
/// Inputs per block of the reduce kernels (256 threads × 2 loads).
pub const ITEMS_PER_BLOCK: usize = 2 * BLOCK_THREADS;

/// Which items each thread folds, and which shuffle tree the warps run (see the module docs
/// for the formulas).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockLayout {
    /// The classic strided kernel: thread `t` folds items `t, t+256, t+512, …`; descending shuffle
    /// offsets; commutative operators only.
    Strided,
    /// Order-preserving with the seed's descending offsets: thread at position
    /// `p = 32·warp + brev5(lane)` folds items `k·p .. k·p + k`.
    Blocked,
    /// Order-preserving with ascending offsets — the tree of `kernels/cuda/reduce.cu`'s
    /// multipass kernels and `common/block_reduce.cuh`: thread `t` folds the adjacent items
    /// `k·t .. k·t + k` (the pair `2t, 2t+1` for 512-input blocks).
    Adjacent,
}

impl BlockLayout {
    /// Every layout.
    pub const ALL: [BlockLayout; 3] = [BlockLayout::Strided, BlockLayout::Blocked, BlockLayout::Adjacent];

    /// `"strided"`, `"blocked"` or `"adjacent"` (fixture and check names).
    pub fn name(self) -> &'static str {
        match self {
            BlockLayout::Strided => "strided",
            BlockLayout::Blocked => "blocked",
            BlockLayout::Adjacent => "adjacent",
        }
    }

    /// The warp tree's offset order under this layout.
    pub fn shuffle_order(self) -> ShuffleOrder {
        match self {
            BlockLayout::Strided | BlockLayout::Blocked => ShuffleOrder::Descending,
            BlockLayout::Adjacent => ShuffleOrder::Ascending,
        }
    }

    /// Whether the layout keeps input order (so non-commutative operators are allowed).
    pub fn preserves_order(self) -> bool {
        self != BlockLayout::Strided
    }
}

/// Items each thread folds: `max(2, ceil(n / 256))`.
pub fn items_per_thread(n: usize) -> usize {
    n.div_ceil(BLOCK_THREADS).max(2)
}

/// The position of thread `t` in the order-preserving layout: `32·(t / 32) + brev5(t % 32)`.
pub fn blocked_position(t: usize) -> usize {
    (t / WARP_SIZE) * WARP_SIZE + lane_position(t % WARP_SIZE)
}

/// Reduces `items` (one block's inputs, any length; 512 for the reduce kernels) with the
/// exact 256-thread tree described in the module docs, returning the block's lane-0 result.
///
/// Errors: `OrderNotPreserved` for [`BlockLayout::Strided`] with an operator whose
/// `is_commutative()` is false; any combine error that reaches the result (int64 overflow
/// with `primitive: "block_reduce"` or `"warp_reduce"` and the thread/lane in the detail).
/// An empty block returns the identity.
pub fn block_reduce<Op: Operator>(op: &Op, items: &[Op::Value], layout: BlockLayout) -> Result<Op::Value, ModelError> {
    if !layout.preserves_order() && !op.is_commutative() {
        return Err(ModelError::OrderNotPreserved {
            primitive: "block_reduce",
            operator: op.name(),
            layout: layout.name(),
        });
    }
    let n = items.len();
    let k = items_per_thread(n);
    let load = |i: usize| -> LaneValue<Op::Value> { Ok(items.get(i).cloned().unwrap_or_else(|| op.identity())) };
    let threads: Vec<LaneValue<Op::Value>> = (0..BLOCK_THREADS)
        .map(|t| {
            let index = |j: usize| match layout {
                BlockLayout::Strided => t + BLOCK_THREADS * j,
                BlockLayout::Blocked => k * blocked_position(t) + j,
                BlockLayout::Adjacent => k * t + j,
            };
            (1..k).fold(load(index(0)), |v, j| {
                combine_lanes(op, &v, &load(index(j)), "block_reduce", || format!("thread {t}, item {}", index(j)))
            })
        })
        .collect();
    let mut warp_sums = Vec::with_capacity(WARPS_PER_BLOCK);
    for warp in threads.chunks(WARP_SIZE) {
        warp_sums.push(warp_tree(op, warp.to_vec(), Participation::ALL, layout.shuffle_order())?);
    }
    let second: Vec<LaneValue<Op::Value>> = (0..WARP_SIZE)
        .map(|lane| {
            let slot = match layout {
                BlockLayout::Strided | BlockLayout::Adjacent => lane,
                BlockLayout::Blocked => lane_position(lane),
            };
            warp_sums.get(slot).cloned().unwrap_or_else(|| Ok(op.identity()))
        })
        .collect();
    warp_tree(op, second, Participation::ALL, layout.shuffle_order())?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::{Affine, AffineMap, ArgMax, MaxI64, SumF32, SumI64};
    use crate::reduce::reduce;
    use proptest::prelude::*;

    #[test]
    fn seed_sum_of_x() {
        let x = [3i64, -1, 4, 1, 5, -9, 2, 6];
        for layout in BlockLayout::ALL {
            assert_eq!(block_reduce(&SumI64, &x, layout), Ok(11));
        }
    }

    #[test]
    fn positions_cover_every_item_once() {
        let mut seen = [false; BLOCK_THREADS];
        for t in 0..BLOCK_THREADS {
            let p = blocked_position(t);
            assert!(!seen[p]);
            seen[p] = true;
        }
    }

    #[test]
    fn strided_refuses_non_commutative() {
        assert!(matches!(block_reduce(&Affine, &[], BlockLayout::Strided), Err(ModelError::OrderNotPreserved { .. })));
    }

    #[test]
    fn overflow_found_in_tree_order() {
        // Items 0 and 256 meet in thread 0's fold under the strided layout.
        let mut items = vec![0i64; 512];
        items[0] = i64::MAX;
        items[256] = 1;
        items[1] = -1;
        let e = block_reduce(&SumI64, &items, BlockLayout::Strided).unwrap_err();
        assert!(
            matches!(&e, ModelError::Overflow { primitive: "block_reduce", detail } if detail.starts_with("thread 0")),
            "{e}"
        );
        // Blocked and Adjacent: items 0 and 1 meet first (MAX - 1), then 256 joins later.
        assert_eq!(block_reduce(&SumI64, &items, BlockLayout::Blocked), Ok(i64::MAX));
        assert_eq!(block_reduce(&SumI64, &items, BlockLayout::Adjacent), Ok(i64::MAX));
    }

    #[test]
    fn float_tree_is_not_serial_order() {
        // The seed's cancellation, spread so the tree cancels first: different bits from the
        // serial left-to-right sum, but a fixed, reproducible answer.
        let mut items = vec![0f32; 512];
        items[0] = 1e8;
        items[1] = 1.0;
        items[256] = -1e8;
        let tree = block_reduce(&SumF32, &items, BlockLayout::Strided).unwrap();
        let serial = reduce(&SumF32, &items).unwrap();
        assert_eq!(tree, 1.0);
        assert_eq!(serial, 0.0);
    }

    fn affine_maps() -> impl Strategy<Value = Vec<AffineMap>> {
        prop::collection::vec((any::<u64>(), any::<u64>()).prop_map(|(a, b)| AffineMap { a, b }), 0..=1100)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn order_preserving_affine_equals_direct(maps in affine_maps()) {
            let direct = reduce(&Affine, &maps)?;
            prop_assert_eq!(block_reduce(&Affine, &maps, BlockLayout::Blocked)?, direct);
            prop_assert_eq!(block_reduce(&Affine, &maps, BlockLayout::Adjacent)?, direct);
        }

        #[test]
        fn sums_and_max_equal_direct(values in prop::collection::vec(any::<i32>(), 0..=1100)) {
            let wide: Vec<i64> = values.iter().map(|&v| i64::from(v)).collect();
            for layout in BlockLayout::ALL {
                prop_assert_eq!(block_reduce(&SumI64, &wide, layout)?, reduce(&SumI64, &wide)?);
                prop_assert_eq!(block_reduce(&MaxI64, &wide, layout)?, reduce(&MaxI64, &wide)?);
            }
        }

        #[test]
        fn blocked_and_adjacent_trees_agree_bitwise(values in prop::collection::vec(-1e6f32..1e6, 0..=1100)) {
            let b = block_reduce(&SumF32, &values, BlockLayout::Blocked)?;
            let a = block_reduce(&SumF32, &values, BlockLayout::Adjacent)?;
            prop_assert_eq!(b.to_bits(), a.to_bits());
        }

        #[test]
        fn argmax_ties_equal_direct(values in prop::collection::vec(-2i32..=2, 1..=600)) {
            let pairs: Vec<(f32, u64)> = values.iter().enumerate().map(|(i, &v)| (v as f32, i as u64)).collect();
            let op = ArgMax::<f32>::new();
            prop_assert_eq!(block_reduce(&op, &pairs, BlockLayout::Strided)?, reduce(&op, &pairs)?);
        }
    }
}
