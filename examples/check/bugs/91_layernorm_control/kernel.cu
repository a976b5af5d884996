// CONTROL: a correct float32 layer norm (row contract
// layernorm.f32.f32.affine.stats): one block of 256 threads per row, two
// passes: the row mean, then the mean of the squared deviations from it (the
// biased variance, never negative), rstd = 1 / sqrtf(var + eps) (IEEE sqrt
// and division), out = (x - mean) * rstd * gamma + beta; thread 0 writes the
// row's mean and rstd. 64-bit row offsets.
constexpr unsigned kThreads = 256;

// Block-wide sum of one value per thread (blockDim.x a power of two); every
// thread calls it and gets the result; `sh` holds blockDim.x floats.
__device__ float block_sum(float v, float* sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    const float r = sh[0];
    __syncthreads();  // sh is reused by the next sum
    return r;
}

extern "C" __global__ void layernorm_rows(const float* in, const float* gamma, const float* beta, float* out,
                                          float* mean_out, float* rstd_out, int rows, int cols, float eps) {
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
    const float rstd = 1.0f / sqrtf(var + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = (in[base + c] - mean) * rstd * gamma[c] + beta[c];
    if (threadIdx.x == 0) {
        mean_out[blockIdx.x] = mean;
        rstd_out[blockIdx.x] = rstd;
    }
}
