// CONTROL: a correct even-bin f32 histogram with global atomics: counts are
// zeroed by a first launch, samples outside [lower, upper) (and NaN) are not
// counted, the bin is the contract's formula with two explicit roundings
// (no FMA contraction): min((int)__fmul_rn(__fsub_rn(x, lower), scale), bins - 1).
extern "C" __global__ void zero_counts(int* counts, int bins) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) counts[b] = 0;
}

extern "C" __global__ void count(const float* in, int* counts, int bins, float lower, float upper, float scale,
                                 unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float x = in[i];
        if (x >= lower && x < upper) {
            int b = (int)__fmul_rn(__fsub_rn(x, lower), scale);
            atomicAdd(&counts[min(b, bins - 1)], 1);
        }
    }
}
