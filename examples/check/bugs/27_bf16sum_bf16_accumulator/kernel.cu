// BUG (bfloat16 accumulator): the bfloat16 sum of 08_bf16sum_control, except
// that each thread's running sum is kept in bfloat16, as code written with
// __nv_bfloat16 arithmetic keeps it (every add rounds to 8 significant bits).
// The contract states a float32 accumulator: once a thread adds more than a
// handful of terms, its sum drifts by up to 2^-9 of itself per add, far
// outside the float32 order-free bound.
constexpr unsigned kWarp = 32;

// bfloat16 is the top half of a float32: widening is a shift, exact.
__device__ float widen(unsigned short bits) { return __uint_as_float((unsigned int)bits << 16); }

// x rounded to bfloat16 (nearest, ties to even), as a float32.
__device__ float round_bf16(float x) {
    const unsigned int b = __float_as_uint(x);
    return __uint_as_float((b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u);
}

extern "C" __global__ void zero_out(float* out) { out[0] = 0.0f; }

extern "C" __global__ void bf16_sum(const unsigned short* in, float* out, unsigned long long n) {
    __shared__ float warp_sums[32];
    float acc = 0.0f;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc = round_bf16(acc + widen(in[i]));  // BUG: a bfloat16 running sum
    for (unsigned off = kWarp / 2; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        // Lanes past the block's warps hold the identity.
        float s = lane < blockDim.x / kWarp ? warp_sums[lane] : 0.0f;
        for (unsigned off = kWarp / 2; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
        if (lane == 0) atomicAdd(out, s);
    }
}
