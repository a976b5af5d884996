// BUG (bin convention): an f32 even-bin histogram ported from a library
// whose bins are right-closed, (a, b] (R's hist() default): the bin is
// ceil((x - lower) * scale) - 1. For every sample strictly inside a bin it
// equals the contract's floor; a sample exactly on an interior edge goes one
// bin lower, and a sample equal to `lower` gets bin -1: counts[-1], a write
// just before the counts buffer.
extern "C" __global__ void zero_counts(int* counts, int bins) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) counts[b] = 0;
}

extern "C" __global__ void count(const float* in, int* counts, int bins, float lower, float upper, float scale,
                                 unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float x = in[i];
        if (x >= lower && x < upper) {
            const int b = (int)ceilf(__fmul_rn(__fsub_rn(x, lower), scale)) - 1;  // BUG: right-closed bins
            atomicAdd(&counts[min(b, bins - 1)], 1);
        }
    }
}
