// BUG (range end): an int32 even-bin histogram that counts x == upper,
// clamping it into the last bin ("so the maximum value is not lost"); the
// contract's range is half-open, [lower, upper). The bin formula is the
// contract's, in 64-bit integers.
extern "C" __global__ void zero_counts(int* counts, int bins) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) counts[b] = 0;
}

extern "C" __global__ void count(const int* in, int* counts, int bins, int lower, int upper, unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int x = in[i];
        if (x >= lower && x <= upper) {  // BUG: upper is excluded by the contract
            long long b = ((long long)x - lower) * bins / ((long long)upper - lower);
            atomicAdd(&counts[b < bins ? b : bins - 1], 1);
        }
    }
}
