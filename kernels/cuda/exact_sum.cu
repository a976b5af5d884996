// Correctly rounded float sums: the exact sum of f32 (or bf16) inputs,
// rounded once to nearest-even f32. Every addition below is an integer
// addition, which is associative, so the result does not depend on the grid,
// the block count, the scheduling or the GPU: it is a function of the input
// multiset only. kernels/src/exact_sum.rs states the contract and
// model/src/exact/binned.rs runs the same algorithm on the CPU.
//
// Fixed point. A finite f32 with biased exponent E and fraction f is
// x = (-1)^s * m * 2^(e - 150), with m = f | 2^23, e = E for E >= 1, and
// m = f, e = 1 for subnormals (E = 0). So x is the integer (-1)^s * (m << e)
// in units of 2^-150, with 1 <= e <= 254 and m < 2^24: |x| < 2^278 units.
//
// Bins. Bin b = e >> 5 (0..7) holds exponents 32b .. 32b + 31 and is an i64
// counted in units of 2^(32b - 150); an input adds (-1)^s * (m << (e & 31)),
// whose magnitude is at most (2^24 - 1) * 2^31 < 2^55.
//
// Words. A superaccumulator is kExactWords = 9 signed 64-bit words: word b
// (b < 8) has weight 2^(32b) units (it is bin b), word 8 has weight 2^256
// and only ever receives carries. Normalised (normalise below), words 0..7
// lie in [0, 2^32) and word 8 = floor(V / 2^256) for the value V held. The
// value never changes under normalisation: only its spelling does.
//
// Why nothing overflows (n <= 2^40 inputs, checked by the host):
//  * a bin's accumulator is normalised ([0, 2^32)) and then takes at most
//    kExactFlushTiles * kExactItemsPerThread = 256 adds of magnitude
//    < 2^55 - 2^31, so it stays within 2^32 + 2^63 - 2^39 < 2^63;
//  * normalise: t = word + carry with |carry| <= 2^31 stays inside i64, and
//    the next carry t >> 32 again has |carry| <= 2^31;
//  * a block adds 256 normalised threads word by word: < 2^40 per word 0..7;
//    the finish pass adds at most kExactMaxBlocks / kBlockThreads = 256
//    records per thread (< 2^48) before normalising again;
//  * word 8 of any partial state is floor(V' / 2^256) for a partial sum V'
//    of at most 2^40 inputs, |V'| < 2^40 * 2^278 = 2^318, so |word 8| <=
//    2^62; a sum of k such floors differs from the floor of the sum by < k.
//    kExactCapacityBits below is the static check of this bound.
//
// Non-finite inputs add 0 to the bins and set flags beside them (kSawNaN,
// kSawPosInf, kSawNegInf), OR-combined like the words: the answer is NaN
// (the canonical quiet NaN 0x7fc00000) for any NaN or for +inf and -inf
// together, else the infinity present, else the rounded finite sum.
//
// Register window. Most inputs lie within kWindowSpan = 22 exponents of
// their neighbours' largest. Each warp keeps a window base B (warp-uniform,
// 1 <= B <= kWindowMaxBase): an input with exponent e in [B, B + 21] is
// normal and finite, and is added to one f64 register per thread. Such an
// input is an integer multiple of 2^(B - 150) below 2^45 of those units,
// and the window takes at most 256 inputs between flushes, so its sum stays
// an integer multiple below 2^53 units: every f64 addition is exact. After
// every kExactVoteItems values per thread the warp votes: if any nonzero
// input fell outside the window (smaller, larger, subnormal, inf, NaN), B
// moves to (the group's largest finite exponent) - 21 when that differs,
// and the outside inputs are added again, to the new window or to the
// shared bins (add_to_bins); after kMissesBeforeDirect such groups in a row
// the warp sends kDirectGroups groups straight to the bins. +-0 adds
// nothing on any path. A flush turns the window into the integer k = value
// * 2^(150 - B) (|k| < 2^53), adds it into bins B >> 5 and (B >> 5) + 1 and
// empties the window. Integer and exact f64 addition are both exact, so
// which inputs take the window and which the bins changes the spelling of
// the partial sums only, never their value.
//
// Why the bins do not overflow through flushes: a flush adds low < 2^32 to
// one word and floor(k * 2^r / 2^32) (r = B & 31 < 32) to the next, and
// |k * 2^r / 2^32| is at most the sum of its inputs' terms m << (e & 31)
// measured in that next word (each below 2^55 - 2^31), plus 1. Between two
// normalisations a thread flushes at most F = kExactFlushTiles *
// kExactItemsPerThread / kExactVoteItems + 1 = 65 times, and each of its
// 256 inputs reaches a word once, by one path, with less than 2^55 - 2^31:
// a word stays below 2^32 + 256 (2^55 - 2^31) + F (2^32 + 1) < 2^63.
//
// Schedule. exact_sum_<t>: block g reduces tiles g, g + G, ... (G =
// gridDim.x; tile layout as float_reduce.cu: thread t holds items base +
// 4(256 j + t) + k of f32 input, base + 8(256 j + t) + k of bf16; items past
// n are +0), each thread into its window and its own column of shared-memory
// bins, flushing the window and normalising the column every
// kExactFlushTiles tiles; then the block adds its threads' words into one
// record of kExactRecordWords i64 (words 0..8, flags). The last block to
// finish its record (an atomic arrival count) adds the G records, normalises
// and rounds once.
#include "common/config.cuh"
#include "common/vector_of.cuh"
#include "common/shuffle.cuh"
#include "common/superaccumulator.cuh"

