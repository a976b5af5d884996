// BUG (vector over-read): a three-pass compaction by flags (int32 items,
// uint8 flags, int64 count), tiles of 1024 items, 4 consecutive items per
// thread. Each thread loads its 4 flags as one uchar4 (one 32-bit load):
// in a last tile whose n is not a multiple of 4, that load reads up to 3
// bytes past the end of `flags`. The extra flags are ignored (each item is
// bounds-checked), so every output is right; the reads are out of bounds.

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

// The 4 flags of items base..base+3 in one load (base is a multiple of 4).
__device__ uchar4 load_flags(const unsigned char* flags, unsigned long long base, unsigned long long n) {
    if (base >= n) return make_uchar4(0, 0, 0, 0);
    return *reinterpret_cast<const uchar4*>(flags + base);  // BUG: up to 3 bytes past n in the last group
}

extern "C" __global__ void tile_counts(const unsigned char* flags, long long* counts, unsigned long long n) {
    __shared__ long long sh[kWarp];
    const unsigned long long base = blockIdx.x * kTile + threadIdx.x * kItems;
    const uchar4 f4 = load_flags(flags, base, n);
    const unsigned char f[kItems] = {f4.x, f4.y, f4.z, f4.w};
    long long kept = 0;
    for (int k = 0; k < kItems; ++k) {
        if (base + k < n && f[k] != 0) ++kept;
    }
    long long inclusive = block_inclusive(kept, sh);
    if (threadIdx.x == blockDim.x - 1) counts[blockIdx.x] = inclusive;
}

extern "C" __global__ void scan_counts(long long* counts, long long* count, unsigned long long n) {
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
    if (threadIdx.x == 0) count[0] = carry;
}

extern "C" __global__ void scatter(const int* in, const unsigned char* flags, int* out, const long long* counts,
                                   unsigned long long n) {
    __shared__ long long sh[kWarp];
    const unsigned long long base = blockIdx.x * kTile + threadIdx.x * kItems;
    const uchar4 f4 = load_flags(flags, base, n);
    const unsigned char f[kItems] = {f4.x, f4.y, f4.z, f4.w};
    bool keep[kItems];
    long long kept = 0;
    for (int k = 0; k < kItems; ++k) {
        keep[k] = base + k < n && f[k] != 0;
        kept += keep[k];
    }
    long long inclusive = block_inclusive(kept, sh);
    long long at = counts[blockIdx.x] + inclusive - kept;
    for (int k = 0; k < kItems; ++k) {
        if (keep[k]) out[at++] = in[base + k];
    }
}
