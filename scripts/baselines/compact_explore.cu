// compact_explore.cu: times the single-pass compaction (x > 0) as the library
// ships it (kernels/cuda/compact.cu), or a variant of it found first on the
// include path, beside CUB's DeviceSelect::If, in one process, at 2^20,
// 2^24 and 2^28 on uniformly random int32 (about half kept). Checks the
// count and every kept item against the host. Not part of the receipts: it
// informs the kernel's tuning.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 [-I dir-with-a-variant-compact.cu] -I kernels/cuda \
//     $(cargo run -q -p primlab-kernels --example policy_defines) \
//     -o target/compact_explore scripts/baselines/compact_explore.cu
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "compact.cu"
#include "explore_timing.cuh"

struct Positive {
    __device__ __forceinline__ bool operator()(const int x) const { return x > 0; }
};

int main() {
    const size_t max_n = size_t(1) << 28;
    const std::vector<int> host =
        host_input<int>(max_n, 0x5eed0007ull, [](unsigned long long r) { return int(r >> 32); });
    int *in, *out;
    u32* count;
    int* cub_count;
    CHECK(cudaMalloc(&in, max_n * 4));
    CHECK(cudaMalloc(&out, max_n * 4));
    CHECK(cudaMalloc(&count, 4));
    CHECK(cudaMalloc(&cub_count, 4));
    CHECK(cudaMemcpy(in, host.data(), max_n * 4, cudaMemcpyHostToDevice));
    const size_t max_tiles = (max_n + kSinglePassTileItems - 1) / kSinglePassTileItems;
    const size_t scratch_bytes = 16 + 16 * max_tiles;
    u64* scratch;
    CHECK(cudaMalloc(&scratch, scratch_bytes));
    void* cub_temp = nullptr;
    size_t cub_bytes = 0;
    CHECK(cub::DeviceSelect::If(nullptr, cub_bytes, in, out, cub_count, int(max_n), Positive()));
    CHECK(cudaMalloc(&cub_temp, cub_bytes));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, compact_single_pass_positive));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, compact_single_pass_positive, kBlockThreads, 0));
    std::printf("compact_single_pass_positive: %d registers, %zu B static smem, %d blocks/SM, tile %d items\n",
                attr.numRegs, attr.sharedSizeBytes, per_sm, kSinglePassTileItems);
    bool ok = true;
    for (int lg : {20, 24, 28}) {
        const u64 n = u64(1) << lg;
        const u32 tiles = u32((n + kSinglePassTileItems - 1) / kSinglePassTileItems);
        const size_t bytes = 16 + 16 * size_t(tiles);
        const float ours = median_launch_us(
            [&] {
                CHECK(cudaMemsetAsync(scratch, 0, bytes));
                compact_single_pass_positive<<<tiles, kBlockThreads>>>(in, n, out, count, scratch);
            },
            3, 31);
        u32 got = 0;
        CHECK(cudaMemcpy(&got, count, 4, cudaMemcpyDeviceToHost));
        std::vector<int> kept(got);
        CHECK(cudaMemcpy(kept.data(), out, size_t(got) * 4, cudaMemcpyDeviceToHost));
        size_t k = 0;
        bool same = true;
        for (size_t i = 0; i < n; ++i) {
            if (host[i] > 0) {
                same &= k < got && kept[k] == host[i];
                ++k;
            }
        }
        same &= k == got;
        ok &= same;
        const float cub = median_launch_us(
            [&] {
                size_t b = cub_bytes;
                CHECK(cub::DeviceSelect::If(cub_temp, b, in, out, cub_count, int(n), Positive()));
            },
            3, 31);
        std::printf("n=2^%d kept=%u ours %8.1f us  cub %8.1f us  cub/ours %.3f  %s\n", lg, got, ours, cub, cub / ours,
                    same ? "output ok" : "OUTPUT WRONG");
    }
    return ok ? 0 : 1;
}
