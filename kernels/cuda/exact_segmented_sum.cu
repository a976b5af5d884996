// Correctly rounded segmented sums: for f32 (or bf16) input and u32
// half-open offsets, segment s = in[offsets[s] .. offsets[s + 1]] gets the
// exact sum of its inputs rounded once to nearest-even f32, with the
// non-finite rules of round_words (common/superaccumulator.cuh). Every
// addition is an integer addition, so a segment's bits depend on its input
// multiset only: not on the schedule, the grid or the GPU.
// kernels/src/exact_segmented_sum.rs states the contract.
//
// Schedules. exact_segmented_warp_per_segment_<t>: warp w of block g sums
// segments 8 g + w, 8 (g + G) + w, ... (G = gridDim.x); its lanes stride the
// segment. exact_segmented_block_per_segment_<t>: block g sums segments g,
// g + G, ...; its 256 threads stride the segment. Each thread adds its
// inputs into its own column of eight shared-memory i64 bins (add_to_bins)
// and normalises the column after every kSegmentFlushAdds of them; then the
// warp (warp_sum) or the block (block_words) adds the threads' nine words
// and one thread rounds (round_words). exact_segmented_warp_window_<t>: as
// the warp schedule, but a segment of at most 32 inputs within 32 exponents
// of its largest is added in one i64 register sum and rounded by every lane
// at once (window_sum); the others take the bins.
//
// Why nothing overflows (offsets are u32, so a segment has fewer than 2^32
// inputs):
//  * a bin is normalised ([0, 2^32)) and then takes at most
//    kSegmentFlushAdds = 256 adds of magnitude < 2^55, so it stays below
//    2^32 + 256 * 2^55 < 2^63;
//  * a thread's normalised words 0..7 lie in [0, 2^32), and its word 8 is
//    floor(V' / 2^256) for the value V' of at most 2^32 inputs, |V'| <
//    2^32 * 2^278 = 2^310, so |word 8| <= 2^54;
//  * a warp adds 32 threads: words 0..7 < 2^37, |word 8| <= 2^59; a block
//    adds 256 threads, whose inputs together are at most 2^32: words 0..7 <
//    2^40, |word 8| <= 2^54 + 256. Both fit i64, which is all round_words
//    needs before it normalises.
#include "common/config.cuh"
#include "common/superaccumulator.cuh"

using namespace primlab;

