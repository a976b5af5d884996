// BUG (online softmax without the -inf guard): one pass computes each
// thread's running (max, sum) with the online rescaling
//   m' = max(m, x);  s' = s * expf(m - m') + expf(x - m')
// and merges the states across the block the same way. The rule is right
// for finite values, but a state that has seen only -inf (a thread whose
// first logits are masked, or a thread with no column at all: cols < 256)
// evaluates expf(-inf - (-inf)) = NaN, which then spreads to the row's sum.
#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr unsigned kWarp = 32;

struct State { float m, s; };

__device__ State merge(State a, State b) {
    const float m = fmaxf(a.m, b.m);
    return State{m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};  // BUG: NaN when a.m == b.m == -inf
}

__device__ State block_merge(State v, float* sm, float* ss) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1)
        v = merge(v, State{__shfl_xor_sync(0xffffffffu, v.m, off), __shfl_xor_sync(0xffffffffu, v.s, off)});
    if (lane == 0) { sm[warp] = v.m; ss[warp] = v.s; }
    __syncthreads();
    State t = lane < blockDim.x / kWarp ? State{sm[lane], ss[lane]} : State{-INFINITY, 0.0f};
    for (unsigned off = 16; off > 0; off >>= 1)
        t = merge(t, State{__shfl_xor_sync(0xffffffffu, t.m, off), __shfl_xor_sync(0xffffffffu, t.s, off)});
    __syncthreads();
    return t;  // in every thread
}

extern "C" __global__ void softmax(const float* in, float* out, int rows, int cols) {
    __shared__ float sm[32], ss[32];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* x = in + (long long)r * cols;
        float* y = out + (long long)r * cols;
        State st{-INFINITY, 0.0f};
        for (int c = threadIdx.x; c < cols; c += blockDim.x) st = merge(st, State{x[c], 1.0f});
        const State row = block_merge(st, sm, ss);
        for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = expf(x[c] - row.m) / row.s;
    }
}
