// Bandwidth ceilings for `harness bench`: a read-only kernel that streams an
// int32 array with 16-byte loads and does the least work that keeps the
// loads alive (one sum, one atomic per block). A device-to-device copy is the
// other ceiling (cuMemcpyDtoDAsync, no kernel here).
#include "common/config.cuh"
#include "common/block_reduce.cuh"
#include "common/operators.cuh"

using namespace primlab;

// Grid-stride over int4 vectors, then the n % 4 tail. `sink` receives the
// total so the compiler cannot drop the loads (and the bench can check it).
extern "C" __global__ void __launch_bounds__(kBlockThreads)
read_ceiling_i32(const int4* __restrict__ vectors, u64 vector_count, const i32* __restrict__ tail,
                 u32 tail_count, i64* sink) {
    __shared__ BlockReduceStorage<i64> storage;
    i64 sum = 0;
    const u64 stride = (u64)gridDim.x * kBlockThreads;
    for (u64 i = (u64)blockIdx.x * kBlockThreads + threadIdx.x; i < vector_count; i += stride) {
        const int4 v = vectors[i];
        sum += (i64)v.x + v.y + v.z + v.w;
    }
    if (blockIdx.x == 0 && threadIdx.x < tail_count) sum += tail[threadIdx.x];
    const i64 total = block_reduce(sum, SumI64(), storage);
    if (threadIdx.x == 0) atomicAdd(reinterpret_cast<u64*>(sink), (u64)total);
}
