// The 16-byte vector type that loads four 32-bit samples at once, and the
// alignment test a 16-byte access needs.
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
struct VectorOf<float> {
    typedef float4 T;
};

// Whether `p` may be read or written as 16-byte vectors (its address is a
// multiple of 16, as a vector load or store requires).
__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<u64>(p) & 15ull) == 0; }

}  // namespace primlab
