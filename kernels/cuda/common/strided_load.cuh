// The tile layer's strided loop: one thread's share of an array of 16-byte
// vectors, vector first, first + step, first + 2 step, ... below `end`
// (step = the threads that share the array: a warp, a block or the grid, so
// consecutive threads load consecutive vectors and every warp load is
// coalesced). UNROLL loads are issued before any is visited, so UNROLL x 16
// bytes a thread are in flight; the rest of the share is visited one vector
// at a time. Vectors are visited in increasing index order, which is what
// order-sensitive visitors (first index of a tie, float sums) rely on.
//
// for_each_strided_vector calls visit(vector, index) once per vector;
// fold_strided_vectors threads an accumulator through the same visits,
// acc = combine(acc, vector, index), and returns it (an accumulator passed
// by value stays in registers, where one captured by reference may not).
// The Index type is the caller's (u32 where every index expression stays
// below 2^32, else u64).
#pragma once
#include "common/config.cuh"

namespace primlab {

template <int UNROLL, class V, class Index, class T, class Combine>
__device__ __forceinline__ T fold_strided_vectors(const V* __restrict__ vectors, Index first, Index end, Index step,
                                                  T acc, Combine combine) {
    static_assert(UNROLL >= 1, "at least one load a round");
    Index i = first;
    if constexpr (UNROLL > 1) {
        for (; i + Index(UNROLL - 1) * step < end; i += Index(UNROLL) * step) {
            V v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) v[u] = vectors[i + Index(u) * step];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) acc = combine(acc, v[u], i + Index(u) * step);
        }
    }
    for (; i < end; i += step) acc = combine(acc, vectors[i], i);
    return acc;
}

// The accumulator of a fold that only visits.
struct NoAccumulator {};

template <int UNROLL, class V, class Index, class Visit>
__device__ __forceinline__ void for_each_strided_vector(const V* __restrict__ vectors, Index first, Index end,
                                                        Index step, Visit visit) {
    fold_strided_vectors<UNROLL>(vectors, first, end, step, NoAccumulator{},
                                 [&visit](NoAccumulator, const V& v, Index i) {
                                     visit(v, i);
                                     return NoAccumulator{};
                                 });
}

}  // namespace primlab
