// CONTROL: a correct row softmax, one block of 256 threads per row (blocks
// stride over the rows). The row max and the row sum reach every thread
// without a broadcast slot: each warp reduces by a butterfly, lane 0 writes
// its warp's total to shared memory, a barrier, then every warp reads the
// totals back (`lane < warps ? partials[lane] : identity`) and does the same
// butterfly, so all threads of the block hold the same value. A row whose
// every logit is masked (-inf) is written as zeros and skipped with
// `continue`: that branch is the same in every thread of the block, so the
// barriers of the sum after it are reached by all threads or by none.
#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr unsigned kWarp = 32;

// Every thread gets the block's maximum of v.
__device__ float block_max(float v, float* partials) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
    for (unsigned k = 16; k > 0; k >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, k));
    if (lane == 0) partials[warp] = v;
    __syncthreads();
    v = lane < warps ? partials[lane] : -INFINITY;
    for (unsigned k = 16; k > 0; k >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, k));
    __syncthreads();  // every warp has read the partials before they are reused
    return v;
}

// Every thread gets the block's sum of v (the same order in every warp).
__device__ float block_sum(float v, float* partials) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
    for (unsigned k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffffu, v, k);
    if (lane == 0) partials[warp] = v;
    __syncthreads();
    v = lane < warps ? partials[lane] : 0.0f;
    for (unsigned k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffffu, v, k);
    __syncthreads();
    return v;
}

extern "C" __global__ void softmax(const float* in, float* out, int rows, int cols) {
    __shared__ float partials[32];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* x = in + (long long)r * cols;
        float* y = out + (long long)r * cols;
        float m = -INFINITY;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[c]);
        m = block_max(m, partials);
        if (m == -INFINITY) {  // every logit masked: the row is all zeros
            for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = 0.0f;
            continue;
        }
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(x[c] - m);
        s = block_sum(s, partials);
        for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = expf(x[c] - m) / s;
    }
}
