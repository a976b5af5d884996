// BUG (signed zero): a one-pass argmax on packed 64-bit keys
// (order-preserving bits of the value << 32 | ~index, so that on equal keys
// the lowest index wins) with one atomicMax per thread. The tie rule is
// right for equal bit patterns, but the value mapping orders -0.0 strictly
// below +0.0, while the contract says they tie: when the maximum is zero and
// a -0.0 comes before the first +0.0, the +0.0's index is returned.
__device__ unsigned int ordered(float v) {
    const unsigned int b = __float_as_uint(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);  // BUG: -0.0 and +0.0 map to different keys
}

// key: one 64-bit word, zeroed before each case (below every real key).
extern "C" __global__ void argmax_keys(const float* in, unsigned long long* key, unsigned long long n) {
    unsigned long long best = 0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned long long k = ((unsigned long long)ordered(in[i]) << 32) | (unsigned int)~(unsigned int)i;
        best = k > best ? k : best;
    }
    if (best != 0) atomicMax(key, best);
}

extern "C" __global__ void unpack(const unsigned long long* key, long long* index) {
    index[0] = (long long)(unsigned int)~(unsigned int)(key[0] & 0xffffffffull);
}
