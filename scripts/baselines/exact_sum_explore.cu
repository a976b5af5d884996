// exact_sum_explore.cu: times the correctly rounded sum as the library ships
// it (kernels/cuda/exact_sum.cu, one launch) beside the previous
// version (exact_sum_previous.cu, when present: a copy of the file from an
// older commit) and CUB's ordinary f32 DeviceReduce::Sum, in one process,
// on three input families. The two exact versions must give the same bits.
// Not part of the receipts: it informs the kernel design.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda \
//     $(cargo run -q -p primlab-kernels --example policy_defines) \
//     -o target/exact_sum_explore scripts/baselines/exact_sum_explore.cu
//   (add -DWITH_PREVIOUS with scripts/baselines/exact_sum_previous.cu present:
//   an older exact_sum.cu with the same entry points)
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "exact_sum.cu"
#include "explore_timing.cuh"

#ifdef WITH_PREVIOUS
#define exact_sum_f32 previous_exact_sum_f32
#define exact_sum_bf16 previous_exact_sum_bf16
namespace previous {
#include "exact_sum_previous.cu"
}
#undef exact_sum_f32
#undef exact_sum_bf16
#endif

static bool g_ncu = false;  // `exact_sum_explore ncu`: 2^28, uniform, one launch each

template <class Launch>
static float median_us(Launch launch) {
    return g_ncu ? median_launch_us(launch, 0, 1) : median_launch_us(launch, 3, 22);
}

// Input families: 0 uniform in [-0.5, 0.5) on a 2^-24 grid (the bench's),
// 1 signed log-uniform over 2^-60 .. 2^60, 2 half zeros (ReLU-like).
static float input(int family, unsigned long long& s) {
    lcg_next(s);
    const double u = double(s >> 11) / 9007199254740992.0;
    switch (family) {
        case 0: return float(std::floor(u * 16777216.0) / 16777216.0 - 0.5);
        case 1: return float((s & 1 ? -1.0 : 1.0) * std::exp2(u * 120.0 - 60.0));
        default: return (s >> 7) & 1 ? float(u) : 0.0f;
    }
}

// Times `launch(grid)` on the occupancy grid of `kernel` (at most one block
// per tile) and reads the result's bits.
template <class Kernel, class Launch>
static void time_exact(const char* name, Kernel kernel, Launch launch, u64 n, float* result, u32& bits_out) {
    int per_sm = 0, sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlockThreads, 0));
    const u64 tiles = (n + kExactTileItems - 1) / kExactTileItems;
    const u32 grid = u32(std::min<u64>(tiles, u64(per_sm) * sms));
    const float us = median_us([&] { launch(grid); });
    float r = 0;
    CHECK(cudaMemcpy(&r, result, 4, cudaMemcpyDeviceToHost));
    std::memcpy(&bits_out, &r, 4);
    std::printf("  %-9s grid=%5u (%d/SM) %9.1f us %7.1f GB/s bits=%08x\n", name, grid, per_sm, us, 4.0 * n / us / 1e3,
                bits_out);
}

int main(int argc, char** argv) {
    g_ncu = argc > 1 && std::strcmp(argv[1], "ncu") == 0;
    const size_t max_n = size_t(1) << 28;
    float* in;
    i64* records;
    u32* arrivals;
    float* result;
    CHECK(cudaMalloc(&in, max_n * 4));
    CHECK(cudaMalloc(&records, size_t(kExactMaxBlocks) * kExactRecordWords * 8));
    CHECK(cudaMalloc(&arrivals, 4));
    CHECK(cudaMemset(arrivals, 0, 4));
    CHECK(cudaMalloc(&result, 4));
    void* cub_temp = nullptr;
    size_t cub_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, result, int(max_n)));
    CHECK(cudaMalloc(&cub_temp, cub_bytes));
    std::vector<float> host(max_n);
    bool all_agree = true;
    for (int family = 0; family < 3; ++family) {
        if (g_ncu && family != 0) continue;
        unsigned long long s = 0x5eed0003ull + family;
        for (size_t i = 0; i < max_n; ++i) host[i] = input(family, s);
        CHECK(cudaMemcpy(in, host.data(), max_n * 4, cudaMemcpyHostToDevice));
        for (int lg : {10, 16, 20, 24, 28}) {
            if (g_ncu && lg != 28) continue;
            const u64 n = u64(1) << lg;
            std::printf("family %d n=2^%d\n", family, lg);
            u32 now = 0;
            time_exact(
                "shipped", exact_sum_f32,
                [&](u32 grid) { exact_sum_f32<<<grid, kBlockThreads>>>(in, n, records, arrivals, result); }, n,
                result, now);
#ifdef WITH_PREVIOUS
            u32 before = 0;
            time_exact(
                "previous", previous::previous_exact_sum_f32,
                [&](u32 grid) {
                    previous::previous_exact_sum_f32<<<grid, kBlockThreads>>>(in, n, records, arrivals, result);
                },
                n, result, before);
            std::printf("  shipped == previous: %s\n", now == before ? "yes" : "NO");
            all_agree &= now == before;
#endif
            const float us = median_us([&] {
                size_t bytes = cub_bytes;
                CHECK(cub::DeviceReduce::Sum(cub_temp, bytes, in, result, int(n)));
            });
            std::printf("  cub sum   %25.1f us %7.1f GB/s\n", us, 4.0 * n / us / 1e3);
        }
    }
    std::printf("exact versions agree everywhere: %s\n", all_agree ? "yes" : "NO");
    return all_agree ? 0 : 1;
}
