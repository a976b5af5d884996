// BUG (partial-warp mask): an f32 sum, one item per thread. The warp
// reduction is inside `if (i < n)` and, "to be safe in the tail", uses
// __activemask() as its mask. In the partial last warp the mask is right
// (only the lanes that are here), but __shfl_down_sync still reads lanes
// lane + off that are not in the mask: the value from a non-participating
// lane is undefined, and lane 0 adds it. out[0] is zeroed by a first launch.
constexpr unsigned kWarp = 32;

extern "C" __global__ void zero_out(float* out) { out[0] = 0.0f; }

extern "C" __global__ void fsum(const float* in, float* out, unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[i];
        const unsigned mask = __activemask();
        for (unsigned off = 16; off > 0; off >>= 1) v += __shfl_down_sync(mask, v, off);  // BUG: reads absent lanes
        if (threadIdx.x % kWarp == 0) atomicAdd(out, v);
    }
}
