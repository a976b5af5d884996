// Histograms with even bins over [lower, upper): 1..=4096 bins, samples
// outside the range are not counted, counts are u32: one launch counts at
// most 2^32 - 1 samples (the host keeps it so), and an input past that is
// counted in windows whose counts histogram_add_window adds into u64 totals.
// The output must hold zeros before a launch (the plan's enqueue clears it);
// every schedule only adds to it.
//
// Bin of a sample (the CPU model computes exactly the same):
//   int32: bin = ((i64)x - lower) * bins / (upper - lower), exact integer
//          arithmetic (floor division of non-negative numbers), for
//          lower <= x < upper. The kernels get there without a 64-bit
//          division: an f32 estimate, off by at most one, corrected exactly
//          (see BinI32).
//   f32:   scale = (f32)bins / (upper - lower), rounded to f32 on the host;
//          bin = min((int)(__fmul_rn(__fsub_rn(x, lower), scale)), bins - 1)
//          (truncation toward zero), for samples with x >= lower && x < upper
//          (NaN is never counted).
//
// Schedules:
//   global_atomic      one global atomicAdd per in-range sample
//   thread_counters    (shared privatised, bins <= 32) every thread owns one
//                      u32 counter per bin in shared memory, laid out
//                      [bin][thread] so that any mix of bins is free of bank
//                      conflicts and of atomics (also when every sample lands
//                      in one bin); then one global atomicAdd per nonzero bin
//                      per block
//   warp_copies        (shared privatised, any bins) `copies` histograms per
//                      block in shared memory (a power of two <= 8; warp w
//                      uses copy w % copies), warp-aggregated increments
//                      (__match_any_sync: one shared atomic per distinct bin
//                      per warp step), then one global atomicAdd per nonzero
//                      bin per block
#include "common/config.cuh"
#include "common/operators.cuh"
#include "common/strided_load.cuh"
#include "common/vector_of.cuh"
#include "common/warp_reduce.cuh"

using namespace primlab;

// ---- tuning policy of this family (values from kernels/src/policy.rs) ----

#if !defined(PRIMLAB_HISTOGRAM_MAX_BINS) || !defined(PRIMLAB_HISTOGRAM_THREAD_COUNTER_MAX_BINS) || \
    !defined(PRIMLAB_HISTOGRAM_THREAD_COUNTER_VECTORS_IN_FLIGHT)
#error "policy.rs passes PRIMLAB_HISTOGRAM_MAX_BINS, PRIMLAB_HISTOGRAM_THREAD_COUNTER_MAX_BINS and PRIMLAB_HISTOGRAM_THREAD_COUNTER_VECTORS_IN_FLIGHT: one is missing"
#endif

constexpr u32 kMaxBins = PRIMLAB_HISTOGRAM_MAX_BINS;
static_assert(kMaxBins <= 4096, "the binning error bound below holds for at most 4096 bins");
// warp_copies: the host picks copies (a power of two <= kBlockWarps) so that
// copies * bins * 4 <= 32 KB; one copy of the largest histogram is 16 KB.
static_assert(kMaxBins * 4 * 2 <= 32 * 1024, "two copies of the largest histogram fit 32 KB");
// thread_counters needs bins * kBlockThreads * 4 bytes of shared memory.
constexpr u32 kThreadCounterMaxBins = PRIMLAB_HISTOGRAM_THREAD_COUNTER_MAX_BINS;
// 16-byte loads in flight per thread of the thread-counter layout (64 B a
// thread keeps enough bytes in flight even at half occupancy).
constexpr int kThreadCounterVectorsInFlight = PRIMLAB_HISTOGRAM_THREAD_COUNTER_VECTORS_IN_FLIGHT;
static_assert(kThreadCounterMaxBins * kBlockThreads * 4 <= 48 * 1024, "fits the default dynamic shared limit");

// Returned by a binner for a sample that is not counted.
constexpr u32 kNoBin = 0xffffffffu;

