// BUG (negation overflow): a segmented max of int32 values computed with
// the author's segmented MIN kernel, "max(x) = -min(-x)". The values are
// negated in 32-bit arithmetic, where -INT_MIN wraps back to INT_MIN, so a
// segment holding INT_MIN gets -(INT_MIN) = 2147483648 as its max (for
// example [INT_MIN, 5] -> 2147483648 instead of 5). Empty segments are
// special-cased. Every segment without INT_MIN is right.
constexpr unsigned kWarp = 32;
constexpr long long kMax = 0x7fffffffffffffffll, kMin = -kMax - 1;

__device__ long long block_min(long long v) {
    __shared__ long long warp_min[32];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) v = min(v, __shfl_down_sync(0xffffffffu, v, off));
    if (lane == 0) warp_min[warp] = v;
    __syncthreads();
    long long total = kMax;
    if (warp == 0) {
        total = lane < blockDim.x / kWarp ? warp_min[lane] : kMax;
        for (unsigned off = 16; off > 0; off >>= 1) total = min(total, __shfl_down_sync(0xffffffffu, total, off));
    }
    __syncthreads();
    return total;  // valid in thread 0
}

extern "C" __global__ void segment_max(const int* in, const long long* offsets, long long* out, long long segments) {
    for (long long s = blockIdx.x; s < segments; s += gridDim.x) {
        const long long begin = offsets[s], end = offsets[s + 1];
        long long v = kMax;
        for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) {
            const int negated = (int)(0u - (unsigned)in[i]);  // BUG: -INT_MIN wraps to INT_MIN
            v = min(v, (long long)negated);
        }
        const long long m = block_min(v);
        if (threadIdx.x == 0) out[s] = begin == end ? kMin : -m;
    }
}
