// CONTROL: a correct three-pass inclusive scan, int32 -> int64, tiles of
// 1024 items (256 threads x 4 consecutive items), 64-bit indices throughout.
constexpr unsigned kThreads = 256, kWarp = 32;
constexpr int kItems = 4;
constexpr unsigned long long kTile = kThreads * kItems;

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

extern "C" __global__ void tile_sums(const int* in, long long* sums, unsigned long long n) {
    __shared__ long long sh[kWarp];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    long long s = 0;
    for (int k = 0; k < kItems; ++k)
        if (base + k < n) s += in[base + k];
    long long inc = block_inclusive(s, sh);
    if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = inc;
}

// One block: sums[] -> exclusive prefix sums of the tile totals.
extern "C" __global__ void scan_sums(long long* sums, unsigned long long n) {
    __shared__ long long sh[kWarp];
    __shared__ long long total;
    const unsigned long long tiles = (n + kTile - 1) / kTile;
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

extern "C" __global__ void scan_tiles(const int* in, long long* out, const long long* sums, unsigned long long n) {
    __shared__ long long sh[kWarp];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    int v[kItems];
    long long s = 0;
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : 0;
        s += v[k];
    }
    long long running = sums[blockIdx.x] + block_inclusive(s, sh) - s;
    for (int k = 0; k < kItems; ++k) {
        running += v[k];
        if (base + k < n) out[base + k] = running;
    }
}
