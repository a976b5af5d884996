// Top-k of each row of a row-major [rows, cols] tensor (a whole array is one
// row): the k largest values (or, for a bottom-k, the k smallest) and their
// int64 column indices, ordered by value (descending for a top-k, ascending
// for a bottom-k) and, among equal values, by index ascending. That is a
// total order, so the output is unique and bitwise reproducible.
//
// The order key (the CPU model computes exactly the same): a W-bit float's
// sign-magnitude bits map to a W-bit unsigned key that orders as the values
// do (larger key = larger value): +0.0 and -0.0 both to the sign bit alone
// (they are equal), NaN to all ones (above +inf; only reached when the caller
// orders NaN, else the launch records the first NaN's flat index and the host
// refuses the input), a negative to its bits inverted, a positive to its bits
// with the sign bit set. A bottom-k selects by the inverted key. The rank of
// column c is (key << 32) | ~c: unique within a row, larger rank first, and
// equal keys put the lower index first (~c is larger).
//
// Schedule block_radix_select (one block per row):
//   1. Radix select of the k-th largest key, 8 bits a pass from the top: a
//      256-bin shared histogram of the digit of every key that matches the
//      prefix chosen so far, then every warp picks (alike) the digit whose bin
//      holds the k-th key (counting from the top bin) and how many keys equal
//      to the k-th are still to take ("remaining"). After W / 8 passes the prefix is
//      the k-th key itself, exactly k - remaining keys lie above it.
//   2. Gather: every key above the k-th takes a slot of [0, k - remaining)
//      (shared atomic: any slot, the sort below fixes the order), and the
//      keys equal to it, counted in column order (a block-wide count of the
//      ties before each thread), fill [k - remaining, k) with the lowest
//      columns: the tie rule decides WHICH equal values are kept.
//   3. A bitonic sort of the k ranks in shared memory (padded to a power of
//      two with rank 0, below every real rank: a key of 0 has ~c >= 1 since
//      c < 2^32 - 1), descending; thread t writes output t.
//
// Schedule grid_threshold_select (several blocks per row, for wide rows and
// few of them). The k-th key is narrowed kGridBinBits bits a level, from the
// top (a 32-bit key: 11, 11, 10; a 16-bit one: 11, 5), until the keys from
// the chosen bin up are few enough for one block to sort out (at most
// kGridCandidates) or the host's last level is done (rows narrower than
// TOPK.grid_narrow_min_cols take one level: there a block per row sorts a
// whole bin out sooner than another pass over the rows); every level is one
// histogram launch and one threshold launch, and a row already narrowed
// enough skips the rest (its blocks read one flag and return):
//   1. grid_histogram: blocks of a row each count, in shared memory, the
//      level's digit of every key of their chunk that matches the row's
//      prefix so far, and add their nonzero bins into the row's histogram of
//      that level (each level has its own, zeroed by the host first).
//   2. grid_threshold: a warp per row finds the bin that holds the k-th key
//      counting from the top, extends the prefix by its digit, keeps how many
//      keys equal to the prefix are still to take, and marks the row done
//      when the keys from the prefix up (those above it, k - remaining, and
//      the bin's own) fit kGridCandidates or the level is the last; it
//      zeroes the row's candidate count.
//   3. grid_collect: every key at or above the prefix (the chosen bin, whose
//      lower bits are still 0, and everything above it) becomes a candidate:
//      its rank (the same (key << 32) | ~c) at a slot of the row's candidate
//      list (one atomic per warp; any slot, the list is a set).
//   4. grid_select: a block per row selects, among its candidates' ranks
//      (unique, so the k-th largest is one rank: ties need no order here), the
//      k-th largest by radix passes over all 64 bits, gathers every rank at or
//      above it (exactly k) and sorts and writes them as above. The candidates
//      hold every key above the prefix's bin and all of it, so the top k of
//      the row are the top k of the candidates.
// Narrowing matters where one bin holds much of a row: the top 11 bits of a
// float are its sign, exponent and two mantissa bits, so a quarter of the
// values uniform in [0, 1) share the top bin, and one block sorting them out
// made a whole array of 2^24 take 1.8 ms on the H100.
//
// The sampler (topk_block_radix_sample, topk_grid_sample: the last launch of
// either schedule with a different epilogue): the row's top k as above, then
// a softmax over the survivors with a temperature and one draw per row from a
// caller-supplied uniform (sample_and_write).
#include "common/config.cuh"

using namespace primlab;

// ---- tuning policy of this family (values from kernels/src/policy.rs) ----

#if !defined(PRIMLAB_TOPK_BLOCK_THREADS) || !defined(PRIMLAB_TOPK_MAX_K) || !defined(PRIMLAB_TOPK_GRID_BIN_BITS) || \
    !defined(PRIMLAB_TOPK_GRID_CANDIDATES) || !defined(PRIMLAB_TOPK_GRID_ITEMS)
#error "policy.rs passes PRIMLAB_TOPK_BLOCK_THREADS, PRIMLAB_TOPK_MAX_K, PRIMLAB_TOPK_GRID_BIN_BITS, PRIMLAB_TOPK_GRID_CANDIDATES and PRIMLAB_TOPK_GRID_ITEMS: one is missing"
#endif
constexpr int kTopkBlockThreads = PRIMLAB_TOPK_BLOCK_THREADS;
constexpr u32 kTopkMaxK = PRIMLAB_TOPK_MAX_K;
// Every digit bin has its own clearing thread, and warp 0's digit pick gives
// each lane 8 bins (256 = 32 x 8).
constexpr int kRadixBits = 8;
constexpr int kRadixBins = 1 << kRadixBits;
static_assert(kTopkBlockThreads >= kRadixBins, "one thread clears each digit bin");
static_assert(kTopkBlockThreads % kWarpThreads == 0 && kTopkBlockThreads <= 1024, "whole warps, one block");
static_assert(kWarpThreads == 32, "sort_ranks: a stride below a warp changes the low 5 bits of a slot alone");
static_assert(kRadixBins == kWarpThreads * 8, "a warp picks the digit, 8 bins a lane");
// The ranks of the k survivors are sorted in shared memory.
static_assert((kTopkMaxK & (kTopkMaxK - 1)) == 0, "the bitonic sort pads k to a power of two <= kTopkMaxK");
static_assert(kTopkMaxK * 8 + kRadixBins * 4 <= 48 * 1024, "the static shared-memory limit");
constexpr int kTopkBlockWarps = kTopkBlockThreads / kWarpThreads;
// grid_threshold_select's first-level bins: the top kGridBinBits bits of a key.
constexpr int kGridBinBits = PRIMLAB_TOPK_GRID_BIN_BITS;
constexpr u32 kGridBins = 1u << kGridBinBits;
static_assert(kGridBinBits <= 16, "a 16-bit key has at least kGridBinBits bits");
static_assert(kGridBins % kWarpThreads == 0, "grid_threshold: a warp's lanes own whole runs of bins");
static_assert(kGridBins * 4 <= 48 * 1024, "a block's histogram fits the static shared limit");
// A row narrowed to at most this many candidates stops narrowing.
constexpr u32 kGridCandidates = PRIMLAB_TOPK_GRID_CANDIDATES;
static_assert(kGridCandidates >= kTopkMaxK, "every k fits the candidate bound");
// Columns a thread of the histogram and collect launches loads before it
// uses any (loads in flight to cover the memory latency).
constexpr int kGridItems = PRIMLAB_TOPK_GRID_ITEMS;
static_assert(kGridItems >= 1 && kGridItems <= 16, "a thread's loads of one round stay in registers");

