// BUG (divergent barrier): a three-pass exclusive scan, one item per thread,
// tiles of 256. The tile kernels start with `if (i >= n) return;`, so in a
// partial last tile the tail threads leave before the block's
// __syncthreads() and before full-mask (0xffffffff) shuffles that name them.
// On current GPUs the exited threads usually do not block the barrier and
// the result is usually right; the behaviour is undefined.
constexpr unsigned kWarp = 32;

__device__ long long block_inclusive(long long v, long long* totals) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 1; off < kWarp; off <<= 1) {
        long long up = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += up;
    }
    if (lane == kWarp - 1) totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        long long t = lane < blockDim.x / kWarp ? totals[lane] : 0;
        for (unsigned off = 1; off < kWarp; off <<= 1) {
            long long up = __shfl_up_sync(0xffffffffu, t, off);
            if (lane >= off) t += up;
        }
        totals[lane] = t;
    }
    __syncthreads();
    return v + (warp > 0 ? totals[warp - 1] : 0);
}

extern "C" __global__ void tile_sums(const int* in, long long* sums, unsigned long long n) {
    __shared__ long long totals[32];
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;  // BUG: tail threads skip the barriers below
    const long long inc = block_inclusive(in[i], totals);
    if (threadIdx.x == blockDim.x - 1 || i == n - 1) sums[blockIdx.x] = inc;
}

extern "C" __global__ void scan_sums(long long* sums, unsigned long long n) {
    __shared__ long long totals[32];
    __shared__ long long total;
    const unsigned long long tiles = (n + 255) / 256;
    long long carry = 0;
    for (unsigned long long start = 0; start < tiles; start += blockDim.x) {
        const unsigned long long i = start + threadIdx.x;
        long long v = i < tiles ? sums[i] : 0;
        long long inc = block_inclusive(v, totals);
        if (i < tiles) sums[i] = carry + inc - v;
        if (threadIdx.x == blockDim.x - 1) total = inc;
        __syncthreads();
        carry += total;
        __syncthreads();
    }
}

extern "C" __global__ void scan_tiles(const int* in, long long* out, const long long* sums, unsigned long long n) {
    __shared__ long long totals[32];
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;  // BUG: same early exit
    const int x = in[i];
    out[i] = sums[blockIdx.x] + block_inclusive(x, totals) - x;
}
