// CONTROL: a correct one-pass argmax over bfloat16 (typed contract
// argmax.bf16: finite inputs, -0.0 ties +0.0, the lowest index wins) on
// packed 64-bit keys: the order-preserving bits of the value (with -0.0
// mapped to +0.0 first) << 32 | ~index, so that the largest key is the
// largest value at its lowest index; one atomicMax per thread into a key
// zeroed before each case, then a one-thread launch unpacks the index.
// Indices are 32-bit in the key: sizes up to 2^32 items.
__device__ unsigned int ordered(unsigned short bits) {
    // -0.0 and +0.0 tie: both map to +0.0's key.
    const unsigned int b = bits == 0x8000u ? 0u : (unsigned int)bits << 16;
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
