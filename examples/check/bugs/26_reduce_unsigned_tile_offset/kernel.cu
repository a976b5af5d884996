// BUG (unsigned 32-bit tile offset): an int32 -> int64 sum, one block per
// tile of 1024 items, whose tile offset `blockIdx.x * 1024u` is computed in
// unsigned 32-bit arithmetic before it is widened. From tile 2^22 on (items
// past 2^32) the offset wraps to the start of the input: those blocks add
// items 0, 1, ... again instead of their own. Every size up to 2^32 is
// right, so only a size past 2^32 shows it (`check --deep`).
constexpr unsigned kWarp = 32;
constexpr unsigned kTile = 1024;

// Block sum: full-warp shuffles, one partial per warp in shared memory.
__device__ long long block_sum(long long v) {
    __shared__ long long warp_sums[32];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    long long total = 0;
    if (warp == 0) {
        total = lane < blockDim.x / kWarp ? warp_sums[lane] : 0;
        for (unsigned off = 16; off > 0; off >>= 1) total += __shfl_down_sync(0xffffffffu, total, off);
    }
    return total;  // valid in thread 0
}

extern "C" __global__ void zero_out(long long* out) { out[0] = 0; }

extern "C" __global__ void reduce_tiles(const int* in, long long* out, unsigned long long n) {
    const unsigned base = blockIdx.x * kTile;  // BUG: wraps past 2^32; widen before multiplying
    long long s = 0;
    for (unsigned j = threadIdx.x; j < kTile; j += blockDim.x) {
        const unsigned long long i = (unsigned long long)base + j;
        if (i < n) s += in[i];
    }
    long long total = block_sum(s);
    if (threadIdx.x == 0) atomicAdd((unsigned long long*)out, (unsigned long long)total);
}