using namespace primlab;

namespace {

// The window of one thread (its base is the same in every lane of a warp).
struct Window {
    u32 base;
    double value;  // the sum of the inputs the window took, exactly (below)
    int direct;    // vote groups left that go straight to the bins
    int misses;    // consecutive vote groups with inputs outside the window
};

// Window bases: B >= 1 keeps +-0 and subnormals (e = 0) outside; B <= 223
// keeps inf and NaN (e = 255) outside (B + kWindowSpan - 1 <= 244) and lets
// a flush write bins B >> 5 and (B >> 5) + 1 <= 7, both rows of the shared
// bins (word 8 is a register, not a row). Inputs of 2^118 and above
// (e > 244) always take the bins path.
constexpr u32 kWindowSpan = 22;
constexpr u32 kWindowMaxBase = kExactWordBits * (kExactBins - 1) - 1;
static_assert(kWindowMaxBase + kWindowSpan - 1 < 255, "inf and NaN stay outside every window");
static_assert((kWindowMaxBase >> 5) + 1 < kExactBins, "a flush writes two rows of the shared bins");
// Exponents 106..127, values in [2^-21, 2): the first tile moves it if needed.
constexpr u32 kWindowFirstBase = 128 - kWindowSpan;
// Values per thread between two warp votes on the window.
constexpr int kExactVoteItems = 4;
// After this many vote groups in a row with inputs outside the window, the
// warp adds the next kDirectGroups groups straight to the bins (inputs
// spread over more than kWindowSpan exponents), then tries the window again.
constexpr int kMissesBeforeDirect = 2;
constexpr int kDirectGroups = 32;
static_assert(kExactItemsPerThread % kExactVoteItems == 0, "a tile is whole vote groups");
static_assert(kExactFlushTiles * kExactItemsPerThread / kExactVoteItems + 1 <= 127,
              "at most 127 flushes between normalisations (127 (2^32 + 1) + 2^32 <= 2^39)");
// The f64 window is exact: an input in it is an integer multiple of 2^(B -
// 150) below 2^(24 + kWindowSpan - 1) such units, the window takes at most
// 256 of them between flushes, so every partial sum is such a multiple
// below 2^53 units, which an f64 holds exactly (53-bit significand, and
// 2^(B - 150) >= 2^-149 is far above the f64 normal range's bottom).
static_assert(24 + (kWindowSpan - 1) + 8 <= 53, "256 window inputs must stay below 2^53 units of 2^(B - 150)");

// e - base for the f32 `bits` as an unsigned offset: < kWindowSpan exactly
// when the input lies in the window. bits << 1 holds e in bits 24..31; when
// e < base the subtraction wraps to 256 + e - base >= 256 - kWindowMaxBase.
__device__ __forceinline__ u32 window_offset(u32 bits, u32 base) {
    return ((bits << 1) - (base << 24)) >> 24;
}

// Adds the input at `offset` to the window; an input outside it (offset >=
// kWindowSpan) adds +0. The f64 addition is exact (bound above), so the
// order of the additions does not matter.
__device__ __forceinline__ void window_add(Window& w, u32 bits, u32 offset) {
    const float x = offset < kWindowSpan ? __uint_as_float(bits) : 0.0f;
    w.value = __dadd_rn(w.value, double(x));
}

// Adds the window's value V = k * 2^(base - 150) to the bins and empties it:
// k = V * 2^(150 - base) is an integer below 2^53 (the scaling by a power of
// two is exact), and with base = 32 q + r, k * 2^r = high * 2^32 + low, low
// in [0, 2^32), high = floor(k / 2^(32 - r)) (arithmetic shift).
__device__ __forceinline__ void window_flush(Window& w, i64 (*bins)[kBlockThreads]) {
    const double scale = __hiloint2double(int(1023 + 150 - w.base) << 20, 0);  // 2^(150 - base)
    const i64 value = __double2ll_rz(w.value * scale);
    const u32 q = w.base >> 5;
    const u32 r = w.base & 31u;
    bins[q][threadIdx.x] += i64((u64(value) << r) & u64(kExactWordMask));
    bins[q + 1][threadIdx.x] += value >> (kExactWordBits - r);
    w.value = 0.0;
}

// Adds ITEMS values of this thread (f32 bits). Every lane of the warp calls
// it (the votes below name the full warp; `direct` and `misses` are
// warp-uniform like the base). +-0 adds nothing anywhere, so zeros outside
// the window do not send the warp down the slow path.
template <int ITEMS>
__device__ __forceinline__ void add_values(const u32* v, Window& w, i64 (*bins)[kBlockThreads], u32& flags) {
    if (w.direct > 0) {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            if ((v[k] << 1) != 0) add_to_bins(v[k], bins, flags);
        }
        --w.direct;
        return;
    }
    bool outside = false;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const u32 offset = window_offset(v[k], w.base);
        window_add(w, v[k], offset);
        outside |= offset >= kWindowSpan && (v[k] << 1) != 0;
    }
    // Warp-uniform: the window base moves for the whole warp at once.
    if (!__any_sync(kFullMask, outside)) {
        w.misses = 0;
    } else {
        // Inputs spread wider than a window: stop trying it for a while.
        if (++w.misses == kMissesBeforeDirect) {
            w.direct = kDirectGroups;
            w.misses = 0;
        }
        u32 top = 0;  // the largest finite exponent of the warp's part of the tile
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const u32 e = (v[k] >> 23) & 0xffu;
            top = max(top, e == 0xffu ? 0u : e);
        }
        top = __reduce_max_sync(kFullMask, top);
        const u32 base = min(max(top, kWindowSpan) - (kWindowSpan - 1), kWindowMaxBase);
        const u32 old_base = w.base;
        if (base != old_base) {
            window_flush(w, bins);
            w.base = base;
        }
        // The inputs outside the old window added 0 above; add them now.
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            if (window_offset(v[k], old_base) >= kWindowSpan && (v[k] << 1) != 0) {
                const u32 offset = window_offset(v[k], w.base);
                if (offset < kWindowSpan) {
                    window_add(w, v[k], offset);
                } else {
                    add_to_bins(v[k], bins, flags);
                }
            }
        }
    }
}

