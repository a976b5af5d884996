// BUG: a layer norm over bfloat16 rows with bfloat16 gamma and beta, written
// as bfloat16 (row contract layernorm.bf16.bf16.affine), one block of 256
// threads per row, whose threads keep their partial sums of the row mean in
// bfloat16: each add is rounded to 8 significant bits, so a partial of tens
// of terms keeps two or three decimal digits and the mean of a long row
// drifts; every output of the row shifts by the error times rstd. The
// variance and the outputs are computed in float32 as the control's are.
// (A NumPy model of this kernel failed 32 of the contract's 84 cases, the
// first a 257-column row.)
constexpr unsigned kThreads = 256;

// bfloat16 is the top half of a float32: widening is a shift, exact.
__device__ float widen(unsigned short bits) { return __uint_as_float((unsigned int)bits << 16); }

// x rounded to the nearest bfloat16, ties to even (x is finite here).
__device__ unsigned short narrow(float x) {
    const unsigned int b = __float_as_uint(x);
    return (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

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

extern "C" __global__ void layernorm_rows(const unsigned short* in, const unsigned short* gamma,
                                          const unsigned short* beta, unsigned short* out, int rows, int cols,
                                          float eps) {
    __shared__ float sh[kThreads];
    const unsigned long long base = (unsigned long long)blockIdx.x * (unsigned long long)cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s = widen(narrow(s + widen(in[base + c])));  // the bug
    const float mean = block_sum(s, sh) / (float)cols;
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float d = widen(in[base + c]) - mean;
        q += d * d;
    }
    const float rstd = 1.0f / sqrtf(block_sum(q, sh) / (float)cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[base + c] = narrow((widen(in[base + c]) - mean) * rstd * widen(gamma[c]) + widen(beta[c]));
}
