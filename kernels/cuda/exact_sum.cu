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
// Schedule. exact_sum_partials_<t>: block g reduces tiles g, g + G, ... (G =
// gridDim.x; tile layout as float_reduce.cu: thread t holds items base +
// 4(256 j + t) + k of f32 input, base + 8(256 j + t) + k of bf16; items past
// n are +0), each thread into its own column of shared-memory bins, then the
// block adds its threads' words into one record of kExactRecordWords i64
// (words 0..8, flags). exact_sum_finish (one block) adds the G records,
// normalises and rounds once.
#include "common/config.cuh"
#include "common/shuffle.cuh"

using namespace primlab;

namespace {

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

// Adds one f32 (as bits) to this thread's column of the shared bins.
// Non-finite inputs add 0 (to bin 7) and set their flag; +-0 adds 0 to bin 0.
__device__ __forceinline__ void add_bits(u32 bits, i64 (*bins)[kBlockThreads], u32& flags) {
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
#if PRIMLAB_MUTANT == 14
        // MUTANT 14: the carry out of word 3 (exponents 96..127, the bin of
        // values in [2^-54, 1)) is dropped instead of propagated.
        if (b == 3) carry = 0;
#endif
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

__device__ __forceinline__ void add_tile(const float* __restrict__ in, u64 n, u64 tile, i64 (*bins)[kBlockThreads],
                                         u32& flags) {
    const u64 base = tile * kExactTileItems;
#pragma unroll
    for (int j = 0; j < kExactItemsPerThread / 4; ++j) {
        const u64 e = base + 4 * (u64(j) * kBlockThreads + threadIdx.x);
        u32 v[4];
        if (e + 4 <= n) {
            const uint4 t = *reinterpret_cast<const uint4*>(in + e);
            v[0] = t.x;
            v[1] = t.y;
            v[2] = t.z;
            v[3] = t.w;
        } else {
#pragma unroll
            for (int k = 0; k < 4; ++k) v[k] = e + k < n ? __float_as_uint(in[e + k]) : 0u;
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) add_bits(v[k], bins, flags);
    }
}

__device__ __forceinline__ void add_tile(const u16* __restrict__ in, u64 n, u64 tile, i64 (*bins)[kBlockThreads],
                                         u32& flags) {
    const u64 base = tile * kExactTileItems;
#pragma unroll
    for (int j = 0; j < kExactItemsPerThread / 8; ++j) {
        const u64 e = base + 8 * (u64(j) * kBlockThreads + threadIdx.x);
        u32 v[8];
        if (e + 8 <= n) {
            const uint4 t = *reinterpret_cast<const uint4*>(in + e);
            const u32 w[4] = {t.x, t.y, t.z, t.w};
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                v[2 * k] = w[k] << 16;  // little-endian: low half = lower element
                v[2 * k + 1] = w[k] & 0xffff0000u;
            }
        } else {
#pragma unroll
            for (int k = 0; k < 8; ++k) v[k] = e + k < n ? u32(in[e + k]) << 16 : 0u;
        }
#pragma unroll
        for (int k = 0; k < 8; ++k) add_bits(v[k], bins, flags);
    }
}

template <class In>
__device__ __forceinline__ void partials(const In* __restrict__ in, u64 n, i64* records) {
    // Column t of `bins` belongs to thread t alone: no barrier guards it.
    __shared__ i64 bins[kExactBins][kBlockThreads];
    __shared__ WordsStorage storage;
#pragma unroll
    for (int b = 0; b < kExactBins; ++b) bins[b][threadIdx.x] = 0;
    i64 carry_word = 0;
    u32 flags = 0;
    const u64 tiles = (n + kExactTileItems - 1) / kExactTileItems;
    int since_flush = 0;
    // The trip count depends on blockIdx only: the flush branch is uniform.
    for (u64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        add_tile(in, n, tile, bins, flags);
        if (++since_flush == kExactFlushTiles) {
            normalise_column(bins, carry_word);
            since_flush = 0;
        }
    }
    normalise_column(bins, carry_word);
    i64 words[kExactWords];
#pragma unroll
    for (int b = 0; b < kExactBins; ++b) words[b] = bins[b][threadIdx.x];
    words[kExactBins] = carry_word;
    const i64 total = block_words(words, flags, storage);
    if (threadIdx.x < kExactRecordWords) records[u64(blockIdx.x) * kExactRecordWords + threadIdx.x] = total;
}

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

// One block: adds the `blocks` records, normalises, rounds once.
__device__ __forceinline__ void finish(const i64* __restrict__ records, u32 blocks, float* result) {
    __shared__ WordsStorage storage;
    __shared__ i64 totals[kExactRecordWords];
    __shared__ u32 limbs[2 * kExactWords - 7];  // 8 bin limbs, 2 of word 8, 1 pad
    i64 words[kExactWords] = {};
    u32 flags = 0;
    for (u32 r = threadIdx.x; r < blocks; r += kBlockThreads) {
#pragma unroll
        for (int w = 0; w < kExactWords; ++w) words[w] += records[u64(r) * kExactRecordWords + w];
        flags |= u32(records[u64(r) * kExactRecordWords + kExactWords]);
    }
    normalise(words);
    const i64 total = block_words(words, flags, storage);
    if (threadIdx.x < kExactRecordWords) totals[threadIdx.x] = total;
    // totals is written by threads 0..9 and read by thread 0 below.
    __syncthreads();
    if (threadIdx.x == 0) {
        i64 v[kExactWords];
#pragma unroll
        for (int w = 0; w < kExactWords; ++w) v[w] = totals[w];
        normalise(v);
        const u32 all = u32(totals[kExactWords]);
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
        *result = __uint_as_float(bits);
    }
}

}  // namespace

// Entry points. Argument order and types are mirrored by
// kernels/src/exact_sum.rs. Inputs must be 16-byte aligned (every buffer is
// a separate allocation); `records` holds gridDim.x * kExactRecordWords i64,
// every one written by the partials kernel.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    exact_sum_partials_f32(const float* __restrict__ in, u64 n, i64* records) {
    partials<float>(in, n, records);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    exact_sum_partials_bf16(const u16* __restrict__ in, u64 n, i64* records) {
    partials<u16>(in, n, records);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    exact_sum_finish(const i64* __restrict__ records, u32 blocks, float* result) {
    finish(records, blocks, result);
}
