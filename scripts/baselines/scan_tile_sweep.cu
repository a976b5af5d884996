// scan_tile_sweep.cu: chooses the look-back scan's tile shape. Instantiates
// primlab's LookbackScan (kernels/cuda/scan.cu, the exact schedule the
// library ships) at several (threads, items) shapes and times each beside
// CUB's DeviceScan::ExclusiveSum (int32 in, int64 out) in the same process,
// checking every output against a host scan. Not part of the receipts: it
// informs the policy in kernels/cuda/common/config.cuh.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda -o target/scan_tile_sweep scripts/baselines/scan_tile_sweep.cu
//   target/scan_tile_sweep            # prints one line per (shape, n)
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "explore_timing.cuh"
#include "scan.cu"
#include "common/async_copy.cuh"

template <int TH, int IT, int MINB, int EX>
__global__ void __launch_bounds__(TH, MINB) shape_scan(const i32* in, i64* out, u64 count, u64* scratch) {
    LookbackScan<false, TH, IT, EX, SumI64, i32>::run(in, out, count, scratch);
}

// The persistent schedule (LookbackScan::run_persistent) at the same shapes.
template <int TH, int IT, int MINB, int EX>
__global__ void __launch_bounds__(TH, MINB) persistent_scan(const i32* in, i64* out, u64 count, u64* scratch) {
    LookbackScan<false, TH, IT, EX, SumI64, i32>::run_persistent(in, out, count, scratch);
}

// The persistent schedule with the next tile's loads issued as cp.async
// copies into shared memory (common/async_copy.cuh) instead of registers:
// each thread copies its own striped vectors of its warp's share and later
// reads back exactly those, so only its own wait orders them (no barrier).
template <int TH, int IT, int MINB>
__global__ void __launch_bounds__(TH, MINB) async_scan(const i32* in, i64* out, u64 count, u64* scratch) {
    typedef LookbackScan<false, TH, IT, 32, SumI64, i32> LS;
    typedef typename LS::Load Load;
    __shared__ typename LS::Storage storage;
    __shared__ typename Load::Storage staged[LS::kGroups];
    const TileStatus<i64> status = tile_status_in<i64>(scratch);
    const u64 full_tiles = count / LS::kTileItems;
    const int group = int(threadIdx.x) / 32;
    const int t = int(threadIdx.x) % 32;
    typename Load::Storage& buffer = staged[group];
    auto issue = [&](u32 id) {
        const typename Load::Vector* src = reinterpret_cast<const typename Load::Vector*>(
            in + (u64)id * LS::kTileItems + group * LS::kGroupItems);
#pragma unroll
        for (int k = 0; k < Load::kVectorsPerThread; ++k) {
            const int v = k * 32 + t;
            cp_async_16(&buffer.slots[Load::slot(v)], &src[v]);
        }
        cp_async_commit();
    };
    auto take = [&](typename Load::Fetched& f) {
        cp_async_wait_all();
#pragma unroll
        for (int k = 0; k < Load::kVectorsPerThread; ++k) f.v[k] = buffer.slots[Load::slot(k * 32 + t)];
    };
    int slot = 0;
    u32 id = acquire_tile_id(status.tile_counter, &storage.tile[slot]);
    if (id < full_tiles) issue(id);
    while (id < full_tiles) {
        slot ^= 1;
        const u32 next = acquire_tile_id(status.tile_counter, &storage.tile[slot]);
        typename Load::Fetched f;
        take(f);
        if (next < full_tiles) issue(next);
        LS::template tile<true>(f, out + (u64)id * LS::kTileItems, LS::kTileItems, id, status, storage);
        id = next;
    }
    const u64 base = (u64)id * LS::kTileItems;
    if (id == full_tiles && base < count) {
        typename Load::Fetched f;
        LS::template fetch<false>(in + base, u32(count - base), f);
        LS::template tile<false>(f, out + base, u32(count - base), id, status, storage);
    }
}

