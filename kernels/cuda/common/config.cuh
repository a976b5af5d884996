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
// single second warp pass (seeds 000 and 003).
constexpr int kBlockThreads = 256;
static_assert(kBlockThreads % kWarpThreads == 0, "a block must be whole warps");
static_assert(kBlockThreads / kWarpThreads <= kWarpThreads,
              "the second pass of block_reduce folds one partial per warp in a single warp");
constexpr int kBlockWarps = kBlockThreads / kWarpThreads;

// Hierarchical reduce / Blelloch scan: 2 items per thread, 512 per block.
constexpr int kItemsPerThreadPair = 2;
constexpr int kBlockItems = kBlockThreads * kItemsPerThreadPair;
static_assert(kBlockItems == 512, "the seeds fix the hierarchical block at 512 items");

// Decoupled look-back scan: items per thread of one tile.
constexpr int kScanItemsPerThread = 16;
constexpr int kScanTileItems = kBlockThreads * kScanItemsPerThread;

// Look-back spin bound: after this many polls of one predecessor the kernel
// records a timeout instead of hanging the machine.
constexpr u32 kLookbackSpinLimit = 1u << 22;

}  // namespace primlab