// Launch options (bits of `options`; kernels/src/topk.rs sets them).
constexpr u32 kLargest = 1u;
constexpr u32 kNanAboveAll = 2u;

// ---- the element types: their bits, width and NaN test ----

// to_float widens exactly (the sampler's weights start from the exact value).
struct F32Bits {
    typedef u32 Bits;
    static constexpr int kWidth = 32;
    static __device__ __forceinline__ bool is_nan(u32 b) { return (b & 0x7fffffffu) > 0x7f800000u; }
    static __device__ __forceinline__ float to_float(u32 b) { return __uint_as_float(b); }
};
struct Bf16Bits {
    typedef u16 Bits;
    static constexpr int kWidth = 16;
    static __device__ __forceinline__ bool is_nan(u32 b) { return (b & 0x7fffu) > 0x7f80u; }
    static __device__ __forceinline__ float to_float(u32 b) { return __uint_as_float(b << 16); }
};
struct F16Bits {
    typedef u16 Bits;
    static constexpr int kWidth = 16;
    static __device__ __forceinline__ bool is_nan(u32 b) { return (b & 0x7fffu) > 0x7c00u; }
    static __device__ __forceinline__ float to_float(u32 b) {
        // Every binary16 value, subnormals and infinities included, is a float.
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)b));
        return f;
    }
};

// The selection key of one element (file comment): W bits, in the low bits.
template <class E>
__device__ __forceinline__ u32 selection_key(u32 bits, u32 options) {
    constexpr u32 kSign = 1u << (E::kWidth - 1);
    constexpr u32 kAll = E::kWidth == 32 ? 0xffffffffu : (1u << E::kWidth) - 1u;
    u32 key;
    if (E::is_nan(bits)) {
        key = kAll;
    } else if ((bits & ~kSign) == 0) {
        key = kSign;
    } else if (bits & kSign) {
        key = ~bits & kAll;
    } else {
        key = bits | kSign;
    }
    return (options & kLargest) ? key : (~key & kAll);
}

__device__ __forceinline__ u64 rank_of(u32 key, u32 column) {
    return ((u64)key << 32) | (u64)(~column);
}

__device__ __forceinline__ u32 column_of(u64 rank) {
    return ~(u32)rank;
}

struct TopkShared {
    u32 hist[kRadixBins];
    u32 warp_ties[kTopkBlockWarps];
    u32 above;
    // The sampler's per-warp weight sums and the drawn survivor.
    double warp_weights[kTopkBlockWarps];
    u32 pick;
    u64 ranks[kTopkMaxK];
};
static_assert(sizeof(TopkShared) <= 48 * 1024, "a block's shared state fits the static shared-memory limit");

// The inclusive scan of `value` over the lanes of a full warp (shfl_up by 1,
// 2, 4, 8, 16: every lane reads its source before any adds), in lane order,
// so a float scan rounds the same way every run.
template <class T>
__device__ __forceinline__ T warp_inclusive_scan(T value) {
    const u32 lane = threadIdx.x % kWarpThreads;
#pragma unroll
    for (int d = 1; d < kWarpThreads; d <<= 1) {
        const T up = __shfl_up_sync(kFullMask, value, d);
        if (lane >= (u32)d) value += up;
    }
    return value;
}

// The digit whose bin holds the `remaining`-th key from the top, and how
// many keys of that bin are still to take: every warp computes it from the
// shared bins alike (no warp waits on another, and no shuffle sits in a
// branch), so each thread keeps the block-uniform answer in registers. Lane
// l owns the bins 255 - 8l down to 248 - 8l (lane 0 the top ones); an
// inclusive scan over the lanes' totals gives each lane the count above its
// bins. Exactly one lane sees `remaining` within its bins while the
// invariant holds (1 <= remaining <= the keys matching the prefix: k <= cols
// at the start, and each pick keeps it); with none (k = 0) nothing changes.
__device__ __forceinline__ void pick_digit(const TopkShared& s, int shift, u32& prefix, u32& remaining) {
    const u32 lane = threadIdx.x % kWarpThreads;
    u32 counts[8];
    u32 total = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        counts[j] = s.hist[kRadixBins - 1 - (lane * 8 + j)];
        total += counts[j];
    }
    const u32 inclusive = warp_inclusive_scan(total);
    u32 above = inclusive - total;
    const bool mine = above < remaining && remaining <= inclusive;
    // The chosen lane's digit and what is left of `remaining` inside it.
    u32 digit = 0, left = remaining;
    bool found = false;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        if (!found && remaining <= above + counts[j]) {
            digit = kRadixBins - 1 - (lane * 8 + j);
            left = remaining - above;
            found = true;
        }
        if (!found) above += counts[j];
    }
    const u32 chosen = __ballot_sync(kFullMask, mine);
    if (chosen == 0) return;
    const int source = __ffs(chosen) - 1;
    prefix |= __shfl_sync(kFullMask, digit, source) << shift;
    remaining = __shfl_sync(kFullMask, left, source);
}

