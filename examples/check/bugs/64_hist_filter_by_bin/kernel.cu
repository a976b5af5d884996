// BUG (range test on the bin, not the value): an int32 even-bin histogram
// that computes the contract's bin in 64-bit integers for every sample and
// keeps it when 0 <= bin < bins, "which is the same as lower <= x < upper".
// It is not: C++ division truncates toward zero, so a sample less than one
// bin width below `lower` gets bin 0 (e.g. bins 33 over [-1e9, 1e9): every x
// in (-1.06e9, -1e9) is counted in bin 0).
extern "C" __global__ void zero_counts(int* counts, int bins) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) counts[b] = 0;
}

extern "C" __global__ void count(const int* in, int* counts, int bins, int lower, int upper, unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int x = in[i];
        const long long b = ((long long)x - lower) * bins / ((long long)upper - lower);
        if (b >= 0 && b < bins) atomicAdd(&counts[b], 1);  // BUG: -0.5 bins truncates to bin 0
    }
}
