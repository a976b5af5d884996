// BUG (double is not exact): a "correctly rounded" f32 sum that widens
// every value to double, adds in a fixed tree (per-thread, warp, block, one
// final block) and rounds the double total to float once. Each f32 is exact
// in double, but the double additions round (53 bits): with cancellation
// (ill-conditioned sums, condition 1e10 .. 1e30) the double total is far from
// the exact sum, and even for benign data the double rounding
// (exact -> double -> float) can miss the correctly rounded f32 result.
constexpr unsigned kWarp = 32;

__device__ double block_sum(double v) {
    __shared__ double warp_sums[32];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    double total = 0.0;
    if (warp == 0) {
        total = lane < blockDim.x / kWarp ? warp_sums[lane] : 0.0;
        for (unsigned off = 16; off > 0; off >>= 1) total += __shfl_down_sync(0xffffffffu, total, off);
    }
    return total;  // valid in thread 0
}

extern "C" __global__ void partial_sums(const float* in, double* partials, unsigned long long n) {
    double s = 0.0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        s += (double)in[i];  // BUG: double additions round
    const double total = block_sum(s);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

extern "C" __global__ void final_sum(const double* partials, float* out, unsigned long long n) {
    const unsigned long long blocks = min((n + 1023) / 1024, 1024ull);
    double s = 0.0;
    for (unsigned long long b = threadIdx.x; b < blocks; b += blockDim.x) s += partials[b];
    const double total = block_sum(s);
    if (threadIdx.x == 0) out[0] = (float)total;
}
