// CONTROL: a correct two-pass float32 sum. Pass 1: tiles of 1024 items, one
// per block of 256 threads (4 items each, 64-bit indices, absent items read
// as 0); the grid is rounded up to a multiple of 8 blocks, and a block whose
// tile starts past the data returns before its block reduction. That
// condition reads only blockIdx.x and n, so it is the same in every thread
// of a block: the barrier after it is reached by all of them or by none.
// Pass 2: one warp adds the tile sums and lane 0 of the grid writes out[0].
constexpr unsigned kWarp = 32, kThreads = 256, kItems = 4;
constexpr unsigned long long kTile = kThreads * kItems;

__device__ float warp_sum(float v) {
    for (unsigned off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;  // in every lane
}

extern "C" __global__ void tile_sums(const float* in, float* partials, unsigned long long n) {
    __shared__ float warp_sums[kThreads / kWarp];
    const unsigned long long start = blockIdx.x * kTile;
    if (start >= n) return;  // a block past the data: the whole block leaves
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    float v = 0.0f;
    for (unsigned k = 0; k < kItems; ++k) {
        const unsigned long long i = start + k * kThreads + threadIdx.x;
        v += i < n ? in[i] : 0.0f;
    }
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum(lane < kThreads / kWarp ? warp_sums[lane] : 0.0f);
        if (lane == 0) partials[blockIdx.x] = v;
    }
}

// One block of one warp; `tiles` recomputed from n.
extern "C" __global__ void final_sum(const float* partials, float* out, unsigned long long n) {
    const unsigned long long tiles = (n + kTile - 1) / kTile;
    const unsigned long long gid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for (unsigned long long t = threadIdx.x; t < tiles; t += kWarp) v += partials[t];
    v = warp_sum(v);  // every lane takes part
    if (gid == 0) out[0] = v;
}
