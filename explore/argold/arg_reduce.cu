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
// into ArgControl::first_nonfinite, which the host initialises to ~0 (a 0xFF
// memset) before every launch. The result buffers are then meaningless; the
// host reports GpuError::NonFinite instead of reading them.
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

// Per-launch control words, 16 bytes, all initialised by one 0xFF memset:
//  * first_nonfinite: smallest flat index of a nonfinite element (~0 = none);
//  * blocks_done: the single-pass ticket counter. It starts at 0xFFFFFFFF, so
//    atomicAdd's old value + 1 is the number of blocks that finished earlier.
struct ArgControl {
    u64 first_nonfinite;
    u32 blocks_done;
    u32 reserved;
};

constexpr u64 kNoNonfinite = ~0ull;

template <class Elem>
struct ArgTraits;
template <>
struct ArgTraits<float> {
    typedef ArgF32 Pair;
    typedef float4 Vec;
    __device__ __forceinline__ static bool finite(float v) { return is_finite_f32(v); }
};
template <>
struct ArgTraits<i32> {
    typedef ArgI32 Pair;
    typedef int4 Vec;
    __device__ __forceinline__ static bool finite(i32) { return true; }
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

    __device__ __forceinline__ void consider_vec(const typename ArgTraits<Elem>::Vec& v, u32 local, u64 flat_base) {
        consider(v.x, local, flat_base + local);
        consider(v.y, local + 1, flat_base + local + 1);
        consider(v.z, local + 2, flat_base + local + 2);
        consider(v.w, local + 3, flat_base + local + 3);
    }
};

// Visits this thread's share of p[0, count): with `vectors` (p 16-byte
// aligned), the 16-byte vectors start, start + step, ... (vector i covers
// elements [4i, 4i + 4)), then the scalar tail element 4*(count/4) + start if
// start < count % 4 (step >= 4 always holds: step is a warp or more);
// otherwise the elements start, start + step, ... one by one. Either way the
// indices a thread visits increase. UNROLL vector loads are issued before any
// is consumed, so more bytes are in flight. count < 2^31 and step < 2^24 keep
// every u32 index expression below 2^32.
template <bool kMax, class Elem, int UNROLL>
__device__ __forceinline__ void scan_range(const Elem* __restrict__ p, u32 count, u32 start, u32 step, bool vectors,
                                           u64 flat_base, ArgThreadState<kMax, Elem>& state) {
    typedef typename ArgTraits<Elem>::Vec Vec;
    constexpr u32 kWidth = sizeof(Vec) / sizeof(Elem);
    static_assert(kWidth == 4, "consider_vec visits four lanes");
    if (vectors) {
        const u32 vector_count = count / kWidth;
        for_each_strided_vector<UNROLL>(as_vectors(p), start, vector_count, step,
                                        [&](const Vec& v, u32 i) { state.consider_vec(v, i * kWidth, flat_base); });
        const u32 tail = count - vector_count * kWidth;
        if (start < tail) {
            const u32 c = vector_count * kWidth + start;
            state.consider(p[c], c, flat_base + c);
        }
    } else {
        for (u32 c = start; c < count; c += step) state.consider(p[c], c, flat_base + c);
    }
}

__device__ __forceinline__ void report_nonfinite(u64 first_bad, ArgControl* control) {
    if (first_bad != kNoNonfinite) atomicMin(&control->first_nonfinite, first_bad);
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

// Second pass: ONE block folds `count` partials (in increasing block order per
// thread; the operator breaks ties by index, so the order is not load-bearing).
template <bool kMax, class Elem>
__device__ __forceinline__ void arg_two_pass_final(const typename ArgTraits<Elem>::Pair* partials, u32 count,
                                                   typename ArgTraits<Elem>::Pair* result) {
    typedef typename ArgTraits<Elem>::Pair Pair;
    typedef typename ArgOpFor<kMax, Elem>::Op Op;
    __shared__ BlockReduceStorage<Pair> storage;
    const Op op;
    Pair acc = Op::identity();
    for (u32 b = threadIdx.x; b < count; b += kBlockThreads) acc = op(acc, partials[b]);
    const Pair best = block_reduce(acc, op, storage);
    if (threadIdx.x == 0) *result = best;
}

// Persistent grid + last block done: every block publishes its partial
// (plain store, then __threadfence, then the ticket atomic: a release); the
// block that draws the last ticket fences (acquire), and after the barrier
// all its threads read every partial from L2 and fold them.
template <bool kMax, class Elem>
__device__ __forceinline__ void arg_single_pass(const Elem* __restrict__ data, u32 n,
                                                typename ArgTraits<Elem>::Pair* partials, ArgControl* control,
                                                typename ArgTraits<Elem>::Pair* result) {
    typedef typename ArgTraits<Elem>::Pair Pair;
    typedef typename ArgOpFor<kMax, Elem>::Op Op;
    __shared__ BlockReduceStorage<Pair> storage;
    __shared__ bool is_last_block;
    const Pair best = block_best_of_grid_share<kMax, Elem>(data, n, control, storage);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = best;
        __threadfence();
        const u32 finished_before = atomicAdd(&control->blocks_done, 1u) + 1u;
        is_last_block = finished_before == gridDim.x - 1u;
        __threadfence();
    }
    // Publishes is_last_block to the block; also orders warp 0's reads of
    // storage in block_reduce above before the writes of the second one below.
    __syncthreads();
    if (is_last_block) {  // uniform across the block: the barrier inside block_reduce is safe
        const Op op;
        Pair acc = Op::identity();
        for (u32 b = threadIdx.x; b < gridDim.x; b += kBlockThreads) acc = op(acc, load_payload(partials + b));
        const Pair total = block_reduce(acc, op, storage);
        if (threadIdx.x == 0) *result = total;
    }
}

// ---- Per row ----------------------------------------------------------------

// One warp per row, kRowsPerWarpBlock rows per block, grid-stride over rows.
// The row loop is uniform across each warp, so warp_reduce sees all 32 lanes;
// there is no block barrier. out[row].index is the column within the row.
template <bool kMax, class Elem>
__device__ __forceinline__ void arg_rows_warp(const Elem* __restrict__ data, u64 rows, u32 cols,
                                              typename ArgTraits<Elem>::Pair* out, ArgControl* control) {
    typedef typename ArgTraits<Elem>::Pair Pair;
    typedef typename ArgOpFor<kMax, Elem>::Op Op;
    const int lane = lane_id();
    const bool vectors = aligned16(data) && cols % 4 == 0;  // then every row start is aligned too
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
        arg_reduce_two_pass_final_##NAME(const ArgTraits<ELEM>::Pair* partials, u32 count,                           \
                                         ArgTraits<ELEM>::Pair* result) {                                            \
        arg_two_pass_final<KMAX, ELEM>(partials, count, result);                                                     \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                      \
        arg_reduce_single_pass_##NAME(const ELEM* __restrict__ data, u32 n, ArgTraits<ELEM>::Pair* partials,       \
                                      ArgControl* control, ArgTraits<ELEM>::Pair* result) {                          \
        arg_single_pass<KMAX, ELEM>(data, n, partials, control, result);                                             \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads)                                                      \
        arg_reduce_rows_warp_##NAME(const ELEM* __restrict__ data, u64 rows, u32 cols, ArgTraits<ELEM>::Pair* out, \
                                    ArgControl* control) {                                                           \
        arg_rows_warp<KMAX, ELEM>(data, rows, cols, out, control);                                                   \
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
