// BUG (truncated output): the bfloat16 row softmax of 74_bf16softmax_control,
// except that each float32 probability becomes a bfloat16 by keeping its top
// 16 bits (a shift, as a hand-written conversion often does) instead of
// rounding to nearest: every probability whose dropped bits are at least half
// an ulp is off by more than the half-ulp rounding the bfloat16 tolerance
// allows, so about half of them fail.
constexpr unsigned kThreads = 256;

// bfloat16 is the top half of a float32: widening is a shift, exact.
__device__ float widen(unsigned short bits) { return __uint_as_float((unsigned int)bits << 16); }

// x as a bfloat16.
__device__ unsigned short narrow(float x) {
    return (unsigned short)(__float_as_uint(x) >> 16);  // BUG: truncates instead of rounding
}

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Add {
    __device__ float operator()(float a, float b) const { return a + b; }
};

// Block-wide reduction of one value per thread (blockDim.x a power of two);
// every thread calls it and gets the result; `sh` holds blockDim.x floats.
template <typename Op>
__device__ float block_reduce(float v, float* sh, Op op) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] = op(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    const float r = sh[0];
    __syncthreads();  // sh is reused by the next reduction
    return r;
}

extern "C" __global__ void softmax_rows(const unsigned short* in, unsigned short* out, int rows, int cols) {
    __shared__ float sh[kThreads];
    const float neg_inf = __int_as_float(0xff800000);
    const unsigned long long base = (unsigned long long)blockIdx.x * (unsigned long long)cols;
    float m = neg_inf;  // the identity of max for the tail threads
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, widen(in[base + c]));
    m = block_reduce(m, sh, Max());
    if (m == neg_inf) {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = 0;
        return;  // uniform across the block: every thread saw the same m
    }
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(widen(in[base + c]) - m);
    s = block_reduce(s, sh, Add());
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = narrow(expf(widen(in[base + c]) - m) / s);
}
