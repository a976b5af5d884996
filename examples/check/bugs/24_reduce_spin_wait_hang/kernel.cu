// BUG (spin-wait on a count that is never reached): a one-launch sum. Every
// block but block 0 writes its partial, fences and increments a counter;
// block 0 waits until the counter equals the number of other blocks, which
// it computes as ceil(n / 1024) - 1, the grid it was written for. The
// manifest caps the grid at 1024 blocks (for occupancy), so for n > 2^20
// only 1023 blocks ever arrive and block 0 spins forever.
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

// counter: one unsigned int, zeroed before each case (scratch zero = true).
extern "C" __global__ void reduce_sum(const int* in, long long* out, long long* partials, unsigned int* counter,
                                      unsigned long long n) {
    long long s = 0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        s += in[i];
    long long total = block_sum(s);
    if (threadIdx.x != 0) return;
    if (blockIdx.x != 0) {
        partials[blockIdx.x] = total;
        __threadfence();
        atomicAdd(counter, 1u);
        return;
    }
    const unsigned long long others = (n + 1023) / 1024 - 1;  // BUG: not gridDim.x - 1
    while (atomicAdd(counter, 0u) != others) {
    }
    __threadfence();
    for (unsigned long long b = 1; b < others + 1; ++b) total += ((volatile long long*)partials)[b];
    out[0] = total;
}
