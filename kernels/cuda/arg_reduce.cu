// Arg reductions: (value, index) of the maximum or minimum of f32 / i32 data,
// whole-array and per row. Contract: the lowest index wins ties;
// NaN or +-inf anywhere is an error naming the first offending index, never
// an answer. Every thread visits its elements in increasing index order and
// replaces its running best only on a strictly better value, so within a
// thread the earlier index wins a tie; across threads the ArgMax/ArgMin
// operators of common/operators.cuh break ties by index.
//
// Nonfinite detection is in the kernel: each thread keeps the smallest flat
// index of a nonfinite element it saw and, if it saw one, does one atomicMin
// into ArgControl::first_nonfinite (~0 = none). The answers are then
// meaningless; the host reports GpuError::NonFinite instead of reading them.
// Per row, the host sets the control words to ~0 (a 0xFF memset) before
// every launch and reads first_nonfinite after it. Whole array, the control
// words reset themselves (see ArgControl), and the kernel that writes the
// answer moves first_nonfinite into ArgResult beside it.
#include "common/config.cuh"
#include "common/bf16.cuh"
#include "common/block_reduce.cuh"
#include "common/memory_order.cuh"
#include "common/operators.cuh"
#include "common/shuffle.cuh"
#include "common/strided_load.cuh"
#include "common/vector_of.cuh"
#include "common/warp_reduce.cuh"

using namespace primlab;

namespace {

// Control words, 16 bytes:
//  * first_nonfinite: smallest flat index of a nonfinite element (~0 = none);
//  * blocks_done: the single-pass ticket counter.
// Whole array, the host sets {~0, 0} once, when it plans, and every launch
// leaves them so: atomicInc with the limit gridDim.x - 1 wraps blocks_done
// back to 0 at the last block, and the kernel that writes the answer swaps
// first_nonfinite back to ~0 (atomicExch) as it reads it. So no launch needs
// a memset first.
struct ArgControl {
    u64 first_nonfinite;
    u32 blocks_done;
    u32 reserved;
};

constexpr u64 kNoNonfinite = ~0ull;

// A whole-array answer: the (value, index) pair and the first nonfinite flat
// index of the same launch (~0 = none; then the pair is meaningless).
template <class Pair>
struct ArgResult {
    Pair best;
    u64 first_nonfinite;
};

// Thread 0 of the one block that writes the answer: every block's
// atomicMin into first_nonfinite is ordered before this (same launch: the
// release / acquire of the ticket; two-pass: the kernel boundary).
template <class Pair>
__device__ __forceinline__ void write_result(Pair best, ArgControl* control, ArgResult<Pair>* result) {
    result->best = best;
    result->first_nonfinite = atomicExch(reinterpret_cast<unsigned long long*>(&control->first_nonfinite),
                                         (unsigned long long)kNoNonfinite);
}

template <class Elem>
struct ArgTraits;
template <>
struct ArgTraits<float> {
    typedef ArgF32 Pair;
    typedef float4 Vec;
    __device__ __forceinline__ static bool finite(float v) { return is_finite_f32(v); }
    __device__ __forceinline__ static float extreme(bool max, float a, float b) { return max ? fmaxf(a, b) : fminf(a, b); }
    // The nonfinite probe of one vector: p stays +-0 while every lane seen is
    // finite, because IEEE addition with an inf or NaN operand gives inf or
    // NaN, and inf * 0 = NaN * 0 = NaN while finite * 0 = +-0. A finite sum
    // that overflows also trips it; the exact rescan then finds nothing.
    __device__ __forceinline__ static float probe(float p, const float4& v) {
        return fmaf((v.x + v.y) + (v.z + v.w), 0.0f, p);
    }
    __device__ __forceinline__ static bool probe_clean(float p) { return p == 0.0f; }
};
template <>
struct ArgTraits<i32> {
    typedef ArgI32 Pair;
    typedef int4 Vec;
    __device__ __forceinline__ static bool finite(i32) { return true; }
    __device__ __forceinline__ static i32 extreme(bool max, i32 a, i32 b) { return max ? ::max(a, b) : ::min(a, b); }
    __device__ __forceinline__ static float probe(float p, const int4&) { return p; }
    __device__ __forceinline__ static bool probe_clean(float) { return true; }
};

template <bool kMax, class Elem>
struct ArgOpFor;
template <>
struct ArgOpFor<true, float> {
    typedef ArgMaxF32 Op;
};
template <>
struct ArgOpFor<false, float> {
    typedef ArgMinF32 Op;
};
template <>
struct ArgOpFor<true, i32> {
    typedef ArgMaxI32 Op;
};
template <>
struct ArgOpFor<false, i32> {
    typedef ArgMinI32 Op;
};

// One thread's running best over the elements it visits, in increasing index
// order, and the first nonfinite flat index it saw.
template <bool kMax, class Elem>
struct ArgThreadState {
    typedef typename ArgTraits<Elem>::Pair Pair;
    Pair best;
    u64 first_bad;

