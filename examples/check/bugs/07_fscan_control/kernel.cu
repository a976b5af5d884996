// CONTROL: a correct three-pass inclusive float scan (float32 in, float32 out,
// float32 accumulation), tiles of 1024 items (256 threads x 4 consecutive
// items), 64-bit indices, tail items read as 0.0f (the sum's identity). Its
// sums are in another order than a serial loop's: the typed contract judges
// each prefix by the order-free bound of a float32 accumulator.
constexpr unsigned kThreads = 256, kWarp = 32;
constexpr int kItems = 4;
constexpr unsigned long long kTile = kThreads * kItems;

// Block-wide inclusive scan of one value per thread (blockDim.x a multiple of
// 32); every thread calls it; `totals` holds 32 entries.
__device__ float block_inclusive(float v, float* totals) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 1; off < kWarp; off <<= 1) {
        float up = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += up;
    }
    if (lane == kWarp - 1) totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float t = lane < blockDim.x / kWarp ? totals[lane] : 0.0f;
        for (unsigned off = 1; off < kWarp; off <<= 1) {
            float up = __shfl_up_sync(0xffffffffu, t, off);
            if (lane >= off) t += up;
        }
        totals[lane] = t;
    }
    __syncthreads();
    float r = v + (warp > 0 ? totals[warp - 1] : 0.0f);
    __syncthreads();  // totals may be reused by the caller
    return r;
}

// Block-wide exclusive scan: the inclusive scan of the thread before (0.0f for
// thread 0), passed through shared memory rather than computed as inc - v (a
// subtraction would round once more than a sum of the terms does).
__device__ float block_exclusive(float v, float* totals, float* shifted) {
    const float inc = block_inclusive(v, totals);
    shifted[threadIdx.x] = inc;
    __syncthreads();
    const float r = threadIdx.x > 0 ? shifted[threadIdx.x - 1] : 0.0f;
    __syncthreads();  // shifted may be reused by the caller
    return r;
}

extern "C" __global__ void tile_sums(const float* in, float* sums, unsigned long long n) {
    __shared__ float sh[kWarp];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    float s = 0.0f;
    for (int k = 0; k < kItems; ++k)
        if (base + k < n) s += in[base + k];
    float inc = block_inclusive(s, sh);
    if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = inc;
}

// One block: sums[] -> exclusive prefix sums of the tile totals.
extern "C" __global__ void scan_sums(float* sums, unsigned long long n) {
    __shared__ float sh[kWarp];
    __shared__ float shifted[1024];
    __shared__ float total;
    const unsigned long long tiles = (n + kTile - 1) / kTile;
    float carry = 0.0f;
    for (unsigned long long start = 0; start < tiles; start += blockDim.x) {
        const unsigned long long i = start + threadIdx.x;
        float v = i < tiles ? sums[i] : 0.0f;
        float ex = block_exclusive(v, sh, shifted);
        float inc = ex + v;
        if (i < tiles) sums[i] = carry + ex;
        if (threadIdx.x == blockDim.x - 1) total = inc;
        __syncthreads();
        carry += total;
        __syncthreads();
    }
}

extern "C" __global__ void scan_tiles(const float* in, float* out, const float* sums, unsigned long long n) {
    __shared__ float sh[kWarp];
    __shared__ float shifted[kThreads];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    float v[kItems];
    float s = 0.0f;
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : 0.0f;
        s += v[k];
    }
    float running = sums[blockIdx.x] + block_exclusive(s, sh, shifted);
    for (int k = 0; k < kItems; ++k) {
        running += v[k];
        if (base + k < n) out[base + k] = running;
    }
}
