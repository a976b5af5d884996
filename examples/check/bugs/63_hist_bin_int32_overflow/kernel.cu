// BUG (32-bit intermediate): an int32 even-bin histogram that computes the
// contract's bin ((x - lower) * bins) / (upper - lower) in int. For narrow
// ranges it is right; for wide ranges x - lower or its product with bins
// leaves the int32 range and wraps, giving wrong (then clamped) bins.
extern "C" __global__ void zero_counts(int* counts, int bins) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) counts[b] = 0;
}

extern "C" __global__ void count(const int* in, int* counts, int bins, int lower, int upper, unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int x = in[i];
        if (x >= lower && x < upper) {
            // BUG: int arithmetic (done as unsigned to avoid UB, the wrap is the same)
            int b = (int)(((unsigned)x - (unsigned)lower) * (unsigned)bins / ((unsigned)upper - (unsigned)lower));
            b = max(0, min(b, bins - 1));  // "just in case"
            atomicAdd(&counts[b], 1);
        }
    }
}
