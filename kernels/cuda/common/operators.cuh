// Combine operators. Each is a value type T, an identity and an associative
// combine(a, b) where a covers the lower input indices. The schedules in
// warp_reduce / block_reduce / block_scan / decoupled_lookback never swap the
// operands, so the non-commutative Affine operator proves order is kept.
#pragma once
#include "common/config.cuh"

namespace primlab {

// int64 sum of int32 inputs, added modulo 2^64. Below 2^32 + 1 items no
// partial can leave int64 (|partial| <= n * 2^31 <= 2^63, and -2^63 fits);
// past that (the reduce takes any n that fits in memory) a partial may.
// Signed overflow is undefined in C++, so the add is done on the unsigned
// bits: two's-complement addition modulo 2^64 is associative and
// commutative, so every schedule gives the exact sum modulo 2^64, which is
// the exact sum itself whenever that sum fits int64, whatever its partials
// did on the way (the same instruction as a signed add on the GPU).
struct SumI64 {
    typedef i64 T;
    __device__ __forceinline__ static T identity() { return 0; }
    __device__ __forceinline__ T operator()(T a, T b) const { return (T)((u64)a + (u64)b); }
};

struct MaxI64 {
    typedef i64 T;
    __device__ __forceinline__ static T identity() { return (i64)(-0x7fffffffffffffffLL - 1); }
    __device__ __forceinline__ T operator()(T a, T b) const { return b > a ? b : a; }
};

struct MinI64 {
    typedef i64 T;
    __device__ __forceinline__ static T identity() { return 0x7fffffffffffffffLL; }
    __device__ __forceinline__ T operator()(T a, T b) const { return b < a ? b : a; }
};

struct SumF32 {
    typedef float T;
    __device__ __forceinline__ static T identity() { return 0.0f; }
    // __fadd_rn: never contracted into an FMA, so the tree is exactly the
    // documented sequence of roundings.
    __device__ __forceinline__ T operator()(T a, T b) const { return __fadd_rn(a, b); }
};

struct MaxF32 {
    typedef float T;
    __device__ __forceinline__ static T identity() { return -__int_as_float(0x7f800000); }
    __device__ __forceinline__ T operator()(T a, T b) const { return fmaxf(a, b); }
};

// (sum, count): e.g. a mean over the kept elements.
struct SumCountValue {
    i64 sum;
    u64 count;
};
struct SumCount {
    typedef SumCountValue T;
    __device__ __forceinline__ static T identity() { return T{0, 0}; }
    __device__ __forceinline__ T operator()(T a, T b) const { return T{a.sum + b.sum, a.count + b.count}; }
};

// Neumaier-compensated float sum: (s, c) with the exact error of every
// addition collected in c; the value is s + c.
struct CompensatedF32Value {
    float s;
    float c;
};
struct CompensatedSumF32 {
    typedef CompensatedF32Value T;
    __device__ __forceinline__ static T identity() { return T{0.0f, 0.0f}; }
    __device__ __forceinline__ T operator()(T a, T b) const {
        const float t = __fadd_rn(a.s, b.s);
        const float e = fabsf(a.s) >= fabsf(b.s) ? __fadd_rn(__fsub_rn(a.s, t), b.s)
                                                 : __fadd_rn(__fsub_rn(b.s, t), a.s);
        return T{t, __fadd_rn(__fadd_rn(a.c, b.c), e)};
    }
};

// (value, index) for arg reductions. The lowest index wins ties.
// index is int: the host rejects inputs of 2^31 or more elements.
struct ArgF32 {
    float value;
    i32 index;
};
struct ArgI32 {
    i32 value;
    i32 index;
};

constexpr i32 kNoIndex = 0x7fffffff;

// Whether a candidate with a value equal to the incumbent's replaces it.
__device__ __forceinline__ bool arg_tie_prefers(i32 candidate, i32 incumbent) {
    return candidate < incumbent;
}

// Arg max (kMax) or arg min of (value, index) pairs: a strictly better value
// wins; equal values go to arg_tie_prefers. The identity is "no element yet"
// (index kNoIndex); its value is never compared, so it is the same for max
// and min.
template <class Pair, bool kMax>
struct ArgExtremumOf {
    typedef Pair T;
    __device__ __forceinline__ static T identity() { return T{0, kNoIndex}; }
    __device__ __forceinline__ T operator()(T a, T b) const {
        if (b.index == kNoIndex) return a;
        if (a.index == kNoIndex) return b;
        if (kMax ? b.value > a.value : b.value < a.value) return b;
        if (b.value == a.value && arg_tie_prefers(b.index, a.index)) return b;
        return a;
    }
};
struct ArgMaxF32 : ArgExtremumOf<ArgF32, true> {};
struct ArgMinF32 : ArgExtremumOf<ArgF32, false> {};
struct ArgMaxI32 : ArgExtremumOf<ArgI32, true> {};
struct ArgMinI32 : ArgExtremumOf<ArgI32, false> {};

// Online-softmax state: running maximum m and normaliser d = sum exp(x - m).
// The identity is (-inf, 0). Merging two empty states must not evaluate
// exp(-inf - -inf) = NaN, hence the guard on m.
struct SoftmaxState {
    float m;
    float d;
};
struct SoftmaxMerge {
    typedef SoftmaxState T;
    __device__ __forceinline__ static T identity() { return T{-__int_as_float(0x7f800000), 0.0f}; }
    __device__ __forceinline__ T operator()(T a, T b) const {
        const float m = fmaxf(a.m, b.m);
        // Without this guard, merging two empty states computes
        // exp(-inf - -inf) = NaN and an all-masked partial poisons the row.
        if (m == -__int_as_float(0x7f800000)) return identity();
        return T{m, a.d * __expf(a.m - m) + b.d * __expf(b.m - m)};
    }
};

// Affine map x -> a*x + b over wrapping u64. combine(f, g) = "f then g":
// g(f(x)) = g.a*(f.a*x + f.b) + g.b. Associative, not commutative.
struct AffineMap {
    u64 a;
    u64 b;
};
struct AffineCompose {
    typedef AffineMap T;
    __device__ __forceinline__ static T identity() { return T{1ull, 0ull}; }
    __device__ __forceinline__ T operator()(T f, T g) const { return T{g.a * f.a, g.a * f.b + g.b}; }
};

}  // namespace primlab
