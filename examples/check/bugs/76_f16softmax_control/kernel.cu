// CONTROL: a correct row softmax over float16 logits, written as float16
// (typed contract rows.f16.f16): one block of 256 threads per row, float32
// arithmetic: the row maximum, then the sum of exp(x - max), then each
// probability rounded to the nearest float16 (cvt.rn). A masked logit (-inf)
// gives exactly 0 and an all-masked row all 0, the contract's rule
// (exp(-inf - -inf) would be NaN, so such a row is written apart).
constexpr unsigned kThreads = 256;

// float16 to float32: the cvt instruction, exact for every float16.
__device__ float widen(unsigned short bits) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
}

// x rounded to the nearest float16, ties to even (subnormals included).
__device__ unsigned short narrow(float x) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
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
