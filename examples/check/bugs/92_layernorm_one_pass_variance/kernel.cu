// BUG: a one-pass float32 layer norm (row contract layernorm.f32.f32): each
// thread sums x and x*x in the same loop, and the variance is
// E[x^2] - E[x]^2. The formula is right in exact arithmetic, but on a row of
// 1e4 + small integers E[x^2] and E[x]^2 are both about 1e8, whose float32
// spacing is 8: their difference (the true variance is about 30) keeps no
// correct digit, and when it comes out negative rsqrtf gives NaN.
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

extern "C" __global__ void layernorm_rows(const float* in, float* out, int rows, int cols, float eps) {
    __shared__ float sh[kThreads];
    const unsigned long long base = (unsigned long long)blockIdx.x * (unsigned long long)cols;
    float s = 0.0f, q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float x = in[base + c];
        s += x;
        q += x * x;
    }
    const float mean = block_sum(s, sh) / (float)cols;
    const float var = block_sum(q, sh) / (float)cols - mean * mean;  // BUG: cancels on offset rows
    const float rstd = rsqrtf(var + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = (in[base + c] - mean) * rstd;
}
