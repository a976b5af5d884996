// CONTROL: a correct one-pass argmax over uint32 (typed contract argmax.u32:
// the lowest index of the largest value) on packed 64-bit keys: the value
// << 32 | ~index, so that the largest key is the largest value at its
// lowest index (unsigned integers order as their bits do); one atomicMax
// per thread into a key zeroed before each case, then a one-thread launch
// unpacks the index. Indices are 32-bit in the key: sizes up to 2^32 items.
__device__ unsigned int ordered(unsigned int v) { return v; }

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