// This thread's kExactItemsPerThread values of `tile` as f32 bits (+0 past n).
__device__ __forceinline__ void load_tile(const float* __restrict__ in, u64 n, u32 tile,
                                          u32 (&v)[kExactItemsPerThread]) {
    const u64 base = u64(tile) * kExactTileItems;
#pragma unroll
    for (int j = 0; j < kExactItemsPerThread / 4; ++j) {
        const u64 e = base + 4 * (u64(j) * kBlockThreads + threadIdx.x);
        if (e + 4 <= n) {
            const float4 t = as_vectors(in + e)[0];
            v[4 * j] = __float_as_uint(t.x);
            v[4 * j + 1] = __float_as_uint(t.y);
            v[4 * j + 2] = __float_as_uint(t.z);
            v[4 * j + 3] = __float_as_uint(t.w);
        } else {
#pragma unroll
            for (int k = 0; k < 4; ++k) v[4 * j + k] = e + k < n ? __float_as_uint(in[e + k]) : 0u;
        }
    }
}

// The same for bf16 input: a bf16 is the high half of the f32 it widens to.
__device__ __forceinline__ void load_tile(const u16* __restrict__ in, u64 n, u32 tile,
                                          u32 (&v)[kExactItemsPerThread]) {
    const u64 base = u64(tile) * kExactTileItems;
#pragma unroll
    for (int j = 0; j < kExactItemsPerThread / 8; ++j) {
        const u64 e = base + 8 * (u64(j) * kBlockThreads + threadIdx.x);
        if (e + 8 <= n) {
            const uint4 t = as_vectors(in + e)[0];
            const u32 w[4] = {t.x, t.y, t.z, t.w};
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                v[8 * j + 2 * k] = w[k] << 16;  // little-endian: low half = lower element
                v[8 * j + 2 * k + 1] = w[k] & 0xffff0000u;
            }
        } else {
#pragma unroll
            for (int k = 0; k < 8; ++k) v[8 * j + k] = e + k < n ? u32(in[e + k]) << 16 : 0u;
        }
    }
}

