// Block-wide exclusive scans over any operator from operators.cuh.
//  * blelloch_block_scan: the work-efficient up-sweep / down-sweep (Blelloch)
//    over kBlockItems = 512 items in shared memory, 2 items per thread.
//  * block_exclusive_scan: warp_inclusive_scan per warp plus a scan of the
//    warp totals, for one aggregate per thread (the look-back tiles).
#pragma once
#include "common/config.cuh"
#include "common/warp_reduce.cuh"

namespace primlab {

// Exclusive Blelloch scan of `items[0..kBlockItems)` in place; returns the
// block total to every thread. Every thread of the block calls it; the
// caller must have written all items and passed a barrier before the call.
// Combines keep order: up-sweep a[r] = a[l] (+) a[r]; down-sweep gives the
// left child the parent's prefix P and the right child P (+) old a[l].
template <class Op>
__device__ __forceinline__ typename Op::T blelloch_block_scan(typename Op::T* items, Op op) {
    typedef typename Op::T T;
    static_assert(kBlockItems == 2 * kBlockThreads, "two items per thread");
    const int tid = int(threadIdx.x);
    int stride = 1;
    for (int active = kBlockItems / 2; active > 0; active /= 2) {
        if (tid < active) {
            const int l = stride * (2 * tid + 1) - 1;
            const int r = stride * (2 * tid + 2) - 1;
            items[r] = op(items[l], items[r]);
        }
        stride *= 2;
        // The next level reads sums this level wrote (RAW across threads).
        __syncthreads();
    }
    const T total = items[kBlockItems - 1];
    // Every thread reads the root before thread 0 clears it (WAR).
    __syncthreads();
    if (tid == 0) items[kBlockItems - 1] = Op::identity();
    for (int active = 1; active < kBlockItems; active *= 2) {
        stride /= 2;
        // The previous level's writes (or the cleared root) are read here.
        __syncthreads();
        if (tid < active) {
            const int l = stride * (2 * tid + 1) - 1;
            const int r = stride * (2 * tid + 2) - 1;
            const T left = items[l];
            items[l] = items[r];
            items[r] = op(items[r], left);
        }
    }
    // The caller reads every slot after the last level's writes.
    __syncthreads();
    return total;
}

template <class T, int BLOCK_THREADS = kBlockThreads>
struct BlockScanStorage {
    static_assert(BLOCK_THREADS % kWarpThreads == 0, "a block must be whole warps");
    T warp_prefix[BLOCK_THREADS / kWarpThreads];
    T total;
};

// Exclusive scan of one value per thread in thread order. Every thread
// receives its exclusive prefix and the block total. Ends with a barrier so
// the storage may be reused at once.
template <class Op, int BLOCK_THREADS = kBlockThreads>
__device__ __forceinline__ typename Op::T block_exclusive_scan(typename Op::T value, Op op,
                                                                BlockScanStorage<typename Op::T, BLOCK_THREADS>& storage,
                                                                typename Op::T& block_total) {
    typedef typename Op::T T;
    constexpr int kWarps = BLOCK_THREADS / kWarpThreads;
    static_assert(kWarps <= kWarpThreads, "one warp scans the warp totals");
    const int lane = lane_id();
    const int warp = warp_id();
    T warp_total;
    const T in_warp = warp_exclusive_scan(value, op, warp_total);
    if (lane == 0) storage.warp_prefix[warp] = warp_total;
    // Warp 0 scans the totals only after every warp has stored its own.
    __syncthreads();
    if (warp == 0) {
        const T t = lane < kWarps ? storage.warp_prefix[lane] : Op::identity();
        T all;
        const T prefix = warp_exclusive_scan(t, op, all);
        // Every lane of warp 0 has read its total (inside the shuffles above)
        // before any lane overwrites a slot with a prefix.
        if (lane < kWarps) storage.warp_prefix[lane] = prefix;
        if (lane == 0) storage.total = all;
    }
    // Every warp reads its prefix only after warp 0 has written them all.
    __syncthreads();
    const T result = op(storage.warp_prefix[warp], in_warp);
    block_total = storage.total;
    // No thread may overwrite the storage (a following scan) before all have read it.
    __syncthreads();
    return result;
}

}  // namespace primlab
