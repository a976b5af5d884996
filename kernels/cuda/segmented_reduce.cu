// Segmented reductions over half-open offsets: segment s covers input
// [offsets[s], offsets[s + 1]). An empty segment yields the operator's
// identity. Offsets are u32 on the device (entry points
// segmented_<schedule>_<operator>) or u64 (the same names with _o64); the
// host picks u32 whenever n <= u32::MAX, so the common case keeps 4-byte
// offsets, and rejects offsets that decrease or pass n before any launch.
// Every schedule widens an offset to u64 as it reads it, so items, segment
// lengths and indices within a segment are u64 on both paths.
//
// Operators (policy = operator + how an input element becomes its value):
//   sum_i32      int32 -> int64 sum (SumI64), identity 0
//   sum_f32      float32 sum (SumF32, __fadd_rn), identity +0.0
//   max_i32      int32 -> int64 max (MaxI64), identity INT64_MIN
//   argmax_f32   (value, index within the segment) (ArgMaxF32): lowest index
//                wins ties; identity index kNoIndex ("no element"). The host
//                rejects NaN/inf inputs before launching.
//
// Schedules (every one correct for every segment length):
//   warp_per_segment      a warp per segment, 8 segments per block in flight
//   warp_batched          a warp per segment, 4 short segments per warp at a time
//   block_per_segment     a block (256 threads) per segment
//   multi_block_*         B blocks per segment write B partials; a second
//                         kernel combines them in order, a warp per segment
// Every schedule reads the aligned body of a segment with 16-byte loads and
// its unaligned head and tail with scalar loads.
#include "common/config.cuh"
#include "common/block_reduce.cuh"
#include "common/operators.cuh"
#include "common/strided_load.cuh"
#include "common/vector_of.cuh"
#include "common/warp_reduce.cuh"

using namespace primlab;

// ---- policies ----

struct SegmentedSumI32 {
    typedef SumI64 Op;
    typedef i32 In;
    __device__ __forceinline__ static i64 lift(i32 x, u64 /*index_in_segment*/) { return (i64)x; }
};
struct SegmentedSumF32 {
    typedef SumF32 Op;
    typedef float In;
    __device__ __forceinline__ static float lift(float x, u64 /*index_in_segment*/) { return x; }
};
struct SegmentedMaxI32 {
    typedef MaxI64 Op;
    typedef i32 In;
    __device__ __forceinline__ static i64 lift(i32 x, u64 /*index_in_segment*/) { return (i64)x; }
};
// The index is relative to the segment start; the host rejects segments of
// 2^31 - 1 or more elements, so it fits an i32 below kNoIndex.
struct SegmentedArgMaxF32 {
    typedef ArgMaxF32 Op;
    typedef float In;
    __device__ __forceinline__ static ArgF32 lift(float x, u64 index_in_segment) {
        return ArgF32{x, (i32)index_in_segment};
    }
};

// ---- segment bounds ----

struct SegmentBounds {
    u64 begin;
    u64 end;
};

// Offset is u32 or u64 (the entry point's offsets).
template <class Offset>
__device__ __forceinline__ SegmentBounds segment_bounds(const Offset* __restrict__ offsets, u64 segment) {
    SegmentBounds bounds{(u64)offsets[segment], (u64)offsets[segment + 1]};
    return bounds;
}

// ---- one group of `lanes` threads accumulates items [lo, hi) ----

template <class P>
__device__ __forceinline__ typename P::Op::T combine_vector(typename P::Op::T acc, const typename VectorOf<typename P::In>::T& x,
                                                            u64 index_in_segment) {
    const typename P::Op op = typename P::Op();
    acc = op(acc, P::lift(x.x, index_in_segment));
    acc = op(acc, P::lift(x.y, index_in_segment + 1));
    acc = op(acc, P::lift(x.z, index_in_segment + 2));
    acc = op(acc, P::lift(x.w, index_in_segment + 3));
    return acc;
}