// The scan's own traffic without the scan: out[i] = (i64)in[i], 4 bytes read
// and 8 written per item, 16-byte accesses, grid-stride over int4 vectors
// (n % 4 == 0 here). The ceiling of this read/write mix, beside the copy's 1:1.
__global__ void __launch_bounds__(256) widen_copy(const int4* __restrict__ in, longlong2* __restrict__ out, u64 vectors) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 v = (u64)blockIdx.x * blockDim.x + threadIdx.x; v < vectors; v += stride) {
        const int4 q = in[v];
        out[2 * v] = make_longlong2(q.x, q.y);
        out[2 * v + 1] = make_longlong2(q.z, q.w);
    }
}

static const int kReps = 30;

struct Buffers {
    i32* in;
    i64* out;
    u64* scratch;
    size_t scratch_bytes;
};

template <class Launch>
static float time_it(Launch launch) {
    return median_launch_us(launch, 3, kReps);
}

static bool check(const i64* d_out, const std::vector<i32>& host, size_t n) {
    std::vector<i64> got(n);
    CHECK(cudaMemcpy(got.data(), d_out, n * 8, cudaMemcpyDeviceToHost));
    i64 run = 0;
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != run) {
            std::printf("  MISMATCH at %zu: expected %lld got %lld\n", i, run, got[i]);
            return false;
        }
        run += host[i];
    }
    return true;
}

template <int TH, int IT, int MINB = 1, int EX = 32>
static void shape(const Buffers& b, const std::vector<i32>& host, size_t n) {
    const size_t tile = size_t(TH) * IT;
    const size_t tiles = (n + tile - 1) / tile;
    const size_t bytes = (2 + tiles * 2) * 8;
    CHECK(cudaMemset(b.out, 0xff, n * 8));
    auto launch = [&] {
        CHECK(cudaMemsetAsync(b.scratch, 0, bytes));
        shape_scan<TH, IT, MINB, EX><<<unsigned(tiles), TH>>>(b.in, b.out, n, b.scratch);
    };
    const float us = time_it(launch);
    const bool ok = check(b.out, host, n);
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shape_scan<TH, IT, MINB, EX>, TH, 0));
    std::printf("primlab %4dx%-2d %s min%d (%d/SM) n=2^%-2d %9.1f us %7.1f GB/s %s\n", TH, IT, EX == 32 ? "warp " : "block", MINB, per_sm, __builtin_ctzll(n), us,
                12.0 * n / us / 1e3, ok ? "ok" : "WRONG");
}

typedef void (*ScanKernel)(const i32*, i64*, u64, u64*);
static void persistent_kernel(ScanKernel kernel, const char* name, int TH, int IT, int MINB, const Buffers& b,
                              const std::vector<i32>& host, size_t n);

template <int TH, int IT, int MINB = 1, int EX = 32>
static void persistent(const Buffers& b, const std::vector<i32>& host, size_t n) {
    persistent_kernel(persistent_scan<TH, IT, MINB, EX>, "persist", TH, IT, MINB, b, host, n);
}
template <int TH, int IT, int MINB>
static void async(const Buffers& b, const std::vector<i32>& host, size_t n) {
    persistent_kernel(async_scan<TH, IT, MINB>, "async  ", TH, IT, MINB, b, host, n);
}

static void persistent_kernel(ScanKernel kernel, const char* name, int TH, int IT, int MINB, const Buffers& b,
                              const std::vector<i32>& host, size_t n) {
    const size_t tile = size_t(TH) * IT;
    const size_t tiles = (n + tile - 1) / tile;
    const size_t bytes = (2 + tiles * 2) * 8;
    int per_sm = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, TH, 0));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const unsigned grid = unsigned(std::min(tiles, size_t(per_sm) * sms));
    CHECK(cudaMemset(b.out, 0xff, n * 8));
    auto launch = [&] {
        CHECK(cudaMemsetAsync(b.scratch, 0, bytes));
        kernel<<<grid, TH>>>(b.in, b.out, n, b.scratch);
    };
    const float us = time_it(launch);
    const bool ok = check(b.out, host, n);
    std::printf("%s %4dx%-2d warp  min%d (%d/SM) n=2^%-2d %9.1f us %7.1f GB/s %s\n", name, TH, IT, MINB, per_sm, __builtin_ctzll(n), us, 12.0 * n / us / 1e3, ok ? "ok" : "WRONG");
}

