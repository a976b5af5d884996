// Block-wide reduction: warp_reduce in every warp, one partial per warp in
// shared memory, then a second warp pass over the partials (a
// 256-thread block = 8 warps). Order-preserving: warp w covers a lower range
// than warp w+1 when the caller assigns items in thread order.
#pragma once
#include "common/config.cuh"
#include "common/warp_reduce.cuh"

namespace primlab {

template <class T, int BLOCK_THREADS = kBlockThreads>
struct BlockReduceStorage {
    static_assert(BLOCK_THREADS % kWarpThreads == 0, "a block must be whole warps");
    static_assert(BLOCK_THREADS / kWarpThreads <= kWarpThreads, "one warp folds the partials");
    T warp_partials[BLOCK_THREADS / kWarpThreads];
};

// Every thread of the block must call this (barrier inside). The total is
// valid in thread 0 only. The storage may be reused after the caller's next
// __syncthreads().
template <class Op, int BLOCK_THREADS = kBlockThreads>
__device__ __forceinline__ typename Op::T block_reduce(typename Op::T value, Op op,
                                                        BlockReduceStorage<typename Op::T, BLOCK_THREADS>& storage) {
    typedef typename Op::T T;
    constexpr int kWarps = BLOCK_THREADS / kWarpThreads;
    const int lane = lane_id();
    const int warp = warp_id();
    value = warp_reduce(value, op);
    if (lane == 0) storage.warp_partials[warp] = value;
    // Warp 0 must not read warp_partials before every warp has written its own.
    __syncthreads();
    T total = Op::identity();
    if (warp == 0) {
        const T partial = lane < kWarps ? storage.warp_partials[lane] : Op::identity();
        total = warp_reduce(partial, op);
    }
    return total;
}

// As block_reduce, but every thread receives the total. Ends with a barrier,
// so the storage may be reused at once.
template <class Op, int BLOCK_THREADS = kBlockThreads>
__device__ __forceinline__ typename Op::T block_all_reduce(typename Op::T value, Op op,
                                                            BlockReduceStorage<typename Op::T, BLOCK_THREADS>& storage) {
    typedef typename Op::T T;
    T total = block_reduce<Op, BLOCK_THREADS>(value, op, storage);
    // Warp 0 has read every partial before the barrier below, so slot 0 may
    // be overwritten after the first barrier; readers wait for the second.
    __syncthreads();
    if (threadIdx.x == 0) storage.warp_partials[0] = total;
    __syncthreads();
    total = storage.warp_partials[0];
    // No thread may overwrite slot 0 (a following block_reduce) before all
    // have read it.
    __syncthreads();
    return total;
}

}  // namespace primlab