// ---- binners ----

// Mirrors HistogramBinsI32 in kernels/src/histogram.rs: 20 bytes, 4-aligned.
struct EvenBinsI32 {
    i32 lower;    // the first value counted
    i32 upper;    // the first value past the last bin
    u32 bins;     // 1..=4096
    u32 range;    // upper - lower, 1..=2^32 - 1
    float scale;  // (f32)(bins / range): only the first guess of BinI32
};

// The exact bin floor(off * bins / range) of off = x - lower in [0, range):
//  1. t = trunc(f32(off) * scale). Three roundings of relative size <= 2^-24
//     each and a true quotient below bins <= 4096 put t within 0.001 of it,
//     so t is q - 1, q or q + 1 (q the exact bin; t <= bins).
//  2. rem = off * bins - t * range tells which: rem < 0 -> q = t - 1,
//     rem >= range -> q = t + 1, else q = t.
// kWideRange = false (range <= 2^30): rem lies in [-range, 2 * range), so
// its low 32 bits read as an i32 are exact. kWideRange = true: 64-bit.
template <bool kWideRange>
struct BinI32 {
    typedef i32 Sample;
    EvenBinsI32 p;
    __device__ __forceinline__ u32 operator()(i32 x) const {
        // x - lower modulo 2^32: below range exactly when lower <= x < upper.
        const u32 off = u32(x) - u32(p.lower);
        if (off >= p.range) return kNoBin;
        u32 t = __float2uint_rz(__fmul_rn(__uint2float_rn(off), p.scale));
        if (kWideRange) {
            const u64 d = (u64)off * p.bins;
            const u64 low = (u64)t * p.range;
            if (d < low) {
                t -= 1;
            } else if (d - low >= (u64)p.range) {
                t += 1;
            }
        } else {
            const i32 rem = i32(off * p.bins - t * p.range);
            t = t - u32(rem < 0) + u32(rem >= i32(p.range));
        }
        return t;
    }
};

// Mirrors HistogramBinsF32 in kernels/src/histogram.rs: 16 bytes, 4-aligned.
struct EvenBinsF32 {
    float lower;
    float upper;
    float scale;  // (f32)bins / (upper - lower), computed in f32 on the host
    u32 bins;
};

struct BinF32 {
    typedef float Sample;
    EvenBinsF32 p;
    __device__ __forceinline__ u32 operator()(float x) const {
        if (!(x >= p.lower && x < p.upper)) return kNoBin;
        // x - lower >= 0, so the product is >= 0 and the truncation is too.
        const int bin = __float2int_rz(__fmul_rn(__fsub_rn(x, p.lower), p.scale));
        return min(u32(bin), p.bins - 1);
    }
};

// ---- global atomics ----

template <class Binner>
__device__ __forceinline__ void count_global(const Binner& binner, typename Binner::Sample x, u32* __restrict__ hist) {
    const u32 bin = binner(x);
    if (bin != kNoBin) atomicAdd(hist + bin, 1u);
}

// Grid-stride over 16-byte vectors (input is a whole allocation: aligned),
// then the n % 4 tail.
template <class Binner>
__device__ __forceinline__ void global_atomic(const typename Binner::Sample* __restrict__ input, u64 n, Binner binner,
                                              u32* __restrict__ hist) {
    typedef typename VectorOf<typename Binner::Sample>::T V;
    const u64 vectors = n / 4;
    const u64 stride = (u64)gridDim.x * kBlockThreads;
    const u64 first = (u64)blockIdx.x * kBlockThreads + threadIdx.x;
    for (u64 v = first; v < vectors; v += stride) {
        const V x = as_vectors(input)[v];
        count_global(binner, x.x, hist);
        count_global(binner, x.y, hist);
        count_global(binner, x.z, hist);
        count_global(binner, x.w, hist);
    }
    for (u64 i = vectors * 4 + first; i < n; i += stride) count_global(binner, input[i], hist);
}

