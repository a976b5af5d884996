// BUG (32-bit index): an int32 -> int64 sum with the textbook grid-stride
// loop over an `int` index. `i += blockDim.x * gridDim.x` is computed in
// unsigned 32-bit and converted back to int, so once i passes 2^31 - 1 it
// becomes negative, `i < n` (compared as 64-bit unsigned) is false and the
// thread stops: items at 2^31 and beyond are never added. Every size up to
// 2^31 is right.
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

extern "C" __global__ void zero_out(long long* out) { out[0] = 0; }

extern "C" __global__ void reduce_sum(const int* in, long long* out, unsigned long long n) {
    long long s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)  // BUG: int index
        s += in[i];
    long long total = block_sum(s);
    if (threadIdx.x == 0) atomicAdd((unsigned long long*)out, (unsigned long long)total);
}
