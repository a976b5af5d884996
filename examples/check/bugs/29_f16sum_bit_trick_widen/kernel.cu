// BUG: a float16 sum (typed contract sum.f16.f32) widening each element by
// the shift-and-rebias bit trick found in many hand-written converters. It is
// exact for normal numbers only: +0.0 reads as 2^-15, the subnormals as
// normals of the lowest binade, infinities as 2^16 and up. An input with no
// zero, subnormal or infinity (the uniform family) passes; mixed_magnitudes
// (whose smallest values are float16 subnormals) and float_edges (runs of
// ±0.0 and of subnormals) fail. Otherwise as the
// control (28): float32 accumulator, block sums added by atomicAdd.
constexpr unsigned kWarp = 32;

// Move sign, exponent and mantissa to their float32 places and rebias the
// exponent by 127 - 15 = 112 (0x1c000 before the shift by 13).
__device__ float widen(unsigned short bits) {
    const unsigned int h = bits;
    // BUG: exponent 0 (zeros, subnormals) and 31 (inf, NaN) need cases of their own.
    return __uint_as_float(((h & 0x8000u) << 16) | (((h & 0x7c00u) + 0x1c000u) << 13) | ((h & 0x03ffu) << 13));
}

extern "C" __global__ void zero_out(float* out) { out[0] = 0.0f; }

extern "C" __global__ void f16_sum(const unsigned short* in, float* out, unsigned long long n) {
    __shared__ float warp_sums[32];
    float acc = 0.0f;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc += widen(in[i]);
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
