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

template <int TH, int IT, int MINB, int EX>
__global__ void __launch_bounds__(TH, MINB) shape_scan(const i32* in, i64* out, u64 count, u64* scratch) {
    LookbackScan<false, TH, IT, EX, SumI64, i32>::run(in, out, count, scratch);
}

// The scan's own traffic without the scan: out[i] = (i64)in[i], 4 bytes read
// and 8 written per item, 16-byte accesses, grid-stride over groups of UNROLL
// int4 vectors whose loads are all issued before the first store (n % (4 *
// UNROLL * blockDim) == 0 here). The ceiling of this 1:2 read/write mix,
// beside the copy's 1:1.
template <int UNROLL>
__global__ void __launch_bounds__(256) widen_copy(const int4* __restrict__ in, longlong2* __restrict__ out, u64 vectors) {
    const u64 stride = (u64)gridDim.x * blockDim.x * UNROLL;
    for (u64 v0 = (u64)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; v0 < vectors; v0 += stride) {
        int4 q[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) q[u] = in[v0 + u * blockDim.x];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const u64 v = v0 + u * blockDim.x;
            out[2 * v] = make_longlong2(q[u].x, q[u].y);
            out[2 * v + 1] = make_longlong2(q[u].z, q[u].w);
        }
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

template <int UNROLL>
static void widen(const Buffers& b, size_t n, int blocks_per_sm) {
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const u64 vectors = n / 4;
    const unsigned grid = unsigned(std::min<u64>((vectors + 256 * UNROLL - 1) / (256 * UNROLL), u64(sms) * blocks_per_sm));
    auto launch = [&] {
        widen_copy<UNROLL><<<grid, 256>>>(reinterpret_cast<const int4*>(b.in), reinterpret_cast<longlong2*>(b.out), vectors);
    };
    const float us = time_it(launch);
    std::printf("widen x%d %2d/SM  n=2^%-2d %9.1f us %7.1f GB/s\n", UNROLL, blocks_per_sm, __builtin_ctzll(n), us,
                12.0 * n / us / 1e3);
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
    for (int lg : {20, 24, 26, 28}) {
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
        // The 1:2 read/write mix alone, at several loads in flight per thread.
        widen<1>(b, n, 8);
        widen<2>(b, n, 8);
        widen<4>(b, n, 8);
        widen<4>(b, n, 4);
        widen<8>(b, n, 4);
        // The shipped shape (first and last: the drift within the run).
        shape<224, 20, 5, 32>(b, host, n);
        shape<224, 20, 5, 32>(b, host, n);
    }
    return 0;
}
