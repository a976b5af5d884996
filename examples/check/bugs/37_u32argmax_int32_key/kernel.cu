// BUG: a one-pass argmax over uint32 (typed contract argmax.u32) on packed
// 64-bit keys whose value word was written for int32 (sign bit flipped), as
// when a kernel for int32 is reused for uint32. Inputs below 2^31 (the
// small_values family, ascending) pass; values of 2^31 and up rank below
// every smaller one, so full_range and extreme_runs fail. Otherwise as the
// control (38).
// The int32 key: flipping the sign bit orders two's complement integers as
// unsigned ones.
// BUG: the input is uint32, already in unsigned order; the flip puts every
// value of 2^31 and up below 0.
__device__ unsigned int ordered(unsigned int v) { return v ^ 0x80000000u; }

// key: one 64-bit word, zeroed before each case (below every real key but
// value 0 at index 2^32 - 1, past the sizes this kernel takes).
extern "C" __global__ void argmax_keys(const unsigned int* in, unsigned long long* key, unsigned long long n) {
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
