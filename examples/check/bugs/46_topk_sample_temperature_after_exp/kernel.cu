// BUG: a top-k sampler, one block of 256 threads per row (blocks
// stride over the rows). The row's k largest are found by successor
// selection (round t picks, by a block argmax, the best item AFTER the one
// round t - 1 picked in the total order: larger value first, the lower index
// among equal values) into shared memory; then thread 0 weighs them
// exp(v - max) / temperature in float32 (the temperature divides the
// exponential, not the logit: it cancels in the normalisation, so every
// temperature acts as 1), walks their running sum and draws the first
// survivor whose running sum exceeds u * total (the inverse CDF), writing
// its column (the contract sample.f32: no probability). Shared scratch goes
// through a barrier between every write phase and read phase.
#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr unsigned kWarp = 32;
constexpr int kMaxK = 2048;  // the contract's cases take k <= 2048

// Whether (v, i) ranks before (w, j): the larger value, the lower index among equals.
__device__ __forceinline__ bool before(float v, long long i, float w, long long j) {
    return v > w || (v == w && i < j);
}

// Keeps the better of (bv, bi) and (v, i); an index of -1 is "none".
__device__ __forceinline__ void keep_better(float& bv, long long& bi, float v, long long i) {
    if (i >= 0 && (bi < 0 || before(v, i, bv, bi))) {
        bv = v;
        bi = i;
    }
}

__device__ __forceinline__ void warp_best(float& bv, long long& bi) {
    for (unsigned off = 16; off > 0; off >>= 1) {
        const float v = __shfl_down_sync(0xffffffffu, bv, off);
        const long long i = __shfl_down_sync(0xffffffffu, bi, off);
        keep_better(bv, bi, v, i);
    }
}

extern "C" __global__ void sample(const float* in, const float* uniforms, long long* samples, int rows, int cols,
                                  int k, float temperature) {
    __shared__ float best_v[32];
    __shared__ long long best_i[32];
    __shared__ float top_v[kMaxK];
    __shared__ long long top_i[kMaxK];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* x = in + (long long)r * cols;
        float last_v = INFINITY;
        long long last_i = -1;  // none chosen yet: every item comes after
        for (int t = 0; t < k; ++t) {
            float bv = -INFINITY;
            long long bi = -1;
            for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
                const float v = x[c];
                if (last_i < 0 || before(last_v, last_i, v, c)) keep_better(bv, bi, v, c);
            }
            warp_best(bv, bi);
            if (lane == 0) {
                best_v[warp] = bv;
                best_i[warp] = bi;
            }
            __syncthreads();
            if (warp == 0) {
                bv = lane < warps ? best_v[lane] : -INFINITY;
                bi = lane < warps ? best_i[lane] : -1;
                warp_best(bv, bi);
                if (lane == 0) {
                    best_v[0] = bv;
                    best_i[0] = bi;
                    top_v[t] = bv;
                    top_i[t] = bi;
                }
            }
            __syncthreads();
            last_v = best_v[0];
            last_i = best_i[0];
            __syncthreads();  // every thread has read the winner before the next round rewrites it
        }
        if (threadIdx.x == 0) {
            float total = 0.0f;
            for (int t = 0; t < k; ++t) total += expf(top_v[t] - top_v[0]) / temperature;
            const float target = uniforms[r] * total;
            float running = 0.0f;
            int j = k - 1;
            for (int t = 0; t < k; ++t) {
                running += expf(top_v[t] - top_v[0]) / temperature;
                if (target < running) {
                    j = t;
                    break;
                }
            }
            samples[r] = top_i[j];
        }
        __syncthreads();  // thread 0 has read top_v before the next row rewrites it
    }
}
