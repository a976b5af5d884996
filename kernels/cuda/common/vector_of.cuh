// The 16-byte vector type that loads four 32-bit samples at once.
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

}  // namespace primlab