// ---- shared privatised: one counter per bin per thread ----

template <class Binner>
__device__ __forceinline__ void count_private(const Binner& binner, typename Binner::Sample x, u32* mine) {
    const u32 bin = binner(x);
    if (bin != kNoBin) mine[bin * kBlockThreads] += 1u;
}

template <class Binner>
__device__ __forceinline__ void count_private4(const Binner& binner, const typename VectorOf<typename Binner::Sample>::T& x,
                                               u32* mine) {
    count_private(binner, x.x, mine);
    count_private(binner, x.y, mine);
    count_private(binner, x.z, mine);
    count_private(binner, x.w, mine);
}

// Dynamic shared memory: bins * kBlockThreads u32 counters, counter (b, t) at
// b * kBlockThreads + t (bank t % 32 whatever b is).
template <class Binner>
__device__ __forceinline__ void thread_counters(const typename Binner::Sample* __restrict__ input, u64 n, Binner binner,
                                                u32 bins, u32* __restrict__ hist) {
    typedef typename VectorOf<typename Binner::Sample>::T V;
    extern __shared__ u32 shared_counters[];
    const int tid = int(threadIdx.x);
    u32* mine = shared_counters + tid;
    // Each thread clears and counts only its own column until the barrier
    // below, so no barrier is needed here.
    for (u32 b = 0; b < bins; ++b) mine[b * kBlockThreads] = 0u;

    const u64 vectors = n / 4;
    const u64 stride = (u64)gridDim.x * kBlockThreads;
    const u64 first = (u64)blockIdx.x * kBlockThreads + tid;
    for_each_strided_vector<kThreadCounterVectorsInFlight>(as_vectors(input), first, vectors, stride,
                               [binner, mine](const V& x, u64) { count_private4(binner, x, mine); });
    for (u64 i = vectors * 4 + first; i < n; i += stride) count_private(binner, input[i], mine);

    // Warps read other threads' counters only after every thread has
    // finished counting (RAW across threads).
    __syncthreads();
    const int lane = lane_id();
    for (u32 b = (u32)warp_id(); b < bins; b += kBlockWarps) {
        i64 sum = 0;
        for (int t = lane; t < kBlockThreads; t += kWarpThreads) sum += shared_counters[b * kBlockThreads + t];
        const i64 total = warp_reduce(sum, SumI64());
        if (lane == 0 && total != 0) atomicAdd(hist + b, (u32)total);
    }
}

// ---- shared privatised: per-warp copies with warp-aggregated increments ----

// All 32 lanes call this with their sample's bin (kNoBin for none): lanes
// with equal bins elect their lowest lane, which adds the group's size.
__device__ __forceinline__ void count_aggregated(u32 bin, u32* copy) {
    const u32 peers = __match_any_sync(kFullMask, bin);
    const int leader = __ffs(peers) - 1;
    if (lane_id() == leader && bin != kNoBin) atomicAdd(copy + bin, (u32)__popc(peers));
}