// Step 1: the k-th largest selection key of the row (`prefix`) and how many
// keys equal to it belong to the top k (`remaining`), in every thread. In the
// first pass a NaN records its flat index when NaN is not ordered.
template <class E>
__device__ __forceinline__ void radix_select(const typename E::Bits* row, u64 row_first, u64 cols, u32 k,
                                             u32 options, u64* nan_index, TopkShared& s, u32& prefix,
                                             u32& remaining) {
    prefix = 0;
    remaining = k;
    u32 mask = 0;
    for (int shift = E::kWidth - kRadixBits; shift >= 0; shift -= kRadixBits) {
        if (threadIdx.x < kRadixBins) s.hist[threadIdx.x] = 0;
        // The clears are visible before any count.
        __syncthreads();
        const bool first = shift == E::kWidth - kRadixBits;
        for (u64 c = threadIdx.x; c < cols; c += kTopkBlockThreads) {
            const u32 bits = row[c];
            if (first && !(options & kNanAboveAll) && E::is_nan(bits)) atomicMin(nan_index, row_first + c);
            const u32 key = selection_key<E>(bits, options);
            const u32 digit = (key >> shift) & (kRadixBins - 1);
            if ((key & mask) == prefix) atomicAdd(&s.hist[digit], 1u);
        }
        // Every count is in before any warp reads the bins.
        __syncthreads();
        pick_digit(s, shift, prefix, remaining);
        mask |= (u32)(kRadixBins - 1) << shift;
        // Every warp has read the bins before the next pass clears them.
        __syncthreads();
        // k = 0 only looks for a NaN, which the first pass did (block-uniform).
        if (k == 0) break;
    }
}

// Step 2: the ranks of the top k in s.ranks[0, k), in no particular order.
template <class E>
__device__ __forceinline__ void gather(const typename E::Bits* row, u64 cols, u32 k, u32 options, u32 kth,
                                       u32 remaining, TopkShared& s) {
    const u32 above_count = k - remaining;
    const u32 warp = threadIdx.x / kWarpThreads;
    const u32 lane = threadIdx.x % kWarpThreads;
    if (threadIdx.x == 0) s.above = 0;
    __syncthreads();
    u32 ties_before = 0;  // ties in the columns of earlier rounds (block-uniform)
    for (u64 first = 0; first < cols; first += kTopkBlockThreads) {
        const u64 c = first + threadIdx.x;
        const u32 key = c < cols ? selection_key<E>(row[c], options) : 0u;
        const bool above = c < cols && key > kth;
        const bool tie = c < cols && key == kth;
        if (above) {
            // Exactly above_count keys lie above the k-th (the select's
            // invariant); the bound keeps a broken invariant inside the array.
            const u32 slot = atomicAdd(&s.above, 1u);
            if (slot < above_count) s.ranks[slot] = rank_of(key, (u32)c);
        }
        const u32 ballot = __ballot_sync(kFullMask, tie);
        if (lane == 0) s.warp_ties[warp] = __popc(ballot);
        __syncthreads();
        u32 rank = ties_before + __popc(ballot & ((1u << lane) - 1u));
        u32 round = 0;
        for (u32 w = 0; w < kTopkBlockWarps; ++w) {
            if (w < warp) rank += s.warp_ties[w];
            round += s.warp_ties[w];
        }
        if (tie && rank < remaining) s.ranks[above_count + rank] = rank_of(key, (u32)c);
        ties_before += round;
        // Every thread has read warp_ties before the next round rewrites it.
        __syncthreads();
    }
}

// One step of the bitonic sort: each (i, i ^ stride) pair is compared by the
// thread of i < j alone, and the pairs of one step are disjoint; the block
// direction (i & size) == 0 is descending, so the last merge (size = padded)
// leaves the whole run descending.
__device__ __forceinline__ void bitonic_step(u32 padded, u32 size, u32 stride, TopkShared& s) {
    for (u32 i = threadIdx.x; i < padded; i += kTopkBlockThreads) {
        const u32 j = i ^ stride;
        if (j > i) {
            const u64 a = s.ranks[i], b = s.ranks[j];
            const bool descending = (i & size) == 0;
            if (descending ? a < b : a > b) {
                s.ranks[i] = b;
                s.ranks[j] = a;
            }
        }
    }
}

// The smallest power of two at or above n (n >= 1).
__device__ __forceinline__ u32 padded_count(u32 n) {
    u32 padded = 1;
    while (padded < n) padded <<= 1;
    return padded;
}

// Step 3: sorts s.ranks[0, k) descending (padded with rank 0 to a power of
// two); ends on a barrier.
__device__ __forceinline__ void sort_ranks(u32 k, TopkShared& s) {
    const u32 padded = padded_count(k);
    for (u32 i = k + threadIdx.x; i < padded; i += kTopkBlockThreads) s.ranks[i] = 0;
    __syncthreads();
    // Bitonic merges of doubling size (bitonic_step). Thread t owns the slots
    // t + r * kTopkBlockThreads, so below a stride of a warp both slots of a
    // pair belong to lanes of one warp (they differ in the low 5 bits of the
    // slot alone, and kTopkBlockThreads is whole warps):
    // the steps of a merge with strides of a warp or more wait for the block,
    // the rest for the warp alone, and each merge ends with the block's barrier
    // (the next merge's first step reaches across warps). Every loop bound is
    // the same for every thread, so every thread meets every barrier.
    for (u32 size = 2; size <= padded; size <<= 1) {
        u32 stride = size >> 1;
        for (; stride >= (u32)kWarpThreads; stride >>= 1) {
            bitonic_step(padded, size, stride, s);
            __syncthreads();
        }
        for (; stride > 0; stride >>= 1) {
            bitonic_step(padded, size, stride, s);
            __syncwarp();
        }
        __syncthreads();
    }
}

// The row's outputs from the sorted ranks: thread t writes output t.
template <class E>
__device__ __forceinline__ void write_topk(const typename E::Bits* row, u32 k, typename E::Bits* values,
                                           i64* indices, const TopkShared& s) {
    for (u32 t = threadIdx.x; t < k; t += kTopkBlockThreads) {
        const u32 c = column_of(s.ranks[t]);
        values[t] = row[c];
        indices[t] = (i64)c;
    }
}

// ---- the sampler's epilogue (topk_*_sample kernels) ----
//
// After the sort, s.ranks[0, k) holds the row's top k in the contract's order
// (value descending, index ascending). Survivor i (value v_i, v_0 the
// largest) weighs w_i = exp((v_i - v_0) / T), computed in double from the
// exactly widened values; the draw is the first survivor j, in that order,
// with u * S < C_j (C_j the sum of the weights of survivors 0..j, S the sum of
// all), the last survivor if rounding leaves none; the owner of the drawn
// survivor writes its column and w_j / S. Thread t owns the contiguous survivors [t * kSampleItems,
// (t + 1) * kSampleItems), so the block's prefix order is the survivors' order
// and every run sums in the same order (bitwise reproducible). Refusals, as
// flat indices or rows in `flags` (u64 max until set; the host reports them in
// this order): [0] a NaN's flat index (the NaN scan of the first pass), [1] the
// first +inf of a row whose largest is +inf and holds no NaN, [2] a row whose
// largest is -inf (nothing to draw), [3] a row whose uniform is not in [0, 1).
constexpr u32 kSampleItems = kTopkMaxK / kTopkBlockThreads;
static_assert(kTopkMaxK % kTopkBlockThreads == 0, "each thread owns kSampleItems survivors");

