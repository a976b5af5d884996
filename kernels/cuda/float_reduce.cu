// Float sums: f32 or bf16 input (bf16 as raw 16-bit patterns), f32
// accumulation. The tree every variant uses is documented exactly (and its
// depth computed) in kernels/src/float_reduce.rs; in short:
//
//  * A tile is kFloatTileItems = 4096 consecutive inputs, one per block pass.
//    Thread t of the block loads 16 of them (items j = 0..15, layout below),
//    reduces them with a fixed pairwise tree (4 levels), then block_reduce:
//    warp_reduce (5 shuffle levels) and warp 0 folding the 8 warp partials
//    (3 levels that combine values, 2 that add the exact identity).
//  * Item layout of thread t in tile b (base = 4096 b):
//      f32 input:  item 4j+k = element base + 4(256j + t) + k   (j < 4, k < 4; four 16-byte loads)
//      bf16 input: item 8j+k = element base + 8(256j + t) + k   (j < 2, k < 8; two 16-byte loads)
//      (s, c) partials of the compensated variant: item j = element base + 256j + t
//    Items past n are the identity 0 (exact, so they cost no rounding).
//  * Tile pass kernels write one partial per block; with a grid of one block
//    they also write the final f32 result. FixedTree and Compensated repeat
//    tile passes over the partials until one block remains: the grid of every
//    pass is a function of n only, and nothing is atomic, so the result is
//    bitwise reproducible on the same GPU and build.
#include "common/config.cuh"
#include "common/bf16.cuh"
#include "common/block_reduce.cuh"
#include "common/operators.cuh"
#include "common/strided_load.cuh"
#include "common/vector_of.cuh"
#include "common/warp_reduce.cuh"

using namespace primlab;

namespace {

static_assert(kFloatItemsPerThread == 16, "the loaders below fill exactly 16 items");

// The operator's value for one input x: x itself, or (x, 0) compensated.
__device__ __forceinline__ float lift(SumF32, float x) { return x; }
__device__ __forceinline__ CompensatedF32Value lift(CompensatedSumF32, float x) { return CompensatedF32Value{x, 0.0f}; }

// The f32 answer of a final value.
__device__ __forceinline__ float finish(float v) { return v; }
__device__ __forceinline__ float finish(CompensatedF32Value v) { return __fadd_rn(v.s, v.c); }

// ---- Tile loaders: the 16 items of this thread in tile `tile` ----------------

// One input element as f32: itself, or the bf16 pattern widened exactly.
__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ float widen(u16 x) { return bf16_to_f32(x); }

// The elements of one 16-byte load as f32: four f32, or eight bf16 (`in` is
// 16-byte aligned).
template <class In, int N>
__device__ __forceinline__ void load_vector(const In* __restrict__ in, float (&v)[N]) {
    static_assert(N * sizeof(In) == 16, "one 16-byte vector");
    vector_to_f32(*reinterpret_cast<const uint4*>(in), v);
}

// f32 or bf16 input: thread t's item kPer j + k is element
// base + kPer (256j + t) + k, kPer = 16 / sizeof(In) elements per 16-byte load.
template <class Op, class In>
__device__ __forceinline__ void load_vector_tile(const In* __restrict__ in, u64 n, u64 tile,
                                                 typename Op::T (&items)[kFloatItemsPerThread]) {
    constexpr int kPer = 16 / sizeof(In);
    const u64 base = tile * kFloatTileItems;
#pragma unroll
    for (int j = 0; j < kFloatItemsPerThread / kPer; ++j) {
        const u64 e = base + kPer * (u64(j) * kBlockThreads + threadIdx.x);
        float v[kPer];
        if (e + kPer <= n) {
            load_vector(in + e, v);
        } else {
#pragma unroll
            for (int k = 0; k < kPer; ++k) v[k] = e + k < n ? widen(in[e + k]) : 0.0f;
        }
#pragma unroll
        for (int k = 0; k < kPer; ++k) items[kPer * j + k] = lift(Op(), v[k]);
    }
}

template <class Op>
__device__ __forceinline__ void load_tile(const float* __restrict__ in, u64 n, u64 tile,
                                          typename Op::T (&items)[kFloatItemsPerThread]) {
    load_vector_tile<Op>(in, n, tile, items);
}

template <class Op>
__device__ __forceinline__ void load_tile(const u16* __restrict__ in, u64 n, u64 tile,
                                          typename Op::T (&items)[kFloatItemsPerThread]) {
    load_vector_tile<Op>(in, n, tile, items);
}

template <class Op>
__device__ __forceinline__ void load_tile(const CompensatedF32Value* __restrict__ in, u64 n, u64 tile,
                                          CompensatedF32Value (&items)[kFloatItemsPerThread]) {
    const u64 base = tile * kFloatTileItems;
#pragma unroll
    for (int j = 0; j < kFloatItemsPerThread; ++j) {
        const u64 e = base + u64(j) * kBlockThreads + threadIdx.x;
        items[j] = e < n ? in[e] : CompensatedSumF32::identity();
    }
}

// Fixed pairwise tree over the 16 items: ((i0+i1)+(i2+i3))+... (4 levels).
template <class Op>
__device__ __forceinline__ typename Op::T pairwise16(typename Op::T (&items)[kFloatItemsPerThread], Op op) {
#pragma unroll
    for (int width = 1; width < kFloatItemsPerThread; width *= 2) {
#pragma unroll
        for (int i = 0; i < kFloatItemsPerThread; i += 2 * width) items[i] = op(items[i], items[i + width]);
    }
    return items[0];
}

// One tile per block: partial[blockIdx.x]; a one-block grid is the last pass
// and also writes the f32 answer.
template <class In, class Op>
__device__ __forceinline__ void tile_pass(const In* __restrict__ in, u64 n, typename Op::T* partials, float* result) {
    typedef typename Op::T T;
    __shared__ BlockReduceStorage<T> storage;
    const Op op;
    T items[kFloatItemsPerThread];
    load_tile<Op>(in, n, blockIdx.x, items);
    const T total = block_reduce(pairwise16(items, op), op, storage);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = total;
        if (gridDim.x == 1) *result = finish(total);
    }
}

