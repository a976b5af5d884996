// Element I/O of the f32 / bf16 row kernels: an element type, its 16-byte
// vector width, scalar and vector loads and stores, every value widened to
// f32 on load (bf16 exactly) and rounded once on store (bf16: to nearest
// even). Vector indices count 16-byte vectors from a 16-byte aligned base.
#pragma once
#include "common/bf16.cuh"
#include "common/config.cuh"

namespace primlab {

// f32 elements.
struct F32Io {
    typedef float Elem;
    static constexpr int kVec = 4;  // elements per 16-byte access
    __device__ __forceinline__ static float load(const float* __restrict__ p, u32 i) { return p[i]; }
    __device__ __forceinline__ static void store(float* __restrict__ p, u32 i, float v) { p[i] = v; }
    __device__ __forceinline__ static void unpack(const uint4& t, float (&v)[kVec]) { vector_to_f32(t, v); }
    __device__ __forceinline__ static void load_vec(const float* __restrict__ p, u32 vi, float (&v)[kVec]) {
        unpack(reinterpret_cast<const uint4*>(p)[vi], v);
    }
    __device__ __forceinline__ static void store_vec(float* __restrict__ p, u32 vi, const float (&v)[kVec]) {
        reinterpret_cast<float4*>(p)[vi] = make_float4(v[0], v[1], v[2], v[3]);
    }
};

// bf16 elements as raw 16-bit patterns.
struct Bf16Io {
    typedef u16 Elem;
    static constexpr int kVec = 8;
    __device__ __forceinline__ static float load(const u16* __restrict__ p, u32 i) { return bf16_to_f32(p[i]); }
    __device__ __forceinline__ static void store(u16* __restrict__ p, u32 i, float v) { p[i] = f32_to_bf16_rn(v); }
    __device__ __forceinline__ static void unpack(const uint4& t, float (&v)[kVec]) { vector_to_f32(t, v); }
    __device__ __forceinline__ static void load_vec(const u16* __restrict__ p, u32 vi, float (&v)[kVec]) {
        unpack(reinterpret_cast<const uint4*>(p)[vi], v);
    }
    __device__ __forceinline__ static void store_vec(u16* __restrict__ p, u32 vi, const float (&v)[kVec]) {
        u32 w[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) w[k] = u32(f32_to_bf16_rn(v[2 * k])) | (u32(f32_to_bf16_rn(v[2 * k + 1])) << 16);
        reinterpret_cast<uint4*>(p)[vi] = make_uint4(w[0], w[1], w[2], w[3]);
    }
};

}  // namespace primlab
