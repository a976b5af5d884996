// Tuning policy for every primlab kernel: block sizes and items per thread.
// The algorithms (common/*.cuh and the family files) read these constants and
// never hard-code a size, so a retune is a one-line change here followed by a
// fresh `harness sweep` and `harness sanitize` (the receipts are keyed by the
// source hash, so CI insists on both).
#pragma once

// 0 = the real kernels. A nonzero value compiles one planted bug from the
// gallery in kernels/src/mutant.rs (harness mutants); nothing else sets it.
#ifndef PRIMLAB_MUTANT
#define PRIMLAB_MUTANT 0
#endif

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
constexpr int kBlockThreads = 256;
static_assert(kBlockThreads % kWarpThreads == 0, "a block must be whole warps");
static_assert(kBlockThreads / kWarpThreads <= kWarpThreads,
              "the second pass of block_reduce folds one partial per warp in a single warp");
constexpr int kBlockWarps = kBlockThreads / kWarpThreads;

// Hierarchical reduce / Blelloch scan: 2 items per thread, 512 per block.
constexpr int kItemsPerThreadPair = 2;
constexpr int kBlockItems = kBlockThreads * kItemsPerThreadPair;
static_assert(kBlockItems == 512, "the seeds fix the hierarchical block at 512 items");

// Decoupled look-back scan: threads per block and items per thread of one
// tile (one policy for the int32 and the affine instantiations).
constexpr int kScanBlockThreads = 256;
constexpr int kScanItemsPerThread = 16;
constexpr int kScanTileItems = kScanBlockThreads * kScanItemsPerThread;
// Blocks per SM the compiler must fit (registers), and the group that moves
// a tile between global memory and registers: a warp (32) needs only
// __syncwarp, the block (kScanBlockThreads) two more block barriers a tile.
constexpr int kScanMinBlocksPerSm = 5;
constexpr int kScanExchangeThreads = 32;

// Single-pass reduce: items per thread of one warp tile (32 lanes x this
// many consecutive items; 16 int32 = four 16-byte loads per lane).
constexpr int kReduceItemsPerThread = 16;
// Warp tiles whose loads a warp issues before it reduces the first of them.
constexpr int kReduceTilesInFlight = 2;

// Look-back spin bound: after this many polls of one predecessor the kernel
// records a timeout instead of hanging the machine.
constexpr u32 kLookbackSpinLimit = 1u << 22;

// ---- Row-wise families and float reductions (arg_reduce.cu, softmax.cu,
// float_reduce.cu). Rust mirrors these in the family modules; a unit test
// there keeps the two equal.

// Whole-array arg reduction: 16-byte loads issued back to back per
// grid-stride step (more bytes in flight per thread, to reach the read ceiling).
constexpr int kArgVectorsPerStep = 4;
// TwoPass arg reduction: at most this many first-pass blocks (= partials read
// by the one-block second pass).
constexpr int kArgTwoPassMaxBlocks = 1024;

// Softmax, block-per-row schedules (ThreePass, OnlineBlock): threads per block.
constexpr int kSoftmaxBlockThreads = 256;
static_assert(kSoftmaxBlockThreads % kWarpThreads == 0, "a block must be whole warps");
// Softmax OnlineWarp and arg WarpPerRow: one row per warp, this many rows per block.
constexpr int kRowsPerWarpBlock = kBlockWarps;
// Softmax RowInRegisters: a row is held in registers, `items` floats per
// thread, in three block shapes (threads x items): the host picks the smallest
// that holds the row. The largest, 1024 x 32 = 32768 columns, is the limit.
constexpr int kSoftmaxRegSmallThreads = 256;
constexpr int kSoftmaxRegSmallItems = 16;
constexpr int kSoftmaxRegMediumThreads = 512;
constexpr int kSoftmaxRegMediumItems = 32;
constexpr int kSoftmaxRegLargeThreads = 1024;
constexpr int kSoftmaxRegLargeItems = 32;

// Float reduction: every block reduces tiles of kFloatTileItems inputs, 16 per
// thread, as a fixed pairwise tree (depth 4) before the warp and block levels.
constexpr int kFloatItemsPerThread = 16;
constexpr int kFloatTileItems = kBlockThreads * kFloatItemsPerThread;
static_assert(kFloatTileItems == 4096, "the documented tree depths assume 4096-item tiles");
// TwoPass float reduction: at most this many first-pass blocks.
constexpr int kFloatTwoPassMaxBlocks = 1024;
static_assert(kFloatTwoPassMaxBlocks <= kFloatTileItems, "the second pass is one tile");

// Correctly rounded sum (exact_sum.cu): exponent-binned integer accumulation.
// A tile is kExactTileItems inputs, kExactItemsPerThread per thread (four
// 16-byte loads of f32, two of bf16).
constexpr int kExactItemsPerThread = 16;
constexpr int kExactTileItems = kBlockThreads * kExactItemsPerThread;
// Tiles a thread adds before it normalises its bins: each bin then takes at
// most kExactFlushTiles * kExactItemsPerThread adds between normalisations
// (the bound exact_sum.cu proves is 256).
constexpr int kExactFlushTiles = 16;
// Most first-pass blocks (= block records the one-block finish pass adds).
constexpr int kExactMaxBlocks = 1 << 16;

}  // namespace primlab
