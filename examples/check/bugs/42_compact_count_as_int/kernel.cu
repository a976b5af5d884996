// BUG (output type): a correct, stable three-pass compaction by x > 0
// (tiles of 1024 items, 256 threads x 4 consecutive items) whose count
// kernel declares the count as `int*` and stores a 32-bit int into the
// contract's int64 count: only the low 4 bytes are written. On a zeroed
// buffer (little-endian) that reads back right, which is why it survived the
// author's tests; on a poisoned one the high 4 bytes are garbage.

constexpr unsigned kThreads = 256;
constexpr int kItems = 4;
constexpr unsigned long long kTile = kThreads * kItems;

constexpr unsigned kWarp = 32;

// Inclusive scan of one value per thread across the block (blockDim.x a
// multiple of 32, at most 1024): each warp scans its values with shuffles,
// the warp totals go through `totals` (32 entries), warp 0 scans them, and
// each thread adds the totals of the warps before its own. On return
// totals[blockDim.x / 32 - 1] is the block's total; the caller synchronises
// before `totals` is used again.
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
    return v + (warp > 0 ? totals[warp - 1] : 0);
}

extern "C" __global__ void tile_counts(const int* in, long long* counts, unsigned long long n) {
    __shared__ long long sh[kWarp];
    const unsigned long long base = blockIdx.x * kTile + threadIdx.x * kItems;
    long long kept = 0;
    for (int k = 0; k < kItems; ++k) {
        if (base + k < n && in[base + k] > 0) ++kept;
    }
    long long inclusive = block_inclusive(kept, sh);
    if (threadIdx.x == blockDim.x - 1) counts[blockIdx.x] = inclusive;
}

// count: "an int is plenty for a count" (the contract's count is int64).
extern "C" __global__ void scan_counts(long long* counts, int* count, unsigned long long n) {
    __shared__ long long sh[kWarp];
    const unsigned long long tiles = (n + kTile - 1) / kTile;
    long long carry = 0;
    for (unsigned long long start = 0; start < tiles; start += blockDim.x) {
        const unsigned long long i = start + threadIdx.x;
        long long v = i < tiles ? counts[i] : 0;
        long long inclusive = block_inclusive(v, sh);
        long long total = sh[blockDim.x / kWarp - 1];
        if (i < tiles) counts[i] = carry + inclusive - v;
        carry += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) count[0] = (int)carry;  // BUG: writes 4 of the count's 8 bytes
}

extern "C" __global__ void scatter(const int* in, int* out, const long long* counts, unsigned long long n) {
    __shared__ long long sh[kWarp];
    const unsigned long long base = blockIdx.x * kTile + threadIdx.x * kItems;
    int v[kItems];
    long long kept = 0;
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : 0;
        kept += v[k] > 0;
    }
    long long inclusive = block_inclusive(kept, sh);
    long long at = counts[blockIdx.x] + inclusive - kept;
    for (int k = 0; k < kItems; ++k) {
        if (v[k] > 0) out[at++] = v[k];
    }
}
