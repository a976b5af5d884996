// BUG (full-mask shuffle in one thread): the two-pass float32 sum of 82,
// whose second pass is written "the grid's first thread writes the warp's
// sum": out[0] = warp_sum(v) inside `if (gid == 0)`, gid being
// blockIdx.x * blockDim.x + threadIdx.x. The warp sum's full-mask shuffles
// are then reached by lane 0 alone and name 31 lanes that never arrive (the
// value is undefined, and the warp may hang). Pass 1 is 82's, right: its
// early return reads only blockIdx.x and n, the same in a whole block.
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
    if (gid == 0) out[0] = warp_sum(v);  // BUG: the shuffles are reached by lane 0 only
}
