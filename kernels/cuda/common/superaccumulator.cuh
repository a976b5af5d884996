// The exact-sum superaccumulator shared by exact_sum.cu and
// exact_segmented_sum.cu: a finite f32 with biased exponent E and fraction f
// is the integer (-1)^s * (m << e) in units of 2^-150 (m = f | 2^23, e = E
// for E >= 1; m = f, e = 1 for subnormals), so |x| < 2^278 units. It adds
// (-1)^s * (m << (e & 31)) (< 2^55 in magnitude) to bin e >> 5 of eight
// i64 bins; word b < 8 of a superaccumulator is bin b (weight 2^(32 b)
// units) and word 8 (weight 2^256) only receives carries. Normalised, words
// 0..7 lie in [0, 2^32) and word 8 = floor(V / 2^256) for the value V held;
// normalising changes the spelling of V, never its value. Every addition is
// an integer addition, so the result depends on the input multiset only.
// Non-finite inputs add 0 and set flags (kSawNaN, kSawPosInf, kSawNegInf),
// OR-combined like the words.
#pragma once
#include "common/config.cuh"
#include "common/shuffle.cuh"

namespace primlab {

constexpr int kExactBins = 8;                  // e >> 5 for 1 <= e <= 254
constexpr int kExactWords = kExactBins + 1;    // the bins plus one carry word
constexpr int kExactRecordWords = kExactWords + 1;  // words, then flags
constexpr int kExactWordBits = 32;
constexpr i64 kExactWordMask = 0xffffffffll;
constexpr int kExactMaxInputBits = 278;        // |x| < 2^278 units of 2^-150
constexpr int kExactMaxInputsLog2 = 40;        // the host rejects n > 2^40
// Signed range of the top word at weight 2^256: |V| < 2^(256 + 63).
constexpr int kExactCapacityBits = kExactWordBits * kExactBins + 63;
static_assert(kExactCapacityBits > kExactMaxInputBits + kExactMaxInputsLog2,
              "2^40 inputs of the largest finite f32 must fit the superaccumulator");
static_assert(kExactFlushTiles * kExactItemsPerThread <= 256,
              "a bin takes at most 256 adds of < 2^55 between normalisations (2^32 + 256 * 2^55 < 2^63)");
static_assert(kExactMaxBlocks / kBlockThreads <= 256,
              "the finish pass adds at most 256 records (< 2^40 each) per thread before normalising");

constexpr u32 kSawNaN = 1u;
constexpr u32 kSawPosInf = 2u;
constexpr u32 kSawNegInf = 4u;

// Adds one f32 (as bits) to this thread's column of the shared bins: any
// input, the path of those outside the window. Non-finite inputs add 0 (to
// bin 7) and set their flag; +-0 adds 0 to bin 0.
__device__ __forceinline__ void add_to_bins(u32 bits, i64 (*bins)[kBlockThreads], u32& flags) {
    const u32 biased = (bits >> 23) & 0xffu;
    const u32 fraction = bits & 0x7fffffu;
    const bool negative = (bits >> 31) != 0;
    if (biased == 0xffu) flags |= fraction != 0 ? kSawNaN : (negative ? kSawNegInf : kSawPosInf);
    const u32 e = biased == 0 ? 1u : biased;
    const u64 m = biased == 0xffu ? 0 : (biased == 0 ? fraction : (fraction | 0x800000u));
    const i64 magnitude = i64(m << (e & 31u));  // < 2^55
    bins[e >> 5][threadIdx.x] += negative ? -magnitude : magnitude;
}

// Rewrites words 0..7 into [0, 2^32) and carries into word 8; the value
// sum_b words[b] * 2^(32 b) is unchanged. `>>` of a negative i64 is an
// arithmetic shift on every CUDA target (floor division by 2^32), so
// t == (t & mask) + (t >> 32) * 2^32 exactly.
__device__ __forceinline__ void normalise(i64 (&words)[kExactWords]) {
    i64 carry = 0;
#pragma unroll
    for (int b = 0; b < kExactBins; ++b) {
        const i64 t = words[b] + carry;
        words[b] = t & kExactWordMask;
        carry = t >> kExactWordBits;
    }
    words[kExactBins] += carry;
}

__device__ __forceinline__ i64 warp_sum(i64 value) {
#pragma unroll
    for (int offset = kWarpThreads / 2; offset > 0; offset /= 2) {
        // Unsigned adds: the sums are bounded (header), this only avoids
        // signed-overflow reasoning in the compiler.
        value = i64(u64(value) + u64(__shfl_xor_sync(kFullMask, value, offset)));
    }
    return value;
}

struct WordsStorage {
    i64 warp_words[kBlockWarps][kExactWords];
    u32 warp_flags[kBlockWarps];
};

// Adds the block's threads' words and flags: thread w < kExactWords gets
// word w of the total in `total_word`, thread kExactWords gets the flags.
// Every thread of the block must call it (one barrier inside).
__device__ __forceinline__ i64 block_words(const i64 (&words)[kExactWords], u32 flags, WordsStorage& storage) {
    const int lane = threadIdx.x % kWarpThreads;
    const int warp = threadIdx.x / kWarpThreads;
    i64 sums[kExactWords];
#pragma unroll
    for (int w = 0; w < kExactWords; ++w) sums[w] = warp_sum(words[w]);
    const u32 warp_flags = __reduce_or_sync(kFullMask, flags);
    if (lane == 0) {
#pragma unroll
        for (int w = 0; w < kExactWords; ++w) storage.warp_words[warp][w] = sums[w];
        storage.warp_flags[warp] = warp_flags;
    }
    // The warp partials are written above and read below by other warps.
    __syncthreads();
    i64 total = 0;
    if (threadIdx.x < kExactWords) {
#pragma unroll
        for (int k = 0; k < kBlockWarps; ++k) total += storage.warp_words[k][threadIdx.x];
    } else if (threadIdx.x == kExactWords) {
        u32 all = 0;
#pragma unroll
        for (int k = 0; k < kBlockWarps; ++k) all |= storage.warp_flags[k];
        total = i64(all);
    }
    return total;
}

// Normalises this thread's shared column and its carry word in place.
__device__ __forceinline__ void normalise_column(i64 (*bins)[kBlockThreads], i64& carry_word) {
    i64 words[kExactWords];
#pragma unroll
    for (int b = 0; b < kExactBins; ++b) words[b] = bins[b][threadIdx.x];
    words[kExactBins] = carry_word;
    normalise(words);
#pragma unroll
    for (int b = 0; b < kExactBins; ++b) bins[b][threadIdx.x] = words[b];
    carry_word = words[kExactBins];
}

// Limbs of round_words: 8 bin limbs, 2 of word 8, 1 pad.
constexpr int kExactLimbs = 2 * kExactWords - 7;

// Rounds the magnitude held in `limbs` (32-bit, little-endian, limbs[10] =
// 0 as padding) to nearest-even f32 bits, +inf on overflow. In units of
// 2^-150 an f32 is m << e (m < 2^24, e >= 1, m >= 2^23 when e > 1), and its
// bit pattern is ((e - 1) << 23) + m; a rounding carry to m = 2^24 becomes
// the next exponent by the same formula. Thread 0 only (dynamic indexing:
// the limbs live in shared memory, not in registers).
__device__ u32 round_magnitude(const u32* limbs) {
    int top = 9;
    while (top > 0 && limbs[top] == 0) --top;
    if (limbs[top] == 0) return 0u;  // an exact zero sum is +0
    const int msb = kExactWordBits * top + 31 - __clz(limbs[top]);
    const int shift = msb - 23 > 1 ? msb - 23 : 1;  // the kept 24 bits start here
    if (shift - 1 >= 255) return 0x7f800000u;
    const u64 window = u64(limbs[shift >> 5]) | (u64(limbs[(shift >> 5) + 1]) << 32);
    const u32 kept = u32(window >> (shift & 31)) & 0xffffffu;
    const int round_at = shift - 1;
    const u32 round_bit = (limbs[round_at >> 5] >> (round_at & 31)) & 1u;
    bool sticky = (limbs[round_at >> 5] & ((1u << (round_at & 31)) - 1u)) != 0;
    for (int k = 0; k < (round_at >> 5); ++k) sticky |= limbs[k] != 0;
    const u32 up = round_bit & ((sticky ? 1u : 0u) | (kept & 1u));
    const u64 bits = (u64(shift - 1) << 23) + kept + up;
    return bits >= 0x7f800000ull ? 0x7f800000u : u32(bits);
}

// The f32 bits of the value sum_w v[w] * 2^(32 w) units of 2^-150 (any
// spelling whose words and their carries fit i64; `v` is normalised in
// place) whose inputs set the non-finite flags `all`: NaN (0x7fc00000) for
// kSawNaN or both infinities, else the infinity seen, else the value rounded
// once to nearest-even (+0 for an exact zero, +-inf on overflow). `limbs`
// is scratch of kExactLimbs u32 that round_magnitude indexes dynamically
// (shared memory keeps it out of local memory). One thread.
__device__ __forceinline__ u32 round_words(i64 (&v)[kExactWords], u32 all, u32* limbs) {
    normalise(v);
    // Two's complement limbs of V (word 8 spans limbs 8 and 9), then the
    // magnitude: V < 0 exactly when word 8 < 0 (words 0..7 >= 0).
    const bool negative = v[kExactBins] < 0;
    u32 carry = negative ? 1u : 0u;
#pragma unroll
    for (int k = 0; k < 2 * kExactWords - 8; ++k) {
        const u32 limb = k < kExactBins ? u32(v[k]) : u32(u64(v[kExactBins]) >> (32 * (k - kExactBins)));
        const u64 flipped = u64(negative ? ~limb : limb) + carry;
        limbs[k] = u32(flipped);
        carry = u32(flipped >> 32);
    }
    limbs[2 * kExactWords - 8] = 0u;
    u32 bits = round_magnitude(limbs) | (negative ? 0x80000000u : 0u);
    if ((all & kSawNaN) != 0 || (all & (kSawPosInf | kSawNegInf)) == (kSawPosInf | kSawNegInf)) {
        bits = 0x7fc00000u;
    } else if ((all & kSawPosInf) != 0) {
        bits = 0x7f800000u;
    } else if ((all & kSawNegInf) != 0) {
        bits = 0xff800000u;
    }
    return bits;
}

// The block's threads' words and flags added (block_words) and rounded once
// (round_words): the f32 bits in thread 0's return value, 0 in the others.
// Every thread of the block must call it (barriers inside). `totals` (one
// record, kExactRecordWords i64) and `limbs` (kExactLimbs u32) are shared
// scratch; a caller that calls it again must not write them before a
// barrier that thread 0 reaches after this call (block_words has one).
__device__ __forceinline__ u32 block_round(const i64 (&words)[kExactWords], u32 flags, WordsStorage& storage,
                                           i64* totals, u32* limbs) {
    const i64 total = block_words(words, flags, storage);
    if (threadIdx.x < kExactRecordWords) totals[threadIdx.x] = total;
    // totals is written by threads 0..9 and read by thread 0 below.
    __syncthreads();
    u32 bits = 0;
    if (threadIdx.x == 0) {
        i64 v[kExactWords];
#pragma unroll
        for (int w = 0; w < kExactWords; ++w) v[w] = totals[w];
        bits = round_words(v, u32(totals[kExactWords]), limbs);
    }
    return bits;
}

}  // namespace primlab
