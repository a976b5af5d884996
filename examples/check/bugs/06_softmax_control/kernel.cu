// CONTROL: a correct three-phase row softmax, one block of 256 threads per
// row (blocks stride over the rows): row max (fmaxf, -inf identity), sum of
// expf(x - max), then expf(x - max) / sum. Shared scratch goes through a
// barrier between every write phase and every read phase; a row whose every
// logit is masked (-inf) is written as zeros.
#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr unsigned kWarp = 32;

extern "C" __global__ void softmax(const float* in, float* out, int rows, int cols) {
    __shared__ float scratch[32];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* x = in + (long long)r * cols;
        float* y = out + (long long)r * cols;
        float m = -INFINITY;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[c]);
        for (unsigned off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
        if (lane == 0) scratch[warp] = m;
        __syncthreads();
        if (warp == 0) {
            float t = lane < warps ? scratch[lane] : -INFINITY;
            for (unsigned off = 16; off > 0; off >>= 1) t = fmaxf(t, __shfl_xor_sync(0xffffffffu, t, off));
            if (lane == 0) scratch[0] = t;
        }
        __syncthreads();
        m = scratch[0];
        __syncthreads();  // every thread has read the max before scratch is reused
        const bool masked = m == -INFINITY;  // all logits masked: the row is all zeros
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) s += masked ? 0.0f : expf(x[c] - m);
        for (unsigned off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
        if (lane == 0) scratch[warp] = s;
        __syncthreads();
        if (warp == 0) {
            float t = lane < warps ? scratch[lane] : 0.0f;
            for (unsigned off = 16; off > 0; off >>= 1) t += __shfl_xor_sync(0xffffffffu, t, off);
            if (lane == 0) scratch[0] = t;
        }
        __syncthreads();
        s = scratch[0];
        for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = masked ? 0.0f : expf(x[c] - m) / s;
        __syncthreads();  // before the next row's max reuses scratch
    }
}
