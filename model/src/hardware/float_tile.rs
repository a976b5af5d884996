//! One tile pass of the float sums of `kernels/cuda/float_reduce.cu`, combine for combine:
//! which inputs a thread holds, its fixed pairwise tree over them, and the 256-thread block
//! tree over the thread values.
//!
//! # The tile, exactly
//!
//! A tile is [`FLOAT_TILE_ITEMS`] = 4096 consecutive inputs (tile `b` starts at `4096 b`),
//! reduced by one 256-thread block; thread `t` holds [`FLOAT_ITEMS_PER_THREAD`] = 16 items:
//! 1. **Items** ([`TileLayout`]): item `i` of thread `t` is input `4096 b + offset(t, i)`, or
//!    the identity when that is `>= n` (the kernel's guarded loads substitute `0.0f` / `(0, 0)`).
//! 2. **Thread tree** ([`pairwise16`]): for `width = 1, 2, 4, 8`, for `i = 0, 2 width, ...`:
//!    `item[i] = item[i] ⊕ item[i + width]`; the thread value is `item[0]` (4 levels).
//! 3. **Warp tree**: shfl_down with offsets 1, 2, 4, 8, 16, every lane `l` with
//!    `l + offset < 32` sets `v[l] = v[l] ⊕ v[l + offset]` ([`ShuffleOrder::Ascending`]); lane 0
//!    writes the warp partial.
//! 4. **Block level**: after the barrier warp 0 loads lane `l`'s value as partial `l` for
//!    `l < 8` and the identity for the 24 other lanes, and runs the same warp tree; lane 0
//!    (thread 0) holds the block total. The two levels that add identity lanes are replayed
//!    too: `-0 ⊕ +0 = +0` is the one case where adding the identity changes the bits.

use super::block_reduce::{BLOCK_THREADS, WARPS_PER_BLOCK};
use super::warp::{warp_reduce_ordered, Participation, ShuffleOrder, WARP_SIZE};
use crate::operator::Operator;
use crate::ModelError;

/// Items per thread of a float tile (`kFloatItemsPerThread`).
pub const FLOAT_ITEMS_PER_THREAD: usize = 16;
/// Inputs per tile (`kFloatTileItems`): 256 threads x 16 items.
pub const FLOAT_TILE_ITEMS: usize = BLOCK_THREADS * FLOAT_ITEMS_PER_THREAD;

/// Where thread `t`'s items sit in its tile (the loaders of `float_reduce.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileLayout {
    /// f32 inputs (four 16-byte loads): item `4j + k` is offset `4(256 j + t) + k`.
    Vector4,
    /// bf16 inputs (two 16-byte loads): item `8j + k` is offset `8(256 j + t) + k`.
    Vector8,
    /// Compensated pairs of later passes (one 8-byte load each): item `j` is offset `256 j + t`.
    Strided,
}

impl TileLayout {
    /// The offset within the tile of item `item` (`< 16`) of thread `thread` (`< 256`).
    pub fn offset(self, thread: usize, item: usize) -> usize {
        match self {
            TileLayout::Vector4 => 4 * (BLOCK_THREADS * (item / 4) + thread) + item % 4,
            TileLayout::Vector8 => 8 * (BLOCK_THREADS * (item / 8) + thread) + item % 8,
            TileLayout::Strided => BLOCK_THREADS * item + thread,
        }
    }
}

/// The fixed pairwise tree over one thread's 16 items (step 2 of the module docs):
/// `((i0 ⊕ i1) ⊕ (i2 ⊕ i3)) ⊕ ((i4 ⊕ i5) ⊕ (i6 ⊕ i7)) ⊕ ...`, left operand the lower item.
pub fn pairwise16<Op: Operator>(
    op: &Op,
    mut items: [Op::Value; FLOAT_ITEMS_PER_THREAD],
) -> Result<Op::Value, ModelError> {
    let mut width = 1;
    while width < FLOAT_ITEMS_PER_THREAD {
        for i in (0..FLOAT_ITEMS_PER_THREAD).step_by(2 * width) {
            items[i] = op.combine(&items[i], &items[i + width])?;
        }
        width *= 2;
    }
    let [first, ..] = items;
    Ok(first)
}

/// Thread `thread`'s value for tile `tile` of an input of `n` elements read through
/// `element` (called only for indices `< n`): its 16 items (identity past `n`) through
/// [`pairwise16`].
pub fn thread_value<Op: Operator>(
    op: &Op,
    n: usize,
    tile: usize,
    thread: usize,
    layout: TileLayout,
    element: &impl Fn(usize) -> Op::Value,
) -> Result<Op::Value, ModelError> {
    let base = tile * FLOAT_TILE_ITEMS;
    let items = std::array::from_fn(|i| {
        let e = base + layout.offset(thread, i);
        if e < n {
            element(e)
        } else {
            op.identity()
        }
    });
    pairwise16(op, items)
}

/// The block total of the 256 thread values `threads` (steps 3 and 4 of the module docs):
/// what thread 0 holds after `block_reduce`. `threads.len() != 256` is `InvalidWidth`.
pub fn block_total<Op: Operator>(op: &Op, threads: &[Op::Value]) -> Result<Op::Value, ModelError> {
    if threads.len() != BLOCK_THREADS {
        return Err(ModelError::InvalidWidth {
            primitive: "float_reduce",
            width: threads.len(),
            detail: format!("a float tile block has {BLOCK_THREADS} threads"),
        });
    }
    let mut second: Vec<Op::Value> = Vec::with_capacity(WARP_SIZE);
    for warp in threads.chunks(WARP_SIZE) {
        second.push(warp_reduce_ordered(op, warp, Participation::ALL, ShuffleOrder::Ascending)?);
    }
    debug_assert_eq!(second.len(), WARPS_PER_BLOCK);
    second.resize(WARP_SIZE, op.identity());
    warp_reduce_ordered(op, &second, Participation::ALL, ShuffleOrder::Ascending)
}

/// One block's total for tile `tile` (`tile_pass` of `float_reduce.cu`): every thread's
/// [`thread_value`], then [`block_total`].
pub fn tile_total<Op: Operator>(
    op: &Op,
    n: usize,
    tile: usize,
    layout: TileLayout,
    element: &impl Fn(usize) -> Op::Value,
) -> Result<Op::Value, ModelError> {
    let threads =
        (0..BLOCK_THREADS).map(|t| thread_value(op, n, tile, t, layout, element)).collect::<Result<Vec<_>, _>>()?;
    block_total(op, &threads)
}

#[cfg(test)]
#[path = "float_tile_tests.rs"]
mod tests;
