// CONTROL: a correct float16 sum with a float32 accumulator and output
// (typed contract sum.f16.f32): each element widened by the cvt.f32.f16
// instruction (exact for every float16, zeros, subnormals and infinities
// included), a grid-stride loop per thread, a warp shuffle and a
// shared-memory reduction per block, then one atomicAdd per block into the
// output, which a first launch sets to 0.0f (outputs arrive poisoned). The
// atomics add the block sums in any order: the order-free bound allows it.
constexpr unsigned kWarp = 32;

__device__ float widen(unsigned short bits) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
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