    __device__ __forceinline__ void reset_best() { best = ArgOpFor<kMax, Elem>::Op::identity(); }

    // `local`: index reported in the answer (within the row); `flat`: index
    // reported for a nonfinite value. Strictly better only: an equal value at
    // a later index never replaces the earlier one.
    __device__ __forceinline__ void consider(Elem v, u32 local, u64 flat) {
        const bool better = kMax ? (v > best.value) : (v < best.value);
        if (best.index == kNoIndex || better) {
            best.value = v;
            best.index = i32(local);
        }
        if (!ArgTraits<Elem>::finite(v)) first_bad = flat < first_bad ? flat : first_bad;
    }

    // The same visits for the four lanes of one vector (elements local ..
    // local + 3), nonfinite detection aside (the caller's probe does it): the
    // strict-better rule over the lanes in order ends on the first lane equal
    // (==, so -0 and +0 are one value) to the lanes' extremum m, and only if
    // m is strictly better than the incumbent. So one comparison per vector
    // decides, and the rare update finds that lane.
    __device__ __forceinline__ void consider_vec(const typename ArgTraits<Elem>::Vec& v, u32 local) {
        typedef ArgTraits<Elem> Traits;
        const Elem m = Traits::extreme(kMax, Traits::extreme(kMax, v.x, v.y), Traits::extreme(kMax, v.z, v.w));
        const bool better = kMax ? (m > best.value) : (m < best.value);
        if (best.index == kNoIndex || better) {
            const u32 lane = v.x == m ? 0u : v.y == m ? 1u : v.z == m ? 2u : 3u;
            best.value = lane == 0u ? v.x : lane == 1u ? v.y : lane == 2u ? v.z : v.w;
            best.index = i32(local + lane);
        }
    }

