// CONTROL: a correct RMS norm over bfloat16 rows with a bfloat16 gamma,
// written as bfloat16 (row contract rmsnorm.bf16.bf16.affine): one block of
// 256 threads per row, float32 arithmetic: the mean of x^2, rstd =
// 1 / sqrtf(mean square + eps), out = x * rstd * gamma rounded once to the
// nearest bfloat16 (ties to even).
constexpr unsigned kThreads = 256;

// bfloat16 is the top half of a float32: widening is a shift, exact.
__device__ float widen(unsigned short bits) { return __uint_as_float((unsigned int)bits << 16); }

// x rounded to the nearest bfloat16, ties to even (x is finite here).
__device__ unsigned short narrow(float x) {
    const unsigned int b = __float_as_uint(x);
    return (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

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

extern "C" __global__ void rmsnorm_rows(const unsigned short* in, const unsigned short* gamma, unsigned short* out,
                                        int rows, int cols, float eps) {
    __shared__ float sh[kThreads];
    const unsigned long long base = (unsigned long long)blockIdx.x * (unsigned long long)cols;
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float x = widen(in[base + c]);
        q += x * x;
    }
    const float rstd = 1.0f / sqrtf(block_sum(q, sh) / (float)cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = narrow(widen(in[base + c]) * rstd * widen(gamma[c]));
}
