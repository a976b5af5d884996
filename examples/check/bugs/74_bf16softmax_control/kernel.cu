// CONTROL: a correct row softmax over bfloat16 logits, written as bfloat16
// (typed contract rows.bf16.bf16): one block of 256 threads per row, float32
// arithmetic: the row maximum, then the sum of exp(x - max), then each
// probability rounded to the nearest bfloat16 (ties to even). A masked logit
// (-inf) gives exactly 0 and an all-masked row all 0, the contract's rule
// (exp(-inf - -inf) would be NaN, so such a row is written apart).
constexpr unsigned kThreads = 256;

// bfloat16 is the top half of a float32: widening is a shift, exact.
__device__ float widen(unsigned short bits) { return __uint_as_float((unsigned int)bits << 16); }

// x rounded to the nearest bfloat16, ties to even (x is finite here).
__device__ unsigned short narrow(float x) {
    const unsigned int b = __float_as_uint(x);
    return (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
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