// The split of [lo, hi) that every schedule reads: scalar head [lo,
// head_end) up to the first multiple of 4, 16-byte vectors [head_end,
// body_end), scalar tail [body_end, hi).
struct RangeParts {
    u64 head_end;
    u64 body_end;
};

__device__ __forceinline__ RangeParts range_parts(u64 lo, u64 hi) {
    const u64 head_end = min(hi, (lo + 3) & ~3ull);
    return RangeParts{head_end, max(head_end, hi & ~3ull)};
}

// Thread `rank` of a group of `lanes` threads combines, in increasing index
// order, its share of [lo, hi): the scalar head up to the first multiple of
// 4, the 16-byte vectors of the body (four loads in flight per round), then
// the scalar tail. `input` is a whole allocation, so vector i / 4 of the
// body is 16-byte aligned. Indices handed to the policy are relative to
// segment_begin.
template <class P>
__device__ __forceinline__ typename P::Op::T accumulate_range(const typename P::In* __restrict__ input, u64 lo, u64 hi,
                                                              u64 segment_begin, u32 rank, u32 lanes) {
    typedef typename P::Op Op;
    typedef typename Op::T T;
    typedef typename VectorOf<typename P::In>::T V;
    const Op op = Op();
    T acc = Op::identity();
    const RangeParts parts = range_parts(lo, hi);
    const u64 head_end = parts.head_end;
    const u64 body_end = parts.body_end;
    for (u64 i = lo + rank; i < head_end; i += lanes) acc = op(acc, P::lift(input[i], i - segment_begin));

    acc = fold_strided_vectors<4>(as_vectors(input), head_end / 4 + rank, body_end / 4, u64(lanes), acc,
                                  [segment_begin](T a, const V& x, u64 v) {
                                      return combine_vector<P>(a, x, v * 4 - segment_begin);
                                  });

    for (u64 i = body_end + rank; i < hi; i += lanes) acc = op(acc, P::lift(input[i], i - segment_begin));
    return acc;
}

// ---- warp per segment ----

// Warp w of the grid takes segments w, w + warps_in_grid, ... The loop
// condition depends only on the warp, so all 32 lanes reach every shuffle.
template <class P, class Offset>
__device__ __forceinline__ void warp_per_segment(const typename P::In* __restrict__ input,
                                                 const Offset* __restrict__ offsets, u64 segments,
                                                 typename P::Op::T* __restrict__ out) {
    typedef typename P::Op Op;
    const Op op = Op();
    const int lane = lane_id();
    const u64 warps_in_grid = (u64)gridDim.x * kBlockWarps;
    for (u64 s = (u64)blockIdx.x * kBlockWarps + warp_id(); s < segments; s += warps_in_grid) {
        const SegmentBounds bounds = segment_bounds(offsets, s);
        const typename Op::T partial =
            accumulate_range<P>(input, bounds.begin, bounds.end, bounds.begin, (u32)lane, kWarpThreads);
        const typename Op::T total = warp_reduce(partial, op);
        if (lane == 0) out[s] = total;
    }
}

// ---- a warp per segment, several short segments at a time ----

// A warp holds kSegmentsPerWarp consecutive segments at a time, so that short
// segments still keep several loads per lane in flight.
constexpr int kSegmentsPerWarp = 4;

// One lane's share of a short segment [lo, hi), loaded before anything is
// combined: at most one head item, one 16-byte vector of the body and one
// tail item, exactly the items accumulate_range gives this lane when the
// body has at most `lanes` vectors.
template <class P>
struct ShortShare {
    typename VectorOf<typename P::In>::T vector;
    typename P::In head;
    typename P::In tail;
    u64 head_index;
    u64 vector_index;  // the element index of the vector's first item
    u64 tail_index;
    bool has_head;
    bool has_vector;
    bool has_tail;