    // Rare path, after a probe tripped: the first nonfinite element among
    // the vectors first, first + step, ... below end (vector i covers
    // elements [4i, 4i + 4)), visited in increasing index order, so the
    // first found is this thread's smallest.
    __device__ __forceinline__ void find_first_nonfinite(const Elem* __restrict__ p, u32 first, u32 end, u32 step,
                                                         u64 flat_base) {
        for (u32 i = first; i < end; i += step) {
#pragma unroll
            for (u32 k = 0; k < 4; ++k) {
                if (!ArgTraits<Elem>::finite(p[4 * i + k])) {
                    const u64 flat = flat_base + 4 * i + k;
                    first_bad = flat < first_bad ? flat : first_bad;
                    return;
                }
            }
        }
    }
};

// Visits the 16-byte vectors first, first + step, ... below end of p (16-byte
// aligned; vector i covers elements [4i, 4i + 4)) in increasing index order,
// UNROLL loads in flight, then, only if the probe tripped, finds the first
// nonfinite element among them. end <= 2^29 and step < 2^24 keep every u32
// index expression below 2^32.
template <bool kMax, class Elem, int UNROLL>
__device__ __forceinline__ void scan_vectors(const Elem* __restrict__ p, u32 first, u32 end, u32 step, u64 flat_base,
                                             ArgThreadState<kMax, Elem>& state) {
    typedef typename ArgTraits<Elem>::Vec Vec;
    constexpr u32 kWidth = sizeof(Vec) / sizeof(Elem);
    static_assert(kWidth == 4, "consider_vec visits four lanes");
    const float probe =
        fold_strided_vectors<UNROLL>(as_vectors(p), first, end, step, 0.0f, [&state](float pr, const Vec& v, u32 i) {
            state.consider_vec(v, i * kWidth);
            return ArgTraits<Elem>::probe(pr, v);
        });
    if (!ArgTraits<Elem>::probe_clean(probe)) state.find_first_nonfinite(p, first, end, step, flat_base);
}

// Visits this thread's share of p[0, count): with `vectors` (p 16-byte
// aligned), the vectors start, start + step, ... (scan_vectors), then the
// scalar tail element 4*(count/4) + start if start < count % 4 (step >= 4
// always holds: step is a warp or more); otherwise the elements start,
// start + step, ... one by one. Either way the indices a thread visits
// increase. count < 2^31 and step < 2^24 keep every u32 index expression
// below 2^32.
template <bool kMax, class Elem, int UNROLL>
__device__ __forceinline__ void scan_range(const Elem* __restrict__ p, u32 count, u32 start, u32 step, bool vectors,
                                           u64 flat_base, ArgThreadState<kMax, Elem>& state) {
    if (vectors) {
        const u32 vector_count = count / 4;
        scan_vectors<kMax, Elem, UNROLL>(p, start, vector_count, step, flat_base, state);
        const u32 tail = count - vector_count * 4;
        if (start < tail) {
            const u32 c = vector_count * 4 + start;
            state.consider(p[c], c, flat_base + c);
        }
    } else {
        for (u32 c = start; c < count; c += step) state.consider(p[c], c, flat_base + c);
    }
}

// The fence (rare path: a nonfinite was seen) orders the atomicMin before
// what the block's thread 0 releases after the next barrier.
__device__ __forceinline__ void report_nonfinite(u64 first_bad, ArgControl* control) {
    if (first_bad != kNoNonfinite) {
        atomicMin(&control->first_nonfinite, first_bad);
        __threadfence();
    }
}

// Folds partials[0, count) across the block, kArgVectorsPerStep independent
// loads a thread at a time, as in the main loop (one L2 round trip per round,
// not per partial); relaxed GPU-scope loads, since other blocks wrote them.
// The operator breaks ties by index, so the fold order is not load-bearing.
template <class Op>
__device__ __forceinline__ typename Op::T fold_partials(const typename Op::T* partials, u32 count, Op op,
                                                        BlockReduceStorage<typename Op::T>& storage) {
    typedef typename Op::T Pair;
    Pair acc = Op::identity();
    for (u32 b = threadIdx.x; b < count; b += u32(kArgVectorsPerStep * kBlockThreads)) {
        Pair p[kArgVectorsPerStep];
#pragma unroll
        for (int u = 0; u < kArgVectorsPerStep; ++u) {
            const u32 i = b + u32(u) * kBlockThreads;
            p[u] = i < count ? load_payload(partials + i) : Op::identity();
        }
#pragma unroll
        for (int u = 0; u < kArgVectorsPerStep; ++u) acc = op(acc, p[u]);
    }
    return block_reduce(acc, op, storage);
}

// ---- Whole array ----------------------------------------------------------

// First pass (TwoPass) / body (SinglePass): grid-stride over the array; the
// block's best goes to thread 0.
template <bool kMax, class Elem>
__device__ __forceinline__ typename ArgTraits<Elem>::Pair block_best_of_grid_share(
    const Elem* __restrict__ data, u32 n, ArgControl* control,
    BlockReduceStorage<typename ArgTraits<Elem>::Pair>& storage) {
    typedef typename ArgOpFor<kMax, Elem>::Op Op;
    ArgThreadState<kMax, Elem> state;
    state.reset_best();
    state.first_bad = kNoNonfinite;
    const u32 thread = blockIdx.x * kBlockThreads + threadIdx.x;
    const u32 threads = gridDim.x * kBlockThreads;
    scan_range<kMax, Elem, kArgVectorsPerStep>(data, n, thread, threads, aligned16(data), 0, state);
    report_nonfinite(state.first_bad, control);
    return block_reduce(state.best, Op(), storage);
}

template <bool kMax, class Elem>
__device__ __forceinline__ void arg_two_pass_partials(const Elem* __restrict__ data, u32 n,
                                                      typename ArgTraits<Elem>::Pair* partials, ArgControl* control) {
    typedef typename ArgTraits<Elem>::Pair Pair;
    __shared__ BlockReduceStorage<Pair> storage;
    const Pair best = block_best_of_grid_share<kMax, Elem>(data, n, control, storage);
    if (threadIdx.x == 0) partials[blockIdx.x] = best;
}

// Second pass: ONE block folds the `count` partials and writes the answer.
template <bool kMax, class Elem>
__device__ __forceinline__ void arg_two_pass_final(const typename ArgTraits<Elem>::Pair* partials, u32 count,
                                                   ArgControl* control, ArgResult<typename ArgTraits<Elem>::Pair>* result) {
    typedef typename ArgTraits<Elem>::Pair Pair;
    typedef typename ArgOpFor<kMax, Elem>::Op Op;
    __shared__ BlockReduceStorage<Pair> storage;
    const Pair best = fold_partials(partials, count, Op(), storage);
    if (threadIdx.x == 0) write_result(best, control, result);
}

// Persistent grid + last block done: every block publishes its partial
// (plain store, then __threadfence, then the ticket atomic: a release); the
// block that draws the last ticket fences (acquire), and after the barrier
// all its threads read every partial from L2 and fold them. The ticket is
// atomicInc with the limit gridDim.x - 1, so the last block leaves the
// counter at 0 for the next launch.
template <bool kMax, class Elem>
__device__ __forceinline__ void arg_single_pass(const Elem* __restrict__ data, u32 n,
                                                typename ArgTraits<Elem>::Pair* partials, ArgControl* control,
                                                ArgResult<typename ArgTraits<Elem>::Pair>* result) {
    typedef typename ArgTraits<Elem>::Pair Pair;
    typedef typename ArgOpFor<kMax, Elem>::Op Op;
    __shared__ BlockReduceStorage<Pair> storage;
    __shared__ bool is_last_block;
    const Pair best = block_best_of_grid_share<kMax, Elem>(data, n, control, storage);
    // One block is its own last block: no partial, no ticket. The barrier in
    // block_reduce has ordered every thread's report_nonfinite before this.
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) write_result(best, control, result);
        return;
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = best;
        __threadfence();
        const u32 finished_before = atomicInc(&control->blocks_done, gridDim.x - 1u);
        is_last_block = finished_before == gridDim.x - 1u;
        __threadfence();
    }
    // Publishes is_last_block to the block; also orders warp 0's reads of
    // storage in block_reduce above before the writes of the second one below.
    __syncthreads();
    if (is_last_block) {  // uniform across the block: the barrier inside block_reduce is safe
        const Pair total = fold_partials(partials, gridDim.x, Op(), storage);
        if (threadIdx.x == 0) write_result(total, control, result);
    }
}