__device__ __forceinline__ double sample_weight(float v, float top, float temperature) {
    // -inf - top is -inf, and exp(-inf) is 0: a masked logit is never drawn.
    return exp(((double)v - (double)top) / (double)temperature);
}

template <class E>
__device__ __forceinline__ void sample_and_write(const typename E::Bits* row, u64 row_first, u32 k, float temperature,
                                                 float u, i64* sample, float* probability, u64* flags,
                                                 TopkShared& s) {
    const u32 lane = threadIdx.x % kWarpThreads;
    const u32 warp = threadIdx.x / kWarpThreads;
    // Every thread reads the same largest survivor and uniform: the refusal
    // below is block-uniform, so the barriers after it are reached by all.
    const u32 top_column = column_of(s.ranks[0]);
    const u32 top_bits = row[top_column];
    const float top = E::to_float(top_bits);
    const bool nan_row = E::is_nan(top_bits);  // flags[0] holds it already
    const bool inf_top = !nan_row && top == __int_as_float(0x7f800000);
    const bool masked = !nan_row && top == __int_as_float(0xff800000);
    const bool bad_uniform = !(u >= 0.0f && u < 1.0f);
    if (threadIdx.x == 0) {
        if (inf_top) atomicMin(&flags[1], row_first + top_column);
        if (masked) atomicMin(&flags[2], (u64)blockIdx.x);
        if (bad_uniform) atomicMin(&flags[3], (u64)blockIdx.x);
    }
    if (nan_row || inf_top || masked || bad_uniform) return;
    double weights[kSampleItems];
    double local = 0.0;
    const u32 first = threadIdx.x * kSampleItems;
#pragma unroll
    for (u32 j = 0; j < kSampleItems; ++j) {
        // Survivors past k weigh 0 (the identity of the sum).
        weights[j] = first + j < k ? sample_weight(E::to_float(row[column_of(s.ranks[first + j])]), top, temperature)
                                   : 0.0;
        local += weights[j];
    }
    // Inclusive scan of the threads' sums within the warp, then the warps'.
    const double inclusive = warp_inclusive_scan(local);
    // The lanes before this one, exactly: the previous lane's inclusive sum.
    const double previous = __shfl_up_sync(kFullMask, inclusive, 1);
    if (lane == kWarpThreads - 1) s.warp_weights[warp] = inclusive;
    if (threadIdx.x == 0) s.pick = k - 1;
    // The warps' sums and the pick's start are visible before anyone reads them.
    __syncthreads();
    double before = lane == 0 ? 0.0 : previous, total = 0.0;
    for (u32 w = 0; w < kTopkBlockWarps; ++w) {
        if (w < warp) before += s.warp_weights[w];
        total += s.warp_weights[w];
    }
    const double target = (double)u * total;
    double running = before;
    for (u32 j = 0; j < kSampleItems; ++j) {
        running += weights[j];
        if (first + j < k && target < running) {
            atomicMin(&s.pick, first + j);
            break;
        }
    }
    // Every candidate is in before the pick is read.
    __syncthreads();
    // The owner of the drawn survivor writes it with the weight it summed
    // (an unrolled match keeps `weights` in registers).
    const u32 pick = s.pick;
#pragma unroll
    for (u32 j = 0; j < kSampleItems; ++j) {
        if (first + j == pick) {
            *sample = (i64)column_of(s.ranks[pick]);
            *probability = (float)(weights[j] / total);
        }
    }
}

// Steps 1-3 for the block's row: false when k = 0 (the launch only looked for
// a NaN; block-uniform, so no barrier follows for anyone), else s.ranks[0, k)
// sorted and visible to every thread.
template <class E>
__device__ __forceinline__ bool block_radix_ranks(const typename E::Bits* row, u64 row_first, u64 cols, u32 k,
                                                  u32 options, u64* nan_index, TopkShared& s) {
    u32 kth, remaining;
    radix_select<E>(row, row_first, cols, k, options, nan_index, s, kth, remaining);
    if (k == 0) return false;
    gather<E>(row, cols, k, options, kth, remaining, s);
    // The gathered ranks are visible to the sort (gather ends on a barrier).
    sort_ranks(k, s);
    return true;
}

template <class E>
__device__ __forceinline__ void block_radix_select(const typename E::Bits* __restrict__ in, u64 cols, u32 k,
                                                   u32 options, typename E::Bits* __restrict__ values,
                                                   i64* __restrict__ indices, u64* nan_index) {
    __shared__ TopkShared s;
    const u64 row_first = (u64)blockIdx.x * cols;
    const typename E::Bits* row = in + row_first;
    if (block_radix_ranks<E>(row, row_first, cols, k, options, nan_index, s)) {
        write_topk<E>(row, k, values + (u64)blockIdx.x * k, indices + (u64)blockIdx.x * k, s);
    }
}

// The sampler over one block per row: the row's top k (largest, NaN refused)
// and the draw (k >= 1).
template <class E>
__device__ __forceinline__ void block_radix_sample(const typename E::Bits* __restrict__ in, u64 cols, u32 k,
                                                   float temperature, const float* __restrict__ uniforms,
                                                   i64* __restrict__ samples, float* __restrict__ probabilities,
                                                   u64* flags) {
    __shared__ TopkShared s;
    const u64 row_first = (u64)blockIdx.x * cols;
    const typename E::Bits* row = in + row_first;
    if (block_radix_ranks<E>(row, row_first, cols, k, kLargest, flags, s)) {
        sample_and_write<E>(row, row_first, k, temperature, uniforms[blockIdx.x], samples + blockIdx.x,
                            probabilities + blockIdx.x, flags, s);
    }
}

