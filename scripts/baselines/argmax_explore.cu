// argmax_explore.cu: times the whole-array single-pass argmax (f32) as the
// library ships it (kernels/cuda/arg_reduce.cu), or a variant of it found
// first on the include path, beside CUB's DeviceReduce::ArgMax, in one
// process, from 2^10 to 2^28 on uniformly random f32. Each size reads a new
// slice of a 1 GiB buffer per call (more than 2 x L2), so small sizes come
// from DRAM as in `harness bench`. Checks value and index of the first slice
// against the host. Not part of the receipts: it informs the kernel's tuning.
//
// An earlier kernel: git show 5e9c083:kernels/cuda/arg_reduce.cu > DIR/arg_reduce.cu, then -I DIR first
// (DIR outside the repository, so the verdict hash never counts it).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 [-I dir-with-a-variant-arg_reduce.cu] -I kernels/cuda \
//     $(cargo run -q -p primlab-kernels --example policy_defines) \
//     -o target/argmax_explore scripts/baselines/argmax_explore.cu
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "arg_reduce.cu"
#include "explore_timing.cuh"

int main() {
    const size_t max_n = size_t(1) << 28;
    // Uniform in [-0.5, 0.5) on a 2^-24 grid.
    const std::vector<float> host = host_input<float>(
        max_n, 0x5eed0011ull, [](unsigned long long r) { return float(u32(r >> 40)) * (1.0f / 16777216.0f) - 0.5f; });
    float* in;
    CHECK(cudaMalloc(&in, max_n * 4));
    CHECK(cudaMemcpy(in, host.data(), max_n * 4, cudaMemcpyHostToDevice));
    ArgF32* partials;
    ArgResult<ArgF32>* result;
    ArgControl* control;
    int per_sm = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, arg_reduce_single_pass_max_f32, kBlockThreads, 0));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const u32 resident = u32(per_sm * sms);
    CHECK(cudaMalloc(&partials, resident * sizeof(ArgF32)));
    CHECK(cudaMalloc(&result, sizeof(ArgResult<ArgF32>)));
    CHECK(cudaMalloc(&control, sizeof(ArgControl)));
    // The state every launch leaves behind: no nonfinite, ticket 0.
    const ArgControl reset{kNoNonfinite, 0, 0};
    CHECK(cudaMemcpy(control, &reset, sizeof reset, cudaMemcpyHostToDevice));
    float* cub_val;
    int64_t* cub_idx;
    CHECK(cudaMalloc(&cub_val, 4));
    CHECK(cudaMalloc(&cub_idx, 8));
    void* cub_temp = nullptr;
    size_t cub_bytes = 0;
    CHECK(cub::DeviceReduce::ArgMax(cub_temp, cub_bytes, in, cub_val, cub_idx, int64_t(max_n)));
    CHECK(cudaMalloc(&cub_temp, cub_bytes));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, arg_reduce_single_pass_max_f32));
    std::printf("arg_reduce_single_pass_max_f32: %d registers, %d blocks/SM, %u resident\n", attr.numRegs, per_sm,
                resident);
    bool ok = true;
    for (int lg : {10, 12, 16, 20, 22, 24, 26, 28}) {
        const u32 n = u32(1) << lg;
        const u32 slices = u32(max_n / n);
        const u32 grid = std::min(resident, (n + 4095) / 4096);
        u32 call = 0;
        auto ours_launch = [&](const float* x) {
            arg_reduce_single_pass_max_f32<<<grid, kBlockThreads>>>(x, n, partials, control, result);
        };
        ours_launch(in);
        ArgResult<ArgF32> got;
        ArgControl ctl;
        CHECK(cudaMemcpy(&got, result, sizeof got, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&ctl, control, sizeof ctl, cudaMemcpyDeviceToHost));
        size_t best = 0;
        for (size_t i = 1; i < n; ++i)
            if (host[i] > host[best]) best = i;
        const bool same = got.best.value == host[best] && size_t(got.best.index) == best &&
                          got.first_nonfinite == kNoNonfinite && ctl.first_nonfinite == kNoNonfinite &&
                          ctl.blocks_done == 0;
        ok &= same;
        const int timed = lg < 24 ? 201 : 31;
        const float ours = median_launch_us([&] { ours_launch(in + size_t(call++ % slices) * n); }, 5, timed);
        call = 0;
        const float cub = median_launch_us(
            [&] {
                size_t b = cub_bytes;
                CHECK(cub::DeviceReduce::ArgMax(cub_temp, b, in + size_t(call++ % slices) * n, cub_val, cub_idx,
                                                int64_t(n)));
            },
            5, timed);
        call = 0;
        const float ours2 = median_launch_us([&] { ours_launch(in + size_t(call++ % slices) * n); }, 5, timed);
        std::printf("n=2^%d grid %u: ours %7.2f us (again %7.2f)  cub %7.2f us  cub/ours %.3f  %s\n", lg, grid, ours,
                    ours2, cub, cub / std::min(ours, ours2), same ? "answer ok" : "ANSWER WRONG");
    }
    return ok ? 0 : 1;
}
