// BUG (output never zeroed): an f32 sum, block reduction then one
// atomicAdd per block into out[0]. Nothing sets out[0] to 0 first (the
// author's test harness used a freshly cudaMemset buffer). Under the
// harness's 0xA5 poison the start value is -2.9e-16, which vanishes in the
// rounding of any sum of order 1e-8 or more, so the results look right.
constexpr unsigned kWarp = 32;

extern "C" __global__ void fsum(const float* in, float* out, unsigned long long n) {
    __shared__ float warp_sums[32];
    float s = 0.0f;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        s += in[i];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        float t = lane < blockDim.x / kWarp ? warp_sums[lane] : 0.0f;
        for (unsigned off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
        if (lane == 0) atomicAdd(out, t);  // BUG: out[0] was never set to 0
    }
}
