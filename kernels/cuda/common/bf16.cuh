// bfloat16 as raw 16-bit patterns: no <cuda_bf16.h> is needed under NVRTC,
// and the conversions are exact (widening) or round-to-nearest-even.
#pragma once
#include "common/config.cuh"

namespace primlab {

__device__ __forceinline__ float bf16_to_f32(u16 bits) { return __uint_as_float(u32(bits) << 16); }

// Round to nearest, ties to even. NaN stays a (quiet) NaN.
__device__ __forceinline__ u16 f32_to_bf16_rn(float value) {
    const u32 bits = __float_as_uint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return u16((bits >> 16) | 0x0040u);
    const u32 rounding = 0x7fffu + ((bits >> 16) & 1u);
    return u16((bits + rounding) >> 16);
}

// The f32 values of one 16-byte vector: its four f32, or its eight bf16
// widened exactly (little-endian: the low half of each 32-bit word is the
// lower element).
__device__ __forceinline__ void vector_to_f32(const uint4& t, float (&v)[4]) {
    v[0] = __uint_as_float(t.x);
    v[1] = __uint_as_float(t.y);
    v[2] = __uint_as_float(t.z);
    v[3] = __uint_as_float(t.w);
}
__device__ __forceinline__ void vector_to_f32(const uint4& t, float (&v)[8]) {
    const u32 w[4] = {t.x, t.y, t.z, t.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        v[2 * k] = __uint_as_float(w[k] << 16);
        v[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
    }
}

__device__ __forceinline__ bool is_finite_f32(float value) {
    return (__float_as_uint(value) & 0x7f800000u) != 0x7f800000u;
}

}  // namespace primlab
