// BUG (publication order): a single-pass "chained" inclusive scan. Tile t is
// blockIdx.x; thread 0 of tile t spins until tile t-1 raised its flag, reads
// its inclusive prefix, publishes its own prefix and raises its flag. The
// prefix store and the flag store are two plain stores with no
// __threadfence() (or release/acquire) between them, so another SM may see
// the flag before the prefix and add a stale (poisoned) prefix. It also
// trusts blockIdx.x order (tile t-1 is assumed to be scheduled before t).
constexpr unsigned kWarp = 32;

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

// prefix: one int64 per tile (poisoned); flags: one int per tile (zeroed by the harness).
extern "C" __global__ void chained_scan(const int* in, long long* out, long long* prefix, int* flags,
                                        unsigned long long n) {
    __shared__ long long totals[32];
    __shared__ long long before;
    const unsigned long long tile = blockIdx.x;
    const unsigned long long i = tile * blockDim.x + threadIdx.x;
    const long long x = i < n ? in[i] : 0;
    const long long inc = block_inclusive(x, totals);
    if (threadIdx.x == blockDim.x - 1) {
        long long b = 0;
        if (tile > 0) {
            while (((volatile int*)flags)[tile - 1] == 0) {
            }
            b = ((volatile long long*)prefix)[tile - 1];
        }
        ((volatile long long*)prefix)[tile] = b + inc;  // payload
        // BUG: no __threadfence() here: the flag may become visible first.
        ((volatile int*)flags)[tile] = 1;
        before = b;
    }
    __syncthreads();
    if (i < n) out[i] = before + inc;
}