// One block per row (grid = rows); k <= min(cols, kTopkMaxK) (k = 0 only
// scans for NaN) and
// cols < 2^32 - 1 (the host checks both). `nan_index` holds u64 max before the
// launch; when NaN is not ordered it ends as the smallest flat index of a NaN.
#define PRIMLAB_TOPK_KERNEL(suffix, E)                                                                      \
    extern "C" __global__ void __launch_bounds__(kTopkBlockThreads)                                         \
        topk_block_radix_select_##suffix(const E::Bits* __restrict__ in, u64 cols, u32 k, u32 options,      \
                                         E::Bits* __restrict__ values, i64* __restrict__ indices,           \
                                         u64* nan_index) {                                                  \
        block_radix_select<E>(in, cols, k, options, values, indices, nan_index);                            \
    }                                                                                                       \
    extern "C" __global__ void __launch_bounds__(kTopkBlockThreads)                                         \
        topk_block_radix_sample_##suffix(const E::Bits* __restrict__ in, u64 cols, u32 k, float temperature, \
                                         const float* __restrict__ uniforms, i64* __restrict__ samples,     \
                                         float* __restrict__ probabilities, u64* flags) {                   \
        block_radix_sample<E>(in, cols, k, temperature, uniforms, samples, probabilities, flags);           \
    }

PRIMLAB_TOPK_KERNEL(f32, F32Bits)
PRIMLAB_TOPK_KERNEL(bf16, Bf16Bits)
PRIMLAB_TOPK_KERNEL(f16, F16Bits)

// ---------------------------------------------------------------------------
// grid_threshold_select

// A row's narrowing so far (grid_threshold writes it, the next level's
// launches and grid_collect read it): the bits of the k-th key chosen so far
// (`prefix`, lower bits 0), how many keys equal to it are still to take
// (`remaining`), and whether the row has stopped narrowing (`done`).
struct GridRowState {
    u32 prefix;
    u32 remaining;
    u32 done;
    u32 unused;
};

// The bits of a W-bit key above bit `top` (none when top = W: the first level).
template <class E>
__device__ __forceinline__ u32 bits_above(u32 top) {
    constexpr u32 kAll = E::kWidth == 32 ? 0xffffffffu : (1u << E::kWidth) - 1u;
    return top >= (u32)E::kWidth ? 0u : (kAll << top) & kAll;
}

// The bits of the columns at offsets j * kTopkBlockThreads + threadIdx.x (j <
// kGridItems) from `first`, a round's first column, 0 at offsets at or past
// `left` (the chunk's columns from `first` on): every load of a round is
// issued before any is used, so a thread has kGridItems in flight. An offset
// stays below a round's kTopkBlockThreads * kGridItems columns, so it is
// 32-bit and cannot wrap, and each load's address is `first` plus a constant
// and the thread's index. These passes are issue-bound (the second level's
// took 68 warp instructions a warp's 32 columns at 2^28 on the H100), and
// 64-bit column arithmetic costs several of them a column.
template <class E>
__device__ __forceinline__ void load_grid_round(const typename E::Bits* __restrict__ first, u32 left,
                                                u32 (&loaded)[kGridItems]) {
#pragma unroll
    for (int j = 0; j < kGridItems; ++j) {
        const u32 offset = (u32)j * kTopkBlockThreads + threadIdx.x;
        loaded[j] = offset < left ? (u32)first[offset] : 0u;
    }
}

// Calls visit(c, bits, valid) for every column c of row blockIdx.y's chunk
// blockIdx.x of `chunk` columns (valid: c < the chunk's end; bits 0 past it,
// and c then meaningless), kGridItems loads in flight a thread. A column fits
// 32 bits: the launch's contract is cols < 2^32 - 1. Every thread of the block
// runs the same whole rounds, so every lane of a warp calls visit equally
// often and a visit may use warp collectives.
template <class E, class Visit>
__device__ __forceinline__ void for_each_chunk_item(const typename E::Bits* __restrict__ in, u64 cols, u64 chunk,
                                                    Visit visit) {
    const typename E::Bits* row = in + (u64)blockIdx.y * cols;
    const u64 begin = (u64)blockIdx.x * chunk;
    const u64 end = min(cols, begin + chunk);
    constexpr u32 kRound = (u32)kTopkBlockThreads * kGridItems;
    // The round's start is 64-bit (base + kRound may pass 2^32 at a row's end).
    for (u64 base = begin; base < end; base += kRound) {
        const u32 left = (u32)min(end - base, (u64)kRound);
        u32 loaded[kGridItems];
        load_grid_round<E>(row + base, left, loaded);
#pragma unroll
        for (int j = 0; j < kGridItems; ++j) {
            const u32 offset = (u32)j * kTopkBlockThreads + threadIdx.x;
            visit((u32)base + offset, loaded[j], offset < left);
        }
    }
}

// Appends `rank` at a slot of `list` when `keep`: one atomic a warp (its
// leader's), each lane the slot of its rank among the warp's kept ones. Every
// lane of the warp calls it (the ballot and the broadcast see all 32).
__device__ __forceinline__ void append_rank(bool keep, u64 rank, u32* count, u64* __restrict__ list) {
    const u32 lane = threadIdx.x % kWarpThreads;
    const u32 ballot = __ballot_sync(kFullMask, keep);
    u32 slot = 0;
    if (lane == 0 && ballot != 0) slot = atomicAdd(count, (u32)__popc(ballot));
    slot = __shfl_sync(kFullMask, slot, 0);
    if (keep) list[slot + __popc(ballot & ((1u << lane) - 1u))] = rank;
}

// Adds a block's nonzero bins into the row's histogram of the level.
__device__ __forceinline__ void flush_bins(const u32* bins, u32* __restrict__ row_hist) {
    for (u32 b = threadIdx.x; b < kGridBins; b += kTopkBlockThreads) {
        if (bins[b] != 0) atomicAdd(&row_hist[b], bins[b]);
    }
}

// Launch 1 of a level, grid (chunks, rows): the level's digit (`bits` bits
// from bit `shift`) of every key of the row's chunk blockIdx.x of `chunk`
// columns that matches the row's prefix, counted into the level's histogram.
// The first level (shift + bits = W) matches every key, reads no state and
// records a NaN's flat index when NaN is not ordered.
template <class E>
__device__ __forceinline__ void grid_histogram(const typename E::Bits* __restrict__ in, u64 cols, u64 chunk,
                                               u32 options, u32 shift, u32 bits, u32* __restrict__ hist,
                                               const GridRowState* __restrict__ state, u64* nan_index) {
    __shared__ u32 bins[kGridBins];
    const bool first = shift + bits == (u32)E::kWidth;
    u32 prefix = 0;
    if (!first) {
        const GridRowState row_state = state[blockIdx.y];
        // Block-uniform (every thread reads the same word), and before any
        // barrier: a narrowed row's blocks all leave here.
        if (row_state.done) return;
        prefix = row_state.prefix;
    }
    const u32 above = bits_above<E>(shift + bits);
    const u32 digit_mask = (1u << bits) - 1u;
    const u64 row_first = (u64)blockIdx.y * cols;
    for (u32 b = threadIdx.x; b < kGridBins; b += kTopkBlockThreads) bins[b] = 0;
    // The clears are visible before any count.
    __syncthreads();
    for_each_chunk_item<E>(in, cols, chunk, [&](u32 c, u32 bits_of_c, bool valid) {
        if (first && valid && !(options & kNanAboveAll) && E::is_nan(bits_of_c)) atomicMin(nan_index, row_first + c);
        const u32 key = selection_key<E>(bits_of_c, options);
        // One shared atomic a counted key (a warp-aggregated add through
        // __match_any_sync cost the decoder shapes 10-46 % on the H100).
        if (valid && (key & above) == prefix) atomicAdd(&bins[(key >> shift) & digit_mask], 1u);
    });
    // Every count is in before the flush.
    __syncthreads();
    flush_bins(bins, hist + (u64)blockIdx.y * kGridBins);
}

