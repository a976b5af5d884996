// CONTROL: a correct two-pass int32 -> int64 sum. Pass 1: at most 1024
// blocks of 256 threads, each thread accumulates a grid-stride range in
// int64 with a 64-bit index, warp shuffles (full warp, tail lanes hold 0),
// one partial per warp in shared memory, one partial per block. Pass 2: one
// block adds the block partials and writes out[0] (no atomics, no zeroing).
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

// One block; `blocks` = the first pass's grid, recomputed from n.
extern "C" __global__ void final_sum(const long long* partials, long long* out, unsigned long long n) {
    const unsigned long long blocks = min((n + 1023) / 1024, 1024ull);
    long long s = 0;
    for (unsigned long long b = threadIdx.x; b < blocks; b += blockDim.x) s += partials[b];
    long long total = block_sum(s);
    if (threadIdx.x == 0) out[0] = total;
}