    __device__ __forceinline__ void load(const typename P::In* __restrict__ input, u64 lo, u64 hi, u32 rank) {
        typedef typename VectorOf<typename P::In>::T V;
        const RangeParts parts = range_parts(lo, hi);
        head_index = lo + rank;
        vector_index = parts.head_end + 4ull * rank;
        tail_index = parts.body_end + rank;
        has_head = head_index < parts.head_end;
        has_vector = vector_index < parts.body_end;
        has_tail = tail_index < hi;
        // Guarded loads, all issued before any combine below waits on them.
        head = has_head ? input[head_index] : typename P::In();
        vector = has_vector ? as_vectors(input)[vector_index / 4] : V();
        tail = has_tail ? input[tail_index] : typename P::In();
    }

    // accumulate_range's combines for this lane, in its order: head, the
    // vector's four items, tail; an absent part combines nothing.
    __device__ __forceinline__ typename P::Op::T combine(u64 segment_begin) const {
        typedef typename P::Op Op;
        const Op op = Op();
        typename Op::T acc = Op::identity();
        if (has_head) acc = op(acc, P::lift(head, head_index - segment_begin));
        if (has_vector) acc = combine_vector<P>(acc, vector, vector_index - segment_begin);
        if (has_tail) acc = op(acc, P::lift(tail, tail_index - segment_begin));
        return acc;
    }
};

// Whether accumulate_range over [lo, hi) gives each of `lanes` threads at
// most one vector of the body, i.e. whether ShortShare holds its share.
__device__ __forceinline__ bool is_short(u64 lo, u64 hi, u32 lanes) {
    const RangeParts parts = range_parts(lo, hi);
    return (parts.body_end - parts.head_end) / 4 <= lanes;
}

// Warp w of the grid takes segments kSegmentsPerWarp * w + j (j <
// kSegmentsPerWarp), then the same kSegmentsPerWarp * warps_in_grid later,
// and so on. Each segment is combined exactly as accumulate_range and
// warp_reduce do it for warp_per_segment, so its result is the same bits. The
// loop condition and `all_short` depend only on the warp's segments, so all
// 32 lanes reach every shuffle. A batch with a long segment takes them one
// after another through accumulate_range: for short segments only.
template <class P, class Offset>
__device__ __forceinline__ void warp_batched_segments(const typename P::In* __restrict__ input,
                                                      const Offset* __restrict__ offsets, u64 segments,
                                                      typename P::Op::T* __restrict__ out) {
    typedef typename P::Op Op;
    const Op op = Op();
    const u32 lane = u32(lane_id());
    const u64 warps_in_grid = (u64)gridDim.x * kBlockWarps;
    for (u64 first = ((u64)blockIdx.x * kBlockWarps + warp_id()) * kSegmentsPerWarp; first < segments;
         first += warps_in_grid * kSegmentsPerWarp) {
        SegmentBounds bounds[kSegmentsPerWarp];
        bool all_short = true;
#pragma unroll
        for (int j = 0; j < kSegmentsPerWarp; ++j) {
            // A slot past the last segment is an empty range: it loads nothing.
            bounds[j] = first + j < segments ? segment_bounds(offsets, first + j) : SegmentBounds{0, 0};
            all_short &= is_short(bounds[j].begin, bounds[j].end, kWarpThreads);
        }
        typename Op::T partial[kSegmentsPerWarp];
        if (all_short) {
            ShortShare<P> share[kSegmentsPerWarp];
#pragma unroll
            for (int j = 0; j < kSegmentsPerWarp; ++j) share[j].load(input, bounds[j].begin, bounds[j].end, lane);
#pragma unroll
            for (int j = 0; j < kSegmentsPerWarp; ++j) partial[j] = share[j].combine(bounds[j].begin);
        } else {
#pragma unroll
            for (int j = 0; j < kSegmentsPerWarp; ++j) {
                partial[j] = accumulate_range<P>(input, bounds[j].begin, bounds[j].end, bounds[j].begin, lane,
                                                 kWarpThreads);
            }
        }
#pragma unroll
        for (int j = 0; j < kSegmentsPerWarp; ++j) {
            const typename Op::T total = warp_reduce(partial[j], op);
            if (lane == 0 && first + j < segments) out[first + j] = total;
        }
    }
}

