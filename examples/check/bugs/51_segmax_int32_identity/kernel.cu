// BUG (identity of the wrong type): a segmented max over int32 values with
// int64 output, one block per segment. Its identity is INT_MIN, the int32
// identity, "since the values are int32"; non-empty segments are right, but
// an empty segment yields -2147483648 where the contract (an int64 max) wants
// i64::MIN = -9223372036854775808.
constexpr unsigned kWarp = 32;

#define INT_MIN_I32 (-2147483647 - 1)

__device__ long long block_max(long long v) {
    __shared__ long long warp_max[32];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, off));
    if (lane == 0) warp_max[warp] = v;
    __syncthreads();
    long long total = INT_MIN_I32;
    if (warp == 0) {
        total = lane < blockDim.x / kWarp ? warp_max[lane] : INT_MIN_I32;
        for (unsigned off = 16; off > 0; off >>= 1) total = max(total, __shfl_down_sync(0xffffffffu, total, off));
    }
    __syncthreads();  // warp_max is reused by the next segment
    return total;  // valid in thread 0
}

extern "C" __global__ void segment_max(const int* in, const long long* offsets, long long* out, long long segments) {
    for (long long s = blockIdx.x; s < segments; s += gridDim.x) {
        const long long begin = offsets[s], end = offsets[s + 1];
        // Four independent loads per step (one block may own a segment of 2^28 items).
        long long v = INT_MIN_I32, v1 = INT_MIN_I32, v2 = INT_MIN_I32, v3 = INT_MIN_I32;  // BUG: int32 identity
        const long long step = blockDim.x;
        long long i = begin + threadIdx.x;
        for (; i + 3 * step < end; i += 4 * step) {
            v = max(v, (long long)in[i]);
            v1 = max(v1, (long long)in[i + step]);
            v2 = max(v2, (long long)in[i + 2 * step]);
            v3 = max(v3, (long long)in[i + 3 * step]);
        }
        for (; i < end; i += step) v = max(v, (long long)in[i]);
        v = max(max(v, v1), max(v2, v3));
        long long total = block_max(v);
        if (threadIdx.x == 0) out[s] = total;
    }
}
