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
//!    * [`BlockLayout::Strided`] (seed 000: "one at block_start + threadIdx.x and one 256
//!      elements later"): `i_j = t + 256·j`. Coalesced; reorders inputs, so only for
//!      commutative operators (sum, max, min, sum-count, arg max/min, softmax merge, float
//!      sums).
//!    * [`BlockLayout::Blocked`] (order-preserving): thread `t` sits at position
//!      `p = 32·w + brev5(lane)` and loads the contiguous items `i_j = k·p + j`. Each warp
//!      still reads one contiguous 64-item (k = 2) window, so loads stay coalesced.
//! 2. **Warp tree.** Each warp runs [`warp_reduce`](super::warp::warp_reduce)'s shfl_down
//!    tree, offsets 16, 8, 4, 2, 1, all 32 lanes participating: `v[l] = v[l] ⊕ v[l + off]`
//!    for `l + off < 32`. Lane 0 writes `warp_sums[w]`.
//! 3. **Barrier**, then **second pass in warp 0**: lane `l` loads
//!    * Strided: `warp_sums[l]` if `l < 8`, else the identity (seed 000);
//!    * Blocked: `warp_sums[brev5(l)]` if `brev5(l) < 8`, else the identity;
//!
//!    and runs the same shfl_down tree; lane 0 holds the block result.
//!
//! Why the bit reversal: the shfl_down 16..1 tree combines lane 0's value in the order
//! 0, 16, 8, 24, 4, 20, … (lane `l` contributes at position `brev5(l)`), so placing the
//! `p`-th range in lane `brev5(p)` makes every combine `(lower range) ⊕ (higher range)`. The
//! tempting "thread t holds items 2t, 2t+1" with natural lanes is **not** order-preserving
//! under this tree (see the warp tests for a witness).
//!
//! Overflow: every combine above is checked; an error is reported when the value carrying it
//! reaches the block result (lanes whose values the tree discards cannot fail a block).

use super::warp::{combine_lanes, lane_position, warp_tree, LaneValue, Participation, WARP_SIZE};
use crate::operator::Operator;
use crate::ModelError;

/// Threads per block.
pub const BLOCK_THREADS: usize = 256;
/// Warps per block.
pub const WARPS_PER_BLOCK: usize = BLOCK_THREADS / WARP_SIZE;
/// Inputs per block of the reduce kernels (256 threads × 2 loads).
pub const ITEMS_PER_BLOCK: usize = 2 * BLOCK_THREADS;

/// Which items each thread folds before the warp tree (see the module docs for the formulas).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockLayout {
    /// Thread `t` folds items `t, t+256, t+512, …`; commutative operators only.
    Strided,
    /// Thread at position `p = 32·warp + brev5(lane)` folds items `k·p .. k·p + k`;
    /// order-preserving for every associative operator.
    Blocked,
}

impl BlockLayout {
    /// `"strided"` or `"blocked"` (fixture and check names).
    pub fn name(self) -> &'static str {
        match self {
            BlockLayout::Strided => "strided",
            BlockLayout::Blocked => "blocked",
        }
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
    if layout == BlockLayout::Strided && !op.is_commutative() {
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
            };
            (1..k).fold(load(index(0)), |v, j| {
                combine_lanes(op, &v, &load(index(j)), "block_reduce", || format!("thread {t}, item {}", index(j)))
            })
        })
        .collect();
    let mut warp_sums = Vec::with_capacity(WARPS_PER_BLOCK);
    for warp in threads.chunks(WARP_SIZE) {
        warp_sums.push(warp_tree(op, warp.to_vec(), Participation::ALL)?);
    }
    let second: Vec<LaneValue<Op::Value>> = (0..WARP_SIZE)
        .map(|lane| {
            let slot = match layout {
                BlockLayout::Strided => lane,
                BlockLayout::Blocked => lane_position(lane),
            };
            warp_sums.get(slot).cloned().unwrap_or_else(|| Ok(op.identity()))
        })
        .collect();
    warp_tree(op, second, Participation::ALL)?
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
        for layout in [BlockLayout::Strided, BlockLayout::Blocked] {
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
        // Blocked: items 0 and 1 meet first (MAX - 1), then 256 joins later: no overflow.
        assert_eq!(block_reduce(&SumI64, &items, BlockLayout::Blocked), Ok(i64::MAX));
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
        fn blocked_affine_equals_direct(maps in affine_maps()) {
            prop_assert_eq!(block_reduce(&Affine, &maps, BlockLayout::Blocked)?, reduce(&Affine, &maps)?);
        }

        #[test]
        fn sums_and_max_equal_direct(values in prop::collection::vec(any::<i32>(), 0..=1100)) {
            let wide: Vec<i64> = values.iter().map(|&v| i64::from(v)).collect();
            for layout in [BlockLayout::Strided, BlockLayout::Blocked] {
                prop_assert_eq!(block_reduce(&SumI64, &wide, layout)?, reduce(&SumI64, &wide)?);
                prop_assert_eq!(block_reduce(&MaxI64, &wide, layout)?, reduce(&MaxI64, &wide)?);
            }
        }

        #[test]
        fn argmax_ties_equal_direct(values in prop::collection::vec(-2i32..=2, 1..=600)) {
            let pairs: Vec<(f32, u64)> = values.iter().enumerate().map(|(i, &v)| (v as f32, i as u64)).collect();
            let op = ArgMax::<f32>::new();
            prop_assert_eq!(block_reduce(&op, &pairs, BlockLayout::Strided)?, reduce(&op, &pairs)?);
        }
    }
}