// ---- Per row ----------------------------------------------------------------

// One warp per row, kRowsPerWarpBlock rows per block, grid-stride over rows.
// The row loop is uniform across each warp, so warp_reduce sees all 32 lanes;
// there is no block barrier. out[row].index is the column within the row.
// kVectors: the rows may be read as 16-byte vectors when they allow it; the
// instance without (the host takes it when cols % 4 != 0) visits element by
// element and, holding no vectors, needs fewer registers (32 against 40 on
// sm_90), so more warps fit an SM.
template <bool kMax, class Elem, bool kVectors>
__device__ __forceinline__ void arg_rows_warp(const Elem* __restrict__ data, u64 rows, u32 cols,
                                              typename ArgTraits<Elem>::Pair* out, ArgControl* control) {
    typedef typename ArgTraits<Elem>::Pair Pair;
    typedef typename ArgOpFor<kMax, Elem>::Op Op;
    const int lane = lane_id();
    const bool vectors = kVectors && aligned16(data) && cols % 4 == 0;  // then every row start is aligned too
    ArgThreadState<kMax, Elem> state;
    state.first_bad = kNoNonfinite;
    for (u64 row = u64(blockIdx.x) * kRowsPerWarpBlock + warp_id(); row < rows;
         row += u64(gridDim.x) * kRowsPerWarpBlock) {
        state.reset_best();
        const u64 row_start = row * cols;
        scan_range<kMax, Elem, kArgVectorsPerStep>(data + row_start, cols, u32(lane), kWarpThreads, vectors, row_start,
                                                   state);
        const Pair best = warp_reduce(state.best, Op());
        if (lane == 0) out[row] = best;
    }
    report_nonfinite(state.first_bad, control);
}

