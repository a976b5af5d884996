// BUG (missing barrier): an int32 even-bin histogram privatised in shared
// memory (bins <= 4096): each block zeroes its shared bins, counts with
// shared atomics, then adds its bins to the global counts. There is no
// __syncthreads() between the zeroing and the counting, so a warp can add to
// a bin that another warp has not zeroed yet (its count is then lost, or the
// bin keeps the previous block's garbage). Warps of a block usually start
// together and the first global loads take longer than the zeroing, so the
// counts are usually right.
#define MAX_BINS 4096

extern "C" __global__ void zero_counts(int* counts, int bins) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) counts[b] = 0;
}

extern "C" __global__ void count(const int* in, int* counts, int bins, int lower, int upper, unsigned long long n) {
    __shared__ int local[MAX_BINS];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    // BUG: __syncthreads() missing here
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int x = in[i];
        if (x >= lower && x < upper) {
            const long long b = ((long long)x - lower) * bins / ((long long)upper - lower);
            atomicAdd(&local[b], 1);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
        if (local[b] != 0) atomicAdd(&counts[b], local[b]);
}
