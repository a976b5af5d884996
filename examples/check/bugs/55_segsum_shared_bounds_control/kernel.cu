// CONTROL: a correct segmented int32 -> int64 sum, one block per segment
// (blocks stride over the segments), 64-bit offsets and indices. Thread 0
// reads the segment's bounds into shared memory; after a barrier every
// thread reads them from there, so `begin` and `end` are the same in every
// thread of the block, and an empty segment is finished (out[s] = 0) with
// `continue` before the block reduction's barriers.
constexpr unsigned kWarp = 32;

__device__ long long block_sum(long long v) {
    __shared__ long long warp_sums[32];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    long long total = 0;
    if (warp == 0) {
        total = lane < blockDim.x / kWarp ? warp_sums[lane] : 0;
        for (unsigned off = 16; off > 0; off >>= 1) total += __shfl_down_sync(0xffffffffu, total, off);
    }
    __syncthreads();  // warp_sums is reused by the next segment
    return total;  // valid in thread 0
}

extern "C" __global__ void segment_sums(const int* in, const long long* offsets, long long* out, long long segments) {
    __shared__ long long bounds[2];
    for (long long s = blockIdx.x; s < segments; s += gridDim.x) {
        if (threadIdx.x == 0) {
            bounds[0] = offsets[s];
            bounds[1] = offsets[s + 1];
        }
        __syncthreads();
        const long long begin = bounds[0], end = bounds[1];
        __syncthreads();  // every thread has its bounds before thread 0 writes the next segment's
        if (begin == end) {  // empty: the same answer in every thread of the block
            if (threadIdx.x == 0) out[s] = 0;
            continue;
        }
        // Four independent loads per step (one block may own a segment of 2^28 items).
        long long v = 0, v1 = 0, v2 = 0, v3 = 0;
        const long long step = blockDim.x;
        long long i = begin + threadIdx.x;
        for (; i + 3 * step < end; i += 4 * step) {
            v += in[i];
            v1 += in[i + step];
            v2 += in[i + 2 * step];
            v3 += in[i + 3 * step];
        }
        for (; i < end; i += step) v += in[i];
        v += v1 + v2 + v3;
        long long total = block_sum(v);
        if (threadIdx.x == 0) out[s] = total;
    }
}
