// BUG (output never initialised, hidden by the poison): a segmented max of
// int32 values into int64 outputs, one block per segment; each warp reduces
// its strided share with shuffles and lane 0 folds it in with atomicMax on
// out[s]. Empty segments are written explicitly (i64::MIN), but for the other
// segments nothing sets out[s] before the atomics: the result is
// max(initial contents, segment max). Under the harness's poison (every byte
// 0xA5: as int64 -6.5e18, below every int32) that is exactly the segment
// max; on a buffer holding 0 or anything >= -2^31 it is wrong.
constexpr unsigned kWarp = 32;
constexpr long long kMin = -0x7fffffffffffffffll - 1;

extern "C" __global__ void segment_max(const int* in, const long long* offsets, long long* out, long long segments) {
    const unsigned lane = threadIdx.x % kWarp;
    for (long long s = blockIdx.x; s < segments; s += gridDim.x) {
        const long long begin = offsets[s], end = offsets[s + 1];
        if (begin == end) {
            if (threadIdx.x == 0) out[s] = kMin;  // the empty segment is handled...
            continue;
        }
        long long v = kMin;
        for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) v = max(v, (long long)in[i]);
        for (unsigned off = 16; off > 0; off >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, off));
        if (lane == 0) atomicMax(&out[s], v);  // BUG: ...but out[s] was never set to kMin first
    }
}
