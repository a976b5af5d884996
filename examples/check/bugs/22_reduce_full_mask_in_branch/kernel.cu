// BUG (warp collective in a divergent branch): one item per thread; the
// warp reduction sits inside `if (i < n)` and uses the full mask
// 0xffffffff, so in the partial last warp the shuffles name lanes that
// skipped the branch (and exited). The read from such a lane is undefined
// (__shfl_down_sync from a non-participating lane), and lane 0 adds it.
constexpr unsigned kWarp = 32;

extern "C" __global__ void zero_out(long long* out) { out[0] = 0; }

extern "C" __global__ void reduce_sum(const int* in, long long* out, unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        long long v = in[i];
        for (unsigned off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);  // BUG: tail lanes are not here
        if (threadIdx.x % kWarp == 0) atomicAdd((unsigned long long*)out, (unsigned long long)v);
    }
}
