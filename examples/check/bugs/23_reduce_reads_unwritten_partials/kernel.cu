// BUG (read of memory nothing wrote): a two-pass sum with a fixed partials
// array of 1024 entries. Pass 1 runs min(ceil(n / 1024), 1024) blocks and
// writes that many partials; pass 2 (one block of 1024 threads) loads
// partials[threadIdx.x] for EVERY thread and only then discards the entries
// past the number of blocks. The result is right whatever those entries
// hold; the loads read scratch that no kernel wrote.
constexpr unsigned kWarp = 32;

// Block sum: full-warp shuffles, one partial per warp in shared memory.
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
    return total;  // valid in thread 0
}

extern "C" __global__ void partial_sums(const int* in, long long* partials, unsigned long long n) {
    long long s = 0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        s += in[i];
    long long total = block_sum(s);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

extern "C" __global__ void final_sum(const long long* partials, long long* out, unsigned long long n) {
    const unsigned long long blocks = min((n + 1023) / 1024, 1024ull);
    long long v = partials[threadIdx.x];  // BUG: loaded before the check below
    if (threadIdx.x >= blocks) v = 0;
    long long total = block_sum(v);
    if (threadIdx.x == 0) out[0] = total;
}
