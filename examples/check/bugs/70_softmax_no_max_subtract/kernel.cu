// BUG (overflow): a row softmax, one block of 256 threads per row (blocks
// stride over the rows), computed as expf(x) / sum(expf(x)) without
// subtracting the row maximum first. Mathematically the same; in f32, expf
// overflows to inf for x > 88.7 (inf / inf = NaN) and underflows to 0 for
// x < -103 (0 / 0 = NaN), so rows of large or very negative logits are lost.
constexpr unsigned kWarp = 32;

__device__ float block_sum(float v, float* scratch) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float t = lane < blockDim.x / kWarp ? scratch[lane] : 0.0f;
    for (unsigned off = 16; off > 0; off >>= 1) t += __shfl_xor_sync(0xffffffffu, t, off);
    __syncthreads();  // scratch is reused
    return t;         // in every thread
}

extern "C" __global__ void softmax(const float* in, float* out, int rows, int cols) {
    __shared__ float scratch[32];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* x = in + (long long)r * cols;
        float* y = out + (long long)r * cols;
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(x[c]);  // BUG: no max subtracted
        const float total = block_sum(s, scratch);
        for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = expf(x[c]) / total;
    }
}