// TwoPass, first pass: block b folds tiles b, b + G, b + 2G, ... (G =
// gridDim.x <= number of tiles, so every block has at least one): per thread
// acc = ((0 + tile_b) + tile_{b+G}) + ... sequentially, then block_reduce.
// The second pass is tile_pass over the G partials with a one-block grid.
template <class In>
__device__ __forceinline__ void two_pass_partials(const In* __restrict__ in, u64 n, float* partials) {
    __shared__ BlockReduceStorage<float> storage;
    const SumF32 op;
    const u64 tiles = (n + kFloatTileItems - 1) / kFloatTileItems;
    float acc = SumF32::identity();
    for (u64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        float items[kFloatItemsPerThread];
        load_tile<SumF32>(in, n, tile, items);
        acc = op(acc, pairwise16(items, op));
    }
    const float total = block_reduce(acc, op, storage);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// AtomicPerBlock: the tile_pass tree, then thread 0 adds the block's total
// into *result (zeroed by the host before the launch) with one atomicAdd.
template <class In>
__device__ __forceinline__ void atomic_per_block(const In* __restrict__ in, u64 n, float* result) {
    __shared__ BlockReduceStorage<float> storage;
    const SumF32 op;
    float items[kFloatItemsPerThread];
    load_tile<SumF32>(in, n, blockIdx.x, items);
    const float total = block_reduce(pairwise16(items, op), op, storage);
    if (threadIdx.x == 0) atomicAdd(result, total);
}

// AtomicPerElement: every input element is one atomicAdd into *result (zeroed
// by the host): the crossover study's slow end. Grid-stride over 16-byte
// vectors (W elements each), then the n % W tail; no block-level cooperation.
__device__ __forceinline__ void add_each(const float4& v, float* result) {
    atomicAdd(result, v.x);
    atomicAdd(result, v.y);
    atomicAdd(result, v.z);
    atomicAdd(result, v.w);
}
__device__ __forceinline__ void add_each(const uint4& v, float* result) {
    const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        atomicAdd(result, __uint_as_float(w[k] << 16));
        atomicAdd(result, __uint_as_float(w[k] & 0xffff0000u));
    }
}
// The input is read as VectorOf<In>: float4 for f32, uint4 for bf16 patterns.
template <class In>
__device__ __forceinline__ void atomic_per_element(const In* __restrict__ in, u64 n, float* result) {
    typedef typename VectorOf<In>::T Vec;
    constexpr u64 kWidth = sizeof(Vec) / sizeof(In);
    const u64 vector_count = n / kWidth;
    const u64 thread = u64(blockIdx.x) * kBlockThreads + threadIdx.x;
    const u64 threads = u64(gridDim.x) * kBlockThreads;
    for_each_strided_vector<1>(as_vectors(in), thread, vector_count, threads,
                               [result](const Vec& v, u64) { add_each(v, result); });
    const u64 tail = n - vector_count * kWidth;
    if (thread < tail) atomicAdd(result, widen(in[vector_count * kWidth + thread]));
}

}  // namespace

// Entry points: float_reduce_<variant>_<input>. Argument order and types are
// mirrored by kernels/src/float_reduce.rs. Inputs must be 16-byte aligned
// (every buffer is a separate allocation). A tile pass writes one PARTIAL per
// tile (or, with one tile, the f32 result); the others write float outputs.
#define PRIMLAB_FLOAT_TILE_ENTRY(NAME, IN, OP, PARTIAL)                                                      \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                              \
        float_reduce_##NAME(const IN* __restrict__ in, u64 n, PARTIAL* partials, float* result) {          \
        tile_pass<IN, OP>(in, n, partials, result);                                                          \
    }
#define PRIMLAB_FLOAT_ENTRY(NAME, OUT, CALL)                                                                  \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                              \
        float_reduce_##NAME##_f32(const float* __restrict__ in, u64 n, float* OUT) {                       \
        CALL<float>(in, n, OUT);                                                                             \
    }                                                                                                        \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                              \
        float_reduce_##NAME##_bf16(const u16* __restrict__ in, u64 n, float* OUT) {                        \
        CALL<u16>(in, n, OUT);                                                                               \
    }

PRIMLAB_FLOAT_TILE_ENTRY(tile_f32, float, SumF32, float)
PRIMLAB_FLOAT_TILE_ENTRY(tile_bf16, u16, SumF32, float)
PRIMLAB_FLOAT_TILE_ENTRY(compensated_tile_f32, float, CompensatedSumF32, CompensatedF32Value)
PRIMLAB_FLOAT_TILE_ENTRY(compensated_tile_bf16, u16, CompensatedSumF32, CompensatedF32Value)
PRIMLAB_FLOAT_TILE_ENTRY(compensated_tile_pairs, CompensatedF32Value, CompensatedSumF32, CompensatedF32Value)
PRIMLAB_FLOAT_ENTRY(two_pass_partials, partials, two_pass_partials)
PRIMLAB_FLOAT_ENTRY(atomic_per_block, result, atomic_per_block)
PRIMLAB_FLOAT_ENTRY(atomic_per_element, result, atomic_per_element)
