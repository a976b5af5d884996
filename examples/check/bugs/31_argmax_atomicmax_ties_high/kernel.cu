// BUG (tie rule): a one-pass argmax with the popular packed-key trick: each
// thread folds its items, then does one 64-bit atomicMax of
// (order-preserving bits of the value << 32) | index. The value mapping is
// right for negatives, but on equal values the larger key wins, i.e. the
// HIGHEST index, while the contract wants the lowest. (-0.0 also sorts below
// +0.0 under this mapping.) A second launch unpacks the index.
__device__ unsigned int ordered(float v) {
    const unsigned int b = __float_as_uint(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// key: one 64-bit word, zeroed before each case (the smallest key).
extern "C" __global__ void argmax_keys(const float* in, unsigned long long* key, unsigned long long n) {
    unsigned long long best = 0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned long long k = ((unsigned long long)ordered(in[i]) << 32) | (unsigned int)i;  // BUG: ties -> high index
        best = k > best ? k : best;
    }
    if (best != 0) atomicMax(key, best);
}

extern "C" __global__ void unpack(const unsigned long long* key, long long* index) {
    index[0] = (long long)(key[0] & 0xffffffffull);
}
