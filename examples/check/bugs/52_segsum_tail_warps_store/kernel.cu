// BUG (store past the end): a segmented int32 -> int64 sum, one warp per
// segment, 8 warps per block. The block walks the segments in groups of 8
// so that every warp runs the same number of iterations (a later version
// wanted a block barrier in the loop). In the last group, warps whose
// segment is >= segments skip the loads, but the store is outside the bound
// check: they write out[s] = 0 for up to 7 segments past the end of out.
constexpr unsigned kWarp = 32;

extern "C" __global__ void segment_sums(const int* in, const long long* offsets, long long* out, long long segments) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
    for (long long group = (long long)blockIdx.x * warps; group < segments; group += (long long)gridDim.x * warps) {
        const long long s = group + warp;
        long long v = 0;
        if (s < segments) {
            const long long begin = offsets[s], end = offsets[s + 1];
            long long v1 = 0, v2 = 0, v3 = 0;  // four loads in flight: a segment may hold 2^28 items
            long long i = begin + lane;
            for (; i + 3 * kWarp < end; i += 4 * kWarp) {
                v += in[i];
                v1 += in[i + kWarp];
                v2 += in[i + 2 * kWarp];
                v3 += in[i + 3 * kWarp];
            }
            for (; i < end; i += kWarp) v += in[i];
            v += v1 + v2 + v3;
        }
        for (unsigned off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0) out[s] = v;  // BUG: also for s >= segments
    }
}