namespace {

// Inputs a thread adds to its column between two normalisations.
constexpr u32 kSegmentFlushAdds = 256;
static_assert(kSegmentFlushAdds <= 256, "a bin takes at most 256 adds of < 2^55 between normalisations");

// The f32 bits of input i (a bf16 is the high half of the f32 it widens to).
__device__ __forceinline__ u32 input_bits(const float* __restrict__ in, u64 i) {
    return __float_as_uint(in[i]);
}
__device__ __forceinline__ u32 input_bits(const u16* __restrict__ in, u64 i) {
    return u32(in[i]) << 16;
}

// Adds in[begin + lane], in[begin + lane + lanes], ... (below end) into this
// thread's column of `bins` and returns the column's words, normalised, and
// the flags of its inputs. Each pass of the outer loop gives a thread at
// most kSegmentFlushAdds inputs, then normalises (the bound in the header).
template <class In>
__device__ __forceinline__ void add_strided(const In* __restrict__ in, u32 begin, u32 end, u32 lane, u32 lanes,
                                            i64 (*bins)[kBlockThreads], i64 (&words)[kExactWords], u32& flags) {
#pragma unroll
    for (int b = 0; b < kExactBins; ++b) bins[b][threadIdx.x] = 0;
    i64 carry_word = 0;
    flags = 0;
    const u64 pass = u64(lanes) * kSegmentFlushAdds;
    for (u64 chunk = begin; chunk < end; chunk += pass) {
        const u64 stop = min(u64(end), chunk + pass);
        for (u64 i = chunk + lane; i < stop; i += lanes) add_to_bins(input_bits(in, i), bins, flags);
        normalise_column(bins, carry_word);
    }
#pragma unroll
    for (int b = 0; b < kExactBins; ++b) words[b] = bins[b][threadIdx.x];
    words[kExactBins] = carry_word;
}

// A warp per segment. Column t of `bins` belongs to thread t alone: no
// barrier guards it.
template <class In>
__device__ __forceinline__ void warp_per_segment(const In* __restrict__ in, const u32* __restrict__ offsets,
                                                 u64 segments, float* __restrict__ out) {
    __shared__ i64 bins[kExactBins][kBlockThreads];
    __shared__ u32 limbs[kBlockWarps][kExactLimbs];
    const u32 lane = threadIdx.x % kWarpThreads;
    const u32 warp = threadIdx.x / kWarpThreads;
    // The trip count depends on the warp only, so every lane reaches the
    // full-warp shuffles and votes below.
    for (u64 s = u64(blockIdx.x) * kBlockWarps + warp; s < segments; s += u64(gridDim.x) * kBlockWarps) {
        i64 words[kExactWords];
        u32 flags;
        add_strided(in, offsets[s], offsets[s + 1], lane, kWarpThreads, bins, words, flags);
#pragma unroll
        for (int w = 0; w < kExactWords; ++w) words[w] = warp_sum(words[w]);
        flags = __reduce_or_sync(kFullMask, flags);
        if (lane == 0) out[s] = __uint_as_float(round_words(words, flags, limbs[warp]));
    }
}

// Window bases: B + 31 <= 254 keeps inf and NaN (e = 255) outside, B >= 1
// keeps +-0 and subnormals (e = 0) outside.
constexpr u32 kSegmentWindowSpan = 32;
constexpr u32 kSegmentWindowMaxBase = 255 - kSegmentWindowSpan;

// The sum of a segment of at most 32 inputs, one per lane (`bits`, +0 past
// the end), when every nonzero input is normal, finite and within 32
// exponents of the largest: the warp votes that largest exponent `top`,
// takes the window base B = max(top, 32) - 31 (at most 223), and adds
// +-m << (e - B) (< 2^55 each, < 2^60 for 32 lanes) as one i64 `v`, worth
// v * 2^(B - 150). __ll2float_rn rounds v once to nearest-even (|v| >= 1 is
// a normal f32); moving that f32's exponent by B - 150 is exact while the
// result stays normal, so it is the correctly rounded value, and the
// result overflows exactly when v * 2^(B - 150) >= 2^128 - 2^103 (the
// rounding boundary scales with v): then +-inf. Returns false, the same in
// every lane, when the segment needs the bins: an input outside the window
// (subnormal, non-finite, more than 31 exponents below the largest) or a
// result below 2^-126 (subnormal results round on a coarser grid). Every
// lane of the warp must call it.
__device__ __forceinline__ bool window_sum(u32 bits, u32& result) {
    const u32 e = (bits >> 23) & 0xffu;
    const u32 top = __reduce_max_sync(kFullMask, e == 0xffu ? 0u : e);
    const u32 base = min(max(top, kSegmentWindowSpan) - (kSegmentWindowSpan - 1), kSegmentWindowMaxBase);
    const bool zero = (bits << 1) == 0;
    const bool inside = zero || (e >= base && e < base + kSegmentWindowSpan);
    if (!__all_sync(kFullMask, inside)) return false;
    const u64 m = zero ? 0u : ((bits & 0x7fffffu) | 0x800000u);
    const i64 term = i64(m << (zero ? 0u : e - base));  // < 2^55
    const i64 v = warp_sum((bits >> 31) != 0 ? -term : term);
    if (v == 0) {
        result = 0u;  // an exact zero sum is +0
        return true;
    }
    const u32 rounded = __float_as_uint(__ll2float_rn(v));
    const int exponent = int((rounded >> 23) & 0xffu) + int(base) - 150;
    if (exponent < 1) return false;
    const u32 sign = rounded & 0x80000000u;
    result = exponent >= 255 ? (sign | 0x7f800000u) : (sign | (u32(exponent) << 23) | (rounded & 0x7fffffu));
    return true;
}

// A warp per segment with the register window of window_sum for segments of
// at most 32 inputs; longer segments, and those the window refuses, take
// the bins as in warp_per_segment.
template <class In>
__device__ __forceinline__ void warp_window(const In* __restrict__ in, const u32* __restrict__ offsets, u64 segments,
                                            float* __restrict__ out) {
    __shared__ i64 bins[kExactBins][kBlockThreads];
    __shared__ u32 limbs[kBlockWarps][kExactLimbs];
    const u32 lane = threadIdx.x % kWarpThreads;
    const u32 warp = threadIdx.x / kWarpThreads;
    // The trip count and both branches depend on the warp only (begin, end
    // and window_sum's answer are warp-uniform), so every lane reaches the
    // full-warp shuffles and votes.
    for (u64 s = u64(blockIdx.x) * kBlockWarps + warp; s < segments; s += u64(gridDim.x) * kBlockWarps) {
        const u32 begin = offsets[s];
        const u32 end = offsets[s + 1];
        if (end - begin <= u32(kWarpThreads)) {
            const u32 bits = u64(begin) + lane < end ? input_bits(in, u64(begin) + lane) : 0u;
            u32 result;
            if (window_sum(bits, result)) {
                if (lane == 0) out[s] = __uint_as_float(result);
                continue;
            }
        }
        i64 words[kExactWords];
        u32 flags;
        add_strided(in, begin, end, lane, kWarpThreads, bins, words, flags);
#pragma unroll
        for (int w = 0; w < kExactWords; ++w) words[w] = warp_sum(words[w]);
        flags = __reduce_or_sync(kFullMask, flags);
        if (lane == 0) out[s] = __uint_as_float(round_words(words, flags, limbs[warp]));
    }
}

// A block per segment.
template <class In>
__device__ __forceinline__ void block_per_segment(const In* __restrict__ in, const u32* __restrict__ offsets,
                                                  u64 segments, float* __restrict__ out) {
    __shared__ i64 bins[kExactBins][kBlockThreads];
    __shared__ WordsStorage storage;
    __shared__ i64 totals[kExactRecordWords];
    __shared__ u32 limbs[kExactLimbs];
    // The trip count depends on blockIdx only: every thread reaches the
    // barriers inside the loop.
    for (u64 s = blockIdx.x; s < segments; s += gridDim.x) {
        i64 words[kExactWords];
        u32 flags;
        add_strided(in, offsets[s], offsets[s + 1], threadIdx.x, kBlockThreads, bins, words, flags);
        // block_round reads `storage` before its barrier, so the next
        // segment's writes to it come after every read of this one; the next
        // segment writes `totals` only after the barrier inside its
        // block_words, which thread 0 reaches after its read of this one.
        const u32 bits = block_round(words, flags, storage, totals, limbs);
        if (threadIdx.x == 0) out[s] = __uint_as_float(bits);
    }
}

}  // namespace

