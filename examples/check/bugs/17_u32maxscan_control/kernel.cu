// CONTROL: a correct three-pass inclusive max scan over uint32 (typed
// contract inclusive.max.u32.u32), tiles of 1024 items (256 threads x 4
// consecutive items), 64-bit indices, tail items read as 0 (the identity of
// an unsigned max): per-tile maxima, one block scanning them, then each tile
// scanned from its carry.
constexpr unsigned kThreads = 256, kWarp = 32;
constexpr int kItems = 4;
constexpr unsigned long long kTile = kThreads * kItems;

// The operator: the larger of two uint32, compared as unsigned.
__device__ unsigned combine(unsigned a, unsigned b) { return a > b ? a : b; }

// Block-wide inclusive max scan of one value per thread (blockDim.x a
// multiple of 32); every thread calls it; `totals` holds 32 entries.
__device__ unsigned block_inclusive(unsigned v, unsigned* totals) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 1; off < kWarp; off <<= 1) {
        unsigned up = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v = combine(v, up);
    }
    if (lane == kWarp - 1) totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        unsigned t = lane < blockDim.x / kWarp ? totals[lane] : 0u;
        for (unsigned off = 1; off < kWarp; off <<= 1) {
            unsigned up = __shfl_up_sync(0xffffffffu, t, off);
            if (lane >= off) t = combine(t, up);
        }
        totals[lane] = t;
    }
    __syncthreads();
    unsigned r = warp > 0 ? combine(v, totals[warp - 1]) : v;
    __syncthreads();  // totals may be reused by the caller
    return r;
}

// Block-wide exclusive max scan: the inclusive scan of the thread before (the
// identity 0 for thread 0), passed through shared memory.
__device__ unsigned block_exclusive(unsigned v, unsigned* totals, unsigned* shifted) {
    const unsigned inc = block_inclusive(v, totals);
    shifted[threadIdx.x] = inc;
    __syncthreads();
    const unsigned r = threadIdx.x > 0 ? shifted[threadIdx.x - 1] : 0u;
    __syncthreads();  // shifted may be reused by the caller
    return r;
}

extern "C" __global__ void tile_maxes(const unsigned* in, unsigned* maxes, unsigned long long n) {
    __shared__ unsigned sh[kWarp];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    unsigned s = 0u;
    for (int k = 0; k < kItems; ++k)
        if (base + k < n) s = combine(s, in[base + k]);
    unsigned inc = block_inclusive(s, sh);
    if (threadIdx.x == blockDim.x - 1) maxes[blockIdx.x] = inc;
}

// One block: maxes[] -> exclusive prefix maxima of the tile maxima.
extern "C" __global__ void scan_maxes(unsigned* maxes, unsigned long long n) {
    __shared__ unsigned sh[kWarp];
    __shared__ unsigned shifted[1024];
    __shared__ unsigned total;
    const unsigned long long tiles = (n + kTile - 1) / kTile;
    unsigned carry = 0u;
    for (unsigned long long start = 0; start < tiles; start += blockDim.x) {
        const unsigned long long i = start + threadIdx.x;
        unsigned v = i < tiles ? maxes[i] : 0u;
        unsigned ex = block_exclusive(v, sh, shifted);
        unsigned inc = combine(ex, v);
        if (i < tiles) maxes[i] = combine(carry, ex);
        if (threadIdx.x == blockDim.x - 1) total = inc;
        __syncthreads();
        carry = combine(carry, total);
        __syncthreads();
    }
}

extern "C" __global__ void scan_tiles(const unsigned* in, unsigned* out, const unsigned* maxes, unsigned long long n) {
    __shared__ unsigned sh[kWarp];
    __shared__ unsigned shifted[kThreads];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    unsigned v[kItems];
    unsigned s = 0u;
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : 0u;
        s = combine(s, v[k]);
    }
    unsigned running = combine(maxes[blockIdx.x], block_exclusive(s, sh, shifted));
    for (int k = 0; k < kItems; ++k) {
        running = combine(running, v[k]);
        if (base + k < n) out[base + k] = running;
    }
}