// This block's record: its tiles' words and flags, written to
// records[blockIdx.x].
template <class In>
__device__ __forceinline__ void partials(const In* __restrict__ in, u64 n, i64* records, WordsStorage& storage) {
    // Column t of `bins` belongs to thread t alone: no barrier guards it.
    __shared__ i64 bins[kExactBins][kBlockThreads];
#pragma unroll
    for (int b = 0; b < kExactBins; ++b) bins[b][threadIdx.x] = 0;
    i64 carry_word = 0;
    u32 flags = 0;
    Window window{kWindowFirstBase, 0.0, 0, 0};
    // n <= 2^40 (checked by the host), so tile indices fit 32 bits.
    const u32 tiles = u32((n + kExactTileItems - 1) / kExactTileItems);
    int since_flush = 0;
    // The trip count depends on blockIdx only: the flush branch and the
    // votes in add_values are uniform.
    for (u32 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        u32 v[kExactItemsPerThread];
        load_tile(in, n, tile, v);
        // Four values at a time: a slow path (below) holds only four live.
#pragma unroll
        for (int k = 0; k < kExactItemsPerThread; k += kExactVoteItems) {
            add_values<kExactVoteItems>(v + k, window, bins, flags);
        }
        if (++since_flush == kExactFlushTiles) {
            window_flush(window, bins);
            normalise_column(bins, carry_word);
            since_flush = 0;
        }
    }
    window_flush(window, bins);
    normalise_column(bins, carry_word);
    i64 words[kExactWords];
#pragma unroll
    for (int b = 0; b < kExactBins; ++b) words[b] = bins[b][threadIdx.x];
    words[kExactBins] = carry_word;
    const i64 total = block_words(words, flags, storage);
    if (threadIdx.x < kExactRecordWords) records[u64(blockIdx.x) * kExactRecordWords + threadIdx.x] = total;
}

// The last block: adds the `blocks` records, normalises, rounds once. The
// records were written by other blocks, so they are read through L2
// (__ldcg), never from this SM's L1.
__device__ __forceinline__ void finish(const i64* records, u32 blocks, float* result, WordsStorage& storage) {
    __shared__ i64 totals[kExactRecordWords];
    __shared__ u32 limbs[kExactLimbs];
    i64 words[kExactWords] = {};
    u32 flags = 0;
    for (u32 r = threadIdx.x; r < blocks; r += kBlockThreads) {
#pragma unroll
        for (int w = 0; w < kExactWords; ++w) words[w] += __ldcg(records + u64(r) * kExactRecordWords + w);
        flags |= u32(__ldcg(records + u64(r) * kExactRecordWords + kExactWords));
    }
    normalise(words);
    const u32 bits = block_round(words, flags, storage, totals, limbs);
    if (threadIdx.x == 0) *result = __uint_as_float(bits);
}

// One launch: every block writes its record; the block that arrives last
// (counted in `arrivals`, zero at entry) adds them all and rounds, then sets
// `arrivals` back to zero for the next launch.
template <class In>
__device__ __forceinline__ void sum(const In* __restrict__ in, u64 n, i64* records, u32* arrivals, float* result) {
    __shared__ WordsStorage storage;
    __shared__ bool last;
    partials(in, n, records, storage);
    // Release: each writer thread fences its record words, and the barrier
    // orders all of them before thread 0's arrival.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(arrivals, 1u) == gridDim.x - 1;
        // Acquire: the records of every block counted before this one.
        __threadfence();
    }
    // `last` is written above and read by every thread below.
    __syncthreads();
    if (last) {  // block-uniform: the barriers inside finish are safe
        finish(records, gridDim.x, result, storage);
        if (threadIdx.x == 0) *arrivals = 0u;
    }
}

}  // namespace

// Entry points. Argument order and types are mirrored by
// kernels/src/exact_sum.rs. Inputs must be 16-byte aligned (every buffer is
// a separate allocation); `records` holds gridDim.x * kExactRecordWords i64,
// every one written before it is read; `arrivals` is one u32, zero before
// the first launch (each launch leaves it zero).
extern "C" __global__ void __launch_bounds__(kBlockThreads, kExactMinBlocksPerSm)
    exact_sum_f32(const float* __restrict__ in, u64 n, i64* records, u32* arrivals, float* result) {
    sum<float>(in, n, records, arrivals, result);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads, kExactMinBlocksPerSm)
    exact_sum_bf16(const u16* __restrict__ in, u64 n, i64* records, u32* arrivals, float* result) {
    sum<u16>(in, n, records, arrivals, result);
}
