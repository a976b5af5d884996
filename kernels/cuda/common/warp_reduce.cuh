// Warp-wide reduction and scan over any operator from operators.cuh.
#pragma once
#include "common/config.cuh"
#include "common/shuffle.cuh"

namespace primlab {

// Reduces the 32 lanes' values in lane order; the total is valid in lane 0.
// Offsets grow 1, 2, 4, 8, 16 so that after each step lane l holds the
// contiguous range [l, l + 2*offset) and every combine is (lower, upper):
// the order a non-commutative operator needs. All 32 lanes must call this
// (a lane without input passes Op::identity()): a lane that exited before the
// shuffle would leave its partner reading an undefined register.
template <class Op>
__device__ __forceinline__ typename Op::T warp_reduce(typename Op::T value, Op op) {
    const int lane = lane_id();
#pragma unroll
    for (int offset = 1; offset < kWarpThreads; offset *= 2) {
        const typename Op::T other = shfl_down(value, offset);
        // A source past lane 31 returns the caller's own value: skip it.
        if (lane + offset < kWarpThreads) value = op(value, other);
    }
    return value;
}

// Inclusive scan across the warp in lane order (Kogge-Stone, 5 steps).
template <class Op>
__device__ __forceinline__ typename Op::T warp_inclusive_scan(typename Op::T value, Op op) {
    const int lane = lane_id();
#pragma unroll
    for (int offset = 1; offset < kWarpThreads; offset *= 2) {
        const typename Op::T lower = shfl_up(value, offset);
        if (lane >= offset) value = op(lower, value);
    }
    return value;
}

// Exclusive scan across the warp; lane 0 gets the identity. `total` receives
// the warp's inclusive total in every lane.
template <class Op>
__device__ __forceinline__ typename Op::T warp_exclusive_scan(typename Op::T value, Op op,
                                                               typename Op::T& total) {
    const typename Op::T inclusive = warp_inclusive_scan(value, op);
    total = shfl_idx(inclusive, kWarpThreads - 1);
    const typename Op::T shifted = shfl_up(inclusive, 1);
    return lane_id() == 0 ? Op::identity() : shifted;
}

}  // namespace primlab