// Launch 2 of a level, one warp per row (grid rows): the bin of the level's
// histogram holding the remaining-th key from the top (lane l owns the bins
// counted from the top, kGridBins / 32 of them: the same lane scan as
// pick_digit), the prefix extended by it, and the row's candidate count
// zeroed. The first level starts from prefix 0 and remaining = k. A row is
// done once the keys from the prefix up fit kGridCandidates or at the last
// level launched (`last`); a row done at an earlier level keeps its state.
__device__ __forceinline__ void grid_threshold(const u32* __restrict__ hist, u32 k, u32 shift, u32 first, u32 last,
                                               GridRowState* __restrict__ state, u32* __restrict__ count) {
    constexpr u32 kPerLane = kGridBins / kWarpThreads;
    const u32 lane = threadIdx.x;
    GridRowState row_state = first ? GridRowState{0u, k, 0u, 0u} : state[blockIdx.x];
    // Warp-uniform: every lane read the same state.
    if (row_state.done) return;
    const u32* row_hist = hist + (u64)blockIdx.x * kGridBins;
    const u32 remaining = row_state.remaining;
    u32 total = 0;
    for (u32 j = 0; j < kPerLane; ++j) total += row_hist[kGridBins - 1 - (lane * kPerLane + j)];
    const u32 inclusive = warp_inclusive_scan(total);
    const u32 above = inclusive - total;
    if (above < remaining && remaining <= inclusive) {
        u32 seen = above;
        for (u32 j = 0; j < kPerLane; ++j) {
            const u32 b = kGridBins - 1 - (lane * kPerLane + j);
            if (remaining <= seen + row_hist[b]) {
                const u32 left = remaining - seen;
                row_state.prefix |= b << shift;
                row_state.remaining = left;
                // Candidates from the prefix up: the k - left keys above the
                // bin and the bin's own.
                const u64 candidates = (u64)(k - left) + row_hist[b];
                row_state.done = candidates <= kGridCandidates || last;
                state[blockIdx.x] = row_state;
                break;
            }
            seen += row_hist[b];
        }
    }
    if (lane == 0) count[blockIdx.x] = 0;
}

// Launch 3, grid (chunks, rows): every key of the chunk at or above the row's
// prefix appended to the row's candidates as its rank. A warp takes its slots
// with one atomic (its leader's), each lane the slot of its rank among the
// warp's candidates.
template <class E>
__device__ __forceinline__ void grid_collect(const typename E::Bits* __restrict__ in, u64 cols, u64 chunk,
                                             u32 options, const GridRowState* __restrict__ state, u32* count,
                                             u64* __restrict__ candidates) {
    const u32 threshold = state[blockIdx.y].prefix;
    u64* row_candidates = candidates + (u64)blockIdx.y * cols;
    for_each_chunk_item<E>(in, cols, chunk, [&](u32 c, u32 bits_of_c, bool valid) {
        const u32 key = selection_key<E>(bits_of_c, options);
        append_rank(valid && key >= threshold, rank_of(key, c), &count[blockIdx.y], row_candidates);
    });
}

// Rows of TOPK.grid_narrow_min_cols columns or more narrow over several levels.
// Reading the whole row at every level cost a full read a level, so from the
// second level on the schedule reads a list instead: the second level's pass
// over the row appends every key at or above the first level's prefix (its
// bin and everything above it: a superset of the final candidates, since a
// later prefix only extends it) to the row's list A as ranks, while it counts
// the second level's digits; later levels count over list A, and a last pass
// keeps A's ranks at or above the final prefix in list B, which the select
// reads. Lists A and B each hold `cols` ranks a row.
//
// List A is kept in segments, one a block: block x of a row keeps at most the
// `chunk` columns it reads, so its ranks fit columns [x * chunk, (x + 1) *
// chunk) of the row's list, taken with a shared counter, and the block writes
// its count once (`segment_counts`, gridDim.x a row). One global counter a row
// serialised every warp that kept a key: 8.4 million atomics on one address at
// 2^28 (6.2 ms against the pass's 0.42 ms of reading). The list passes run the
// same grid, block x reading segment x.

// Segment blockIdx.x of row blockIdx.y of list A: where it starts and how
// many ranks it holds.
__device__ __forceinline__ const u64* list_segment(const u64* list_a, const u32* segment_counts, u64 cols, u64 chunk,
                                                   u32& count) {
    count = segment_counts[(u64)blockIdx.y * gridDim.x + blockIdx.x];
    return list_a + (u64)blockIdx.y * cols + (u64)blockIdx.x * chunk;
}

// The second level's pass, grid (chunks, rows): every key of the chunk at or
// above the row's prefix appended to the block's segment of list A, and,
// unless the row is done, the level's digit (`bits` bits from `shift`) of
// every key matching the prefix counted into the level's histogram.
template <class E>
__device__ __forceinline__ void grid_collect_histogram(const typename E::Bits* __restrict__ in, u64 cols, u64 chunk,
                                                       u32 options, u32 shift, u32 bits, u32* __restrict__ hist,
                                                       const GridRowState* __restrict__ state,
                                                       u32* __restrict__ segment_counts, u64* __restrict__ list_a) {
    __shared__ u32 bins[kGridBins];
    __shared__ u32 kept;
    const GridRowState row_state = state[blockIdx.y];
    // Block-uniform: every thread read the same state.
    const bool narrowing = !row_state.done;
    const u32 prefix = row_state.prefix;
    const u32 above = bits_above<E>(shift + bits);
    const u32 digit_mask = (1u << bits) - 1u;
    const u64 row_first = (u64)blockIdx.y * cols;
    for (u32 b = threadIdx.x; b < kGridBins; b += kTopkBlockThreads) bins[b] = 0;
    if (threadIdx.x == 0) kept = 0;
    // The clears are visible before any count.
    __syncthreads();
    // The block's segment: the columns of its chunk (list_segment's rule).
    u64* segment = list_a + row_first + (u64)blockIdx.x * chunk;
    for_each_chunk_item<E>(in, cols, chunk, [&](u32 c, u32 bits_of_c, bool valid) {
        const u32 key = selection_key<E>(bits_of_c, options);
        append_rank(valid && key >= prefix, rank_of(key, c), &kept, segment);
        if (narrowing && valid && (key & above) == prefix) atomicAdd(&bins[(key >> shift) & digit_mask], 1u);
    });
    // Every count and every slot is taken before the flush and the segment's count.
    __syncthreads();
    if (threadIdx.x == 0) segment_counts[(u64)blockIdx.y * gridDim.x + blockIdx.x] = kept;
    if (narrowing) flush_bins(bins, hist + (u64)blockIdx.y * kGridBins);
}

