// The multi-GPU path's own small kernels (glue of the sharded reduce and
// scan, not primitives): a shard's total, the offset pass of the sharded
// scan, and a device-side benchmark input fill. Compiled by NVRTC from
// harness/src/multigpu/helper_kernels.rs, which launches them.
#include "common/config.cuh"

// A shard's total from its exclusive scan: the last prefix plus the last
// input. One thread; len >= 1 (an empty shard's total is a memset to 0).
extern "C" __global__ void mg_shard_total(const i64* exclusive, const int* input, u64 len, i64* total) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        total[0] = exclusive[len - 1] + (i64)input[len - 1];
    }
}

// out[i] += gathered[0] + ... + gathered[rank - 1] for i in [0, len).
// Thread 0 of each block sums the all-gathered shard totals left to right
// (at most one per GPU); the barrier publishes it to the block and is
// reached by every thread (outside any branch).
extern "C" __global__ void mg_add_offset(i64* out, u64 len, const i64* gathered, unsigned rank) {
    __shared__ i64 s_offset;
    if (threadIdx.x == 0) {
        i64 offset = 0;
        for (unsigned r = 0; r < rank; ++r) {
            offset += gathered[r];
        }
        s_offset = offset;
    }
    __syncthreads();
    const i64 offset = s_offset;
    longlong2* pairs = reinterpret_cast<longlong2*>(out);
    const u64 count = len / 2;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    // Four independent 16-byte loads in flight per thread, then the rest.
    for (; p + 3 * stride < count; p += 4 * stride) {
        longlong2 a = pairs[p];
        longlong2 b = pairs[p + stride];
        longlong2 c = pairs[p + 2 * stride];
        longlong2 d = pairs[p + 3 * stride];
        a.x += offset; a.y += offset;
        b.x += offset; b.y += offset;
        c.x += offset; c.y += offset;
        d.x += offset; d.y += offset;
        pairs[p] = a;
        pairs[p + stride] = b;
        pairs[p + 2 * stride] = c;
        pairs[p + 3 * stride] = d;
    }
    for (; p < count; p += stride) {
        longlong2 a = pairs[p];
        a.x += offset; a.y += offset;
        pairs[p] = a;
    }
    if ((len & 1) && blockIdx.x == 0 && threadIdx.x == 0) {
        out[len - 1] += offset;
    }
}

__device__ __forceinline__ u64 mg_mix64(u64 z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// Benchmark input: data[i] = mix64(seed ^ (first + i)) % 19 - 9.
extern "C" __global__ void mg_fill_small_ints(int* data, u64 len, u64 first, u64 seed) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
        data[i] = (int)(mg_mix64(seed ^ (first + i)) % 19ULL) - 9;
    }
}