// Entry points. Argument order and types are mirrored by
// kernels/src/exact_segmented_sum.rs: `offsets` holds segments + 1
// non-decreasing entries, none past the input's length (checked by the
// host); `out` holds `segments` floats, each written once.
#define PRIMLAB_EXACT_SEGMENTED_ENTRIES(SCHEDULE)                                                             \
    extern "C" __global__ void __launch_bounds__(kBlockThreads) exact_segmented_##SCHEDULE##_f32(             \
        const float* __restrict__ in, const u32* __restrict__ offsets, u64 segments, float* __restrict__ out) { \
        SCHEDULE<float>(in, offsets, segments, out);                                                         \
    }                                                                                                        \
    extern "C" __global__ void __launch_bounds__(kBlockThreads) exact_segmented_##SCHEDULE##_bf16(            \
        const u16* __restrict__ in, const u32* __restrict__ offsets, u64 segments, float* __restrict__ out) {   \
        SCHEDULE<u16>(in, offsets, segments, out);                                                           \
    }

PRIMLAB_EXACT_SEGMENTED_ENTRIES(warp_per_segment)
PRIMLAB_EXACT_SEGMENTED_ENTRIES(warp_window)
PRIMLAB_EXACT_SEGMENTED_ENTRIES(block_per_segment)