// A later level's count over list A, grid (chunks, rows): the level's digit of
// every listed key that matches the row's prefix (a narrowed row's blocks
// return at once).
template <class E>
__device__ __forceinline__ void grid_list_histogram(const u64* __restrict__ list_a,
                                                    const u32* __restrict__ segment_counts, u64 cols, u64 chunk,
                                                    u32 shift, u32 bits, u32* __restrict__ hist,
                                                    const GridRowState* __restrict__ state) {
    __shared__ u32 bins[kGridBins];
    const GridRowState row_state = state[blockIdx.y];
    // Block-uniform, and before any barrier: a narrowed row's blocks all leave here.
    if (row_state.done) return;
    const u32 prefix = row_state.prefix;
    const u32 above = bits_above<E>(shift + bits);
    const u32 digit_mask = (1u << bits) - 1u;
    u32 count;
    const u64* segment = list_segment(list_a, segment_counts, cols, chunk, count);
    for (u32 b = threadIdx.x; b < kGridBins; b += kTopkBlockThreads) bins[b] = 0;
    // The clears are visible before any count.
    __syncthreads();
    for (u32 i = threadIdx.x; i < count; i += kTopkBlockThreads) {
        const u32 key = (u32)(segment[i] >> 32);
        if ((key & above) == prefix) atomicAdd(&bins[(key >> shift) & digit_mask], 1u);
    }
    // Every count is in before the flush.
    __syncthreads();
    flush_bins(bins, hist + (u64)blockIdx.y * kGridBins);
}

// The last pass over list A, grid (chunks, rows): every rank whose key is at
// or above the row's final prefix appended to list B (count_b), which then
// holds exactly what grid_collect would have collected from the row.
__device__ __forceinline__ void grid_list_collect(const u64* __restrict__ list_a,
                                                  const u32* __restrict__ segment_counts, u64 cols, u64 chunk,
                                                  const GridRowState* __restrict__ state, u32* count_b,
                                                  u64* __restrict__ list_b) {
    const u64 floor = (u64)state[blockIdx.y].prefix << 32;
    u32 count;
    const u64* segment = list_segment(list_a, segment_counts, cols, chunk, count);
    // Every lane of a warp runs the same rounds (whole rounds of the block). The
    // final candidates are few (at most TOPK.grid_candidates unless the last
    // level's bin holds more), so one global counter a row costs little here.
    for (u32 base = 0; base < count; base += kTopkBlockThreads) {
        const u32 i = base + threadIdx.x;
        const u64 rank = i < count ? segment[i] : 0u;
        append_rank(i < count && rank >= floor, rank, &count_b[blockIdx.y], list_b + (u64)blockIdx.y * cols);
    }
}

// Whether a row's m candidates are sorted whole instead of selected: when they
// fit the shared ranks and their sort costs no more steps than the k
// survivors' would (or they are at most kSortAllMax). Eight radix passes over
// the candidates, each with three block barriers, cost more than a small sort:
// the decoder's rows leave a few hundred candidates or fewer.
constexpr u32 kSortAllMax = 1024;
static_assert(kSortAllMax <= kTopkMaxK, "a sorted row of candidates fits the shared ranks");
__device__ __forceinline__ bool sorts_all_candidates(u32 m, u32 k) {
    return m <= kTopkMaxK && padded_count(m) <= max(padded_count(k), kSortAllMax);
}

// Launch 4, a block per row: the top k of the row's m candidate ranks, sorted
// into s.ranks[0, k) and visible to every thread at the end. Few candidates
// are sorted whole (sorts_all_candidates). Otherwise the k-th largest is found
// by 8-bit radix passes over all 64 bits (the pick is pick_digit's), then
// every rank at or above it (exactly k: ranks are unique) gathered and sorted.
__device__ __forceinline__ void grid_select_ranks(const u64* __restrict__ row_candidates, u32 m, u32 k,
                                                  TopkShared& s) {
    // Block-uniform (m and k are the row's), so every thread takes the same
    // path and the same barriers.
    if (sorts_all_candidates(m, k)) {
        for (u32 i = threadIdx.x; i < m; i += kTopkBlockThreads) s.ranks[i] = row_candidates[i];
        // sort_ranks waits for the block before its first step, so these
        // writes are visible to it; descending, its first k are the top k.
        sort_ranks(m, s);
        return;
    }
    // A u64 counter below: m may come within a block of 2^32.
    u64 prefix = 0, mask = 0;
    u32 remaining = k;
    for (int shift = 64 - kRadixBits; shift >= 0; shift -= kRadixBits) {
        if (threadIdx.x < kRadixBins) s.hist[threadIdx.x] = 0;
        // The clears are visible before any count.
        __syncthreads();
        for (u64 i = threadIdx.x; i < m; i += kTopkBlockThreads) {
            const u64 r = row_candidates[i];
            if ((r & mask) == prefix) atomicAdd(&s.hist[(u32)(r >> shift) & (kRadixBins - 1)], 1u);
        }
        // Every count is in before any warp reads the bins.
        __syncthreads();
        u32 digit_prefix = 0;
        pick_digit(s, 0, digit_prefix, remaining);
        prefix |= (u64)digit_prefix << shift;
        mask |= (u64)(kRadixBins - 1) << shift;
        // Every warp has read the bins before the next pass clears them.
        __syncthreads();
    }
    if (threadIdx.x == 0) s.above = 0;
    __syncthreads();
    for (u64 i = threadIdx.x; i < m; i += kTopkBlockThreads) {
        const u64 r = row_candidates[i];
        if (r >= prefix) {
            // Exactly k ranks lie at or above the k-th; the bound keeps a
            // broken invariant inside the array.
            const u32 slot = atomicAdd(&s.above, 1u);
            if (slot < k) s.ranks[slot] = r;
        }
    }
    // The gathered ranks are visible to the sort.
    __syncthreads();
    sort_ranks(k, s);
}

