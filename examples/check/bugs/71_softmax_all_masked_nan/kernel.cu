// BUG (all-masked row): a three-phase row softmax (max, sum of exp(x - max),
// normalise), one block of 256 threads per row. Masked logits (-inf) are
// handled by expf(-inf) = 0, but a row whose every logit is masked has
// max = -inf, x - max = -inf - (-inf) = NaN, and the whole row becomes NaN;
// the contract wants all zeros for it.
#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr unsigned kWarp = 32;

template <bool Max>
__device__ float block_reduce(float v, float* scratch) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = Max ? fmaxf(v, o) : v + o;
    }
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float t = lane < blockDim.x / kWarp ? scratch[lane] : (Max ? -INFINITY : 0.0f);
    for (unsigned off = 16; off > 0; off >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, t, off);
        t = Max ? fmaxf(t, o) : t + o;
    }
    __syncthreads();  // scratch is reused
    return t;         // in every thread
}

extern "C" __global__ void softmax(const float* in, float* out, int rows, int cols) {
    __shared__ float scratch[32];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* x = in + (long long)r * cols;
        float* y = out + (long long)r * cols;
        float m = -INFINITY;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[c]);
        m = block_reduce<true>(m, scratch);
        // BUG: no case for m == -inf (every logit masked)
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(x[c] - m);
        s = block_reduce<false>(s, scratch);
        for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = expf(x[c] - m) / s;
    }
}