// One block per row (kBlockThreads threads), grid-stride over rows.
template <bool kMax, class Elem>
__device__ __forceinline__ void arg_rows_block(const Elem* __restrict__ data, u64 rows, u32 cols,
                                               typename ArgTraits<Elem>::Pair* out, ArgControl* control) {
    typedef typename ArgTraits<Elem>::Pair Pair;
    typedef typename ArgOpFor<kMax, Elem>::Op Op;
    __shared__ BlockReduceStorage<Pair> storage;
    const bool vectors = aligned16(data) && cols % 4 == 0;
    ArgThreadState<kMax, Elem> state;
    state.first_bad = kNoNonfinite;
    for (u64 row = blockIdx.x; row < rows; row += gridDim.x) {
        state.reset_best();
        const u64 row_start = row * cols;
        scan_range<kMax, Elem, kArgVectorsPerStep>(data + row_start, cols, threadIdx.x, kBlockThreads, vectors,
                                                   row_start, state);
        const Pair best = block_reduce(state.best, Op(), storage);
        if (threadIdx.x == 0) out[row] = best;
        // The next row's block_reduce rewrites the warp partials that warp 0
        // read above (WAR across warps).
        __syncthreads();
    }
    report_nonfinite(state.first_bad, control);
}

}  // namespace

// Entry points: arg_reduce_<variant>_<max|min>_<f32|i32>. Argument order and
// types are mirrored by kernels/src/arg_reduce.rs.
#define PRIMLAB_ARG_ENTRIES(NAME, KMAX, ELEM)                                                                        \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                      \
        arg_reduce_two_pass_partials_##NAME(const ELEM* __restrict__ data, u32 n, ArgTraits<ELEM>::Pair* partials, \
                                            ArgControl* control) {                                                   \
        arg_two_pass_partials<KMAX, ELEM>(data, n, partials, control);                                               \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                      \
        arg_reduce_two_pass_final_##NAME(const ArgTraits<ELEM>::Pair* partials, u32 count, ArgControl* control,      \
                                         ArgResult<ArgTraits<ELEM>::Pair>* result) {                                 \
        arg_two_pass_final<KMAX, ELEM>(partials, count, control, result);                                            \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                      \
        arg_reduce_single_pass_##NAME(const ELEM* __restrict__ data, u32 n, ArgTraits<ELEM>::Pair* partials,       \
                                      ArgControl* control, ArgResult<ArgTraits<ELEM>::Pair>* result) {               \
        arg_single_pass<KMAX, ELEM>(data, n, partials, control, result);                                             \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                      \
        arg_reduce_rows_warp_##NAME(const ELEM* __restrict__ data, u64 rows, u32 cols, ArgTraits<ELEM>::Pair* out, \
                                    ArgControl* control) {                                                           \
        arg_rows_warp<KMAX, ELEM, true>(data, rows, cols, out, control);                                             \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                      \
        arg_reduce_rows_warp_scalar_##NAME(const ELEM* __restrict__ data, u64 rows, u32 cols,                        \
                                           ArgTraits<ELEM>::Pair* out, ArgControl* control) {                        \
        arg_rows_warp<KMAX, ELEM, false>(data, rows, cols, out, control);                                            \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                      \
        arg_reduce_rows_block_##NAME(const ELEM* __restrict__ data, u64 rows, u32 cols, ArgTraits<ELEM>::Pair* out, \
                                     ArgControl* control) {                                                          \
        arg_rows_block<KMAX, ELEM>(data, rows, cols, out, control);                                                  \
    }

PRIMLAB_ARG_ENTRIES(max_f32, true, float)
PRIMLAB_ARG_ENTRIES(min_f32, false, float)
PRIMLAB_ARG_ENTRIES(max_i32, true, i32)
PRIMLAB_ARG_ENTRIES(min_i32, false, i32)
