// Exclusive prefix sum, int32 in, int64 out, in three passes over tiles of
// 1024 items (256 threads x 4 consecutive items):
//   1. tile_sums:  each block writes the int64 sum of its tile to sums[tile];
//   2. scan_sums:  one block replaces sums[] by its exclusive prefix sums;
//   3. scan_tiles: each block scans its tile and adds sums[tile].
// It includes our common/config.cuh for kBlockThreads (256). Compiled with
// -DPLANTED_BUG (the manifest in ../scan_cuda_bug), tile 256 forgets its offset.
#include "common/config.cuh"

constexpr int kItems = 4;
constexpr unsigned long long kTile = primlab::kBlockThreads * kItems;

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

extern "C" __global__ void tile_sums(const int* in, long long* sums, unsigned long long n) {
    __shared__ long long sh[primlab::kBlockThreads];
    const unsigned long long base = blockIdx.x * kTile + threadIdx.x * kItems;
    long long s = 0;
    for (int k = 0; k < kItems; ++k) {
        if (base + k < n) s += in[base + k];
    }
    long long inclusive = block_inclusive(s, sh);
    if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = inclusive;
}

extern "C" __global__ void scan_sums(long long* sums, unsigned long long n) {
    __shared__ long long sh[1024];
    const unsigned long long tiles = (n + kTile - 1) / kTile;
    long long carry = 0;
    for (unsigned long long start = 0; start < tiles; start += blockDim.x) {
        const unsigned long long i = start + threadIdx.x;
        long long v = i < tiles ? sums[i] : 0;
        long long inclusive = block_inclusive(v, sh);
        long long total = sh[blockDim.x - 1];
        if (i < tiles) sums[i] = carry + inclusive - v;
        carry += total;
        __syncthreads();
    }
}

extern "C" __global__ void scan_tiles(const int* in, long long* out, const long long* sums, unsigned long long n) {
    __shared__ long long sh[primlab::kBlockThreads];
    const unsigned long long base = blockIdx.x * kTile + threadIdx.x * kItems;
    int v[kItems];
    long long s = 0;
    for (int k = 0; k < kItems; ++k) {
        v[k] = base + k < n ? in[base + k] : 0;
        s += v[k];
    }
    long long inclusive = block_inclusive(s, sh);
#ifdef PLANTED_BUG
    // PLANTED BUG: tile 256 (items 262144 .. 263167) forgets its offset, so
    // every size above 2^18 = 262144 is wrong from index 262144 on.
    long long offset = blockIdx.x == 256 ? 0 : sums[blockIdx.x];
#else
    long long offset = sums[blockIdx.x];
#endif
    long long running = offset + inclusive - s;
    for (int k = 0; k < kItems; ++k) {
        if (base + k < n) out[base + k] = running;
        running += v[k];
    }
}
