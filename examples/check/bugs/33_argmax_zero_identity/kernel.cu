// BUG (wrong identity): a two-pass argmax whose running best starts at
// (0.0f, index -1) -- "the usual zero" -- instead of (-inf, none). Whenever
// every value is below 0 (a size-1 input with a negative value, an
// all-negative or all-equal-negative array) the answer is the starting
// index -1 rather than the true maximum, and a lane or block without input
// competes with value 0.0. Otherwise it is the correct control.
#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr unsigned kWarp = 32;

struct Best { float v; long long i; };

__device__ Best better(Best a, Best b) {
    if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
    return a;
}

__device__ Best block_best(Best x) {
    __shared__ float vs[32];
    __shared__ long long is[32];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) {
        Best o{__shfl_down_sync(0xffffffffu, x.v, off), __shfl_down_sync(0xffffffffu, x.i, off)};
        x = better(x, o);
    }
    if (lane == 0) { vs[warp] = x.v; is[warp] = x.i; }
    __syncthreads();
    Best r{0.0f, -1};  // BUG
    if (warp == 0) {
        if (lane < blockDim.x / kWarp) r = Best{vs[lane], is[lane]};
        for (unsigned off = 16; off > 0; off >>= 1) {
            Best o{__shfl_down_sync(0xffffffffu, r.v, off), __shfl_down_sync(0xffffffffu, r.i, off)};
            r = better(r, o);
        }
    }
    return r;  // valid in thread 0
}

extern "C" __global__ void partial_best(const float* in, float* pv, long long* pi, unsigned long long n) {
    Best b{0.0f, -1};  // BUG: 0 is not the identity of max (-1: "none yet")
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        b = better(b, Best{in[i], (long long)i});
    Best r = block_best(b);
    if (threadIdx.x == 0) { pv[blockIdx.x] = r.v; pi[blockIdx.x] = r.i; }
}

extern "C" __global__ void final_best(const float* pv, const long long* pi, long long* index, unsigned long long n) {
    const unsigned long long blocks = min((n + 1023) / 1024, 1024ull);
    Best b{0.0f, -1};  // BUG: 0 is not the identity of max (-1: "none yet")
    for (unsigned long long k = threadIdx.x; k < blocks; k += blockDim.x) b = better(b, Best{pv[k], pi[k]});
    Best r = block_best(b);
    if (threadIdx.x == 0) index[0] = r.i;
}
