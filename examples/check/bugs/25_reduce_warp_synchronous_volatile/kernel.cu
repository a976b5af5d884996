// BUG (warp-synchronous programming): the classic shared-memory block
// reduction whose last six steps run in warp 0 without barriers, relying on
// the lanes of a warp moving in lockstep through `volatile` shared memory.
// Since Volta the lanes of a warp are scheduled independently: a lane may
// read s[t + 16] before the lane that adds into it has written, and the sum
// misses values. Nothing orders the steps but __syncwarp() (or shuffles).
constexpr unsigned kBlock = 256;

extern "C" __global__ void zero_out(long long* out) { out[0] = 0; }

__device__ void warp_reduce(volatile long long* s, unsigned t) {
    s[t] += s[t + 32];  // BUG: no __syncwarp() between the steps
    s[t] += s[t + 16];
    s[t] += s[t + 8];
    s[t] += s[t + 4];
    s[t] += s[t + 2];
    s[t] += s[t + 1];
}

extern "C" __global__ void reduce_sum(const int* in, long long* out, unsigned long long n) {
    __shared__ long long s[kBlock];
    const unsigned t = threadIdx.x;
    long long v = 0;
    for (unsigned long long i = (unsigned long long)blockIdx.x * kBlock + t; i < n;
         i += (unsigned long long)gridDim.x * kBlock)
        v += in[i];
    s[t] = v;
    __syncthreads();
    for (unsigned stride = kBlock / 2; stride > 32; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t < 32) warp_reduce(s, t);
    if (t == 0) atomicAdd((unsigned long long*)out, (unsigned long long)s[0]);
}
