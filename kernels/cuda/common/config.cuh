// Tuning policy for every primlab kernel: block sizes and items per thread.
// The values are owned by Rust (kernels/src/policy.rs) and arrive as
// -DPRIMLAB_<FAMILY>_<NAME>=value options on every NVRTC compile; this file
// binds each to the constexpr name the algorithms read (common/*.cuh and the
// family files never hard-code a size) and keeps the static_asserts that a
// retune must still satisfy. A compile without a define stops at its #error.
#pragma once

// 0 = the real kernels. A nonzero value compiles one planted bug from the
// gallery in kernels/src/mutant.rs (harness mutants); nothing else sets it.

// NVRTC ships no <cstdint>; these aliases are the only integer names we use.
typedef long long i64;
typedef unsigned long long u64;
typedef int i32;
typedef unsigned int u32;
typedef unsigned short u16;

namespace primlab {

constexpr int kWarpThreads = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// The block size of every block-cooperative kernel unless a family names its
// own constant below. 256 threads = 8 warps: one shared partial per warp and a
// single second warp pass (at most 32 warps fit one pass).
#ifndef PRIMLAB_BLOCK_THREADS
#error "PRIMLAB_BLOCK_THREADS is not defined: compile through kernels::compile (policy.rs passes it)"
#endif
constexpr int kBlockThreads = PRIMLAB_BLOCK_THREADS;
static_assert(kBlockThreads % kWarpThreads == 0, "a block must be whole warps");
static_assert(kBlockThreads / kWarpThreads <= kWarpThreads,
              "the second pass of block_reduce folds one partial per warp in a single warp");
constexpr int kBlockWarps = kBlockThreads / kWarpThreads;

// Hierarchical reduce / Blelloch scan: 2 items per thread, 512 per block.
#ifndef PRIMLAB_BLOCK_HIERARCHICAL_ITEMS_PER_THREAD
#error "PRIMLAB_BLOCK_HIERARCHICAL_ITEMS_PER_THREAD is not defined (policy.rs passes it)"
#endif
constexpr int kItemsPerThreadPair = PRIMLAB_BLOCK_HIERARCHICAL_ITEMS_PER_THREAD;
static_assert(kItemsPerThreadPair == 2, "the Blelloch up-sweep pairs neighbours: two items per thread");
constexpr int kBlockItems = kBlockThreads * kItemsPerThreadPair;

// Decoupled look-back scan: threads per block and items per thread of one
// tile (one policy for the int32 and the affine instantiations); blocks per
// SM the compiler must fit (registers); and the group that moves a tile
// between global memory and registers: a warp (32) needs only __syncwarp,
// the block (kScanBlockThreads) two more block barriers a tile.
#if !defined(PRIMLAB_SCAN_BLOCK_THREADS) || !defined(PRIMLAB_SCAN_ITEMS_PER_THREAD) || \
    !defined(PRIMLAB_SCAN_MIN_BLOCKS_PER_SM) || !defined(PRIMLAB_SCAN_EXCHANGE_THREADS)
#error "policy.rs passes PRIMLAB_SCAN_BLOCK_THREADS, PRIMLAB_SCAN_ITEMS_PER_THREAD, PRIMLAB_SCAN_MIN_BLOCKS_PER_SM, PRIMLAB_SCAN_EXCHANGE_THREADS: one is missing"
#endif
constexpr int kScanBlockThreads = PRIMLAB_SCAN_BLOCK_THREADS;
constexpr int kScanItemsPerThread = PRIMLAB_SCAN_ITEMS_PER_THREAD;
static_assert(kScanItemsPerThread % 4 == 0, "a thread's look-back items are whole int4 vectors");
constexpr int kScanTileItems = kScanBlockThreads * kScanItemsPerThread;
constexpr int kScanMinBlocksPerSm = PRIMLAB_SCAN_MIN_BLOCKS_PER_SM;
constexpr int kScanExchangeThreads = PRIMLAB_SCAN_EXCHANGE_THREADS;
static_assert(kScanBlockThreads % kScanExchangeThreads == 0, "a look-back block is whole exchange groups");

// Single-pass reduce: items per lane of one warp tile (32 lanes x this
// many consecutive items; 16 int32 = four 16-byte loads per lane), and the
// warp tiles whose loads a warp issues before it reduces the first of them.
#if !defined(PRIMLAB_REDUCE_SINGLE_PASS_ITEMS_PER_THREAD) || !defined(PRIMLAB_REDUCE_SINGLE_PASS_TILES_IN_FLIGHT)
#error "policy.rs passes PRIMLAB_REDUCE_SINGLE_PASS_ITEMS_PER_THREAD, PRIMLAB_REDUCE_SINGLE_PASS_TILES_IN_FLIGHT: one is missing"
#endif
constexpr int kReduceItemsPerThread = PRIMLAB_REDUCE_SINGLE_PASS_ITEMS_PER_THREAD;
constexpr int kReduceTilesInFlight = PRIMLAB_REDUCE_SINGLE_PASS_TILES_IN_FLIGHT;

// Look-back spin bound: after this many polls of one predecessor the kernel
// records a timeout instead of hanging the machine.
#ifndef PRIMLAB_SCAN_LOOKBACK_SPIN_LIMIT
#error "PRIMLAB_SCAN_LOOKBACK_SPIN_LIMIT is not defined (policy.rs passes it)"
#endif
constexpr u32 kLookbackSpinLimit = PRIMLAB_SCAN_LOOKBACK_SPIN_LIMIT;

// ---- Row-wise families and float reductions (arg_reduce.cu, softmax.cu,
// float_reduce.cu).

// Whole-array arg reduction: 16-byte loads issued back to back per
// grid-stride step (more bytes in flight per thread, to reach the read ceiling).
#ifndef PRIMLAB_ARG_REDUCE_VECTORS_PER_STEP
#error "PRIMLAB_ARG_REDUCE_VECTORS_PER_STEP is not defined (policy.rs passes it)"
#endif
constexpr int kArgVectorsPerStep = PRIMLAB_ARG_REDUCE_VECTORS_PER_STEP;
// TwoPass arg reduction: at most this many first-pass blocks (= partials read
// by the one-block second pass).
#ifndef PRIMLAB_ARG_REDUCE_TWO_PASS_MAX_BLOCKS
#error "PRIMLAB_ARG_REDUCE_TWO_PASS_MAX_BLOCKS is not defined (policy.rs passes it)"
#endif
constexpr int kArgTwoPassMaxBlocks = PRIMLAB_ARG_REDUCE_TWO_PASS_MAX_BLOCKS;

// Softmax, block-per-row schedules (ThreePass, OnlineBlock): threads per block.
#ifndef PRIMLAB_SOFTMAX_BLOCK_THREADS
#error "PRIMLAB_SOFTMAX_BLOCK_THREADS is not defined (policy.rs passes it)"
#endif
constexpr int kSoftmaxBlockThreads = PRIMLAB_SOFTMAX_BLOCK_THREADS;
static_assert(kSoftmaxBlockThreads % kWarpThreads == 0, "a block must be whole warps");
// Softmax OnlineWarp and arg WarpPerRow: one row per warp, this many rows per block.
constexpr int kRowsPerWarpBlock = kBlockWarps;
// Softmax RowInRegisters: a row is held in registers, `items` floats per
// thread, in three block shapes (threads x items): the host picks the smallest
// that holds the row. The largest, 1024 x 32 = 32768 columns, is the limit.
#if !defined(PRIMLAB_SOFTMAX_REG_SMALL_THREADS) || !defined(PRIMLAB_SOFTMAX_REG_SMALL_ITEMS) || \
    !defined(PRIMLAB_SOFTMAX_REG_MEDIUM_THREADS) || !defined(PRIMLAB_SOFTMAX_REG_MEDIUM_ITEMS) || \
    !defined(PRIMLAB_SOFTMAX_REG_LARGE_THREADS) || !defined(PRIMLAB_SOFTMAX_REG_LARGE_ITEMS)
#error "policy.rs passes PRIMLAB_SOFTMAX_REG_SMALL_THREADS, PRIMLAB_SOFTMAX_REG_SMALL_ITEMS, PRIMLAB_SOFTMAX_REG_MEDIUM_THREADS, PRIMLAB_SOFTMAX_REG_MEDIUM_ITEMS, PRIMLAB_SOFTMAX_REG_LARGE_THREADS, PRIMLAB_SOFTMAX_REG_LARGE_ITEMS: one is missing"
#endif
constexpr int kSoftmaxRegSmallThreads = PRIMLAB_SOFTMAX_REG_SMALL_THREADS;
constexpr int kSoftmaxRegSmallItems = PRIMLAB_SOFTMAX_REG_SMALL_ITEMS;
constexpr int kSoftmaxRegMediumThreads = PRIMLAB_SOFTMAX_REG_MEDIUM_THREADS;
constexpr int kSoftmaxRegMediumItems = PRIMLAB_SOFTMAX_REG_MEDIUM_ITEMS;
constexpr int kSoftmaxRegLargeThreads = PRIMLAB_SOFTMAX_REG_LARGE_THREADS;
constexpr int kSoftmaxRegLargeItems = PRIMLAB_SOFTMAX_REG_LARGE_ITEMS;
static_assert(kSoftmaxRegLargeThreads <= 1024, "a block holds at most 1024 threads");

// Float reduction: every block reduces tiles of kFloatTileItems inputs, 16 per
// thread, as a fixed pairwise tree (depth 4) before the warp and block levels.
#ifndef PRIMLAB_FLOAT_REDUCE_ITEMS_PER_THREAD
#error "PRIMLAB_FLOAT_REDUCE_ITEMS_PER_THREAD is not defined (policy.rs passes it)"
#endif
constexpr int kFloatItemsPerThread = PRIMLAB_FLOAT_REDUCE_ITEMS_PER_THREAD;
constexpr int kFloatTileItems = kBlockThreads * kFloatItemsPerThread;
static_assert(kFloatTileItems == 4096,
              "TILE_PASS_DEPTH in float_reduce.rs counts 4 pairwise + 5 shuffle + 3 block levels of 4096 items");
// TwoPass float reduction: at most this many first-pass blocks.
#ifndef PRIMLAB_FLOAT_REDUCE_TWO_PASS_MAX_BLOCKS
#error "PRIMLAB_FLOAT_REDUCE_TWO_PASS_MAX_BLOCKS is not defined (policy.rs passes it)"
#endif
constexpr int kFloatTwoPassMaxBlocks = PRIMLAB_FLOAT_REDUCE_TWO_PASS_MAX_BLOCKS;
static_assert(kFloatTwoPassMaxBlocks <= kFloatTileItems, "the second pass is one tile");

// Correctly rounded sum (exact_sum.cu): exponent-binned integer accumulation.
// A tile is kExactTileItems inputs, kExactItemsPerThread per thread (four
// 16-byte loads of f32, two of bf16).
#ifndef PRIMLAB_EXACT_SUM_ITEMS_PER_THREAD
#error "PRIMLAB_EXACT_SUM_ITEMS_PER_THREAD is not defined (policy.rs passes it)"
#endif
constexpr int kExactItemsPerThread = PRIMLAB_EXACT_SUM_ITEMS_PER_THREAD;
constexpr int kExactTileItems = kBlockThreads * kExactItemsPerThread;
// Tiles a thread adds before it normalises its bins: each bin then takes at
// most kExactFlushTiles * kExactItemsPerThread adds between normalisations
// (the bound exact_sum.cu proves is 256).
#ifndef PRIMLAB_EXACT_SUM_FLUSH_TILES
#error "PRIMLAB_EXACT_SUM_FLUSH_TILES is not defined (policy.rs passes it)"
#endif
constexpr int kExactFlushTiles = PRIMLAB_EXACT_SUM_FLUSH_TILES;
static_assert(kExactFlushTiles * kExactItemsPerThread <= 256, "a bin takes at most 256 adds between normalisations");
// Most blocks of one launch (= block records the last block adds).
#ifndef PRIMLAB_EXACT_SUM_MAX_BLOCKS
#error "PRIMLAB_EXACT_SUM_MAX_BLOCKS is not defined (policy.rs passes it)"
#endif
constexpr int kExactMaxBlocks = PRIMLAB_EXACT_SUM_MAX_BLOCKS;
// __launch_bounds__ minimum blocks per SM: caps the registers so that
// enough warps are resident to keep the loads in flight.
#ifndef PRIMLAB_EXACT_SUM_MIN_BLOCKS_PER_SM
#error "PRIMLAB_EXACT_SUM_MIN_BLOCKS_PER_SM is not defined (policy.rs passes it)"
#endif
constexpr int kExactMinBlocksPerSm = PRIMLAB_EXACT_SUM_MIN_BLOCKS_PER_SM;

}  // namespace primlab
