// BUG (32-bit accumulator): an int32 -> int64 sum whose per-thread and
// per-warp partials are `int`: the output is int64, but the additions
// before the widening wrap around as soon as a partial leaves the int32
// range (full-range int32 data overflows on the first few additions).
constexpr unsigned kWarp = 32;

extern "C" __global__ void zero_out(long long* out) { out[0] = 0; }

extern "C" __global__ void reduce_sum(const int* in, long long* out, unsigned long long n) {
    __shared__ int warp_sums[32];
    int s = 0;  // BUG: int accumulator
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        s += in[i];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        int t = lane < blockDim.x / kWarp ? warp_sums[lane] : 0;
        for (unsigned off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
        if (lane == 0) atomicAdd((unsigned long long*)out, (unsigned long long)(long long)t);
    }
}
