// BUG (state kept across launches): a one-launch argmax in the style of the
// CUDA "threadFenceReduction" sample: each block writes its (value, index)
// partial, fences, and takes a ticket from a __device__ counter; the block
// that draws gridDim.x - 1 is the last one and reduces the partials. The
// sample resets the counter at the end; this kernel forgets to, so the
// first launch in a process is right and every later launch draws tickets
// from where the last one stopped: no block (or the wrong one) sees itself
// last, and index[0] is never written (or is computed from missing partials).
#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr unsigned kWarp = 32;

__device__ unsigned int blocks_done = 0;  // BUG: never reset

struct Best { float v; long long i; };

__device__ Best better(Best a, Best b) {
    if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
    return a;
}

__device__ Best block_best(Best x) {
    __shared__ float vs[32];
    __shared__ long long is[32];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1)
        x = better(x, Best{__shfl_down_sync(0xffffffffu, x.v, off), __shfl_down_sync(0xffffffffu, x.i, off)});
    if (lane == 0) { vs[warp] = x.v; is[warp] = x.i; }
    __syncthreads();
    Best r{-INFINITY, 0x7fffffffffffffffll};
    if (warp == 0) {
        if (lane < blockDim.x / kWarp) r = Best{vs[lane], is[lane]};
        for (unsigned off = 16; off > 0; off >>= 1)
            r = better(r, Best{__shfl_down_sync(0xffffffffu, r.v, off), __shfl_down_sync(0xffffffffu, r.i, off)});
    }
    __syncthreads();
    return r;  // valid in thread 0
}

extern "C" __global__ void argmax(const float* in, float* pv, long long* pi, long long* index, unsigned long long n) {
    __shared__ bool last;
    Best b{-INFINITY, 0x7fffffffffffffffll};
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        b = better(b, Best{in[i], (long long)i});
    Best r = block_best(b);
    if (threadIdx.x == 0) {
        pv[blockIdx.x] = r.v;
        pi[blockIdx.x] = r.i;
        __threadfence();
        last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    Best c{-INFINITY, 0x7fffffffffffffffll};
    for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x)
        c = better(c, Best{((volatile float*)pv)[k], ((volatile long long*)pi)[k]});
    Best t = block_best(c);
    if (threadIdx.x == 0) index[0] = t.i;  // the sample also does `blocks_done = 0;` here
}
