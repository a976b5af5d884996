// BUG (fixed capacity): a three-pass inclusive scan, int32 -> int64, tiles
// of 1024 items, whose tile sums live in a __device__ array sized for the
// largest input the author planned for, 2^28 items (2^18 tiles), "so the
// caller needs no scratch". Every access is clamped to the array ("safe"),
// so larger inputs do not crash: tiles past 2^18 get no offset and their
// outputs are silently wrong. Every size up to 2^28 is right.
constexpr unsigned kThreads = 256, kWarp = 32;
constexpr int kItems = 4;
constexpr unsigned long long kTile = kThreads * kItems;
constexpr unsigned long long kMaxTiles = 1ull << 18;  // BUG: inputs of at most 2^28 items
__device__ long long g_sums[kMaxTiles];

// Block-wide inclusive scan of one value per thread (blockDim.x a multiple of
// 32); every thread calls it; `totals` holds 32 entries.
__device__ long long block_inclusive(long long v, long long* totals) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 1; off < kWarp; off <<= 1) {
        long long up = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += up;
    }
    if (lane == kWarp - 1) totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        long long t = lane < blockDim.x / kWarp ? totals[lane] : 0;
        for (unsigned off = 1; off < kWarp; off <<= 1) {
            long long up = __shfl_up_sync(0xffffffffu, t, off);
            if (lane >= off) t += up;
        }
        totals[lane] = t;
    }
    __syncthreads();
    long long r = v + (warp > 0 ? totals[warp - 1] : 0);
    __syncthreads();  // totals may be reused by the caller
    return r;
}

extern "C" __global__ void tile_sums(const int* in, unsigned long long n) {
    __shared__ long long sh[kWarp];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    long long s = 0;
    for (int k = 0; k < kItems; ++k)
        if (base + k < n) s += in[base + k];
    long long inc = block_inclusive(s, sh);
    if (threadIdx.x == blockDim.x - 1 && blockIdx.x < kMaxTiles) g_sums[blockIdx.x] = inc;
}

// One block: sums[] -> exclusive prefix sums of the tile totals.
extern "C" __global__ void scan_sums(unsigned long long n) {
    long long* sums = g_sums;
    __shared__ long long sh[kWarp];
    __shared__ long long total;
    const unsigned long long tiles = min((n + kTile - 1) / kTile, kMaxTiles);  // "clamped for safety"
    long long carry = 0;
    for (unsigned long long start = 0; start < tiles; start += blockDim.x) {
        const unsigned long long i = start + threadIdx.x;
        long long v = i < tiles ? sums[i] : 0;
        long long inc = block_inclusive(v, sh);
        if (i < tiles) sums[i] = carry + inc - v;
        if (threadIdx.x == blockDim.x - 1) total = inc;
        __syncthreads();
        carry += total;
        __syncthreads();
    }
}

extern "C" __global__ void scan_tiles(const int* in, long long* out, unsigned long long n) {
    __shared__ long long sh[kWarp];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    int v[kItems];
    long long s = 0;
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : 0;
        s += v[k];
    }
    const long long offset = blockIdx.x < kMaxTiles ? g_sums[blockIdx.x] : 0;  // "clamped for safety"
    long long running = offset + block_inclusive(s, sh) - s;
    for (int k = 0; k < kItems; ++k) {
        running += v[k];
        if (base + k < n) out[base + k] = running;
    }
}
