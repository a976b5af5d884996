// BUG (bin formula): an f32 even-bin histogram that computes the bin as
// (x - lower) / width with width = (upper - lower) / bins, the textbook
// formula, instead of the contract's (x - lower) * scale (scale = bins /
// (upper - lower), given as a parameter and ignored here). 0.01 is not
// exact in binary, so a sample within about 1e-6 of a bin edge can land one
// bin off: about one sample in two million of uniform data, and often for
// samples exactly on an edge or one ulp beside it.
extern "C" __global__ void zero_counts(int* counts, int bins) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) counts[b] = 0;
}

extern "C" __global__ void count(const float* in, int* counts, int bins, float lower, float upper, float scale,
                                 unsigned long long n) {
    const float width = (upper - lower) / bins;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float x = in[i];
        if (x >= lower && x < upper) {
            const int b = (int)((x - lower) / width);  // BUG: not the contract's (x - lower) * scale
            atomicAdd(&counts[min(b, bins - 1)], 1);
        }
    }
}
