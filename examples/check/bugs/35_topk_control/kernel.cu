// CONTROL: a correct top-k of each row by successor selection, one block of
// 256 threads per row (blocks stride over the rows). Round t picks, by a
// block argmax, the best item AFTER the one round t - 1 picked in the total
// order (larger value first, the lower index among equal values; float
// comparison, so -0.0 equals +0.0): k rounds give the k largest in order.
// The chosen value is written as the input element itself (its bits). Shared
// scratch goes through a barrier between every write phase and read phase.
#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr unsigned kWarp = 32;

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

extern "C" __global__ void topk(const float* in, float* values, long long* indices, int rows, int cols, int k) {
    __shared__ float best_v[32];
    __shared__ long long best_i[32];
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
                }
            }
            __syncthreads();
            last_v = best_v[0];
            last_i = best_i[0];
            if (threadIdx.x == 0) {
                values[(long long)r * k + t] = x[last_i];
                indices[(long long)r * k + t] = last_i;
            }
            __syncthreads();  // every thread has read the winner before the next round rewrites it
        }
    }
}
