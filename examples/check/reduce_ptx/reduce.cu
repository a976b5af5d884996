// int32 -> int64 sum in two passes (the source of reduce.ptx):
//   1. partial_sums: a grid-stride loop; each of at most 1024 blocks writes
//      the int64 sum of its items to partials[blockIdx.x];
//   2. final_sum: one block of 1024 threads adds the partials into out[0].
// Both passes derive the block count from n the same way as the manifest's grid.
extern "C" __global__ void partial_sums(const int* in, long long* partials, unsigned long long n) {
    __shared__ long long sh[256];
    long long s = 0;
    for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull) s += in[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (unsigned half = 128; half > 0; half >>= 1) {
        if (threadIdx.x < half) sh[threadIdx.x] += sh[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = sh[0];
}

extern "C" __global__ void final_sum(const long long* partials, long long* out, unsigned long long n) {
    __shared__ long long sh[1024];
    unsigned long long blocks = (n + 1023) / 1024;
    if (blocks > 1024) blocks = 1024;
    sh[threadIdx.x] = threadIdx.x < blocks ? partials[threadIdx.x] : 0;
    __syncthreads();
    for (unsigned half = 512; half > 0; half >>= 1) {
        if (threadIdx.x < half) sh[threadIdx.x] += sh[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = sh[0];
}