// ---- block per segment ----

// Block b takes segments b, b + gridDim.x, ... (a block-uniform loop, so
// every thread reaches every barrier).
template <class P, class Offset>
__device__ __forceinline__ void block_per_segment(const typename P::In* __restrict__ input,
                                                  const Offset* __restrict__ offsets, u64 segments,
                                                  typename P::Op::T* __restrict__ out) {
    typedef typename P::Op Op;
    __shared__ BlockReduceStorage<typename Op::T> storage;
    const Op op = Op();
    for (u64 s = blockIdx.x; s < segments; s += gridDim.x) {
        const SegmentBounds bounds = segment_bounds(offsets, s);
        const typename Op::T partial =
            accumulate_range<P>(input, bounds.begin, bounds.end, bounds.begin, threadIdx.x, kBlockThreads);
        const typename Op::T total = block_reduce(partial, op, storage);
        if (threadIdx.x == 0) out[s] = total;
        // Warp 0 has read every warp partial of this segment before any warp
        // writes its partial of the next one (WAR on storage).
        __syncthreads();
    }
}

// ---- several blocks per segment ----

// Work item w = s * blocks_per_segment + c: chunk c of segment s, where a
// segment of len items is cut into blocks_per_segment chunks of
// ceil(len / blocks_per_segment) items rounded up to a multiple of 4 (so
// chunk starts keep the segment's vector alignment); trailing chunks may be
// empty and give the identity. partials[w] receives the chunk's result.
template <class P, class Offset>
__device__ __forceinline__ void multi_block_partials(const typename P::In* __restrict__ input,
                                                     const Offset* __restrict__ offsets, u64 segments,
                                                     u32 blocks_per_segment, typename P::Op::T* __restrict__ partials) {
    typedef typename P::Op Op;
    __shared__ BlockReduceStorage<typename Op::T> storage;
    const Op op = Op();
    const u64 work_items = segments * blocks_per_segment;
    for (u64 w = blockIdx.x; w < work_items; w += gridDim.x) {
        const u64 s = w / blocks_per_segment;
        const u64 c = w % blocks_per_segment;
        const SegmentBounds bounds = segment_bounds(offsets, s);
        const u64 len = bounds.end - bounds.begin;
        const u64 chunk = ((len + blocks_per_segment - 1) / blocks_per_segment + 3) & ~3ull;
        const u64 lo = bounds.begin + min(len, c * chunk);
        const u64 hi = bounds.begin + min(len, (c + 1) * chunk);
        const typename Op::T partial = accumulate_range<P>(input, lo, hi, bounds.begin, threadIdx.x, kBlockThreads);
        const typename Op::T total = block_reduce(partial, op, storage);
        if (threadIdx.x == 0) partials[w] = total;
        // WAR on storage, as in block_per_segment.
        __syncthreads();
    }
}

// Warp per segment: lane l combines partials [l * per_lane, (l + 1) * per_lane)
// of its segment left to right, then the order-preserving warp_reduce.
template <class P>
__device__ __forceinline__ void multi_block_combine(const typename P::Op::T* __restrict__ partials, u64 segments,
                                                    u32 blocks_per_segment, typename P::Op::T* __restrict__ out) {
    typedef typename P::Op Op;
    typedef typename Op::T T;
    const Op op = Op();
    const int lane = lane_id();
    const u32 per_lane = (blocks_per_segment + kWarpThreads - 1) / kWarpThreads;
    const u32 first = min(blocks_per_segment, (u32)lane * per_lane);
    const u32 last = min(blocks_per_segment, first + per_lane);
    const u64 warps_in_grid = (u64)gridDim.x * kBlockWarps;
    for (u64 s = (u64)blockIdx.x * kBlockWarps + warp_id(); s < segments; s += warps_in_grid) {
        const T* __restrict__ mine = partials + s * blocks_per_segment;
        T acc = Op::identity();
        for (u32 c = first; c < last; ++c) acc = op(acc, mine[c]);
        const T total = warp_reduce(acc, op);
        if (lane == 0) out[s] = total;
    }
}