int main() {
    const size_t max_n = size_t(1) << 28;
    Buffers b;
    CHECK(cudaMalloc(&b.in, max_n * 4));
    CHECK(cudaMalloc(&b.out, max_n * 8));
    b.scratch_bytes = (2 + (max_n / 256 + 1) * 2) * 8;
    CHECK(cudaMalloc(&b.scratch, b.scratch_bytes));
    std::vector<i32> host(max_n);
    unsigned long long s = 0x5eed0001ull;
    for (size_t i = 0; i < max_n; ++i) {
        lcg_next(s);
        host[i] = int((s >> 33) % 19) - 9;
    }
    CHECK(cudaMemcpy(b.in, host.data(), max_n * 4, cudaMemcpyHostToDevice));
    void* cub_temp = nullptr;
    size_t cub_bytes = 0;
    CHECK(cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, b.in, b.out, int(max_n)));
    CHECK(cudaMalloc(&cub_temp, cub_bytes));
    for (int lg : {16, 20, 22, 24, 26, 28}) {
        const size_t n = size_t(1) << lg;
        {
            CHECK(cudaMemset(b.out, 0xff, n * 8));
            auto launch = [&] {
                size_t bytes = cub_bytes;
                CHECK(cub::DeviceScan::ExclusiveSum(cub_temp, bytes, b.in, b.out, int(n)));
            };
            const float us = time_it(launch);
            const bool ok = check(b.out, host, n);
            std::printf("cub             n=2^%-2d %9.1f us %7.1f GB/s %s\n", lg, us, 12.0 * n / us / 1e3,
                        ok ? "ok" : "WRONG");
        }
        {
            // The input into the output: 8n bytes of traffic.
            auto launch = [&] { CHECK(cudaMemcpyAsync(b.out, b.in, n * 4, cudaMemcpyDeviceToDevice)); };
            const float us = time_it(launch);
            std::printf("copy 4n bytes   n=2^%-2d %9.1f us %7.1f GB/s\n", lg, us, 8.0 * n / us / 1e3);
        }
        {
            int sms = 0;
            CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
            const u64 vectors = n / 4;
            const unsigned grid = unsigned(std::min<u64>((vectors + 255) / 256, u64(sms) * 8));
            auto launch = [&] {
                widen_copy<<<grid, 256>>>(reinterpret_cast<const int4*>(b.in), reinterpret_cast<longlong2*>(b.out), vectors);
            };
            const float us = time_it(launch);
            std::printf("widen 4n->8n    n=2^%-2d %9.1f us %7.1f GB/s\n", lg, us, 12.0 * n / us / 1e3);
        }
        // The shipped shape, one tile per block, then the persistent
        // schedule (next tile's loads in flight) at shapes whose register
        // budget leaves room for the prefetched vectors.
        shape<224, 20, 5, 32>(b, host, n);
        persistent<224, 20, 3, 32>(b, host, n);
        persistent<384, 12, 3, 32>(b, host, n);
        async<224, 16, 5>(b, host, n);
        async<224, 16, 4>(b, host, n);
        async<256, 12, 4>(b, host, n);
        shape<224, 16, 5, 32>(b, host, n);
        async<256, 12, 5>(b, host, n);
        async<192, 16, 6>(b, host, n);
        async<128, 20, 7>(b, host, n);
        async<384, 8, 4>(b, host, n);
        shape<224, 20, 5, 32>(b, host, n);
    }
    return 0;
}