// The row's top k, written (k >= 1).
template <class E>
__device__ __forceinline__ void grid_select(const typename E::Bits* __restrict__ in, u64 cols, u32 k,
                                            const u32* __restrict__ count, const u64* __restrict__ candidates,
                                            typename E::Bits* __restrict__ values, i64* __restrict__ indices) {
    __shared__ TopkShared s;
    const u64 row_first = (u64)blockIdx.x * cols;
    grid_select_ranks(candidates + row_first, count[blockIdx.x], k, s);
    write_topk<E>(in + row_first, k, values + (u64)blockIdx.x * k, indices + (u64)blockIdx.x * k, s);
}

// The sampler's last launch: the row's top k (largest, NaN refused by the
// histogram's scan) and the draw (k >= 1).
template <class E>
__device__ __forceinline__ void grid_sample(const typename E::Bits* __restrict__ in, u64 cols, u32 k,
                                            const u32* __restrict__ count, const u64* __restrict__ candidates,
                                            float temperature, const float* __restrict__ uniforms,
                                            i64* __restrict__ samples, float* __restrict__ probabilities,
                                            u64* flags) {
    __shared__ TopkShared s;
    const u64 row_first = (u64)blockIdx.x * cols;
    grid_select_ranks(candidates + row_first, count[blockIdx.x], k, s);
    sample_and_write<E>(in + row_first, row_first, k, temperature, uniforms[blockIdx.x], samples + blockIdx.x,
                        probabilities + blockIdx.x, flags, s);
}

// grid_threshold_select's launches (kernels/src/topk.rs: 1 <= k <= min(cols,
// kTopkMaxK), cols < 2^32 - 1, rows <= 65535 (the grid's y); each level's
// `hist` zeroed and `nan_index` u64 max before the first level; `state` one
// GridRowState a row; candidates hold rows * cols).
#define PRIMLAB_TOPK_GRID_KERNELS(suffix, E)                                                                \
    extern "C" __global__ void __launch_bounds__(kTopkBlockThreads)                                         \
        topk_grid_histogram_##suffix(const E::Bits* __restrict__ in, u64 cols, u64 chunk, u32 options,      \
                                     u32 shift, u32 bits, u32* __restrict__ hist,                           \
                                     const GridRowState* __restrict__ state, u64* nan_index) {              \
        grid_histogram<E>(in, cols, chunk, options, shift, bits, hist, state, nan_index);                   \
    }                                                                                                       \
    extern "C" __global__ void __launch_bounds__(kTopkBlockThreads)                                         \
        topk_grid_collect_##suffix(const E::Bits* __restrict__ in, u64 cols, u64 chunk, u32 options,        \
                                   const GridRowState* __restrict__ state, u32* count,                      \
                                   u64* __restrict__ cand) {                                                \
        grid_collect<E>(in, cols, chunk, options, state, count, cand);                                      \
    }                                                                                                       \
    extern "C" __global__ void __launch_bounds__(kTopkBlockThreads)                                         \
        topk_grid_select_##suffix(const E::Bits* __restrict__ in, u64 cols, u32 k,                          \
                                  const u32* __restrict__ count, const u64* __restrict__ cand,              \
                                  E::Bits* __restrict__ values, i64* __restrict__ indices) {                \
        grid_select<E>(in, cols, k, count, cand, values, indices);                                          \
    }                                                                                                       \
    extern "C" __global__ void __launch_bounds__(kTopkBlockThreads)                                         \
        topk_grid_sample_##suffix(const E::Bits* __restrict__ in, u64 cols, u32 k,                          \
                                  const u32* __restrict__ count, const u64* __restrict__ cand,              \
                                  float temperature, const float* __restrict__ uniforms,                    \
                                  i64* __restrict__ samples, float* __restrict__ probabilities,             \
                                  u64* flags) {                                                             \
        grid_sample<E>(in, cols, k, count, cand, temperature, uniforms, samples, probabilities, flags);     \
    }                                                                                                       \
    extern "C" __global__ void __launch_bounds__(kTopkBlockThreads)                                         \
        topk_grid_collect_histogram_##suffix(const E::Bits* __restrict__ in, u64 cols, u64 chunk,           \
                                             u32 options, u32 shift, u32 bits, u32* __restrict__ hist,      \
                                             const GridRowState* __restrict__ state,                        \
                                             u32* __restrict__ segment_counts, u64* __restrict__ list_a) {  \
        grid_collect_histogram<E>(in, cols, chunk, options, shift, bits, hist, state, segment_counts,       \
                                  list_a);                                                                  \
    }                                                                                                       \
    extern "C" __global__ void __launch_bounds__(kTopkBlockThreads)                                         \
        topk_grid_list_histogram_##suffix(const u64* __restrict__ list_a,                                   \
                                          const u32* __restrict__ segment_counts, u64 cols, u64 chunk,      \
                                          u32 shift, u32 bits, u32* __restrict__ hist,                      \
                                          const GridRowState* __restrict__ state) {                         \
        grid_list_histogram<E>(list_a, segment_counts, cols, chunk, shift, bits, hist, state);              \
    }

PRIMLAB_TOPK_GRID_KERNELS(f32, F32Bits)
PRIMLAB_TOPK_GRID_KERNELS(bf16, Bf16Bits)
PRIMLAB_TOPK_GRID_KERNELS(f16, F16Bits)

// One warp per row (block = 32 threads, grid = rows), once a level.
extern "C" __global__ void __launch_bounds__(kWarpThreads)
    topk_grid_threshold(const u32* __restrict__ hist, u32 k, u32 shift, u32 first, u32 last,
                        GridRowState* __restrict__ state, u32* __restrict__ count) {
    grid_threshold(hist, k, shift, first, last, state, count);
}

// The last pass over list A (grid (chunks, rows)), once.
extern "C" __global__ void __launch_bounds__(kTopkBlockThreads)
    topk_grid_list_collect(const u64* __restrict__ list_a, const u32* __restrict__ segment_counts, u64 cols,
                           u64 chunk, const GridRowState* __restrict__ state, u32* count_b,
                           u64* __restrict__ list_b) {
    grid_list_collect(list_a, segment_counts, cols, chunk, state, count_b, list_b);
}
