// Stream compaction by x > 0 (int32 in and out, int64 count) in three
// passes over tiles of 1024 items (256 threads x 4 consecutive items):
//   1. tile_counts: each block writes how many items of its tile are kept;
//   2. scan_counts: one block replaces the counts by their exclusive prefix
//                   sums (each tile's first output position) and writes the
//                   total to count[0];
//   3. scatter:     each block writes its kept items, in input order, from
//                   its tile's position on.
// Nothing is written to out past the count.

constexpr unsigned kThreads = 256;
constexpr int kItems = 4;
constexpr unsigned long long kTile = kThreads * kItems;

// Inclusive scan of one value per thread across the block (Hillis-Steele,
// blockDim.x entries of `sh`); on return sh[blockDim.x - 1] is the total.
__device__ long long block_inclusive(long long v, long long* sh) {
    const unsigned t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (unsigned off = 1; off < blockDim.x; off <<= 1) {
        long long add = t >= off ? sh[t - off] : 0;
        __syncthreads();
        sh[t] += add;
        __syncthreads();
    }
    return sh[t];
}

extern "C" __global__ void tile_counts(const int* in, long long* counts, unsigned long long n) {
    __shared__ long long sh[kThreads];
    const unsigned long long base = blockIdx.x * kTile + threadIdx.x * kItems;
    long long kept = 0;
    for (int k = 0; k < kItems; ++k) {
        if (base + k < n && in[base + k] > 0) ++kept;
    }
    long long inclusive = block_inclusive(kept, sh);
    if (threadIdx.x == blockDim.x - 1) counts[blockIdx.x] = inclusive;
}

extern "C" __global__ void scan_counts(long long* counts, long long* count, unsigned long long n) {
    __shared__ long long sh[1024];
    const unsigned long long tiles = (n + kTile - 1) / kTile;
    long long carry = 0;
    for (unsigned long long start = 0; start < tiles; start += blockDim.x) {
        const unsigned long long i = start + threadIdx.x;
        long long v = i < tiles ? counts[i] : 0;
        long long inclusive = block_inclusive(v, sh);
        long long total = sh[blockDim.x - 1];
        if (i < tiles) counts[i] = carry + inclusive - v;
        carry += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) count[0] = carry;
}

extern "C" __global__ void scatter(const int* in, int* out, const long long* counts, unsigned long long n) {
    __shared__ long long sh[kThreads];
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
