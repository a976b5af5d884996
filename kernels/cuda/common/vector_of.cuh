// The 16-byte vector type of a scalar (four 32-bit items, or eight bf16 bit
// patterns), the array seen as such vectors, and the alignment test a
// 16-byte access needs.
#pragma once
#include "common/config.cuh"

namespace primlab {

template <class Scalar>
struct VectorOf;
template <>
struct VectorOf<i32> {
    typedef int4 T;
};
template <>
struct VectorOf<u32> {
    typedef uint4 T;
};
template <>
struct VectorOf<float> {
    typedef float4 T;
};
// bf16 bit patterns: eight to a vector.
template <>
struct VectorOf<u16> {
    typedef uint4 T;
};

// `p` seen as an array of its 16-byte vectors (vector i = items [k i, k i + k),
// k = 16 / sizeof(Scalar)).
// The caller guarantees 16-byte alignment: a whole allocation (cudaMalloc
// aligns to 256 bytes) or an offset that is a whole number of vectors.
template <class Scalar>
__device__ __forceinline__ const typename VectorOf<Scalar>::T* as_vectors(const Scalar* p) {
    return reinterpret_cast<const typename VectorOf<Scalar>::T*>(p);
}
template <class Scalar>
__device__ __forceinline__ typename VectorOf<Scalar>::T* as_vectors(Scalar* p) {
    return reinterpret_cast<typename VectorOf<Scalar>::T*>(p);
}

// Whether `p` may be read or written as 16-byte vectors (its address is a
// multiple of 16, as a vector load or store requires).
__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<u64>(p) & 15ull) == 0; }

}  // namespace primlab