// ---- entry points: segmented_<schedule>_<operator> ----

// The schedules that read offsets, once for u32 offsets (SUFFIX empty) and
// once for u64 (SUFFIX _o64).
#define PRIMLAB_SEGMENTED_ENTRIES(NAME, POLICY, OFFSET, SUFFIX)                                                       \
    extern "C" __global__ void __launch_bounds__(kBlockThreads) segmented_warp_per_segment_##NAME##SUFFIX(           \
        const POLICY::In* __restrict__ input, const OFFSET* __restrict__ offsets, u64 segments,                     \
        POLICY::Op::T* __restrict__ out) {                                                                           \
        warp_per_segment<POLICY, OFFSET>(input, offsets, segments, out);                                             \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads) segmented_warp_batched_##NAME##SUFFIX(               \
        const POLICY::In* __restrict__ input, const OFFSET* __restrict__ offsets, u64 segments,                     \
        POLICY::Op::T* __restrict__ out) {                                                                           \
        warp_batched_segments<POLICY, OFFSET>(input, offsets, segments, out);                                        \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads) segmented_block_per_segment_##NAME##SUFFIX(          \
        const POLICY::In* __restrict__ input, const OFFSET* __restrict__ offsets, u64 segments,                     \
        POLICY::Op::T* __restrict__ out) {                                                                           \
        block_per_segment<POLICY, OFFSET>(input, offsets, segments, out);                                            \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kBlockThreads) segmented_multi_block_partials_##NAME##SUFFIX(       \
        const POLICY::In* __restrict__ input, const OFFSET* __restrict__ offsets, u64 segments,                     \
        u32 blocks_per_segment, POLICY::Op::T* __restrict__ partials) {                                              \
        multi_block_partials<POLICY, OFFSET>(input, offsets, segments, blocks_per_segment, partials);                \
    }

// The second pass of multi_block (it reads partials, not offsets): one for both offset widths.
#define PRIMLAB_SEGMENTED_COMBINE(NAME, POLICY)                                                                       \
    extern "C" __global__ void __launch_bounds__(kBlockThreads) segmented_multi_block_combine_##NAME(                \
        const POLICY::Op::T* __restrict__ partials, u64 segments, u32 blocks_per_segment,                            \
        POLICY::Op::T* __restrict__ out) {                                                                           \
        multi_block_combine<POLICY>(partials, segments, blocks_per_segment, out);                                    \
    }

PRIMLAB_SEGMENTED_ENTRIES(sum_i32, SegmentedSumI32, u32, )
PRIMLAB_SEGMENTED_ENTRIES(sum_i32, SegmentedSumI32, u64, _o64)
PRIMLAB_SEGMENTED_COMBINE(sum_i32, SegmentedSumI32)
PRIMLAB_SEGMENTED_ENTRIES(sum_f32, SegmentedSumF32, u32, )
PRIMLAB_SEGMENTED_ENTRIES(sum_f32, SegmentedSumF32, u64, _o64)
PRIMLAB_SEGMENTED_COMBINE(sum_f32, SegmentedSumF32)
PRIMLAB_SEGMENTED_ENTRIES(max_i32, SegmentedMaxI32, u32, )
PRIMLAB_SEGMENTED_ENTRIES(max_i32, SegmentedMaxI32, u64, _o64)
PRIMLAB_SEGMENTED_COMBINE(max_i32, SegmentedMaxI32)
PRIMLAB_SEGMENTED_ENTRIES(argmax_f32, SegmentedArgMaxF32, u32, )
PRIMLAB_SEGMENTED_ENTRIES(argmax_f32, SegmentedArgMaxF32, u64, _o64)
PRIMLAB_SEGMENTED_COMBINE(argmax_f32, SegmentedArgMaxF32)
