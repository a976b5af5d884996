// BUG (signed zero): the packed-key argmax over bfloat16 of
// 09_bf16argmax_control without its -0.0 mapping: the order-preserving key
// puts -0.0 strictly below +0.0, while the contract ties them. When the
// maximum is zero and a -0.0 comes before the first +0.0 (the
// signed_zero_ties family: element 0 is -0.0, element 1 is +0.0), the
// +0.0's index is returned instead of the -0.0's.
__device__ unsigned int ordered(unsigned short bits) {
    const unsigned int b = (unsigned int)bits << 16;  // BUG: -0.0 keeps a key below +0.0's
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// key: one 64-bit word, zeroed before each case (below every real key).
extern "C" __global__ void argmax_keys(const unsigned short* in, unsigned long long* key, unsigned long long n) {
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
