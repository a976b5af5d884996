// BUG (shared-memory race): a three-pass exclusive scan whose block scan is
// the textbook single-buffer Hillis-Steele loop with one barrier per step:
// `sh[t] += sh[t - off]` reads a neighbour's slot that the neighbour may
// already have updated in the same step (the read and the write need a
// barrier between them, or two buffers). Inside one warp the lanes read
// before they write, so it is right for 32 threads; with 8 warps the result
// depends on which warp runs first.
constexpr int kItems = 4;
constexpr unsigned long long kTile = 256 * kItems;

__device__ long long block_inclusive(long long v, long long* sh) {
    const unsigned t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (unsigned off = 1; off < blockDim.x; off <<= 1) {
        if (t >= off) sh[t] += sh[t - off];  // BUG: no barrier between the read and the write
        __syncthreads();
    }
    long long r = sh[t];
    __syncthreads();
    return r;
}

extern "C" __global__ void tile_sums(const int* in, long long* sums, unsigned long long n) {
    __shared__ long long sh[256];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    long long s = 0;
    for (int k = 0; k < kItems; ++k)
        if (base + k < n) s += in[base + k];
    long long inc = block_inclusive(s, sh);
    if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = inc;
}

extern "C" __global__ void scan_sums(long long* sums, unsigned long long n) {
    __shared__ long long sh[1024];
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
    __shared__ long long sh[256];
    const unsigned long long base = (unsigned long long)blockIdx.x * kTile + threadIdx.x * kItems;
    int v[kItems];
    long long s = 0;
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : 0;
        s += v[k];
    }
    long long running = sums[blockIdx.x] + block_inclusive(s, sh) - s;
    for (int k = 0; k < kItems; ++k) {
        if (base + k < n) out[base + k] = running;
        running += v[k];
    }
}
