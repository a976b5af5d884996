// BUG (not stable): the popular one-kernel compaction: every kept item
// takes its output slot with atomicAdd on a global counter. The kept set and
// the count are right, but the order is whatever order the atomics happen
// in (warps and blocks race), while the contract keeps input order.
// counter: one 64-bit word, zeroed before each case.
extern "C" __global__ void compact(const int* in, int* out, unsigned long long* counter, unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int x = in[i];
        if (x > 0) out[atomicAdd(counter, 1ull)] = x;  // BUG: slot order != input order
    }
}

extern "C" __global__ void write_count(const unsigned long long* counter, long long* count) {
    count[0] = (long long)counter[0];
}
