// BUG: a two-pass float32 layer norm (row contract layernorm.f32.f32.affine)
// that takes eps as a parameter and forgets it: rstd = 1 / sqrtf(var). On a
// constant row the variance is exactly 0, so rstd = inf and
// (x - mean) * rstd = 0 * inf = NaN; wherever the mean is off by a rounding,
// every output is +-1 instead of beta.
constexpr unsigned kThreads = 256;

__device__ float block_sum(float v, float* sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    const float r = sh[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void layernorm_rows(const float* in, const float* gamma, const float* beta, float* out, int rows,
                                          int cols, float eps) {
    __shared__ float sh[kThreads];
    const unsigned long long base = (unsigned long long)blockIdx.x * (unsigned long long)cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += in[base + c];
    const float mean = block_sum(s, sh) / (float)cols;
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float d = in[base + c] - mean;
        q += d * d;
    }
    const float var = block_sum(q, sh) / (float)cols;
    const float rstd = 1.0f / sqrtf(var);  // BUG: + eps forgotten
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = (in[base + c] - mean) * rstd * gamma[c] + beta[c];
}