// Dynamic shared memory: copies * bins u32, copy c at [c * bins, (c + 1) * bins).
// Loops step by whole warps (the trip count depends only on the warp), so
// every lane reaches every __match_any_sync.
template <class Binner>
__device__ __forceinline__ void warp_copies(const typename Binner::Sample* __restrict__ input, u64 n, Binner binner,
                                            u32 bins, u32 copies, u32* __restrict__ hist) {
    typedef typename VectorOf<typename Binner::Sample>::T V;
    extern __shared__ u32 shared_copies[];
    const int tid = int(threadIdx.x);
    const int lane = lane_id();
    for (u32 i = tid; i < copies * bins; i += kBlockThreads) shared_copies[i] = 0u;
    // No warp counts into a copy before every slot of it is cleared.
    __syncthreads();
    u32* copy = shared_copies + ((u32)warp_id() & (copies - 1)) * bins;

    const u64 vectors = n / 4;
    const u64 stride = (u64)gridDim.x * kBlockThreads;
    const u64 warp_first = ((u64)blockIdx.x * kBlockWarps + warp_id()) * kWarpThreads;
    for (u64 base = warp_first; base < vectors; base += stride) {
        const u64 v = base + lane;
        const bool valid = v < vectors;
        V x = {};
        if (valid) x = as_vectors(input)[v];
        count_aggregated(valid ? binner(x.x) : kNoBin, copy);
        count_aggregated(valid ? binner(x.y) : kNoBin, copy);
        count_aggregated(valid ? binner(x.z) : kNoBin, copy);
        count_aggregated(valid ? binner(x.w) : kNoBin, copy);
    }
    const u64 tail_begin = vectors * 4;
    for (u64 base = tail_begin + warp_first; base < n; base += stride) {
        const u64 i = base + lane;
        count_aggregated(i < n ? binner(input[i]) : kNoBin, copy);
    }

    // Every warp's increments are complete before the copies are summed.
    __syncthreads();
    for (u32 b = tid; b < bins; b += kBlockThreads) {
        u32 total = 0;
        for (u32 c = 0; c < copies; ++c) total += shared_copies[c * bins + b];
        if (total != 0) atomicAdd(hist + b, total);
    }
}

// ---- entry points: histogram_<schedule>_<sample>[_wide] ----

extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_global_atomic_i32(const i32* __restrict__ input, u64 n, EvenBinsI32 spec, u32* __restrict__ hist) {
    global_atomic(input, n, BinI32<false>{spec}, hist);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_global_atomic_i32_wide(const i32* __restrict__ input, u64 n, EvenBinsI32 spec, u32* __restrict__ hist) {
    global_atomic(input, n, BinI32<true>{spec}, hist);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_global_atomic_f32(const float* __restrict__ input, u64 n, EvenBinsF32 spec, u32* __restrict__ hist) {
    global_atomic(input, n, BinF32{spec}, hist);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_thread_counters_i32(const i32* __restrict__ input, u64 n, EvenBinsI32 spec, u32* __restrict__ hist) {
    thread_counters(input, n, BinI32<false>{spec}, spec.bins, hist);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_thread_counters_i32_wide(const i32* __restrict__ input, u64 n, EvenBinsI32 spec, u32* __restrict__ hist) {
    thread_counters(input, n, BinI32<true>{spec}, spec.bins, hist);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_thread_counters_f32(const float* __restrict__ input, u64 n, EvenBinsF32 spec, u32* __restrict__ hist) {
    thread_counters(input, n, BinF32{spec}, spec.bins, hist);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_warp_copies_i32(const i32* __restrict__ input, u64 n, EvenBinsI32 spec, u32 copies, u32* __restrict__ hist) {
    warp_copies(input, n, BinI32<false>{spec}, spec.bins, copies, hist);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_warp_copies_i32_wide(const i32* __restrict__ input, u64 n, EvenBinsI32 spec, u32 copies,
                               u32* __restrict__ hist) {
    warp_copies(input, n, BinI32<true>{spec}, spec.bins, copies, hist);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_warp_copies_f32(const float* __restrict__ input, u64 n, EvenBinsF32 spec, u32 copies, u32* __restrict__ hist) {
    warp_copies(input, n, BinF32{spec}, spec.bins, copies, hist);
}

// ---- u64 totals from windows of u32 counts ----

// totals[b] += window[b] for every bin, one thread a bin. The host counts an
// input past 2^32 samples in windows of at most 2^31 (no u32 count of a window
// can wrap) into `window`, and launches this after each window's count on the
// same stream, so the window's counts are complete when they are read and no
// two launches touch `totals` at once.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
histogram_add_window(const u32* __restrict__ window, u64* __restrict__ totals, u32 bins) {
    const u32 b = blockIdx.x * kBlockThreads + threadIdx.x;
    if (b < bins) totals[b] += window[b];
}
