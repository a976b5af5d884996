// BUG (shared array sized by a #define): a three-pass inclusive scan whose
// tile passes run 256 threads, or 512 threads for inputs of 2^20 items and
// more (the manifest's block expression: "bigger blocks for big inputs").
// The block scan's temp storage was written for 256 threads: warp_tot has
// BLOCK / 32 = 8 entries, so with 16 warps warps 8..15 write their totals
// over stage[0..7] (the next member), and the tile's first 8 prefixes and
// the warp offsets of warps 8..15 are garbage. Every size < 2^20 is right.
#define BLOCK 256          // threads per block this scan was written for
#define WARPS (BLOCK / 32)
constexpr int kItems = 4;
constexpr unsigned kWarp = 32;

struct TempStorage {
    long long warp_tot[WARPS];  // BUG: too small when blockDim.x > BLOCK
    long long stage[1024];      // each thread's warp-local exclusive prefix
};

// Tile size of the tile passes for n (the manifest's block expression times kItems).
__device__ unsigned long long tile_of(unsigned long long n) { return (n >= (1ull << 20) ? 512ull : 256ull) * kItems; }

__device__ long long block_exclusive(long long v, TempStorage& ts, long long* total) {
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    long long inc = v;
    for (unsigned off = 1; off < kWarp; off <<= 1) {
        long long up = __shfl_up_sync(0xffffffffu, inc, off);
        if (lane >= off) inc += up;
    }
    ts.stage[threadIdx.x] = inc - v;
    if (lane == kWarp - 1) ts.warp_tot[warp] = inc;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long run = 0;
        for (unsigned w = 0; w < blockDim.x / kWarp; ++w) {
            long long t = ts.warp_tot[w];
            ts.warp_tot[w] = run;
            run += t;
        }
        *total = run;
    }
    __syncthreads();
    long long r = ts.stage[threadIdx.x] + ts.warp_tot[warp];
    __syncthreads();
    return r;
}

extern "C" __global__ void tile_sums(const int* in, long long* sums, unsigned long long n) {
    __shared__ TempStorage ts;
    __shared__ long long total;
    const unsigned long long base = blockIdx.x * tile_of(n) + threadIdx.x * kItems;
    long long s = 0;
    for (int k = 0; k < kItems; ++k)
        if (base + k < n) s += in[base + k];
    block_exclusive(s, ts, &total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// One block of 256 threads: sums[] -> exclusive prefix sums.
extern "C" __global__ void scan_sums(long long* sums, unsigned long long n) {
    __shared__ TempStorage ts;
    __shared__ long long total;
    const unsigned long long tiles = (n + tile_of(n) - 1) / tile_of(n);
    long long carry = 0;
    for (unsigned long long start = 0; start < tiles; start += blockDim.x) {
        const unsigned long long i = start + threadIdx.x;
        long long v = i < tiles ? sums[i] : 0;
        long long ex = block_exclusive(v, ts, &total);
        if (i < tiles) sums[i] = carry + ex;
        carry += total;
        __syncthreads();
    }
}

extern "C" __global__ void scan_tiles(const int* in, long long* out, const long long* sums, unsigned long long n) {
    __shared__ TempStorage ts;
    __shared__ long long total;
    const unsigned long long base = blockIdx.x * tile_of(n) + threadIdx.x * kItems;
    int v[kItems];
    long long s = 0;
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : 0;
        s += v[k];
    }
    long long running = sums[blockIdx.x] + block_exclusive(s, ts, &total);
    for (int k = 0; k < kItems; ++k) {
        running += v[k];
        if (base + k < n) out[base + k] = running;
    }
}
