// The error check, the input generator and the event timing that the explorers
// (exact_sum_explore.cu, scan_tile_sweep.cu, compact_explore.cu, argmax_explore.cu)
// share; each explorer is one nvcc translation unit that includes this.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                                    \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                           \
        }                                                                                           \
    } while (0)

// The explorers' input stream: one step of a 64-bit linear congruential
// generator (Knuth's MMIX constants) per value; the caller takes the high bits.
static inline unsigned long long lcg_next(unsigned long long& s) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return s;
}

// n host values, value i = make(the LCG's i-th state from `seed`).
template <class T, class Make>
static std::vector<T> host_input(size_t n, unsigned long long seed, Make make) {
    std::vector<T> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = make(lcg_next(seed));
    return values;
}

// The median, in microseconds, of `timed` launches each bracketed by two
// events on the default stream, after `warm` launches timed the same way and
// dropped.
template <class Launch>
static float median_launch_us(Launch launch, int warm, int timed) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> us;
    for (int r = 0; r < warm + timed; ++r) {
        CHECK(cudaEventRecord(a));
        launch();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= warm) us.push_back(ms * 1000.0f);
    }
    CHECK(cudaGetLastError());
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}
